"""The engine owns the state: a game's screen reads the level through a read-only Board and
produces intents (engine/suite/intents.py) that the suite applies; no code outside engine/
touches the private attributes of a Session or a Suite (a scan of the source)."""

import ast
from pathlib import Path

import numpy as np
import pytest

import longpuzzle
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite import (
    Board, Deselect, GestureBegin, GestureEnd, Move, Refuse, Reject, Select, Shake, Suite, Toast,
)

ROOT = Path(longpuzzle.__file__).resolve().parent
LEVEL = "nut_and_bolt/easy/1"
# attributes of another class that happen to share a private name of Session or Suite, each
# checked here to be that class's own: (file, expression)
OWN_ATTRIBUTES = {
    ("agents/report/analytics.py", "a._state"),       # analytics.Attempt's own field
}


def _private_names() -> set[str]:
    """The private attribute and method names of Session and Suite (their instances' too) and
    of the Suite's parts: its input (Pointer) and its state and navigation (Navigator)."""
    s = Suite(LEVEL)
    names = set(vars(s)) | set(vars(s.session))
    for cls in Suite.__mro__ + Session.__mro__ + type(s.input).__mro__ + type(s.nav).__mro__:
        names |= set(vars(cls))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_reads(root: Path, private: set[str]) -> list[str]:
    """Every ``x._name`` outside engine/ (and tests/) whose name is private to Session or
    Suite, where x is neither ``self``/``cls`` nor a module imported by the file."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("engine/", "tests/")) or "/." in f"/{rel}":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                   if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Attribute) and n.attr in private):
                continue
            v = n.value
            if isinstance(v, ast.Name) and (v.id in ("self", "cls") or v.id in modules):
                continue
            expr = ast.unparse(n)
            if (rel, expr) not in OWN_ATTRIBUTES:
                out.append(f"{rel}:{n.lineno}: {expr}")
    return out


def test_nothing_outside_engine_touches_session_or_suite_internals():
    private = _private_names()
    assert {"_state", "_stack", "_apply_solved", "_go", "_down"} <= private
    assert private_reads(ROOT, private) == []


def test_the_scan_finds_a_private_read(tmp_path):
    (tmp_path / "render").mkdir()
    (tmp_path / "render" / "x.py").write_text("import os\n\ndef f(suite):\n    os._exit(0)\n"
                                              "    return suite.session._state\n")
    assert private_reads(tmp_path, _private_names()) == ["render/x.py:5: suite.session._state"]



def test_the_board_is_read_only_and_current():
    s = Suite(LEVEL)
    b = s.board
    assert isinstance(b, Board) and not hasattr(b, "session") and not hasattr(b, "try_move")
    st = b.state
    with pytest.raises(ValueError):
        st[0] = 1
    with pytest.raises(TypeError):
        b.pointer["down"] = True
    m = s.session.legal_moves()[0]
    s.dispatch(s.gesture_for(m))
    assert not np.array_equal(b.state, st) and np.array_equal(b.state, s.session.state)
    assert b.ui is s.ui and b.complete is False
    assert [b.at(i) for i in range(len(st))] == [int(v) for v in s.session.state] and type(b.at(0)) is int


@pytest.fixture
def scripted(monkeypatch):
    """A Suite whose game screen answers a press on the board with the intents given (and
    records what its handler was handed)."""
    s = Suite(LEVEL)
    seen = {}

    def use(intents):
        def on_pointer(self, board, kind, x, y, t):
            seen["board"] = board
            return intents() if kind == "down" else []
        monkeypatch.setattr(type(s.game_ui()), "on_pointer", on_pointer)
        w = s.game_ui().targets()[0].shape
        x, y = s.proj.to_px(*w.center)
        return s.dispatch({"type": "click", "x": int(x), "y": int(y)})
    return s, use, seen


def test_each_intent_makes_its_effect(scripted):
    s, use, seen = scripted
    legal = s.session.legal_moves()[0]

    def gen():
        o = yield Move(legal)
        assert o.accepted
        o = yield Move(legal)                 # the same move again: refused by the rules
        assert not o.accepted
        assert (yield Toast("hello")) is None
        yield Shake("bolt:0")
        yield Refuse("why", "because")
        yield Refuse("why", "because", "bolt:1")
        yield Select("bolt:2")
        yield Select("bolt:2", "bolt:1")
        yield Deselect("bolt:2")
        yield Reject("X+0", "short", "too short", "bolt:3")
        yield GestureBegin()
        yield GestureEnd()
    fb = use(gen)
    assert isinstance(seen["board"], Board)
    e = fb.effects
    assert e[0]["effect"] == "move" and e[0]["accepted"] is True
    assert e[1]["effect"] == "rejected" and e[1]["move"] == e[0]["move"]
    assert e[2:] == [
        {"effect": "refused", "reason": "why", "message": "because"},
        {"effect": "refused", "reason": "why", "message": "because", "target": "bolt:1"},
        {"effect": "select", "target": "bolt:2"},
        {"effect": "select", "target": "bolt:2", "switched_from": "bolt:1"},
        {"effect": "deselect", "target": "bolt:2"},
        {"effect": "rejected", "move": "X+0", "reason": "short", "message": "too short", "target": "bolt:3"},
    ]
    assert s.toast["text"] == "hello" and s.shake["target"] == "bolt:0"
    assert s.session.log[-1] == "rejected:X+0" and s.session.counters.rejected == 2
    assert s.session.moves == [legal]


def test_a_list_of_intents_is_applied_in_order(scripted):
    s, use, _ = scripted
    fb = use(lambda: [Toast("a"), Refuse("r", "m")])
    assert fb.effects == [{"effect": "refused", "reason": "r", "message": "m"}] and s.toast["text"] == "a"


def test_what_is_not_an_intent_is_refused(scripted):
    s, use, _ = scripted
    with pytest.raises(TypeError, match="not an intent"):
        use(lambda: [{"effect": "move"}])


def test_the_navigator_is_a_part_the_suite_delegates_to_and_clone_copies_exactly():
    from longpuzzle.engine.suite import Navigator
    s = Suite("home")
    s.open_level("maze_paint/easy/1")            # on the hub: the game's own limits run
    s.show_toast("hello", 5)
    s.start_shake("board", 5)
    s.try_move(0, 10)                            # an animation (or a rejection), and the limits' record
    assert s.limits is not None and s.nav.limits is s.limits and s.toast is s.nav.toast
    s.clock = 1234                               # the Suite's attributes are the part's, read and written
    assert s.nav.clock == 1234 and s.input.nav is s.nav and s.nav.app is s
    before = s.snapshot()
    c = s.clone()
    assert c.nav is not s.nav and c.nav.app is c and c.input.nav is c.nav
    assert c.snapshot() == before
    for name in Navigator.__slots__:             # nothing mutable shared between the two
        v = getattr(s.nav, name)
        if isinstance(v, (dict, list)) and name != "app":
            assert getattr(c.nav, name) is not v, name
    assert c.session is not s.session
    c.limits["t0"] = -1
    c.anims.clear()
    c.screen["x"] = 1
    c.dispatch({"type": "click", "x": 270, "y": 900})
    c.go_home()
    assert s.snapshot() == before and c.screen_name() == "home" and s.screen_name() == "level:maze_paint/easy/1"
