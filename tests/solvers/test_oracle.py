"""The oracle (solvers/oracle.py, issue 38) checked against plain readings of the rules: a
breadth-first search written here over the rules alone (puzzle.step, no solver hook, no
canonical keys) gives d(s) and dead ends of small levels; the solvers' optima give d of the
catalogue's starts; random reachable states of every game (hypothesis) keep e(s, a) >= 0,
the telescoping sum of extra costs, and the dead-end certificates; bounds are said to be
bounds; bad input gets one error."""

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from longpuzzle.cli import cli
from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.errors import IllegalMoveError, MoveSyntaxError, UnknownLevelError
from longpuzzle.engine.protocol import NOOP
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.core import solve
from longpuzzle.solvers.profile import profile
from longpuzzle.solvers.oracle import Oracle, OracleError, oracle, oracle_for
from longpuzzle.solvers.verify import recorded_optimum

# small levels of every game (whole graphs of at most a few thousand states), for the rules' BFS
SMALL = ["maze_paint/easy/1", "maze_paint/medium/9", "rush_hour/easy/2", "rush_hour/hard/1", "nut_and_bolt/easy/3",
         "nut_and_bolt/easy/2", "bolt_unscrew/easy/3", "bolt_unscrew/easy/5", "truck_escape/default/1",
         "truck_escape/default/2"]
# with dead ends (Nut and Bolt) and a game's whole graph of 10^5 states (Color Connect): for the cost tests
COSTS = SMALL + ["nut_and_bolt/medium/3", "color_connect/easy/4"]
# a fast subset of catalogue starts (the slow test below covers all of them)
STARTS = SMALL + ["color_connect/easy/4", "rush_hour/medium/1", "rush_hour/hard/6", "maze_paint/hard/9", "nut_and_bolt/hard/1"]


@functools.cache
def rules_space(lid, limit=60_000):
    """{state bytes: distance to the nearest win (None: a dead end)} of every state reachable
    from the start of a small level, by the rules alone (independent of the solvers: states
    are their own bytes, no canonical keys; successors from puzzle.step; solved states
    terminal): a forward breadth-first search, then a backward one from the solved states."""
    level = load_level(lid)
    p = get_puzzle(level.game)
    ids = {level.initial.tobytes(): 0}
    states = [level.initial]
    preds = [[]]
    i = 0
    while i < len(states):
        s = states[i]
        if not p.is_solved(level, s):
            for a in p.legal_moves(level, s):
                t, code = p.step(level, s, a)
                if code > NOOP:
                    continue
                k = t.tobytes()
                j = ids.get(k)
                if j is None:
                    j = ids[k] = len(states)
                    states.append(t)
                    preds.append([])
                    assert len(states) < limit, "level too large for the plain search"
                preds[j].append(i)
        i += 1
    dist = [None] * len(states)
    layer = [j for j, s in enumerate(states) if p.is_solved(level, s)]
    for j in layer:
        dist[j] = 0
    while layer:
        nxt = []
        for j in layer:
            for q in preds[j]:
                if dist[q] is None:
                    dist[q] = dist[j] + 1
                    nxt.append(q)
        layer = nxt
    return {k: dist[j] for k, j in ids.items()}


def rules_distance(level, state):
    return rules_space(level.id)[state.tobytes()]


def random_walk(level, seed, steps):
    """(states, actions) of a seeded random walk from the start over legal moves; stops at a win."""
    p = get_puzzle(level.game)
    rng = np.random.default_rng(seed)
    cur = level.initial
    states, acts = [cur], []
    for _ in range(steps):
        legal = p.legal_moves(level, cur)
        if not legal or p.is_solved(level, cur):
            break
        a = legal[int(rng.integers(len(legal)))]
        cur, code = p.step(level, cur, a)
        assert code <= NOOP
        states.append(cur)
        acts.append(a)
    return states, acts


