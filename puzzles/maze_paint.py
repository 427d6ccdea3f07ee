"""Maze Paint (``maze_paint``): swipe a ball that slides until the next cell is not floor,
painting every cell it crosses; paint every floor cell. RULES.md section 6.

Level vector ``lv`` (int32), for a board of R rows and C columns, cells numbered
``cell = r * C + c`` (row 0 at the top)::

    lv[0] = R, lv[1] = C, lv[2] = number of floor cells, lv[3] = start cell
    lv[4 + cell]                      1 if the cell is floor, 0 if wall/void
    lv[4 + R*C + 4*cell + d]          where the ball stops when swiped in direction d from
                                      cell (== cell when it cannot move); d: 0 U, 1 D, 2 L, 3 R

State ``s`` (int16, length 2 + R*C)::

    s[0] = ball cell, s[1] = number of painted cells, s[2 + cell] = 1 if painted

Actions 0..3 = U, D, L, R. A swipe that cannot move the ball is accepted and counted as a
move (code NOOP) but changes nothing; there is no undo.
"""

from __future__ import annotations

import sys

import numpy as np
from longpuzzle.engine.jit import njit

from longpuzzle.engine.fields import Fields, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.geometry import Circle, Rect, Widget
from longpuzzle.engine.protocol import BAD_ACTION, NOOP, OK, Level, Puzzle
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import Move
from longpuzzle.engine.suite.game_limits import MAZE_LIMITS

DIRECTIONS = "UDLR"
HEADER = 4
MAX_CELLS = 4096


@njit(cache=True)
def step_into(lv, src, dst, action):
    for i in range(src.shape[0]):
        dst[i] = src[i]
    if action < 0 or action > 3:
        return BAD_ACTION
    cols = lv[1]
    ncell = lv[0] * cols
    pos = int(src[0])
    dest = int(lv[HEADER + ncell + 4 * pos + action])
    if dest == pos:
        return NOOP
    if action == 0:
        stride = -cols
    elif action == 1:
        stride = cols
    elif action == 2:
        stride = -1
    else:
        stride = 1
    painted = int(src[1])
    cur = pos
    while cur != dest:
        cur += stride
        if dst[2 + cur] == 0:
            dst[2 + cur] = 1
            painted += 1
    dst[0] = dest
    dst[1] = painted
    return OK


@njit(cache=True)
def legal_into(lv, s, mask):
    ncell = lv[0] * lv[1]
    pos = int(s[0])
    count = 0
    for d in range(4):
        ok = lv[HEADER + ncell + 4 * pos + d] != pos
        mask[d] = 1 if ok else 0
        if ok:
            count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    return s[1] == lv[2]


@njit(cache=True)
def progress(lv, s):
    """P = (painted - 1) / (paintable - 1): the start cell does not count."""
    if lv[2] <= 1:
        return 1.0
    return (s[1] - 1) / (lv[2] - 1)


