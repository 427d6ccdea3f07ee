"""Rush Hour on screen: geometry (RULES.md 3.1), the one-drag move (3.2, 9.4), gestures for
every legal move of every level start, snapshots mid-drag, frames."""

import math

import numpy as np
import pytest

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import Suite
from longpuzzle.puzzles.rush_hour import DRIVE_OUT_MS, SNAP_MS

CONFIGS = [("2d", 1.0), ("2d", 2.0), ("3d", 1.0), ("3d", 2.0)]
VIEWPORT = (1280, 900)      # the paper's page: the game letterboxed in it, coordinates in page px
GESTURE_CONFIGS = [(a, b, None) for a, b in CONFIGS] + [("2d", 1.0, VIEWPORT), ("3d", 1.0, VIEWPORT)]
GESTURE_IDS = [f"{a}-x{b:g}" + ("-page" if v else "") for a, b, v in GESTURE_CONFIGS]
E1 = "rush_hour/easy/1"
# easy 1 (6 rows x 5 cols):        vehicles (index: id, cells)
#   . S S S .                      0 sand_semi  h row 0 cols 1-3   (range -1..+1)
#   . . C C .                      1 cream_coupe h row 1 cols 2-3  (range -2..+1)
#   . X X B >                      2 red_target h row 2 cols 1-2   (range -1..0)
#   . . . B .                      3 blue_sedan v col 3 rows 2-3   (range 0..0)
#   P P . W .                      4 sand_pickup h row 4 cols 0-1  (range 0..+1)
#   . . . W .                      5 white_sedan v col 3 rows 4-5  (range 0..0)


def _px(s, x, y):
    return s.proj.to_px(x, y)


def drag(s, x0, y0, x1, y1, steps=6):
    (a, b), (c, d) = _px(s, x0, y0), _px(s, x1, y1)
    return s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": steps, "ms": 200})


def drag_cells(s, v, cells, across=0.0):
    """Drag vehicle v by ``cells`` along its axis (and ``across`` cells across it)."""
    u = s.game_ui()
    x, y = u.vehicle_center(v, int(s.session.state[v]))
    if u.horiz[v]:
        return drag(s, x, y, x + cells * u.cell, y + across * u.cell)
    return drag(s, x, y, x + across * u.cell, y + cells * u.cell)


def test_geometry_follows_rules_3_1():
    s = Suite(E1)
    u = s.game_ui()
    assert u.cell == 90 and u.cell_center(0, 0) == (90.0, 237.0)
    assert u.board.center == (270, 462) and u.board.w == 450
    # hit box: length*cell - max(8, 0.11 cell) by cell - max(12, 0.18 cell), centred on the cells
    r = u.vehicle_rect(0, 1)                             # sand_semi, 3 cells, horizontal
    assert math.isclose(r.w, 270 - 9.9) and math.isclose(r.h, 90 - 16.2)
    assert r.center == u.cell_center(0, 2)
    r = u.vehicle_rect(3, 2)                             # blue_sedan, vertical
    assert math.isclose(r.h, 180 - 9.9) and math.isclose(r.w, 90 - 16.2)
    for lid in builtin_catalog().level_ids("rush_hour"):
        u = Suite(lid).game_ui()
        assert u.board.x0 == 45 and u.board.x1 == 495 and math.isclose(u.board.center[1], 462)
        assert u.exit_row == 2
    lay = Suite(E1).layout()
    assert lay["restart"].shape.center == (478, 89) and (lay["restart"].shape.w, lay["restart"].shape.h) == (104, 54)
    assert "undo" not in lay and "menu" in lay
    assert "menu" not in Suite(E1, direct=True).layout()


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_drag_rounds_half_up_and_clamps(style):
    s = Suite(E1, style=style, scale=2)
    # +0.5 cell rounds to +1 (Math.round), slightly less does nothing
    fb = drag_cells(s, 0, 0.47)
    assert fb.kind == "rejected" and fb.effects[-1]["reason"] == "below-snap-threshold"
    assert s.session.moves == [] and s.session.counters.rejected == 1
    fb = drag_cells(s, 0, 0.53)
    assert fb.moves == ["sand_semi+1"]
    # -0.5 rounds toward +infinity: 0 -> rejected; -0.53 -> -1
    s = Suite(E1, style=style, scale=2)
    fb = drag_cells(s, 1, -0.47)
    assert fb.kind == "rejected" and s.session.counters.moves == 0
    fb = drag_cells(s, 1, -1.53)
    assert fb.moves == ["cream_coupe-2"]
    # overshooting stops at the last free cell: ONE move of the whole range
    s = Suite(E1, style=style)
    fb = drag_cells(s, 1, -3.4)
    assert fb.moves == ["cream_coupe-2"] and s.session.counters.moves == 1
    fb = drag_cells(s, 0, 2.9)
    assert fb.moves == ["sand_semi+1"]


