"""The conformance suite: every registered puzzle, every protocol promise.

The checks themselves ship with the package (longpuzzle.agents.testing.check_puzzle, so a
game added through the entry point runs the same ones); here they run for every registered
game, one test per (game, check), and the suite itself is tested: a game broken in one way
fails the check that covers it, naming the level and seed. Below: what only the built-in
games promise, compiled code against pure Python, and every agent protocol."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from longpuzzle.agents.testing import CHECKS, ConformanceError, check_puzzle, random_walk, sample_levels, walk_states
from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.errors import MoveSyntaxError, UnknownGameError
from longpuzzle.engine.registry import get_puzzle, puzzle_ids

GAMES = builtin_catalog().games()  # registered games that have levels
IDS = [lid for g in GAMES for lid in sample_levels(g)]
# the checks that take seconds a game (Gymnasium's checker in two modes, fresh renderers in
# two styles): out of the quick subset
SLOW_CHECKS = {"env", "drawing"}


@pytest.mark.parametrize("check", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CHECKS else c
                                   for c in CHECKS])
@pytest.mark.parametrize("game", GAMES)
def test_every_game_passes_the_shipped_conformance_suite(game, check):
    report = check_puzzle(game, checks=[check])
    assert report.ok and not report.skipped, report.summary()          # built-in games declare every part
    assert {lv for c, lv in report.passed} == ({""} if not CHECKS[check][1] else set(report.levels))


def test_every_registered_game_has_levels():
    assert GAMES, "no puzzles registered"
    assert set(GAMES) == set(puzzle_ids()), "a registered puzzle has no level file"


@pytest.mark.parametrize("lid", IDS)
def test_builtin_state_bounds_are_tighter_than_the_dtype(lid):
    """The built-in games give bounds tighter than their dtype's range (the envs'
    observation spaces); the shipped check asks only that every reached state lies inside."""
    lvl = load_level(lid)
    low, high = get_puzzle(lvl.game).state_bounds(lvl)
    info = np.iinfo(lvl.initial.dtype)
    assert (low > info.min).all() or (high < info.max).all()


# ---- the suite fails a broken game ------------------------------------------------------------

def _broken_format_move(monkeypatch, p):
    monkeypatch.setattr(p, "format_move", lambda level, a: f"{a}X")          # parse_move cannot read it


def _step_writes_its_input(monkeypatch, p):
    orig = p.step

    def step(level, state, action):
        out, code = orig(level, state, action)
        if code == 0 and state.flags.writeable:
            state[...] = out
        return out, code
    monkeypatch.setattr(p, "step", step)


def _rejection_as_syntax_error(monkeypatch, p):
    orig = p.apply

    def apply(level, state, action):
        try:
            return orig(level, state, action)
        except Exception as e:
            raise MoveSyntaxError(str(e)) from None
    monkeypatch.setattr(p, "apply", apply)


def _gesture_of_another_move(monkeypatch, p):
    cls = p.ui
    orig = cls.gesture_for
    monkeypatch.setattr(cls, "gesture_for", lambda self, a, proj, suite=None: orig(self, suite.session.legal_moves()[0],
                                                                                   proj, suite))


def _drawing_ignores_the_state(monkeypatch, p):
    from longpuzzle.render.frame import drawings
    cls = drawings()[p.id]
    monkeypatch.setattr(cls, "draw_dynamic", lambda self, *a, **k: None)
    monkeypatch.setattr(cls, "base_layer", lambda self, *a, **k: None)


@pytest.mark.parametrize("game, breaks, check, says", [
    ("maze_paint", _broken_format_move, "move_text", "of action 0 is refused by parse_move"),
    ("rush_hour", _broken_format_move, "move_text", "of action 0 is refused by parse_move"),
    ("nut_and_bolt", _step_writes_its_input, "rules", "wrote to its input"),
    ("nut_and_bolt", _rejection_as_syntax_error, "rules", "not IllegalMoveError"),
    ("rush_hour", _gesture_of_another_move, "gui", "makes"),
    ("maze_paint", _drawing_ignores_the_state, "drawing", "changed nothing on screen"),
], ids=["text-unreadable", "text-unreadable-rush", "step-impure", "rejection-as-syntax", "gesture-wrong",
        "drawing-static"])
def test_a_broken_game_fails_the_check_that_covers_it_naming_level_and_seed(monkeypatch, game, breaks, check, says):
    p = get_puzzle(game)
    lid = sample_levels(game)[-1]
    assert check_puzzle(game, levels=[lid], seed=5, checks=[check]).ok        # whole, it passes
    breaks(monkeypatch, p)
    with pytest.raises(ConformanceError) as ei:
        check_puzzle(game, levels=[lid], seed=5, checks=[check])
    rep = ei.value.report
    assert rep.failures and all(f.check == check and f.level == lid and f.seed == 5 for f in rep.failures)
    assert says in str(ei.value) and f"{check} [{lid}, seed 5]" in str(ei.value)
    assert f"check_puzzle({game!r}, levels=[{lid!r}], seed=5, checks=[{check!r}])" in str(ei.value)
    again = check_puzzle(game, levels=[lid], seed=5, checks=[check], raise_on_failure=False)
    assert [str(f) for f in again.failures] == [str(f) for f in rep.failures]      # the level and seed reproduce it


def test_undeclared_parts_are_skipped_and_bad_arguments_refused(monkeypatch):
    import longpuzzle.solvers.generators as gens

    def no_generator(game):
        raise UnknownGameError(f"{game} has no level generator")
    monkeypatch.setattr(gens, "generator", no_generator)
    rep = check_puzzle("truck_escape", checks=["generator", "move_text"])
    assert rep.ok and rep.skipped == [("generator", "", "the game declares no generator")]
    assert [c for c, _ in rep.passed] == ["move_text"] * len(rep.levels)
    with pytest.raises(ValueError, match="unknown conformance check"):
        check_puzzle("truck_escape", checks=["rulez"])
    with pytest.raises(UnknownGameError):
        check_puzzle("no_such_game")


def test_random_walks_are_seeded_and_mostly_legal():
    lvl = load_level(sample_levels("nut_and_bolt")[1])
    a, b = random_walk(lvl, 40, seed=3), random_walk(lvl, 40, seed=3)
    assert a == b and a != random_walk(lvl, 40, seed=4)
    codes = [code for *_, code in walk_states(lvl, a)]
    assert len(codes) == 40 and sum(c == 0 for c in codes) > len(codes) // 2


_DIGEST_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    from longpuzzle.engine.registry import get_puzzle
    from longpuzzle.engine.catalog import load_level
    from longpuzzle.agents.testing import random_walk, walk_states
    out = {}
    for lid in sys.argv[1:]:
        lvl = load_level(lid)
        p = get_puzzle(lvl.game)
        h = hashlib.sha256()
        for state, a, nxt, code in walk_states(lvl, random_walk(lvl, 40, seed=9)):
            h.update(nxt.tobytes()); h.update(str(code).encode())
            h.update(repr(p.progress(lvl, nxt)).encode()); h.update(bytes(p.legal_mask(lvl, nxt)))
            h.update(str(p.is_solved(lvl, nxt)).encode())
        out[lid] = h.hexdigest()
    print(json.dumps(out))
""")


