"""``longpuzzle diagnose checkpoints``: candidates from recorded runs and from scratch
(agents/diagnose/checkpoint_sources.py), written whole or not at all."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.agents.diagnose import checkpoints as ck
from longpuzzle.agents.diagnose.checkpoint_sources import plan, spread
from longpuzzle.agents.harness.replay import replay_episode
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.cli import cli
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.core import check_solution, solve

HARD1 = "bolt_unscrew/hard/1"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _records(folder):
    return [json.loads(l) for l in (folder / "checkpoints.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two recorded eval runs of Bolt Unscrew hard: the greedy agent (a dead end at step 12,
    then a restart) and the solver (wins level 1)."""
    root = tmp_path_factory.mktemp("runs")
    for agent, n in (("greedy", 14), ("solver", 15)):
        r = run("eval", "--agent", agent, "--objective", "bolt_unscrew/hard", "--max-actions", n,
                "--out", root / agent)
        assert r.exit_code == 0, r.output
    return root


def test_spread_keeps_the_ends_and_the_order():
    assert spread(list(range(10)), 4) == [0, 3, 6, 9]
    assert spread([1, 2], 5) == [1, 2] and spread([1, 2, 3], 0) == []


def test_from_runs_finds_the_dead_end_and_the_controls_of_the_won_attempt(runs, tmp_path):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--from", runs / "greedy", "--from", runs / "solver", "--out", out)
    assert r.exit_code == 0, r.output
    recs = _records(out)
    dead = [x for x in recs if x["kind"] == "dead_end"]
    ctrl = [x for x in recs if x["kind"] == "control"]
    assert [(x["level"], x["step"]) for x in dead] == [(HARD1, 12)]
    assert dead[0]["origin"]["run"] == str((runs / "greedy").resolve())
    # the solver's attempt won: its boards before the win, each d(s) = 11 - moves played
    assert [x["distance"] for x in ctrl] == sorted((x["distance"] for x in ctrl), reverse=True)
    assert ctrl and ctrl[0]["distance"] == 11 and all(x["distance"] >= 1 for x in ctrl)
    assert len({x["state_sha256"] for x in recs}) == len(recs)        # distinct states
    # the episodes are inside the folder and the loader validates every checkpoint
    assert all((out / x["episode"] / "events.jsonl").is_file() for x in recs)
    assert len(ck.load_checkpoints(out)) == len(recs)
    assert "validated" in run("diagnose", "checkpoints", "--check", out).output
    doc = json.loads(run("diagnose", "checkpoints", "--check", out, "--json").output)
    assert doc["checkpoints"] == recs


def test_limits_spread_the_kept_states(runs, tmp_path):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", runs / "solver", "--kind", "control", "--max-controls", 3, "--out", out)
    assert r.exit_code == 0, r.output
    assert [x["distance"] for x in _records(out)] == [11, 6, 1]


def test_a_run_of_another_catalogue_is_refused_and_nothing_is_written(runs, tmp_path):
    import shutil

    bad = tmp_path / "other"
    shutil.copytree(runs / "greedy", bad)
    ev = next(bad.rglob("events.jsonl"))
    head = read_events(ev.parent)[0]
    ev.write_text(ev.read_text().replace(head["catalog"]["hash"], "f" * 64, 1))
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--from", bad, "--out", out)
    assert r.exit_code == 2
    assert r.output.count("error:") == 1 and "another catalogue" in r.output
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]       # no staging folder left


def test_from_scratch_greedy_dead_ends_continue_and_replay(tmp_path):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--level", HARD1, "--policy", "greedy", "--count", 2, "--preset", "fast",
            "--out", out)
    assert r.exit_code == 0, r.output
    cps = ck.load_checkpoints(out)
    assert [c.kind for c in cps] == ["dead_end", "dead_end"] and cps[0].episode == cps[1].episode
    assert cps[0].state_sha256 != cps[1].state_sha256
    assert all(c.certificate["kind"] == "no_free_hole" for c in cps)
    # the second dead end comes after a native restart in the same recorded episode
    assert cps[1].origin["segment"] == 2 and cps[1].step > cps[0].step
    assert replay_episode(out / cps[0].episode).ok
    cont = tmp_path / "cont"
    cps[1].continue_with(GreedyAgent(), out=cont, settings=Settings(max_actions=2))
    assert read_events(cont)[0]["continued_from"]["step"] == cps[1].step
    assert replay_episode(cont).ok


def test_from_scratch_controls_lie_on_a_verified_solution(tmp_path):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--level", HARD1, "--policy", "solution", "--count", 3, "--out", out)
    assert r.exit_code == 0, r.output
    cps = ck.load_checkpoints(out)
    lvl = load_level(HARD1)
    sol = solve(lvl).actions
    assert [c.distance for c in cps] == [len(sol) - c.origin["moves"] for c in cps]
    for c in cps:                       # the rest of the solution solves each state
        s = c.restore()
        assert check_solution(lvl, s.session.state, sol[c.origin["moves"]:])
        assert s.viewport == (1280, 900) and s.lang == "zh"           # the paper preset's screen


