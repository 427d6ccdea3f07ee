"""Replaying a run folder, side by side with the code before replay verified everything
(baseline.REPLAY_BASELINE, issue 35).

run       ``longpuzzle replay RUN_DIR`` on a finished eval run (the solver, two episodes of
          maze_paint/medium with every frame stored): today every episode replayed with its
          header, every record field, its end and result.json recomputed, then run.json and
          summary.json checked (verify.check_run); the baseline replayed each episode folder
          (replay_episode, fewer fields compared). GUI actions replayed per second.
record    what report and leaderboard pay for a run verified before: reading its
          verification record and hashing every file it names (no replay).

Each round of today's code follows one of the baseline's code on the same run (timed in the
round's set-up), so both sample the same load; the summary prints the pairs' ratios."""

import pytest

from longpuzzle.agents.harness import Settings
from longpuzzle.agents.runner import RunConfig, SequentialBackend, execute, start_run
from longpuzzle.agents.verify import check_run, write_verification

from baseline import REPLAY_BASELINE, Baseline
from baseline import side_by_side as _side_by_side

OBJECTIVE = "maze_paint/medium"


@pytest.fixture(scope="module")
def baseline():
    b = Baseline(REPLAY_BASELINE)
    yield b
    b.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    cfg = RunConfig(agent="solver", objectives=[OBJECTIVE], episodes=2, settings=Settings(action_timeout=None).as_dict())
    start_run(out, cfg)
    s = execute(out, cfg, backend=SequentialBackend(), quiet=True)
    assert all(e["success"] for e in s["episodes"])
    return out


def test_replay_a_run(benchmark, run_dir, baseline):
    warm = check_run(run_dir, use_record=False)
    old_warm = baseline(op="replay_run", folder=str(run_dir))
    assert warm.ok and old_warm["ok"]
    actions = sum(e["steps"] for e in warm.episodes)
    assert actions == old_warm["actions"]

    def new():
        assert check_run(run_dir, use_record=False).ok

    def old():
        r = baseline(op="replay_run", folder=str(run_dir))
        assert r["ok"]
        return r
    benchmark.group = "replay"
    _side_by_side(benchmark, new, old, 5, actions, old_warm["actions"], unit="GUI actions replayed",
                  pair=f"{OBJECTIVE} x2 run")


def test_a_verified_run_by_its_record(benchmark, run_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LONGPUZZLE_VERIFY_KEY", str(tmp_path / "verify.key"))
    chk = check_run(run_dir, use_record=False)
    write_verification(run_dir, chk)
    benchmark.group = "replay"
    benchmark.extra_info.update(unit="runs", ops=1)
    r = benchmark(check_run, run_dir)
    assert r.ok and r.source == "record"
