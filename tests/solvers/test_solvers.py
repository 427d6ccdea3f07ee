"""Solvers: optimal lengths against the catalogue and against plain Python brute force,
dead-end certificates, the Truck Escape greedy lemma, the CLI, and the on-disk kernel cache."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections import deque

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from longpuzzle.cli import cli
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers import certify, explore, solve
from longpuzzle.solvers.core import check_solution
from longpuzzle.solvers.knowledge.rush_hour import database_record

HARDEST = "IBBxooIooLDDJAALooJoKEEMFFKooMGGHHHM"
NB = get_puzzle("nut_and_bolt")


# ---------------------------------------------------------------- plain Python brute force
def brute_force(level, state, limit=200_000):
    """Breadth-first search over raw states through the public rules API (no packing, no
    symmetry, no pruning). Returns the shortest solution length, or None if none exists."""
    p = get_puzzle(level.game)
    start = bytes(np.asarray(state).tobytes())
    if p.is_solved(level, state):
        return 0
    seen = {start}
    frontier = deque([(np.array(state), 0)])
    while frontier:
        s, d = frontier.popleft()
        for a in p.legal_moves(level, s):
            t, _ = p.step(level, s, a)
            key = t.tobytes()
            if key in seen:
                continue
            if p.is_solved(level, t):
                return d + 1
            seen.add(key)
            assert len(seen) < limit, "brute force too large for a test"
            frontier.append((t, d + 1))
    return None


def nut_level(bolts, cap):
    names = ["red", "yellow", "blue", "green"]
    rec = {"capacity": cap, "bolts": [{"nuts": [names[c] for c in b]} for b in bolts]}
    return NB.build_level(rec, difficulty="easy", number=1, where="test")


@st.composite
def nut_instances(draw):
    """Small random Nut and Bolt positions: K colours of cap nuts each, dealt at random
    onto K + e bolts (bottom to top), e empty-ish bolts of slack."""
    cap = draw(st.integers(2, 3))
    k = draw(st.integers(1, 3))
    extra = draw(st.integers(0, 2))
    nuts = [c for c in range(k) for _ in range(cap)]
    order = draw(st.permutations(nuts))
    n = k + extra
    bolts = [[] for _ in range(n)]
    for c in order:
        room = [b for b in range(n) if len(bolts[b]) < cap]
        b = draw(st.sampled_from(room))
        bolts[b].append(c)
    return nut_level(bolts, cap)


@settings(max_examples=60, deadline=None)
@given(nut_instances())
def test_nut_and_bolt_certificate_and_length_match_brute_force(level):
    want = brute_force(level, level.initial)
    cert = certify(level, level.initial)
    assert cert.status == ("unsolvable" if want is None else "solvable")
    if want is not None:
        assert check_solution(level, level.initial, cert.actions)
    for method in ("bfs", "astar", None):
        r = solve(level, method=method)
        if want is None:
            assert r.status == "unsolvable"
        else:
            assert r.status == "solvable" and r.optimal and r.length == want
            assert check_solution(level, level.initial, r.actions)


def test_rush_hour_hardest_database_position():
    p = get_puzzle("rush_hour")
    level = p.build_level(database_record(HARDEST), difficulty="hard", number=1, where="database")
    assert sum(v["target"] for v in level.data["vehicles"]) == 1 and len(level.data["blockers"]) == 1
    r = solve(level)
    assert r.status == "solvable" and r.optimal and r.length == 60
    assert check_solution(level, level.initial, r.actions)
    raw = explore(level)
    assert raw.status == 0 and raw.n == 2332
    # the same search in Python finds the same optimum
    assert brute_force(level, level.initial) == 60


@pytest.mark.parametrize("game", ["maze_paint", "rush_hour"])
def test_recorded_optima(game):
    for level in builtin_catalog().levels(game):
        r = solve(level)
        assert r.status == "solvable" and r.optimal, level.id
        assert r.length == level.extra["optimal_moves"], level.id
        assert check_solution(level, level.initial, r.actions), level.id


def test_small_levels_match_python_brute_force():
    for lid in ["maze_paint/easy/1", "maze_paint/medium/2", "rush_hour/easy/5", "nut_and_bolt/easy/3",
                "nut_and_bolt/medium/2"]:
        level = builtin_catalog().level(lid)
        assert solve(level).length == brute_force(level, level.initial), lid


def test_nut_and_bolt_hard_levels_and_budget():
    level = builtin_catalog().level("nut_and_bolt/hard/1")
    r = solve(level)
    assert r.status == "solvable" and check_solution(level, level.initial, r.actions)
    assert r.lower_bound is not None and r.lower_bound <= r.length
    tiny = solve(level, method="bfs", budget=2000)
    assert tiny.status == "unknown" and tiny.states == 2000 and not tiny.moves


def _dead_end_walk(level, seed):
    rng = random.Random(seed)
    s = level.initial.copy()
    for _ in range(rng.randrange(6, 20)):
        good = [a for a in NB.legal_moves(level, s) if len(NB.legal_moves(level, NB.step(level, s, a)[0])) >= 3]
        if not good:
            break
        s, _ = NB.step(level, s, rng.choice(good))
    return s


def test_nut_and_bolt_mid_game_certificates_on_hard_levels():
    level = builtin_catalog().level("nut_and_bolt/nightmare/1")
    dead = _dead_end_walk(level, 17)
    assert len(NB.legal_moves(level, dead)) > 0
    c = certify(level, dead, budget=2_000_000)
    assert c.status == "unsolvable" and c.states > 10
    # every successor is a dead end too (checked through the rules API)
    for a in NB.legal_moves(level, dead):
        assert certify(level, NB.step(level, dead, a)[0]).status == "unsolvable"
    # a solvable mid-game state gets a replayable solution
    level = builtin_catalog().level("nut_and_bolt/hard/1")
    mid = _dead_end_walk(level, 3)
    c = certify(level, mid, budget=2_000_000)
    if c.status == "solvable":
        assert check_solution(level, mid, c.actions)
    assert c.status in ("solvable", "unsolvable")


# ---------------------------------------------------------------- Truck Escape greedy lemma
@st.composite
def truck_levels(draw):
    rows, cols = draw(st.integers(2, 5)), draw(st.integers(2, 5))
    used = set()
    trucks = []
    dirs = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
    for _i in range(draw(st.integers(1, 7))):
        r, c = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
        d = draw(st.sampled_from(sorted(dirs)))
        hr, hc = r + dirs[d][0], c + dirs[d][1]
        if not (0 <= hr < rows and 0 <= hc < cols) or (r, c) in used or (hr, hc) in used:
            continue
        used |= {(r, c), (hr, hc)}
        trucks.append({"id": f"t{len(trucks) + 1}", "tail": [r, c], "direction": d})
    if not trucks:
        trucks = [{"id": "t1", "tail": [0, 0], "direction": "right" if cols > 1 else "down"}]
    return get_puzzle("truck_escape").build_level({"rows": rows, "cols": cols, "trucks": trucks},
                                                   difficulty="default", number=1, where="test")


@settings(max_examples=80, deadline=None)
@given(truck_levels(), st.data())
def test_truck_escape_removing_a_truck_never_blocks_another(level, data):
    p = get_puzzle("truck_escape")
    n = int(level.lv[2])
    present = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    s = np.array([sum(present)] + [int(x) for x in present], np.int8)
    free = set(p.legal_moves(level, s))
    for i in free:
        t, _ = p.step(level, s, i)
        assert free - {i} <= set(p.legal_moves(level, t))
    # hence greedy decides solvability exactly, and every solution has n_present moves
    r = solve(level, state=s)
    want = brute_force(level, s)
    assert r.status == ("unsolvable" if want is None else "solvable")
    if want is not None:
        assert r.length == want == int(s[0]) and r.optimal
        assert certify(level, s).status == "solvable"
    else:
        assert certify(level, s).status == "unsolvable"


def test_color_connect_routes_replay():
    for lid in ["color_connect/easy/1", "color_connect/hard/2", "color_connect/hard/9"]:
        level = builtin_catalog().level(lid)
        r = solve(level)
        assert r.status == "solvable" and check_solution(level, level.initial, r.actions)
        p = get_puzzle("color_connect")
        acts = [a for text in r.routes for a in p.actions(level, text)]
        assert check_solution(level, level.initial, acts)


# ---------------------------------------------------------------- command line
def test_cli_solve_and_verify_json():
    runner = CliRunner()
    res = runner.invoke(cli, ["solve", "rush_hour/hard/1", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert set(d) >= {"level", "status", "moves", "length", "optimal", "states", "seconds"}
    assert d["status"] == "solvable" and d["optimal"] and d["length"] == len(d["moves"]) == 13
    res = runner.invoke(cli, ["verify", "--game", "truck_escape", "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.output.splitlines() if x.startswith("{")]
    assert len(rows) == 5 and all(r["status"] == "solvable" and r["optimal"] and r["ok"] for r in rows)
    res = runner.invoke(cli, ["solve", "rush_hour/hard/99"])
    assert res.exit_code == 2 and "error:" in res.output


# ---------------------------------------------------------------- compiled cache
_CACHE_SCRIPT = textwrap.dedent("""
    import json
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.solvers import solve, certify
    from longpuzzle.solvers.core import search_kernels, run, BEST_FIRST, DFS
    misses = 0
    for g in builtin_catalog().games():
        lvl = builtin_catalog().levels(g)[0]
        for mode in (0, 1, 2):
            run(lvl, lvl.initial, mode, budget=50)
        mod = search_kernels(g)
        mod.pack_one(lvl.lv, __import__("longpuzzle.solvers.knowledge", fromlist=["knowledge"]).knowledge(g).aux(lvl),
                     lvl.initial.copy(), __import__("numpy").zeros(64, "uint64"))
        for name in dir(mod):
            f = getattr(mod, name)
            if hasattr(f, "stats") and hasattr(f, "overloads"):
                misses += sum(f.stats.cache_misses.values())
    print(json.dumps({"misses": misses}))
