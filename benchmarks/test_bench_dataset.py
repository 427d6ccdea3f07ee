"""Dataset writing (longpuzzle.agents.datasets), side by side with the code before (baseline.py's
DATASET_BASELINE, in a worker process; rounds alternate so both see the same load).

run only        the solver plays Maze Paint easy (a whole objective from the home screen,
                540 x 960 frames) exactly as ``longpuzzle dataset`` plays it, with a writer
                that keeps nothing: the raw episode run. ops = steps (rows).
run + dataset   the same episode with the real writer, new for the episode (a thread encodes
                each frame as a lossless PNG, writes the model conventions and the Parquet
                rows, hashes the shard): a one-episode job, every level's screen new to it.
job             what one dataset job does for `--episodes 4 --detours 0.05`: four episodes
                with detours, one writer for all of them (about 450 rows, one shard),
                through datasets.build.run_job on both sides, as `longpuzzle dataset` runs it.
writer alone    the writer on its own, in this thread, over the steps of that job (captured
                once, the renderer's deltas with them), per shard format.
new positions   a ten-episode Bolt Unscrew hard job (detours 0.05) whose every round has
                seeds of its own, beside NEW_POSITIONS_BASELINE: the detours lead where
                neither side has been (no plan kept for them, in memory or on disk, in
                this run or an earlier one: the seeds are drawn at random; the
                levels' first plans are kept from the warm-up, as a cache folder that has
                run a job before keeps them), so the searches after detours a real job
                makes are in it, which the warm rounds of the other jobs find kept. The
                two sides' rows differ (their plans after detours differ): compare rows
                per CPU second.
job, per game   a two-episode job (detours 0.05) on each game's first objective: the same
                measure on boards other than Maze Paint's (their drawing differs the most).
shard file      a ten-episode Bolt Unscrew hard job's Parquet rows (captured once) written
                to one shard, beside SHARD_FILE_BASELINE's shard writer: the shard file alone.
job at scale    a ten-episode job (detours 0.05) on every objective of the catalogue, beside
                SCALE_BASELINE (benchmarks/baseline.py): the steady rate of a job large
                enough that its fixed cost (the shard's file, its Parquet footer and
                SHA-256: 7 to 12 ms) is a few per cent of it, level by level of every
                difficulty (the hard levels' boards change more pixels a move).
cold job        a whole ``longpuzzle dataset`` process (one episode, detours 0.05) on the
                hardest objectives, beside COLD_BASELINE's process (main before the solver
                agent mended its plans after detours, searched a plan soon where it could
                not, kept plans on disk, and dataset episodes stopped certifying each
                state): imports, kernels loaded from the disk cache, the first plans and
                screens, every position new to the process as in a real job (the warm
                rounds above reuse the plans and certificates of their warm-up). "first"
                keeps no plans on disk (LONGPUZZLE_PLAN_CACHE=0, the first job of a new
                cache folder), "next" finds the plans an earlier job kept. The two sides'
                rows differ (the recoveries after detours differ): compare rows per CPU s.
The issue's target: at least 2,000 steps per second per core (see the "per CPU second"
lines of the summary, which a loaded machine disturbs least).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from longpuzzle.agents.datasets.build import DatasetConfig, run_job
from longpuzzle.agents.datasets.collect import play_episode
from longpuzzle.agents.datasets.writer import StepWriter
from longpuzzle.engine.catalog import builtin_catalog

from baseline import (DATASET_BASELINE, NEW_POSITIONS_BASELINE, SCALE_BASELINE, SHARD_FILE_BASELINE, Baseline,
                      env_for, shard_rows, side_by_side, tree, write_shard)

OBJECTIVE = "maze_paint/easy"
JOB = {"episodes": 4, "detours": 0.05}


class _Keep:
    """A writer's stand-in that keeps the steps (or nothing), to replay them into a writer."""

    def __init__(self, keep=True):
        self.keep, self.steps, self.ends = keep, [], []

    def add(self, meta, frame, delta=None):
        if self.keep:
            self.steps.append((meta, frame, delta))

    def end_episode(self, frame, h=None):
        if self.keep:
            self.ends.append((len(self.steps), frame, h))

    def replay(self, w):
        ends = {n: (f, h) for n, f, h in self.ends}
        for i, (meta, frame, delta) in enumerate(self.steps):
            w.add(meta, frame, delta)
            if i + 1 in ends:
                w.end_episode(*ends[i + 1])


