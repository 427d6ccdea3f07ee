"""Rush Hour (``rush_hour``): slide vehicles along their own axis until the target vehicle
reaches the exit at the right edge of its row. RULES.md section 3 (the reference calls the
game ``rush_hour_2``, in-game ``truck_escape_2``).

Vehicles are 2 or 3 cells long, horizontal ones slide left/right, vertical ones up/down;
bushes are fixed one-cell blockers. Sliding any distance is one move. Won when the target
(horizontal, on the exit row) has ``col + length == cols``.

Level vector ``lv`` (int32), board of R rows x C columns, N vehicles, K reference moves::

    lv[0] = R        lv[1] = C         lv[2] = N          lv[3] = T  (target's vehicle index)
    lv[4] = exit row lv[5] = M  (largest slide distance an action can name: max(R, C) - 2)
    lv[6] = K  (moves of the reference solution; -1 if the level has none)
    lv[7] = B0 (direct blockers in the initial state)   lv[8] = initial column of the target
    lv[9] = number of bushes
    lv[10 + 3*v + 0]          orientation of vehicle v: 0 horizontal, 1 vertical
    lv[10 + 3*v + 1]          length of vehicle v (2 or 3)
    lv[10 + 3*v + 2]          its fixed coordinate: the row of a horizontal vehicle,
                              the column of a vertical one
    G = 10 + 3*N
    lv[G + r*C + c]           1 if a bush stands on (r, c), else 0
    P = G + R*C
    lv[P + i*N + v]           precomputed canonical path: the state after the first i moves
                              of the reference solution (i = 0 .. K), i.e. K+1 rows of N

State ``s`` (int8, length N)::

    s[v] = the moving coordinate of vehicle v: its leftmost column if horizontal,
           its topmost row if vertical (the other coordinate is fixed, in lv)

Action ``a = v * 2M + j``: j in 0..M-1 slides vehicle v by +(j+1) cells (right or down),
j in M..2M-1 by -(j-M+1) cells (left or up). Text ``red_target+2`` / ``blue_sedan-1``.
A slide must be exactly possible: every cell crossed is on the board and free (codes
``blocked`` and ``off_board`` otherwise). There is no undo.

Progress (RULES.md 3.3): 1 when solved; on the canonical path at index i, min(0.99, i/K);
elsewhere est = max(1 + directBlockers, min_i(diff(s, path_i) + K - i)) with diff the number
of vehicles whose position differs, and P = min(0.99, 0.8 * clamp((K - est)/K) + 0.2 *
(0.7 * blockerClear + 0.3 * targetAdvance)). directBlockers counts vehicles and bushes on
the exit row to the right of the target; blockerClear = (B0 - blockers) / B0 (the target's
advance ratio when B0 = 0); targetAdvance = clamp((col - col0) / max(1, C - len - col0)).
Without a reference solution P = min(0.99, 0.7 * blockerClear + 0.3 * targetAdvance).
"""

from __future__ import annotations

import math
import re
import sys

import numpy as np
from longpuzzle.engine.jit import njit

from longpuzzle.engine.fields import Fields, board_size, is_int, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.geometry import Rect, Widget
from longpuzzle.engine.protocol import BAD_ACTION, OK, Level, Puzzle, Rejection
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import Move, Reject, Select

BLOCKED, OFF_BOARD = 3, 4
HEADER = 10
MAX_SIDE = 12
MAX_VEHICLES = 40
MAX_PROGRESS = 0.99


@njit(cache=True)
def _free(lv, s, mover, r, c):
    """True if cell (r, c) is on the board and neither a bush nor any vehicle other than
    ``mover`` stands on it."""
    rows = lv[0]
    cols = lv[1]
    if r < 0 or r >= rows or c < 0 or c >= cols:
        return False
    n = lv[2]
    if lv[HEADER + 3 * n + r * cols + c] != 0:
        return False
    for w in range(n):
        if w == mover:
            continue
        base = HEADER + 3 * w
        fixed = lv[base + 2]
        pos = int(s[w])
        length = lv[base + 1]
        if lv[base] == 0:
            if r == fixed and pos <= c < pos + length:
                return False
        else:
            if c == fixed and pos <= r < pos + length:
                return False
    return True