def _digests(env_extra):
    env = dict(os.environ, **env_extra)
    r = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT, *IDS], capture_output=True, text=True, env=env,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_compiled_code_equals_pure_python():
    """The same walks with numba's JIT on and with NUMBA_DISABLE_JIT=1 give identical bytes."""
    jit = _digests({})
    nojit = _digests({"NUMBA_DISABLE_JIT": "1"})
    assert set(jit) == set(IDS)
    assert jit == nojit


_CACHE_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    from longpuzzle.engine.registry import get_puzzle
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.batch import kernels
    from longpuzzle.agents.testing import random_walk
    from longpuzzle.engine.session import Session
    misses = 0
    for g in builtin_catalog().games():
        p = get_puzzle(g)
        lvl = builtin_catalog().levels(g)[0]
        s = Session(lvl)
        for a in random_walk(lvl, 5, seed=0):
            s.try_move(a)
        s.progress; s.solved
        k = kernels(p)
        st = np.stack([lvl.initial] * 2)
        k.step_batch(lvl.lv, st, st.copy(), np.zeros(2, np.int64), np.zeros(2, np.int64))
        for mod in (p.kernels, k):
            for name in dir(mod):
                f = getattr(mod, name)
                if hasattr(f, "stats") and hasattr(f, "overloads"):
                    misses += sum(f.stats.cache_misses.values())
    print(json.dumps({"misses": misses}))
