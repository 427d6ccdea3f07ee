"""Certified difficulty figures (solvers/profile.py) checked against plain readings: the
solver's optimum, a breadth-first count of states, certificates of every state, solves from
every first move; Truck Escape's counted states against enumeration; the tier data."""

import numpy as np
import pytest

from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.generators.tiers import tier_data
from longpuzzle.solvers.core import certify, explore, solve
from longpuzzle.solvers.knowledge.truck_escape import count_removal_sets
from longpuzzle.solvers.profile import StateGraph, graph_profile, profile, sampled_dead_end_density

SMALL = ["maze_paint/easy/1", "maze_paint/medium/9", "rush_hour/easy/2", "rush_hour/hard/1", "nut_and_bolt/easy/3",
         "nut_and_bolt/medium/3"]


@pytest.mark.parametrize("lid", SMALL)
def test_profile_agrees_with_the_solver_and_plain_searches(lid):
    level = builtin_catalog().level(lid)
    p = get_puzzle(level.game)
    prof = profile(level)
    r = solve(level)
    assert prof.status == "solvable" and prof.optimal == r.length and prof.states_exact
    # without terminal wins the graph is the whole space explore() counts
    assert StateGraph(level, terminal=False).n == explore(level).n
    assert prof.states <= explore(level).n
    # optimal first moves: a solve from every legal first move
    legal = p.legal_moves(level, level.initial)
    assert prof.first_moves == len(legal)
    opt_first = 0
    for a in legal:
        nxt, _ = p.step(level, level.initial, a)
        s = solve(level, state=nxt)
        opt_first += s.status == "solvable" and s.length == prof.optimal - 1
    assert prof.optimal_first_moves == opt_first
    assert len(prof.solution) == prof.optimal


@pytest.mark.parametrize("lid", ["rush_hour/medium/1", "rush_hour/hard/7", "rush_hour/easy/10"])
def test_a_graph_cut_off_by_its_budget_proves_what_its_whole_layers_prove(lid):
    """A breadth-first graph cut off by its budget holds its first layers whole; where a win
    lies within one move past them, its optimum and optimal first moves are the whole
    graph's, its state count is a lower bound; where not, nothing is claimed."""
    level = builtin_catalog().level(lid)
    full = profile(level)
    proven = 0
    for part in (2, 4, 10):
        budget = full.states // part
        g = StateGraph(level, budget=budget)
        depth = g.depths()
        d = g.certified_depth()
        assert not g.complete and g.expanded < g.n
        assert np.all(depth[:g.expanded] <= d + 1) and np.all(depth[g.expanded:] >= d + 1)
        prof = graph_profile(level, budget=budget, bounded=False)
        assert prof.states == g.n == budget and not prof.states_exact
        d0 = int(g.distances()[0])
        if 0 <= d0 <= d + 1:
            proven += 1
            assert prof.status == "solvable" and prof.method.startswith("graph, first")
            assert (prof.optimal, prof.optimal_first_moves) == (full.optimal, full.optimal_first_moves)
            assert len(prof.solution) == full.optimal
        else:
            assert prof.status == "unknown" and prof.optimal is None
    assert proven >= 1


def test_dead_end_density_is_the_share_of_certified_dead_ends():
    level = builtin_catalog().level("nut_and_bolt/medium/3")
    g = StateGraph(level)
    dist = g.distances()
    dead = 0
    for i in range(g.n):
        c = certify(level, g.state(i))
        assert (c.status == "unsolvable") == (dist[i] < 0)
        dead += c.status == "unsolvable"
    prof = profile(level)
    assert prof.dead_end_method == "exhaustive"
    assert prof.dead_end_density == pytest.approx(dead / g.n) and 0 < prof.dead_end_density < 1


def test_bolt_unscrew_dead_end_density_exhaustive_and_sampled():
    """Bolt Unscrew (falling and resting pieces): the exhaustive density is the share of the
    reachable states its certificates call dead ends; the sampled one counts random-play
    states, and is 1.0 or less with the same seed giving the same figure."""
    level = builtin_catalog().level("bolt_unscrew/easy/5")
    g = StateGraph(level)
    dist = g.distances()
    for i in range(g.n):
        assert (certify(level, g.state(i)).status == "unsolvable") == (dist[i] < 0)
    prof = profile(level)
    assert prof.dead_end_method == "exhaustive" and prof.states == g.n
    assert prof.dead_end_density == pytest.approx(float(np.count_nonzero(dist < 0)) / g.n)
    hard = builtin_catalog().level("bolt_unscrew/hard/5")
    dens, n = sampled_dead_end_density(hard, walks=12, seed=3, certify_budget=5000)
    assert n > 0 and 0.5 <= dens <= 1.0            # the catalogue's hard levels: mostly dead ends
    assert (dens, n) == sampled_dead_end_density(hard, walks=12, seed=3, certify_budget=5000)


