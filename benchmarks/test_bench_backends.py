"""Jobs on this machine's cores (agents/jobs/local.py): a whole `longpuzzle` command with
`--backend processes --workers 2` beside the same command with its jobs one after another
(`--backend local`, the default), each a new process as a user runs it (its imports,
compiled kernels, level screens and plans new to it: cold on both sides), rounds alternating
so both see the same load. In the summary the one-process side stands where the other
benchmarks' baseline does. Wall time is the measure: on 2 cores, 2 workers make at most 2x.

dataset   `longpuzzle dataset --objective maze_paint/hard --episodes 80 --detours 0.05`
          (19,000 rows) in 2 jobs on both sides (the same shards); ops = rows
eval      `longpuzzle eval --agent solver --objective maze_paint/hard --episodes 40
          --no-frames`; ops = episodes
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from baseline import side_by_side

DATASET = ["dataset", "--objective", "maze_paint/hard", "--episodes", "80", "--detours", "0.05", "--jobs", "2", "--json"]
EVAL = ["eval", "--agent", "solver", "--objective", "maze_paint/hard", "--episodes", "40", "--no-frames", "--json"]
PROCESSES = ["--backend", "processes", "--workers", "2"]
ROOT = Path(__file__).resolve().parents[2]           # the folder holding this checkout (named longpuzzle)


def _cli(args: list[str]) -> dict:
    d = tempfile.mkdtemp()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    try:
        r = subprocess.run([sys.executable, "-m", "longpuzzle", *args, "--out", f"{d}/out"], capture_output=True,
                           text=True, env=env, timeout=600, check=False)
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(d)


def _pair(benchmark, args, count, unit, pair):
    n = count(_cli(args))                                 # warm the disk caches (kernels, screens) once
    assert count(_cli(args + PROCESSES)) == n
    benchmark.group = "backends"
    side_by_side(benchmark, lambda: _cli(args + PROCESSES), lambda: _cli(args), 3, n, n, unit=unit, pair=pair)


def test_dataset_in_two_worker_processes(benchmark):
    _pair(benchmark, DATASET, lambda r: r["rows"], "rows", "dataset: 2 processes / 1")


def test_eval_in_two_worker_processes(benchmark):
    _pair(benchmark, EVAL, lambda r: sum(o["episodes"] for o in r["objectives"]) if r["OSR"] == 100.0 else 0,
          "episodes", "eval: 2 processes / 1")
