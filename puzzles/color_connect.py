"""Color Connect (``color_connect``): join every pair of same-coloured endpoints by a path of
grid cells; paths of different colours may not share cells. Filling the board is not
required. Rules: ../shared/reference/longpuzzlebench/RULES.md section 7 (and 9.10).

Board: R rows x C columns, cells numbered ``cell = r * C + c`` (row 0 at the top, 0-based).
K colour pairs, colours numbered k = 0 .. K-1 in level-file order.

Level vector ``lv`` (int32), N = R*C::

    lv[0] = R   lv[1] = C   lv[2] = K
    lv[3 + 2k + e]          endpoint e (0 or 1, file order) of colour k, as a cell number
    lv[3 + 2K + cell]       1 + colour of the endpoint on that cell, 0 if none

    e.g. K=2, N=4:  [R C K | k0e0 k0e1 k1e0 k1e1 | ep(cell0) ep(cell1) ep(cell2) ep(cell3)]

State ``s`` (int16, length 3 + K + 3N)::

    s[0]                    1 + colour of the ACTIVE (unfinished) path, 0 if there is none
    s[1]                    L = number of cells of the active path (0 if none)
    s[2]                    number of connected pairs
    s[3 + k]                length in cells of colour k's completed path, 0 if not connected
    s[3+K + cell]           owner: 1 + colour of the completed path covering the cell, else 0
    s[3+K+N + cell]         position of the cell along its completed path, counted from the
                            colour's endpoint 0 (so the state does not depend on which end the
                            path was drawn from); -1 for cells no completed path covers
    s[3+K+2N + i]           i-th cell of the active path from its start endpoint (i < L);
                            -1 for i >= L

    [act L done | len(k0) .. len(kK-1) | owner[0..N-1] | pos[0..N-1] | active[0..N-1]]

The active path never covers cells of completed paths nor other colours' endpoints, and
completed paths are only ever changed by an explicit remove action.

Actions (integers) and their text forms (no spaces; case-insensitive):

    0 .. N-1                step to cell: ``r,c`` (also ``step:r,c``). Extends the active path
                            by that cell, which must be a 4-neighbour of its tip; stepping
                            back onto the previous path cell pops the tip (backtrack);
                            reaching the own target endpoint completes the pair.
    N                       ``cancel``: drop the active path (any length)
    N+1 + 2k + e            ``start:<colour>@r,c``: start a path at endpoint e of colour k
                            (also ``start:r,c``); only with no active path, colour unconnected
    N+1 + 2K + k            ``remove:<colour>``: delete colour k's completed path; only with no
                            active path (in the game: pressing an endpoint of a connected colour)

Whole route (solvers, ``longpuzzle check``): ``<colour>:r,c-r,c-...`` stands for
``start:<colour>@<first cell>`` followed by one step per cell. As in the game's click input,
consecutive route cells may also lie further apart in one row or column: the gap is walked
cell by cell. Two consecutive route cells in neither the same row nor column give a single
step action that the rules reject (``not_adjacent``).

Rejections (each reported with its reason): ``no_active_path``, ``active_path_exists``,
``already_connected``, ``not_connected``, ``not_adjacent``, ``self_intersection``,
``other_color_endpoint``, ``completed_path``. Cells off the board are not actions at all: text
naming one is a MoveSyntaxError.

Progress P = connected pairs / K (an active partial path gives no credit); solved when P = 1.
"""

from __future__ import annotations

import math
import re
import sys

import numpy as np
from longpuzzle.engine.jit import njit

from longpuzzle.engine import gui
from longpuzzle.engine.fields import Fields, board_size, is_int, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.geometry import Circle, Rect, Widget
from longpuzzle.engine.protocol import BAD_ACTION, OK, Level, Puzzle, Rejection
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import GestureBegin, GestureEnd, Move, Refuse, Shake
from longpuzzle.engine.suite.game_limits import COLOR_LIMITS

(NO_ACTIVE_PATH, ACTIVE_PATH_EXISTS, ALREADY_CONNECTED, NOT_CONNECTED, NOT_ADJACENT,
 SELF_INTERSECTION, OTHER_ENDPOINT, COMPLETED_PATH) = range(3, 11)

# internal step kinds of _classify (negative so they never collide with result codes)
_POP, _PUSH, _COMPLETE = -1, -2, -3

# colour name -> (letter used by render_text, display colour); the reference game's palette
PALETTE = {
    "orange": ("O", "#ff8e00"), "green": ("G", "#00b418"), "blue": ("B", "#1c71ff"),
    "yellow": ("Y", "#fff900"), "purple": ("P", "#a44bab"), "coral": ("R", "#f15047"),
    "cyan": ("C", "#00efff"), "maroon": ("M", "#a6160f"), "mint": ("T", "#00ff7f"),
    "navy": ("N", "#002eb7"), "white": ("W", "#ffffff"), "pink": ("K", "#ff3696"),
    "olive": ("V", "#808100"), "gray": ("A", "#a0a0a0"), "magenta": ("F", "#ff6eff"),
}
MAX_SIDE = 32
MAX_COLORS = len(PALETTE)
LV_HEADER = 3
S_HEADER = 3


