"""Bolt Unscrew on screen: touch boxes and HUD (RULES.md 2.1, 2.6, 1.3), the tap state machine
with sticky selection (2.2, 9.1), gestures for every legal move of every level start, the
recorded solutions replayed as clicks, frames and animation."""

import json
from pathlib import Path

import numpy as np
import pytest

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import Suite
from longpuzzle.puzzles import bolt_unscrew as bu

CONFIGS = [("2d", 1.0), ("2d", 2.0), ("3d", 1.0), ("3d", 2.0)]
VIEWPORT = (1280, 900)      # the paper's page: the game letterboxed in it, coordinates in page px
GESTURE_CONFIGS = [(a, b, None) for a, b in CONFIGS] + [("2d", 1.0, VIEWPORT), ("3d", 1.0, VIEWPORT)]
GESTURE_IDS = [f"{a}-x{b:g}" + ("-page" if v else "") for a, b, v in GESTURE_CONFIGS]
SOLUTIONS = json.loads((Path(__file__).resolve().parents[1] / "data" / "bolt_unscrew_solutions.json").read_text())
E3 = "bolt_unscrew/easy/3"
# easy 3:  gate (200, 260) screw, gate_park (430, 220) empty + usable,
#          main_park (270, 260) empty but under gate_b (blocked), main_l / main_r screws
GATE, GATE_PARK, MAIN_PARK, MAIN_L, MAIN_R = range(5)


def tap(s, x, y):
    px, py = s.proj.to_px(x, y)
    return s.dispatch({"type": "click", "x": round(px), "y": round(py)})


def tap_anchor(s, a):
    return tap(s, *s.game_ui().anchors[a])


def test_touch_boxes_hud_and_exit():
    for lid in builtin_catalog().level_ids("bolt_unscrew"):
        s = Suite(lid)
        u = s.game_ui()
        lay = s.layout()
        for i, (x, y) in enumerate(s.level.extra["anchors"]):
            w = lay[f"anchor:{i}"]
            assert w.kind == "target" and w.center == (x, y) and (w.shape.w, w.shape.h) == (64, 64)
        assert [w.id for w in u.buttons(False)] == ["restart", "menu"]
    assert lay["restart"].center == (470, 34)
    assert "undo" not in lay
    d = Suite(E3, direct=True).layout()
    assert "restart" in d and "menu" not in d           # direct launch keeps Restart only
    s = Suite(E3)
    tap_anchor(s, GATE)
    fb = tap(s, *s.layout()["restart"].center)
    assert fb.kind == "restart" and s.ui == {"selected": None, "hint": None}
    assert tap(s, *s.layout()["menu"].center).screen == "home"       # exit goes home


def test_state_machine_every_branch():
    s = Suite(E3, style="3d", scale=2)
    st0 = s.session.state.copy()
    # 1. no selection, an empty anchor: only the hint changes
    fb = tap_anchor(s, GATE_PARK)
    assert fb.kind == "refused" and s.ui == {"selected": None, "hint": bu.HINT_SELECT_FIRST}
    assert s.session.counters.rejected == 0 and s.session.moves == []
    # 2. a screw: selected
    fb = tap_anchor(s, GATE)
    assert fb.kind == "select" and s.ui == {"selected": GATE, "hint": bu.HINT_SELECTED}
    # 3. the same screw: deselected
    fb = tap_anchor(s, GATE)
    assert fb.kind == "deselect" and s.ui["selected"] is None
    # 4. another screw switches the selection
    tap_anchor(s, GATE)
    fb = tap_anchor(s, MAIN_L)
    assert fb.kind == "select" and s.ui == {"selected": MAIN_L, "hint": bu.HINT_SWITCHED}
    # 5a. a blocked empty anchor: refused, the selection STAYS, only the hint changes
    fb = tap_anchor(s, MAIN_PARK)
    assert fb.kind == "rejected" and fb.effects[0]["reason"] == "target_blocked"
    assert s.ui == {"selected": MAIN_L, "hint": bu.HINT_BLOCKED}
    assert s.toast is None and s.shake is None and s.anims == []
    assert s.session.counters.rejected == 1 and np.array_equal(s.session.state, st0)
    # 5b. an usable empty anchor: the screw moves there, the selection clears
    tap_anchor(s, GATE)
    fb = tap_anchor(s, GATE_PARK)
    assert fb.moves == ["gate>gate_park"] and s.ui == {"selected": None, "hint": bu.HINT_RELEASED_ONE}
    a = s.anims[0]
    assert a["t1"] - a["t0"] == bu.MOVE_MS + bu.SETTLE_MS and s.clock >= a["t1"]
    # 6. taps on a board body or the background do nothing
    for x, y in ((300, 460), (270, 600), (500, 900), (100, 60)):
        assert tap(s, x, y).kind == "nothing"
    assert s.ui["hint"] == bu.HINT_RELEASED_ONE
    # the rest of the level, with the original's wording after each move
    tap_anchor(s, MAIN_L)
    assert tap_anchor(s, GATE).moves == ["main_l>gate"] and s.ui["hint"] == bu.HINT_PARTIAL_ONE
    tap_anchor(s, MAIN_R)
    assert tap_anchor(s, MAIN_PARK).moves == ["main_r>main_park"]
    assert s.complete and [w.id for w in s.layout().widgets] == ["next", "replay"]


