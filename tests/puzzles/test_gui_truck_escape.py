"""Truck Escape on screen: geometry and HUD (RULES.md 5.1), taps (5.2), gestures for every
legal move of every level start, frames."""

import numpy as np
import pytest

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import TOAST_MS, Suite
from longpuzzle.puzzles.truck_escape import BLOCKED_TEXT, LEAVE_MS, PROGRESS_BAR

CONFIGS = [("2d", 1.0), ("2d", 2.0), ("3d", 1.0), ("3d", 2.0)]
VIEWPORT = (1280, 900)      # the paper's page: the game letterboxed in it, coordinates in page px
GESTURE_CONFIGS = [(a, b, None) for a, b in CONFIGS] + [("2d", 1.0, VIEWPORT), ("3d", 1.0, VIEWPORT)]
GESTURE_IDS = [f"{a}-x{b:g}" + ("-page" if v else "") for a, b, v in GESTURE_CONFIGS]
L1 = "truck_escape/default/1"
# level 1:   . t8< t8< . t9< t9<          free at the start: t0, t1, t8
#            . t4v  .  .  t5< t5<         t3 is blocked by t2, t9 by t8
#            . t4v t0> t0> .  .
#            .  .  t1< t1< t6< t6<
#            . t3> t3> t2^ .  .           (t2 is blocked by t1 and t0)
#            .  .   .  t2^ t7< t7<


def tap(s, x, y):
    px, py = s.proj.to_px(x, y)
    return s.dispatch({"type": "click", "x": px, "y": py})


def test_screen_mapping_matches_the_level_data():
    for lid in builtin_catalog().level_ids("truck_escape"):
        s = Suite(lid)
        u = s.game_ui()
        ex = s.level.extra
        fw, fh = u.cols * 60, u.rows * 60
        assert u.scale == min(480 / fw, 560 / fh)
        assert np.allclose((u.ox, u.oy), ex["screen_field_origin"], atol=1e-3)
        assert u.field.center == pytest.approx((270, 480))
        for i, t in enumerate(ex["trucks"]):
            assert np.allclose(u.centers[i], t["center_screen"], atol=1e-3)
            r = u.rects[i]
            long_side, short_side = max(r.w, r.h), min(r.w, r.h)
            assert long_side == pytest.approx(120 * u.scale) and short_side == pytest.approx(51 * u.scale)
            assert (r.h > r.w) == (t["direction"] in ("up", "down"))


def test_hud_layout():
    s = Suite(L1)
    lay = s.layout()
    assert lay["restart"].shape == lay["restart"].shape.centred(475, 60, 95, 38)
    assert lay["menu"].center == (65, 60)
    for k, x in (("remove", 140), ("shuffle", 270), ("flip", 400)):
        w = lay[f"item:{k}"]
        assert w.center == (x, 870) and (w.shape.w, w.shape.h) == (96, 96)
    assert PROGRESS_BAR.center == (270, 110) and (PROGRESS_BAR.w, PROGRESS_BAR.h) == (320, 28)
    assert "undo" not in lay and "menu" not in Suite(L1, direct=True).layout()


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_free_and_blocked_taps(style):
    s = Suite(L1, style=style, scale=2)
    u = s.game_ui()
    fb = tap(s, *u.centers[3])                       # t3: t2 stands ahead
    assert fb.kind == "rejected" and fb.effects[0]["reason"] == "blocked"
    assert s.shake["target"] == "truck:3" and s.toast["text"] == BLOCKED_TEXT
    assert s.toast["until"] - s.toast["t0"] == TOAST_MS == 1400
    assert s.session.counters.rejected == 1 and int(s.session.state[0]) == 10
    assert tap(s, *u.centers[0]).moves == ["t0"]
    fb = tap(s, *u.centers[1])                       # t1 faces left: free
    assert fb.moves == ["t1"] and s.anims[0]["t1"] - s.anims[0]["t0"] == LEAVE_MS == 550
    assert s.clock >= s.anims[0]["t1"]
    assert tap(s, *u.centers[2]).moves == ["t2"]     # t1 and t0 stood ahead of t2 (facing up)
    fb = tap(s, *u.centers[3])                       # now t3 is free
    assert fb.moves == ["t3"]
    # a truck that has left is no longer there: tapping its place does nothing
    fb = tap(s, *u.centers[2])
    assert fb.kind == "nothing" and s.session.counters.rejected == 1


def test_the_tap_area_is_the_truck_rectangle():
    s = Suite(L1)
    u = s.game_ui()
    r = u.rects[0]                                   # t0, horizontal: 160 x 68 around its centre
    cx, cy = u.centers[0]
    assert tap(s, cx, r.y0 - 2).kind == "nothing"                   # inside its cells, outside the 51-wide box
    assert tap(s, r.x1 + 1, cy).kind == "nothing"
    assert tap(s, r.x1 - 1, r.y1 - 1).moves == ["t0"]
    # taps elsewhere do nothing
    for x, y in ((5, 950), (270, 180), (20, 480), (270, 800)):
        assert tap(s, x, y).kind == "nothing"
    assert s.session.counters.as_dict()["rejected"] == 0


