"""GUI layer of the engine: action schema, projection, menus, the Nut and Bolt and Maze Paint
input state machines, gestures for every legal move, snapshots. No pygame here."""

import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.errors import CheckpointError
from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W, Projection, SettingsError, projection
from longpuzzle.engine.gui import ActionError
from longpuzzle.engine.suite import HOME_CARD_Y, Suite
from longpuzzle.puzzles.maze_paint import SWIPE_SURFACE

GAMES = ("nut_and_bolt", "maze_paint")
CONFIGS = [("2d", 1.0), ("2d", 2.0), ("3d", 1.0), ("3d", 2.0)]
VIEWPORT = (1280, 900)      # the paper's page: the game letterboxed in it, coordinates in page px
GESTURE_CONFIGS = [(a, b, None) for a, b in CONFIGS] + [("2d", 1.0, VIEWPORT), ("3d", 1.0, VIEWPORT)]
GESTURE_IDS = [f"{a}-x{b:g}" + ("-page" if v else "") for a, b, v in GESTURE_CONFIGS]


# ---- schema ------------------------------------------------------------------------

@pytest.mark.parametrize("action, message", [
    ("click", "must be a JSON object"),
    ({"x": 1, "y": 2}, "has no \"type\""),
    ({"type": "clik", "x": 1, "y": 2}, "unknown action type 'clik'"),
    ({"type": "click", "x": 1}, "needs field(s) 'y'"),
    ({"type": "click", "x": 1, "y": 2, "z": 3}, "unexpected field(s) 'z'"),
    ({"type": "click", "x": "1", "y": 2}, "'x' must be a finite number"),
    ({"type": "click", "x": True, "y": 2}, "'x' must be a finite number"),
    ({"type": "click", "x": float("nan"), "y": 2}, "finite number"),
    ({"type": "click", "x": 540, "y": 2}, "outside the 540 x 960 frame"),
    ({"type": "click", "x": -1, "y": 2}, "outside"),
    ({"type": "long_press", "x": 1, "y": 2, "ms": 0}, "'ms' must be between 1"),
    ({"type": "long_press", "x": 1, "y": 2, "ms": 1.5}, "'ms' must be an integer"),
    ({"type": "release", "x": 3}, "both x and y, or neither"),
    ({"type": "drag", "x0": 1, "y0": 1, "x1": 2}, "needs field(s) 'y1'"),
    ({"type": "drag", "x0": 1, "y0": 1, "x1": 2, "y1": 2, "steps": 0}, "'steps' must be between 1 and 60"),
    ({"type": "swipe"}, "end points or a direction"),
    ({"type": "swipe", "direction": "north"}, "not 'north'"),
    ({"type": "swipe", "x0": 1, "y0": 1, "x1": 5}, "needs all of x0, y0, x1, y1"),
    ({"type": "swipe", "x0": 1, "y0": 1, "x1": 5, "y1": 5, "direction": "up"}, "not both"),
    ({"type": "swipe", "direction": "up", "distance": -3}, "distance must be positive"),
    ({"type": "key", "name": "F13"}, "unknown key 'F13'"),
    ({"type": "key"}, "needs field(s) 'name'"),
    ({"type": "scroll", "direction": "sideways"}, "scroll direction"),
    ({"type": "wait", "ms": -5}, "'ms' must be between 0"),
    ({"type": "batch", "actions": []}, "non-empty list"),
    ({"type": "batch", "actions": [{"type": "click", "x": 1, "y": 1}, {"type": "click", "x": 1}]},
     "batch.actions[1]: click needs field(s) 'y'"),
])
def test_malformed_actions_are_refused_with_a_message(action, message):
    with pytest.raises(ActionError) as e:
        gui.validate(action, (540, 960))
    assert message in str(e.value)


