"""GUI actions in bulk: every action type, well-formed and malformed, on every screen of the
suite (home, difficulty, levels, completion cards), checking after each that nothing but an
ActionError escaped, that the rules' state stays valid and (now and then) that the frame
draws and the suite's snapshot restores exactly. Seeded and bounded.

    report = soak("rush_hour", actions=1_000_000, seed=1)
    # {"game", "actions", "dispatched", "refused", "moves", "levels_won", "screens", "failures": [...], "seconds"}

Used by the test suite (a few thousand actions per game) and by ``longpuzzle soak``
(10^6 and more per game).
"""

from __future__ import annotations

import random
import time
from typing import Any

from longpuzzle.engine import gui

# odd values a malformed field gets
ODD = (None, True, False, -1, 0, 10 ** 400, -10 ** 30, 2 ** 63, float("nan"), float("inf"), -float("inf"), 1e308,
       "", "x", "1", [], {}, [1, 2], {"x": 1}, 1.5, -0.0, "ArrowUp", "a" * 300)


class _LyingList(list):
    """A list subclass that lies about its length and repeats itself when iterated."""

    def __len__(self):
        return 1

    def __iter__(self):
        while True:
            yield {"type": "wait", "ms": 1}


class _HostileDict(dict):
    """A dict subclass whose own methods hang or raise (validation must never call them)."""

    def get(self, *a):
        raise RuntimeError("hostile get")

    def items(self):
        raise RuntimeError("hostile items")

    def __iter__(self):
        raise RuntimeError("hostile iter")

    def __len__(self):
        return 0


def _pt(rng: random.Random, size, suite=None) -> tuple[float, float]:
    """A point: mostly on a widget of the current screen (when a suite is given), else anywhere;
    sometimes fractional, sometimes on the frame's edge."""
    w, h = size
    if suite is not None and rng.random() < 0.6:
        try:
            ws = suite.layout().widgets
        except Exception:                 # noqa: BLE001 - the fuzzer must not mask the suite's failures
            ws = []
        if ws:
            wd = rng.choice(ws)
            cx, cy = wd.shape.center
            px, py = suite.proj.to_px(cx, cy)
            px, py = px + rng.uniform(-12, 12), py + rng.uniform(-12, 12)
            return min(max(px, 0), w - 1), min(max(py, 0), h - 1)
    r = rng.random()
    if r < 0.1:
        return rng.choice((0, w - 1)), rng.uniform(0, h - 1)
    if r < 0.5:
        return rng.randrange(w), rng.randrange(h)
    return rng.uniform(0, w - 1e-6), rng.uniform(0, h - 1e-6)


def random_action(rng: random.Random, size, suite=None, depth: int = 0) -> dict:
    """A well-formed action of a random type (every type of engine/gui.py)."""
    t = rng.choice(gui.ACTION_TYPES if depth < 2 else tuple(x for x in gui.ACTION_TYPES if x != "batch"))
    x, y = _pt(rng, size, suite)
    if t in ("click", "double_click", "press", "move"):
        return {"type": t, "x": x, "y": y}
    if t == "long_press":
        return {"type": t, "x": x, "y": y, "ms": rng.choice((1, 300, 1000, 5000))}
    if t == "release":
        return {"type": t} if rng.random() < 0.5 else {"type": t, "x": x, "y": y}
    if t == "drag":
        x1, y1 = _pt(rng, size, suite)
        a = {"type": "drag", "x0": x, "y0": y, "x1": x1, "y1": y1, "steps": rng.randint(1, 60), "ms": rng.randint(1, 2000)}
        if rng.random() < 0.3:
            a["via"] = [list(_pt(rng, size, suite)) for _ in range(rng.randint(0, 6))]
        return a
    if t == "swipe":
        if rng.random() < 0.5:
            x1, y1 = _pt(rng, size, suite)
            return {"type": t, "x0": x, "y0": y, "x1": x1, "y1": y1}
        a = {"type": t, "direction": rng.choice(gui.DIRECTIONS)}
        if rng.random() < 0.5:
            a.update(x=x, y=y, distance=rng.uniform(1, 800))
        return a
    if t == "key":
        return {"type": t, "name": rng.choice(gui.NAMED_KEYS + ("a", "z", "0", "9", "enter", "esc", " "))}
    if t == "typetext":
        return {"type": t, "text": "".join(rng.choice("abcxyz0129 \n\t") for _ in range(rng.randint(1, 12)))}
    if t == "scroll":
        return {"type": t, "x": x, "y": y, "direction": rng.choice(gui.DIRECTIONS), "amount": rng.randint(1, 5000)}
    if t == "wait":
        return {"type": t, "ms": rng.choice((0, 1, 40, 250, 1000))}
    return {"type": "batch", "actions": [random_action(rng, size, suite, depth + 1) for _ in range(rng.randint(1, 5))]}


