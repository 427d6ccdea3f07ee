"""Rush Hour levels by reverse play from a solved board (as the complete Rush Hour databases
are made): every position is the solution played backwards.

Vehicles (and bushes) are placed at random around the target standing at the exit: a solved
board. Every slide can be slid back, so the positions connected to it are exactly those from
which it can be reached; one search of that whole component (solvers/profile.StateGraph,
without terminal states) gives each position's distance to the nearest win. The start is a
position at a distance the tier asks for (drawn from the farthest ones), so it is solvable
by construction, its optimal length is known, and its remaining figures (reachable states
with wins terminal, optimal first moves, an optimal solution, recorded as the level's
``reference_solution`` for the progress measure) are read off the same graph; the driver
then confirms it with the exhaustive solver.

Medium is a tier of large boards (7 x 7 and 8 x 7, 8-14 vehicles) with SHORT solutions: its
optimal lengths (3-10) overlap easy (4-6) and hard (7-15); what sets it apart is the state
count, at least 34,898 (its largest level has more than the profile's 10 M budget, so that
end of the range is open). Searching whole components that large per draw is what made it
slow (about one level a second), so a tier defined by a floor on the states is drawn from the
first LAYER_BUDGET states around the solved board (a start whose stored distance to a win is
the largest the tier allows), and certified by a breadth-first graph from the start cut off
at the floor: its state count is then a proven lower bound ("at least 34,898"), and its
whole first layers prove the optimum and the optimal first moves exactly
(solvers.profile.StateGraph.certified_depth); a start whose optimum lies past them is drawn
again.

Shapes (from the catalogue tier): rows, cols, vehicles, 3-cell vehicles, bushes.
"""

from __future__ import annotations

import random

import numpy as np

from longpuzzle.solvers.generators.base import Generator, Proposal, TierSpec
from longpuzzle.engine.registry import get_puzzle

SHORT = (("sedan", "white"), ("sedan", "blue"), ("coupe", "white"), ("coupe", "cream"), ("pickup", "sand"),
         ("pickup", "white"))
LONG = (("bus", "purple"), ("bus", "sand"), ("semi", "sand"), ("semi", "purple"))
COMPONENT_FACTOR = 6          # a component may hold this many times the tier's largest state count,
COMPONENT_CAP = 100_000       # and no more than this (larger boards are drawn again: time)
LAYER_BUDGET = 8_000          # states of the layers around a solved board that a floor tier draws starts from


