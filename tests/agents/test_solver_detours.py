"""The solver agent's plans kept on disk (agents/plans.py), and the solver agent after a
detour (a dataset's random move off its plan): it mends the plan it left without a search
where it can, and otherwise searches for a plan soon (solve's ``shortest=False``) rather
than the shortest; the evaluator certifies nothing when asked for no certificates, which is
how dataset episodes run."""

from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest

import longpuzzle.solvers as solvers
from longpuzzle.agents import plans as plan_store
from longpuzzle.agents.base import action_spec
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import Settings
from longpuzzle.agents.harness.objective import run_objective
from longpuzzle.agents.datasets.build import DatasetConfig
from longpuzzle.agents.datasets.collect import play_episode
from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.registry import get_puzzle, puzzles
from longpuzzle.solvers import solve


def _first_objective(game: str) -> str:
    return builtin_catalog().objectives(game)[0].id


GAMES = sorted(p.id for p in puzzles())


def _on_level(level_id: str) -> SolverAgent:
    """A solver agent whose model of the app stands on ``level_id`` (the direct protocol)."""
    game, diff, n = level_id.split("/")
    a = SolverAgent()
    a.reset(f"Complete all levels of {get_puzzle(game).title} at {diff} difficulty. (level {n})",
            action_spec(540, 960))
    assert a.model.session.level.id == level_id
    return a


def _plays_to_solved(level, state, plan) -> bool:
    p = get_puzzle(level.game)
    cur = state
    for m in plan:
        cur = p.apply(level, cur, m)           # raises on an illegal move
    return p.is_solved(level, cur)


class _NoWriter:
    """A dataset writer that keeps nothing."""

    def add(self, *a, **k):
        pass

    def end_episode(self, *a, **k):
        pass


def _count_calls(monkeypatch, name: str) -> list:
    """Wrap longpuzzle.solvers.<name>; the list gets one entry per call."""
    calls = []
    real = getattr(solvers, name)

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(solvers, name, spy)
    return calls


class _Searches:
    """Records every solve() the agent makes: (state, shortest)."""

    def __init__(self, monkeypatch):
        monkeypatch.setenv("LONGPUZZLE_PLAN_CACHE", "0")         # every position searched, none read from disk
        self.calls = []
        real = solvers.solve

        def spy(level, *, state=None, shortest=True, **kw):
            self.calls.append((level.id, None if state is None else state.copy(), shortest))
            return real(level, state=state, shortest=shortest, **kw)
        monkeypatch.setattr(solvers, "solve", spy)


@pytest.mark.parametrize("game", GAMES)
def test_a_detour_is_mended_from_the_plan_it_left_else_planned_soon(game, monkeypatch):
    level_id = builtin_catalog().objective(_first_objective(game)).level_ids[0]
    probe = _on_level(level_id)
    assert probe._plan()
    level, p = probe.model.session.level, probe.model.session.puzzle
    start, old = probe.model.session.state.copy(), list(probe.plan)
    best = solve(level, state=start)
    detours = p.legal_moves(level, start)[:6]
    assert detours
    searches = _Searches(monkeypatch)
    mended = 0
    for d in detours:
        plan_store.clear_memory()
        a = _on_level(level_id)
        assert a._plan() and a.plan == old                  # the same plan, from the cache or not
        a.leave_plan(d)
        a.model.dispatch(a.model.gesture_for(d))             # the detour, through the GUI like any move
        here = a.model.session.state.copy()
        assert not np.array_equal(here, start)
        searches.calls.clear()
        if not a._plan():                                    # a dead end: only a search may say so
            assert searches.calls and solve(level, state=here).status == "unsolvable"
            continue
        new = list(a.plan)
        assert _plays_to_solved(level, here, new)
        if not searches.calls:
            mended += 1
            assert a.mended_by in ("without", "as is", "undone", "near undo")
            assert len(new) <= len(old) + 1
            if d == old[0]:
                assert new == old[1:]                        # the detour was the plan's next move
            if best.optimal and len(old) == best.length and a.mended_by != "near undo":
                shortest_here = solve(level, state=here)
                if shortest_here.optimal:
                    assert len(new) <= shortest_here.length + 2
        else:
            assert a.mended_by is None
            assert [s for _, _, s in searches.calls] == [False]      # a plan soon, not the shortest
    assert mended >= 1, f"no detour on {level_id} was mended without a search"


