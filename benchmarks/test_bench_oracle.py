"""The oracle's cost per annotated step (solvers/oracle.py, issue 38), per game, on real
trajectories: the solver agent with detours (the oracle's best move, a random legal move one
step in five) and the random agent (random legal moves), each cut into episodes ended by a
win, a lost board or 200 moves; with the oracle's caches warm (the level's graph built, the
trajectory seen once) and cold (a new Oracle: the graph is built inside the round).

Run:  python -m pytest benchmarks/test_bench_oracle.py --benchmark-enable
Goal (the issue): 1,000 annotated steps in under 2 s on every game. ``extra_info["ops"]`` =
steps per round, so the summary prints annotated steps per second; ``extra_info["exact"]``
is the share of steps whose d(s) is exact (the rest have certified bounds), ``method`` how
the oracle knew (the level's whole graph, graphs from later states, the game's solver).
"""

import numpy as np
import pytest

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import NOOP
from longpuzzle.solvers.oracle import Oracle

STEPS = 1000
GOAL_SECONDS = 2.0
# a mid-sized level of every game whose whole graph fits the budget, and levels that do not
# (Truck Escape 5: its greedy solver per state; Rush Hour medium/2: BFS per state; Color
# Connect hard/1: bounds from its route search), with fewer steps
LEVELS = {"bolt_unscrew": "bolt_unscrew/easy/5", "rush_hour": "rush_hour/hard/6", "nut_and_bolt": "nut_and_bolt/hard/1",
          "truck_escape": "truck_escape/default/3", "maze_paint": "maze_paint/hard/4",
          "color_connect": "color_connect/easy/4"}
FALLBACK = {"truck_escape/default/5": 200, "rush_hour/medium/2": 20, "color_connect/hard/1": 20}


def trajectories(o: Oracle, agent: str, steps: int, seed: int = 0) -> list[list[int]]:
    """Episodes (action lists) totalling ``steps`` moves."""
    level, p = o.level, o.puzzle
    rng = np.random.default_rng(seed)
    out, total = [], 0
    while total < steps:
        cur, acts = level.initial, []
        while total + len(acts) < steps and len(acts) < 200 and not p.is_solved(level, cur):
            legal = p.legal_moves(level, cur)
            if not legal:
                break
            a = None
            if agent == "solver" and rng.random() >= 0.2:
                best = o.best(cur)
                a = best[0].action if best else None
            if a is None:
                a = legal[int(rng.integers(len(legal)))]
            cur, code = p.step(level, cur, a)
            assert code <= NOOP
            acts.append(a)
            if agent == "random" and o.at(cur).dead_end:
                # a few moves on the lost board, as a random agent plays them, then a new episode
                for _ in range(3):
                    legal = p.legal_moves(level, cur)
                    if not legal:
                        break
                    a = legal[int(rng.integers(len(legal)))]
                    cur, _ = p.step(level, cur, a)
                    acts.append(a)
                break
        out.append(acts)
        total += len(acts)
    return out


def _annotate(o: Oracle, episodes) -> list:
    return [step for ep in episodes for step in o.annotate(ep)]


def _record(benchmark, o: Oracle, steps, cache: str):
    benchmark.group = "oracle"
    n = len(steps)
    benchmark.extra_info["ops"] = n
    benchmark.extra_info["unit"] = "annotated steps"
    benchmark.extra_info["cache"] = cache
    benchmark.extra_info["whole_graph"] = o.whole
    benchmark.extra_info["graph_states"] = o.level_graph_states
    benchmark.extra_info["exact"] = round(sum(s.before.exact for s in steps) / max(n, 1), 3)
    benchmark.extra_info["method"] = sorted({s.before.method for s in steps})
    benchmark.extra_info["optimal_share"] = round(sum(s.optimal for s in steps) / max(n, 1), 3)
    benchmark.extra_info["fatal"] = sum(s.cost.fatal for s in steps)
    benchmark.extra_info["lost_moves"] = sum(s.lost_before for s in steps)
    if benchmark.stats and benchmark.stats.stats.min:
        benchmark.extra_info["seconds_per_1000"] = round(benchmark.stats.stats.min * 1000 / max(n, 1), 3)
        benchmark.extra_info["goal_seconds_per_1000"] = GOAL_SECONDS


@pytest.mark.parametrize("agent", ["solver", "random"])
@pytest.mark.parametrize("game", sorted(LEVELS))
def test_annotate_warm(benchmark, game, agent):
    o = Oracle(LEVELS[game])
    eps = trajectories(o, agent, STEPS)
    _annotate(o, eps)                      # caches warm: graph built, every state seen once
    steps = benchmark.pedantic(_annotate, args=(o, eps), rounds=3, iterations=1)
    assert len(steps) == sum(map(len, eps)) >= STEPS
    _record(benchmark, o, steps, "warm")


@pytest.mark.parametrize("agent", ["solver", "random"])
@pytest.mark.parametrize("game", sorted(LEVELS))
def test_annotate_cold(benchmark, game, agent):
    lid = LEVELS[game]
    eps = trajectories(Oracle(lid), agent, STEPS)
    load_level(lid)
    got = {}

    def go():
        got["o"] = o = Oracle(lid)         # nothing cached: the level's graph is built in the round
        return _annotate(o, eps)

    steps = benchmark.pedantic(go, rounds=1, iterations=1)
    assert len(steps) >= STEPS
    _record(benchmark, got["o"], steps, "cold")


@pytest.mark.parametrize("lid", sorted(FALLBACK))
def test_annotate_past_the_graph_budget(benchmark, lid):
    """Levels whose whole graph does not fit: per-state graphs and solvers (cold: the answers
    are memoised per state, so a warm round would only measure look-ups)."""
    eps = trajectories(Oracle(lid), "random", FALLBACK[lid], seed=1)
    got = {}

    def go():
        got["o"] = o = Oracle(lid)
        return _annotate(o, eps)

    steps = benchmark.pedantic(go, rounds=1, iterations=1)
    _record(benchmark, got["o"], steps, "cold")
    assert not got["o"].whole
