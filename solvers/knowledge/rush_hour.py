"""Rush Hour: compact keys (each vehicle's coordinate in the bits its range needs) and a fast
successor generator on an occupancy grid. Breadth-first search is optimal in moves."""

from __future__ import annotations

import numpy as np

from longpuzzle.solvers.knowledge import Knowledge, field_spec
from longpuzzle.solvers.knowledge import rush_hour_kernels

HEADER = 10


class RushHourKnowledge(Knowledge):
    game = "rush_hour"
    kernels = rush_hour_kernels
    method = "bfs"
    local_graphs = False          # every move can be undone: a later state reaches as much as the start

    def spec(self, level):
        """Only its length is used (aux[0] = W is set by aux()); keys are 4 bits a vehicle."""
        lv = level.lv
        rows, cols, n = int(lv[0]), int(lv[1]), int(lv[2])
        hi = []
        for v in range(n):
            side = cols if lv[HEADER + 3 * v] == 0 else rows
            hi.append(side - int(lv[HEADER + 3 * v + 1]))
        return field_spec(level, [0] * n, hi)

    def words(self, level):
        return (int(level.lv[2]) + 15) // 16

    def aux(self, level):
        a, _ = self.spec(level)
        rows, cols = int(level.lv[0]), int(level.lv[1])
        a = a.copy()
        a[0] = self.words(level)
        lv = level.lv
        n = int(lv[2])
        fast = np.zeros(2 + 2 * n, np.int64)
        if rows * cols <= 64:
            fast[0] = 1
            fast[1] = _i64(sum(1 << c for c in range(rows * cols) if lv[HEADER + 3 * n + c]))
            for v in range(n):
                o, length, fixed = (int(x) for x in lv[HEADER + 3 * v:HEADER + 3 * v + 3])
                cells = [fixed * cols + k for k in range(length)] if o == 0 else [k * cols + fixed for k in range(length)]
                fast[2 + 2 * v] = _i64(sum(1 << c for c in cells))
                fast[3 + 2 * v] = 1 if o == 0 else cols
        out = [a, np.zeros(rows * cols, np.int64), fast]
        if rows * cols <= 64 and n <= 16 and rows <= 8 and cols <= 8:
            start = sum(x.shape[0] for x in out)
            out[0][1] = start + 4
            out.append(self._line_tables(level, start))
        else:
            out[0][1] = 0
        return np.concatenate(out)

    def _line_tables(self, level, start):
        """The one-word bitboard block of rush_hour_kernels' docstring (E = start + 4)."""
        lv = level.lv
        rows, cols, n, t, m = (int(x) for x in lv[[0, 1, 2, 3, 5]])
        bush = bush_t = 0
        for r in range(rows):
            for c in range(cols):
                if lv[HEADER + 3 * n + r * cols + c]:
                    bush |= 1 << (r * cols + c)
                    bush_t |= 1 << (c * rows + r)
        head = [cols - int(lv[HEADER + 3 * t + 1]), _i64(bush_t), _i64(bush), 0]
        veh, units, units_t = [], [], []
        for v in range(n):
            o, length, fixed = (int(x) for x in lv[HEADER + 3 * v:HEADER + 3 * v + 3])
            if o == 0:   # horizontal: its line is row `fixed` of the row-major board
                unit = sum(1 << (fixed * cols + k) for k in range(length))
                unit_t = sum(1 << (k * rows + fixed) for k in range(length))
                veh += [fixed * cols, length, 0, v * 2 * m, int(v == t), 1, rows, 0]
            else:        # vertical: its line is column `fixed` of the column-major board
                unit = sum(1 << (k * cols + fixed) for k in range(length))
                unit_t = sum(1 << (fixed * rows + k) for k in range(length))
                veh += [fixed * rows, length, 1, v * 2 * m, 0, cols, 1, 0]
            units.append(_i64(unit))
            units_t.append(_i64(unit_t))
        lines = []
        for side in (cols, rows):
            for p in range(side):
                for pat in range(1 << side):
                    back = 0
                    while p - back - 1 >= 0 and not pat >> (p - back - 1) & 1:
                        back += 1
                    fwd = 0
                    while p + fwd + 1 < side and not pat >> (p + fwd + 1) & 1:
                        fwd += 1
                    lines.append(back | fwd << 8)
        return np.array(head + veh + units + units_t + lines, np.int64)


def _i64(x: int) -> int:
    """A 64-bit pattern as a signed int64 value."""
    return x - (1 << 64) if x >= 1 << 63 else x


KNOWLEDGE = RushHourKnowledge()


def database_record(board: str, *, name: str = "") -> dict:
    """A rush_hour level record from the 6x6 database notation of the public database of all
    Rush Hour puzzles: 36 characters row-major, 'o' (or '.') empty, 'x' a wall (a bush here),
    'A' the target car on the third row, other letters vehicles."""
    if len(board) != 36:
        raise ValueError("a database board has 36 characters (6 x 6, row-major)")
    cells: dict[str, list[tuple[int, int]]] = {}
    blockers = []
    for i, ch in enumerate(board):
        r, c = divmod(i, 6)
        if ch in "o.":
            continue
        if ch == "x":
            blockers.append({"id": f"wall_{len(blockers)}", "row": r, "col": c})
            continue
        cells.setdefault(ch, []).append((r, c))
    vehicles = []
    for ch in sorted(cells):
        cs = sorted(cells[ch])
        (r0, c0), (r1, c1) = cs[0], cs[-1]
        horiz = r0 == r1
        if len(cs) not in (2, 3) or (horiz and c1 - c0 != len(cs) - 1) or (not horiz and (c0 != c1 or r1 - r0 != len(cs) - 1)):
            raise ValueError(f"vehicle {ch!r} is not a straight 2- or 3-cell vehicle")
        vehicles.append({"id": f"car_{ch}", "row": r0, "col": c0, "length": len(cs),
                         "orientation": "horizontal" if horiz else "vertical", "target": ch == "A"})
    return {"name": name or board, "rows": 6, "cols": 6, "exit_row": 2, "exit_side": "right",
            "vehicles": vehicles, "blockers": blockers}