class MazePaint(Puzzle):
    id = "maze_paint"
    title = "Maze Paint"
    difficulties = ("easy", "medium", "hard")
    catalog_order = 5
    undo_allowed = False
    state_dtype = np.int16
    kernels = sys.modules[__name__]
    rejections = {}
    move_syntax = "one of U, D, L, R (swipe up, down, left, right)"

    def build_level(self, record, *, difficulty, number, where):
        fail = level_fail(self.id, difficulty, number, where)

        layout = record.get("layout")
        if not isinstance(layout, list) or not layout or not all(isinstance(r, str) for r in layout):
            raise fail("must be a non-empty list of row strings ('#' wall, '.' floor, 'S' start)", "layout")
        rows, cols = len(layout), len(layout[0])
        if cols == 0 or any(len(r) != cols for r in layout):
            raise fail("all rows must have the same, non-zero length", "layout")
        if rows * cols > MAX_CELLS:
            raise fail(f"the board has {rows * cols} cells, more than {MAX_CELLS}", "layout")
        floor = np.zeros(rows * cols, np.int32)
        starts = []
        for r, row in enumerate(layout):
            for c, ch in enumerate(row):
                if ch not in "#.S":
                    raise fail(f"unknown character {ch!r} at row {r}, column {c} (use '#', '.', 'S')",
                               f"layout[{r}]")
                floor[r * cols + c] = ch != "#"
                if ch == "S":
                    starts.append((r, c))
        if len(starts) > 1:
            raise fail(f"more than one start 'S' (at {starts})", "layout")
        start = record.get("start")
        if start is not None:
            if (not isinstance(start, list) or len(start) != 2
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in start)):
                raise fail("must be [row, column]", "start")
            if not (0 <= start[0] < rows and 0 <= start[1] < cols):
                raise fail(f"start {start} is outside the {rows} x {cols} board", "start")
            if not floor[start[0] * cols + start[1]]:
                raise fail(f"the start cell {start} is on a wall", "start")
            if starts and tuple(start) != starts[0]:
                raise fail(f"start {start} disagrees with the 'S' at {list(starts[0])}", "start")
            sr, sc = start
        elif starts:
            sr, sc = starts[0]
        else:
            raise fail("no start: mark one floor cell 'S' or give \"start\": [row, column]", "layout")
        opt = record.get("optimal_moves")
        if opt is not None and (not isinstance(opt, int) or isinstance(opt, bool) or opt < 0):
            raise fail("must be a non-negative integer", "optimal_moves")
        ncell = rows * cols
        table = np.zeros(4 * ncell, np.int32)
        steps = ((-1, 0), (1, 0), (0, -1), (0, 1))
        for cell in range(ncell):
            r0, c0 = divmod(cell, cols)
            for d, (dr, dc) in enumerate(steps):
                r, c = r0, c0
                while 0 <= r + dr < rows and 0 <= c + dc < cols and floor[(r + dr) * cols + c + dc]:
                    r, c = r + dr, c + dc
                table[4 * cell + d] = r * cols + c
        n_floor = int(floor.sum())
        s0 = sr * cols + sc
        lv = np.concatenate([np.array([rows, cols, n_floor, s0], np.int32), floor, table]).astype(np.int32)
        state = np.zeros(2 + ncell, np.int16)
        state[0], state[1], state[2 + s0] = s0, 1, 1
        extra = {"rows": rows, "cols": cols, "optimal_moves": opt}
        return Level(self.id, difficulty, number, lv, state, 4, record, extra, where,
                     Fields(record, fail).text("name", default=""))

    def state_bounds(self, level):
        """Ball: a floor cell; painted count: from the start's up to every floor cell; a paint
        flag stays 0 on walls and stays 1 once set (no undo: only restart clears paint)."""
        ncell = int(level.lv[0]) * int(level.lv[1])
        floor = np.asarray(level.lv[HEADER:HEADER + ncell])
        cells = np.flatnonzero(floor)
        init = level.initial
        low = np.zeros_like(init)
        high = np.zeros_like(init)
        low[0], high[0] = cells.min(), cells.max()
        low[1], high[1] = init[1], level.lv[2]
        low[2:] = init[2:]
        high[2:] = floor
        return low, high

    def format_move(self, level, action):
        return DIRECTIONS[action]

    def parse_move(self, level, text):
        t = text.upper()
        if len(t) != 1 or t not in DIRECTIONS:
            raise MoveSyntaxError(f"{text!r} is not a Maze Paint move; write {self.move_syntax}")
        return DIRECTIONS.index(t)

    def render_text(self, level, state):
        rows, cols = int(level.lv[0]), int(level.lv[1])
        out = []
        for r in range(rows):
            row = []
            for c in range(cols):
                cell = r * cols + c
                if cell == state[0]:
                    row.append("O")
                elif not level.lv[HEADER + cell]:
                    row.append("#")
                else:
                    row.append("+" if state[2 + cell] else ".")
            out.append(" ".join(row))
        painted, total = int(state[1]), int(level.lv[2])
        return "\n".join(out + [f"(O ball, + painted, . unpainted, # wall; {painted}/{total} painted)"])