def test_any_screw_can_be_selected_and_moved_back_and_forth():
    s = Suite("bolt_unscrew/easy/2")           # a1, a2 pin b1; p1 empty
    tap_anchor(s, 0)
    assert tap_anchor(s, 2).moves == ["a1>p1"] and s.ui["hint"] == bu.HINT_PARTIAL_ONE
    tap_anchor(s, 2)
    assert s.ui["selected"] == 2
    assert tap_anchor(s, 0).moves == ["p1>a1"] and s.ui["hint"] == bu.HINT_FREED


def test_release_must_be_on_the_pressed_anchor():
    s = Suite(E3)
    u = s.game_ui()
    (a, b), (c, d) = s.proj.to_px(*u.anchors[GATE]), s.proj.to_px(*u.anchors[MAIN_L])
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": c, "y1": d, "steps": 3, "ms": 90})
    assert fb.kind == "nothing" and s.ui["selected"] is None
    fb = s.dispatch({"type": "drag", "x0": a, "y0": b, "x1": a + 20, "y1": b + 20, "steps": 2, "ms": 60})
    assert fb.kind == "select"                            # released inside the same 64 x 64 box
    fb = s.dispatch(gui.batch({"type": "press", "x": c, "y": d}, {"type": "release", "x": 270, "y": 700}))
    assert fb.kind == "nothing" and s.ui["selected"] == GATE


def test_touch_box_edges():
    s = Suite(E3)
    x, y = s.game_ui().anchors[GATE]
    assert tap(s, x + 33, y).kind == "nothing"
    assert tap(s, x + 31, y - 31).kind == "select"


def test_snapshot_restore_keeps_the_selection_and_hint():
    s = Suite(E3, style="3d")
    tap_anchor(s, MAIN_L)
    tap_anchor(s, MAIN_PARK)                 # blocked: the selection stays
    r = Suite.restore(s.snapshot())
    assert r.ui == {"selected": MAIN_L, "hint": bu.HINT_BLOCKED}
    tap_anchor(r, GATE)
    assert tap_anchor(r, GATE_PARK).moves == ["gate>gate_park"]


@pytest.mark.parametrize("style, scale, viewport", GESTURE_CONFIGS, ids=GESTURE_IDS)
def test_every_legal_move_of_every_level_start_has_a_gesture(style, scale, viewport):
    checked = 0
    for lid in builtin_catalog().level_ids("bolt_unscrew"):
        s = Suite(lid, style=style, scale=scale, viewport=viewport)
        for m in s.session.legal_moves():
            g = s.gesture_for(m)
            gui.validate(g, s.proj.size)
            assert g["type"] == "batch" and len(g["actions"]) == 2
            assert all(isinstance(c[k], int) for c in g["actions"] for k in ("x", "y"))
            assert s.interpret(g) == [m], (lid, m, g)
            checked += 1
        assert s.session.moves == [] and s.ui["selected"] is None
    assert checked >= 400


