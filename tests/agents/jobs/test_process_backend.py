"""Worker processes of this machine (agents/backends.ProcessBackend, ``--backend processes``):
eval episodes, dataset jobs, rollouts and solver jobs in real worker processes give what
the sequential backend gives (the same results, resume, shards byte for byte), with the
caller's catalogue; a job's error comes back as its own exception, a worker that dies is a
clear error naming the jobs left, and an interrupt stops the workers at once."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from longpuzzle.agents.jobs.local import BackendError, ProcessBackend, SequentialBackend, available_cpus
from longpuzzle.agents.harness import replay_episode
from longpuzzle.agents.runner import RunConfig, execute
from longpuzzle.cli import cli
from longpuzzle.agents.jobs import env_episodes, gather, random_walks, solve_levels

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from eval_runs import placeless, solver_run

pytestmark = pytest.mark.slow


def test_eval_in_worker_processes_equals_a_sequential_run_and_resumes(tmp_path):
    seq = solver_run(tmp_path / "seq", SequentialBackend())
    out = tmp_path / "proc"
    summary = solver_run(out, ProcessBackend(2))
    assert placeless(summary) == placeless(seq)
    assert [e["end"] for e in summary["episodes"]] == ["max_actions"] * 2 and summary["metrics"]["LC"] > 0
    folders = [out / e["folder"] for e in summary["episodes"]]
    rep = replay_episode(folders[0])
    assert rep.ok and rep.stored_frames                              # a worker's folder replays frame for frame
    keep = (folders[0] / "result.json").stat().st_mtime_ns
    (folders[1] / "result.json").unlink()                            # interrupted: runs again on resume
    run = RunConfig.from_dict(json.loads((out / "run.json").read_text())["run"])
    again = execute(out, run, backend=ProcessBackend(2), quiet=True)
    assert (folders[0] / "result.json").stat().st_mtime_ns == keep
    assert list(out.glob("*/episode_002.interrupted-1"))
    assert placeless(again) == placeless(seq)


def test_workers_play_the_callers_catalogue(tmp_path):
    from longpuzzle.agents.harness import replay_episode
    from longpuzzle.engine.catalog import Catalog, builtin_catalog
    doc = builtin_catalog().level_file("maze_paint")
    doc["objectives"] = [dict(o, levels=o["levels"][:2]) for o in doc["objectives"] if o["difficulty"] == "easy"]
    cat = Catalog(sources={"maze_paint": (json.dumps(doc), "two.json")}, name="two-levels")
    summary = solver_run(tmp_path / "cat", ProcessBackend(1), episodes=1, max_actions=None, catalog=cat)
    ep = summary["episodes"][0]
    assert ep["target_levels"] == 2 and ep["solved"] == 2 and summary["catalog"]["name"] == "two-levels"
    folder = tmp_path / "cat" / ep["folder"]
    res = json.loads((folder / "result.json").read_text())
    assert res["catalog"] == cat.identity()                       # the worker played the catalogue it was given
    assert replay_episode(folder, cat).ok                          # replayed on it here (it is stored nowhere)


def test_dataset_jobs_in_worker_processes_write_the_same_shards(tmp_path):
    from longpuzzle.agents.datasets.build import DatasetConfig, build
    from longpuzzle.agents.datasets.check import check_dataset, shard_differences
    cfg = DatasetConfig(objectives=["maze_paint/easy", "rush_hour/easy"], episodes=2, jobs=3, detours=0.1,
                        settings={"max_actions": 30})
    local = build(tmp_path / "local", cfg)
    procs = build(tmp_path / "procs", cfg, backend=ProcessBackend(2))
    assert [s["file"] for s in procs["shards"]] == [s["file"] for s in local["shards"]] and len(local["shards"]) == 3
    for a, b in zip(local["shards"], procs["shards"]):
        assert a["sha256"] == b["sha256"], (a["file"], shard_differences(tmp_path / "local" / a["file"],
                                                                          tmp_path / "procs" / b["file"]))
    assert procs["counts"] == local["counts"]
    assert sorted(p.name for p in (tmp_path / "procs" / "parts").iterdir()) == [f"job-{j:05d}.json" for j in range(3)]
    assert check_dataset(tmp_path / "procs", replay=False)["ok"]


def test_rollouts_and_solver_jobs_gather_what_one_process_gets():
    b = ProcessBackend(2)
    w_proc = random_walks("rush_hour/easy/2", 600, 80, seed=5, backend=b, chunks=3)
    w_seq = random_walks("rush_hour/easy/2", 600, 80, seed=5, chunks=3)
    for k in ("solved", "moves", "mean_final_progress", "jobs"):
        assert w_proc[k] == w_seq[k]
    assert w_proc["jobs"] == 3 and w_proc["moves"] > 0
    assert random_walks("rush_hour/easy/2", 100, 20, seed=1, backend=b)["jobs"] == 2     # chunks: the workers
    cfg = {"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/1"}
    strip = lambda r: [(e["return"], e["length"], e["terminated"]) for e in r["records"]]  # noqa: E731
    assert strip(env_episodes(cfg, 4, seed=2, backend=b, chunks=2)) == strip(env_episodes(cfg, 4, seed=2, chunks=2))
    sols = solve_levels(["rush_hour/easy/1", "maze_paint/easy/2"], backend=b)
    assert [s["level"] for s in sols] == ["rush_hour/easy/1", "maze_paint/easy/2"]
    assert all(s["status"] == "solvable" and s["optimal"] for s in sols)


# (the jobs below are the standard library's functions: a worker imports a job's function by
# its module's name, and this test module's name is pytest's own)

def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` and that have not exited (zombies left out)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    state, ppid = f.read().rsplit(") ", 1)[1].split()[:2]
            except (OSError, IndexError):
                continue
            if int(ppid) == pid and state not in "ZX":
                out.append(int(d))
    return out


def _workers() -> list[int]:
    """This process's worker processes: the children of its fork server."""
    servers = []
    for pid in _children(os.getpid()):
        try:
            if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes():
                servers.append(pid)
        except OSError:
            pass
    return [w for s in servers for w in _children(s)]


