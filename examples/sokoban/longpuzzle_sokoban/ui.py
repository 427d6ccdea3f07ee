"""Sokoban's screen: the board geometry (design px) and the input state machine.

One SokobanUI per level holds the geometry that BOTH the engine hit-tests with and the
drawing (drawing.py) draws with: ``cell_center`` / ``cell_rect`` / ``cell_at``. Input:

- a tap (press and release less than SWIPE_THRESHOLD apart) on a square next to the keeper
  steps there (pushing a box that stands there);
- a swipe anywhere on the board's surface steps once in its dominant direction (ties go
  vertical), as on a phone.

The surface is the board grown by one square on every side, so a tap just past the board's
edge still names a direction. The UI keeps no state of its own (initial_state() is {}).
"""

from __future__ import annotations

from longpuzzle.engine.geometry import Circle, Rect, Widget
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import Move

from longpuzzle_sokoban.rules import STEPS

SWIPE_THRESHOLD = 24          # design px
BOARD_CX, BOARD_CY = 270.0, 500.0
BOARD_W, BOARD_H = 500.0, 600.0
MAX_CELL = 64.0
STEP_MS = 110                 # the walk (and push) animation of one step


class SokobanUI(GameUI):
    pointer_up_only = True        # on_pointer acts on the release alone
    exit_to = "difficulty"
    instructions = "Push every box onto a goal. Tap a square next to the keeper, or swipe."
    complete_title = "Complete!"
    complete_text = "Every box is on a goal"
    header_y = 90

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        self.rows, self.cols = int(level.lv[0]), int(level.lv[1])
        self.cell = min(MAX_CELL, BOARD_W / (self.cols + 2), BOARD_H / (self.rows + 2))
        self.x0 = BOARD_CX - self.cols * self.cell / 2           # the board's top left corner
        self.y0 = BOARD_CY - self.rows * self.cell / 2
        self.surface = Rect(self.x0 - self.cell, self.y0 - self.cell,
                            self.x0 + (self.cols + 1) * self.cell, self.y0 + (self.rows + 1) * self.cell)
        self._targets = [Widget("surface", self.surface, "target")]

    # -- geometry (shared with drawing.py) ----------------------------------------
    def cell_center(self, cell: float | int, col: float | None = None) -> tuple[float, float]:
        """Centre of a cell (or of (row, col), fractional while a piece moves)."""
        r, c = divmod(int(cell), self.cols) if col is None else (cell, col)
        return self.x0 + (c + 0.5) * self.cell, self.y0 + (r + 0.5) * self.cell

    def cell_rect(self, cell: int) -> Rect:
        x, y = self.cell_center(cell)
        return Rect.centred(x, y, self.cell, self.cell)

    def cell_at(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the square under a design point (may lie off the board)."""
        return int((y - self.y0) // self.cell), int((x - self.x0) // self.cell)

    # -- layout --------------------------------------------------------------------
    def buttons(self, direct):
        ws = [Widget("restart", Circle(490, 90, 30), "round_button", "Restart"),
              Widget("undo", Circle(270, 880, 34), "round_button", "Undo")]
        if not direct:
            ws.append(Widget("menu", Circle(50, 90, 24), "round_button", "Back"))
        return ws

    def targets(self):
        return self._targets

    # -- input ---------------------------------------------------------------------
    def direction(self, keeper: int, x0: float, y0: float, x: float, y: float) -> int | None:
        """The action a press at (x0, y0) released at (x, y) stands for, or None."""
        dx, dy = x - x0, y - y0
        if not (dx == dx and dy == dy):          # NaN: no position
            return None
        if max(abs(dx), abs(dy)) >= SWIPE_THRESHOLD:
            if abs(dx) > abs(dy):
                return 3 if dx > 0 else 2
            return 1 if dy > 0 else 0
        r, c = self.cell_at(x, y)
        kr, kc = divmod(keeper, self.cols)
        step = (r - kr, c - kc)
        return STEPS.index(step) if step in STEPS else None

    def on_pointer(self, board, kind, x, y, t):
        """Intents of a pointer event (the suite applies them): one Move, or nothing."""
        p = board.pointer
        if kind != "up" or p.get("target") != "surface":
            return []
        d = self.direction(int(board.state[0]), p["x0"], p["y0"], x, y)
        return [] if d is None else [Move(d)]

    def animation_ms(self, before, after, action, code):
        return STEP_MS

    def gesture_for(self, action, proj, suite=None):
        """A tap on the square next to the keeper in the move's direction."""
        keeper = int(suite.session.state[0]) if suite is not None and suite.session else int(self.level.initial[0])
        kr, kc = divmod(keeper, self.cols)
        dr, dc = STEPS[int(action)]
        x, y = proj.to_px(*self.cell_center(kr + dr, kc + dc))
        return {"type": "click", "x": round(x), "y": round(y)}
