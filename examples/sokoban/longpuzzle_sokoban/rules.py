"""Sokoban (``sokoban``): the rules. A warehouse keeper walks one square at a time and pushes
(never pulls) boxes; put every box on a goal square. Pushing a box into a corner that is not
a goal loses the level for good: the game has dead ends, and many of them are certifiable
(knowledge.py).

Text form of a level (the usual XSB characters, one string a row)::

    '#' wall      '-' or ' ' or '_' floor    '.' goal
    '$' box       '*' box on a goal          '@' keeper     '+' keeper on a goal

Squares the keeper cannot reach (ignoring boxes), e.g. outside the outer wall, are void:
they count as walls. Rows may be ragged (missing squares are void).

Level vector ``lv`` (int32), for a board of R rows and C columns, squares numbered
``cell = r * C + c`` (row 0 at the top)::

    lv[0] = R, lv[1] = C, lv[2] = N (boxes, == goals), lv[3] = the keeper's start cell
    lv[HEADER + cell]     0 wall or void, 1 floor, 2 goal

State ``s`` (int16, length 2 + R*C)::

    s[0] = the keeper's cell, s[1] = boxes on goals (0..N), s[2 + cell] = 1 if a box is there

Actions 0..3 = U, D, L, R: the keeper steps one square; a box there is pushed one square on
when the square behind it is free floor. Walking into a wall (code 3) or pushing a box into a
wall or another box (code 4) is rejected and changes nothing. Undo is allowed.
"""

from __future__ import annotations

import sys

import numpy as np

from longpuzzle.engine.errors import LevelFormatError, MoveSyntaxError
from longpuzzle.engine.jit import njit
from longpuzzle.engine.protocol import BAD_ACTION, FIRST_GAME_CODE, OK, Level, Puzzle, Rejection

DIRECTIONS = "UDLR"
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))     # (dr, dc) of actions 0..3
HEADER = 4
MAX_CELLS = 1024                                # cells fit the int16 state with room to spare
WALL, FLOOR, GOAL = 0, 1, 2                     # lv[HEADER + cell]
BUMP = FIRST_GAME_CODE                          # walking into a wall
BLOCKED = FIRST_GAME_CODE + 1                   # a box with a wall or a box behind it
FLOOR_CHARS = "-_ "


@njit(cache=True)
def _neighbour(lv, cell, action):
    """The cell next to ``cell`` in direction ``action``, -1 off the board."""
    cols = lv[1]
    r = cell // cols
    c = cell - r * cols
    if action == 0:
        r -= 1
    elif action == 1:
        r += 1
    elif action == 2:
        c -= 1
    else:
        c += 1
    if r < 0 or r >= lv[0] or c < 0 or c >= cols:
        return -1
    return r * cols + c


@njit(cache=True)
def step_into(lv, src, dst, action):
    for i in range(src.shape[0]):
        dst[i] = src[i]
    if action < 0 or action > 3:
        return BAD_ACTION
    nxt = _neighbour(lv, int(src[0]), action)
    if nxt < 0 or lv[HEADER + nxt] == 0:
        return BUMP
    if src[2 + nxt] != 0:
        beyond = _neighbour(lv, nxt, action)
        if beyond < 0 or lv[HEADER + beyond] == 0 or src[2 + beyond] != 0:
            return BLOCKED
        dst[2 + nxt] = 0
        dst[2 + beyond] = 1
        dst[1] = src[1] - (1 if lv[HEADER + nxt] == 2 else 0) + (1 if lv[HEADER + beyond] == 2 else 0)
    dst[0] = nxt
    return OK


@njit(cache=True)
def legal_into(lv, s, mask):
    count = 0
    for a in range(4):
        ok = False
        nxt = _neighbour(lv, int(s[0]), a)
        if nxt >= 0 and lv[HEADER + nxt] != 0:
            if s[2 + nxt] == 0:
                ok = True
            else:
                beyond = _neighbour(lv, nxt, a)
                ok = beyond >= 0 and lv[HEADER + beyond] != 0 and s[2 + beyond] == 0
        mask[a] = 1 if ok else 0
        if ok:
            count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    return s[1] == lv[2]


@njit(cache=True)
def progress(lv, s):
    """P = boxes on goals / boxes."""
    return s[1] / lv[2]


