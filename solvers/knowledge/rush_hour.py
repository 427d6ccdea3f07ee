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
            bush = 0
            g = HEADER + 3 * n
            for cell in range(rows * cols):
                if lv[g + cell]:
                    bush |= 1 << cell
            fast[1] = np.int64(np.uint64(bush).view(np.int64)) if bush >= 1 << 63 else bush
            for v in range(n):
                o, length, fixed = (int(x) for x in lv[HEADER + 3 * v:HEADER + 3 * v + 3])
                cells = [fixed * cols + k for k in range(length)] if o == 0 else [k * cols + fixed for k in range(length)]
                unit = sum(1 << c for c in cells)
                fast[2 + 2 * v] = unit if unit < 1 << 63 else int(np.uint64(unit).view(np.int64))
                fast[3 + 2 * v] = 1 if o == 0 else cols
        return np.concatenate([a, np.zeros(rows * cols, np.int64), fast])


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