def check_start(level, o):
    """The oracle's d(start) against the solvers: the proven optimum (and the catalogue's
    recorded one), or for Color Connect (whose route search claims no fewest actions) its
    solution length above and the profile's proven lower bound below."""
    a = o.at()
    r = solve(level)
    assert a.exact and a.status == "solvable" and r.status == "solvable", level.id
    if r.optimal:
        assert a.distance == r.length, level.id
    else:
        prof = profile(level)
        assert prof.lower_bound <= a.distance <= r.length, level.id
        assert prof.optimal is None or prof.optimal == a.distance, level.id
    rec = recorded_optimum(level)
    if rec is not None:
        assert a.distance == rec, level.id


@pytest.mark.parametrize("lid", STARTS)
def test_the_start_distance_is_the_solvers_optimum(lid):
    level = load_level(lid)
    check_start(level, oracle_for(level))


@pytest.mark.slow
@pytest.mark.parametrize("lid", builtin_catalog().level_ids())
def test_every_catalogue_start_whose_graph_fits_matches_the_verify_totals(lid):
    """Every catalogue level whose whole graph has at most 300,000 states (the rest: answers
    from the same solvers per state, and bounds, tested above on small budgets)."""
    level = load_level(lid)
    o = Oracle(level, graph_budget=min(300_000, Oracle(level).graph_budget))
    if not o.whole:
        pytest.skip(f"more than {o.graph_budget:,} states")
    check_start(level, o)


@pytest.mark.parametrize("lid", SMALL)
def test_distances_and_dead_ends_agree_with_a_plain_search_of_the_rules(lid):
    """Along random walks (dead ends included where the game has them), every state's d(s) is
    the rules' own breadth-first distance, and a dead end has no solution at all."""
    level = load_level(lid)
    o = Oracle(level)
    assert o.whole
    checked = dead = 0
    for seed in range(4):
        states, _ = random_walk(level, seed, 40)
        for s in states[::3]:
            a = o.at(s)
            want = rules_distance(level, s)
            assert a.exact
            if want is None:
                assert a.dead_end and a.distance is None and a.d == math.inf
                dead += 1
            else:
                assert a.distance == want and not a.dead_end
            checked += 1
    assert checked >= 4


@pytest.mark.parametrize("lid", COSTS)
def test_extra_costs_are_never_negative_and_the_best_moves_cost_nothing(lid):
    level = load_level(lid)
    o = oracle_for(level)
    p = get_puzzle(level.game)
    states, _ = random_walk(level, 11, 30)
    for s in states:
        a = o.at(s)
        if a.status == "solved":
            assert o.moves(s) == []
            continue
        ms = o.moves(s)
        assert {m.action for m in ms} == set(p.legal_moves(level, s))
        for m in ms:
            if a.dead_end:
                assert m.cost is None          # inf - inf: a move on a lost board has no extra cost
                continue
            assert m.cost >= 0
            want = 1 + (math.inf if m.after.dead_end else m.after.distance) - a.distance
            assert m.cost == want
        if not a.dead_end:
            best = o.best(s)
            assert best and all(m.cost == 0 for m in best)
            assert [m.move for m in best] == [m.move for m in ms if m.cost == 0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lid=st.sampled_from(COSTS), seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 60))
def test_the_extra_costs_of_a_trajectory_telescope(lid, seed, steps):
    """sum of e(s, a) over a trajectory = moves - d(s0) + d(s_end) (up to the move that loses the
    level: that one costs inf, the moves after it none), and e >= 0 at every step."""
    level = load_level(lid)
    o = oracle_for(level)
    states, acts = random_walk(level, seed, steps)
    rec = o.annotate(acts)
    assert len(rec) == len(acts)
    total, n = 0, 0
    for i, r in enumerate(rec):
        assert r.before == o.at(states[i])
        if r.lost_before:
            assert r.cost.cost is None and not r.optimal
            continue
        if r.cost.fatal:
            assert o.at(states[i + 1]).dead_end and i + 1 < len(states)
            assert all(x.lost_before for x in rec[i + 1:])
            break
        assert r.cost.cost >= 0
        total += r.cost.cost
        n += 1
    else:
        end = o.at(states[-1])
        assert total == n - o.at(states[0]).distance + end.distance
        return
    # lost at move i + 1: the identity holds up to the state before that move
    assert total == n - o.at(states[0]).distance + o.at(states[n]).distance