# ---- screen: board geometry (design px) and the swipe state machine (RULES.md 6.1, 6.2) ----

SWIPE_THRESHOLD = 24          # design px
SWIPE_SURFACE = Rect.centred(270, 496, 464, 592)
CELL_MS = 85                  # slide animation per cell
NUDGE_MS = 120                # the small nudge of a swipe that cannot move the ball


class MazePaintUI(GameUI):
    """``cell = min(84, 432/cols, 560/rows)``, board centred at design (270, 496). A gesture
    is press ... release; it counts only if the press was inside the swipe surface (464 x 592
    centred at (270, 496)); the displacement is measured in DESIGN px (after inverting the
    projection): below 24 px on both axes it is ignored, otherwise the dominant axis gives the
    direction, ties going vertical. Taps do nothing. UI state: none."""
    pointer_up_only = True        # on_pointer acts on the release alone

    exit_to = "difficulty"
    instructions = "Swipe to roll the ball. It paints every tile it passes - paint them all!"
    complete_title = "Complete!"
    complete_text = "Every tile is painted"
    header_y = 90
    limits = MAZE_LIMITS          # the game's own failure limits on the hub (RULES.md 6.3)

    def painted(self, state) -> int:
        return int(state[1])

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        self.rows, self.cols = int(level.lv[0]), int(level.lv[1])
        self.cell = min(84.0, 432.0 / self.cols, 560.0 / self.rows)
        self._targets = [Widget("surface", SWIPE_SURFACE, "target")]

    def cell_center(self, cell: int) -> tuple[float, float]:
        r, c = divmod(int(cell), self.cols)
        return (270 + (c - (self.cols - 1) / 2) * self.cell, 496 + (r - (self.rows - 1) / 2) * self.cell)

    def cell_rect(self, cell: int) -> Rect:
        x, y = self.cell_center(cell)
        return Rect.centred(x, y, self.cell, self.cell)

    def buttons(self, direct):
        ws = [Widget("restart", Circle(490, 90, 30), "round_button", "Restart")]
        if not direct:
            ws.append(Widget("menu", Circle(50, 90, 24), "round_button", "Back"))
        return ws

    def targets(self):
        return self._targets

    def on_pointer(self, board, kind, x, y, t):
        p = board.pointer
        if kind != "up" or p.get("target") != "surface":
            return []
        dx, dy = x - p["x0"], y - p["y0"]
        if not (dx == dx and dy == dy) or max(abs(dx), abs(dy)) < SWIPE_THRESHOLD:
            return []
        if abs(dx) > abs(dy):
            d = 3 if dx > 0 else 2
        else:
            d = 1 if dy > 0 else 0
        return [Move(d)]

    def animation_ms(self, before, after, action, code):
        if code == NOOP:
            return NUDGE_MS
        r0, c0 = divmod(int(before[0]), self.cols)
        r1, c1 = divmod(int(after[0]), self.cols)
        return CELL_MS * (abs(r1 - r0) + abs(c1 - c0))

    def gesture_for(self, action, proj, suite=None):
        ball = int(suite.session.state[0]) if suite is not None and suite.session else int(self.level.initial[0])
        x0, y0 = self.cell_center(ball)
        dx, dy = ((0, -1), (0, 1), (-1, 0), (1, 0))[int(action)]
        x1, y1 = x0 + 90 * dx, y0 + 90 * dy
        (a, b), (c, d) = proj.to_px(x0, y0), proj.to_px(x1, y1)
        w, h = proj.size
        return {"type": "swipe", "x0": round(a), "y0": round(b),
                "x1": min(max(round(c), 0), w - 1), "y1": min(max(round(d), 0), h - 1)}


MazePaint.ui = MazePaintUI


PUZZLE = MazePaint()
