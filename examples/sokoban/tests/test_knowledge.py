"""The solver knowledge: the dead-end certificate is sound (every state it certifies, the
exhaustive solver finds unsolvable) and fires on the classic dead ends; the heuristic is
admissible; A* with it finds the optimal lengths breadth-first search finds."""

import pytest

from longpuzzle.agents.testing import random_walk, walk_states
from longpuzzle.engine.catalog import builtin_catalog as catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.core import solve, search_kernels

from longpuzzle_sokoban.knowledge import KNOWLEDGE, certificate

P = get_puzzle("sokoban")


def build(layout):
    return P.build_level({"layout": layout}, difficulty="easy", number=1, where="<test>")


@pytest.mark.parametrize("layout, why", [
    (["######", "#@--.#", "#$---#", "######"], "dead square"),           # a box in a corner off the goals
    (["#######", "#-$$-.#", "#@---.#", "#######"], "frozen box"),    # two boxes side by side on a wall
    (["########", "#------#", "#-$$---#", "#-$$---#", "#@-....#", "########"], "frozen box"),   # a 2 x 2 block
])
def test_certificate_fires_on_classic_dead_ends(layout, why):
    lv = build(layout)
    assert (certificate(lv, lv.initial) or "").startswith(why)
    assert KNOWLEDGE.dead_end(lv, lv.initial) is True
    assert solve(lv).status == "unsolvable"


def test_certificate_is_sound_on_random_walks():
    flagged = 0
    seed = 0
    for lid in ("sokoban/easy/3", "sokoban/medium/1", "sokoban/medium/2", "sokoban/easy/4"):
        lv = catalog().level(lid)
        assert certificate(lv, lv.initial) is None
        for _ in range(12):
            seed += 1
            for s, *_ in walk_states(lv, random_walk(lv, 40, seed)):
                if certificate(lv, s) is not None:
                    flagged += 1
                    assert solve(lv, state=s).status == "unsolvable", (lid, P.render_text(lv, s))
    assert flagged > 10                  # the walks did reach certified dead ends


def test_heuristic_is_admissible_and_astar_is_optimal():
    mod = search_kernels("sokoban")
    for lv in catalog().levels("sokoban")[:8]:
        aux = KNOWLEDGE.aux(lv)
        a, b = solve(lv), solve(lv, method="bfs")
        assert a.status == b.status == "solvable" and a.length == b.length
        assert mod.heuristic(lv.lv, aux, lv.initial) <= a.length
        for s, *_ in walk_states(lv, random_walk(lv, 10, lv.number)):
            r = solve(lv, state=s)
            if r.status == "solvable":
                assert mod.heuristic(lv.lv, aux, s) <= r.length
