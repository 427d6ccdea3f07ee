"""Bolt Unscrew solver knowledge (solvers/knowledge/bolt_unscrew.py): the hard levels are
solved and the solutions replay; ``certify`` answers match a brute force over raw states on
small reachable sets, and a dead end that the "no usable hole" predicate misses is certified
by exhausting its reachable set."""

from collections import deque

import numpy as np
import pytest

from longpuzzle.engine.catalog import Catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers import solve
from longpuzzle.solvers.core import BFS, check_solution, run
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.knowledge import bolt_unscrew as KB

P = get_puzzle("bolt_unscrew")
K = knowledge("bolt_unscrew")
_CAT = None


def level(lid):
    global _CAT
    if _CAT is None:
        _CAT = Catalog()
    return _CAT.level("bolt_unscrew/" + lid)


def reachable_solvable(lvl, state, limit=30_000):
    """Brute force over raw states through the public rules API: is a solved state
    reachable from ``state``? (None if more than ``limit`` states would be needed.)"""
    if P.is_solved(lvl, state):
        return True
    seen = {state.tobytes()}
    todo = deque([state])
    while todo:
        s = todo.popleft()
        for a in P.legal_moves(lvl, s):
            t, _ = P.step(lvl, s, a)
            if P.is_solved(lvl, t):
                return True
            key = t.tobytes()
            if key not in seen:
                if len(seen) >= limit:
                    return None
                seen.add(key)
                todo.append(t)
    return False


def bfs_solvable(lvl, state, limit=8_000):
    """The core's plain breadth-first search (exact packed keys, no heuristic, no pruning):
    True / False, or None if the reachable set is larger than ``limit``."""
    raw = run(lvl, state, BFS, budget=limit)
    return {1: True, 0: False}.get(raw.status)


def random_states(lvl, seeds, steps):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = lvl.initial.copy()
        for _ in range(steps):
            legal = P.legal_moves(lvl, s)
            if not legal:
                break
            s, _ = P.step(lvl, s, int(rng.choice(legal)))
            yield s


@pytest.mark.parametrize("lid", ["hard/3", "hard/4"])
def test_hardest_levels_are_solved_and_replay(lid):
    lvl = level(lid)
    r = solve(lvl, budget=40_000)
    assert r.status == "solvable"
    assert check_solution(lvl, lvl.initial, r.actions)
    assert r.lower_bound is not None and r.lower_bound <= r.length
    assert r.optimal == (r.lower_bound == r.length)
    # the moves as text replay too
    s = lvl.initial.copy()
    for m in r.moves:
        s = P.apply(lvl, s, m)
    assert P.is_solved(lvl, s)


def test_optimal_lengths_match_plain_bfs_on_small_levels():
    for lid in ["easy/3", "easy/4", "easy/6"]:
        lvl = level(lid)
        r = solve(lvl, budget=100_000)
        assert r.status == "solvable" and r.optimal
        b = solve(lvl, budget=200_000, method="bfs")
        assert b.status == "solvable" and r.length == b.length


def test_certify_matches_brute_force_on_random_states():
    checked = {"solvable": 0, "unsolvable": 0}
    for lid in ["easy/8", "hard/5", "hard/8", "hard/1"]:
        lvl = level(lid)
        states = []
        for seed in range(3):
            walk = list(random_states(lvl, [seed], 40))
            states += walk[2:-1:5] + walk[-1:]      # random walks of hard levels end in dead ends
        for s in states:
            c = K.certify(lvl, s, 5_000)
            assert c.status in ("solvable", "unsolvable", "unknown")
            if c.status == "solvable":
                assert check_solution(lvl, s, c.actions)
            truth = bfs_solvable(lvl, s, limit=3_000)
            if truth is None:
                continue
            if c.status != "unknown":
                assert (c.status == "solvable") == truth, (lid, c)
                checked[c.status] += 1
    assert checked["solvable"] > 10 and checked["unsolvable"] > 0


def test_a_dead_end_the_predicate_misses_is_certified_by_search():
    """Random play spends holes: before the last usable hole is gone, a state can already
    be lost (every way on spends the holes that are left). The certificate proves that by
    exhausting the reachable set, and a plain BFS agrees."""
    from longpuzzle.solvers.random_play import random_attempt

    found = 0
    for lid in ["hard/3", "hard/1", "hard/7"]:
        lvl = level(lid)
        for i in range(8):
            o = random_attempt(lvl, np.random.default_rng([0, i]))
            if not o.dead_end:
                continue
            s = lvl.initial.copy()
            walk = []
            for a in o.actions:
                s, _ = P.step(lvl, s, a)
                walk.append(s)
            for s in walk[-4:-1]:
                if P.is_dead_end(lvl, s):
                    continue
                c = K.certify(lvl, s, 5_000)
                if c.status != "unsolvable":
                    continue
                assert c.method != "predicate" and P.usable_anchors(lvl, s)
                assert bfs_solvable(lvl, s) is False
                if found == 0:
                    assert reachable_solvable(lvl, s, limit=5_000) is False
                found += 1
                return
    assert found > 0, "no search-certified dead end in the sampled states"


def test_predicate_dead_end_is_answered_without_search():
    for lid in ["hard/2", "hard/5", "hard/8", "hard/3"]:
        lvl = level(lid)
        for s in random_states(lvl, range(10), 80):
            if P.is_dead_end(lvl, s):
                c = K.certify(lvl, s)
                assert c.status == "unsolvable" and c.method == "predicate" and c.states == 1
                assert K.dead_end(lvl, s) is True
                return
    pytest.skip("no predicate dead end reached by the sampled walks")


def test_mid_game_certificates_on_hard_levels_are_decided():
    """Along random play the certificate mostly decides (solvable with a replaying solution,
    or a dead end) within the default budget. (Since released pieces come to rest on pegs,
    random play loses many hard/4 states long before the last hole is spent; proving those
    lost needs far more than the budget, so they stay "unknown".)"""
    decided = 0
    total = 0
    for lid in ["hard/3", "hard/4", "hard/6"]:
        lvl = level(lid)
        for s in list(random_states(lvl, range(3), 30))[::6]:
            c = K.certify(lvl, s)
            total += 1
            if c.status == "solvable":
                assert check_solution(lvl, s, c.actions)
            decided += c.status != "unknown"
            assert c.states <= K.certify_budget
    assert decided >= 0.75 * total, (decided, total)


def test_pruned_and_exact_best_first_agree_on_solutions():
    lvl = level("hard/7")
    for prune in (True, False):
        st, acts, n, _ = KB.best_first(lvl, lvl.initial, 50_000, *K.order, prune_awake=prune)
        assert st == 1 and n <= 50_000
        assert check_solution(lvl, lvl.initial, acts)
    # an exhausted exact search means no solution: a solved state has nothing to search
    final = lvl.initial.copy()
    for a in acts:
        final, _ = P.step(lvl, final, a)
    st, acts2, n, _ = KB.best_first(lvl, final, 10, *K.order)
    assert st == 1 and acts2 == [] and n == 1
