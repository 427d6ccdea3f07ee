"""The Suite class: the app's state (__init__), its settings (style, scale, viewport, frame
size), clone and snapshots, composed of its parts (ScreenWidgets, snapshots.py, intents.py)
with the operations on its state (ScreensMixin: navigation and moves; PointerMixin: input)."""

from __future__ import annotations

import json

from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.geometry import Projection, projection
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite import game_limits
from longpuzzle.engine.suite.intents import Board
from longpuzzle.engine.suite.pointer import PointerMixin
from longpuzzle.engine.suite.screens import ScreensMixin, ScreenWidgets
from longpuzzle.engine.suite import snapshots

ACTION_GAP_MS = 250


class ScreenUnavailableError(LongPuzzleError):
    """A level of a game that has no screen (no GameUI) was asked for."""


class Suite(ScreensMixin, PointerMixin):
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
        self.pointer: dict = {"down": False}
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
    def restore(cls, text: str, catalog: Catalog | None = None) -> "Suite":
        """The app a snapshot text holds, its level ids those of ``catalog`` (default: the
        built-in catalogue); CheckpointError if it is not one."""
        return snapshots.restore(cls, text, catalog)

    # ---- copies ------------------------------------------------------------------
    def clone(self) -> "Suite":
        c = Suite.__new__(Suite)
        c.__dict__.update(self.__dict__)
        c.screen = dict(self.screen)
        c.ui = json.loads(json.dumps(self.ui))
        c.pointer = dict(self.pointer)
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
