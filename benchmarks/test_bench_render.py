"""Frames per second (mid-game level screens into numpy) and GUI events interpreted per
second, for every game.

Targets (issue): >= 500 frames/s at scale 1 in 2d, >= 150 frames/s at scale 2 in 3d,
>= 100,000 GUI events/s (hit-test + input state machine + rules).

A frame round renders a cycle of DIFFERENT states met along a random play (static layers and
per-piece patches are cached, as in an agent episode). A GUI-event round dispatches 400
gestures of a random play (each legal move through the game's own gesture: taps, drags,
swipes, clicks; "Restart" / "Replay" clicked on screen when the play is stuck or won) on a
fresh copy of the suite; ops counts the low-level pointer events (a
click is 2, a drag or swipe with k steps is k + 2)."""

import numpy as np
import pytest

from longpuzzle.engine import gui
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

# one busy level per game
LEVELS = ["bolt_unscrew/hard/6", "rush_hour/hard/5", "nut_and_bolt/hard/1", "truck_escape/default/5",
          "maze_paint/hard/10", "color_connect/hard/10"]


def _random_play(suite, n, seed, suites=None):
    """(states, gestures) along a random play of legal moves through the suite's gestures
    (and a copy of the suite after each of them appended to ``suites``)."""
    rng = np.random.default_rng(seed)
    states, gestures = [], []
    for _ in range(n):
        legal = suite.session.legal_moves()
        if not legal or suite.complete:
            break
        g = suite.gesture_for(int(rng.choice(legal)))
        suite.dispatch(g)
        if suite.complete:
            break
        gestures.append(g)
        states.append(suite.session.state.copy())
        if suites is not None:
            suites.append(suite.clone())
    return states, gestures


def _events(action) -> int:
    a = gui.validate(action, (10 ** 6, 10 ** 6))
    if a["type"] == "batch":
        return sum(_events(x) for x in a["actions"])
    return sum(1 for e in gui.expand(a) if e[1] in (gui.DOWN, gui.MOVE, gui.UP))


@pytest.mark.parametrize("lid", LEVELS)
@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)], ids=["2d-x1", "3d-x2"])
def test_frames_per_second(benchmark, lid, style, scale):
    s = Suite(lid, style=style, scale=scale)
    # the suite after each move of a random play (settled: its animations over)
    at = []
    _random_play(s.clone(), 24, 5, at)
    r = Renderer(style, scale)
    for su in at:                                       # warm the caches once
        r.render(su)

    def loop():
        for su in at:
            r.render(su)
    benchmark.group = "frames"
    benchmark.extra_info.update(ops=len(at))
    benchmark(loop)


def _button_click(suite, wid):
    x, y = suite.layout()[wid].center
    px, py = suite.proj.to_px(x, y)
    return gui.click(int(px), int(py))


def gui_stream(lid, n, seed):
    """A long stream of gestures as a player makes them: random legal moves through the
    game's own gestures, and when the play is stuck or won, "Restart" (or "Replay" on the
    completion card) clicked on screen. Returns (suite at the start, gestures)."""
    s = Suite(lid)
    t = s.clone()
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        if t.complete:
            g = _button_click(t, "replay")
        else:
            legal = t.session.legal_moves()
            g = t.gesture_for(int(rng.choice(legal))) if legal else _button_click(t, "restart")
        t.dispatch(g)
        out.append(g)
    return s, out


@pytest.mark.parametrize("lid", LEVELS)
def test_gui_events(benchmark, lid):
    s, gestures = gui_stream(lid, 400, 1)
    n_events = sum(_events(g) for g in gestures)
    s.layout()                          # built once per screen in play; clones share it

    def loop():
        t = s.clone()
        for g in gestures:
            t.dispatch(g)
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=n_events)
    benchmark(loop)


# ---- the supersampled patches' and sprites' own steps, beside pygame's (same process) ------

def _card_crop():
    """The dimmed frame under a completion card's box (a real level screen's pixels)."""
    from longpuzzle.render.frame.screens import card_box
    r = Renderer("2d", 1.0)
    frame = r.render(Suite("maze_paint/hard/10")) >> 1
    x0, y0, x1, y1 = card_box(r.proj)
    return frame[y0:y1, x0:x1]


def _sprite_surface():
    """A supersampled sprite's surface before halving: a Color Connect path drawn at 2x."""
    import pygame
    big = pygame.Surface((300, 402), pygame.SRCALPHA)
    big.fill((128, 128, 128, 0))
    pygame.draw.lines(big, (230, 60, 60, 255), False, [(20, 20), (20, 380), (280, 380), (280, 100)], 36)
    pygame.draw.circle(big, (230, 60, 60, 255), (20, 20), 40)
    return big


@pytest.mark.parametrize("step", ["enlarge", "halve"])
def test_patch_and_sprite_steps_beside_pygame(benchmark, step):
    """draw_patch starts from its box enlarged 2x (kernels.enlarged_surface beside
    make_surface of the transposed crop + transform.scale), draw_sprite ends by halving
    (kernels.halved_surface beside transform.smoothscale): the same pixels (asserted), side
    by side in rounds of 50 calls; ops = calls."""
    import pygame
    from longpuzzle.render.frame.kernels import enlarged_surface, halved_surface
    from baseline import side_by_side
    if step == "enlarge":
        crop = _card_crop()
        h, w = crop.shape[:2]
        new = lambda: enlarged_surface(crop, 2)  # noqa: E731
        old = lambda: pygame.transform.scale(  # noqa: E731
            pygame.surfarray.make_surface(np.ascontiguousarray(crop.transpose(1, 0, 2))), (w * 2, h * 2))
    else:
        big = _sprite_surface()
        w, h = big.get_size()
        new = lambda: halved_surface(big)  # noqa: E731
        old = lambda: pygame.transform.smoothscale(big, (w // 2, h // 2))  # noqa: E731
    assert np.array_equal(pygame.surfarray.pixels2d(new()), pygame.surfarray.pixels2d(old()))
    benchmark.group = "patch and sprite steps"
    def calls(f):
        for _ in range(50):           # each result let go, as draw_patch and draw_sprite let go of theirs
            f()
    side_by_side(benchmark, lambda: calls(new), lambda: calls(old), 9, 50, 50, unit="calls",
                 pair=f"{step}: kernels beside pygame")