""")


def test_second_process_does_not_recompile(tmp_path):
    env = dict(os.environ, LONGPUZZLE_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], capture_output=True, text=True, env=env, timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
        runs.append(json.loads(r.stdout.strip().splitlines()[-1])["misses"])
    # (the first run may or may not compile: the repository's own cache may be warm)
    assert runs[1] == 0, f"the second process compiled {runs[1]} functions again"


# ---- every agent protocol ------------------------------------------------------------------

from hypothesis import given, settings as hsettings, strategies as st  # noqa: E402

from longpuzzle.agents.models.clients import Reply, ToolCall  # noqa: E402
from longpuzzle.agents.models.protocols import PROTOCOLS, Context, ParseError  # noqa: E402
from longpuzzle.agents.testing.endpoints import gesture_script  # noqa: E402

AGENT_PROTOCOLS = sorted(PROTOCOLS)
_FRAME = (540, 960)


def _protocol(name):
    ctx = Context("Complete all levels of Maze Paint at easy difficulty in the Game Suite.", "maze_paint", "easy",
                  _FRAME, "full" if name == "general_e2e" else None)
    return PROTOCOLS[name](ctx)


def _as_reply(r):
    return Reply(text=r.get("text", ""), tool_calls=[ToolCall(f"c{i}", c["name"], c["arguments"])
                                                     for i, c in enumerate(r.get("tool_calls") or [])])


@pytest.mark.parametrize("name", AGENT_PROTOCOLS)
def test_agent_protocol_prompts_state_the_interface(name):
    p = _protocol(name)
    text = p.system_prompt() + p.task_text()
    assert "Maze Paint" in text or "小球" in text
    w, h = p.view.size
    assert (f"0..{p.scale:g}" in text) if p.scale else (str(w) in text and str(h) in text)
    assert p.correction("bad reply").strip() and p.continuation().strip()
    if p.tool_mode:
        assert p.tools() and all(t["parameters"]["type"] == "object" for t in p.tools())


@pytest.mark.parametrize("name", AGENT_PROTOCOLS)
@hsettings(max_examples=60, deadline=None)
@given(x=st.integers(0, _FRAME[0] - 1), y=st.integers(0, _FRAME[1] - 1),
       x1=st.integers(0, _FRAME[0] - 1), y1=st.integers(0, _FRAME[1] - 1))
def test_agent_protocol_reads_back_the_gestures_written_in_its_format(name, x, y, x1, y1):
    p = _protocol(name)
    acts = [{"type": "click", "x": x, "y": y}, {"type": "drag", "x0": x, "y0": y, "x1": x1, "y1": y1}]
    replies = gesture_script(name, acts, _FRAME)
    if name == "native":
        replies = replies[1:]             # its opening wait
    got = []
    for r in replies:
        d = p.parse(_as_reply(r))
        got.extend(d.actions)
    got = [a for a in got if a["type"] != "move"]     # a cursor move before a drag (qwen)
    tol = 0 if p.view.identity else 1     # a resized view is one image pixel coarser
    assert [a["type"] for a in got] == ["click", "drag"]
    for a, b in zip(got, acts):
        for k in ("x", "y", "x0", "y0", "x1", "y1"):
            if k in b:
                assert abs(a[k] - b[k]) <= tol, (k, a, b)
        assert all(isinstance(a[k], int) for k in a if k != "type")


@pytest.mark.parametrize("name", AGENT_PROTOCOLS)
@hsettings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.sampled_from([
    "Action:", "Action: {", 'Action: {"action_type": "click"}', 'Action: {"action_type": "click", "coordinate": [1]}',
    'Action: {"action_type": "click", "coordinate": [5000, -3]}', "<tool_call>{}</tool_call>",
    '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": ["a", 2]}}</tool_call>',
    "Action: click(start_box='(x,y)')", "Action: drag(start_box='(1,2)')", "Action: click(start_box=(1,2))",
    "Action: hotkey(key='ctrl+alt+f4')", "BENCHMARK COMPLETED"])),
    args=st.one_of(st.none(), st.dictionaries(st.sampled_from(["action", "x", "y", "actions", "key", "ms"]),
                                              st.one_of(st.integers(-5, 5000), st.text(max_size=8), st.none()))))
def test_agent_protocol_refuses_any_malformed_reply_with_a_message(name, text, args):
    p = _protocol(name)
    calls = [ToolCall("c0", "gui", args)] if args is not None else []
    try:
        d = p.parse(Reply(text=text, tool_calls=calls))
    except ParseError as e:
        assert str(e)
        return
    w, h = _FRAME
    for a in d.actions:                   # whatever parses is an in-frame GUI action
        for kx, ky in (("x", "y"), ("x0", "y0"), ("x1", "y1")):
            if a.get(kx) is not None:
                assert 0 <= a[kx] < w and 0 <= a[ky] < h
