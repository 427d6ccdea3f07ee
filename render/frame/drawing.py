"""The games' drawings: GameDrawing (the base class of a game's drawing), drawings() (game
id -> the drawing class its declaration names) and level_key (what the renderer's caches
know a level by)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.engine.geometry import Projection
from longpuzzle.engine.registry import spec, specs
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame.buffer import Frame
from longpuzzle.render.frame.layers import Changes
from longpuzzle.render.frame.paint import ACCENT, BG_BOTTOM, BG_TOP, Painter


class GameDrawing:
    """Base class of a game's drawing class, which the game's declaration names
    (GameSpec.drawing; the built-in games': ``DRAWING`` of render/<game id>.py). One class
    draws the game in both styles (the painter's projection says which).

    One instance per (level, projection), built with the level's GameUI (the geometry the
    engine hit-tests with) - it may cache freely (patches, sprites). Class attributes
    ``background`` (top, bottom colours) and ``accent`` colour the menus and HUD.
      draw_static(p)   the board's fixed parts, once, into the static layer (supersampled
                       Painter in design px: rrect / circle / prism / text / poly / shadow;
                       in 3d give pieces a height, in 2d keep them flat)
      draw_dynamic(f, suite, state, t, anim, phase)   per frame: copy cached opaque patches
                       (f.put, made with draw_patch over f.static) and small sprites (f.blit,
                       draw_sprite) for what changes with the state and suite.ui / suite.shake
                       at virtual time t; when ``anim`` is given draw the in-between picture
                       at ``phase`` (anim["before"] is the state before anim["action"]).
    Generic parts (background, title, "Level N", difficulty, buttons, instruction text,
    hud_lines, toast, completion card) are drawn by the Renderer."""

    background = (BG_TOP, BG_BOTTOM)
    accent = ACCENT

    def __init__(self, ui, proj: Projection):
        self.ui = ui
        self.proj = proj

    def draw_static(self, p: Painter) -> None:
        """The board's fixed parts, drawn into the static layer (supersampled painter)."""

    def draw_dynamic(self, f: Frame, suite: Suite, state: np.ndarray, t: int, anim: dict | None,
                     phase: float) -> None:
        """The parts that change with the state / UI state. ``anim`` (a suite animation
        record with the state before the move) and ``phase`` in (0, 1) are given for
        intermediate frames; then ``state`` is the state after the move."""

    def base_layer(self, static: np.ndarray, suite: Suite, state: np.ndarray, t: int, anim: dict | None,
                   phase: float) -> np.ndarray | None:
        """Optionally, a full frame to start this frame from instead of ``static`` (e.g. the
        static layer with the board as it stands, kept up to date incrementally), so that
        draw_dynamic only adds what moves. Called just before draw_dynamic, same arguments.
        A base kept up to date in place records what each update changed in ``base_changes``
        (a Changes; None: frames copy all of it)."""
        return None

    base_changes: Changes | None = None
    # the level screen's HUD (difficulty label, instructions, buttons) may be drawn into the
    # game's cached base, under the level's own static drawing: no pixel of one touches the
    # other. False for a drawing whose static parts cover the HUD's place (then the HUD is
    # drawn over them for every level)
    hud_under = True


class _Drawings(Mapping):
    """game id -> drawing class, as the games declare them (GameSpec.drawing); a game's
    drawing module is imported when its class is first asked for."""

    def __getitem__(self, game: str) -> type:
        try:
            cls = spec(game).drawing_class()
        except UnknownGameError:
            raise KeyError(game) from None
        if not (isinstance(cls, type) and issubclass(cls, GameDrawing)):
            raise KeyError(game)
        return cls

    def __iter__(self):
        return (s.id for s in specs() if s.drawing is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_DRAWINGS = _Drawings()


def drawings() -> Mapping[str, type]:
    """game id -> drawing class, read from the games' declarations (lazily, per game)."""
    return _DRAWINGS


def level_key(level) -> tuple:
    """What the renderer's caches know a level by: its id AND its content digest, so a level
    replaced under the same id (an edited level file loaded in the same process) is drawn
    afresh instead of from the old level's cached drawing."""
    return (level.id, level.sha256)
