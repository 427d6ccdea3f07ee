"""The suite's input path: PointerMixin validates one GUI action once (validate: gui.validate)
and runs it (run) one way, as pointer and key events in design px on the virtual clock
(_act: a batch's actions in order, each one's events by _events, or by _click / _drag, which
make a click's or a drag's events without listing them), sends them to the screen's buttons
(_button) or to the game's screen, whose intents it applies (intents.apply), and maps moves to
gestures and back (gesture_for, gesture_run, interpret)."""

from __future__ import annotations

from typing import Any

from longpuzzle.engine import gui
from longpuzzle.engine.errors import UndoNotAllowedError
from longpuzzle.engine.suite import game_limits
from longpuzzle.engine.suite.game_ui import Feedback, GameUI
from longpuzzle.engine.suite.intents import apply

_DOWN, _MOVE, _UP, _KEY, _WHEEL, _WAIT, _CLICK_MS = gui.DOWN, gui.MOVE, gui.UP, gui.KEY, gui.WHEEL, gui.WAIT, gui.CLICK_MS


class PointerMixin:
    """The input path of a Suite (app.py; the screens are ScreensMixin's)."""

    # ---- dispatch --------------------------------------------------------------------
    def validate(self, action: Any) -> dict:
        """The one validation of a GUI action (gui.validate for this suite's frame): the action
        normalised, ready for ``run``. Raises gui.ActionError if malformed."""
        return gui.validate(action, self.proj.size)

    def dispatch(self, action: Any, until: int | None = None) -> Feedback:
        """Validate and run one GUI action (frame px): ``run(validate(action), until)``.
        Raises gui.ActionError if malformed."""
        return self.run(gui.validate(action, self.proj.size), until)

    def run(self, a: dict, until: int | None = None) -> Feedback:
        """Run one validated GUI action (what ``validate`` returned; it is not checked again).

        ``until`` is a deadline on the virtual clock (ms): events due at or after it do not
        happen, the clock stops there, and the Feedback is marked ``cut`` (with the presses
        that did happen). An action that ends before it runs exactly as without it."""
        if self.anims:
            self.anims = []
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
        if self.timer is not None or self.limits is not None:
            effects.extend(self.tick(self.clock))
        fb = Feedback(effects, self.screen_name(), self.clock)
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
            for sub in a["actions"]:
                if self._act(sub, effects, until, runs):
                    return True
            return False
        if typ == "click":
            if until is None or self.clock + self.action_gap_ms + _CLICK_MS < until:
                self._click(a["x"], a["y"], effects)
                return self._settled(until, runs)
        elif (typ == "drag" or typ == "swipe") and "via" not in a:
            if until is None or self.clock + self.action_gap_ms + a["ms"] < until:
                self._drag(a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"], effects)
                return self._settled(until, runs)
        return self._events(a, effects, until, runs)

    def _settled(self, until: int | None, runs: list | None) -> bool:
        """After a click or a drag (one press) that ended before the deadline: whether an
        animation it started ran into the deadline (the clock then stops there)."""
        if runs is not None:
            runs[0] += 1
        if until is not None and self.clock > until:
            self.clock = until
            return True
        return False

    def _click(self, px: float, py: float, effects: list) -> None:
        """One click at frame px (px, py): press, and release CLICK_MS later, in place."""
        start = self.clock + self.action_gap_ms
        end = start + _CLICK_MS
        proj = self.proj
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
        an = self.anims
        if an:
            b = an[0]["t1"] if len(an) == 1 else self.busy_until()
            self.clock = end if end >= b else b
        else:
            self.clock = end

    def _drag(self, x0: float, y0: float, x1: float, y1: float, n: int, ms: int, effects: list) -> None:
        """A validated drag or swipe from (x0, y0) to (x1, y1) frame px in n steps over ms:
        the events of gui.expand (press, n moves along the segment, release at the end),
        without building the event list."""
        start = self.clock + self.action_gap_ms
        from_px = self.proj.from_px
        x, y = from_px(x0, y0)
        out = self._down(x, y, start)
        if out:
            effects.extend(out)
        c = self.widgets.cur_ui
        xe, ye = from_px(x1, y1)             # the release's point (NaN off a 3d plane)
        if not (c is not None and c[0] is self.session and c[1].pointer_up_only and not self.complete
                and self.screen["name"] == "level" and xe == xe and ye == ye):
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
        b = self.busy_until() if self.anims else 0
        self.clock = end if end >= b else b

    def _events(self, a: dict, effects: list, until: int | None, runs: list | None = None) -> bool:
        """The timed events of one non-batch action (gui.expand), then the clock runs on to the
        end of the animations it started. With ``until``: events due at or after it are dropped
        and the clock stops there (returns True when that cut the action short)."""
        start = self.clock + self.action_gap_ms
        end = start
        from_px = self.proj.from_px
        for (dt, kind, px, py, key) in gui.expand(a):
            t = start + dt
            if until is not None and t >= until:
                self.clock = max(self.clock, until)
                return True
            end = t
            if kind is _DOWN and runs is not None:
                runs[0] += 1
            if kind is _WAIT:
                continue
            if kind is _KEY:
                effects.extend(self._key(key, t))
                continue
            if kind is _WHEEL:
                continue          # no screen of the suite scrolls
            if px != px:          # release without a point: where the pointer is
                x, y = self.pointer.get("x", float("nan")), self.pointer.get("y", float("nan"))
            else:
                x, y = from_px(px, py)
            out = self._pointer(kind, x, y, t)
            if out:
                effects.extend(out)
        b = self.busy_until() if self.anims else 0
        self.clock = end if end >= b else b
        if until is not None and self.clock > until:        # the deadline fell in an animation
            self.clock = until
            return True
        return False

    def _key(self, name: str, t: int) -> list[dict]:
        pre = self.tick(t) if self.timer is not None or self.limits is not None else []
        if self.screen["name"] == "level" and not self.complete and not self.failed and t >= self.busy_until():
            return pre + apply(self, self.game_ui().on_key(self.board, name, t), t)
        return pre

    def _pointer(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        if kind == _DOWN:
            return self._down(x, y, t)
        if kind == _UP:
            return self._release(x, y, t)
        return self._move(x, y, t)

    def _move(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer MOVE to design (x, y)."""
        p = self.pointer
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked") or p["button"]:
            return []
        return self._board(_MOVE, x, y, t)

    def _down(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer DOWN at design (x, y)."""
        p = self.pointer
        pre = None
        if p.get("down"):            # a second press without release: release where it is first
            pre = self._release(p["x"], p["y"], t)
        if self.timer is not None or self.limits is not None:       # the clock's own events come first
            due = self.tick(t)
            if due:
                pre = (pre or []) + due
        an = self.anims
        locked = bool(an) and t < (an[0]["t1"] if len(an) == 1 else self.busy_until())
        wp = self.widgets
        lay = wp.current if wp.key is not None else None     # self.hit(x, y), inlined
        if lay is None:
            lay = self.layout()
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
        self.pointer = {"down": True, "x": x, "y": y, "x0": x, "y0": y, "t0": t,
                        "target": target, "button": button, "locked": locked}
        if locked:
            return (pre or []) + [{"effect": "ignored", "why": "input locked"}]
        if button or self.complete or self.failed or self.screen["name"] != "level":
            return pre or []
        c = wp.cur_ui                      # the board (as _board)
        u = c[1] if c is not None and c[0] is self.session else wp.game_ui(self.session)
        out = apply(self, u.on_pointer(self.board, _DOWN, x, y, t), t)
        return pre + out if pre else out

    def _release(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer UP at design (x, y)."""
        p = self.pointer
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked"):
            self.pointer = {"down": False, "x": x, "y": y}
            return []
        if p["button"]:
            out: list[dict] = []
            w = self.hit(x, y)
            if w is not None and w.id == p["target"]:
                out = self._button(w.id, t)
        elif self.complete or self.failed or self.screen["name"] != "level":
            out = []
        else:
            c = self.widgets.cur_ui        # the board (as _board)
            u = c[1] if c is not None and c[0] is self.session else self.game_ui()
            out = apply(self, u.on_pointer(self.board, _UP, x, y, t), t)
        if self.pointer is p:
            self.pointer = {"down": False, "x": x, "y": y}
        return out

    def _board(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        if self.complete or self.failed or self.screen["name"] != "level":
            return []
        c = self.widgets.cur_ui
        u = c[1] if c is not None and c[0] is self.session else self.game_ui()
        return apply(self, u.on_pointer(self.board, kind, x, y, t), t)

    def _button(self, wid: str, t: int) -> list[dict]:
        name = self.screen["name"]
        if name == "home":
            return [self.open_game(wid.split(":", 1)[1], t)]
        if name == "difficulty":
            if wid == "back":
                return [self.go_home()]
            d = wid.split(":", 1)[1]
            obj = self.catalog.objective(f"{self.screen['game']}/{d}")
            return [self.open_level(obj.level_ids[0], t)]
        u = self.game_ui()
        lvl = self.level
        if wid == "replay":        # the Level itself: its id may name another level in the suite's catalogue
            return [self.open_level(lvl, t), {"effect": "restart"}]
        if wid == "next":
            ids = self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids
            i = ids.index(lvl.id)
            if i + 1 < len(ids):
                return [self.open_level(ids[i + 1], t)]
            return [self._exit(u)]
        if wid == "menu":
            return [self._exit(u)]
        if wid == "restart":
            self.session.restart()
            self.ui = u.initial_state()
            self.shake = self.toast = None
            if self.limits is not None:         # the original reloads the level: its limits start again
                self.limits = game_limits.start(t, u.limits, self.session._state)
                self.failed = None
                self.widgets.stale()
            return [{"effect": "restart"}]
        if wid == "undo":
            try:
                self.session.undo()
            except UndoNotAllowedError as e:
                return [{"effect": "refused", "reason": e.reason, "message": str(e)}]
            self.ui = u.initial_state()
            return [{"effect": "undo"}]
        return apply(self, u.on_button(self.board, wid, t), t)

    def _exit(self, u: GameUI) -> dict:
        g = self.level.game
        if u.exit_to == "difficulty" and len(self.catalog.objectives(g)) > 1:
            return self._go({"name": "difficulty", "game": g})
        return self.go_home()

    # ---- moves <-> gestures ------------------------------------------------------------
    def gesture_for(self, action: int) -> dict:
        return self.game_ui().gesture_for(int(action), self.proj, self)

    def gesture_run(self, actions) -> tuple[dict, int]:
        """One gesture for the first k of ``actions`` (GameUI.gesture_run): (gesture, k)."""
        return self.game_ui().gesture_run(list(actions), self.proj, self)

    def interpret(self, gui_action: Any) -> list[int]:
        """The moves (action ints) a GUI action would apply, without changing this suite."""
        c = self.clone()
        n0 = len(c.session.moves) if c.session else 0
        log0 = len(c.session.log) if c.session else 0
        c.dispatch(gui_action)
        if c.session is None or c.session is not None and self.session is not None and c.level.id != self.level.id:
            return []
        s = c.session
        if len(s.log) < log0:
            return []
        return [int(a) for a in s.moves[n0:]]