def test_exact_half_cell_rounds_up():
    s = Suite(E1)
    u = s.game_ui()
    x, y = u.vehicle_center(1, 2)
    for dx, want in ((45.0, ["cream_coupe+1"]), (-45.0, [])):
        t = s.clone()
        t.dispatch({"type": "drag", "x0": x, "y0": y, "x1": x + dx, "y1": y, "steps": 3, "ms": 90})
        assert t.session.move_texts() == want


def test_taps_blocked_vehicles_and_empty_cells():
    s = Suite(E1)
    u = s.game_ui()
    x, y = u.vehicle_center(2, 1)
    fb = s.dispatch({"type": "click", "x": x, "y": y})                     # a tap: a recorded invalid attempt
    assert fb.kind == "rejected" and fb.effects[-1]["reason"] == "below-snap-threshold"
    assert s.session.counters.rejected == 1 and s.session.moves == []
    fb = drag_cells(s, 3, 2.0)                                            # blue_sedan: range 0/0
    assert fb.kind == "rejected" and fb.effects[-1]["reason"] == "blocked"
    assert s.session.counters.rejected == 2
    # the press must start ON a vehicle: an empty cell, the board rim, the background do nothing
    for x0, y0 in (u.cell_center(0, 0), u.cell_center(5, 4), (47, 300), (270, 800), (20, 500)):
        fb = drag(s, x0, y0, min(x0 + 200, 530) if x0 < 400 else x0 - 200, y0)
        assert fb.kind == "nothing" and fb.effects == []
    # the gap between two vehicles' hit boxes (cells 0,1 | 1,2 boundary area) is not a vehicle
    r0 = u.vehicle_rect(0, 1)
    assert drag(s, r0.x0 - 2, r0.center[1], r0.x0 + 200, r0.center[1]).kind == "nothing"
    assert s.session.counters.rejected == 2 and s.session.counters.moves == 0
    # movement across the axis is ignored
    fb = drag_cells(s, 1, 0.0, across=2.0)
    assert fb.kind == "rejected" and s.session.counters.moves == 0


def test_the_range_is_taken_at_the_press_and_only_the_release_counts():
    s = Suite(E1)
    u = s.game_ui()
    x, y = u.vehicle_center(1, 2)
    s.dispatch({"type": "press", "x": x, "y": y})
    d = s.ui["drag"]
    assert (d["v"], d["lo"], d["hi"]) == (1, -2, 1)
    s.dispatch({"type": "release", "x": x - 300, "y": y + 10})        # no release yet: move, then up
    assert s.session.move_texts() == ["cream_coupe-2"]
    # pointer moves follow (clamped); going past the range and coming back leaves only the end
    s = Suite(E1)
    s.dispatch({"type": "press", "x": x, "y": y})
    s.dispatch({"type": "batch", "actions": [{"type": "wait", "ms": 10}]})
    for p in ((x + 400, y), (x - 500, y), (x + 20, y)):
        c = s.clone()
        ev = c.input._pointer(gui.MOVE, p[0], p[1], c.clock)
        assert ev == []
        off = c.ui["drag"]["off"]
        assert -2 <= off <= 1
    drag_points = [(x + 400, y), (x - 500, y)]
    for p in drag_points:
        s.input._pointer(gui.MOVE, p[0], p[1], s.clock)
    assert s.ui["drag"]["off"] == -2.0
    s.input._pointer(gui.MOVE, x + 20, y, s.clock)
    assert math.isclose(s.ui["drag"]["off"], 20 / 90)
    out = s.input._pointer(gui.UP, x + 20, y, s.clock)
    assert out[-1]["effect"] == "rejected" and s.session.moves == []