@njit(cache=True)
def _cell_after(lv, s, v, k):
    """(row, col) of the cell vehicle v enters when it advances k cells (k != 0):
    for k > 0 the cell just past its far end, for k < 0 the cell before its near end."""
    base = HEADER + 3 * v
    fixed = lv[base + 2]
    pos = int(s[v])
    length = lv[base + 1]
    if k > 0:
        along = pos + length - 1 + k
    else:
        along = pos + k
    if lv[base] == 0:
        return fixed, along
    return along, fixed


@njit(cache=True)
def _check(lv, s, v, delta):
    """Rejection code of sliding vehicle v by delta cells (OK if possible)."""
    step = 1 if delta > 0 else -1
    rows = lv[0]
    cols = lv[1]
    for k in range(1, abs(delta) + 1):
        r, c = _cell_after(lv, s, v, k * step)
        if r < 0 or r >= rows or c < 0 or c >= cols:
            return OFF_BOARD
        if not _free(lv, s, v, r, c):
            return BLOCKED
    return OK


@njit(cache=True)
def step_into(lv, src, dst, action):
    for i in range(src.shape[0]):
        dst[i] = src[i]
    n = lv[2]
    m = lv[5]
    if action < 0 or action >= n * 2 * m:
        return BAD_ACTION
    v = action // (2 * m)
    j = action % (2 * m)
    delta = j + 1 if j < m else -(j - m + 1)
    code = _check(lv, src, v, delta)
    if code != OK:
        return code
    dst[v] = src[v] + delta
    return OK


@njit(cache=True)
def _travel(lv, s, v, sign):
    """How many cells vehicle v can slide in direction sign (+1 / -1)."""
    k = 0
    while True:
        r, c = _cell_after(lv, s, v, (k + 1) * sign)
        if not _free(lv, s, v, r, c):
            return k
        k += 1


@njit(cache=True)
def legal_into(lv, s, mask):
    n = lv[2]
    m = lv[5]
    count = 0
    for v in range(n):
        fwd = _travel(lv, s, v, 1)
        back = _travel(lv, s, v, -1)
        for j in range(m):
            ok = j + 1 <= fwd
            mask[v * 2 * m + j] = 1 if ok else 0
            if ok:
                count += 1
            ok = j + 1 <= back
            mask[v * 2 * m + m + j] = 1 if ok else 0
            if ok:
                count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    t = lv[3]
    return int(s[t]) + lv[HEADER + 3 * t + 1] == lv[1]


@njit(cache=True)
def _clamp01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@njit(cache=True)
def _direct_blockers(lv, s):
    """Vehicles and bushes on the exit row to the right of the target (each counted once)."""
    n = lv[2]
    cols = lv[1]
    t = lv[3]
    row = lv[4]
    first = int(s[t]) + lv[HEADER + 3 * t + 1]
    count = 0
    for w in range(n):
        if w == t:
            continue
        base = HEADER + 3 * w
        pos = int(s[w])
        length = lv[base + 1]
        if lv[base] == 0:
            if lv[base + 2] == row and pos + length - 1 >= first:
                count += 1
        else:
            if lv[base + 2] >= first and pos <= row < pos + length:
                count += 1
    g = HEADER + 3 * n
    for c in range(first, cols):
        if lv[g + row * cols + c] != 0:
            count += 1
    return count


@njit(cache=True)
def _target_advance(lv, s):
    t = lv[3]
    col0 = lv[8]
    total = lv[1] - lv[HEADER + 3 * t + 1] - col0
    if total < 1:
        total = 1
    return _clamp01((int(s[t]) - col0) / total)


@njit(cache=True)
def progress(lv, s):
    if is_solved(lv, s):
        return 1.0
    n = lv[2]
    k = lv[6]
    blockers = _direct_blockers(lv, s)
    advance = _target_advance(lv, s)
    b0 = lv[7]
    if b0 > 0:
        clear = _clamp01((b0 - blockers) / b0)
    else:
        clear = advance
    structural = 0.7 * clear + 0.3 * advance
    if k <= 0:
        return min(MAX_PROGRESS, _clamp01(structural))
    path = HEADER + 3 * n + lv[0] * lv[1]
    best = 1 << 30
    for i in range(k + 1):
        diff = 0
        for v in range(n):
            if lv[path + i * n + v] != s[v]:
                diff += 1
        if diff == 0:
            return min(MAX_PROGRESS, i / k)
        if diff + k - i < best:
            best = diff + k - i
    est = max(1 + blockers, best)
    distance = _clamp01((k - est) / k)
    return min(MAX_PROGRESS, _clamp01(0.8 * distance + 0.2 * structural))


