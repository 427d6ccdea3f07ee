"""Sokoban solver knowledge: what the solvers of longpuzzle know about this game.

- keys: the generic packing over the state's fields, with the tight field spec from
  Puzzle.state_bounds (the keeper's cell in ~10 bits, one bit a floor square for its box);
- expansion: the generic one (the legal steps, through the rules' own kernels);
- heuristic: the sum of the boxes' push distances to the nearest goal (knowledge_kernels.py),
  so the default search is A* and stays optimal in moves;
- the dead-end certificate (``certificate`` / ``Knowledge.dead_end``): a box off the goals on
  a DEAD SQUARE (no goal can be reached from it by pushes even with the board empty: corners
  and wall runs without goals), or a FROZEN box off the goals (it can move along neither axis,
  blocked by walls, dead squares or other frozen boxes). Either makes the level unsolvable:
  a certificate, not a guess.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.solvers.knowledge import Knowledge, field_spec

from longpuzzle_sokoban import knowledge_kernels
from longpuzzle_sokoban.rules import GOAL, HEADER, STEPS, WALL, Sokoban

_PUSHES: dict = {}          # level sha256 -> PUSHES table (bounded: see pushes())


def pushes(level) -> np.ndarray:
    """(R*C,) int64: the fewest pushes taking a lone box from each square to a goal; R*C for
    a dead square or a wall. Found backwards: a box at x can be PULLED to x - d when x - d and
    x - 2d are floor (the keeper steps back from x - d to x - 2d)."""
    got = _PUSHES.get(level.sha256)
    if got is not None:
        return got
    rows, cols = int(level.lv[0]), int(level.lv[1])
    kinds = np.asarray(level.lv[HEADER:HEADER + rows * cols])
    dead = rows * cols
    dist = np.full(rows * cols, dead, np.int64)
    frontier = [int(g) for g in np.flatnonzero(kinds == GOAL)]
    dist[frontier] = 0
    d = 0
    while frontier:
        d += 1
        nxt = []
        for cell in frontier:
            r, c = divmod(cell, cols)
            for dr, dc in STEPS:
                r1, c1, r2, c2 = r + dr, c + dc, r + 2 * dr, c + 2 * dc
                if not (0 <= r2 < rows and 0 <= c2 < cols):
                    continue
                a, b = r1 * cols + c1, r2 * cols + c2
                if kinds[a] != WALL and kinds[b] != WALL and dist[a] == dead:
                    dist[a] = d
                    nxt.append(a)
        frontier = nxt
    if len(_PUSHES) > 256:
        _PUSHES.clear()
    dist.setflags(write=False)
    _PUSHES[level.sha256] = dist
    return dist


def certificate(level, state) -> str | None:
    """Why ``state`` is certainly a dead end ("dead square at (r, c)" / "frozen box at
    (r, c)"), or None when this cheap test proves nothing."""
    rows, cols = int(level.lv[0]), int(level.lv[1])
    kinds = np.asarray(level.lv[HEADER:HEADER + rows * cols])
    dead = rows * cols
    dist = pushes(level)
    boxes = np.asarray(state[2:2 + rows * cols]) != 0
    for cell in np.flatnonzero(boxes & (kinds != GOAL)):
        if dist[cell] >= dead:
            return f"dead square at {divmod(int(cell), cols)}"

    def blocked(cell: int, axis: int, busy: set) -> bool:
        """Can the box at ``cell`` never move along ``axis`` (0 vertical, 1 horizontal)?"""
        r, c = divmod(cell, cols)
        ends = [(r - 1, c), (r + 1, c)] if axis == 0 else [(r, c - 1), (r, c + 1)]
        cells = [rr * cols + cc if 0 <= rr < rows and 0 <= cc < cols else -1 for rr, cc in ends]
        if any(x < 0 or kinds[x] == WALL for x in cells):
            return True                     # a wall on one side: no push along this axis
        if all(dist[x] >= dead for x in cells):
            return True                     # both ways lead onto dead squares
        return any(boxes[x] and frozen(x, busy) for x in cells)

    def frozen(cell: int, busy: set) -> bool:
        if cell in busy:
            return True                     # (a box met again: treated as a wall, the usual test)
        busy = busy | {cell}
        return blocked(cell, 0, busy) and blocked(cell, 1, busy)

    for cell in np.flatnonzero(boxes & (kinds != GOAL)):
        if frozen(int(cell), set()):
            return f"frozen box at {divmod(int(cell), cols)}"
    return None


class SokobanKnowledge(Knowledge):
    game = Sokoban.id
    kernels = knowledge_kernels
    method = "astar"
    exact_method = True

    def spec(self, level):
        lo, hi = Sokoban.state_bounds(None, level)
        return field_spec(level, lo, hi)

    def aux(self, level):
        spec, _ = self.spec(level)
        return np.concatenate([spec, pushes(level)])

    def dead_end(self, level, state):
        return True if certificate(level, state) is not None else None


KNOWLEDGE = SokobanKnowledge()