def malformed_action(rng: random.Random, size, suite=None) -> Any:
    """Something an agent might return instead of a good action: a field of the wrong type or
    out of range, a missing or extra field, an unknown type, a huge number or text, a batch
    nested too deep or too long, a list subclass lying about its length, a hostile dict
    subclass, or not a dict at all."""
    r = rng.random()
    if r < 0.05:
        return rng.choice((None, 5, "click", [], [{"type": "click", "x": 1, "y": 1}], 3.5, b"x"))
    if r < 0.1:
        return {"type": rng.choice(("teleport", "", "CLICK", "x" * 5000, 7, None))}
    if r < 0.15:
        b = {"type": "wait", "ms": 1}
        for _ in range(rng.randint(2, 6)):
            b = {"type": "batch", "actions": [b] * rng.choice((2, 10, 200, 201))}
        return b
    if r < 0.18:
        return {"type": "batch", "actions": _LyingList([{"type": "wait", "ms": 1}])}
    if r < 0.21:
        return _HostileDict(type="click", x=1, y=1)
    if r < 0.24:
        return {"type": "batch", "actions": []}
    a = random_action(rng, size, suite)
    if a["type"] == "batch":
        i = rng.randrange(len(a["actions"]))
        a["actions"][i] = malformed_action(rng, size, suite)
        return a
    k = rng.random()
    keys = [k_ for k_ in a if k_ != "type"]
    if keys and k < 0.6:
        a[rng.choice(keys)] = rng.choice(ODD)
    elif keys and k < 0.8:
        del a[rng.choice(keys)]
    else:
        a[rng.choice(("bogus", "x2", "action_type", "via", "text", "ms"))] = rng.choice(ODD)
    return a


def soak(game: str, actions: int, seed: int = 0, *, style: str = "2d", malformed: float = 0.3,
         render_every: int = 997, restore_every: int = 4999, progress=None) -> dict:
    """Dispatch ``actions`` random actions (a share ``malformed`` of them malformed) on the suite,
    starting at the home screen and steered into ``game`` (its cards, its moves' gestures),
    and report what happened; every exception other than an ActionError, and every broken
    invariant, is a failure (kept, up to 20, with the seed position to reproduce it)."""
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import renderer

    rng = random.Random(f"{game}:{seed}")
    suite = Suite("home", style=style)
    rend = renderer(style, 1.0)
    size = suite.frame_size
    rep = {"game": game, "seed": seed, "actions": 0, "dispatched": 0, "refused": 0, "moves": 0, "levels_won": 0,
           "screens": {suite.screen_name()}, "failures": [], "failures_total": 0}
    t0 = time.perf_counter()

    def fail(i, what, e):
        rep["failures_total"] += 1
        if len(rep["failures"]) < 20:
            rep["failures"].append({"action": i, "what": what, "error": f"{type(e).__name__}: {str(e)[:300]}"})

    for i in range(actions):
        r = rng.random()
        sess = suite.session
        if suite.screen["name"] == "home" and r < 0.5:
            a = _card(suite, f"game:{game}")
        elif suite.screen["name"] == "difficulty" and suite.screen.get("game") == game and r < 0.5:
            a = {"type": "click", "x": 0, "y": 0}
            ws = [w for w in suite.layout().widgets if w.id.startswith("difficulty:")]
            if ws:
                a = _card(suite, rng.choice(ws).id)
        elif sess is not None and not suite.complete and r < 0.45:
            legal = sess.legal_moves()
            a = suite.gesture_for(rng.choice(legal)) if legal else _card(suite, "restart")
        elif r < 0.45 + malformed * 0.55:
            a = malformed_action(rng, size, suite)
        else:
            a = random_action(rng, size, suite)
        rep["actions"] += 1
        won_before = suite.complete
        try:
            fb = suite.dispatch(a)
            rep["dispatched"] += 1
            rep["moves"] += sum(1 for e in fb.effects if e.get("effect") == "move")
        except gui.ActionError:
            rep["refused"] += 1
        except Exception as e:            # noqa: BLE001 - a failure of the suite: reported
            fail(i, f"dispatch {_desc(a)}", e)
            suite = Suite("home", style=style)
            continue
        if suite.complete and not won_before:
            rep["levels_won"] += 1
        rep["screens"].add(suite.screen_name().split(":")[0] + (":complete" if suite.complete else ""))
        try:
            s = suite.session
            if s is not None:
                p = s.progress
                if not 0.0 <= p <= 1.0:
                    raise AssertionError(f"progress {p} outside [0, 1]")
                if suite.complete and not s.solved:
                    raise AssertionError("the completion card is shown on an unsolved board")
            if render_every and i % render_every == 0:
                rend.render(suite)
                for an in suite.anims:
                    rend.render(suite, (an["t0"] + an["t1"]) // 2)
            if restore_every and i % restore_every == 0:
                snap = suite.snapshot()
                again = Suite.restore(snap)
                if again.snapshot() != snap:
                    raise AssertionError("a snapshot does not restore exactly")
                suite = again
        except Exception as e:            # noqa: BLE001
            fail(i, "after the action", e)
            suite = Suite("home", style=style)
        if progress is not None and i % 10000 == 0:
            progress(rep)
    rep["seconds"] = round(time.perf_counter() - t0, 3)
    rep["screens"] = sorted(rep["screens"])
    return rep


def _card(suite, wid: str) -> dict:
    for w in suite.layout().widgets:
        if w.id == wid:
            x, y = suite.proj.to_px(*w.shape.center)
            return {"type": "click", "x": int(x), "y": int(y)}
    return {"type": "wait", "ms": 0}


def _desc(a) -> str:
    try:
        s = repr(a)
    except Exception:                     # noqa: BLE001
        s = f"<{type(a).__name__}>"
    return s if len(s) <= 160 else s[:157] + "..."