def test_a_state_called_a_dead_end_has_no_solution():
    """Exhaustively on small levels: every reachable state (by the rules' own search) that the
    oracle calls a dead end has no solved state reachable, every other has its distance; on a
    level with dead ends (Nut and Bolt medium/3), every state of its graph called a dead end
    has no solved state reachable by the rules (its whole reachable set searched), and the
    others' distances are the solver's optima."""
    for lid in ("nut_and_bolt/easy/3", "bolt_unscrew/easy/5", "truck_escape/default/2"):
        level = load_level(lid)
        o = Oracle(level)
        assert o.whole
        dt = level.initial.dtype
        for k, want in rules_space(lid).items():
            a = o.at(np.frombuffer(k, dt).copy())
            assert (want is None) == a.dead_end and a.distance == want, lid
    level = load_level("nut_and_bolt/medium/3")
    p = get_puzzle(level.game)
    o = Oracle(level)
    assert o.whole
    g = o._level_graph.graph
    dead = alive = 0
    for u in range(g.n):
        s = g.state(u)
        a = o.at(s)
        if a.dead_end:
            seen, todo = {s.tobytes()}, [s]
            while todo:
                x = todo.pop()
                assert not p.is_solved(level, x)
                for m in p.legal_moves(level, x):
                    t, code = p.step(level, x, m)
                    if code <= NOOP and t.tobytes() not in seen:
                        seen.add(t.tobytes())
                        todo.append(t)
            dead += 1
        elif alive < 15 and u % 97 == 0:
            r = solve(level, state=s)
            assert r.optimal and r.length == a.distance
            alive += 1
    assert dead > 0 and alive > 5


def test_where_the_space_is_too_large_it_says_it_knows_bounds():
    """With budgets too small for any graph or proof, the answer is marked inexact and its bounds
    contain the true distance; raised budgets make it exact again."""
    level = load_level("rush_hour/hard/6")
    true_d = Oracle(level).at().distance
    small = Oracle(level, graph_budget=50, local_budget=50, solve_budget=60)
    a = small.at()
    assert not small.whole and not a.exact and a.distance is None and math.isnan(a.d)
    assert a.status in ("solvable", "unknown")
    assert a.lower <= true_d and (a.upper is None or true_d <= a.upper)
    for m in small.moves():
        assert m.cost is None and m.lower >= 0 and (m.upper is None or m.upper == math.inf or m.lower <= m.upper)
    # the per-state solver alone (no graph of the level) is exact within its budget
    mid = Oracle(level, graph_budget=50, local_budget=0)
    b = mid.at()
    assert b.exact and b.distance == true_d and b.method != "graph"
    # a one-way game: graphs from later states are kept and reused
    lvl = load_level("maze_paint/hard/4")
    o = Oracle(lvl, graph_budget=1000, local_budget=50_000)
    states, acts = random_walk(lvl, 3, 40)
    ref = Oracle(lvl)
    for s in states[5:]:
        got, want = o.at(s), ref.at(s)
        assert got.exact and got.distance == want.distance
    assert any(x.method == "local graph" for x in o._memo.values())