def _mended_by_the_nearest_undo(level_id: str, searches):
    """The detours from ``level_id``'s start that no move undoes exactly and that the solver
    agent mends by the nearest undo (each checked as it is found), lazily."""
    probe = _on_level(level_id)
    assert probe._plan()
    level, p = probe.model.session.level, probe.model.session.puzzle
    start, old = probe.model.session.state.copy(), list(probe.plan)
    for d in p.legal_moves(level, start):
        here, _ = p.step(level, start, d)
        if any(np.array_equal(p.step(level, here, u)[0], start) for u in p.legal_moves(level, here)):
            continue                                         # a move undoes it exactly: not this case
        a = _on_level(level_id)
        a.plan = list(old)                                   # (the plan the probe searched for)
        a.leave_plan(d)
        a.model.dispatch(a.model.gesture_for(d))
        assert np.array_equal(a.model.session.state, here)
        searches.calls.clear()
        if not (a._plan() and a.mended_by == "near undo"):
            continue
        assert not searches.calls
        after, _ = p.step(level, here, a.plan[0])
        # nearer the state before the detour than here, though not it
        assert 0 < np.count_nonzero(after != start) < np.count_nonzero(here != start)
        assert a.plan[1:] == old and _plays_to_solved(level, here, a.plan)
        yield d


def test_a_detour_no_move_undoes_is_mended_by_the_nearest_undo(monkeypatch):
    """Bolt Unscrew: a screw moved off the plan, and the boards it held swung. Moving the
    screw back leaves them hanging at other angles (no move gives the state before the
    detour again), yet the old plan after it still solves the level: mended without a search."""
    searches = _Searches(monkeypatch)
    levels = builtin_catalog().objective("bolt_unscrew/hard").level_ids[:3]
    found = list(islice(((lid, d) for lid in levels for d in _mended_by_the_nearest_undo(lid, searches)), 2))
    assert found, "no Bolt Unscrew detour was mended by the nearest undo"


def test_after_a_restart_the_plan_is_the_shortest_again(monkeypatch):
    a = _on_level("rush_hour/easy/1")
    assert a._plan()
    first = list(a.plan)
    d = next(m for m in a.model.session.puzzle.legal_moves(a.model.session.level, a.model.session.state)
             if m != first[0])
    a.leave_plan(d)
    a.model.dispatch(a.model.gesture_for(d))
    a.model.dispatch(a._click_widget("restart"))
    assert np.array_equal(a.model.session.state, a.model.session.level.initial)
    searches = _Searches(monkeypatch)
    plan_store.clear_memory()
    assert a._plan()
    assert a.plan == first and [s for _, _, s in searches.calls] == [True]


def test_quick_solve_skips_the_proof_and_still_solves():
    lvl = load_level("bolt_unscrew/hard/1")
    full, quick = solve(lvl), solve(lvl, shortest=False)
    assert full.status == quick.status == "solvable"
    assert full.optimal and not quick.optimal
    assert quick.states < full.states and quick.length >= full.length
    assert _plays_to_solved(lvl, lvl.initial, quick.actions) and _plays_to_solved(lvl, lvl.initial, full.actions)
    nut = load_level(builtin_catalog().objective(_first_objective("nut_and_bolt")).level_ids[-1])
    q, f = solve(nut, shortest=False), solve(nut)
    assert q.status == f.status == "solvable" and q.states <= f.states and q.length >= f.length
    assert _plays_to_solved(nut, nut.initial, q.actions)


