"""Ray (longpuzzle.agents.jobs) through a real local Ray: one ``ray.init(num_cpus=2)`` shared by
every test here. Eval episodes, dataset jobs and rollouts as Ray tasks give what the
sequential backend gives (same folders, results, resume, shards byte for byte); folders
come back from nodes that do not share the filesystem; RLlib's PPO trains on a registered
environment."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")     # loopback only (conftest.py says why)
ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'longpuzzle[ray]')")

from longpuzzle.agents.harness import replay_episode  # noqa: E402
from longpuzzle.agents.runner import RunConfig, SequentialBackend, execute  # noqa: E402
from longpuzzle.cli import cli  # noqa: E402
from longpuzzle.agents.jobs import RayBackend, env_episodes, gather, random_walks, solve_levels  # noqa: E402
from longpuzzle.agents.jobs.ray_backend import ClusterError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from eval_runs import placeless, solver_run  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    # workers are new processes: they import this checkout (PYTHONPATH) and share its caches
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


def test_eval_on_ray_equals_a_sequential_run_and_resumes(tmp_path):
    seq = solver_run(tmp_path / "seq", SequentialBackend())
    out = tmp_path / "ray"
    summary = solver_run(out, RayBackend())
    assert placeless(summary) == placeless(seq)
    assert [e["end"] for e in summary["episodes"]] == ["max_actions"] * 2 and summary["metrics"]["LC"] > 0
    folders = [out / e["folder"] for e in summary["episodes"]]
    assert all((f / "result.json").is_file() and (f / "frames.lpf").is_file() for f in folders)
    assert not list(out.glob(".longpuzzle-ray-*"))                      # the marker is removed
    # resume: an interrupted episode (no result.json) runs again, the finished one is kept
    keep = (folders[0] / "result.json").stat().st_mtime_ns
    (folders[1] / "result.json").unlink()
    run = RunConfig.from_dict(json.loads((out / "run.json").read_text())["run"])
    again = execute(out, run, backend=RayBackend(), quiet=True)
    assert (folders[0] / "result.json").stat().st_mtime_ns == keep
    assert list(out.glob("*/episode_002.interrupted-1"))
    assert placeless(again) == placeless(seq)


def test_folders_come_back_from_nodes_without_the_filesystem(tmp_path):
    """folders="return": each task runs in a folder of its own and returns its files, which
    the caller writes; the episode folders are whole (they replay frame for frame)."""
    b = RayBackend(folders="return")
    summary = solver_run(tmp_path / "ret", b, episodes=1, max_actions=None)
    assert b.returned_files >= 3 and summary["metrics"]["OSR"] == 100.0
    folder = tmp_path / "ret" / summary["episodes"][0]["folder"]
    rep = replay_episode(folder)
    assert rep.ok and rep.complete and rep.stored_frames
    res = json.loads((folder / "result.json").read_text())
    assert res["folder"] == summary["episodes"][0]["folder"]            # no temporary path leaks in


def test_workers_play_the_callers_catalogue(tmp_path):
    """A catalogue other than the built-in one goes to the workers with the jobs: here Maze
    Paint easy cut to its first two levels (the built-in objective has ten)."""
    from longpuzzle.agents.harness import replay_episode
    from longpuzzle.engine.catalog import Catalog, builtin_catalog
    doc = builtin_catalog().level_file("maze_paint")
    doc["objectives"] = [dict(o, levels=o["levels"][:2]) for o in doc["objectives"] if o["difficulty"] == "easy"]
    cat = Catalog(sources={"maze_paint": (json.dumps(doc), "two.json")}, name="two-levels")
    summary = solver_run(tmp_path / "cat", RayBackend(), episodes=1, max_actions=None, catalog=cat)
    ep = summary["episodes"][0]
    assert ep["target_levels"] == 2 and ep["solved"] == 2 and summary["catalog"]["name"] == "two-levels"
    folder = tmp_path / "cat" / ep["folder"]
    res = json.loads((folder / "result.json").read_text())
    assert res["catalog"] == cat.identity()                       # the worker played the catalogue it was given
    assert replay_episode(folder, cat).ok                          # replayed on it here (it is stored nowhere)


def test_dataset_jobs_on_ray_write_the_same_shards(tmp_path):
    from longpuzzle.agents.datasets.build import DatasetConfig, build
    from longpuzzle.agents.datasets.check import check_dataset
    cfg = DatasetConfig(objectives=["maze_paint/easy"], episodes=2, jobs=2, detours=0.1, format="webdataset",
                        settings={"max_actions": 30})
    local = build(tmp_path / "local", cfg)
    b = RayBackend(folders="return")
    remote = build(tmp_path / "ray", cfg, backend=b)
    assert b.returned_files == len(remote["shards"]) + 2                  # shards and the two part files
    assert [s["file"] for s in remote["shards"]] == [s["file"] for s in local["shards"]]
    from longpuzzle.agents.datasets.check import shard_differences
    for a, b in zip(local["shards"], remote["shards"]):                 # say which row and field differ
        assert a["sha256"] == b["sha256"], (a["file"], shard_differences(tmp_path / "local" / a["file"],
                                                                          tmp_path / "ray" / b["file"]))
    assert check_dataset(tmp_path / "ray", replay=False)["ok"]


def test_rollouts_and_solver_jobs_gather_what_one_process_gets():
    b = RayBackend()
    w_ray = random_walks("rush_hour/easy/2", 600, 80, seed=5, backend=b, chunks=3)
    w_seq = random_walks("rush_hour/easy/2", 600, 80, seed=5, chunks=3)
    for k in ("solved", "moves", "mean_final_progress", "jobs"):
        assert w_ray[k] == w_seq[k]
    assert w_ray["jobs"] == 3 and w_ray["moves"] > 0
    cfg = {"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/1"}
    e_ray = env_episodes(cfg, 4, seed=2, backend=b, chunks=2)
    e_seq = env_episodes(cfg, 4, seed=2, chunks=2)
    strip = lambda r: [(e["return"], e["length"], e["terminated"]) for e in r["records"]]  # noqa: E731
    assert strip(e_ray) == strip(e_seq) and e_ray["episodes"] == 4
    sols = solve_levels(["rush_hour/easy/1", "maze_paint/easy/2"], backend=b)
    assert [s["level"] for s in sols] == ["rush_hour/easy/1", "maze_paint/easy/2"]
    assert all(s["status"] == "solvable" and s["optimal"] for s in sols)


def _fails(x):
    raise KeyError(f"job {x} failed")


def test_a_job_error_comes_back_as_its_own_exception():
    with pytest.raises(KeyError, match="job 1 failed"):
        gather(RayBackend(), _fails, [(1,)])
    with pytest.raises(ClusterError):
        RayBackend(folders="nfs")


def test_cli_eval_and_rollout_with_the_ray_backend(tmp_path):
    r = CliRunner()
    res = r.invoke(cli, ["eval", "--objective", "maze_paint/easy", "--backend", "ray", "--no-frames", "--out",
                         str(tmp_path / "e"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output.strip().splitlines()[-1])["OSR"] == 100.0
    res = r.invoke(cli, ["rollout", "maze_paint/easy/3", "--walks", "300", "--backend", "ray", "--chunks", "2", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["jobs"] == 2 and got["walks"] == 300 and got["moves"] > 0
    res = r.invoke(cli, ["rollout", "--address", "127.0.0.1:1"])
    assert res.exit_code == 2 and "--backend ray" in res.output


def test_rllib_ppo_trains_on_a_registered_env():
    pytest.importorskip("ray.rllib", reason="RLlib (the rllib extra) is not installed")
    pytest.importorskip("torch", reason="RLlib needs torch (the rllib extra)")
    from longpuzzle.agents.envs.rllib import ppo_config
    algo = ppo_config({"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/1"}, batch=200, minibatch=100,
                      epochs=1, hidden=(16,)).build_algo()
    try:
        results = [algo.train() for _ in range(2)]
        er = results[-1]["env_runners"]
        assert results[-1]["num_env_steps_sampled_lifetime"] >= 400
        assert er["num_episodes_lifetime"] >= 1
        assert -1.0 <= er["episode_return_mean"] <= 1.0        # progress reward: P(end) - P(start)
        env = algo.env_creator({"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/1"})
        obs, info = env.reset(seed=0)
        import torch
        module = algo.get_module()
        out = module.forward_inference({"obs": torch.as_tensor(obs[None])})
        assert out["action_dist_inputs"].shape == (1, env.action_space.n)
    finally:
        algo.stop()