def test_validation_normalises_and_fills_defaults():
    a = gui.validate({"type": "tap", "x": 3, "y": 4}, (540, 960))
    assert a == {"type": "click", "x": 3, "y": 4}
    s = gui.validate({"type": "swipe", "direction": "left", "x": 100, "y": 500}, (540, 960))
    assert (s["x0"], s["y0"], s["x1"], s["y1"]) == (100, 500, 0, 500)        # clamped into the frame
    s = gui.validate({"type": "swipe", "direction": "up"}, (1080, 1920))
    assert (s["x0"], s["y0"], s["y1"]) == (540, 960, 960 - 432)
    assert gui.validate({"type": "key", "name": "ENTER"}, (9, 9))["name"] == "Enter"
    assert gui.validate({"type": "key", "name": "Q"}, (9, 9))["name"] == "q"
    assert gui.validate({"type": "long_press", "x": 1, "y": 1}, (9, 9))["ms"] == 1000


class _PlainDict(dict):
    """A dict that validate() reads through its generic path (its fast paths take exact dicts)."""


_coord = st.one_of(st.integers(-5, 560), st.floats(-5, 560), st.sampled_from([math.nan, math.inf]),
                   st.sampled_from([True, None, "3", 10 ** 16]))
_waypoint = st.one_of(st.lists(_coord, min_size=2, max_size=2), st.tuples(_coord, _coord),
                      st.lists(_coord, min_size=1, max_size=3), st.just("1,2"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_waypoint, max_size=6) | st.sampled_from([None, "x", [[1, 2]] * 100, [[1, 2]] * 101]),
       st.sampled_from([1, 5, 60, 61, 2.0]), st.sampled_from([1, 400, 0, 50.0]), _coord)
def test_drag_fast_path_gives_the_generic_readings_answer(via, steps, ms, x1):
    a = {"type": "drag", "x0": 10, "y0": 20.5, "x1": x1, "y1": 300, "steps": steps, "ms": ms, "via": via}
    def read(action):
        try:
            return gui.validate(action, (540, 960))
        except ActionError as e:
            return str(e)
    fast, generic = read(a), read(_PlainDict(a))
    assert fast == generic
    assert type(fast) is type(generic)
    if isinstance(fast, dict):      # the same value types too (ints stay ints, floats floats)
        assert [type(v) for v in fast.values()] == [type(v) for v in generic.values()]
        assert [type(c) for p in fast.get("via", []) for c in [p, *p]] == \
            [type(c) for p in generic.get("via", []) for c in [p, *p]]


def test_expansion_times_and_kinds():
    ev = gui.expand(gui.validate({"type": "drag", "x0": 0, "y0": 0, "x1": 100, "y1": 50, "steps": 4, "ms": 200},
                                 (540, 960)))
    assert [e[1] for e in ev] == ["down", "move", "move", "move", "move", "up"]
    assert ev[-1][0] == 200 and ev[-2][2:4] == (100, 50)
    dc = gui.expand({"type": "double_click", "x": 5, "y": 6})
    assert [e[1] for e in dc] == ["down", "up", "down", "up"] and dc[2][0] - dc[1][0] == gui.DOUBLE_CLICK_GAP_MS


def test_suite_refuses_malformed_actions_without_side_effects():
    s = Suite("nut_and_bolt/easy/1")
    before = s.snapshot()
    with pytest.raises(ActionError):
        s.dispatch({"type": "batch", "actions": [{"type": "click", "x": 1, "y": 1}, {"type": "nope"}]})
    assert s.snapshot() == before


# ---- projection ---------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["2d", "3d"]), st.sampled_from([1.0, 2.0, 1.5, 0.75]),
       st.floats(0, DESIGN_W), st.floats(0, DESIGN_H))
def test_projection_inverse_round_trip(style, scale, x, y):
    p = projection(style, scale)
    px, py = p.to_px(x, y)
    x2, y2 = p.from_px(px, py)
    assert math.isclose(x, x2, abs_tol=1e-6) and math.isclose(y, y2, abs_tol=1e-6)
    # the vectorised forms agree
    arr = p.to_px_array(np.array([[x, y]]))
    assert np.allclose(arr[0], (px, py))
    vx, vy = p.from_px_array(np.array([px]), np.array([py]))
    assert math.isclose(vx[0], x, abs_tol=1e-6) and math.isclose(vy[0], y, abs_tol=1e-6)