def test_bad_input_gets_one_clear_error():
    level = load_level("nut_and_bolt/easy/3")
    o = Oracle(level)
    assert o.whole
    with pytest.raises(UnknownLevelError):
        oracle("nut_and_bolt/easy/99")
    with pytest.raises(OracleError, match="not a state of"):
        o.at([1, 2, 3])
    with pytest.raises(OracleError, match="not a state of"):
        o.at(["x"] * level.initial.shape[0])
    # a valid state (the right shape and values) that no play reaches: one value changed
    s = level.initial.copy()
    found = False
    for i in range(s.shape[0]):
        t = s.copy()
        t[i] = 0 if t[i] != 0 else 1
        if o._level_graph.graph.lookup(t) < 0:
            with pytest.raises(OracleError, match="not reachable"):
                o.at(t)
            found = True
            break
    assert found
    with pytest.raises(MoveSyntaxError):
        o.cost(None, "not a move")
    legal = set(get_puzzle(level.game).legal_moves(level, level.initial))
    refused = next(a for a in range(level.n_actions) if a not in legal)
    with pytest.raises(IllegalMoveError):
        o.cost(None, refused)
    with pytest.raises(IllegalMoveError):
        o.annotate([refused])


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_hint_prints_the_best_moves_and_whether_the_position_is_lost():
    lid = "nut_and_bolt/medium/3"
    level = load_level(lid)
    o = Oracle(level)
    r = run("hint", lid)
    assert r.exit_code == 0, r.output
    d0 = o.at().distance
    assert f"{d0} moves to win (exact)" in r.output
    for m in o.best():
        assert m.move in r.output
    # a lost position: a walk into a dead end, then hint after its moves
    p = get_puzzle(level.game)
    lost = None
    for seed in range(50):
        states, acts = random_walk(level, seed, 30)
        for i, s in enumerate(states):
            if o.at(s).dead_end:
                lost = p.format_moves(level, acts[:i])
                break
        if lost:
            break
    assert lost
    r = run("hint", lid, "--moves", " ".join(lost))
    assert r.exit_code == 0 and "LOST" in r.output, r.output
    r = run("hint", lid, "--json", "--moves", " ".join(lost))
    doc = json.loads(r.output)
    assert doc["answer"]["dead_end"] is True and doc["lost_at"] == len(lost)
    # an undo brings back the solvable board; the same move again loses it at its new number
    r = run("hint", lid, "--json", "--moves", " ".join(lost + ["undo"]))
    assert json.loads(r.output)["answer"]["dead_end"] is False and json.loads(r.output)["lost_at"] is None
    r = run("hint", lid, "--json", "--moves", " ".join(lost + ["undo", lost[-1]]))
    assert json.loads(r.output)["lost_at"] == len(lost) + 2
    # bad input: one error line each, exit 2
    for args, _what in ((("hint", "nut_and_bolt/easy/99"), "error:"), (("hint", lid, "--moves", "zz"), "error:"),
                       (("hint", lid, "--moves", p.format_move(level, next(
                           a for a in range(level.n_actions) if a not in p.legal_moves(level, level.initial)))),
                        "error:")):
        r = run(*args)
        assert r.exit_code == 2 and r.output.count("error:") == 1 and "Traceback" not in r.output, r.output


# ---- analyze --oracle ---------------------------------------------------------------------

SCRIPTED = str(Path(__file__).resolve().parents[1] / "data" / "scripted_agent.py")


