"""Bolt Unscrew solver speed: stored states per second of the core searches (the settle of
every successor dominates), the greedy best-first search of the knowledge, and certificates
of mid-game states as an evaluation runs them after every move.

Run:  python -m pytest benchmarks/test_bench_solvers_bolt.py --benchmark-enable
``extra_info["ops"]`` is the number of states one round stores (so the summary prints states
per second); ``extra_info["states_per_s"]`` the same figure.
"""

import numpy as np

from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.core import BEST_FIRST, BFS, run
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.knowledge import bolt_unscrew as KB

P = get_puzzle("bolt_unscrew")
K = knowledge("bolt_unscrew")


def _level(lid):
    return builtin_catalog().level("bolt_unscrew/" + lid)


def _record(benchmark, n):
    benchmark.group = "solver bolt_unscrew"
    benchmark.extra_info["ops"] = n
    if benchmark.stats and benchmark.stats.stats.median:
        benchmark.extra_info["states_per_s"] = round(n / benchmark.stats.stats.median)


def test_bolt_bfs_states_per_second_hard3(benchmark):
    """Breadth-first search of hard/3: 30,000 stored states (was about 25,000 states/s)."""
    lvl = _level("hard/3")
    run(lvl, lvl.initial, BFS, budget=100, stop_at_goal=False)
    raw = benchmark(run, lvl, lvl.initial, BFS, budget=30_000, stop_at_goal=False)
    assert raw.n == 30_000
    _record(benchmark, raw.n)


def test_bolt_astar_states_per_second_hard4(benchmark):
    """A* (admissible h) on hard/4: 30,000 stored states."""
    lvl = _level("hard/4")
    run(lvl, lvl.initial, BEST_FIRST, budget=100)
    raw = benchmark(run, lvl, lvl.initial, BEST_FIRST, budget=30_000)
    assert raw.n == 30_000
    _record(benchmark, raw.n)


def test_bolt_greedy_solves_hard4(benchmark):
    """The knowledge's compiled greedy best-first search from the start of hard/4."""
    lvl = _level("hard/4")
    KB.best_first(lvl, lvl.initial, 100, *K.order)
    st, acts, n, _ = benchmark(KB.best_first, lvl, lvl.initial, 100_000, *K.order, prune_awake=True)
    assert st == 1
    _record(benchmark, n)


def test_bolt_certify_mid_game_hard_states(benchmark):
    """Certificates of 12 mid-game states of hard/3, hard/4 and hard/6 (default budget)."""
    states = []
    for lid in ("hard/3", "hard/4", "hard/6"):
        lvl = _level(lid)
        for seed in range(4):
            rng = np.random.default_rng(seed)
            s = lvl.initial.copy()
            for _ in range(12):
                legal = P.legal_moves(lvl, s)
                if not legal:
                    break
                s, _ = P.step(lvl, s, int(rng.choice(legal)))
            states.append((lvl, s))
    K.certify(*states[0])

    def certify_all():
        return sum(K.certify(lvl, s).states for lvl, s in states)

    n = benchmark(certify_all)
    _record(benchmark, n)
