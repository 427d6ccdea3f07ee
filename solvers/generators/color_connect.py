"""Color Connect levels, solvable by construction: the board is covered by paths first and the
pairs are the paths' ends (as Flow-style puzzles are made).

Paths are grown one at a time from a free cell with few free neighbours, each step going to
the free neighbour with the fewest free neighbours of its own (ties at random), so the growth
does not strand cells; each path stops at a drawn length (the board's cells over the pairs
wanted) or when stuck. A left-over cell next to a path's end extends that path; a board with
cells nothing can take, or with a path shorter than three cells, is drawn again. The covering
is a solution (recorded as the level's ``solution`` routes: it fills the board, as the
catalogue's reference solutions do); the route search then certifies the level.

Shapes (from the catalogue tier): rows, cols and pairs of a catalogue level; a draw keeps the
board and aims at that number of pairs (+-2, within the tier's range). Boards fit the screen
as every catalogue board (pitch = min(88, 520 / cols, 600 / rows) design px).
"""

from __future__ import annotations

import random

from longpuzzle.solvers.generators.base import Generator, TierSpec
from longpuzzle.puzzles.color_connect import MAX_COLORS, PALETTE

MIN_PATH = 3


def cover(rng: random.Random, rows: int, cols: int, pairs: int) -> list[list[int]] | None:
    """Paths (cell lists) covering the whole board, about ``pairs`` of them; None on failure."""
    n = rows * cols
    free = [True] * n

    def nbrs(c):
        r, q = divmod(c, cols)
        if r > 0:
            yield c - cols
        if r < rows - 1:
            yield c + cols
        if q > 0:
            yield c - 1
        if q < cols - 1:
            yield c + 1

    def degree(c):
        return sum(1 for x in nbrs(c) if free[x])

    paths: list[list[int]] = []
    left = n
    while left:
        k_left = max(pairs - len(paths), 1)
        mean = left / k_left
        length = max(MIN_PATH, round(rng.uniform(0.6, 1.4) * mean))
        cells = [c for c in range(n) if free[c]]
        low = min(degree(c) for c in cells)
        start = rng.choice([c for c in cells if degree(c) == low])
        path = [start]
        free[start] = False
        left -= 1
        while len(path) < length:
            opts = [x for x in nbrs(path[-1]) if free[x]]
            if not opts:
                break
            best = min(degree(x) for x in opts)
            nxt = rng.choice([x for x in opts if degree(x) == best])
            path.append(nxt)
            free[nxt] = False
            left -= 1
        paths.append(path)
    # short paths: merge into a neighbouring path's end, else give up on this board
    changed = True
    while changed:
        changed = False
        for p in list(paths):
            if len(p) >= MIN_PATH:
                continue
            for q in paths:
                if q is p:
                    continue
                if _adjacent(q[-1], p[0], cols):
                    q.extend(p)
                elif _adjacent(q[-1], p[-1], cols):
                    q.extend(reversed(p))
                elif _adjacent(q[0], p[-1], cols):
                    q[:0] = p
                elif _adjacent(q[0], p[0], cols):
                    q[:0] = list(reversed(p))
                else:
                    continue
                paths.remove(p)
                changed = True
                break
            if changed:
                break
    if any(len(p) < MIN_PATH for p in paths):
        return None
    return paths


def _adjacent(a: int, b: int, cols: int) -> bool:
    ra, ca = divmod(a, cols)
    rb, cb = divmod(b, cols)
    return abs(ra - rb) + abs(ca - cb) == 1


class ColorConnectGenerator(Generator):
    game = "color_connect"
    version = 1
    beyond = TierSpec("color_connect", "beyond", {"cells": (122, 200), "pairs": (13, MAX_COLORS)},
                      tuple({"rows": r, "cols": c, "pairs": k} for r, c, k in
                            ((12, 11, 15), (11, 12, 15), (12, 11, 14), (11, 12, 14))),
                      "above hard (49-121 cells, 5-15 pairs): 132 cells with 13-15 pairs")

    confirm_with_solver = False      # the profile is the route search's own certificate
    node_budget = 30_000             # route-search nodes per draw: a board needing more is drawn again

    def shape(self, level):
        return {"rows": int(level.lv[0]), "cols": int(level.lv[1]), "pairs": int(level.lv[2])}

    def certify(self, level, tier, context=None):
        from longpuzzle.solvers.profile import profile
        return profile(level, budget=self.node_budget)

    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        rows, cols = int(sh["rows"]), int(sh["cols"])
        lo, hi = tier.accept.get("pairs", (1, MAX_COLORS))
        k = int(sh["pairs"]) + rng.randint(-2, 2)
        k = max(k, lo or 1, 2)
        k = min(k, hi or MAX_COLORS, MAX_COLORS, rows * cols // MIN_PATH)
        paths = cover(rng, rows, cols, k)
        if paths is None or not (lo or 1) <= len(paths) <= min(hi or MAX_COLORS, MAX_COLORS):
            return None
        names = list(PALETTE)[:len(paths)]
        rng.shuffle(paths)
        pairs, routes = [], []
        for name, p in zip(names, paths):
            cells = [divmod(c, cols) for c in p]
            pairs.append({"color": name, "endpoints": [list(cells[0]), list(cells[-1])]})
            routes.append(f"{name}:" + "-".join(f"{r},{c}" for r, c in cells))
        return {"rows": rows, "cols": cols, "pairs": pairs, "solution": routes}


GENERATOR = ColorConnectGenerator()