def test_analyze_annotates_every_recorded_step_with_the_oracle(tmp_path):
    """A scripted Nut and Bolt episode (tests/data/scripted_agent.py): ten transfers to a board
    the evaluator certifies lost, two more, three undos, a restart, the same ten transfers.
    The oracle finds the same fatal transfer in both attempts, the two moves on the lost
    board, and d(s) of every recorded state is the oracle's for that state."""
    out = tmp_path / "run"
    r = run("eval", "--out", out, "--json", "--agent", SCRIPTED, "--trusted-agent", "--objective",
            "nut_and_bolt/medium")
    assert r.exit_code == 0, r.output
    r = run("analyze", out, "--oracle", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    (ep,) = doc["episodes"]
    orc = ep["oracle"]
    first, second = ep["attempts"]
    # the oracle's fatal actions are the evaluator's certified dead ends, attempt by attempt
    assert [x for x, _ in orc["fatal"]] == [first["dead_end_step"], second["dead_end_step"]]
    assert orc["first_fatal"] == [first["dead_end_step"], "nut_and_bolt/medium/1"]
    assert orc["lost_board_moves"] == first["lost_moves"] + second["lost_moves"] == 2
    assert doc["oracle"]["fatal_actions"] == 2 and doc["oracle"]["moves"] == orc["moves"] == 22
    o = oracle_for("nut_and_bolt/medium/1")
    costs = [s[5] for s in orc["steps"] if s[5] is not None]
    assert costs and all(c == "inf" or c >= 0 for c in costs)
    # the optimal share counts the moves of cost 0 among those judged
    assert orc["optimal_share"] == pytest.approx(100.0 * orc["optimal_moves"] / orc["judged_moves"])
    assert orc["judged_moves"] == 20
    d0 = o.at().distance
    assert orc["steps"][0][2] is None or orc["steps"][0][2] <= d0 + 1
    r = run("analyze", out, "--oracle")
    assert r.exit_code == 0 and "oracle (this project's step metrics): 20 of 22 moves judged" in r.output, r.output
    assert f"first fatal move at action {first['dead_end_step']} (nut_and_bolt/medium/1)" in r.output


def test_hint_where_only_bounds_are_known_claims_no_best_move():
    r = run("hint", "rush_hour/hard/6", "--budget", "50", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    # the per-state BFS (within its budget) is exact: the same answer as the whole graph's
    assert doc["answer"]["exact"] and doc["answer"]["distance"] == oracle_for("rush_hour/hard/6").at().distance
    # Color Connect hard/1 past a small graph budget: its route search finds a solution, not the
    # fewest actions: bounds, said as bounds, and no move called best
    level = load_level("color_connect/hard/1")
    a = Oracle(level, graph_budget=1000).at()
    assert not a.exact and a.status == "solvable" and 1 <= a.lower <= a.upper
    r = run("hint", "color_connect/hard/1", "--budget", "1000")
    assert r.exit_code == 0, r.output
    assert f"between {a.lower} and {a.upper} moves to win (bounds" in r.output
    assert "best next moves: not proven (only bounds are known)" in r.output and "more (--all)" in r.output


def test_kept_oracles_are_dropped_oldest_first_past_the_state_cap(monkeypatch):
    import longpuzzle.solvers.oracle as om

    monkeypatch.setattr(om, "KEPT_STATES", 500)
    kept = {}
    a = om.keep(kept, "a", lambda: Oracle("rush_hour/hard/3"))        # 2,469 states: over the cap alone
    a.at()
    b = om.keep(kept, "b", lambda: Oracle("maze_paint/easy/1"))       # 79 states
    b.at()
    assert list(kept) == ["b"]                                         # the oldest went
    c = om.keep(kept, "c", lambda: Oracle("maze_paint/easy/2"))
    c.at()
    assert om.keep(kept, "b", lambda: None) is b and list(kept) == ["c", "b"]   # a hit: most recent


@pytest.mark.parametrize("lid", SMALL + ["nut_and_bolt/medium/3"])
def test_the_per_state_solvers_agree_with_the_whole_graph(lid):
    """Ways 2 and 3 (graphs from the asked state, the game's solver on it), forced by a level
    graph budget too small, on states of random walks: where they say exact, the whole graph's
    distance or dead end; where they give bounds, bounds that hold it."""
    level = load_level(lid)
    ref = oracle_for(level)
    assert ref.whole
    for local in (0, 50_000):
        o = Oracle(level, graph_budget=2, local_budget=local)
        for seed in range(2):
            states, _ = random_walk(level, seed, 25)
            for s in states[::4]:
                got, want = o.at(s), ref.at(s)
                assert not o.whole
                if got.exact:
                    assert (got.dead_end, got.distance) == (want.dead_end, want.distance), (lid, got, want)
                else:
                    assert not want.dead_end or got.status == "unknown"
                    assert want.dead_end or (got.lower <= want.distance
                                             and (got.upper is None or want.distance <= got.upper))
