"""Frames: shapes, determinism, animation frames, PNG files, the drawing registry, the CLI."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.cli import cli
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer, Screen, drawings, render, save_png


@pytest.mark.parametrize("style", ["2d", "3d"])
@pytest.mark.parametrize("scale, size", [(1, (960, 540)), (2, (1920, 1080)), (1.5, (1440, 810))])
def test_frame_shapes(style, scale, size):
    for start in ("home", "nut_and_bolt/medium/1", "maze_paint/hard/3"):
        f = render(Suite(start, style=style, scale=scale))
        assert f.shape == (*size, 3) and f.dtype == np.uint8
        assert f.std() > 10              # not blank


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_same_state_same_bytes_different_state_different_bytes(style):
    for lid in ("nut_and_bolt/hard/1", "maze_paint/medium/4"):
        a, b = Suite(lid, style=style), Suite(lid, style=style)
        m = a.session.legal_moves()[0]
        for s in (a, b):
            s.dispatch(s.gesture_for(m))
        f1 = Renderer(style, 1.0).render(a)                 # fresh renderers: no shared caches
        f2 = Renderer(style, 1.0).render(b)
        f3 = render(b)                                      # cached path gives the same bytes
        assert f1.tobytes() == f2.tobytes() == f3.tobytes()
        c = Suite(lid, style=style)
        assert render(c).tobytes() != f1.tobytes()


def test_selection_toast_and_shake_are_visible():
    s = Suite("nut_and_bolt/easy/1")
    base = render(s)
    u = s.game_ui()
    px, py = s.proj.to_px(*u.tap_point(0))
    s.dispatch({"type": "click", "x": round(px), "y": round(py)})
    sel = render(s)
    assert (sel != base).any(axis=2).sum() > 100            # the top run lifted
    px, py = s.proj.to_px(*u.tap_point(1))
    s.dispatch({"type": "click", "x": round(px), "y": round(py)})     # refused: toast + shake
    assert s.toast and s.shake
    rej = render(s)
    assert (rej != sel).any(axis=2).sum() > 100
    s.dispatch({"type": "wait", "ms": 2000})
    assert render(s).tobytes() == sel.tobytes()             # toast and shake are gone, selection stays


@pytest.mark.parametrize("lid", ["nut_and_bolt/easy/2", "maze_paint/easy/3"])
def test_intermediate_animation_frames(lid):
    sc = Screen(lid, style="3d", frames_per_move=3)
    m = sc.suite.session.legal_moves()[0]
    fb, frames = sc.act(sc.suite.gesture_for(m))
    assert fb.kind == "move" and len(frames) == 4
    assert frames[-1].tobytes() == sc.frame().tobytes()
    assert len({f.tobytes() for f in frames}) == 4          # every intermediate frame differs
    none = Screen(lid)
    assert len(none.act(none.suite.gesture_for(m))[1]) == 1  # default: no intermediate frames
    fb, frames = sc.act({"type": "click", "x": 5, "y": 950})
    assert fb.kind == "nothing" and len(frames) == 1


def test_completion_card_is_drawn():
    s = Suite("nut_and_bolt/easy/1")
    level, p = s.level, s.session.puzzle
    # greedy search for a solution is overkill here: play a known one found by BFS in test_gui
    from collections import deque
    seen, q = {level.initial.tobytes(): None}, deque([level.initial.copy()])
    while q:
        st = q.popleft()
        if p.is_solved(level, st):
            break
        for a in p.legal_moves(level, st):
            nx, _ = p.step(level, st, a)
            if nx.tobytes() not in seen:
                seen[nx.tobytes()] = (st.tobytes(), a)
                q.append(nx)
    path, k = [], st.tobytes()
    while seen[k] is not None:
        k, a = seen[k]
        path.append(a)
    before = None
    for a in path[::-1]:
        before = render(s)
        s.dispatch(s.gesture_for(a))
    assert s.complete
    card = render(s)
    # the card dims the board: much darker on average outside the card, and differs from the last frame
    assert card[900:960].mean() < before[900:960].mean() * 0.7


def test_png_round_trip(tmp_path):
    from PIL import Image
    f = render(Suite("maze_paint/easy/2", style="3d"))
    save_png(f, tmp_path / "a.png")
    assert np.array_equal(np.asarray(Image.open(tmp_path / "a.png").convert("RGB")), f)


def test_drawing_registry_discovers_game_modules():
    d = drawings()
    assert {"nut_and_bolt", "maze_paint"} <= set(d)
    from longpuzzle.puzzles.declarations import BUILTIN
    for g, cls in d.items():          # a built-in game's drawing is its module of render/
        if g in {s.id for s in BUILTIN}:
            assert cls.__module__ == f"longpuzzle.render.{g}"


def test_cli_screenshot_and_headless_play(tmp_path, monkeypatch):
    r = CliRunner()
    out = tmp_path / "s.png"
    res = r.invoke(cli, ["screenshot", "nut_and_bolt/easy/1", "--out", str(out), "--style", "3d", "--scale", "2",
                         "--moves", "1>3"])
    assert res.exit_code == 0, res.output
    from PIL import Image
    assert Image.open(out).size == (1080, 1920)
    res = r.invoke(cli, ["screenshot", "home", "--out", str(out), "--scale", "0"])
    assert res.exit_code == 2 and "scale must be a positive number" in res.output
    acts = tmp_path / "a.json"
    maze = dict(Suite("home").home_games())["maze_paint"]       # (721 with the six games)
    acts.write_text(json.dumps([{"type": "click", "x": 270, "y": maze}, {"type": "click", "x": 270, "y": 315},
                                {"type": "bogus"}, {"type": "swipe", "direction": "up", "x": 100, "y": 600}]))
    ep = tmp_path / "ep.json"
    res = r.invoke(cli, ["play", "--headless", "--actions", str(acts), "--save", str(ep), "--frames",
                         str(tmp_path / "frames")])
    assert res.exit_code == 0, res.output
    assert "unknown action type 'bogus'" in res.output
    doc = json.loads(ep.read_text())
    assert doc["level"] == "maze_paint/easy/1" and len(doc["actions"]) == 3
    assert len(list((tmp_path / "frames").glob("*.png"))) == 4
    # the episode replays to the same moves
    ep2 = tmp_path / "ep2.json"
    res = r.invoke(cli, ["play", "--headless", "--actions", str(ep), "--save", str(ep2)])
    assert res.exit_code == 0 and json.loads(ep2.read_text())["moves"] == doc["moves"]
    # the window refuses cleanly without a display
    monkeypatch.setenv("LONGPUZZLE_FORCE_NO_DISPLAY", "1")
    res = r.invoke(cli, ["play", "maze_paint/easy/1", "--save", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "no display" in res.output and "--headless" in res.output