def test_a_job_error_comes_back_as_its_own_exception():
    with pytest.raises(ValueError, match="invalid literal for int"):
        gather(ProcessBackend(2), int, [("x",), ("y",)])
    with pytest.raises(BackendError, match="at least 1"):
        ProcessBackend(0)
    assert ProcessBackend().workers == available_cpus() >= 1
    pids = gather(ProcessBackend(2), os.getpid, [() for _ in range(6)])
    assert os.getpid() not in pids and 1 <= len(set(pids)) <= 2         # worker processes, each running jobs in turn


def test_a_worker_that_dies_is_a_clear_error():
    jobs = [(0, time.sleep, (0.2,)), (1, os._exit, (3,)), (2, time.sleep, (0.2,))]   # 1: as if OOM-killed
    with pytest.raises(BackendError, match=r"worker process died .* before \d of 3 jobs finished: .*1"):
        ProcessBackend(2).run(jobs, lambda key, res: None)


def test_an_interrupt_stops_the_workers_at_once():
    """on_done raises (as Ctrl-C would in the waiting caller) while a job still runs in the
    other worker: the run ends without waiting for it, and no worker process is left."""
    def on_done(key, res):
        raise KeyboardInterrupt
    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ProcessBackend(2).run([(0, time.sleep, (1.5,)), (1, time.sleep, (120,))], on_done)
    assert time.monotonic() - t < 60
    for _ in range(100):
        if not _workers():
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"worker processes left running: {_workers()}")


def test_cli_dataset_eval_and_rollout_in_worker_processes(tmp_path):
    r = CliRunner()
    base = ["dataset", "--objective", "maze_paint/easy", "--episodes", "2", "--max-actions", "20", "--json"]
    res = r.invoke(cli, base + ["--out", str(tmp_path / "p"), "--backend", "processes", "--workers", "2"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output.strip().splitlines()[-1])
    res = r.invoke(cli, base + ["--out", str(tmp_path / "s"), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    want = json.loads(res.output.strip().splitlines()[-1])
    assert got["rows"] == want["rows"] > 0 and got["shards"] == want["shards"] == 2       # --jobs: the workers
    sha = lambda d: [s["sha256"] for s in json.loads((tmp_path / d / "manifest.json").read_text())["shards"]]  # noqa: E731
    assert sha("p") == sha("s")
    res = r.invoke(cli, base + ["--out", str(tmp_path / "x"), "--workers", "2"])
    assert res.exit_code == 2 and "--backend processes" in res.output
    res = r.invoke(cli, ["eval", "--objective", "maze_paint/easy", "--backend", "processes", "--workers", "2",
                         "--episodes", "2", "--no-frames", "--out", str(tmp_path / "e"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output.strip().splitlines()[-1])["OSR"] == 100.0
    res = r.invoke(cli, ["rollout", "maze_paint/easy/3", "--walks", "300", "--backend", "processes", "--workers",
                         "2", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["jobs"] == 2 and got["walks"] == 300 and got["moves"] > 0
    res = r.invoke(cli, ["rollout", "--backend", "processes", "--address", "127.0.0.1:1"])
    assert res.exit_code == 2 and "--backend ray" in res.output
    res = r.invoke(cli, ["rollout", "--backend", "processes", "--workers", "0"])
    assert res.exit_code == 2 and "at least 1" in res.output