def test_projection_frame_sizes_and_3d_shape():
    assert projection("2d", 1).size == (540, 960)
    assert projection("3d", 2).size == (1080, 1920)
    assert projection("2d", 1.5).size == (810, 1440)
    p = projection("3d", 1)
    # the tilted plane: its far (top) edge is narrower than its near (bottom) edge, and it fits the frame
    (tl, _), (tr, _) = p.to_px(0, 0), p.to_px(DESIGN_W, 0)
    (bl, by), (br, _) = p.to_px(0, DESIGN_H), p.to_px(DESIGN_W, DESIGN_H)
    assert tr - tl < br - bl <= 540 and bl >= 0 and by <= 960
    # raised points move up the screen
    assert p.to_px(270, 500, 20)[1] < p.to_px(270, 500, 0)[1]
    with pytest.raises(SettingsError):
        Projection("4d", 1)
    with pytest.raises(SettingsError):
        Projection("2d", 0)


# ---- menus --------------------------------------------------------------------------

def _click_design(s: Suite, x, y):
    px, py = s.proj.to_px(x, y)
    return s.dispatch({"type": "click", "x": round(px), "y": round(py)})


@pytest.mark.parametrize("style", ["2d", "3d"])
@pytest.mark.parametrize("viewport", [None, VIEWPORT], ids=["own-frame", "page"])
def test_menu_navigation_home_to_level_and_back(style, viewport):
    # the original's home screen of the six built-in games (a game of another installed
    # distribution would add a card and change the layout)
    from longpuzzle.engine.catalog import Catalog, builtin_sources
    from longpuzzle.puzzles.declarations import BUILTIN
    six = Catalog(sources={g: t for g, t in builtin_sources().items() if g in {d.id for d in BUILTIN}})
    s = Suite("home", style=style, viewport=viewport, catalog=six)
    assert s.screen_name() == "home"
    ids = [w.id for w in s.layout().widgets]
    assert ids == [f"game:{g}" for g in ("bolt_unscrew", "truck_escape", "rush_hour", "nut_and_bolt",
                                         "maze_paint", "color_connect")]
    assert [w.center[1] for w in s.layout().widgets] == list(HOME_CARD_Y)
    assert _click_design(s, 270, 10).kind == "nothing"                 # outside anything: nothing
    assert _click_design(s, 270, 615).kind == "navigate"               # Nut and Bolt card
    assert s.screen_name() == "difficulty:nut_and_bolt"
    assert [w.center[1] for w in s.layout().widgets if w.kind == "card"] == [260, 385, 510, 635, 760]
    assert s.layout()["back"].center == (75, 918)
    _click_design(s, 270, 510)                                         # hard
    assert s.screen_name() == "level:nut_and_bolt/hard/1"
    _click_design(s, *s.layout()["menu"].center)                       # in-game back -> difficulty screen
    assert s.screen_name() == "difficulty:nut_and_bolt" and s.session is None
    _click_design(s, 75, 918)
    assert s.screen_name() == "home"
    _click_design(s, 270, 721)                                         # Maze Paint: three difficulties
    assert [w.center[1] for w in s.layout().widgets if w.kind == "card"] == [315, 455, 595]
    assert s.layout()["back"].center == (75, 908)
    _click_design(s, 270, 595)
    assert s.screen_name() == "level:maze_paint/hard/1"


def test_press_and_release_on_different_buttons_does_nothing():
    s = Suite("home")
    card = dict(s.home_games())            # (615: Nut and Bolt, 721: Maze Paint with the six games)
    s.dispatch({"type": "drag", "x0": 270, "y0": card["nut_and_bolt"], "x1": 270, "y1": card["maze_paint"],
                "steps": 3, "ms": 90})
    assert s.screen_name() == "home"
    s.dispatch({"type": "press", "x": 270, "y": card["maze_paint"]})
    assert s.screen_name() == "home"
    s.dispatch({"type": "release"})
    assert s.screen_name() == "difficulty:maze_paint"


