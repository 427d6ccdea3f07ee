"""The oracle's columns of a dataset row (schema.ORACLE_COLUMNS; ``--oracle``): what the exact
solvers know of the board the row's frame shows, and the extra cost of the row's action.

    labels = OracleLabels(catalog)
    labels.row(level_before, state_before, level_after, state_after, effects)   # -> the columns

One function for the collector (collect.py, as it plays) and the checker (check.py, on its
replay), so both read the same definitions; the values come from solvers/oracle.py (each
level's Oracle cached for the process, so the episodes of an objective build its graph once).
"""

from __future__ import annotations

import math

import numpy as np

from longpuzzle.engine.catalog import load_level

OFF_LEVEL = {"oracle_d": None, "oracle_dead_end": False, "oracle_best": [], "oracle_best_ids": [],
             "oracle_cost": None}


class OracleLabels:
    def __init__(self, catalog=None):
        self.catalog = catalog

    def oracle(self, level_id: str):
        from longpuzzle.solvers.oracle import oracle_for         # lazy: the solvers' kernels
        return oracle_for(load_level(level_id, self.catalog))

    def row(self, level_before: str | None, state_before: np.ndarray | None, level_after: str | None,
            state_after: np.ndarray | None, effects) -> dict:
        """The oracle's columns of one row: the board before the action (``state_before`` of
        ``level_before``; None off a level) and, for the cost, the board after it."""
        if level_before is None or state_before is None:
            return dict(OFF_LEVEL)
        o = self.oracle(level_before)
        a = o.at(state_before)
        best = [] if a.dead_end or a.status == "solved" or not a.exact else \
            [m for m in o.best(state_before) if m.cost == 0]
        out = {"oracle_d": a.d if a.exact else None, "oracle_dead_end": a.dead_end,
               "oracle_best": [m.move for m in best], "oracle_best_ids": [int(m.action) for m in best],
               "oracle_cost": None}
        n = sum(e.get("effect") == "move" for e in effects)
        undone = any(e.get("effect") in ("undo", "restart") for e in effects)
        if n and not undone and level_after == level_before and state_after is not None and not a.dead_end:
            b = o.at(state_after)
            if b.dead_end:
                out["oracle_cost"] = math.inf
            elif a.exact and b.exact:
                out["oracle_cost"] = float(n + b.distance - a.distance)
        return out
