"""The Suite class: the app's settings (style, scale, viewport, frame size, direct launch,
catalogue), clone and snapshots, its input (validate once, run one way), composed of its
parts: Navigator (the app's state - screen, session, UI state, clock, timer, limits, failure,
toast, shake, animations - and navigation and moves; the Suite's attributes and methods of
those names delegate to it), ScreenWidgets, Pointer (the press state and the running of an
action's events), snapshots.py, intents.py."""

from __future__ import annotations

from typing import Any

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.geometry import Projection, projection
from longpuzzle.engine.geometry import Layout, Rect, Widget
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.session import Outcome
from longpuzzle.engine.suite.game_ui import Feedback, GameUI
from longpuzzle.engine.suite.intents import Board
from longpuzzle.engine.suite.navigator import Navigator
from longpuzzle.engine.suite.pointer import Pointer
from longpuzzle.engine.suite.screens import ScreenWidgets
from longpuzzle.engine.suite import snapshots

ACTION_GAP_MS = 250


class ScreenUnavailableError(LongPuzzleError):
    """A level of a game that has no screen (no GameUI) was asked for."""


def _state(name: str, doc: str) -> property:
    """A Suite attribute that is its Navigator's ``name`` (read and written there)."""
    return property(lambda self: getattr(self.nav, name), lambda self, v: setattr(self.nav, name, v), doc=doc)