def test_single_objective_game_skips_the_difficulty_screen():
    s = Suite("home")
    single = [g for g in builtin_catalog().games() if len(builtin_catalog().objectives(g)) == 1]
    assert "truck_escape" in single
    fb = _click_design(s, 270, dict(s.home_games())["truck_escape"])       # (403 with the six games)
    # Truck Escape goes straight to its level 1 - or, while it has no screen yet, nowhere
    from longpuzzle.engine.registry import get_puzzle
    if getattr(get_puzzle("truck_escape"), "ui", None) is None:
        assert fb.effects[0]["effect"] == "unavailable" and s.screen_name() == "home"
    else:
        assert s.screen_name() == "level:truck_escape/default/1"


def test_direct_launch_hides_the_way_back():
    s = Suite("maze_paint/easy/1", direct=True)
    assert "menu" not in s.layout() and "restart" in s.layout()


# ---- Nut and Bolt ----------------------------------------------------------------------

def _tap_bolt(s, b):
    u = s.game_ui()
    return _click_design(s, *u.tap_point(b))


def test_nut_and_bolt_tap_boxes_never_overlap_and_follow_the_spec():
    for lid in builtin_catalog().level_ids("nut_and_bolt"):
        s = Suite(lid)
        u = s.game_ui()
        boxes = u.boxes
        for i, a in enumerate(boxes):
            assert a.w > 0 and a.h > 0
            assert math.isclose(a.y1, u.base[i])                                  # anchored at the base
            for b in boxes[i + 1:]:
                assert not (a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1), lid
            assert s.layout().hit(*u.tap_point(i)).id == f"bolt:{i}"


def test_nut_and_bolt_sticky_selection_shake_and_toasts():
    s = Suite("nut_and_bolt/easy/1")      # bolts: 1 RRRY, 2 YRYY, 3 empty, 4 empty (cap 4)
    fb = _tap_bolt(s, 2)                     # empty bolt, nothing selected
    assert fb.kind == "refused" and s.toast["text"] == "This bolt is empty"
    assert s.shake["target"] == "bolt:2" and s.ui["selected"] is None
    assert _tap_bolt(s, 0).kind == "select" and s.ui["selected"] == 0
    assert _tap_bolt(s, 0).kind == "deselect" and s.ui["selected"] is None
    _tap_bolt(s, 0)
    fb = _tap_bolt(s, 1)                     # Y on Y: bolt 2 is full -> refused, selection stays
    assert fb.kind == "rejected" and fb.effects[0]["reason"] == "target_full"
    assert s.ui["selected"] == 0 and s.toast["text"] == "This bolt has no room" and s.shake["target"] == "bolt:1"
    assert s.session.counters.rejected == 1 and s.session.moves == []
    fb = _tap_bolt(s, 2)                     # tapping another bolt never switches: it moves
    assert fb.moves == ["1>3"] and s.ui["selected"] is None
    _tap_bolt(s, 0)
    _tap_bolt(s, 2)                          # R onto the Y now on bolt 3: colour mismatch
    assert s.toast["text"] == "Nuts only stack on the same colour" and s.ui["selected"] == 0
    assert s.session.counters.rejected == 2
    # undo and restart buttons
    assert _click_design(s, *s.layout()["undo"].center).kind == "undo"
    assert s.session.moves == [] and s.ui["selected"] is None
    _tap_bolt(s, 1)
    _tap_bolt(s, 3)
    assert s.session.move_texts() == ["2>4"]
    assert _click_design(s, *s.layout()["restart"].center).kind == "restart"
    assert s.session.moves == [] and s.session.counters.restarts == 1


def test_nut_and_bolt_animation_settles_the_clock():
    s = Suite("nut_and_bolt/easy/1")
    _tap_bolt(s, 0)
    t = s.clock
    fb = _tap_bolt(s, 2)
    anim = s.anims[0]
    assert anim["t1"] - anim["t0"] == s.game_ui().MOVE_MS and s.clock >= anim["t1"] > t
    assert fb.clock == s.clock


# ---- Maze Paint -------------------------------------------------------------------------

