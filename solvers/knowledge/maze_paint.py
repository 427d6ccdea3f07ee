"""Maze Paint: keys hold the ball cell and one bit per floor cell (walls and the start cell,
always painted, take no bits). Breadth-first search is optimal in moves (a swipe into a wall
is a counted no-op, never part of a shortest solution, and the search never makes it)."""

from __future__ import annotations

from longpuzzle.solvers.knowledge import Knowledge, field_spec

HEADER = 4


class MazePaintKnowledge(Knowledge):
    game = "maze_paint"
    method = "bfs"

    def spec(self, level):
        lv = level.lv
        rows, cols, n_floor, start = (int(x) for x in lv[:4])
        ncell = rows * cols
        lo = [0, 0] + [0] * ncell
        hi = [ncell - 1, n_floor] + [0] * ncell
        for cell in range(ncell):
            if lv[HEADER + cell]:
                hi[2 + cell] = 1
        lo[2 + start] = hi[2 + start] = 1
        return field_spec(level, lo, hi)


KNOWLEDGE = MazePaintKnowledge()
