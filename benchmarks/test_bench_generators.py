"""Generator speed: certified levels per second per game and tier, on one core.

Run:  python -m pytest benchmarks/test_bench_generators.py --benchmark-enable
Each round generates ``n`` levels of a fresh seed (so no round reuses another's levels);
``extra_info["ops"]`` is n, so the summary prints certified levels per second. A certified
level has been drawn, built through the game's validation, profiled by the exhaustive
solvers (optimal length, reachable states, dead ends, first moves), confirmed by the solver,
replayed, and found inside its tier's ranges. Goal (issue 17): >= 10 medium levels/s for
every game except Bolt Unscrew; >= 1 Bolt Unscrew easy level/s.
"""

import itertools

import pytest

from longpuzzle.solvers.generators import generate, generators
from longpuzzle.solvers.generators.tiers import catalog_tiers

# levels per round: enough for a stable rate, little for the slow tiers
PER_ROUND = {"easy": 20, "medium": 20, "default": 10, "hard": 5, "extreme": 5, "nightmare": 2, "beyond": 2}
SLOW_PER_ROUND = {("maze_paint", "hard"): 8, ("nut_and_bolt", "hard"): 3, ("rush_hour", "medium"): 3,
                  ("rush_hour", "hard"): 5, ("bolt_unscrew", "hard"): 2, ("bolt_unscrew", "beyond"): 1}
CASES = [(g.game, t) for g in generators() for t in list(catalog_tiers(g.game)) + ["beyond"]]
_seeds = itertools.count(1000)


@pytest.mark.parametrize("game, tier", CASES)
def test_certified_levels_per_second(benchmark, game, tier):
    n = SLOW_PER_ROUND.get((game, tier), PER_ROUND.get(tier, 5))
    list(generate(game, tier, seed=1, count=1))             # load the compiled kernels first

    def one_round():
        return list(generate(game, tier, seed=next(_seeds), count=n))

    made = benchmark.pedantic(one_round, rounds=3, iterations=1)
    assert len(made) == n and all(g.profile.status == "solvable" for g in made)
    benchmark.group = "generator"
    benchmark.extra_info["ops"] = n
    benchmark.extra_info["attempts_per_level"] = round(sum(g.attempts for g in made) / n, 2)
    if benchmark.stats and benchmark.stats.stats.min:
        benchmark.extra_info["levels_per_s_fastest"] = round(n / benchmark.stats.stats.min, 2)