@pytest.mark.parametrize("style, viewport", [("2d", None), ("3d", None), ("3d", VIEWPORT)], ids=["2d", "3d", "3d-page"])
def test_recorded_solutions_replayed_as_clicks(style, viewport):
    for lid in builtin_catalog().level_ids("bolt_unscrew"):
        s = Suite(lid, style=style, scale=2 if style == "3d" else 1, viewport=viewport)
        moves = SOLUTIONS[lid.split("/", 1)[1]]["moves"]
        for m in moves:
            a = s.puzzle.parse_move(s.level, m)
            g = s.gesture_for(a)
            for click in g["actions"]:
                s.dispatch(click)
            assert s.session.moves[-1] == a and s.ui["selected"] is None, (lid, m)
        assert s.complete and s.session.solved, lid
        assert len(s.session.moves) == len(moves)


# ---- frames --------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["2d", "3d"])
def test_frames_deterministic_selection_hint_and_nothing(style):
    from longpuzzle.render.frame import Renderer, render
    base = render(Suite(E3, style=style))
    a, b = Suite(E3, style=style), Suite(E3, style=style)
    for s in (a, b):
        tap_anchor(s, GATE)
    f1, f2 = Renderer(style, 1.0).render(a), render(b)
    assert f1.tobytes() == f2.tobytes() and f1.tobytes() != base.tobytes()
    # the selection lifts the screw and rings it: pixels change around the anchor only
    s = a
    x, y = s.game_ui().anchors[GATE]
    diff = (f1 != base).any(axis=2)
    ys, xs = np.nonzero(diff)
    hint_y = s.proj.to_px(270, s.game_ui().instructions_y)[1]
    near = np.hypot(xs - s.proj.to_px(x, y)[0], ys - s.proj.to_px(x, y)[1]) < 60
    assert near.sum() > 300 and (near | (np.abs(ys - hint_y) < 20)).all()
    # a refused target: the picture keeps the selection, only the hint line changes
    tap_anchor(s, MAIN_PARK)
    f3 = render(s)
    d3 = (f3 != f1).any(axis=2)
    assert d3.any() and (np.abs(np.nonzero(d3)[0] - hint_y) < 20).all()
    # deselect: back to the first picture
    tap_anchor(s, GATE)
    s.ui["hint"] = None
    assert render(s).tobytes() == base.tobytes()
    c = Suite(E3, style=style)
    assert c.dispatch({"type": "click", "x": 5, "y": 950}).kind == "nothing"
    assert render(c).tobytes() == base.tobytes()


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_intermediate_frames_of_a_move(style):
    from longpuzzle.render.frame import Screen
    sc = Screen(E3, style=style, frames_per_move=5)
    fb, frames = sc.act(sc.suite.gesture_for(sc.suite.puzzle.parse_move(sc.suite.level, "gate>gate_park")))
    assert fb.moves == ["gate>gate_park"] and len(frames) == 6
    assert len({f.tobytes() for f in frames}) == 6
    assert frames[-1].tobytes() == sc.frame().tobytes()
    # a swing: the settle's own intermediate poses are drawn
    fb, frames = sc.act(sc.suite.gesture_for(sc.suite.puzzle.parse_move(sc.suite.level, "main_l>gate")))
    assert fb.moves == ["main_l>gate"] and len({f.tobytes() for f in frames}) == 6
    none = Screen(E3, style=style)
    assert len(none.act(none.suite.gesture_for(0 * 5 + 1))[1]) == 1