def test_budget_gives_bounds_and_sampled_dead_ends():
    level = builtin_catalog().level("nut_and_bolt/hard/1")
    prof = profile(level, budget=1000)
    assert not prof.states_exact and prof.states == 1000
    assert prof.status == "solvable" and prof.lower_bound <= 32 <= prof.upper_bound and prof.dead_end_method == "sampled"
    assert prof.dead_end_samples > 0 and 0 <= prof.dead_end_density <= 1
    dens, n = sampled_dead_end_density(level, walks=30, seed=1)
    assert n > 0 and dens == sampled_dead_end_density(level, walks=30, seed=1)[0]


def test_games_without_dead_ends_report_none_and_unsolvable_levels_are_certified():
    prof = profile("maze_paint/easy/2")
    assert prof.dead_end_density is None and prof.dead_end_method == ""
    p = get_puzzle("nut_and_bolt")
    rec = {"capacity": 2, "bolts": [{"x": 100, "base_y": 400, "nuts": ["red", "blue"]},
                                    {"x": 200, "base_y": 400, "nuts": ["blue", "red"]}]}
    lvl = p.build_level(rec, difficulty="easy", number=1, where="test")
    prof = profile(lvl)
    assert prof.status == "unsolvable" and prof.optimal is None and prof.dead_end_density == 1.0


@pytest.mark.parametrize("lid", ["truck_escape/default/1", "truck_escape/default/2"])
def test_truck_escape_counts_its_states_without_enumerating_them(lid):
    level = builtin_catalog().level(lid)
    prof = profile(level)
    assert prof.states_exact and prof.states == explore(level).n == count_removal_sets(level, level.initial)
    assert prof.optimal == int(level.lv[2]) and prof.method == "greedy+count"


def test_color_connect_profile_bounds_the_optimum():
    prof = profile("color_connect/hard/1")
    assert prof.status == "solvable" and prof.lower_bound <= prof.upper_bound == 56
    assert prof.optimal_first_moves == 2 * prof.extra["pairs"] and prof.extra["cells"] == 56
    assert not prof.states_exact


def test_tier_data_matches_the_catalogue():
    """tiers.json was made from the built-in catalogue: a sample of levels recomputed lies on
    the recorded ranges, and every tier of every game with a generator is there."""
    data = tier_data()
    for lid in ("maze_paint/hard/4", "nut_and_bolt/extreme/2", "rush_hour/hard/6", "truck_escape/default/3",
                "bolt_unscrew/easy/5"):
        level = builtin_catalog().level(lid)
        figs = profile(level).figures()
        t = data["games"][level.game]["tiers"][level.difficulty]
        for fig, (lo, hi) in t["figures"].items():
            if figs.get(fig) is not None:
                assert lo <= figs[fig] <= hi, (lid, fig)
    for game, g in data["games"].items():
        assert list(g["tiers"]) == [o.difficulty for o in builtin_catalog().objectives(game)]


def test_the_builtin_catalogue_keeps_its_114_levels_and_ids():
    from longpuzzle.puzzles.declarations import BUILTIN
    cat = builtin_catalog()
    # the built-in games' (a game of another installed distribution may be in it too)
    counts = {o.id: len(o.level_ids) for o in cat.objectives() if o.game in {s.id for s in BUILTIN}}
    assert sum(counts.values()) == 114 and len(counts) == 16
    assert counts == {"bolt_unscrew/easy": 8, "bolt_unscrew/hard": 8, "rush_hour/easy": 10, "rush_hour/medium": 10,
                      "rush_hour/hard": 10, "nut_and_bolt/easy": 3, "nut_and_bolt/medium": 3, "nut_and_bolt/hard": 3,
                      "nut_and_bolt/extreme": 3, "nut_and_bolt/nightmare": 1, "truck_escape/default": 5,
                      "maze_paint/easy": 10, "maze_paint/medium": 10, "maze_paint/hard": 10,
                      "color_connect/easy": 10, "color_connect/hard": 10}
    for o in cat.objectives():
        assert list(o.level_ids) == [f"{o.id}/{i + 1}" for i in range(len(o.level_ids))]
    assert cat.name == "builtin" and cat.version is None and len(cat.content_hash) == 64
    assert np.all([cat.level(l).id == l for l in cat.level_ids()])