def test_cli_solve_quick():
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    r = CliRunner().invoke(cli, ["solve", "bolt_unscrew/hard/1", "--quick", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["status"] == "solvable" and d["optimal"] is False


def test_dataset_searches_after_detours_are_quick_and_from_starts_shortest(monkeypatch):
    searches = _Searches(monkeypatch)

    (spec,) = DatasetConfig(objectives=["bolt_unscrew/easy"], episodes=1, detours=0.15, seed=3).plan()
    plan_store.clear_memory()
    out = play_episode(spec, {"budget": None}, _NoWriter())
    assert out["solved_levels"] == out["target_levels"] and out["detours"] >= 3
    assert searches.calls
    for lid, state, shortest in searches.calls:
        assert shortest == np.array_equal(state, load_level(lid).initial), (lid, shortest)
    after_detours = sum(not s for _, _, s in searches.calls)
    assert after_detours < out["detours"]           # some detours were mended without a search


def test_no_certificates_when_the_budget_is_zero_and_none_in_datasets(monkeypatch, tmp_path):
    calls = _count_calls(monkeypatch, "certify")
    from longpuzzle.agents import evaluator
    evaluator._shared.clear()
    r = run_objective(SolverAgent(), "bolt_unscrew", "easy",
                      settings=Settings(max_actions=8, action_timeout=None, save_frames=False, certify_budget=0),
                      folder=tmp_path / "none")
    assert r is not None and not calls
    evaluator._shared.clear()
    run_objective(SolverAgent(), "bolt_unscrew", "easy",
                  settings=Settings(max_actions=8, action_timeout=None, save_frames=False), folder=tmp_path / "some")
    assert calls                                     # the default budget certifies each new state
    calls.clear()
    evaluator._shared.clear()
    (spec,) = DatasetConfig(objectives=["bolt_unscrew/easy"], episodes=1, settings={"max_actions": 8}).plan()
    play_episode(spec, {"budget": None, "max_actions": 8}, _NoWriter())
    assert not calls


@pytest.fixture
def plan_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGPUZZLE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LONGPUZZLE_PLAN_CACHE", raising=False)
    monkeypatch.setattr(plan_store, "DISK_SECONDS", 0.0)      # keep every plan, however quick
    plan_store.clear_memory()
    yield tmp_path / "cache" / "plans"
    plan_store.clear_memory()


def _searched(monkeypatch, level_id):
    """(plan, searches) of a new solver agent's first plan on ``level_id``."""
    real = solvers.solve
    calls = _count_calls(monkeypatch, "solve")
    a = _on_level(level_id)
    assert a._plan()
    monkeypatch.setattr(solvers, "solve", real)
    return list(a.plan), len(calls)


def test_plans_are_kept_on_disk_and_read_back_checked(plan_folder, monkeypatch, caplog):
    lid = "rush_hour/easy/2"
    plan, n = _searched(monkeypatch, lid)
    assert n == 1
    files = list((plan_folder / "rush_hour").rglob("*.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc == {"level": lid, "plan": plan}
    plan_store.clear_memory()                         # as a new process finds it
    again, n = _searched(monkeypatch, lid)
    assert (again, n) == (plan, 0)
    # a file that is not a plan, or a plan that does not solve from there: searched again, rewritten
    for bad in ("{not json", json.dumps({"level": lid, "plan": plan[:-1]}), json.dumps({"level": lid, "plan": ["x"]}),
                json.dumps({"level": "rush_hour/easy/1", "plan": plan}), json.dumps([1, 2])):
        files[0].write_text(bad)
        plan_store.clear_memory()
        caplog.clear()
        with caplog.at_level("WARNING", logger="longpuzzle.agents.plans"):
            got, n = _searched(monkeypatch, lid)
        assert (got, n) == (plan, 1), bad
        assert "ignoring" in caplog.text
        assert json.loads(files[0].read_text()) == doc
    assert not list(plan_folder.rglob("*.tmp"))


def test_kept_plans_belong_to_the_code_and_the_budget(plan_folder, monkeypatch):
    lid = "rush_hour/easy/2"
    plan, n = _searched(monkeypatch, lid)
    assert n == 1
    plan_store.clear_memory()
    monkeypatch.setattr(plan_store, "_code_digest", "another version of the solvers")
    _, n = _searched(monkeypatch, lid)
    assert n == 1                                     # not the plan the other code searched
    assert len(list(plan_folder.rglob("*.json"))) == 2
    monkeypatch.setenv("LONGPUZZLE_PLAN_CACHE", "0")
    plan_store.clear_memory()
    _, n = _searched(monkeypatch, lid)
    assert n == 1 and len(list(plan_folder.rglob("*.json"))) == 2


def test_an_unwritable_plan_folder_loses_only_the_disk_copy(tmp_path, monkeypatch, caplog):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("LONGPUZZLE_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.delenv("LONGPUZZLE_PLAN_CACHE", raising=False)
    monkeypatch.setattr(plan_store, "DISK_SECONDS", 0.0)
    monkeypatch.setattr(plan_store, "_warned", [])
    plan_store.clear_memory()
    with caplog.at_level("WARNING", logger="longpuzzle.agents.plans"):
        plan, n = _searched(monkeypatch, "rush_hour/easy/2")
        assert n == 1 and plan and "could not keep a plan" in caplog.text
        _, n = _searched(monkeypatch, "rush_hour/easy/2")
        assert n == 0                                 # still kept for the process
        caplog.clear()
        _, n = _searched(monkeypatch, "rush_hour/easy/3")
        assert n == 1 and "could not keep" not in caplog.text      # said once a process
    plan_store.clear_memory()