def test_cancel_without_a_position_commits_the_last_offset():
    s = Suite(E1)
    u = s.game_ui()
    x, y = u.vehicle_center(1, 2)
    s.input._pointer(gui.DOWN, x, y, 100)
    s.input._pointer(gui.MOVE, x - 100, y, 120)
    out = s.input._pointer(gui.UP, float("nan"), float("nan"), 140)
    assert out[-1]["effect"] == "move" and s.session.move_texts() == ["cream_coupe-1"]
    s.input._pointer(gui.DOWN, x - 90, y, 1000)
    out = s.input._pointer(gui.UP, float("nan"), float("nan"), 1040)
    assert out[-1]["reason"] == "cancelled" and s.session.move_texts() == ["cream_coupe-1"]


def test_snapshot_restore_mid_drag():
    s = Suite(E1, style="3d", scale=1.5)
    u = s.game_ui()
    x, y = u.vehicle_center(1, 2)
    (a, b), (c, d) = _px(s, x, y), _px(s, x - 100, y)
    s.dispatch({"type": "press", "x": a, "y": b})
    s.input._pointer(gui.MOVE, x - 100, y, s.clock + 10)
    snap = s.snapshot()
    r = Suite.restore(snap)
    assert r.snapshot() == snap and r.ui["drag"]["v"] == 1
    rel = {"type": "release", "x": c, "y": d}
    assert s.dispatch(rel).as_dict() == r.dispatch(rel).as_dict()
    assert s.session.move_texts() == r.session.move_texts() == ["cream_coupe-1"]
    assert s.snapshot() == r.snapshot()


def test_restart_exit_and_win():
    s = Suite("home")
    x, y = s.proj.to_px(*s.layout()["game:rush_hour"].center)
    s.dispatch({"type": "click", "x": x, "y": y})
    assert s.screen_name() == "difficulty:rush_hour"
    s.dispatch({"type": "click", "x": 270, "y": 315})
    assert s.screen_name() == f"level:{E1}"
    drag_cells(s, 1, -2)
    assert s.session.move_texts() == ["cream_coupe-2"]
    s.dispatch({"type": "click", "x": 478, "y": 89})
    assert s.session.moves == [] and s.session.counters.restarts == 1
    for a in s.level.extra["reference_actions"]:
        fb = s.dispatch(s.gesture_for(a))
        assert fb.moves == [s.puzzle.format_move(s.level, a)]
    assert s.complete and s.anims[-1]["t1"] - s.anims[-1]["t0"] == SNAP_MS + DRIVE_OUT_MS
    s.dispatch({"type": "click", "x": 270, "y": 590})          # replay
    assert s.screen_name() == f"level:{E1}" and not s.complete
    s.dispatch({"type": "click", "x": 62, "y": 89})            # exit -> the difficulty screen
    assert s.screen_name() == "difficulty:rush_hour"


