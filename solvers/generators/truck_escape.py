"""Truck Escape levels, solvable by construction: trucks are placed in reverse clearing order.

A truck can leave when no remaining truck stands in its lane (the cells ahead of its head up
to the field's edge). Placing trucks in the reverse of the order they will leave, each new
truck goes on free cells with a lane that holds none of the trucks already placed (those
leave after it); trucks placed later may stand in its lane, since they leave before it. The
placement order reversed is then a clearing order (recorded as ``clearing_order``), so the
level is solvable, and every solution removes each truck once: the optimal length is the
number of trucks. Trucks are drawn near the ones already placed, so lanes cross and most
trucks start blocked, as in the catalogue.

Shapes (from the catalogue tier): field rows, cols and truck count; a draw keeps the field
and varies the count by up to 3 within the tier's range. The field fits the screen's field
box (scale = min(480 / width, 560 / height), as every catalogue level).
"""

from __future__ import annotations

import random

from longpuzzle.solvers.generators.base import Generator, TierSpec

DIRECTIONS = ("up", "down", "left", "right")
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
COLOURS = ("yellow", "gray_green", "blue", "red")


class TruckEscapeGenerator(Generator):
    game = "truck_escape"
    version = 1
    beyond = TierSpec("truck_escape", "beyond", {"optimal": (30, 50)},
                      tuple({"rows": r, "cols": c, "trucks": n} for r, c, n in
                            ((13, 11, 32), (13, 11, 40), (14, 12, 45), (14, 12, 50))),
                      "above the catalogue's 10-28 trucks: the 30-50 trucks the original's level titles announce")

    confirm_with_solver = False      # the profile is the greedy solver's own (exact) result

    def shape(self, level):
        return {"rows": int(level.lv[0]), "cols": int(level.lv[1]), "trucks": int(level.lv[2])}

    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        rows, cols = int(sh["rows"]), int(sh["cols"])
        lo, hi = tier.accept.get("optimal", (None, None))
        n = int(sh["trucks"]) + rng.randint(-3, 3)
        n = max(n, lo or 1)
        n = min(n, hi or n, rows * cols // 2)
        owner: dict[tuple[int, int], int] = {}
        placed: list[dict] = []
        for i in range(n):
            cands = []
            for _ in range(60):
                if placed and rng.random() < 0.8:           # next to a placed truck: lanes cross
                    t = rng.choice(placed)
                    br, bc = rng.choice((t["tail"], t["head"]))
                    r, c = br + rng.randint(-2, 2), bc + rng.randint(-2, 2)
                else:
                    r, c = rng.randrange(rows), rng.randrange(cols)
                d = rng.randrange(4)
                dr, dc = STEPS[d]
                hr, hc = r + dr, c + dc
                if not (0 <= r < rows and 0 <= c < cols and 0 <= hr < rows and 0 <= hc < cols):
                    continue
                if (r, c) in owner or (hr, hc) in owner:
                    continue
                lr, lc = hr + dr, hc + dc
                clear = True
                while 0 <= lr < rows and 0 <= lc < cols:
                    if (lr, lc) in owner:
                        clear = False
                        break
                    lr, lc = lr + dr, lc + dc
                if clear:
                    cands.append((r, c, d))
                    break
            if not cands:
                return None
            r, c, d = cands[0]
            dr, dc = STEPS[d]
            owner[(r, c)] = owner[(r + dr, c + dc)] = i
            placed.append({"tail": [r, c], "head": [r + dr, c + dc], "direction": DIRECTIONS[d]})
        # ids in clearing order: the last truck placed leaves first
        order = list(reversed(placed))
        trucks = [{"id": f"t{j}", "tail": t["tail"], "head": t["head"], "direction": t["direction"],
                   "color": COLOURS[j % len(COLOURS)]} for j, t in enumerate(order)]
        return {"rows": rows, "cols": cols, "cell_size": 60, "truck_length": 120, "truck_width": 51,
                "trucks": trucks, "clearing_order": [t["id"] for t in trucks]}


GENERATOR = TruckEscapeGenerator()