@njit(cache=True)
def _classify(lv, s, cell):
    """What stepping the active path onto ``cell`` does: _POP / _PUSH / _COMPLETE, or a
    rejection code (>= 3)."""
    cols = int(lv[1])
    k = int(lv[2])
    n = int(lv[0]) * cols
    act = int(s[0])
    if act == 0:
        return NO_ACTIVE_PATH
    length = int(s[1])
    base = S_HEADER + k + 2 * n
    tip = int(s[base + length - 1])
    dr = tip // cols - cell // cols
    dc = tip % cols - cell % cols
    if abs(dr) + abs(dc) != 1:
        return NOT_ADJACENT
    if length >= 2 and int(s[base + length - 2]) == cell:
        return _POP
    for i in range(length):
        if int(s[base + i]) == cell:
            return SELF_INTERSECTION
    ep = int(lv[LV_HEADER + 2 * k + cell])
    if ep != 0 and ep != act:
        return OTHER_ENDPOINT
    if int(s[S_HEADER + k + cell]) != 0:
        return COMPLETED_PATH
    if ep == act:
        return _COMPLETE       # the own endpoint not on the path is the target
    return _PUSH


@njit(cache=True)
def step_into(lv, src, dst, action):
    for i in range(src.shape[0]):
        dst[i] = src[i]
    k = int(lv[2])
    n = int(lv[0]) * int(lv[1])
    if action < 0 or action >= n + 1 + 3 * k:
        return BAD_ACTION
    a = int(action)
    owner = S_HEADER + k
    pos = owner + n
    base = pos + n
    act = int(src[0])
    length = int(src[1])
    if a < n:
        kind = _classify(lv, src, a)
        if kind >= 0:
            return kind
        if kind == _POP:
            dst[base + length - 1] = -1
            dst[1] = length - 1
        elif kind == _PUSH:
            dst[base + length] = a
            dst[1] = length + 1
        else:
            col = act - 1
            total = length + 1
            forward = int(src[base]) == int(lv[LV_HEADER + 2 * col])
            for i in range(length):
                c = int(src[base + i])
                dst[owner + c] = act
                dst[pos + c] = i if forward else total - 1 - i
                dst[base + i] = -1
            dst[owner + a] = act
            dst[pos + a] = length if forward else 0
            dst[S_HEADER + col] = total
            dst[2] = int(src[2]) + 1
            dst[0] = 0
            dst[1] = 0
        return OK
    if a == n:
        if act == 0:
            return NO_ACTIVE_PATH
        for i in range(length):
            dst[base + i] = -1
        dst[0] = 0
        dst[1] = 0
        return OK
    if act != 0:
        return ACTIVE_PATH_EXISTS
    j = a - n - 1
    if j < 2 * k:
        col = j // 2
        if int(src[S_HEADER + col]) != 0:
            return ALREADY_CONNECTED
        dst[0] = col + 1
        dst[1] = 1
        dst[base] = lv[LV_HEADER + j]
        return OK
    col = j - 2 * k
    if int(src[S_HEADER + col]) == 0:
        return NOT_CONNECTED
    for c in range(n):
        if int(src[owner + c]) == col + 1:
            dst[owner + c] = 0
            dst[pos + c] = -1
    dst[S_HEADER + col] = 0
    dst[2] = int(src[2]) - 1
    return OK


@njit(cache=True)
def legal_into(lv, s, mask):
    cols = int(lv[1])
    k = int(lv[2])
    n = int(lv[0]) * cols
    for i in range(mask.shape[0]):
        mask[i] = 0
    count = 0
    act = int(s[0])
    if act != 0:
        tip = int(s[S_HEADER + k + 2 * n + int(s[1]) - 1])
        r = tip // cols
        c = tip % cols
        for d in range(4):
            rr = r
            cc = c
            if d == 0:
                rr = r - 1
            elif d == 1:
                rr = r + 1
            elif d == 2:
                cc = c - 1
            else:
                cc = c + 1
            if rr < 0 or rr >= n // cols or cc < 0 or cc >= cols:
                continue
            cell = rr * cols + cc
            if _classify(lv, s, cell) < 0:
                mask[cell] = 1
                count += 1
        mask[n] = 1          # cancel
        return count + 1
    for col in range(k):
        if int(s[S_HEADER + col]) == 0:
            mask[n + 1 + 2 * col] = 1
            mask[n + 2 + 2 * col] = 1
            count += 2
        else:
            mask[n + 1 + 2 * k + col] = 1
            count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    return int(s[2]) == int(lv[2])


@njit(cache=True)
def progress(lv, s):
    """P = connected pairs / pairs."""
    return int(s[2]) / int(lv[2])


_CELL = r"(\d+),(\d+)"
_STEP_RE = re.compile(rf"^(?:step:)?{_CELL}$")
_START_RE = re.compile(rf"^start:(?:([a-z]+)@)?{_CELL}$")
_REMOVE_RE = re.compile(r"^remove:([a-z]+)$")
_ROUTE_RE = re.compile(rf"^([a-z]+):({_CELL}(?:-{_CELL})*)$")
_HEX_RE = re.compile(r"^#[0-9a-fA-F]{6}$")
_RESERVED = {"start", "step", "remove", "cancel"}



