"""The conformance suite: every registered puzzle, every protocol promise.

Parametrised over the registry, so a new game module is tested as soon as it exists."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from longpuzzle.engine.batch import step_batch, kernels
from longpuzzle.engine.catalog import catalog, load_level
from longpuzzle.engine.errors import (
    CheckpointError, IllegalMoveError, MoveSyntaxError, UndoNotAllowedError,
)
from longpuzzle.engine.protocol import NOOP, OK
from longpuzzle.engine.registry import get_puzzle, puzzle_ids
from longpuzzle.engine.session import Session, replay
from longpuzzle.engine.testing import random_walk, sample_levels, walk_states

GAMES = catalog().games()  # registered games that have levels
CASES = [(g, lid) for g in GAMES for lid in sample_levels(g)]
IDS = [lid for _, lid in CASES]
WALK = 60


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    game, lid = request.param
    return get_puzzle(game), load_level(lid)


def test_every_registered_game_has_levels_and_metadata():
    assert GAMES, "no puzzles registered"
    assert set(GAMES) == set(puzzle_ids()), "a registered puzzle has no level file"
    for g in GAMES:
        p = get_puzzle(g)
        assert p.id == g and p.title and p.difficulties and p.move_syntax
        objs = catalog().objectives(g)
        assert [o.difficulty for o in objs] == [d for d in p.difficulties if d in {o.difficulty for o in objs}]
        for lid in catalog().level_ids(g):
            lvl = load_level(lid)
            assert lvl.lv.dtype == np.int32 and lvl.lv.ndim == 1
            assert lvl.initial.ndim == 1 and lvl.initial.dtype == np.dtype(p.state_dtype)
            assert lvl.n_actions >= 1


def test_text_and_action_round_trip(case):
    p, lvl = case
    for a in range(lvl.n_actions):
        text = p.format_move(lvl, a)
        assert text and not any(c.isspace() for c in text), text
        assert p.actions(lvl, text) == [a]


@pytest.mark.parametrize("garbage", ["", "   ", "??", "1>", "move", "\u00e9\u00e9", "-1", "999999>1"])
def test_garbage_text_is_a_syntax_error(case, garbage):
    p, lvl = case
    with pytest.raises(MoveSyntaxError):
        p.actions(lvl, garbage)
    with pytest.raises(MoveSyntaxError):
        p.check_action(lvl, lvl.n_actions)


def test_step_is_pure_and_legal_mask_agrees(case):
    p, lvl = case
    lv_before = lvl.lv.copy()
    for state, a, nxt, code in walk_states(lvl, random_walk(lvl, WALK, seed=1)):
        before = state.copy()
        mask = p.legal_mask(lvl, state)
        codes = [p.step(lvl, state, b)[1] for b in range(lvl.n_actions)]
        assert np.array_equal(state, before), "step_into wrote to its input"
        assert [int(m) for m in mask] == [int(c == OK) for c in codes]
        if code != OK:
            assert np.array_equal(nxt, state), "a move that was not OK changed the state"
        if code > NOOP:
            with pytest.raises(IllegalMoveError) as ei:
                p.apply(lvl, state, a)
            assert ei.value.reason and str(ei.value)
        else:
            out = p.apply(lvl, state, a)
            assert np.array_equal(out, nxt) and out is not state
        P = p.progress(lvl, state)
        assert 0.0 <= P <= 1.0
        assert (P == 1.0) == p.is_solved(lvl, state)
    assert np.array_equal(lvl.lv, lv_before)


def test_replay_equals_live_play_and_episode_text(case):
    p, lvl = case
    s = Session(lvl)
    for a in random_walk(lvl, WALK, seed=2):
        s.try_move(a)
    texts = s.move_texts()
    r = replay(lvl, texts)
    assert np.array_equal(r.state, s.state)
    assert r.state.tobytes() == s.state.tobytes()
    r2 = replay(s.episode_text())
    assert np.array_equal(r2.state, s.state) and r2.counters == s.counters and r2.log == s.log


def test_checkpoint_round_trip_behaves_identically(case):
    p, lvl = case
    walk = random_walk(lvl, 2 * WALK, seed=3)
    s = Session(lvl)
    for a in walk[:WALK]:
        s.try_move(a)
    if p.undo_allowed and s.moves:
        s.undo()
    ck = s.checkpoint()
    t = Session.from_checkpoint(ck)
    assert np.array_equal(t.state, s.state) and t.counters == s.counters and t.moves == s.moves
    for a in walk[WALK:]:
        o1, o2 = s.try_move(a), t.try_move(a)
        assert o1 == o2
        assert np.array_equal(t.state, s.state)
    assert t.checkpoint() == s.checkpoint()


def test_corrupt_or_mismatched_checkpoints_are_refused(case):
    p, lvl = case
    s = Session(lvl)
    for a in random_walk(lvl, 10, seed=4):
        s.try_move(a)
    ck = s.checkpoint()
    body = json.loads(ck)
    bad = [ck[: len(ck) // 2], "", "[]", "{}", ck.replace('"moves"', '"muves"')]
    tampered = dict(body, state=[0] * len(body["state"]))
    bad.append(json.dumps(tampered))  # checksum no longer matches
    from longpuzzle.engine.session import _checksum
    forged = {k: v for k, v in tampered.items() if k != "checksum"}
    forged["checksum"] = _checksum(forged)
    bad.append(json.dumps(forged))  # consistent checksum, but the state is not what the moves give
    other = {k: v for k, v in body.items() if k != "checksum"}
    other["level_sha256"] = "0" * 64
    other["checksum"] = _checksum(other)
    bad.append(json.dumps(other))  # made on another version of the level
    for text in bad:
        with pytest.raises(CheckpointError):
            Session.from_checkpoint(text)


def test_undo_and_restart(case):
    p, lvl = case
    s = Session(lvl)
    seen = [s.state.copy()]
    for a in random_walk(lvl, 30, seed=5):
        if s.try_move(a)[-1].accepted:
            seen.append(s.state.copy())
    walk = seen[1:]
    if p.undo_allowed:
        for k in range(len(walk)):
            s.undo()
            assert np.array_equal(s.state, seen[-2 - k])
        assert np.array_equal(s.state, lvl.initial)
        with pytest.raises(UndoNotAllowedError):
            s.undo()
    else:
        with pytest.raises(UndoNotAllowedError):
            s.undo()
        assert np.array_equal(s.state, seen[-1])
    s.restart()
    assert np.array_equal(s.state, lvl.initial) and s.moves == [] and s.counters.restarts == 1


def test_batched_kernel_equals_single_steps(case):
    p, lvl = case
    rng = np.random.default_rng(6)
    walk = random_walk(lvl, WALK, seed=6)
    states = np.stack([st for st, *_ in walk_states(lvl, walk)])
    actions = rng.integers(0, lvl.n_actions, len(states))
    before = states.copy()
    dst, codes = step_batch(lvl, states, actions)
    assert np.array_equal(states, before)
    for i in range(len(states)):
        nxt, code = p.step(lvl, states[i], int(actions[i]))
        assert code == codes[i] and np.array_equal(nxt, dst[i])


def test_vector_env_rewards_sum_to_progress(case):
    from longpuzzle.agents.envs import PuzzleVectorEnv

    p, lvl = case
    env = PuzzleVectorEnv(8, lvl, autoreset_mode="disabled")
    states, _ = env.reset(seed=0)
    rng = np.random.default_rng(7)
    total = np.zeros(8)
    for _ in range(40):
        acts = [rng.choice(p.legal_moves(lvl, states[i]) or [0]) for i in range(8)]
        states, rew, term, trunc, info = env.step(np.array(acts))
        total += rew
        if term.any():
            break
    P0 = p.progress(lvl, lvl.initial)
    for i in range(8):
        assert total[i] == pytest.approx(p.progress(lvl, states[i]) - P0, abs=1e-9)


def test_state_bounds_hold_every_reachable_state(case):
    """Puzzle.state_bounds: true bounds (the envs' observation spaces) - every state of
    random walks of several lengths lies inside; built-in games give tighter bounds than
    the dtype's range."""
    p, lvl = case
    low, high = p.state_bounds(lvl)
    assert low.shape == high.shape == lvl.initial.shape and low.dtype == high.dtype == lvl.initial.dtype
    assert (low <= lvl.initial).all() and (lvl.initial <= high).all()
    info = np.iinfo(lvl.initial.dtype)
    assert (low > info.min).all() or (high < info.max).all()
    k = kernels(p)
    n = 16 if p.id == "bolt_unscrew" else 64
    final = np.empty((n, lvl.initial.shape[0]), lvl.initial.dtype)
    solved = np.zeros(n, np.bool_)
    for steps in (5, 25, 120):
        k.random_walks(lvl.lv, lvl.initial, n, steps, steps, lvl.n_actions, final, solved)
        assert ((final >= low) & (final <= high)).all(), np.argwhere((final < low) | (final > high))[:5]


def test_random_walk_kernel_reaches_only_consistent_states(case):
    p, lvl = case
    k = kernels(p)
    final = np.empty((16, lvl.initial.shape[0]), lvl.initial.dtype)
    solved = np.zeros(16, np.bool_)
    k.random_walks(lvl.lv, lvl.initial, 16, 30, 11, lvl.n_actions, final, solved)
    for i in range(16):
        assert solved[i] == p.is_solved(lvl, final[i])


_DIGEST_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    from longpuzzle.engine.registry import get_puzzle
    from longpuzzle.engine.catalog import load_level
    from longpuzzle.engine.testing import random_walk, walk_states
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
    from longpuzzle.engine.catalog import catalog
    from longpuzzle.engine.batch import kernels
    from longpuzzle.engine.testing import random_walk
    from longpuzzle.engine.session import Session
    misses = 0
    for g in catalog().games():
        p = get_puzzle(g)
        lvl = catalog().levels(g)[0]
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
from longpuzzle.agents.models.scripted import gesture_script  # noqa: E402

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