_MOVE_RE = re.compile(r"^(.+?)\s*([+-])\s*(\d+)$")
_ID_RE = re.compile(r"^[A-Za-z0-9_]+$")



class RushHour(Puzzle):
    id = "rush_hour"
    title = "Rush Hour"
    difficulties = ("easy", "medium", "hard")
    catalog_order = 2
    undo_allowed = False
    state_dtype = np.int8
    kernels = sys.modules[__name__]
    rejections = {
        BLOCKED: Rejection("blocked", "another vehicle or a bush is in the way"),
        OFF_BOARD: Rejection("off_board", "the vehicle would slide past the edge of the board"),
    }
    move_syntax = "VEHICLE+N or VEHICLE-N: slide a vehicle N cells (+ right/down, - left/up), e.g. red_target+2"

    def build_level(self, record, *, difficulty, number, where):
        fail = level_fail(self.id, difficulty, number, where)

        rows, cols = board_size(record, fail, 2, MAX_SIDE)
        exit_row = record.get("exit_row")
        if not is_int(exit_row) or not 0 <= exit_row < rows:
            raise fail(f"must be a row of the board (0..{rows - 1})", "exit_row")
        side = record.get("exit_side", "right")
        if side != "right":
            raise fail(f"only \"right\" is supported, found {side!r}", "exit_side")
        owner: dict[tuple[int, int], str] = {}

        def occupy(r, c, who, field):
            if not (0 <= r < rows and 0 <= c < cols):
                raise fail(f"{who} covers cell ({r}, {c}), outside the {rows} x {cols} board", field)
            if (r, c) in owner:
                raise fail(f"{who} overlaps {owner[(r, c)]} on cell ({r}, {c})", field)
            owner[(r, c)] = who

        bushes = record.get("blockers", [])
        if not isinstance(bushes, list):
            raise fail("must be a list of {\"id\", \"row\", \"col\"} bushes", "blockers")
        grid = np.zeros(rows * cols, np.int32)
        bush_extra = []
        for i, b in enumerate(bushes):
            field = f"blockers[{i}]"
            if not isinstance(b, dict):
                raise fail("a blocker is an object {\"id\", \"row\", \"col\"}", field)
            for key in ("row", "col"):
                if not is_int(b.get(key)):
                    raise fail("must be an integer", f"{field}.{key}")
            bid = b.get("id", f"bush_{i}")
            if not isinstance(bid, str):
                raise fail("must be text", f"{field}.id")
            occupy(b["row"], b["col"], f"blocker {bid!r}", field)
            grid[b["row"] * cols + b["col"]] = 1
            bush_extra.append({"id": bid, "row": b["row"], "col": b["col"],
                               "style": Fields(b, fail, f"{field}.").text("style", default="bush", max_len=40)})

        vehicles = record.get("vehicles")
        if not isinstance(vehicles, list) or not 1 <= len(vehicles) <= MAX_VEHICLES:
            raise fail(f"must be a list of 1..{MAX_VEHICLES} vehicles", "vehicles")
        n = len(vehicles)
        geo = np.zeros(3 * n, np.int32)
        state = np.zeros(n, np.int8)
        ids: list[str] = []
        targets = []
        veh_extra = []
        for v, veh in enumerate(vehicles):
            field = f"vehicles[{v}]"
            if not isinstance(veh, dict):
                raise fail("a vehicle is an object with id, row, col, length, orientation", field)
            vid = veh.get("id")
            if not isinstance(vid, str) or not _ID_RE.match(vid):
                raise fail("must be a non-empty name of letters, digits and '_'", f"{field}.id")
            if vid in ids:
                raise fail(f"vehicle id {vid!r} is used twice", f"{field}.id")
            ids.append(vid)
            for key in ("row", "col"):
                if not is_int(veh.get(key)):
                    raise fail("must be an integer", f"{field}.{key}")
            length = veh.get("length")
            if not is_int(length) or length not in (2, 3):
                raise fail("must be 2 or 3", f"{field}.length")
            orient = veh.get("orientation")
            if orient not in ("horizontal", "vertical"):
                raise fail(f"must be \"horizontal\" or \"vertical\", found {orient!r}", f"{field}.orientation")
            r, c = veh["row"], veh["col"]
            horiz = orient == "horizontal"
            for k in range(length):
                occupy(r if horiz else r + k, c + k if horiz else c, f"vehicle {vid!r}", field)
            geo[3 * v] = 0 if horiz else 1
            geo[3 * v + 1] = length
            geo[3 * v + 2] = r if horiz else c
            state[v] = c if horiz else r
            is_target = veh.get("target", False)
            if not isinstance(is_target, bool):
                raise fail("must be true or false", f"{field}.target")
            if is_target:
                targets.append(v)
            f = Fields(veh, fail, f"{field}.")
            veh_extra.append({"id": vid, "length": length, "orientation": orient, "target": is_target,
                              "style": f.text("style", default="target" if is_target else "sedan", max_len=40),
                              "color": f.text("color", default="red" if is_target else "white", max_len=40),
                              "flip_visual": f.flag("flip_visual", default=False)})
        if len(targets) != 1:
            raise fail(f"exactly one vehicle must have \"target\": true (found {len(targets)})", "vehicles")
        t = targets[0]
        if geo[3 * t] != 0:
            raise fail("the target vehicle must be horizontal", f"vehicles[{t}].orientation")
        if geo[3 * t + 2] != exit_row:
            raise fail(f"the target vehicle is on row {int(geo[3 * t + 2])}, not on the exit row {exit_row}",
                       f"vehicles[{t}].row")

        m = max(rows, cols) - 2
        head = np.array([rows, cols, n, t, exit_row, m, -1, 0, int(state[t]), len(bush_extra)], np.int32)
        lv0 = np.concatenate([head, geo, grid]).astype(np.int32)
        index = {vid: v for v, vid in enumerate(ids)}
        b0 = int(_direct_blockers(lv0, state))

        # reference solution -> canonical path
        sol = record.get("reference_solution")
        path = [state.copy()]
        actions = []
        if sol is not None:
            if not isinstance(sol, list) or not all(isinstance(x, str) for x in sol):
                raise fail("must be a list of move texts like \"red_target+2\"", "reference_solution")
            cur = state.copy()
            for i, text in enumerate(sol):
                try:
                    a = self._parse(index, m, text)
                except MoveSyntaxError as e:
                    raise fail(str(e), f"reference_solution[{i}]") from None
                nxt = np.empty_like(cur)
                code = int(step_into(lv0, cur, nxt, np.int64(a)))
                if code != OK:
                    raise fail(f"move {text!r} is illegal there ({self.describe_code(code).reason})",
                               f"reference_solution[{i}]")
                cur = nxt
                path.append(cur.copy())
                actions.append(a)
            if not is_solved(lv0, cur):
                raise fail("the reference solution does not end with the target at the exit",
                           "reference_solution")
        opt = record.get("optimal_moves")
        if opt is not None:
            if not is_int(opt) or opt < 0:
                raise fail("must be a non-negative integer", "optimal_moves")
            if sol is not None and opt != len(sol):
                raise fail(f"is {opt}, but the reference solution has {len(sol)} moves", "optimal_moves")
        k = len(sol) if sol is not None else -1
        head[6] = k
        head[7] = b0
        parts = [head, geo, grid]
        if sol is not None:
            parts.append(np.concatenate(path).astype(np.int32))
        lv = np.concatenate(parts).astype(np.int32)
        extra = {"rows": rows, "cols": cols, "exit_row": exit_row, "exit_side": "right",
                 "vehicles": veh_extra, "ids": ids, "target": t, "blockers": bush_extra,
                 "hint_count": Fields(record, fail).integer("hint_count", lo=0, hi=1000, default=0),
                 "optimal_moves": opt if opt is not None else
                 (k if k >= 0 else None), "reference_actions": actions, "max_distance": m}
        return Level(self.id, difficulty, number, lv, state, n * 2 * m, record, extra, where,
                     Fields(record, fail).text("name", default=""))

    @staticmethod
    def _parse(index, m, text):
        mt = _MOVE_RE.match(text.strip()) if isinstance(text, str) else None
        if not mt:
            raise MoveSyntaxError(f"{text!r} is not a Rush Hour move; write {RushHour.move_syntax}")
        vid, sign, dist = mt.group(1), mt.group(2), int(mt.group(3))
        if vid not in index:
            low = {k.lower(): v for k, v in index.items()}
            if vid.lower() not in low:
                raise MoveSyntaxError(f"{text!r}: there is no vehicle {vid!r} (vehicles: {', '.join(index)})")
            v = low[vid.lower()]
        else:
            v = index[vid]
        if not 1 <= dist <= m:
            raise MoveSyntaxError(f"{text!r}: the distance must be 1..{m} cells on this board")
        return v * 2 * m + (dist - 1 if sign == "+" else m + dist - 1)

    def state_bounds(self, level):
        """A vehicle's moving coordinate keeps it on the board: 0 .. side - length."""
        rows, cols, n = int(level.lv[0]), int(level.lv[1]), int(level.lv[2])
        low = np.zeros_like(level.initial)
        high = np.empty_like(level.initial)
        for v in range(n):
            vert, length = int(level.lv[HEADER + 3 * v]), int(level.lv[HEADER + 3 * v + 1])
            high[v] = (rows if vert else cols) - length
        return low, high

    def format_move(self, level, action):
        m = int(level.lv[5])
        v, j = divmod(int(action), 2 * m)
        return f"{level.extra['ids'][v]}+{j + 1}" if j < m else f"{level.extra['ids'][v]}-{j - m + 1}"

    def parse_move(self, level, text):
        index = {vid: v for v, vid in enumerate(level.extra["ids"])}
        return self._parse(index, int(level.lv[5]), text)

    def cells(self, level, state):
        """{vehicle index: [(row, col), ...]} for the given state."""
        out = {}
        for v in range(int(level.lv[2])):
            base = HEADER + 3 * v
            horiz = level.lv[base] == 0
            fixed, length, pos = int(level.lv[base + 2]), int(level.lv[base + 1]), int(state[v])
            out[v] = [(fixed, pos + k) if horiz else (pos + k, fixed) for k in range(length)]
        return out

    def render_text(self, level, state):
        rows, cols = int(level.lv[0]), int(level.lv[1])
        t = int(level.lv[3])
        grid = [["." for _ in range(cols)] for _ in range(rows)]
        for b in level.extra["blockers"]:
            grid[b["row"]][b["col"]] = "#"
        letters = "ABCDEFGHIJKLMNOPQSTUVWYZabcdefghijklmnopqrstuvwxyz"
        legend = []
        li = 0
        for v, cells in self.cells(level, state).items():
            if v == t:
                ch = "X"
            else:
                ch = letters[li % len(letters)]
                li += 1
            legend.append(f"{ch}={level.extra['ids'][v]}")
            for r, c in cells:
                grid[r][c] = ch
        exit_row = int(level.lv[4])
        lines = [" ".join(row) + (" >" if r == exit_row else "") for r, row in enumerate(grid)]
        lines.append(f"(X target, # bush, > exit; {', '.join(legend)})")
        return "\n".join(lines)


