"""The suite's navigation: the Navigator part of a Suite owns the app's state (the screen, the
session, the game's UI state, toast, shake, animations, the clock, the timer, the game's own
limits and failure) and the operations on it: navigation (open_level, open_game, go_home),
the helpers the intents use (show_toast, start_shake, busy_until, try_move, move_effect,
gesture_begin / gesture_end), the clock's own events (tick) and what input does on a screen
(key_event, board_event, press_button). The Suite reads and writes this state through
delegates of the same names; the Pointer part hands its events here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from longpuzzle.engine.catalog import Catalog, load_level
from longpuzzle.engine.errors import UndoNotAllowedError
from longpuzzle.engine.geometry import Layout, Rect, Widget
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle, home_order
from longpuzzle.engine.session import Outcome, Session
from longpuzzle.engine.suite import game_limits
from longpuzzle.engine.suite.game_ui import GameUI
from longpuzzle.engine.suite.intents import apply
from longpuzzle.engine.suite.screens import SHAKE_MS, TOAST_MS, ScreenWidgets, home_card_rects

if TYPE_CHECKING:
    from longpuzzle.engine.suite.app import Suite


class Navigator:
    """The navigation part of a Suite (``app``): it owns the app's state - the screen on show,
    the Session of the level being played, the game's UI state, the transient feedback (toast,
    shake), the animations of the last action, the virtual clock, the level's next step on the
    clock (``timer``), the game's own limits and the failure they ended the level with - and
    the operations on it: navigation, moves, the clock's own events, what a button, a board
    event or a key does. It reads the app's settings (catalogue, direct launch) and its other
    parts (``widgets``: what each screen is made of; ``input``: the pointer; ``board``)."""

    __slots__ = ("app", "clock", "screen", "session", "ui", "toast", "shake", "anims", "complete", "timer",
                 "limits", "failed", "game_limits_on")

    def __init__(self, app: Suite):
        self.app = app
        self.clock = 0
        self.screen: dict = {"name": "home"}
        self.session: Session | None = None
        self.ui: dict = {}
        self.toast: dict | None = None
        self.shake: dict | None = None
        self.anims: list[dict] = []
        self.complete = False
        # the level's next step on the clock: {"at": ms, "then": "next"} (an auto-advance), or None
        self.timer: dict | None = None
        # the game's own failure limits on this level (game_limits.py), or None; the reason of
        # the failure they ended it with, or None
        self.limits: dict | None = None
        self.failed: str | None = None
        # whether levels opened here run their game's own limits: on the hub always; in a
        # direct launch when asked (the level protocol, as the original's benchmark launch does)
        self.game_limits_on = not app.direct

    def copy(self, app: Suite) -> Navigator:
        """This part's state, copied exactly, for ``app`` (a clone of its app): nothing of it
        is shared but the Level (immutable) and the snapshot-free GameUIs."""
        c = Navigator.__new__(Navigator)
        c.app = app
        c.clock = self.clock
        c.screen = dict(self.screen)
        c.session = None if self.session is None else self.session.copy()
        c.ui = json.loads(json.dumps(self.ui))
        c.toast = dict(self.toast) if self.toast else None
        c.shake = dict(self.shake) if self.shake else None
        c.anims = [dict(a) for a in self.anims]
        c.complete = self.complete
        c.timer = dict(self.timer) if self.timer else None
        c.limits = None if self.limits is None else game_limits.copy(self.limits)
        c.failed = self.failed
        c.game_limits_on = self.game_limits_on
        return c

    # ---- the app's settings and other parts, as read here ---------------------------------
    @property
    def catalog(self) -> Catalog:
        return self.app.catalog

    @property
    def direct(self) -> bool:
        return self.app.direct

    @property
    def widgets(self) -> ScreenWidgets:
        return self.app.widgets

    def enable_game_limits(self) -> None:
        """Run the games' own failure limits (in a direct launch) too, from now on: the level
        on screen starts them now."""
        self.game_limits_on = True
        u = self.game_ui()
        if u is not None and u.limits is not None and self.limits is None:
            self.limits = game_limits.start(self.clock, u.limits, self.session.state)

    # ---- screens -------------------------------------------------------------------
    @property
    def level(self) -> Level | None:
        return self.session.level if self.session else None

    @property
    def puzzle(self):
        return self.session.puzzle if self.session else None

    def game_ui(self, level: Level | None = None) -> GameUI | None:
        """The GameUI of ``level`` (default: the level on screen), or None (no screen)."""
        return self.widgets.game_ui(self.session, level)

    def screen_name(self) -> str:
        return self.widgets.screen_name(self)

    def home_cards(self) -> list[tuple[str, Rect]]:
        """(game id, its card) of the home screen: the games of the catalogue with a declared
        home slot in slot order (registry.home_order), then the others; each in its slot's
        card of home_card_rects (a game keeps its slot when the catalogue lacks another)."""
        have = self.catalog.games()
        home = home_order()
        extra = [g for g in have if g not in home]
        slots = [(g, home.index(g)) for g in home if g in have] + [(g, len(home) + i) for i, g in enumerate(extra)]
        if not slots:
            return []
        rects = home_card_rects(max(i for _, i in slots) + 1)
        return [(g, rects[i]) for g, i in slots]

    def home_games(self) -> list[tuple[str, float]]:
        """(game id, its card's centre y) of the home screen (home_cards; the cards' centre x
        is 270 while they fit in one column)."""
        return [(g, r.center[1]) for g, r in self.home_cards()]

    def layout(self) -> Layout:
        """The widgets of the current screen (cached; rebuilt when the screen changes)."""
        return self.widgets.layout(self)

    def last_level(self) -> bool:
        """Whether the level on screen is the last of its objective (its card says "All
        complete!" and offers the menu instead of a next level)."""
        lvl = self.level
        return lvl is not None and self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids[-1] == lvl.id

    def hit(self, x: float, y: float) -> Widget | None:
        """The widget of the current screen under the design point."""
        return self.widgets.hit(self, x, y)

    def _go(self, screen: dict) -> dict:
        self.screen = screen
        self.app.input.lift()
        self.toast = self.shake = None
        self.complete = False
        self.timer = None
        self.failed = None
        self.widgets.stale()
        if screen["name"] != "level":
            self.session = None
            self.ui = {}
            self.anims = []            # animations belong to the level that is no longer shown
            self.limits = None
        return {"effect": "navigate", "screen": self.screen_name()}

    def open_level(self, level_id, t: int | None = None) -> dict:
        """Open a level (an id in the suite's catalogue, or a Level), at clock ``t`` (default: now)."""
        level = load_level(level_id, self.catalog)
        u = self.game_ui(level)
        if u is None:
            return {"effect": "unavailable", "game": level.game,
                    "message": f"{get_puzzle(level.game).title} has no screen yet"}
        self.session = Session(level)
        self.ui = u.initial_state()
        self.anims = []
        self.limits = game_limits.start(self.clock if t is None else t, u.limits, self.session._state) \
            if u.limits is not None and self.game_limits_on else None
        return self._go({"name": "level", "level": level.id})

    def open_game(self, game: str, t: int | None = None) -> dict:
        objs = self.catalog.objectives(game)
        if len(objs) == 1:
            return self.open_level(objs[0].level_ids[0], t)
        return self._go({"name": "difficulty", "game": game})

    def go_home(self) -> dict:
        return self._go({"name": "home"})

    def play_moves(self, moves) -> None:
        """Set the level on screen up by playing moves (texts or action ints) through its rules,
        as ``Session.play`` does (an illegal one raises IllegalMoveError), with no animation or
        time: the screen shows the board after them (the completion card when they win it)."""
        for m in moves:
            self.session.play(m)
        self.complete = self.session.solved
        self.widgets.stale()

    # ---- helpers used by the game UIs --------------------------------------------------
    def show_toast(self, text: str, t: int) -> None:
        self.toast = {"text": text, "t0": t, "until": t + TOAST_MS}

    def start_shake(self, target: str, t: int) -> None:
        self.shake = {"target": target, "t0": t, "until": t + SHAKE_MS}

    def busy_until(self) -> int:
        an = self.anims
        if not an:
            return 0
        if len(an) == 1:
            return an[0]["t1"]
        return max(a["t1"] for a in an)

    def try_move(self, action: int, t: int) -> Outcome:
        """Play one action through the session; record its animation; handle completion."""
        s = self.session
        before = s._state          # Session replaces (never mutates) its state array on a move
        if type(action) is not int or not 0 <= action < s.level.n_actions:
            action = s.puzzle.check_action(s.level, action)
        o, solved = s._apply_solved(action)
        if o[3]:                   # accepted
            c = self.widgets.cur_ui
            u = c[1] if c is not None and c[0] is s else self.game_ui()
            code = o[2]
            dur = int(u.animation_ms(before, s._state, action, code))
            self.anims.append({"kind": "move", "t0": t, "t1": t + dur, "action": action, "code": code,
                               "before": before})        # numpy here; a list in snapshots
            if solved:
                self.complete = True
                self.widgets.stale()
                if u.auto_advance_ms and not self.direct and not self.last_level():
                    self.timer = {"at": t + dur + int(u.auto_advance_ms), "then": "next"}
            elif self.limits is not None and u.limits.per == "move":     # the game's own limits (on the hub)
                why = game_limits.record(self.limits, u.limits, action, before, s._state,
                                         u.painted(s._state) - u.painted(before), t + dur)
                if why is not None:
                    self.fail(why)
        return o

    def gesture_begin(self) -> None:
        """A game whose limits count gestures (Color Connect) begins one: the state before it."""
        lim = self.limits
        if lim is not None and lim.get("open", 0) is None and not self.failed:
            st = self.session._state
            lim["open"] = [game_limits.digest(st), self.game_ui().painted(st)]

    def gesture_end(self) -> None:
        """... and ends the gesture held open (its record may end the level)."""
        lim = self.limits
        if lim is None or not lim.get("open"):
            return
        u, st = self.game_ui(), self.session._state
        why = game_limits.gesture(lim, u.limits, st, u.painted(st))
        if why is not None and not self.complete:
            self.fail(why)

    def fail(self, reason: str) -> None:
        """The game's own limits end the level: its failure card shows; the board takes no input."""
        self.failed = reason
        self.toast = self.shake = None
        self.widgets.stale()

    def tick(self, t: int) -> list[dict]:
        """What the clock reaching ``t`` does on its own: an auto-advance due, the game's time
        limit. Called before each event at t and at the end of each action (effect dicts)."""
        out: list[dict] = []
        tm = self.timer
        if tm is not None and t >= tm["at"]:
            self.timer = None
            lvl = self.level
            ids = self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids
            i = ids.index(lvl.id)
            if i + 1 < len(ids):
                out.append({**self.open_level(ids[i + 1], tm["at"]), "auto": True})
        lim = self.limits
        if lim is not None and not self.failed and not self.complete and t - lim["t0"] >= self.game_ui().limits.timeout_ms:
            self.fail("timeout")
            out.append({"effect": "failed", "reason": "timeout"})
        return out

    # ---- input on the screens (the Pointer part's events land here) -------------------------
    def key_event(self, name: str, t: int) -> list[dict]:
        """A key pressed at t (the clock's own events due by then first): to the game's screen."""
        pre = self.tick(t) if self.timer is not None or self.limits is not None else []
        if self.screen["name"] == "level" and not self.complete and not self.failed and t >= self.busy_until():
            return pre + apply(self, self.game_ui().on_key(self.app.board, name, t), t)
        return pre

    def board_event(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        """A pointer event on the game's board (not on a button), design px: the intents its
        screen returns, applied (none off a level, or once it is won or failed)."""
        if self.complete or self.failed or self.screen["name"] != "level":
            return []
        c = self.widgets.cur_ui
        u = c[1] if c is not None and c[0] is self.session else self.game_ui()
        return apply(self, u.on_pointer(self.app.board, kind, x, y, t), t)

    def press_button(self, wid: str, t: int) -> list[dict]:
        """A click on the button ``wid`` of the screen (pressed and released on it) at t."""
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
        return apply(self, u.on_button(self.app.board, wid, t), t)

    def _exit(self, u: GameUI) -> dict:
        g = self.level.game
        if u.exit_to == "difficulty" and len(self.catalog.objectives(g)) > 1:
            return self._go({"name": "difficulty", "game": g})
        return self.go_home()

    def move_effect(self, o: Outcome) -> dict:
        if o.accepted:
            return {"effect": "move", "move": o.move, "accepted": True, "changed": o.changed}
        return {"effect": "rejected", "move": o.move, "reason": o.reason, "message": o.message}
