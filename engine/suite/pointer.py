"""The suite's pointer: the Pointer part of a Suite owns the pointer's press state (``state``)
and runs one validated GUI action (run: validated once by Suite.validate, gui.validate) one way,
as pointer and key events in design px on the app's virtual clock (_act: a batch's actions in
order, each one's events by _events, or by _click / _drag, which make a click's or a drag's
events without listing them). What an event does on the screen is the app's Navigator's
(navigator.py): a press and release on a button (nav.press_button), an event on the game's
board (nav.board_event), a key (nav.key_event); besides those it reads the Navigator's clock
and animations and the app's projection and widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from longpuzzle.engine import gui
from longpuzzle.engine.suite.game_ui import Feedback

if TYPE_CHECKING:
    from longpuzzle.engine.suite.app import Suite

_DOWN, _MOVE, _UP, _KEY, _WHEEL, _WAIT, _CLICK_MS = gui.DOWN, gui.MOVE, gui.UP, gui.KEY, gui.WHEEL, gui.WAIT, gui.CLICK_MS


class Pointer:
    """The input part of a Suite (``app``): the pointer's press state and the running of a
    validated action's events. ``state`` is {"down": False} (or with the last ``x``, ``y``)
    while up, and while pressed {"down": True, "x", "y" (where it is now), "x0", "y0", "t0"
    (the press), "target" (the widget id it hit, or None), "button" (whether that widget is
    a button, not the board), "locked" (pressed while an animation locked the input)}."""

    __slots__ = ("app", "nav", "state")

    def __init__(self, app: Suite, state: dict | None = None):
        self.app = app
        self.nav = app.nav          # the app's state and what an event does on a screen
        self.state: dict = state if state is not None else {"down": False}

    def copy(self, app: Suite) -> Pointer:
        """This pointer for ``app`` (a clone of its app)."""
        return Pointer(app, dict(self.state))

    def lift(self) -> None:
        """Forget any press (the screen changed under it)."""
        self.state = {"down": False}

    def run(self, a: dict, until: int | None = None) -> Feedback:
        """Run one validated GUI action (what ``Suite.validate`` returned; it is not checked again).

        ``until`` is a deadline on the virtual clock (ms): events due at or after it do not
        happen, the clock stops there, and the Feedback is marked ``cut`` (with the presses
        that did happen). An action that ends before it runs exactly as without it."""
        if self.nav.anims:
            self.nav.anims = []
        effects: list[dict] = []
        if until is None:
            if a["type"] == "click":        # (the commonest action: _act's first step, inlined)
                self._click(a["x"], a["y"], effects)
            else:
                self._act(a, effects, None, None)
            cut = False
        else:
            runs = [0]                      # presses that happened
            cut = self._act(a, effects, int(until), runs)
        if self.nav.timer is not None or self.nav.limits is not None:
            effects.extend(self.nav.tick(self.nav.clock))
        fb = Feedback(effects, self.nav.screen_name(), self.nav.clock)
        if until is not None:
            fb.cut = cut
            fb.presses = runs[0]
        return fb

    def _act(self, a: dict, effects: list, until: int | None, runs: list | None) -> bool:
        """The one path of a validated action: a batch's actions in order, each as its timed
        events (gui.expand), then the clock runs on to the end of the animations it started.
        With ``until``: events due at or after it are dropped and the clock stops there
        (returns True when that cut the action short). A click, and a drag or swipe without
        waypoints, whose events all come before the deadline take the same events without
        building their list (_click, _drag: the benchmarks' commonest actions)."""
        typ = a["type"]
        if typ == "batch":
            return any(self._act(sub, effects, until, runs) for sub in a["actions"])
        if typ == "click":
            if until is None or self.nav.clock + self.app.action_gap_ms + _CLICK_MS < until:
                self._click(a["x"], a["y"], effects)
                return self._settled(until, runs)
        elif (typ == "drag" or typ == "swipe") and "via" not in a:
            if until is None or self.nav.clock + self.app.action_gap_ms + a["ms"] < until:
                self._drag(a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"], effects)
                return self._settled(until, runs)
        return self._events(a, effects, until, runs)

    def _settled(self, until: int | None, runs: list | None) -> bool:
        """After a click or a drag (one press) that ended before the deadline: whether an
        animation it started ran into the deadline (the clock then stops there)."""
        if runs is not None:
            runs[0] += 1
        if until is not None and self.nav.clock > until:
            self.nav.clock = until
            return True
        return False

    def _click(self, px: float, py: float, effects: list) -> None:
        """One click at frame px (px, py): press, and release CLICK_MS later, in place."""
        start = self.nav.clock + self.app.action_gap_ms
        end = start + _CLICK_MS
        proj = self.app.proj
        if proj.is_3d:
            x, y = proj.from_px(px, py)
        else:
            x, y = (px - proj.ox) / proj.sx, (py - proj.oy) / proj.sy        # from_px in 2d
        out = self._down(x, y, start)
        if out:
            effects.extend(out)
        out = self._release(x, y, end)
        if out:
            effects.extend(out)
        an = self.nav.anims
        if an:
            b = an[0]["t1"] if len(an) == 1 else self.nav.busy_until()
            self.nav.clock = end if end >= b else b
        else:
            self.nav.clock = end

    def _drag(self, x0: float, y0: float, x1: float, y1: float, n: int, ms: int, effects: list) -> None:
        """A validated drag or swipe from (x0, y0) to (x1, y1) frame px in n steps over ms:
        the events of gui.expand (press, n moves along the segment, release at the end),
        without building the event list."""
        start = self.nav.clock + self.app.action_gap_ms
        from_px = self.app.proj.from_px
        x, y = from_px(x0, y0)
        out = self._down(x, y, start)
        if out:
            effects.extend(out)
        c = self.app.widgets.cur_ui
        xe, ye = from_px(x1, y1)             # the release's point (NaN off a 3d plane)
        if not (c is not None and c[0] is self.nav.session and c[1].pointer_up_only and not self.nav.complete
                and self.nav.screen["name"] == "level" and xe == xe and ye == ye):
            # (a game that acts on the release alone sees nothing of the moves: the pointer's
            # position they set is the release's, hit-tested again there; a release without
            # a position may leave things where the last move put them)
            dx, dy = x1 - x0, y1 - y0
            for i in range(1, n + 1):
                f = i / n
                x, y = from_px(x0 + dx * f, y0 + dy * f)
                out = self._move(x, y, start + round(ms * f))
                if out:
                    effects.extend(out)
        end = start + ms
        out = self._release(xe, ye, end)
        if out:
            effects.extend(out)
        b = self.nav.busy_until() if self.nav.anims else 0
        self.nav.clock = end if end >= b else b

    def _events(self, a: dict, effects: list, until: int | None, runs: list | None = None) -> bool:
        """The timed events of one non-batch action (gui.expand), then the clock runs on to the
        end of the animations it started. With ``until``: events due at or after it are dropped
        and the clock stops there (returns True when that cut the action short)."""
        start = self.nav.clock + self.app.action_gap_ms
        end = start
        from_px = self.app.proj.from_px
        for (dt, kind, px, py, key) in gui.expand(a):
            t = start + dt
            if until is not None and t >= until:
                self.nav.clock = max(self.nav.clock, until)
                return True
            end = t
            if kind is _DOWN and runs is not None:
                runs[0] += 1
            if kind is _WAIT:
                continue
            if kind is _KEY:
                effects.extend(self.nav.key_event(key, t))
                continue
            if kind is _WHEEL:
                continue          # no screen of the suite scrolls
            if px != px:          # release without a point: where the pointer is
                x, y = self.state.get("x", float("nan")), self.state.get("y", float("nan"))
            else:
                x, y = from_px(px, py)
            out = self._pointer(kind, x, y, t)
            if out:
                effects.extend(out)
        b = self.nav.busy_until() if self.nav.anims else 0
        self.nav.clock = end if end >= b else b
        if until is not None and self.nav.clock > until:        # the deadline fell in an animation
            self.nav.clock = until
            return True
        return False

    def _pointer(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        if kind == _DOWN:
            return self._down(x, y, t)
        if kind == _UP:
            return self._release(x, y, t)
        return self._move(x, y, t)

    def _move(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer MOVE to design (x, y)."""
        p = self.state
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked") or p["button"]:
            return []
        return self.nav.board_event(_MOVE, x, y, t)

    def _down(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer DOWN at design (x, y)."""
        p = self.state
        pre = None
        if p.get("down"):            # a second press without release: release where it is first
            pre = self._release(p["x"], p["y"], t)
        if self.nav.timer is not None or self.nav.limits is not None:       # the clock's own events come first
            due = self.nav.tick(t)
            if due:
                pre = (pre or []) + due
        an = self.nav.anims
        locked = bool(an) and t < (an[0]["t1"] if len(an) == 1 else self.nav.busy_until())
        wp = self.app.widgets
        lay = wp.current if wp.key is not None else None     # app.hit(x, y), inlined
        if lay is None:
            lay = self.nav.layout()
        h = wp.last_hit
        if h is not None and h[0] == x and h[1] == y and h[2] is lay:
            w = h[3]
        else:
            w = lay.hit(x, y)
            wp.last_hit = (x, y, lay, w)
        if w is None:
            target = None
            button = False
        else:
            target = w.id
            button = w.kind != "target"
        self.state = {"down": True, "x": x, "y": y, "x0": x, "y0": y, "t0": t,
                      "target": target, "button": button, "locked": locked}
        if locked:
            return (pre or []) + [{"effect": "ignored", "why": "input locked"}]
        if button:
            return pre or []
        out = self.nav.board_event(_DOWN, x, y, t)
        return pre + out if pre else out

    def _release(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer UP at design (x, y)."""
        p = self.state
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked"):
            self.state = {"down": False, "x": x, "y": y}
            return []
        if p["button"]:
            out: list[dict] = []
            w = self.nav.hit(x, y)
            if w is not None and w.id == p["target"]:
                out = self.nav.press_button(w.id, t)
        else:
            out = self.nav.board_event(_UP, x, y, t)
        if self.state is p:
            self.state = {"down": False, "x": x, "y": y}
        return out
