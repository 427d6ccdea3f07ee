"""Maze Paint levels, solvable by construction: the board is carved by the ball's own slides.

Starting from a board of undecided cells, the ball slides from its cell in a random direction
a random number of cells: the cells it crosses become floor and the cell after its stop is
fixed as a wall (or is the board's edge), so that slide stays exactly what the rules do
whatever is carved later (a slide depends only on the floor it crosses and the wall it stops
at, and a fixed wall is never carved). The walk goes on until the board has its tier's number
of floor cells; undecided cells become walls. The walk paints every floor cell, so the level
is solvable; the solvers then give its optimal number of swipes, which decides the tier.

Shapes (from the catalogue tier): rows, cols and floor cells of a catalogue level; a draw
keeps the size and aims at that floor count (+-15%). The board fits the screen like every
catalogue board (cell = min(84, 432 / cols, 560 / rows) design px).
"""

from __future__ import annotations

import random

from longpuzzle.solvers.generators.base import Generator, TierSpec

UNKNOWN, FLOOR, WALL = 0, 1, 2
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
MAX_SIDE = 14


class MazePaintGenerator(Generator):
    game = "maze_paint"
    version = 1
    beyond = TierSpec("maze_paint", "beyond", {"optimal": (26, 40), "states": (None, 400_000)},
                      tuple({"rows": r, "cols": c, "floor": f} for r, c, f in
                            ((11, 11, 80), (12, 10, 84), (12, 12, 96), (13, 10, 90), (14, 10, 98), (12, 11, 90))),
                      "above hard (18-25 swipes): 26-40 swipes on boards up to 14 x 12")

    def shape(self, level):
        rows, cols = int(level.lv[0]), int(level.lv[1])
        return {"rows": rows, "cols": cols, "floor": int(level.lv[2])}

    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        rows, cols = int(sh["rows"]), int(sh["cols"])
        if rng.random() < 0.5 and rows <= 12 and cols <= 10 and rows != cols:
            rows, cols = cols, rows                     # the transposed board fits the screen too
        target = max(4, min(rows * cols - 1, round(sh["floor"] * rng.uniform(0.85, 1.15))))
        grid = [UNKNOWN] * (rows * cols)
        r0, c0 = rng.randrange(rows), rng.randrange(cols)
        grid[r0 * cols + c0] = FLOOR
        floor = 1
        pos = (r0, c0)
        stuck = slides = 0
        while floor < target and stuck < 40:
            d = rng.randrange(4)
            dr, dc = STEPS[d]
            r, c = pos
            stops = []
            k = 0
            while True:
                rr, cc = r + (k + 1) * dr, c + (k + 1) * dc
                if not (0 <= rr < rows and 0 <= cc < cols) or grid[rr * cols + cc] == WALL:
                    break
                k += 1
                nr, nc = rr + dr, cc + dc
                # the slide may stop at step k if the next cell is (or can become) a wall
                if not (0 <= nr < rows and 0 <= nc < cols) or grid[nr * cols + nc] != FLOOR:
                    stops.append(k)
            if not stops:
                stuck += 1
                continue
            # prefer slides that paint something new
            fresh = [s for s in stops if any(grid[(r + i * dr) * cols + c + i * dc] == UNKNOWN for i in range(1, s + 1))]
            if not fresh and rng.random() < 0.7:
                stuck += 1
                continue
            k = rng.choice(fresh or stops)
            for i in range(1, k + 1):
                cell = (r + i * dr) * cols + c + i * dc
                if grid[cell] == UNKNOWN:
                    grid[cell] = FLOOR
                    floor += 1
            nr, nc = r + (k + 1) * dr, c + (k + 1) * dc
            if 0 <= nr < rows and 0 <= nc < cols:
                grid[nr * cols + nc] = WALL
            pos = (r + k * dr, c + k * dc)
            slides += 1
            stuck = 0
        if floor < max(4, int(target * 0.8)):
            return None
        lo = tier.accept.get("optimal", (None, None))[0]
        if lo is not None and slides < lo:          # the walk is a solution: optimal <= slides
            return None
        # crop to the floor's bounding box
        rs = [i // cols for i in range(rows * cols) if grid[i] == FLOOR]
        cs = [i % cols for i in range(rows * cols) if grid[i] == FLOOR]
        layout = []
        for r in range(min(rs), max(rs) + 1):
            row = []
            for c in range(min(cs), max(cs) + 1):
                if (r, c) == (r0, c0):
                    row.append("S")
                else:
                    row.append("." if grid[r * cols + c] == FLOOR else "#")
            layout.append("".join(row))
        if len(layout) > MAX_SIDE or len(layout[0]) > MAX_SIDE:
            return None
        return {"layout": layout}

    def finish(self, record, level, profile):
        record["optimal_moves"] = profile.optimal
        return record


GENERATOR = MazePaintGenerator()