def parse_layout(layout, fail) -> tuple[int, int, np.ndarray, list[int], int]:
    """(R, C, kinds (R*C,) int32 of WALL/FLOOR/GOAL, box cells, keeper cell) of a text
    layout, void squares made walls; ``fail(message, field)`` makes the error to raise."""
    if not isinstance(layout, list) or not layout or not all(isinstance(r, str) for r in layout):
        raise fail("must be a non-empty list of row strings (XSB: '#' wall, '-' floor, '.' goal, "
                   "'$' box, '*' box on goal, '@' keeper, '+' keeper on goal)", "layout")
    rows, cols = len(layout), max(len(r) for r in layout)
    if cols == 0:
        raise fail("the rows are empty", "layout")
    if rows * cols > MAX_CELLS:
        raise fail(f"the board has {rows * cols} cells, more than {MAX_CELLS}", "layout")
    kinds = np.zeros(rows * cols, np.int32)
    boxes, keepers = [], []
    for r, row in enumerate(layout):
        for c, ch in enumerate(row):
            cell = r * cols + c
            if ch == "#":
                continue
            if ch not in FLOOR_CHARS + ".$*@+":
                raise fail(f"unknown character {ch!r} at row {r}, column {c}", f"layout[{r}]")
            kinds[cell] = GOAL if ch in ".*+" else FLOOR
            if ch in "$*":
                boxes.append(cell)
            if ch in "@+":
                keepers.append(cell)
    if len(keepers) != 1:
        raise fail(f"needs exactly one keeper ('@' or '+'), found {len(keepers)}", "layout")
    # the keeper's region (boxes ignored); anything else is void
    seen = np.zeros(rows * cols, bool)
    todo = [keepers[0]]
    seen[keepers[0]] = True
    while todo:
        cell = todo.pop()
        r0, c0 = divmod(cell, cols)
        for dr, dc in STEPS:
            r, c = r0 + dr, c0 + dc
            if 0 <= r < rows and 0 <= c < cols and kinds[r * cols + c] and not seen[r * cols + c]:
                seen[r * cols + c] = True
                todo.append(r * cols + c)
    outside = [divmod(int(x), cols) for x in np.flatnonzero((kinds == GOAL) & ~seen)]
    outside += [divmod(b, cols) for b in boxes if not seen[b]]
    if outside:
        raise fail(f"a box or goal the keeper can never reach, at (row, column) {outside[0]}", "layout")
    kinds[~seen] = WALL
    goals = int((kinds == GOAL).sum())
    if not boxes or len(boxes) != goals:
        raise fail(f"needs as many boxes as goals, at least one (found {len(boxes)} boxes, {goals} goals)", "layout")
    if all(kinds[b] == GOAL for b in boxes):
        raise fail("every box is already on a goal", "layout")
    return rows, cols, kinds, boxes, keepers[0]


class Sokoban(Puzzle):
    id = "sokoban"
    title = "Sokoban"
    difficulties = ("easy", "medium", "hard")
    catalog_order = 7
    undo_allowed = True
    state_dtype = np.int16
    kernels = sys.modules[__name__]
    rejections = {BUMP: Rejection("wall", "the keeper cannot walk into a wall"),
                  BLOCKED: Rejection("box_blocked", "the box cannot be pushed: a wall or another box is behind it")}
    move_syntax = "one of U, D, L, R (step up, down, left, right; a box ahead is pushed), or several in a row: URRD"
    dead_ends = True

    def build_level(self, record, *, difficulty, number, where):
        lid = f"{self.id}/{difficulty}/{number}"

        def fail(msg, field=""):
            return LevelFormatError(msg, file=where, level=lid, field=field)

        if not isinstance(record, dict):
            raise fail("a level record is an object")
        rows, cols, kinds, boxes, keeper = parse_layout(record.get("layout"), fail)
        name = record.get("name", "")
        if not isinstance(name, str):
            raise fail("must be text", "name")
        opt = record.get("optimal_moves")
        if opt is not None and (not isinstance(opt, int) or isinstance(opt, bool) or opt < 1):
            raise fail("must be a positive integer", "optimal_moves")
        lv = np.concatenate([np.array([rows, cols, len(boxes), keeper], np.int32), kinds]).astype(np.int32)
        state = np.zeros(2 + rows * cols, np.int16)
        state[0] = keeper
        state[1] = sum(int(kinds[b] == GOAL) for b in boxes)
        state[[2 + b for b in boxes]] = 1
        extra = {"rows": rows, "cols": cols, "optimal_moves": opt}
        return Level(self.id, difficulty, number, lv, state, 4, record, extra, where, name)

    def state_bounds(self, level):
        """Keeper: a floor cell; on goals: 0..N; a box flag: 0 on walls, 0..1 on floor."""
        ncell = int(level.lv[0]) * int(level.lv[1])
        floor = (np.asarray(level.lv[HEADER:HEADER + ncell]) != WALL).astype(level.initial.dtype)
        cells = np.flatnonzero(floor)
        low = np.zeros_like(level.initial)
        high = np.zeros_like(level.initial)
        low[0], high[0] = cells.min(), cells.max()
        high[1] = level.lv[2]
        high[2:] = floor
        return low, high

    def format_move(self, level, action):
        return DIRECTIONS[action]

    def parse_move(self, level, text):
        t = text.upper()
        if not t or any(ch not in DIRECTIONS for ch in t):
            raise MoveSyntaxError(f"{text!r} is not a Sokoban move; write {self.move_syntax}")
        return DIRECTIONS.index(t) if len(t) == 1 else [DIRECTIONS.index(ch) for ch in t]

    def render_text(self, level, state):
        rows, cols = int(level.lv[0]), int(level.lv[1])
        out = []
        for r in range(rows):
            row = []
            for c in range(cols):
                cell = r * cols + c
                kind = int(level.lv[HEADER + cell])
                if kind == WALL:
                    row.append("#")
                elif cell == state[0]:
                    row.append("+" if kind == GOAL else "@")
                elif state[2 + cell]:
                    row.append("*" if kind == GOAL else "$")
                else:
                    row.append("." if kind == GOAL else "-")
            out.append("".join(row))
        on, total = int(state[1]), int(level.lv[2])
        return "\n".join(out + [f"(@ keeper, $ box, . goal, * box on goal, # wall; {on}/{total} boxes on goals)"])

    def diagnostics(self, level, state):
        """Whether the state is a certified dead end (knowledge.py's certificate)."""
        from longpuzzle_sokoban.knowledge import certificate
        return {"dead_end": certificate(level, state) is not None}


def layout_of(level: Level, state: np.ndarray) -> list[str]:
    """The state as XSB rows (what a level record's layout holds)."""
    return Sokoban.render_text(None, level, state).split("\n")[:-1]