class RushHourGenerator(Generator):
    game = "rush_hour"
    version = 1
    beyond = TierSpec("rush_hour", "beyond", {"optimal": (16, 25), "states": (None, 150_000)},
                      tuple({"rows": r, "cols": c, "vehicles": v, "long": lg, "bushes": b} for r, c, v, lg, b in
                            ((6, 6, 12, 3, 0), (6, 6, 11, 2, 1), (6, 6, 13, 4, 0), (7, 6, 12, 3, 1), (6, 5, 10, 1, 0))),
                      "above hard (7-15 moves): 16-25 moves on 6 x 5 to 7 x 6 boards")

    def shape(self, level):
        ex = level.extra
        return {"rows": int(level.lv[0]), "cols": int(level.lv[1]), "vehicles": int(level.lv[2]),
                "long": sum(1 for v in ex["vehicles"] if v["length"] == 3), "bushes": len(ex["blockers"])}

    def propose(self, rng: random.Random, tier: TierSpec):
        from longpuzzle.solvers.profile import StateGraph

        sh = rng.choice(tier.shapes)
        rows, cols = int(sh["rows"]), int(sh["cols"])
        exit_row = min(2, rows - 1)
        n_veh = max(2, int(sh["vehicles"]) + rng.randint(-1, 1))
        n_long = min(int(sh["long"]), n_veh - 1)
        occupied = {(exit_row, cols - 2), (exit_row, cols - 1)}
        vehicles = [{"id": "red_target", "row": exit_row, "col": cols - 2, "length": 2, "orientation": "horizontal",
                     "style": "target", "color": "red", "target": True}]
        for i in range(1, n_veh):
            length = 3 if i <= n_long else 2
            for _ in range(40):
                horiz = rng.random() < 0.5
                if horiz:
                    r, c = rng.randrange(rows), rng.randrange(cols - length + 1)
                    if r == exit_row:
                        continue                  # it could never pass the target
                    cells = [(r, c + k) for k in range(length)]
                else:
                    r, c = rng.randrange(rows - length + 1), rng.randrange(cols)
                    cells = [(r + k, c) for k in range(length)]
                if any(x in occupied for x in cells):
                    continue
                occupied.update(cells)
                style, colour = rng.choice(LONG if length == 3 else SHORT)
                vehicles.append({"id": f"{colour}_{style}_{i}", "row": r, "col": c, "length": length,
                                 "orientation": "horizontal" if horiz else "vertical", "style": style,
                                 "color": colour})
                break
            else:
                return None
        bushes = []
        for j in range(int(sh["bushes"])):
            free = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in occupied and r != exit_row]
            if not free:
                return None
            r, c = rng.choice(free)
            occupied.add((r, c))
            bushes.append({"id": f"bush_{j}", "row": r, "col": c})
        solved = {"rows": rows, "cols": cols, "exit_row": exit_row, "exit_side": "right", "vehicles": vehicles,
                  "blockers": bushes}
        p = get_puzzle(self.game)
        level = p.build_level(solved, difficulty=tier.name, number=1, where="<generator>")
        lo_st, hi = tier.accept.get("states", (None, None))
        if hi is None:
            return self._layered_start(rng, tier, level, solved, vehicles, int(lo_st or 0))
        budget = min(int(hi) * COMPONENT_FACTOR, COMPONENT_CAP) if hi is not None else COMPONENT_CAP
        g = StateGraph(level, terminal=False, budget=budget)
        if not g.complete:
            return None
        dist = g.distances()
        lo_opt, hi_opt = tier.accept.get("optimal", (1, None))
        top = int(dist.max())
        want_hi = top if hi_opt is None else min(top, int(hi_opt))
        want_lo = max(int(lo_opt or 1), 1)
        if want_hi < want_lo:
            return None
        # the farthest positions the tier allows are the hardest starts its boards give
        d = want_hi if rng.random() < 0.6 else rng.randint(want_lo, want_hi)
        ids = np.flatnonzero(dist == d)
        sid = int(ids[rng.randrange(ids.shape[0])])
        start = g.state(sid)
        for v, veh in enumerate(vehicles):
            if veh["orientation"] == "horizontal":
                veh["col"] = int(start[v])
            else:
                veh["row"] = int(start[v])
        return Proposal(solved, (g, sid))

    def _layered_start(self, rng, tier, level, solved, vehicles, floor):
        """A start for a tier defined by a FLOOR on the reachable states (medium: at least
        34,898; its largest catalogue level has more than the profile's budget): the first
        breadth-first layers around the solved board (LAYER_BUDGET states) give starts at a
        known distance from it (at most their optimum); certify then counts the start's
        states up to the floor and proves the optimum from the layers it expanded."""
        from longpuzzle.solvers.profile import StateGraph

        g = StateGraph(level, terminal=False, budget=LAYER_BUDGET)
        dist = g.distances()           # over the stored moves: at least the true distance to a win
        lo_opt, hi_opt = tier.accept.get("optimal", (1, None))
        top = min(int(dist.max()), int(hi_opt) if hi_opt is not None else 1 << 30)
        want_lo = max(int(lo_opt or 1), 1)
        if top < want_lo:
            return None
        d = top if rng.random() < 0.6 else rng.randint(want_lo, top)
        ids = np.flatnonzero(dist == d)
        start = g.state(int(ids[rng.randrange(ids.shape[0])]))
        for v, veh in enumerate(vehicles):
            if veh["orientation"] == "horizontal":
                veh["col"] = int(start[v])
            else:
                veh["row"] = int(start[v])
        return Proposal(solved, ("floor", max(floor, 1)))

    def certify(self, level, tier, context=None):
        """The start's figures from the component graph its proposal searched (wins terminal
        from the start: the states reachable before any win); for a tier with a floor on the
        states, a breadth-first graph from the start cut off at the floor (states: exact
        below it, else the floor as a proven lower bound; the optimum and the optimal first
        moves proven by its whole layers, solvers.profile.StateGraph.certified_depth)."""
        from longpuzzle.solvers.profile import Profile, graph_profile
        if context is None:
            return super().certify(level, tier)
        if context[0] == "floor":
            return graph_profile(level, budget=context[1], bounded=False)
        g, sid = context
        p = get_puzzle(self.game)
        dist = g.distances()
        reach = g.reachable(sid, terminal=True)
        d0 = int(dist[sid])
        legal = p.legal_moves(level, level.initial)
        opt_first = sum(1 for _, v in g.first_moves(level.initial) if v >= 0 and dist[v] == d0 - 1)
        acts = g.path_to_win(level.initial)
        return Profile(level.id, level.game, "solvable", optimal=d0, lower_bound=d0, upper_bound=d0,
                       states=int(np.count_nonzero(reach)), states_exact=True, optimal_first_moves=opt_first,
                       first_moves=len(legal), method="reverse play (component graph)",
                       solution=p.format_moves(level, acts))

    def finish(self, record, level, profile):
        record["reference_solution"] = list(profile.solution)
        record["optimal_moves"] = profile.optimal
        return record


GENERATOR = RushHourGenerator()