def test_the_release_point_decides():
    s = Suite(L1)
    u = s.game_ui()
    (a, b), (c, d) = s.proj.to_px(*u.centers[0]), s.proj.to_px(*u.centers[1])
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 3, "ms": 90})
    assert fb.moves == ["t1"]                          # TOUCH_END on t1
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": 270, "y1": 800, "steps": 3, "ms": 90})
    assert fb.kind == "nothing"


def test_items_menu_restart():
    s = Suite("home")
    x, y = s.layout()["game:truck_escape"].center
    tap(s, x, y)
    assert s.screen_name() == f"level:{L1}"           # no difficulty screen
    for k, name in (("remove", "Remove"), ("shuffle", "Shuffle"), ("flip", "Flip")):
        fb = tap(s, *s.layout()[f"item:{k}"].center)
        assert fb.kind == "refused" and s.toast["text"] == f"{name} is not available yet"
    assert s.session.counters.moves == 0 and s.session.counters.rejected == 0
    u = s.game_ui()
    tap(s, *u.centers[0])
    tap(s, *s.layout()["restart"].center)
    assert int(s.session.state[0]) == 10 and s.session.counters.restarts == 1
    tap(s, *s.layout()["menu"].center)
    assert s.screen_name() == "home"                  # exit goes home


def test_clearing_the_field_completes_the_level():
    s = Suite(L1, style="3d")
    for a in s.level.extra["clearing_actions"]:
        assert s.dispatch(s.gesture_for(a)).moves == [s.level.extra["ids"][a]]
    assert s.complete and s.session.solved and [w.id for w in s.layout().widgets] == ["next", "replay"]
    x, y = s.proj.to_px(*s.layout()["next"].center)
    s.dispatch({"type": "click", "x": x, "y": y})
    assert s.screen_name() == "level:truck_escape/default/2"


@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
def test_every_legal_move_of_every_level_start_has_a_gesture(style, scale, viewport):
    checked = 0
    for lid in builtin_catalog().level_ids("truck_escape"):
        s = Suite(lid, style=style, scale=scale, viewport=viewport)
        for m in s.session.legal_moves():
            g = s.gesture_for(m)
            gui.validate(g, s.proj.size)
            assert all(isinstance(g[k], int) for k in g if k != "type")
            assert s.interpret(g) == [m], (lid, m, g)
            checked += 1
        assert s.session.moves == []
    assert checked >= 70


@pytest.mark.parametrize("viewport", [None, VIEWPORT], ids=["own-frame", "page"])
def test_gestures_along_whole_clearing_orders(viewport):
    for lid in builtin_catalog().level_ids("truck_escape"):
        s = Suite(lid, style="3d", scale=1.5, viewport=viewport)
        for a in s.level.extra["clearing_actions"]:
            for m in s.session.legal_moves():
                assert s.interpret(s.gesture_for(m)) == [m]
            s.dispatch(s.gesture_for(a))
        assert s.complete


# ---- frames --------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["2d", "3d"])
def test_frames_deterministic_progress_shake_and_toast(style):
    from longpuzzle.render.frame import Renderer, render
    a, b = Suite(L1, style=style), Suite(L1, style=style)
    for s in (a, b):
        s.dispatch(s.gesture_for(0))
    f1, f2 = Renderer(style, 1.0).render(a), render(b)
    assert f1.tobytes() == f2.tobytes()
    s = Suite(L1, style=style)
    base = render(s)
    assert base.tobytes() != f1.tobytes()
    # the progress bar shows 10% after one truck of ten
    px0, py0 = s.proj.to_px(PROGRESS_BAR.x0 + 6, PROGRESS_BAR.y0 + 4)
    px1, py1 = s.proj.to_px(PROGRESS_BAR.x0 + 25, PROGRESS_BAR.y1 - 4)
    box = (slice(int(py0), int(py1)), slice(int(px0), int(px1)))
    assert (f1[box] != base[box]).any()
    # a blocked tap: shake and the title flash; both are gone after 1.4 s
    u = s.game_ui()
    tap(s, *u.centers[3])
    t = s.toast["t0"]
    shaking = Renderer(style, 1.0).render(s, t + 20)
    assert (shaking != base).any(axis=2).sum() > 200
    s.dispatch({"type": "wait", "ms": 1500})
    assert render(s).tobytes() == base.tobytes()
    assert render(Suite(L1, style=style)).tobytes() == base.tobytes()
    c = Suite(L1, style=style)
    assert c.dispatch({"type": "click", "x": 5, "y": 950}).kind == "nothing"
    assert render(c).tobytes() == base.tobytes()


def test_intermediate_frames_of_a_truck_leaving():
    from longpuzzle.render.frame import Screen
    sc = Screen(L1, style="3d", frames_per_move=3)
    fb, frames = sc.act(sc.suite.gesture_for(8))
    assert fb.moves == ["t8"] and len(frames) == 4 and len({f.tobytes() for f in frames}) == 4
    assert frames[-1].tobytes() == sc.frame().tobytes()
    none = Screen(L1)
    assert len(none.act(none.suite.gesture_for(8))[1]) == 1