def _run(episodes: int, detours: float, write: bool, fmt: str = "parquet") -> int:
    """Plays the planned episodes (one writer for all, as a job has, or none); rows."""
    plan = DatasetConfig(objectives=[OBJECTIVE], episodes=episodes, detours=detours).plan()
    d = tempfile.mkdtemp()
    w = StepWriter(d, fmt, 0) if write else _Keep(keep=False)
    rows = sum(play_episode(spec, {"budget": None}, w)["rows"] for spec in plan)
    if write:
        w.close()
    shutil.rmtree(d)
    return rows


@pytest.fixture(scope="module")
def baseline():
    b = Baseline(DATASET_BASELINE)
    yield b
    b.close()


@pytest.fixture(scope="module")
def captured():
    c = _Keep()
    for spec in DatasetConfig(objectives=[OBJECTIVE], **JOB).plan():
        play_episode(spec, {"budget": None}, c)
    return c


def _pair(benchmark, baseline, new, req, rounds):
    ops = new()
    old_ops = baseline(**req)["rows"]                  # warm both (and the baseline's capture)
    benchmark.group = "dataset"
    side_by_side(benchmark, new, lambda: baseline(**req), rounds, ops, old_ops, unit="steps",
                 pair=benchmark.name.replace("test_", ""))


def test_run_only(benchmark, baseline):
    _pair(benchmark, baseline, lambda: _run(1, 0.0, False),
          {"op": "dataset_run", "objective": OBJECTIVE, "episodes": 1, "detours": 0.0, "write": False,
           "format": "parquet"}, 7)


def test_run_with_dataset(benchmark, baseline):
    _pair(benchmark, baseline, lambda: _run(1, 0.0, True),
          {"op": "dataset_run", "objective": OBJECTIVE, "episodes": 1, "detours": 0.0, "write": True,
           "format": "parquet"}, 7)


def _job(objective: str = OBJECTIVE, **job) -> int:
    """One dataset job as `longpuzzle dataset` runs it (JOB's episodes and detours unless given); rows."""
    cfg = DatasetConfig(objectives=[objective], **(job or JOB))
    d = tempfile.mkdtemp()
    rows = run_job(cfg.as_dict(), 0, cfg.plan(), d)["rows"]
    shutil.rmtree(d)
    return rows


def test_job(benchmark, baseline):
    _pair(benchmark, baseline, _job, {"op": "dataset_job", "objective": OBJECTIVE, "format": "parquet", **JOB}, 5)


GAME_OBJECTIVES = ["bolt_unscrew/easy", "rush_hour/easy", "nut_and_bolt/easy", "truck_escape/default",
                   "maze_paint/easy", "color_connect/easy"]
GAME_JOB = {"episodes": 2, "detours": 0.05}


@pytest.mark.parametrize("objective", GAME_OBJECTIVES)
def test_job_per_game(benchmark, baseline, objective):
    _pair(benchmark, baseline, lambda: _job(objective, **GAME_JOB),
          {"op": "dataset_job", "objective": objective, "format": "parquet", **GAME_JOB}, 3)


NEW_POSITIONS_OBJECTIVE = "bolt_unscrew/hard"     # the most searches after detours (its swinging boards)


def test_job_new_positions(benchmark):
    """A ten-episode job, each round with seeds new to both sides, beside NEW_POSITIONS_BASELINE."""
    old = Baseline(NEW_POSITIONS_BASELINE)
    # seeds new to both sides' plan folders in every run (plans are kept on disk across runs)
    base = random.SystemRandom().randrange(1, 10 ** 9) * 1000
    seeds = [base + 1000 * k for k in range(3)]     # round k of both sides plays seeds[k]
    job = {"episodes": 10, "detours": 0.05}
    try:
        req = {"op": "dataset_job", "objective": NEW_POSITIONS_OBJECTIVE, "format": "parquet", **job}
        old_ops = old(**req)["rows"]               # warm: kernels, the levels' first plans (seed 0)
        ops = _job(NEW_POSITIONS_OBJECTIVE, **job)
        rounds = {"new": [], "old": []}             # (rows, CPU s) of each timed round

        def new():
            c = time.process_time()
            n = _job(NEW_POSITIONS_OBJECTIVE, seed=seeds[len(rounds["new"])], **job)
            rounds["new"].append((n, time.process_time() - c))

        def before():
            r = old(seed=seeds[len(rounds["old"])], **req)
            rounds["old"].append((r["rows"], r["cpu"]))
            return r
        benchmark.group = "dataset"
        side_by_side(benchmark, new, before, 3, ops, old_ops, unit="rows",
                     pair=f"new_positions[{NEW_POSITIONS_OBJECTIVE}]")
        # each round's own rows per CPU second, in round order (round i of both sides plays the
        # same seeds; the seeds' detours cost the searches after them, so rounds differ)
        for side, rs in rounds.items():
            benchmark.extra_info[f"{side}_rows_per_cpu"] = [round(n / c) for n, c in rs]
        benchmark.extra_info["ratio_per_round"] = [round((a[0] / a[1]) / (b[0] / b[1]), 2)
                                                   for a, b in zip(rounds["new"], rounds["old"])]
        assert len(rounds["new"]) == len(rounds["old"]) == 3
    finally:
        old.close()


