"""Verification of catalogue levels: solve, replay the solution through the rules, compare
with the recorded optimal length where the catalogue has one."""

from __future__ import annotations

from longpuzzle.engine.catalog import load_level
from longpuzzle.solvers.core import DEFAULT_BUDGET, check_solution, solve
from longpuzzle.solvers.knowledge import knowledge


def recorded_optimum(level) -> int | None:
    extra = level.extra if isinstance(level.extra, dict) else {}
    v = extra.get("optimal_moves")
    return int(v) if isinstance(v, int) else None


def verify_level(level, *, budget: int | None = None) -> dict:
    level = load_level(level)
    if budget is None:
        budget = knowledge(level.game).verify_budget or DEFAULT_BUDGET
    r = solve(level, budget=budget)
    d = r.as_dict()
    if r.status == "solvable":
        d["replayed"] = check_solution(level, level.initial, r.actions)
    rec = recorded_optimum(level)
    if rec is not None:
        d["recorded_optimal"] = rec
    routes = getattr(r, "routes", None)
    if routes:
        d["routes"] = routes
    d["ok"] = bool(r.status == "solvable" and d.get("replayed")
                   and (rec is None or not r.optimal or r.length == rec))
    return d
