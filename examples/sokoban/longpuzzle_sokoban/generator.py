"""Sokoban levels, solvable by construction and certified by the solvers.

A draw lays out a room of the tier's shape (a walled rectangle with a few interior walls that
keep its floor connected), puts every box on a goal and the keeper on a free square, then
plays the game BACKWARDS: a random walk of the keeper that, on a coin toss, pulls the box
behind it (the reverse of a push). Every state of that walk reaches the solved one by pushes,
so the start it ends on is solvable; the driver (longpuzzle.solvers.generators.base) then
certifies it with the exhaustive solvers (optimal length, reachable states), replays the
certified solution through the rules, and keeps it when its figures lie in the tier's
accepted ranges (tiers.json beside this file, named by the declaration).
"""

from __future__ import annotations

import random

from longpuzzle.engine.catalog import BEYOND
from longpuzzle.solvers.generators.base import Generator, TierSpec

from longpuzzle_sokoban.rules import HEADER, STEPS, WALL, Sokoban, layout_of

WALKS = 24                    # backward walks a draw chooses from


def _pull_distances(floor: set, goals) -> dict:
    """(r, c) -> the fewest pushes from there to some goal for a lone box (pulls backwards
    from the goals; knowledge.pushes does the same on a built level)."""
    dist = dict.fromkeys(goals, 0)
    frontier = list(goals)
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in STEPS:
                a, b = (r + dr, c + dc), (r + 2 * dr, c + 2 * dc)
                if a in floor and b in floor and a not in dist:
                    dist[a] = dist[(r, c)] + 1
                    nxt.append(a)
        frontier = nxt
    return dist


def _connected(floor: set, rows: int, cols: int) -> bool:
    start = next(iter(floor))
    seen, todo = {start}, [start]
    while todo:
        r, c = todo.pop()
        for dr, dc in STEPS:
            n = (r + dr, c + dc)
            if n in floor and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(floor)


class SokobanGenerator(Generator):
    game = Sokoban.id
    version = 1
    # the catalogue tiers come from the tier data the declaration names (tiers.json beside
    # this file); beyond is above the hardest
    beyond = TierSpec(Sokoban.id, BEYOND, {"optimal": (34, 120), "states": (None, 2_000_000)},
                      ({"rows": 9, "cols": 9, "boxes": 4, "floor": 38},
                       {"rows": 9, "cols": 10, "boxes": 4, "floor": 42}),
                      "above hard: 34-120 moves, 4 boxes")

    def name(self) -> str:
        """What level records name as their recipe (the default names longpuzzle's own modules)."""
        return "longpuzzle_sokoban.generator"

    def shape(self, level):
        kinds = level.lv[HEADER:HEADER + int(level.lv[0]) * int(level.lv[1])]
        return {"rows": int(level.lv[0]), "cols": int(level.lv[1]), "boxes": int(level.lv[2]),
                "floor": int((kinds != WALL).sum())}

    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        rows, cols, boxes = int(sh["rows"]), int(sh["cols"]), int(sh["boxes"])
        inner = [(r, c) for r in range(1, rows - 1) for c in range(1, cols - 1)]
        floor = set(inner)
        # interior walls: down to the shape's floor count, keeping the floor in one piece
        want = int(sh.get("floor", len(inner)))
        for cell in rng.sample(inner, len(inner)):
            if len(floor) <= want:
                break
            floor.discard(cell)
            if not _connected(floor, rows, cols):
                floor.add(cell)
        free = sorted(floor)
        if len(free) < boxes + 3:
            return None
        goals = rng.sample(free, boxes)
        dist = _pull_distances(floor, goals)
        # several backward walks; keep the one whose boxes lie farthest (in pushes) from the
        # goals, up to a target drawn for the tier (a cheap guess at the optimum: the
        # solvers decide)
        lo, hi = tier.accept.get("optimal", (None, None))
        target = rng.uniform(lo or 1, hi or 2 * (lo or 10)) / 3.0
        best = None
        for _ in range(WALKS):
            box, keeper = self._walk(rng, floor, free, goals, boxes, dist)
            if box == set(goals):
                continue
            score = sum(dist.get(b, 0) for b in box)
            gap = abs(score - target)
            if best is None or gap < best[0]:
                best = (gap, box, keeper)
        if best is None:
            return None
        _, box, keeper = best
        layout = []
        for r in range(rows):
            row = []
            for c in range(cols):
                cell = (r, c)
                if cell not in floor:
                    row.append("#")
                elif cell == keeper:
                    row.append("+" if cell in goals else "@")
                elif cell in box:
                    row.append("*" if cell in goals else "$")
                else:
                    row.append("." if cell in goals else "-")
            layout.append("".join(row))
        return {"layout": layout}

    @staticmethod
    def _walk(rng, floor, free, goals, boxes, dist):
        """The backward walk: boxes start on the goals; the keeper steps at random and pulls
        the box behind it (the reverse of a push), readily when that takes the box farther
        from the goals (``dist``: pushes to the nearest goal), seldom when nearer."""
        box = set(goals)
        keeper = rng.choice([c for c in free if c not in box])
        for _ in range(rng.randint(40 * boxes, 120 * boxes)):
            dr, dc = rng.choice(STEPS)
            to = (keeper[0] + dr, keeper[1] + dc)
            if to not in floor or to in box:
                continue
            behind = (keeper[0] - dr, keeper[1] - dc)
            if behind in box and rng.random() < (0.9 if dist.get(keeper, 0) > dist.get(behind, 0) else 0.25):
                box.remove(behind)
                box.add(keeper)
            keeper = to
        return box, keeper

    def finish(self, record, level, profile):
        record["optimal_moves"] = profile.optimal
        return record


GENERATOR = SokobanGenerator()

__all__ = ["GENERATOR", "SokobanGenerator", "layout_of"]