def test_pieces_cover_empty_holes_and_leave():
    from longpuzzle.render.frame import render
    s = Suite(E3)
    x, y = s.game_ui().anchors[MAIN_PARK]          # under gate_b: wood, not a black hole
    px, py = (int(v) for v in s.proj.to_px(x, y))
    before = render(s)[py, px]
    assert before.astype(int).sum() > 200
    tap_anchor(s, GATE)
    tap_anchor(s, GATE_PARK)                        # gate_b drops out: the hole shows
    after = render(s)[py, px]
    assert after.astype(int).sum() < 60


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 1.5)])
def test_frame_bytes_do_not_depend_on_what_was_drawn_before(style, scale):
    from longpuzzle.render.frame import Renderer
    s = Suite(E3, style=style, scale=scale)
    warm = Renderer(style, scale)
    warm.render(s)
    for m in ("gate>gate_park", "main_l>gate"):
        tap_anchor(s, s.level.extra["anchor_ids"].index(m.split(">")[0]))
        tap_anchor(s, s.level.extra["anchor_ids"].index(m.split(">")[1]))
        a = s.anims[0]
        for t in (a["t0"] + 100, (a["t0"] + a["t1"]) // 2, a["t1"] - 60, None):
            f1 = warm.render(s, t)
            f2 = Renderer(style, scale).render(s, t)
            assert f1.tobytes() == f2.tobytes()
            assert f1.shape == (round(960 * scale), round(540 * scale), 3)


def _summary_reference(lv, before, after, src, dst):
    """The move facts of bolt_unscrew.move_summary, in plain Python over the state layout."""
    nA, nP, H, ss = int(lv[0]), int(lv[1]), int(lv[2]), int(lv[11])
    out = [0, 0, 0, 0]
    for p in range(nP):
        b = nA + p * ss
        if before[b] == bu.LEFT:
            continue
        on_src = src in list(before[b + 4:b + 4 + H])
        at_dst = after[b] != bu.LEFT and dst in list(after[b + 4:b + 4 + H])
        out[2] += at_dst
        out[3] += on_src
        if on_src and not at_dst:
            out[0 if after[b] != bu.ATTACHED else 1] += 1          # no screw holds it: released
    return (*out, int(list(before[nA:]) != list(after[nA:])))


def test_move_summary_matches_a_python_reference_along_random_plays():
    """The compiled hint / animation facts equal a plain reading of the state, over random
    plays of every level (every accepted move)."""
    rng = np.random.default_rng(7)
    seen = set()
    for lid in builtin_catalog().level_ids("bolt_unscrew"):
        s = Suite(lid)
        for _ in range(40):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                break
            a = int(rng.choice(legal))
            before = s.session.state.copy()
            assert s.try_move(a, 0).accepted
            after = s.session.state.copy()
            f, t = divmod(a, s.game_ui().n)
            got = tuple(int(v) for v in bu.move_summary(s.level.lv, before, after, f, t))
            assert got == _summary_reference(s.level.lv, before, after, f, t)
            seen.add(s.game_ui().move_hint(before, after, f, t))
    assert len(seen) >= 4             # several different hint lines were exercised


def _free_point_scan(box, x, y, others, margin=4.0):
    """The tap point's definition as a scan point by point (the code before it was vectorised)."""
    best = None
    step = 2.0
    n = int((box.w / 2 - margin) // step)
    for i in range(-n, n + 1):
        for j in range(-n, n + 1):
            px, py = x + i * step, y + j * step
            if any(o.contains(px, py) for o in others):
                continue
            if any(o.contains(px + dx, py + dy) for o in others
                   for dx, dy in ((margin, 0), (-margin, 0), (0, margin), (0, -margin))):
                continue
            d = i * i + j * j
            if best is None or d < best[0]:
                best = (d, px, py)
    return (best[1], best[2]) if best else (x, y)


def test_tap_points_are_those_of_a_scan_point_by_point():
    from longpuzzle.engine.geometry import Rect

    checked = 0
    for lid in builtin_catalog().level_ids("bolt_unscrew"):
        ui = Suite(lid).game_ui()
        covers = [w.shape for w in ui._buttons[False]]
        for i, (x, y) in enumerate(ui.anchors):
            later = [ui.boxes[j] for j in range(i + 1, ui.n)] + covers
            assert ui.tap_points[i] == _free_point_scan(ui.boxes[i], x, y, later), (lid, i)
            checked += 1
    assert checked > 200
    # a box covered everywhere keeps its anchor; ties go to the first point of the scan
    box = Rect.centred(100.0, 100.0, 64, 64)
    for others in ([Rect(0, 0, 300, 300)], [Rect(60, 60, 100.5, 140)], [Rect(99, 0, 300, 300)],
                   [Rect(90, 90, 110, 110), Rect(120, 80, 140, 131)], []):
        assert bu.BoltUnscrewUI._free_point(box, 100.0, 100.0, others) == _free_point_scan(box, 100.0, 100.0, others)