def _swipe_design(s, x0, y0, x1, y1):
    (a, b), (c, d) = s.proj.to_px(x0, y0), s.proj.to_px(x1, y1)
    return s.dispatch({"type": "swipe", "x0": a, "y0": b, "x1": c, "y1": d})


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_maze_swipe_threshold_ties_taps_and_surface(style):
    s = Suite("maze_paint/easy/1", style=style, scale=2)
    x, y = s.game_ui().cell_center(int(s.session.state[0]))
    legal = s.session.legal_moves()
    assert _swipe_design(s, x, y, x + 23.9, y).kind == "nothing"            # below 24 design px
    assert _swipe_design(s, x, y, x - 23.5, y + 23.5).kind == "nothing"
    assert _click_design(s, x, y).kind == "nothing"                         # taps do nothing
    assert s.session.counters.moves == 0
    # ties go vertical: |dx| == |dy| -> up or down
    fb = _swipe_design(s, x, y, x + 30, y - 30)
    assert fb.moves == ["U"]
    # start outside the swipe surface: ignored; ending outside is fine
    s2 = Suite("maze_paint/easy/1", style=style)
    assert _swipe_design(s2, 270, SWIPE_SURFACE.y0 - 5, 270, SWIPE_SURFACE.y0 + 200).kind == "nothing"
    x, y = s2.game_ui().cell_center(int(s2.session.state[0]))
    d = legal[0]
    dx, dy = ((0, -1), (0, 1), (-1, 0), (1, 0))[d]
    x1 = min(max(x + 400 * dx, 1), 539)
    y1 = min(max(y + 400 * dy, 1), 959)
    assert _swipe_design(s2, x, y, x1, y1).moves == ["UDLR"[d]]


def test_maze_wall_bump_is_a_counted_move_with_a_nudge():
    s = Suite("maze_paint/easy/1")
    bump = [d for d in range(4) if d not in s.session.legal_moves()]
    if not bump:
        pytest.skip("no blocked direction at the start")
    fb = s.dispatch(s.gesture_for(bump[0]))
    assert fb.moves == ["UDLR"[bump[0]]] and fb.effects[0]["changed"] is False
    assert s.session.counters.noop_moves == 1 and s.anims[0]["t1"] > s.anims[0]["t0"]


# ---- every legal move has a gesture -------------------------------------------------------

@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
@pytest.mark.parametrize("game", GAMES)
def test_every_legal_move_of_every_level_start_has_a_gesture(game, style, scale, viewport):
    checked = 0
    for lid in builtin_catalog().level_ids(game):
        s = Suite(lid, style=style, scale=scale, viewport=viewport)
        for m in s.session.legal_moves():
            g = s.gesture_for(m)
            gui.validate(g, s.proj.size)
            for a in (g["actions"] if g["type"] == "batch" else [g]):      # real integer pixels
                assert all(isinstance(a[k], int) for k in a if k != "type")
            assert s.interpret(g) == [m], (lid, m, g)
            checked += 1
        assert s.session.moves == []                                       # interpret changes nothing
    assert checked > 0


@pytest.mark.parametrize("viewport", [None, VIEWPORT], ids=["own-frame", "page"])
def test_gestures_also_work_mid_game(viewport):
    for lid in ("nut_and_bolt/medium/2", "maze_paint/hard/4"):
        s = Suite(lid, style="3d", scale=1.5, viewport=viewport)
        rng = np.random.default_rng(3)
        for _ in range(12):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                break
            m = int(rng.choice(legal))
            assert s.interpret(s.gesture_for(m)) == [m]
            s.dispatch(s.gesture_for(m))
            assert s.session.moves[-1] == m


# ---- completion, snapshots ----------------------------------------------------------------

def _solve(level):
    """BFS over states (small levels only)."""
    from longpuzzle.engine.registry import get_puzzle
    p = get_puzzle(level.game)
    start = level.initial.copy()
    seen = {start.tobytes(): None}
    q = deque([start])
    while q:
        st_ = q.popleft()
        if p.is_solved(level, st_):
            path = []
            k = st_.tobytes()
            while seen[k] is not None:
                k, a = seen[k]
                path.append(a)
            return path[::-1]
        for a in p.legal_moves(level, st_):
            nx, _ = p.step(level, st_, a)
            if nx.tobytes() not in seen:
                seen[nx.tobytes()] = (st_.tobytes(), a)
                q.append(nx)
    raise AssertionError("unsolvable")


