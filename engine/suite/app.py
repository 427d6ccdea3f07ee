"""The Suite class: the app's state (__init__), its settings (style, scale, viewport, frame
size), clone and snapshots, its input (validate once, run one way), composed of its parts
(ScreenWidgets, Pointer: the press state and the running of an action's events, snapshots.py,
intents.py) with the operations on its state (ScreensMixin: navigation and moves)."""

from __future__ import annotations

import json
from typing import Any

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.geometry import Projection, projection
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite import game_limits
from longpuzzle.engine.suite.game_ui import Feedback
from longpuzzle.engine.suite.intents import Board
from longpuzzle.engine.suite.pointer import Pointer
from longpuzzle.engine.suite.screens import ScreensMixin, ScreenWidgets
from longpuzzle.engine.suite import snapshots

ACTION_GAP_MS = 250


class ScreenUnavailableError(LongPuzzleError):
    """A level of a game that has no screen (no GameUI) was asked for."""


class Suite(ScreensMixin):
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
        self.clock = 0
        self.screen: dict = {"name": "home"}
        self.session: Session | None = None
        self.ui: dict = {}
        # the input part: the pointer's press state, and an action's events on the clock
        self.input = Pointer(self)
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
        self.game_limits_on = not self.direct
        # the part that knows what each screen is made of (GameUIs, layouts, hit-testing)
        self.widgets = ScreenWidgets()
        # what the game's screen reads of the level (intents.py); its handlers get this
        self.board = Board(self)
        if start not in (None, "", "home"):
            eff = self.open_level(load_level(start, self.catalog).id)
            if eff["effect"] == "unavailable":
                raise ScreenUnavailableError(eff["message"] + " (its puzzle class has no `ui`)")

    def enable_game_limits(self) -> None:
        """Run the games' own failure limits in this (direct-launch) suite too, from now on:
        the level on screen starts them now."""
        self.game_limits_on = True
        u = self.game_ui()
        if u is not None and u.limits is not None and self.limits is None:
            self.limits = game_limits.start(self.clock, u.limits, self.session.state)

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
        c.screen = dict(self.screen)
        c.ui = json.loads(json.dumps(self.ui))
        c.input = self.input.copy(c)
        c.toast = dict(self.toast) if self.toast else None
        c.shake = dict(self.shake) if self.shake else None
        c.anims = [dict(a) for a in self.anims]
        c.timer = dict(self.timer) if self.timer else None
        c.limits = None if self.limits is None else game_limits.copy(self.limits)
        c.board = Board(c)
        c.widgets = self.widgets.copy()
        if self.session is not None:
            c.session = self.session.copy()
        return c
