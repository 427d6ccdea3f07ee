"""Color Connect on screen: geometry (RULES.md 7.1), the click state machine (7.3), drags (7.4),
gestures for every move, whole routes as clicks, snapshots mid-gesture, frames."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import Suite
from longpuzzle.puzzles.color_connect import REMOVE_MS, SUCCESS_MS, ColorConnectUI, raster_cells

GAME = "color_connect"
CONFIGS = [("2d", 1.0), ("2d", 2.0), ("3d", 1.0), ("3d", 2.0)]
VIEWPORT = (1280, 900)      # the paper's page: the game letterboxed in it, coordinates in page px
GESTURE_CONFIGS = [(a, b, None) for a, b in CONFIGS] + [("2d", 1.0, VIEWPORT), ("3d", 1.0, VIEWPORT)]
GESTURE_IDS = [f"{a}-x{b:g}" + ("-page" if v else "") for a, b, v in GESTURE_CONFIGS]
LID = "color_connect/easy/1"
# easy/1 (6 x 6):            O . . G . B
#                            Y P . R . .
#                            . . . . G B
#                            . . O . . .
#                            . . . . P .
#                            . . . Y R .


def _px(s, x, y):
    px, py = s.proj.to_px(x, y)
    return round(px), round(py)


def click(s, r, c):
    x, y = _px(s, *s.game_ui().cell_center(r, c))
    return s.dispatch({"type": "click", "x": x, "y": y})


def active(s):
    a = s.puzzle.active_path(s.level, s.session.state)
    return None if a is None else (a[0], [tuple(c) for c in a[1]])


def completed(s):
    return s.puzzle.completed_paths(s.level, s.session.state)


def kinds(effects):
    return [e["effect"] for e in effects]


# ---- geometry (7.1) ------------------------------------------------------------------------

def test_pitch_board_centre_and_buttons_follow_the_spec():
    for lid in builtin_catalog().level_ids(GAME):
        s = Suite(lid)
        u = s.game_ui()
        rows, cols = u.rows, u.cols
        assert u.pitch == min(88, 520 / cols, 600 / rows)
        assert math.isclose(u.cell_size, 0.9 * u.pitch)
        assert u.rect.center == (270, 458)
        for r in (0, rows - 1):
            for c in (0, cols - 1):
                x, y = u.cell_center(r, c)
                assert math.isclose(x, 270 + (c - (cols - 1) / 2) * u.pitch)
                assert math.isclose(y, 458 + (r - (rows - 1) / 2) * u.pitch)
                assert u.cell_at(x, y) == (r, c)
    s = Suite(LID)
    lay = s.layout()
    assert lay["restart"].center == (490, 90) and lay["restart"].shape.r == 35
    assert lay["menu"].center == (50, 90)
    assert ColorConnectUI.exit_to == "home"
    assert "menu" not in Suite(LID, direct=True).layout()
    x, y = _px(s, 50, 90)
    assert s.dispatch({"type": "click", "x": x, "y": y}).kind == "navigate" and s.screen_name() == "home"


def test_hit_test_boundaries_belong_to_the_right_and_bottom_cell():
    u = Suite("color_connect/hard/10").game_ui()          # 11 x 11, pitch 47.27...
    x0, y0, x1, y1 = u.rect.x0, u.rect.y0, u.rect.x1, u.rect.y1
    p = u.pitch
    assert u.cell_at(x0, y0) == (0, 0)                        # outer left / top edge: inside
    assert u.cell_at(x0 - 1e-6, y0 + 1) is None and u.cell_at(x0 + 1, y0 - 1e-6) is None
    assert u.cell_at(x1, y0 + 1) is None and u.cell_at(x0 + 1, y1) is None    # outer right / bottom: outside
    assert u.cell_at(x1 - 1e-6, y1 - 1e-6) == (10, 10)
    # an internal boundary (exactly representable: pick the grid point 3 -> design x)
    bx = 270 + (3 - u.cols / 2) * p
    gx, _ = u.grid_point(bx, 458)
    want = math.floor(gx)
    assert u.cell_at(bx, 458)[1] == want and want in (2, 3)
    assert u.cell_at(bx + 1e-6, 458)[1] == 3 and u.cell_at(bx - 1e-6, 458)[1] == 2
    # drawn cells are 0.9 pitch but the gaps between them still hit (full pitch squares)
    cx, cy = u.cell_center(5, 5)
    assert u.cell_at(cx + 0.47 * p, cy) == (5, 5) and u.cell_at(cx - 0.5 * p, cy - 0.5 * p) == (5, 5)


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_presses_outside_the_grid_and_clicks_outside_anything_do_nothing(style):
    s = Suite(LID, style=style, scale=2)
    u = s.game_ui()
    before = s.session.state.copy()
    for x, y in [(270, 170), (270, 750), (5, 458), (270, 900), (400, 40)]:
        fb = s.dispatch({"type": "click", "x": _px(s, x, y)[0], "y": _px(s, x, y)[1]})
        assert fb.kind == "nothing" and s.shake is None
    click(s, 0, 0)                                            # start orange
    x, y = _px(s, u.rect.x0 + 40, u.rect.y1 + 20)           # below the grid with an active path
    fb = s.dispatch({"type": "click", "x": x, "y": y})
    assert fb.kind == "nothing" and s.shake is None and active(s) == ("orange", [(0, 0)])
    # a drag that starts outside the grid is ignored entirely, even across the board
    a, b = _px(s, 270, 170)
    c, d = _px(s, *u.cell_center(0, 2))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 8})
    assert fb.kind == "nothing" and active(s) == ("orange", [(0, 0)])
    assert not np.array_equal(before, s.session.state)        # only the start happened
    assert s.session.counters.rejected == 0


# ---- clicks (7.3) ------------------------------------------------------------------------------

def test_no_active_path_branches():
    s = Suite(LID)
    fb = click(s, 2, 2)                                       # not an endpoint
    assert fb.kind == "refused" and fb.effects[0]["reason"] == "start_from_non_endpoint"
    assert s.shake["target"] == "cell:2,2" and s.session.moves == [] and s.toast is None
    fb = click(s, 3, 2)                                       # the second orange endpoint may start too
    assert fb.moves == ["start:orange@3,2"] and active(s) == ("orange", [(3, 2)])
    assert s.ui["g"] is None                                  # click released: path stays open
    fb = click(s, 3, 2)                                       # its start, length 1 -> cancel (red flash)
    assert fb.moves == ["cancel"] and active(s) is None and s.shake["target"] == "cell:3,2"
    for r, c in [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (3, 2)]:
        click(s, r, c)
    assert completed(s) == {"orange": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (3, 2)]}
    fb = click(s, 3, 2)                                       # endpoint of a connected colour -> removed
    assert fb.moves == ["remove:orange"] and completed(s) == {} and active(s) is None
    assert s.anims[-1]["t1"] - s.anims[-1]["t0"] == REMOVE_MS
    fb = click(s, 3, 2)                                       # press again to start redrawing
    assert fb.moves == ["start:orange@3,2"]
    x, y = _px(s, 490, 90)                                    # restart: everything back, no open path
    assert s.dispatch({"type": "click", "x": x, "y": y}).kind == "restart"
    assert active(s) is None and s.session.moves == [] and s.ui == {"g": None}


def test_active_path_click_walks_one_cell_at_a_time():
    s = Suite(LID)
    click(s, 1, 0)                                            # yellow from (1, 0)
    fb = click(s, 2, 1)                                       # not in the tip's row/column
    assert fb.kind == "rejected" and fb.effects[0]["reason"] == "not_adjacent"
    assert active(s) == ("yellow", [(1, 0)]) and s.shake["target"] == "cell:2,1"
    fb = click(s, 5, 0)                                       # same column: 4 steps from one click
    assert fb.moves == ["2,0", "3,0", "4,0", "5,0"] and active(s)[1][-1] == (5, 0)
    fb = click(s, 3, 0)                                       # an earlier cell of the segment: backtrack
    assert fb.moves == ["4,0", "3,0"] and active(s)[1] == [(1, 0), (2, 0), (3, 0)]
    click(s, 5, 0)
    fb = click(s, 5, 5)                                       # reaches the own target at (5,3): complete,
    assert fb.moves == ["5,1", "5,2", "5,3"]                  # the rest of the line is ignored
    assert "yellow" in completed(s) and active(s) is None and s.shake["target"] == "cell:2,1"
    click(s, 1, 1)                                            # purple
    fb = click(s, 1, 5)                                       # (1,2) ok, (1,3) is coral's endpoint: stop
    assert fb.moves == ["1,2"] and fb.effects[-1]["reason"] == "other_color_endpoint"
    assert active(s) == ("purple", [(1, 1), (1, 2)]) and s.shake["target"] == "cell:1,5"
    fb = click(s, 4, 2)                                       # (2,2) ok, (3,2) is orange's endpoint
    assert fb.moves == ["2,2"] and fb.effects[-1]["reason"] == "other_color_endpoint"
    fb = click(s, 2, 0)                                       # (2,1) ok, (2,0) is on yellow's path
    assert fb.moves == ["2,1"] and fb.effects[-1]["reason"] == "completed_path"
    fb = click(s, 2, 3)                                       # (2,2) is the previous cell: pop, then push
    assert fb.moves == ["2,2", "2,3"] and active(s)[1] == [(1, 1), (1, 2), (2, 2), (2, 3)]
    fb = click(s, 2, 3)                                       # the tip itself: nothing
    assert fb.kind == "nothing"
    fb = click(s, 0, 0)                                       # another colour's endpoint, off the line:
    assert fb.kind == "rejected" and active(s)[0] == "purple"  # switching needs a cancel first
    assert s.session.counters.rejected == 5


def test_self_intersection_stops_the_walk_and_keeps_earlier_cells():
    s = Suite(LID)
    click(s, 1, 1)                                            # purple
    for cell in [(2, 1), (3, 1), (3, 0), (2, 0)]:
        click(s, *cell)
    assert active(s)[1] == [(1, 1), (2, 1), (3, 1), (3, 0), (2, 0)]
    fb = click(s, 2, 3)                                       # (2,1) is on the own path (not the previous)
    assert fb.moves == [] and fb.effects[-1]["reason"] == "self_intersection"
    assert active(s)[1][-1] == (2, 0) and s.session.counters.rejected == 1
    fb = click(s, 2, 0)                                       # pressing the tip: nothing
    assert fb.kind == "nothing"


def test_a_click_completing_the_last_pair_shows_the_card():
    s = Suite(LID)
    routes = s.level.extra["solution"]
    u = s.game_ui()
    for route in routes[:-1]:
        s.dispatch(u.route_gesture(route, s.proj))
    assert not s.complete
    s.dispatch(u.route_gesture(routes[-1], s.proj))
    assert s.complete and s.session.solved and s.screen_name().endswith(":complete")
    assert s.anims[-1]["t1"] - s.anims[-1]["t0"] == SUCCESS_MS
    assert [w.id for w in s.layout().widgets] == ["next", "replay"]


# ---- drags (7.4) -----------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["2d", "3d"])
@pytest.mark.parametrize("viewport", [None, VIEWPORT], ids=["own-frame", "page"])
def test_drag_is_rasterised_and_an_unfinished_drag_is_discarded(style, viewport):
    s = Suite(LID, style=style, scale=1.5, viewport=viewport)
    u = s.game_ui()
    a, b = _px(s, *u.cell_center(0, 5))
    c, d = _px(s, *u.cell_center(2, 5))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 9})
    assert fb.moves == ["start:blue@0,5", "1,5", "2,5"] and "blue" in completed(s)
    # press an endpoint and drag, release before connecting: the path is discarded
    a, b = _px(s, *u.cell_center(1, 1))
    c, d = _px(s, *u.cell_center(3, 1))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 9})
    assert fb.moves == ["start:purple@1,1", "2,1", "3,1", "cancel"] and active(s) is None
    assert s.shake["target"] == "cell:3,1"
    # cells built by clicks are discarded too by a later drag's release
    click(s, 1, 1)
    click(s, 4, 1)
    assert active(s)[1][-1] == (4, 1)
    a, b = _px(s, *u.cell_center(4, 1))
    c, d = _px(s, *u.cell_center(4, 2))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 5})
    assert fb.moves == ["4,2", "cancel"] and active(s) is None and s.session.state[2] == 1


def test_drag_diagonal_corner_ties_and_violations_stop_the_segment():
    s = Suite(LID)
    u = s.game_ui()
    # a diagonal drag from (1,1) to (3,3) through exact corners: 4-connected, dominant axis first
    cells = raster_cells(*u.grid_point(*u.cell_center(1, 1)), *u.grid_point(*u.cell_center(3, 3)))
    assert cells[-1] == (3, 3) and all(abs(a - c) + abs(b - d) == 1 for (a, b), (c, d) in zip([(1, 1)] + cells, cells))
    # drag purple right along row 1: (1,2) ok, (1,3) coral endpoint stops the segment
    a, b = _px(s, *u.cell_center(1, 1))
    c, d = _px(s, *u.cell_center(1, 4))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 1})
    assert fb.moves == ["start:purple@1,1", "1,2", "cancel"]
    assert [e.get("reason") for e in fb.effects if e["effect"] == "rejected"] == ["other_color_endpoint"]


def test_drag_off_the_board_is_a_visible_violation_only():
    s = Suite(LID)
    u = s.game_ui()
    a, b = _px(s, *u.cell_center(0, 0))
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": a, "y1": round(u.rect.y0 - 30), "steps": 3})
    assert fb.moves == ["start:orange@0,0", "cancel"]
    assert {"effect": "refused", "reason": "drag_outside_board"}.items() <= fb.effects[1].items()


def test_a_click_keeps_the_path_but_a_wiggle_inside_one_cell_does_not_count_as_movement():
    s = Suite(LID)
    u = s.game_ui()
    x, y = u.cell_center(0, 0)
    a, b = _px(s, x - 10, y - 10)
    c, d = _px(s, x + 10, y + 12)
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 4})
    assert fb.moves == ["start:orange@0,0"] and active(s) == ("orange", [(0, 0)])


@settings(max_examples=120, deadline=None)
@given(st.floats(-3, 9), st.floats(-3, 9), st.floats(-3, 9), st.floats(-3, 9))
def test_raster_cells_are_4_connected_and_end_in_the_target_cell(x0, y0, x1, y1):
    cells = raster_cells(x0, y0, x1, y1)
    start = (math.floor(y0), math.floor(x0))
    end = (math.floor(y1), math.floor(x1))
    if start == end:
        assert cells == []
        return
    assert cells[-1] == end
    prev = start
    for cell in cells:
        assert abs(cell[0] - prev[0]) + abs(cell[1] - prev[1]) == 1
        prev = cell
    assert len(cells) == abs(end[0] - start[0]) + abs(end[1] - start[1])


# ---- snapshots mid-gesture -----------------------------------------------------------------------

def test_snapshot_restore_while_the_button_is_held():
    s = Suite(LID, style="3d", scale=2)
    u = s.game_ui()
    a, b = _px(s, *u.cell_center(1, 0))
    s.dispatch({"type": "press", "x": a, "y": b})
    c, d = _px(s, *u.cell_center(4, 0))
    snap = s.snapshot()
    r = Suite.restore(snap)
    assert r.snapshot() == snap and r.ui["g"] is not None
    for act in ({"type": "release", "x": c, "y": d}, {"type": "click", "x": c, "y": d}):
        assert s.dispatch(act).as_dict() == r.dispatch(act).as_dict()
    assert s.snapshot() == r.snapshot()
    assert s.session.move_texts() == ["start:yellow@1,0", "2,0", "3,0", "4,0", "cancel"]


# ---- gestures ------------------------------------------------------------------------------------

def _check_gesture(s, m):
    g = s.gesture_for(m)
    gui.validate(g, s.proj.size)
    for a in (g["actions"] if g["type"] == "batch" else [g]):
        assert all(isinstance(a[k], int) for k in a if k != "type")
    assert s.interpret(g) == [m], (s.level.id, s.puzzle.format_move(s.level, m), g)


@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
def test_every_legal_move_of_every_level_start_has_a_gesture(style, scale, viewport):
    checked = 0
    for lid in builtin_catalog().level_ids(GAME):
        s = Suite(lid, style=style, scale=scale, viewport=viewport)
        for m in s.session.legal_moves():
            _check_gesture(s, m)
            checked += 1
        assert s.session.moves == []
    assert checked == sum(2 * len(Suite(l).level.extra["colors"]) for l in builtin_catalog().level_ids(GAME))


@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
def test_every_kind_of_move_has_a_gesture_mid_game(style, scale, viewport):
    """start, step (push, pop, complete), cancel (one cell and longer), remove."""
    seen = set()
    for lid in ("color_connect/easy/1", "color_connect/hard/2", "color_connect/hard/10"):
        # a direct launch: 40 random moves on the hub may run into the game's own limits
        # (tests/engine/test_hub_rules.py), after which the board takes no input
        s = Suite(lid, style=style, scale=scale, viewport=viewport, direct=True)
        n = s.level.lv[0] * s.level.lv[1]
        routes = s.level.extra["solution"]
        s.session.play(routes[0])
        s.session.play(routes[1])
        rng = np.random.default_rng(7)
        for _ in range(40):
            legal = s.session.legal_moves()
            for m in legal:
                _check_gesture(s, m)
                seen.add("step" if m < n else "cancel" if m == n else s.puzzle.format_move(s.level, m).split(":")[0])
                if m == n:
                    seen.add(f"cancel{min(2, int(s.session.state[1]))}")
            m = int(rng.choice(legal))
            s.dispatch(s.gesture_for(m))
            assert s.session.moves[-1] == m
            if s.complete:
                break
    assert {"start", "step", "cancel1", "cancel2", "remove"} <= seen


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)])
def test_every_reference_route_replayed_as_clicks_solves_its_level(style, scale):
    for lid in builtin_catalog().level_ids(GAME):
        s = Suite(lid, style=style, scale=scale, direct=True)
        u = s.game_ui()
        for route in s.level.extra["solution"]:
            g = u.route_gesture(route, s.proj)
            assert all(a["type"] == "click" for a in g["actions"])
            s.dispatch(g)
        assert s.complete and s.session.solved, lid
        assert s.session.counters.rejected == 0
        # the same moves as the route texts
        want = []
        for route in s.level.extra["solution"]:
            want += s.puzzle.parse_move(s.level, route)
        assert s.session.moves == want


# ---- frames --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def render_mod():
    from longpuzzle.render import frame
    return frame


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_frames_are_deterministic_and_show_the_state(render_mod, style):
    Renderer, render = render_mod.Renderer, render_mod.render
    s1, s2 = Suite(LID, style=style), Suite(LID, style=style)
    start = render(s1)
    assert start.shape == (960, 540, 3) and start.std() > 10
    for s in (s1, s2):
        s.dispatch(s.game_ui().route_gesture(s.level.extra["solution"][0], s.proj))
        click(s, 1, 0)
        click(s, 3, 0)
    f1 = Renderer(style, 1.0).render(s1)
    f2 = Renderer(style, 1.0).render(s2)
    assert f1.tobytes() == f2.tobytes() == render(s2).tobytes()
    assert (f1 != start).any(axis=2).sum() > 2000
    # the active path and its halo are drawn: cancel it and the picture changes
    s1.dispatch(s1.gesture_for(s1.level.lv[0] * s1.level.lv[1]))
    s1.dispatch({"type": "wait", "ms": 1000})
    assert render(s1).tobytes() != f1.tobytes()


def test_red_flash_is_visible_and_goes_away(render_mod):
    render = render_mod.render
    s = Suite(LID)
    base = render(s)
    click(s, 2, 2)                                            # start_from_non_endpoint
    t = s.shake["t0"]
    flash = render(s, t=t + 10)
    u = s.game_ui()
    x, y = (round(v) for v in s.proj.to_px(*u.cell_center(2, 2)))
    assert flash[y, x, 0] > flash[y, x, 1] + 60              # red
    assert (flash != base).any(axis=2).sum() > 300
    s.dispatch({"type": "wait", "ms": 600})
    assert render(s).tobytes() == base.tobytes()


def test_remove_fades_and_success_glows_in_intermediate_frames(render_mod):
    Screen = render_mod.Screen
    sc = Screen(LID, style="3d", frames_per_move=3)
    s = sc.suite
    u = s.game_ui()
    s.dispatch(u.route_gesture(s.level.extra["solution"][0], s.proj))
    fb, frames = sc.act(s.gesture_for(s.session.legal_moves()[-1]))  # a remove (last legal action)
    assert fb.moves[0].startswith("remove:") and len(frames) == 4
    assert len({f.tobytes() for f in frames}) == 4
    for route in s.level.extra["solution"][:-1]:
        s.dispatch(u.route_gesture(route, s.proj))
    fb, frames = sc.act(u.route_gesture(s.level.extra["solution"][-1], s.proj))
    assert s.complete and len(frames) == 4
    assert frames[-1][900:960].mean() < frames[1][900:960].mean() * 0.7    # the card dims the screen


def test_screenshot_2d_and_3d(tmp_path):
    from click.testing import CliRunner
    from PIL import Image

    from longpuzzle.cli import cli
    out = tmp_path / "c.png"
    res = CliRunner().invoke(cli, ["screenshot", "color_connect/hard/10", "--out", str(out), "--style", "3d",
                                   "--scale", "2", "--moves", "blue:0,5-0,4-0,3-0,2-0,1-0,0-1,0-2,0-3,0-4,0"])
    assert res.exit_code == 0, res.output
    assert Image.open(out).size == (1080, 1920)