@pytest.mark.parametrize("lid", ["maze_paint/easy/1", "rush_hour/easy/1"])
def test_completion_card_next_and_replay(lid):
    # (Nut and Bolt's card on the hub has no buttons: it goes on by itself, tests/engine/test_hub_rules.py)
    s = Suite(lid)
    for a in _solve(s.level):
        s.dispatch(s.gesture_for(a))
    assert s.complete and s.session.solved and s.screen_name().endswith(":complete")
    assert [w.id for w in s.layout().widgets] == ["next", "replay"]
    before = len(s.session.moves)
    _click_design(s, 60, 700)
    _swipe_design(s, 60, 700, 60, 600)
    assert len(s.session.moves) == before                      # the card is modal
    _click_design(s, *s.layout()["replay"].center)
    assert s.screen_name() == f"level:{lid}" and s.session.moves == [] and not s.complete
    for a in _solve(s.level):
        s.dispatch(s.gesture_for(a))
    _click_design(s, *s.layout()["next"].center)
    assert s.screen_name() == f"level:{lid[:-1]}2"


def test_snapshot_restore_is_exact():
    s = Suite("home", style="3d", scale=2)
    _click_design(s, 270, dict(s.home_games())["nut_and_bolt"])
    _click_design(s, 270, 385)
    _tap_bolt(s, 0)
    _tap_bolt(s, 1)          # may be rejected -> toast, shake, sticky selection
    legal = s.session.legal_moves()
    s.dispatch(s.gesture_for(legal[0]))
    _tap_bolt(s, 2)
    snap = s.snapshot()
    r = Suite.restore(snap)
    assert r.snapshot() == snap
    acts = [s.gesture_for(m) for m in s.session.legal_moves()[:3]] + [{"type": "wait", "ms": 500}]
    for a in acts:
        assert s.dispatch(a).as_dict() == r.dispatch(a).as_dict()
    assert s.snapshot() == r.snapshot()
    with pytest.raises(CheckpointError):
        Suite.restore(snap.replace('"clock": ', '"clock": 1'))
    with pytest.raises(CheckpointError):
        Suite.restore("{}")


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["2d", "3d"]), st.floats(-150, 150), st.floats(-150, 150))
def test_maze_swipe_direction_rule_property(style, dx, dy):
    s = Suite("maze_paint/medium/3", style=style, scale=1.5)
    x, y = 270, 496                              # anywhere on the swipe surface will do
    if not s.session.legal_moves():
        return
    m = max(abs(dx), abs(dy))
    if abs(m - 24) < 1e-3 or abs(abs(dx) - abs(dy)) < 1e-3:
        return                                   # float rounding decides exact boundaries
    fb = _swipe_design(s, x, y, x + dx, y + dy)
    if m < 24:
        assert fb.moves == []
    else:
        want = ("R" if dx > 0 else "L") if abs(dx) > abs(dy) else ("D" if dy > 0 else "U")
        assert fb.moves == [want] and fb.kind == "move"


def test_the_engine_side_never_imports_pygame_or_render():
    import subprocess
    import sys
    code = ("import sys; from longpuzzle.engine.suite import Suite; s = Suite('home'); "
            "s.dispatch({'type': 'click', 'x': 270, 'y': 721}); s.dispatch({'type': 'click', 'x': 270, 'y': 315}); "
            "s.dispatch(s.gesture_for(s.session.legal_moves()[0])); "
            "bad = [m for m in sys.modules if m == 'pygame' or m.startswith('longpuzzle.render')]; "
            "print(bad); assert not bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def test_maze_paint_takes_swipes_only_arrow_keys_do_nothing_as_in_the_original():
    """Fidelity (RULES.md 6.2: a gesture is press ... release; HARNESS.md: keys are no GUI
    action of the original): arrow keys move nothing, count as no move, and the swipe that
    follows moves the ball as the first move."""
    s = Suite("maze_paint/easy/1")
    before = s.session.state.copy()
    for name in ("ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"):
        fb = s.dispatch({"type": "key", "name": name})
        assert fb.kind == "nothing" and not fb.effects
    assert np.array_equal(s.session.state, before) and s.session.counters.moves == 0
    fb = s.dispatch({"type": "swipe", "direction": "right"})
    assert fb.kind == "move" and s.session.counters.moves == 1
