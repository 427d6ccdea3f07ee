"""The per-game side of the suite: GameUI, the base class of a game's screen (board
geometry and input state machine, subclassed in each game's module), Feedback (what one
dispatched action did) and the difficulty labels (difficulty_label)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from longpuzzle.engine.geometry import Projection, Widget
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite.intents import Board, Intents

if TYPE_CHECKING:
    from longpuzzle.engine.suite.app import Suite

DIFFICULTY_LABELS = {"easy": "Easy", "medium": "Medium", "hard": "Hard", "extreme": "Extreme",
                     "nightmare": "Nightmare", "default": "Play"}


def difficulty_label(d: str) -> str:
    return DIFFICULTY_LABELS.get(d, d.replace("_", " ").title())


class GameUI:
    """Base class of a game's screen: board geometry (design px) + input state machine.

    Adding a game's screen = two classes, nothing else changes:

    1. In the game's module (puzzles/<game>.py): ``class XxxUI(GameUI)`` and, after the
       Puzzle class, ``Xxx.ui = XxxUI``. One instance per level (``__init__(puzzle, level)``
       computes the geometry from ``level.lv`` / ``level.extra``); it holds NO mutable state:
       the per-play UI state is the JSON-able dict from ``initial_state()``, kept in
       ``suite.ui`` (snapshots capture it). Provide:
         buttons(direct)  HUD buttons as Widgets: ids "restart" / "undo" / "menu" get the
                          generic meaning (menu hidden when ``direct``); other ids go to
                          on_button (e.g. Truck Escape's item buttons -> a toast)
         targets()        board widgets (kind "target") - vehicles, trucks, anchors, cells,
                          or one "surface" - hit-tested topmost-last-drawn first; fixed
                          for the level (the suite builds each screen's layout once)
         on_pointer(board, kind, x, y, t)   kind "down" / "move" / "up", design px, at
                          clock t: ``board`` (intents.Board) is all the screen reads: the
                          rules state (read-only; board.at(i) one value), its own UI state, the press
                          (board.pointer: x0, y0, target id), board.hit(x, y); it never acts
                          on the suite: it produces intents (intents.py: Move, Reject, Refuse,
                          Select, Deselect, Toast, Shake, GestureBegin, GestureEnd), as a
                          generator (``outcome = yield Move(action)`` gives the move's Outcome)
                          or a list; the suite applies them in order and makes the effects
         on_key(board, name, t) / on_button(board, widget id, t): the same,
         hud_lines(session) (extra HUD text lines),
         animation_ms(before, after, action, code) (input locked meanwhile),
         gesture_for(action, proj, suite) -> a GUI action dict in integer px of ``proj``
                          that makes exactly that move from the idle UI state of
                          ``suite`` (tests check interpret(gesture_for(m)) == [m]);
                          optionally gesture_run(actions, proj, suite) -> (gesture, k): one
                          gesture for the first k moves, as a person would (Color Connect:
                          a whole route in one drag)
       and the class attributes exit_to, instructions, complete_title / complete_text,
       header_y (and optionally instructions_y, toast_y).
    2. A drawing module render/<game>.py (see longpuzzle.render.frame.drawing.GameDrawing).
    """

    exit_to = "difficulty"            # where the in-game back button goes: "difficulty" | "home"
    # True: what a drag's moves do, a release with a position does again from that position
    # alone (on_pointer acts on "up" alone, or, as Rush Hour's vehicle, follows the pointer
    # and settles where it is released): Pointer._drag, a whole drag whose release is on the
    # plane, does not send it the moves between press and release
    pointer_up_only = False
    instructions = ""                 # the game's short instruction text (drawn by render)
    complete_title = "Complete!"
    complete_text = ""
    header_y = 84                     # design y of the "Level N" header line
    # on the hub (not a direct launch) a won level that is not its objective's last goes on to
    # the next level by itself this many ms (virtual clock) after the card shows, and its card
    # has no buttons (Nut and Bolt: 1350, RULES.md 1.3); None: the card's Next / Replay
    auto_advance_ms: int | None = None
    # the game's own failure limits on the hub (engine/suite/game_limits.py; Maze Paint), with
    # ``painted(state)`` the count whose rise is progress; None: the game has none
    limits = None

    def painted(self, state) -> int:
        """What the game's limits count as progress (cells painted)."""
        raise NotImplementedError

    def __init__(self, puzzle, level: Level):
        self.puzzle = puzzle
        self.level = level

    # -- layout ----------------------------------------------------------------
    def buttons(self, direct: bool) -> list[Widget]:
        """HUD buttons (ids "restart", "undo", "menu" have their generic meaning; other ids
        are passed to on_button)."""
        return []

    def targets(self) -> list[Widget]:
        """Board widgets the pointer can hit (kind "target"; drawn by the game's renderer)."""
        return []

    def hud_lines(self, session: Session) -> list[str]:
        """Extra HUD text (e.g. pieces left)."""
        return []

    # -- input -----------------------------------------------------------------
    def initial_state(self) -> dict:
        return {}

    def check_ui(self, ui: Any) -> str:
        """Why ``ui`` (restored from a snapshot) is not a UI state this screen can continue
        from ("" when it is). The default: exactly the keys of initial_state(), each None or
        plain data; games whose UI state holds more override this (and call it first)."""
        if type(ui) is not dict:
            return f"the UI state is {type(ui).__name__}, not an object"
        keys = set(self.initial_state())
        if set(ui) != keys:
            return f"the UI state has keys {sorted(map(str, ui))[:8]}, expected {sorted(keys)}"
        return ""

    def on_pointer(self, board: Board, kind: str, x: float, y: float, t: int) -> Intents:
        """A pointer event on the board (not on a HUD button), design px. ``board.pointer``
        holds the press (``x0``, ``y0``, ``target``). The intents it makes (intents.py)."""
        return []

    def on_key(self, board: Board, name: str, t: int) -> Intents:
        return []

    def on_button(self, board: Board, wid: str, t: int) -> Intents:
        return []

    def animation_ms(self, before: np.ndarray, after: np.ndarray, action: int, code: int) -> int:
        """How long the move's animation runs (input is locked meanwhile)."""
        return 0

    def gesture_for(self, action: int, proj: Projection, suite: Suite | None = None) -> dict:
        """A GUI action (frame px of ``proj``) that makes this move from the idle UI state."""
        raise NotImplementedError

    def gesture_run(self, actions, proj: Projection, suite: Suite | None = None) -> tuple[dict, int]:
        """(gesture, k): ONE gesture that makes the first k >= 1 of ``actions`` in order from
        the idle UI state, as a person would (e.g. a whole Color Connect route in one drag).
        By default one gesture per move."""
        return self.gesture_for(int(actions[0]), proj, suite), 1


@dataclass(slots=True, init=False)
class Feedback:
    """What one dispatched action did. ``effects`` are dicts with an "effect" key:
    move (move, accepted, changed), rejected (move, reason, message), select / deselect
    (target), navigate (screen), restart, undo, refused (reason, message: a HUD button that
    cannot act), ignored (why: "input locked"), unavailable (game). Empty = nothing happened."""
    effects: list[dict] = field(default_factory=list)
    screen: str = ""
    clock: int = 0
    cut: bool = False            # a deadline (dispatch's ``until``) cut the action short
    presses: int = -1            # with a deadline: the pointer presses that happened

    def __init__(self, effects: list[dict] | None = None, screen: str = "", clock: int = 0):
        self.effects = [] if effects is None else effects      # (quicker than the generated one)
        self.screen = screen
        self.clock = clock
        self.cut = False
        self.presses = -1

    @property
    def kind(self) -> str:
        kinds = [e["effect"] for e in self.effects]
        for k in ("move", "rejected", "navigate", "restart", "undo", "select", "deselect", "refused", "ignored"):
            if k in kinds:
                return k
        return kinds[0] if kinds else "nothing"

    @property
    def moves(self) -> list[str]:
        return [e["move"] for e in self.effects if e["effect"] == "move"]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "effects": self.effects, "screen": self.screen, "clock": self.clock}