class ColorConnect(Puzzle):
    id = "color_connect"
    title = "Color Connect"
    difficulties = ("easy", "hard")
    catalog_order = 6
    undo_allowed = False
    state_dtype = np.int16
    kernels = sys.modules[__name__]
    rejections = {
        NO_ACTIVE_PATH: Rejection("no_active_path", "there is no active path; start one at an endpoint first"),
        ACTIVE_PATH_EXISTS: Rejection("active_path_exists",
                                      "a path is being drawn; finish or cancel it first"),
        ALREADY_CONNECTED: Rejection("already_connected",
                                     "that colour is already connected; remove its path to redraw it"),
        NOT_CONNECTED: Rejection("not_connected", "that colour has no completed path to remove"),
        NOT_ADJACENT: Rejection("not_adjacent", "the cell is not next to the tip of the active path"),
        SELF_INTERSECTION: Rejection("self_intersection", "the path would cross itself"),
        OTHER_ENDPOINT: Rejection("other_color_endpoint", "the path would enter another colour's endpoint"),
        COMPLETED_PATH: Rejection("completed_path", "the cell belongs to a completed path"),
    }
    move_syntax = ("route COLOR:r,c-r,c-... (0-based row,column; straight gaps are walked), or one "
                   "action: start:COLOR@r,c | r,c (step to a neighbour of the tip) | cancel | remove:COLOR")

    # ---- levels --------------------------------------------------------------
    def build_level(self, record, *, difficulty, number, where):
        fail = level_fail(self.id, difficulty, number, where)

        rows, cols = board_size(record, fail, 1, MAX_SIDE)
        if record.get("blocked_cells"):
            raise fail("blocked cells are not supported (every board is a full rectangle)", "blocked_cells")
        if record.get("require_full_coverage", False) is not False:
            raise fail("only false is supported (filling the board is never required)", "require_full_coverage")
        pairs = record.get("pairs")
        if not isinstance(pairs, list) or not 1 <= len(pairs) <= MAX_COLORS:
            raise fail(f"must be a list of 1..{MAX_COLORS} pairs", "pairs")
        n = rows * cols
        k = len(pairs)
        names: list[str] = []
        display: list[str] = []
        endpoints: list[tuple[tuple[int, int], tuple[int, int]]] = []
        at_cell: dict[int, str] = {}
        seen: dict[str, int] = {}
        for i, pair in enumerate(pairs):
            field = f"pairs[{i}]"
            if not isinstance(pair, dict):
                raise fail("each pair is an object {\"color\": ..., \"endpoints\": [[r, c], [r, c]]}", field)
            name = pair.get("color")
            if not isinstance(name, str) or name not in PALETTE:
                raise fail(f"unknown colour {name!r} (known: {', '.join(PALETTE)})", field + ".color")
            if name in seen:
                raise fail(f"colour {name!r} already has its two endpoints in pairs[{seen[name]}]; "
                           "a colour must have exactly 2 endpoints", field + ".color")
            seen[name] = i
            hexcol = pair.get("display_color", PALETTE[name][1])
            if not isinstance(hexcol, str) or not _HEX_RE.match(hexcol):
                raise fail("must be a colour '#rrggbb'", field + ".display_color")
            eps = pair.get("endpoints")
            if not isinstance(eps, list):
                raise fail("must be a list of two [row, col] cells", field + ".endpoints")
            if len(eps) != 2:
                raise fail(f"colour {name!r} has {len(eps)} endpoints; a colour needs exactly 2",
                           field + ".endpoints")
            cells = []
            for e, ep in enumerate(eps):
                efield = f"{field}.endpoints[{e}]"
                if not isinstance(ep, list) or len(ep) != 2 or not all(is_int(v) for v in ep):
                    raise fail("must be [row, col] (0-based integers)", efield)
                r, c = ep
                if not (0 <= r < rows and 0 <= c < cols):
                    raise fail(f"endpoint {ep} is off the {rows} x {cols} board", efield)
                cell = r * cols + c
                if cell in at_cell:
                    raise fail(f"two endpoints on cell {ep} ({at_cell[cell]} and {name})", efield)
                at_cell[cell] = name
                cells.append((r, c))
            names.append(name)
            display.append(hexcol)
            endpoints.append((cells[0], cells[1]))
        solution = record.get("solution")
        if solution is not None:
            if not isinstance(solution, list) or not all(isinstance(x, str) for x in solution):
                raise fail("must be a list of route texts 'color:r,c-r,c-...'", "solution")
            for i, route in enumerate(solution):
                m = _ROUTE_RE.match(route.strip().lower())
                if not m or m.group(1) not in names:
                    raise fail(f"{route!r} is not a route 'color:r,c-r,c-...' of a colour of this level",
                               f"solution[{i}]")
        lv = np.zeros(LV_HEADER + 2 * k + n, np.int32)
        lv[0], lv[1], lv[2] = rows, cols, k
        for ci, (a, b) in enumerate(endpoints):
            for e, (r, c) in enumerate((a, b)):
                lv[LV_HEADER + 2 * ci + e] = r * cols + c
                lv[LV_HEADER + 2 * k + r * cols + c] = ci + 1
        state = np.zeros(S_HEADER + k + 3 * n, np.int16)
        state[S_HEADER + k + n:] = -1
        extra = {
            "rows": rows, "cols": cols,
            "colors": names,
            "display_colors": display,
            "letters": [PALETTE[nm][0] for nm in names],
            "endpoints": endpoints,
            "solution": list(solution or []),
        }
        return Level(self.id, difficulty, number, lv, state, n + 1 + 3 * k, record, extra, where,
                     Fields(record, fail).text("name", default=""))

    def state_bounds(self, level):
        """Colours 0..K (0 = none), lengths and counts 0..N, path positions and active-path
        cells -1..N-1 (layout in the module docstring)."""
        rows, cols, k = (int(v) for v in level.lv[:3])
        n = rows * cols
        init = level.initial
        low = np.zeros_like(init)
        high = np.zeros_like(init)
        high[0], high[1], high[2] = k, n, k
        high[S_HEADER:S_HEADER + k] = n
        owner = S_HEADER + k
        high[owner:owner + n] = k
        low[owner + n:] = -1
        high[owner + n:] = n - 1
        return low, high

    # ---- move text -----------------------------------------------------------
    def format_move(self, level, action):
        rows, cols, k = (int(v) for v in level.lv[:3])
        n = rows * cols
        a = int(action)
        if 0 <= a < n:
            return f"{a // cols},{a % cols}"
        if a == n:
            return "cancel"
        j = a - n - 1
        names = level.extra["colors"]
        if 0 <= j < 2 * k:
            cell = int(level.lv[LV_HEADER + j])
            return f"start:{names[j // 2]}@{cell // cols},{cell % cols}"
        if 2 * k <= j < 3 * k:
            return f"remove:{names[j - 2 * k]}"
        raise MoveSyntaxError(f"action {action} is out of range 0..{level.n_actions - 1} for {level.id}")

    def _cell(self, level, text, r, c) -> int:
        rows, cols = int(level.lv[0]), int(level.lv[1])
        r, c = int(r), int(c)
        if not (0 <= r < rows and 0 <= c < cols):
            raise MoveSyntaxError(f"{text!r}: cell {r},{c} is off the {rows} x {cols} board of {level.id}")
        return r * cols + c

    def _color(self, level, text, name) -> int:
        names = level.extra["colors"]
        if name not in names:
            raise MoveSyntaxError(f"{text!r}: {level.id} has no colour {name!r} (colours: {', '.join(names)})")
        return names.index(name)

    def _start(self, level, text, cell, ci=None) -> int:
        k, n = int(level.lv[2]), int(level.lv[0]) * int(level.lv[1])
        owner = int(level.lv[LV_HEADER + 2 * k + cell]) - 1
        if owner < 0 or (ci is not None and owner != ci):
            what = f"an endpoint of {level.extra['colors'][ci]}" if ci is not None else "an endpoint"
            raise MoveSyntaxError(f"{text!r}: a path must start at {what}")
        e = 0 if int(level.lv[LV_HEADER + 2 * owner]) == cell else 1
        return n + 1 + 2 * owner + e

    def parse_move(self, level, text):
        t = text.strip().lower()
        cols, k = int(level.lv[1]), int(level.lv[2])
        n = int(level.lv[0]) * cols
        if t == "cancel":
            return n
        m = _STEP_RE.match(t)
        if m:
            return self._cell(level, text, m.group(1), m.group(2))
        m = _START_RE.match(t)
        if m:
            cell = self._cell(level, text, m.group(2), m.group(3))
            ci = self._color(level, text, m.group(1)) if m.group(1) else None
            return self._start(level, text, cell, ci)
        m = _REMOVE_RE.match(t)
        if m:
            return n + 1 + 2 * k + self._color(level, text, m.group(1))
        m = _ROUTE_RE.match(t)
        if m and m.group(1) not in _RESERVED:
            ci = self._color(level, text, m.group(1))
            cells = []
            for part in m.group(2).split("-"):
                r, c = part.split(",")
                cells.append(self._cell(level, text, r, c))
            out = [self._start(level, text, cells[0], ci)]
            prev = cells[0]
            for cell in cells[1:]:
                pr, pc, r, c = prev // cols, prev % cols, cell // cols, cell % cols
                if cell != prev and (pr == r or pc == c):
                    dr, dc = (r > pr) - (r < pr), (c > pc) - (c < pc)
                    while (pr, pc) != (r, c):
                        pr, pc = pr + dr, pc + dc
                        out.append(pr * cols + pc)
                else:
                    out.append(cell)      # not in line with the previous cell: the rules refuse it
                prev = cell
            return out
        raise MoveSyntaxError(f"{text!r} is not a Color Connect move; write {self.move_syntax}")

    def route_text(self, level, color: str | int, cells) -> str:
        """The route text of a path given as (row, col) pairs."""
        name = level.extra["colors"][color] if isinstance(color, int) else color
        return f"{name}:" + "-".join(f"{r},{c}" for r, c in cells)

    # ---- reading states ------------------------------------------------------
    def completed_paths(self, level, state) -> dict[str, list[tuple[int, int]]]:
        """colour name -> its completed path as (row, col) cells from endpoint 0 to endpoint 1."""
        rows, cols, k = (int(v) for v in level.lv[:3])
        n = rows * cols
        out = {}
        for ci, name in enumerate(level.extra["colors"]):
            length = int(state[S_HEADER + ci])
            if length == 0:
                continue
            cells = [None] * length
            for cell in range(n):
                if int(state[S_HEADER + k + cell]) == ci + 1:
                    cells[int(state[S_HEADER + k + n + cell])] = divmod(cell, cols)
            out[name] = cells
        return out

    def active_path(self, level, state) -> tuple[str, list[tuple[int, int]]] | None:
        """(colour name, cells from the start endpoint to the tip), or None."""
        rows, cols, k = (int(v) for v in level.lv[:3])
        n = rows * cols
        act = int(state[0])
        if act == 0:
            return None
        base = S_HEADER + k + 2 * n
        return level.extra["colors"][act - 1], [divmod(int(state[base + i]), cols) for i in range(int(state[1]))]

    def render_text(self, level, state):
        rows, cols, k = (int(v) for v in level.lv[:3])
        n = rows * cols
        letters = level.extra["letters"]
        names = level.extra["colors"]
        grid = [["."] * cols for _ in range(rows)]
        for cell in range(n):
            own = int(state[S_HEADER + k + cell])
            if own:
                grid[cell // cols][cell % cols] = letters[own - 1].lower()
        active = self.active_path(level, state)
        if active:
            for i, (r, c) in enumerate(active[1]):
                grid[r][c] = "@" if i == len(active[1]) - 1 else "*"
        for cell in range(n):
            ep = int(level.lv[LV_HEADER + 2 * k + cell])
            if ep:
                grid[cell // cols][cell % cols] = letters[ep - 1]
        lines = [" ".join(row) for row in grid]
        done = [names[ci] for ci in range(k) if int(state[S_HEADER + ci])]
        lines.append(f"(connected {int(state[2])}/{k}" + (f": {', '.join(done)}" if done else "") + ")")
        if active:
            lines.append(f"(active {active[0]}: {'-'.join(f'{r},{c}' for r, c in active[1])}; "
                         "* path, @ tip)")
        legend = ", ".join(f"{letters[i]}={names[i]}" for i in range(k))
        lines.append(f"(upper case endpoint, lower case completed path, . free; {legend})")
        return "\n".join(lines)


# ---- screen: board geometry (design px) and the input state machine (RULES.md 7.1, 7.3, 7.4) ----

BOARD_CENTER = (270.0, 458.0)     # design px (Cocos (0, 22))
BOARD_MAX_W, BOARD_MAX_H, MAX_PITCH = 520.0, 600.0, 88.0
_BOARD_X, _BOARD_Y = BOARD_CENTER
CELL_FILL = 0.9                   # drawn cells are 0.9 pitch; the hit test uses the full pitch
REMOVE_MS = 200                   # a removed path fades out (input locked meanwhile)
SUCCESS_MS = 660                  # the board glow after the last pair (input locked meanwhile)
FLASH_MS = 280                    # red flash of a violation (0.08 s + 0.2 s fade)
MAX_RASTER_STEPS = 256

# violation ids of the original (RULES.md 7.3) for presses that are not model actions
START_FROM_NON_ENDPOINT = "start_from_non_endpoint"
NON_ADJACENT_JUMP = "non_adjacent_jump_attempt"
DRAG_OUTSIDE_BOARD = "drag_outside_board"


class ColorConnectUI(GameUI):
    """``pitch = min(88, 520/cols, 600/rows)``, board centred at design (270, 458); cell
    (r, c) is the pitch square around ``(270 + (c - (cols-1)/2) * pitch, 458 + (r - (rows-1)/2)
    * pitch)`` (internal boundaries belong to the right / bottom cell, the outer right / bottom
    edge is outside). Input (RULES.md 7.3 / 7.4), every press handled when the button goes DOWN:

    * no active path: an endpoint of an unconnected colour -> ``start``; an endpoint of a
      connected colour -> ``remove`` (0.2 s fade); any other cell -> violation
      ``start_from_non_endpoint`` (red flash);
    * active path: its start endpoint while it is one cell long -> ``cancel`` (red flash, the
      original records ``released_before_connection``); a cell outside the tip's row and column
      -> the rules refuse the step (``not_adjacent``: red flash); a cell in the tip's row or
      column -> one ``step`` per cell along the line, stopping at the first refused step or on
      completion (the rest of the line is ignored);
    * moving with the button down: the pointer segment (design px, after inverting the
      projection) is rasterised into 4-connected cells (Amanatides-Woo, corner ties along the
      dominant axis first); each cell is walked to as above, stopping the segment at a
      violation or completion;
    * release: after a movement that crossed a cell boundary an unfinished active path is
      discarded (``cancel``, red flash on the last cell); a click keeps it open.

    Presses outside the grid are ignored with everything that follows until the release.
    UI state: ``{"g": None | {"prev": [gx, gy], "last": [r, c], "moved": bool}}`` (the press
    being held, in continuous grid coordinates)."""

    exit_to = "home"
    instructions = "Tap a dot, then tap cells in its row or column (or drag) to join each pair of colours."
    complete_title = "Complete!"
    complete_text = "Every pair is connected"
    header_y = 96
    # the game's own failure limits on the hub, counted per gesture (RULES.md 7.6): the suite
    # is told where the original's evaluator begins and ends one (gesture_begin / gesture_end)
    limits = COLOR_LIMITS

    def painted(self, state) -> int:
        return int(state[2])             # completed pairs

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        lv = level.lv
        self.rows, self.cols, self.k = int(lv[0]), int(lv[1]), int(lv[2])
        self.n = self.rows * self.cols
        self.pitch = min(MAX_PITCH, BOARD_MAX_W / self.cols, BOARD_MAX_H / self.rows)
        self.cell_size = self.pitch * CELL_FILL
        self.rect = Rect.centred(*BOARD_CENTER, self.cols * self.pitch, self.rows * self.pitch)
        self.ep_base = LV_HEADER + 2 * self.k
        self.path_base = S_HEADER + self.k + 2 * self.n       # state index of the active path's first cell
        self.endpoint_of = [int(v) for v in lv[self.ep_base:self.ep_base + self.n]]   # 1 + colour, 0 none
        self.endpoints = [(int(lv[LV_HEADER + 2 * c]), int(lv[LV_HEADER + 2 * c + 1])) for c in range(self.k)]
        self._targets = [Widget("board", self.rect, "target")]
        self._half_cols, self._half_rows = self.cols / 2, self.rows / 2     # grid_point's offsets
        self._cell_ids = [f"cell:{r},{c}" for r in range(self.rows) for c in range(self.cols)]   # cell -> id
        # per cell, the action a press there makes with no active path (-1: no endpoint):
        # start at that endpoint (colour unconnected) / remove the colour's path (connected)
        self._start_action = [-1] * self.n
        self._remove_action = [-1] * self.n
        for col, (e0, e1) in enumerate(self.endpoints):
            self._start_action[e0] = self.n + 1 + 2 * col
            self._start_action[e1] = self.n + 2 + 2 * col
            self._remove_action[e0] = self._remove_action[e1] = self.n + 1 + 2 * self.k + col

    # -- geometry (shared with render/color_connect.py)
    def grid_point(self, x: float, y: float) -> tuple[float, float]:
        """Continuous (column, row) coordinates of a design point: integers are cell boundaries."""
        return (x - BOARD_CENTER[0]) / self.pitch + self.cols / 2, (y - BOARD_CENTER[1]) / self.pitch + self.rows / 2

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(row, col) of the pitch square under a design point, or None outside the grid."""
        gx, gy = self.grid_point(x, y)
        if not (0.0 <= gx < self.cols and 0.0 <= gy < self.rows):      # also False for NaN
            return None
        return int(math.floor(gy)), int(math.floor(gx))

    def cell_center(self, r: int, c: int) -> tuple[float, float]:
        return (BOARD_CENTER[0] + (c - (self.cols - 1) / 2) * self.pitch,
                BOARD_CENTER[1] + (r - (self.rows - 1) / 2) * self.pitch)

    def buttons(self, direct):
        ws = [Widget("restart", Circle(490, 90, 35), "round_button", "Restart")]
        if not direct:
            ws.append(Widget("menu", Circle(50, 90, 35), "round_button", "Back"))
        return ws

    def targets(self):
        return self._targets

    def initial_state(self):
        return {"g": None}

    def check_ui(self, ui):
        why = super().check_ui(ui)
        g = None if why else ui["g"]
        if g is None:
            return why
        prev, last = g.get("prev") if type(g) is dict else None, g.get("last") if type(g) is dict else None
        if not (type(g) is dict and set(g) == {"prev", "last", "moved"} and type(g["moved"]) is bool
                and type(prev) is list and len(prev) == 2
                and all(type(v) in (int, float) and -100 <= v <= 100 for v in prev)
                and type(last) is list and len(last) == 2 and all(type(v) is int for v in last)
                and 0 <= last[0] < self.rows and 0 <= last[1] < self.cols):
            return "g must be null or {prev: [x, y] on the grid, last: [row, col], moved: true/false}"
        return ""

    def active_cells(self, state) -> list[int]:
        base = self.path_base
        return [int(v) for v in state[base:base + int(state[1])]]

    # -- input (intents.py: the handlers are generators of intents)
    def _flash(self, r: int, c: int) -> Shake:
        if 0 <= r < self.rows and 0 <= c < self.cols:
            return Shake(self._cell_ids[r * self.cols + c])
        return Shake(f"cell:{r},{c}")

    def _refused(self, r, c, reason, message):
        yield self._flash(r, c)
        yield Refuse(reason, message, f"cell:{r},{c}")

    def _walk(self, board, r: int, c: int):
        """Extend the active path toward (r, c) one cell at a time along the tip's row or column.
        Returns False when the walk stopped at a violation or a completion (or there is no
        active path)."""
        at = board.at
        if at(0) == 0:
            return False                       # input without an active path: nothing visible
        tip = at(self.path_base + at(1) - 1)
        tr, tc = divmod(tip, self.cols)
        if r == tr and c == tc:
            return True
        if r != tr and c != tc:
            if not (0 <= r < self.rows and 0 <= c < self.cols):
                yield from self._refused(r, c, NON_ADJACENT_JUMP, "that cell is not in the tip's row or column")
                return False
            o = yield Move(r * self.cols + c)       # the rules refuse it (not_adjacent)
            if not o.accepted:
                yield self._flash(r, c)
            return False
        dr, dc = (r > tr) - (r < tr), (c > tc) - (c < tc)
        while tr != r or tc != c:
            tr += dr
            tc += dc
            if not (0 <= tr < self.rows and 0 <= tc < self.cols):
                yield from self._refused(r, c, DRAG_OUTSIDE_BOARD, "the path cannot leave the board")
                return False
            o = yield Move(tr * self.cols + tc)
            if not o.accepted:
                yield self._flash(r, c)
                return False
            if board.at(0) == 0:           # completed: the rest of the line is ignored
                return False
        return True

    def _press(self, board, x, y):
        pitch = self.pitch
        gx = (x - _BOARD_X) / pitch + self._half_cols      # grid_point(x, y), inlined
        gy = (y - _BOARD_Y) / pitch + self._half_rows
        cols = self.cols
        ui = board.ui
        if not (0.0 <= gx < cols and 0.0 <= gy < self.rows):      # also False for NaN
            ui["g"] = None                              # outside the grid: ignored until release
            return
        r, c = int(gy), int(gx)                         # floor: both are >= 0 here
        cell = r * cols + c
        at = board.at
        if at(0) == 0:
            yield GestureBegin()                        # a press with no path open begins a gesture
            ep = self.endpoint_of[cell]
            if ep == 0:
                yield from self._refused(r, c, START_FROM_NON_ENDPOINT, "start a path at a coloured dot")
            elif at(S_HEADER + ep - 1) != 0:
                yield Move(self._remove_action[cell])
            else:
                yield Move(self._start_action[cell])
        else:
            if at(1) == 1 and at(self.path_base) == cell:
                yield Move(self.n)
                yield self._flash(r, c)
                yield GestureEnd()                      # cancelling the one-cell path ends the gesture
            else:
                yield from self._walk(board, r, c)
        ui["g"] = {"prev": [gx, gy], "last": [r, c], "moved": False}

    def _advance(self, board, g: dict, gx: float, gy: float):
        """The pointer moved (button down) to grid point (gx, gy), not NaN and not g["prev"]."""
        if board.at(0) == 0:
            g["prev"] = [gx, gy]
            if 0.0 <= gx < self.cols and 0.0 <= gy < self.rows:      # cell_at, as in _press
                g["last"] = [int(gy), int(gx)]
            return
        cells = raster_cells(g["prev"][0], g["prev"][1], gx, gy)
        g["prev"] = [gx, gy]
        if cells:
            g["moved"] = True
        for r, c in cells:
            g["last"] = [r, c]
            if not (yield from self._walk(board, r, c)):
                break

    def on_pointer(self, board, kind, x, y, t):
        if kind == "down":
            return self._press(board, x, y)
        g = board.ui.get("g")
        if g is None:
            return []
        pitch = self.pitch
        gx = (x - _BOARD_X) / pitch + self._half_cols      # grid_point(x, y), inlined
        gy = (y - _BOARD_Y) / pitch + self._half_rows
        prev = g["prev"]
        moved = not (not (gx == gx and gy == gy) or (gx == prev[0] and gy == prev[1]))
        if kind != "up":                    # off the plane, or not moved (a click's release): nothing
            return self._advance(board, g, gx, gy) if moved else []
        return self._release(board, g, gx, gy, moved)

    def _release(self, board, g: dict, gx: float, gy: float, moved: bool):
        if moved:
            yield from self._advance(board, g, gx, gy)
        board.ui["g"] = None
        if g["moved"] and board.at(0) != 0 and not board.complete:
            yield Move(self.n)                      # released before connection
            yield self._flash(g["last"][0], g["last"][1])
        # a release ends the gesture after a drag, or when no path is open any more (a click
        # that starts or extends a path keeps its gesture open, as in the original)
        if g["moved"] or board.at(0) == 0:
            yield GestureEnd()

    def animation_ms(self, before, after, action, code):
        a = int(action)
        if a < self.n:
            return SUCCESS_MS if after.item(2) == self.k and before.item(2) < self.k else 0
        return REMOVE_MS if a >= self.n + 1 + 2 * self.k else 0

    # -- gestures
    def _click(self, proj, r, c) -> dict:
        px, py = proj.to_px(*self.cell_center(r, c))
        return {"type": "click", "x": round(px), "y": round(py)}

    def gesture_for(self, action, proj, suite=None):
        a = int(action)
        n, k, cols = self.n, self.k, self.cols
        state = suite.session.state if suite is not None and suite.session else self.level.initial
        if a < n:                                        # step: click that cell
            return self._click(proj, *divmod(a, cols))
        if a > n:
            j = a - n - 1
            cell = self.endpoints[j // 2][j % 2] if j < 2 * k else self.endpoints[j - 2 * k][0]
            return self._click(proj, *divmod(cell, cols))
        path = self.active_cells(state)
        if len(path) <= 1:                               # cancel a one-cell path: click its start
            return self._click(proj, *divmod(path[0] if path else self.endpoints[0][0], cols))
        return self._discard_gesture(proj, path[-1])

    def gesture_run(self, actions, proj, suite=None):
        """A whole route in one press, as a person draws it: when ``actions`` starts with a
        start move followed by the steps that complete that colour, one drag from the start
        endpoint through every corner of the route to the other endpoint (the game walks the
        straight runs); otherwise one gesture for the first move."""
        n, cols = self.n, self.cols
        a = int(actions[0])
        if not n < a < n + 1 + 2 * self.k:
            return self.gesture_for(a, proj, suite), 1
        col, e = divmod(a - n - 1, 2)
        goal = self.endpoints[col][1 - e]
        cells = [self.endpoints[col][e]]
        for m in actions[1:]:
            m = int(m)
            r0, c0 = divmod(cells[-1], cols)
            r1, c1 = divmod(m, cols) if 0 <= m < n else (-9, -9)
            if abs(r1 - r0) + abs(c1 - c0) != 1:          # not a step to a 4-neighbour
                break
            cells.append(m)
            if m == goal:
                break
        if cells[-1] != goal:
            return self.gesture_for(a, proj, suite), 1
        keep = [cells[0]]
        for i in range(1, len(cells) - 1):
            (r0, c0), (r1, c1), (r2, c2) = (divmod(v, cols) for v in (keep[-1], cells[i], cells[i + 1]))
            if not (r0 == r1 == r2 or c0 == c1 == c2):
                keep.append(cells[i])
        keep.append(cells[-1])
        if len(keep) - 2 > gui.MAX_VIA:
            return self.gesture_for(a, proj, suite), 1
        pts = [[round(v) for v in proj.to_px(*self.cell_center(*divmod(c, cols)))] for c in keep]
        g = {"type": "drag", "x0": pts[0][0], "y0": pts[0][1], "x1": pts[-1][0], "y1": pts[-1][1],
             "steps": 1, "ms": min(gui.MAX_MS, 60 * (len(keep) - 1))}
        if len(pts) > 2:
            g["via"] = pts[1:-1]
        return g, len(cells)

    def _discard_gesture(self, proj, tip: int) -> dict:
        """Cancel a longer active path: press a border cell outside the tip's row and column
        (refused, nothing changes) and drag off the board; the release discards the path."""
        tr, tc = divmod(tip, self.cols)
        r = 0 if tr != 0 else self.rows - 1
        c = 0 if tc != 0 else self.cols - 1
        x, y = self.cell_center(r, c)
        y1 = y + (-0.8 if r == 0 else 0.8) * self.pitch
        (a, b), (cx, cy) = proj.to_px(x, y), proj.to_px(x, y1)
        w, h = proj.size
        return {"type": "drag", "x0": round(a), "y0": round(b), "x1": min(max(round(cx), 0), w - 1),
                "y1": min(max(round(cy), 0), h - 1), "steps": 2, "ms": 120}

    def route_gesture(self, route: str, proj) -> dict:
        """A batch of clicks drawing one whole route text ``colour:r,c-r,c-...``: the first
        cell, then every corner and the last cell (straight runs are walked by the game)."""
        m = _ROUTE_RE.match(route.strip().lower())
        if not m:
            raise MoveSyntaxError(f"{route!r} is not a route 'color:r,c-r,c-...'")
        cells = [tuple(int(v) for v in part.split(",")) for part in m.group(2).split("-")]
        keep = [cells[0]]
        for i in range(1, len(cells)):
            if i == len(cells) - 1:
                keep.append(cells[i])
                continue
            (r0, c0), (r1, c1), (r2, c2) = keep[-1], cells[i], cells[i + 1]
            if not ((r0 == r1 == r2) or (c0 == c1 == c2)):
                keep.append(cells[i])
        return {"type": "batch", "actions": [self._click(proj, r, c) for r, c in keep]}


def raster_cells(x0: float, y0: float, x1: float, y1: float) -> list[tuple[int, int]]:
    """The 4-connected cells (row, col) a segment enters after its start cell, in continuous
    grid coordinates (x = column, y = row). At an exact corner both axes are entered, the
    dominant axis first, so consecutive cells are always 4-neighbours; an axis whose target
    column / row is reached is not stepped again (accumulated float error cannot overshoot)."""
    col, row = math.floor(x0), math.floor(y0)
    tcol, trow = math.floor(x1), math.floor(y1)
    if col == tcol and row == trow:
        return []
    if (col == tcol and (trow == row + 1 or trow == row - 1)) or \
            (row == trow and (tcol == col + 1 or tcol == col - 1)):
        return [(trow, tcol)]      # into a 4-neighbour: what the walk below gives, quicker
    dx, dy = x1 - x0, y1 - y0
    sc = (dx > 0) - (dx < 0)
    sr = (dy > 0) - (dy < 0)
    inf = float("inf")
    dcol = 1 / abs(dx) if sc else inf
    drow = 1 / abs(dy) if sr else inf
    mcol = (col + 1 - x0) / abs(dx) if sc > 0 else (x0 - col) / abs(dx) if sc < 0 else inf
    mrow = (row + 1 - y0) / abs(dy) if sr > 0 else (y0 - row) / abs(dy) if sr < 0 else inf
    out: list[tuple[int, int]] = []
    while (col != tcol or row != trow) and len(out) < MAX_RASTER_STEPS:
        if col == tcol:          # float drift must never carry the walk past the target
            mcol = inf
        if row == trow:
            mrow = inf
        if mcol < mrow:
            col += sc
            mcol += dcol
            out.append((row, col))
        elif mrow < mcol:
            row += sr
            mrow += drow
            out.append((row, col))
        else:
            first_col = abs(dx) >= abs(dy)
            for axis in ((0, 1) if first_col else (1, 0)):
                if axis == 0 and col != tcol:
                    col += sc
                    mcol += dcol
                    out.append((row, col))
                elif axis == 1 and row != trow:
                    row += sr
                    mrow += drow
                    out.append((row, col))
    return out


ColorConnect.ui = ColorConnectUI

PUZZLE = ColorConnect()