SCALE_JOB = {"episodes": 10, "detours": 0.05}


@pytest.fixture(scope="module")
def scale_baseline():
    b = Baseline(SCALE_BASELINE)
    yield b
    b.close()


@pytest.mark.parametrize("objective", [o.id for o in builtin_catalog().objectives()])
def test_job_at_scale(benchmark, scale_baseline, objective):
    _pair(benchmark, scale_baseline, lambda: _job(objective, **SCALE_JOB),
          {"op": "dataset_job", "objective": objective, "format": "parquet", **SCALE_JOB}, 5)


@pytest.mark.parametrize("fmt", ["parquet", "webdataset"])
def test_writer_alone(benchmark, baseline, captured, fmt):
    def new():
        d = tempfile.mkdtemp()
        w = StepWriter(d, fmt, 0, threaded=False)
        captured.replay(w)
        w.close()
        shutil.rmtree(d)
        return len(captured.steps)
    _pair(benchmark, baseline, new, {"op": "dataset_writer", "objective": OBJECTIVE, "format": fmt, **JOB}, 7)


SHARD_OBJECTIVE = "bolt_unscrew/hard"           # the most PNG bytes a row: 65 MB in two row groups


def test_shard_file(benchmark, tmp_path):
    """A ten-episode job's Parquet rows (captured once) written to one shard file, beside
    SHARD_FILE_BASELINE's shard writer over the same job's rows."""
    rows = shard_rows(SHARD_OBJECTIVE, SCALE_JOB["episodes"], SCALE_JOB["detours"])

    def new():
        entry = write_shard(rows, tmp_path / "s.parquet")
        (tmp_path / entry["file"]).unlink()
        return entry["rows"]
    old = Baseline(SHARD_FILE_BASELINE)
    try:
        req = {"op": "dataset_shard", "objective": SHARD_OBJECTIVE, **SCALE_JOB}
        old_ops = old(**req)["rows"]               # (the baseline's rows captured, and warm)
        ops = new()
        benchmark.group = "dataset"
        side_by_side(benchmark, new, lambda: old(**req), 7, ops, old_ops, unit="rows", pair="shard_file")
    finally:
        old.close()
    assert ops == old_ops == len(rows)


COLD_BASELINE = "65a90e5"     # main before plans were mended after detours and kept on disk
COLD_OBJECTIVES = ["bolt_unscrew/hard", "nut_and_bolt/nightmare", "maze_paint/hard"]


def _cold_job(env, objective, out) -> tuple[float, int]:
    """(CPU seconds of the whole process, rows) of a one-episode dataset job with detours,
    as ``longpuzzle dataset`` runs it in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "longpuzzle", "dataset", "--objective", objective, "--episodes", "1",
                    "--detours", "0.05", "--out", str(out)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = json.loads((out / "manifest.json").read_text())["counts"]["rows"]
    shutil.rmtree(out)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, rows


@pytest.mark.parametrize("plans", ["first", "next"])
@pytest.mark.parametrize("objective", COLD_OBJECTIVES)
def test_cold_job(benchmark, tmp_path, objective, plans):
    old_env = env_for(tree(COLD_BASELINE))
    new_env = dict(os.environ, **({"LONGPUZZLE_PLAN_CACHE": "0"} if plans == "first" else {}))
    runs = iter(range(1000))
    new_cpu, new_rows, old_rows = [], [], []

    def new():
        cpu, n = _cold_job(new_env, objective, tmp_path / f"new-{next(runs)}")
        new_cpu.append(cpu)
        new_rows.append(n)

    def old():
        cpu, n = _cold_job(old_env, objective, tmp_path / f"old-{next(runs)}")
        old_rows.append(n)
        return {"cpu": cpu}
    new()
    old()                                  # kernels in both caches (and, for "next", the plans kept)
    benchmark.group = "dataset cold"
    side_by_side(benchmark, new, old, rounds=2, ops=new_rows[0], old_ops=old_rows[0], unit="steps",
                 pair=f"cold_job[{objective}-{plans}]")
    assert len(set(new_rows)) == 1 and len(set(old_rows)) == 1      # each side reproducible
    benchmark.extra_info["cpu_min"] = min(new_cpu[1:])   # the child's CPU (this process's is nearly none)