class Suite:
    """The app. ``start`` is "home" or a level id; ``style``/``scale`` fix the frame the
    action coordinates refer to; ``direct`` is the benchmark's direct launch (no way back
    to the menus, completion card offers only "Replay"); ``lang`` the language its screens
    are drawn in ("en" or "zh": the same widgets, and so the same hit-testing, in each);
    ``catalog`` the levels its menus list and its level ids name (default: the built-in
    catalogue; clones share it)."""

    def __init__(self, start: str = "home", *, style: str = "2d", scale: float = 1.0, direct: bool = False,
                 action_gap_ms: int = ACTION_GAP_MS, viewport: tuple[int, int] | None = None, lang: str = "en",
                 catalog: Catalog | None = None):
        self.catalog: Catalog = catalog if catalog is not None else builtin_catalog()
        self.proj: Projection = projection(style, float(scale), viewport, lang)
        self.direct = bool(direct)
        self.action_gap_ms = int(action_gap_ms)
        # the app's state and the operations on it (navigation, moves, the clock's own events)
        self.nav = Navigator(self)
        # the input part: the pointer's press state, and an action's events on the clock
        self.input = Pointer(self)
        # the part that knows what each screen is made of (GameUIs, layouts, hit-testing)
        self.widgets = ScreenWidgets()
        # what the game's screen reads of the level (intents.py); its handlers get this
        self.board = Board(self)
        if start not in (None, "", "home"):
            eff = self.open_level(load_level(start, self.catalog).id)
            if eff["effect"] == "unavailable":
                raise ScreenUnavailableError(eff["message"] + " (its puzzle class has no `ui`)")

    # ---- the app's state (the Navigator part's) ------------------------------------------
    clock = _state("clock", "The virtual clock (ms).")
    screen = _state("screen", 'The screen on show: {"name": "home"}, {"name": "difficulty", "game"} '
                              'or {"name": "level", "level"}.')
    session = _state("session", "The Session of the level on screen, or None.")
    ui = _state("ui", "The game's screen's own per-play state (GameUI.initial_state's dict).")
    toast = _state("toast", "The toast showing ({text, t0, until}), or None.")
    shake = _state("shake", "The shake running ({target, t0, until}), or None.")
    anims = _state("anims", "The animations the last action started.")
    complete = _state("complete", "Whether the level on screen is won (its completion card shows).")
    timer = _state("timer", 'The level\'s next step on the clock ({"at": ms, "then": "next"}), or None.')
    limits = _state("limits", "The game's own failure limits on this level (game_limits.py), or None.")
    failed = _state("failed", "The reason the game's own limits ended the level with, or None.")
    game_limits_on = _state("game_limits_on", "Whether levels opened here run their game's own limits.")

    @property
    def level(self) -> Level | None:
        return self.nav.session.level if self.nav.session else None

    @property
    def puzzle(self):
        return self.nav.session.puzzle if self.nav.session else None

    def enable_game_limits(self) -> None:
        """Run the games' own failure limits in this (direct-launch) suite too, from now on:
        the level on screen starts them now."""
        self.nav.enable_game_limits()

    # ---- screens and navigation (the Navigator part's) ----------------------------------
    def game_ui(self, level: Level | None = None) -> GameUI | None:
        """The GameUI of ``level`` (default: the level on screen), or None (no screen)."""
        return self.nav.game_ui(level)

    def screen_name(self) -> str:
        return self.nav.screen_name()

    def home_cards(self) -> list[tuple[str, Rect]]:
        """(game id, its card) of the home screen (Navigator.home_cards)."""
        return self.nav.home_cards()

    def home_games(self) -> list[tuple[str, float]]:
        """(game id, its card's centre y) of the home screen (Navigator.home_games)."""
        return self.nav.home_games()

    def layout(self) -> Layout:
        """The widgets of the current screen (cached; rebuilt when the screen changes)."""
        return self.nav.layout()

    def last_level(self) -> bool:
        """Whether the level on screen is the last of its objective."""
        return self.nav.last_level()

    def hit(self, x: float, y: float) -> Widget | None:
        """The widget of the current screen under the design point."""
        return self.nav.hit(x, y)

    def open_level(self, level_id, t: int | None = None) -> dict:
        """Open a level (an id in the suite's catalogue, or a Level), at clock ``t`` (default: now)."""
        return self.nav.open_level(level_id, t)

    def open_game(self, game: str, t: int | None = None) -> dict:
        return self.nav.open_game(game, t)

    def go_home(self) -> dict:
        return self.nav.go_home()

    def play_moves(self, moves) -> None:
        """Set the level on screen up by playing moves (Navigator.play_moves)."""
        self.nav.play_moves(moves)

    def show_toast(self, text: str, t: int) -> None:
        self.nav.show_toast(text, t)

    def start_shake(self, target: str, t: int) -> None:
        self.nav.start_shake(target, t)

    def busy_until(self) -> int:
        return self.nav.busy_until()

    def try_move(self, action: int, t: int) -> Outcome:
        """Play one action through the session; record its animation; handle completion."""
        return self.nav.try_move(action, t)

    def gesture_begin(self) -> None:
        self.nav.gesture_begin()

    def gesture_end(self) -> None:
        self.nav.gesture_end()

    def fail(self, reason: str) -> None:
        """The game's own limits end the level: its failure card shows."""
        self.nav.fail(reason)

    def tick(self, t: int) -> list[dict]:
        """What the clock reaching ``t`` does on its own (Navigator.tick)."""
        return self.nav.tick(t)

    def key_event(self, name: str, t: int) -> list[dict]:
        return self.nav.key_event(name, t)

    def board_event(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        return self.nav.board_event(kind, x, y, t)

    def press_button(self, wid: str, t: int) -> list[dict]:
        return self.nav.press_button(wid, t)

    def move_effect(self, o: Outcome) -> dict:
        return self.nav.move_effect(o)

    # ---- input (pointer.py) ------------------------------------------------------------
    @property
    def pointer(self) -> dict:
        """The pointer's press state (the Pointer part's ``state``)."""
        return self.input.state

    def validate(self, action: Any) -> dict:
        """The one validation of a GUI action (gui.validate for this suite's frame): the action
        normalised, ready for ``run``. Raises gui.ActionError if malformed."""
        return gui.validate(action, self.proj.size)

    def dispatch(self, action: Any, until: int | None = None) -> Feedback:
        """Validate and run one GUI action (frame px): ``run(validate(action), until)``.
        Raises gui.ActionError if malformed."""
        return self.input.run(gui.validate(action, self.proj.size), until)

    def run(self, a: dict, until: int | None = None) -> Feedback:
        """Run one validated GUI action (what ``validate`` returned; it is not checked again):
        Pointer.run. ``until`` is a deadline on the virtual clock (ms): events due at or after
        it do not happen, the clock stops there, and the Feedback is marked ``cut`` (with the
        presses that did happen). An action that ends before it runs exactly as without it."""
        return self.input.run(a, until)

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
        if c.session is None or (c.session is not None and self.session is not None and c.level.id != self.level.id):
            return []
        s = c.session
        if len(s.log) < log0:
            return []
        return [int(a) for a in s.moves[n0:]]

    # ---- settings ----------------------------------------------------------------
    @property
    def style(self) -> str:
        return self.proj.style

    @property
    def scale(self) -> float:
        return self.proj.scale

    @property
    def viewport(self) -> tuple[int, int] | None:
        """The page the frame is letterboxed into (None: the frame is the game's own)."""
        return self.proj.viewport

    @property
    def lang(self) -> str:
        """The language of the screens' texts (it moves nothing on screen)."""
        return self.proj.lang

    @property
    def frame_size(self) -> tuple[int, int]:
        return self.proj.size

    # ---- snapshots (snapshots.py) ------------------------------------------------------
    def snapshot(self) -> str:
        """The exact app as JSON text (Suite.restore gives it back)."""
        return snapshots.snapshot(self)

    def snapshot_fields(self) -> dict:
        """The snapshot's body but its session and checksum (snapshots.snapshot_fields)."""
        return snapshots.snapshot_fields(self)

    @classmethod
    def restore(cls, text: str, catalog: Catalog | None = None) -> Suite:
        """The app a snapshot text holds, its level ids those of ``catalog`` (default: the
        built-in catalogue); CheckpointError if it is not one."""
        return snapshots.restore(cls, text, catalog)

    # ---- copies ------------------------------------------------------------------
    def clone(self) -> Suite:
        c = Suite.__new__(Suite)
        c.__dict__.update(self.__dict__)
        c.nav = self.nav.copy(c)
        c.input = self.input.copy(c)
        c.board = Board(c)
        c.widgets = self.widgets.copy()
        return c