def test_nut_and_bolt_dead_ends_carry_the_exhaustive_certificate(tmp_path):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--level", "nut_and_bolt/medium/1", "--policy", "greedy", "--count", 1,
            "--preset", "fast", "--out", out)
    assert r.exit_code == 0, r.output
    (cp,) = ck.load_checkpoints(out)
    assert cp.certificate["kind"] == "exhaustive"
    s = cp.restore()
    # every legal move leads to another unsolvable board (exhaustion, one level deep)
    p, lvl = get_puzzle("nut_and_bolt"), s.level
    for a in p.legal_moves(lvl, s.session.state):
        t, _ = p.step(lvl, s.session.state, a)
        assert solve(lvl, state=t).status != "solvable"
    # the level's start (entered at step 3) is solvable: refused as a dead end
    with pytest.raises(ck.CheckpointError, match="finds the board solvable"):
        ck.make_checkpoint(out, out / cp.episode, 3, "dead_end", catalog=cp.catalog)


def test_plan_segments_reach_certified_boards():
    lvl = load_level(HARD1)
    p = get_puzzle("bolt_unscrew")
    for policy in ("greedy", "fatal"):
        for moves, ks in plan(lvl, policy, 3):
            s = lvl.initial
            for a in moves:
                s, code = p.step(lvl, s, a)
            assert ks == [len(moves)] and p.diagnostics(lvl, s)["usable_holes"] == 0
            assert not np.array_equal(s, lvl.initial)


@pytest.mark.parametrize("args, match", [
    (["--level", HARD1], "--level needs --policy"),
    (["--policy", "greedy"], "--policy needs --level"),
    ([], "give --from"),
    (["--level", "bolt_unscrew/easy/1", "--policy", "greedy"], "reaches no certified dead end"),
    (["--level", "no_such/level/1", "--policy", "greedy"], ""),
])
def test_bad_input_gets_one_error_line(tmp_path, args, match):
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", *args, "--out", out)
    assert r.exit_code == 2, r.output
    assert r.output.count("error:") == 1 and match in r.output and "Traceback" not in r.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_check_of_a_malformed_folder_gets_one_error_line(tmp_path):
    (tmp_path / "manifest.json").write_text('{"kind": "longpuzzle-checkpoints", "version": 1, "catalog": "x"}')
    r = run("diagnose", "checkpoints", "--check", tmp_path)
    assert r.exit_code == 2 and r.output.count("error:") == 1 and "another catalogue" in r.output


def test_a_recording_that_misses_the_planned_states_is_refused(tmp_path, monkeypatch):
    from longpuzzle.agents.diagnose import checkpoint_sources as src
    from longpuzzle.agents.scripted import SolverAgent

    def miscount(self, action):             # the agent's count of its steps drifts by one per action
        self.steps += 2
        return SolverAgent.emit(self, action)
    monkeypatch.setattr(src.PolicyAgent, "emit", miscount)
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--level", HARD1, "--policy", "greedy", "--count", 1, "--preset", "fast",
            "--out", out)
    assert r.exit_code == 2 and "did not reach planned state" in r.output
    assert not out.exists()


def _garbage_line(run_dir):
    ev = next(run_dir.rglob("events.jsonl"))
    ev.write_text(ev.read_text() + "garbage\n")


@pytest.mark.parametrize("damage, match", [
    (lambda d: (d / "summary.json").write_text("{"), "not valid JSON"),
    (_garbage_line, "is not valid JSON"),
])
def test_a_malformed_run_folder_gets_one_error_line(runs, tmp_path, damage, match):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(runs / "greedy", bad)
    damage(bad)
    out = tmp_path / "ck"
    r = run("diagnose", "checkpoints", "--from", bad, "--out", out)
    assert r.exit_code == 2 and r.output.count("error:") == 1 and match in r.output, r.output
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_a_level_that_gives_fewer_states_than_asked_is_said_on_stderr(tmp_path):
    """Easy 1's shortest solution is short: asked for 50 controls, it gives one per move, and
    the command says so instead of leaving the shortfall to be noticed."""
    r = run("diagnose", "checkpoints", "--level", "bolt_unscrew/easy/1", "--policy", "solution", "--count", 50,
            "--preset", "fast", "--out", tmp_path / "ck")
    assert r.exit_code == 0, r.output
    got = len((tmp_path / "ck" / "checkpoints.jsonl").read_text().splitlines())
    assert 0 < got < 50
    assert f"bolt_unscrew/easy/1: {got} of the 50 states asked for" in r.stderr


def test_a_rejected_candidate_is_named_by_its_recorded_episode(runs, tmp_path):
    """An episode that does not replay is named by its recorded path (not by its copy's in the
    staging folder, which is gone by the time the line is read)."""
    import json
    import shutil

    forged = tmp_path / "forged"
    shutil.copytree(runs / "solver", forged)
    ev = next(iter(sorted(forged.rglob("events.jsonl"))))
    lines = [json.loads(x) for x in ev.read_text().splitlines()]
    i = next(i for i, x in enumerate(lines) if x.get("stream") == "public" and x.get("frames"))
    lines[i]["frames"] = ["0" * 32]
    ev.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = run("diagnose", "checkpoints", "--from", forged, "--out", tmp_path / "ck")
    rejected = [ln for ln in r.stderr.splitlines() if "does not replay" in ln]
    assert rejected, r.output
    assert f"{ev.parent} does not replay" in rejected[0] and ".tmp" not in rejected[0]