""")


def test_second_process_does_not_recompile_search_kernels():
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], capture_output=True, text=True,
                           env=dict(os.environ), timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
        runs.append(json.loads(r.stdout.strip().splitlines()[-1])["misses"])
    assert runs[1] == 0, f"the second process compiled {runs[1]} search functions again"


def test_bolt_unscrew_search_and_predicate():
    p = get_puzzle("bolt_unscrew")
    for lid in ["bolt_unscrew/easy/3", "bolt_unscrew/easy/5", "bolt_unscrew/easy/8"]:
        level = builtin_catalog().level(lid)
        r = solve(level, budget=50_000)
        assert r.status == "solvable" and check_solution(level, level.initial, r.actions)
        if lid != "bolt_unscrew/easy/8":
            assert r.optimal and r.length == brute_force(level, level.initial)
        c = certify(level, level.initial, budget=50_000)
        assert c.status == "solvable" and check_solution(level, level.initial, c.actions)
    # the cheap certificate is the model's own predicate, used before any search
    from longpuzzle.solvers.knowledge import knowledge
    k = knowledge("bolt_unscrew")
    level = builtin_catalog().level("bolt_unscrew/easy/8")
    for a in p.legal_moves(level, level.initial):
        s, _ = p.step(level, level.initial, a)
        assert bool(k.dead_end(level, s)) == p.is_dead_end(level, s)


@pytest.mark.parametrize("game", ["rush_hour", "maze_paint", "nut_and_bolt", "bolt_unscrew", "color_connect",
                                  "truck_escape"])
def test_the_search_source_renders_into_each_games_module_with_every_name_bound(game):
    # the search and the generic hooks are real source (solvers/search_source.py, seen by
    # linters), rendered per game: every global name a function of a game's generated
    # search module uses is bound there (by its head, an import, a hook or the search)
    import ast
    import builtins
    import symtable

    from longpuzzle.solvers import core

    text = core.SEARCH_SOURCE.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    by_ast = {n.name: "".join(lines[min([d.lineno for d in n.decorator_list], default=n.lineno) - 1:n.end_lineno])
              for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    assert core.top_level_functions(text) == by_ast          # the cheap line scan finds what ast does
    hooks, search = core._search_source()
    assert set(hooks) == set(core.HOOKS) and "def _steps(" in search and "def _start(" in search
    head = "from kernels import step_into, legal_into, is_solved, progress\n"     # engine.specialize's
    text = head + core.hook_source(game) + search
    top = symtable.symtable(text, "generated", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    funcs = [t for t in top.get_children() if t.get_type() == "function"]
    assert {"_steps", "_start", "pack_one", "unpack_one"} <= {f.get_name() for f in funcs}
    for f in funcs:
        free = {n for n in f.get_globals() if n not in bound and not hasattr(builtins, n)}
        assert not free, (f.get_name(), free)