# ---- screen: board geometry (design px) and the drag state machine (RULES.md 3.1, 3.2) -----

BOARD_W = 450.0                # design px
BOARD_CX, BOARD_CY = 270.0, 462.0
SNAP_MS = 120                  # the snap tween after a release
DRIVE_OUT_MS = 580             # the target drives out after the winning snap (0.06 s + 0.52 s)
DRAG_STEPS, DRAG_MS = 8, 320   # the drag gestures made by gesture_for


class RushHourUI(GameUI):
    """``cell = 450 / cols``, board centred at design (270, 462); cell (r, c) has its centre at
    ``(45 + (c + 0.5) cell, 462 - rows cell / 2 + (r + 0.5) cell)``. A vehicle's hit box is its
    node rectangle, ``length cell - max(8, 0.11 cell)`` by ``cell - max(12, 0.18 cell)``,
    centred on its cells (vehicles move, so the layout has one "board" target and the
    vehicle under a press is found from the current state).

    A move is ONE drag. The press must start on a vehicle (elsewhere: nothing); the legal
    travel range [lo, hi] along its axis is taken at the press. Each pointer move projects
    the displacement from the press (design px) on the vehicle's axis, divides it by the
    cell and clamps it to the range (the vehicle follows). The release rounds the clamped
    value (Math.round: floor(x + 0.5)) and clamps again: non-zero is ONE move of that many
    cells; zero is a rejected attempt (reason ``blocked`` when the range is 0/0,
    ``cancelled`` when the release has no position, else ``below-snap-threshold`` - plain
    taps too), counted as a rejected attempt of the session with no state change.
    UI state: ``{"drag": {"v", "lo", "hi", "off"} or None, "snap": {"v", "from"} or None}``
    (snap: where the last released vehicle was, for the 0.12 s snap tween)."""

    # a pointer move only sets the offset, which the release (with a position) sets again
    # from the press and its own position: a whole drag's moves are not sent (GameUI)
    pointer_up_only = True

    exit_to = "difficulty"
    instructions = "Drag a vehicle along its lane. Free the way and drive the red car out on the right."
    complete_title = "Level cleared!"
    complete_text = "The red car drove out safely"
    header_y = 89

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        lv = level.lv
        self.rows, self.cols, self.n = int(lv[0]), int(lv[1]), int(lv[2])
        self.target, self.exit_row, self.m = int(lv[3]), int(lv[4]), int(lv[5])
        self.cell = BOARD_W / self.cols
        self.x0 = BOARD_CX - BOARD_W / 2
        self.y0 = BOARD_CY - self.rows * self.cell / 2
        self.board = Rect(self.x0, self.y0, self.x0 + BOARD_W, self.y0 + self.rows * self.cell)
        self.horiz = [int(lv[HEADER + 3 * v]) == 0 for v in range(self.n)]
        self.length = [int(lv[HEADER + 3 * v + 1]) for v in range(self.n)]
        self.fixed = [int(lv[HEADER + 3 * v + 2]) for v in range(self.n)]
        self.long_cut = max(8.0, 0.11 * self.cell)
        self.wide_cut = max(12.0, 0.18 * self.cell)
        self._targets = [Widget("board", self.board, "target")]

    # geometry used by the renderer too
    def cell_center(self, r: float, c: float) -> tuple[float, float]:
        return self.x0 + (c + 0.5) * self.cell, self.y0 + (r + 0.5) * self.cell

    def vehicle_center(self, v: int, pos: float) -> tuple[float, float]:
        """Design centre of vehicle v when its moving coordinate is ``pos`` (may be fractional)."""
        mid = pos + (self.length[v] - 1) / 2
        if self.horiz[v]:
            return self.cell_center(self.fixed[v], mid)
        return self.cell_center(mid, self.fixed[v])

    def vehicle_rect(self, v: int, pos: float) -> Rect:
        """The node rectangle (= hit box) of vehicle v at ``pos``."""
        cx, cy = self.vehicle_center(v, pos)
        a = self.length[v] * self.cell - self.long_cut
        b = self.cell - self.wide_cut
        return Rect.centred(cx, cy, a, b) if self.horiz[v] else Rect.centred(cx, cy, b, a)

    def vehicle_at(self, state, x: float, y: float) -> int | None:
        for v in range(self.n):
            if self.vehicle_rect(v, int(state[v])).contains(x, y):
                return v
        return None

    def travel(self, state, v: int) -> tuple[int, int]:
        """(lo, hi): the legal travel range of vehicle v in cells (lo <= 0 <= hi)."""
        s = np.asarray(state)
        return -int(_travel(self.level.lv, s, v, -1)), int(_travel(self.level.lv, s, v, 1))

    def action_of(self, v: int, k: int) -> int:
        return v * 2 * self.m + (k - 1 if k > 0 else self.m - k - 1)

    def buttons(self, direct):
        ws = [Widget("restart", Rect.centred(478, 89, 104, 54), "pill_button", "Restart")]
        if not direct:
            ws.append(Widget("menu", Rect.centred(62, 89, 104, 54), "pill_button", "Exit"))
        return ws

    def targets(self):
        return self._targets

    def initial_state(self):
        return {"drag": None, "snap": None}

    def check_ui(self, ui):
        why = super().check_ui(ui)
        if why:
            return why
        d, sn, m = ui["drag"], ui["snap"], self.m

        def num(v):
            return type(v) in (int, float) and -m - 1 <= v <= m + 1     # (False for NaN)
        if d is not None and not (type(d) is dict and set(d) == {"v", "lo", "hi", "off"} and type(d["v"]) is int
                                  and 0 <= d["v"] < self.n and type(d["lo"]) is int and type(d["hi"]) is int
                                  and -m <= d["lo"] <= 0 <= d["hi"] <= m and num(d["off"])):
            return "drag must be null or {v: vehicle, lo, hi: the travel, off: the offset}"
        if sn is not None and not (type(sn) is dict and set(sn) == {"v", "from"} and type(sn["v"]) is int
                                   and 0 <= sn["v"] < self.n and num(sn["from"])):
            return "snap must be null or {v: vehicle, from: offset}"
        return ""

    def _offset(self, d: dict, x: float, y: float, x0: float, y0: float) -> float:
        disp = (x - x0) if self.horiz[d["v"]] else (y - y0)
        off = disp / self.cell
        return float(min(max(off, d["lo"]), d["hi"]))

    def on_pointer(self, board, kind, x, y, t):
        ui = board.ui
        if kind == "down":
            ui["snap"] = None
            ui["drag"] = None
            if x != x or y != y:
                return []
            state = board.state
            v = self.vehicle_at(state, x, y)
            if v is None:
                return []
            lo, hi = self.travel(state, v)
            ui["drag"] = {"v": v, "lo": lo, "hi": hi, "off": 0.0}
            return [Select(f"vehicle:{v}")]
        d = ui.get("drag")
        if d is None:
            return []
        p = board.pointer
        ok = x == x and y == y
        if ok:
            d["off"] = self._offset(d, x, y, p["x0"], p["y0"])
        if kind == "move":
            return []
        # release (or a release without a position: a cancel)
        ui["drag"] = None
        v, off = d["v"], d["off"]
        k = int(math.floor(off + 0.5))
        k = min(max(k, d["lo"]), d["hi"])
        ui["snap"] = {"v": v, "from": off}
        if k != 0:
            return [Move(self.action_of(v, k))]
        if d["lo"] == 0 and d["hi"] == 0:
            reason, msg = "blocked", "this vehicle cannot move either way"
        elif not ok:
            reason, msg = "cancelled", "the drag was cancelled"
        else:
            reason, msg = "below-snap-threshold", "moved less than half a cell"
        # a recorded invalid attempt (logged and counted as a rejected move)
        return [Reject(f"{self.level.extra['ids'][v]}+0", reason, msg, f"vehicle:{v}")]

    def animation_ms(self, before, after, action, code):
        if is_solved(self.level.lv, after):
            return SNAP_MS + DRIVE_OUT_MS
        return SNAP_MS

    def gesture_for(self, action, proj, suite=None):
        state = suite.session.state if suite is not None and suite.session else self.level.initial
        v, j = divmod(int(action), 2 * self.m)
        k = j + 1 if j < self.m else -(j - self.m + 1)
        x0, y0 = self.vehicle_center(v, int(state[v]))
        x1, y1 = (x0 + k * self.cell, y0) if self.horiz[v] else (x0, y0 + k * self.cell)
        (a, b), (c, d) = proj.to_px(x0, y0), proj.to_px(x1, y1)
        w, h = proj.size
        return {"type": "drag", "x0": round(a), "y0": round(b), "x1": min(max(round(c), 0), w - 1),
                "y1": min(max(round(d), 0), h - 1), "steps": DRAG_STEPS, "ms": DRAG_MS}


RushHour.ui = RushHourUI


PUZZLE = RushHour()