@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
def test_every_legal_move_of_every_level_start_has_a_gesture(style, scale, viewport):
    checked = 0
    for lid in builtin_catalog().level_ids("rush_hour"):
        s = Suite(lid, style=style, scale=scale, viewport=viewport)
        for m in s.session.legal_moves():
            g = s.gesture_for(m)
            gui.validate(g, s.proj.size)
            assert all(isinstance(g[k], int) for k in g if k != "type")
            assert s.interpret(g) == [m], (lid, m, g)
            checked += 1
        assert s.session.moves == [] and s.session.counters.rejected == 0
    assert checked > 100


@pytest.mark.parametrize("viewport", [None, VIEWPORT], ids=["own-frame", "page"])
def test_gestures_mid_game(viewport):
    s = Suite("rush_hour/hard/3", style="3d", scale=1.5, viewport=viewport)
    rng = np.random.default_rng(7)
    for _ in range(15):
        legal = s.session.legal_moves()
        m = int(rng.choice(legal))
        assert s.interpret(s.gesture_for(m)) == [m]
        s.dispatch(s.gesture_for(m))
        if s.complete:
            break
        assert s.session.moves[-1] == m


# ---- frames --------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["2d", "3d"])
def test_frames_deterministic_and_the_vehicle_follows_the_drag(style):
    from longpuzzle.render.frame import Renderer, render
    a, b = Suite(E1, style=style), Suite(E1, style=style)
    for s in (a, b):
        s.dispatch(s.gesture_for(s.session.legal_moves()[0]))
    f1, f2 = Renderer(style, 1.0).render(a), render(b)
    assert f1.tobytes() == f2.tobytes() and f1.shape == (960, 540, 3)
    s = Suite(E1, style=style)
    base = render(s)
    u = s.game_ui()
    x, y = u.vehicle_center(1, 2)
    (px, py), (qx, qy) = _px(s, x, y), _px(s, x - 60, y)
    s.dispatch({"type": "press", "x": px, "y": py})
    s.input._pointer(gui.MOVE, x - 60, y, s.clock + 5)
    mid = render(s)
    assert (mid != base).any(axis=2).sum() > 300                 # the coupe moved 2/3 of a cell
    s.dispatch({"type": "release", "x": qx, "y": qy})
    assert s.session.move_texts() == ["cream_coupe-1"]
    s2 = Suite(E1, style=style)
    s2.session.play("cream_coupe-1")
    assert render(s).tobytes() == render(s2).tobytes()         # settled: same picture as the plain state
    c = Suite(E1, style=style)
    fb = c.dispatch({"type": "click", "x": 5, "y": 950})
    assert fb.kind == "nothing" and render(c).tobytes() == base.tobytes()


def test_intermediate_frames_of_a_slide_and_of_the_exit():
    from longpuzzle.render.frame import Screen
    sc = Screen(E1, style="3d", frames_per_move=3)
    s = sc.suite
    u = s.game_ui()
    acts = s.level.extra["reference_actions"]
    for a in acts[:-1]:
        v, j = divmod(a, 2 * u.m)
        k = j + 1 if j < u.m else -(j - u.m + 1)
        x, y = u.vehicle_center(v, int(s.session.state[v]))
        short = (abs(k) - 0.35) * (1 if k > 0 else -1) * u.cell      # released short: the snap tween shows
        x1, y1 = (x + short, y) if u.horiz[v] else (x, y + short)
        (a0, b0), (a1, b1) = _px(s, x, y), _px(s, x1, y1)
        fb, frames = sc.act({"type": "drag", "x0": a0, "y0": b0, "x1": a1, "y1": b1, "steps": 5, "ms": 150})
        assert fb.moves == [s.puzzle.format_move(s.level, a)]
        assert len(frames) == 4 and len({f.tobytes() for f in frames}) == 4
    fb, frames = sc.act(s.gesture_for(acts[-1]))               # the red car drives out
    assert s.complete and len(frames) == 4 and len({f.tobytes() for f in frames}) == 4
    none = Screen(E1)
    assert len(none.act(none.suite.gesture_for(acts[0]))[1]) == 1
