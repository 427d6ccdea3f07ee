"""Dataset writing (longpuzzle.datasets), side by side with the episodes it records.

run only        the solver plays Maze Paint easy (a whole objective from the home screen,
                540 x 960 frames) exactly as ``longpuzzle dataset`` plays it, with a writer
                that keeps nothing: the raw episode run. ops = steps (rows).
run + dataset   the same episodes with the real writer (a thread encodes each frame as a
                lossless PNG, writes the model conventions and the Parquet rows, hashes the
                shard).
writer alone    the writer on its own, in this thread, over steps captured from four such
                episodes (with detours: about 450 rows, one shard), per shard format: rows
                per second of one core (the issue's target:
                at least 2,000 per core; see the "per CPU second" lines of the summary, which
                a loaded machine disturbs least).
"""

import shutil
import time

import pytest

from longpuzzle.datasets.build import DatasetConfig
from longpuzzle.datasets.collect import play_episode
from longpuzzle.datasets.writer import StepWriter

OBJECTIVE = "maze_paint/easy"


class _Discard:
    def add(self, meta, frame):
        pass

    def end_episode(self, frame, h=None):
        pass


class _Capture(_Discard):
    def __init__(self):
        self.steps, self.ends = [], []

    def add(self, meta, frame):
        self.steps.append((meta, frame))

    def end_episode(self, frame, h=None):
        self.ends.append((len(self.steps), frame, h))


def _spec():
    return DatasetConfig(objectives=[OBJECTIVE], episodes=1).plan()[0]


def _episode(writer):
    return play_episode(_spec(), {"budget": None}, writer)["rows"]


@pytest.fixture(scope="module")
def captured():
    """Four episodes with detours (about 450 rows: one shard, as a real job writes)."""
    c = _Capture()
    for spec in DatasetConfig(objectives=[OBJECTIVE], episodes=4, detours=0.05).plan():
        play_episode(spec, {"budget": None}, c)
    return c


def _measure(benchmark, fn, ops, rounds):
    cpu = []

    def one():
        t = time.process_time()
        fn()
        cpu.append(time.process_time() - t)
    benchmark.extra_info.update(ops=ops, unit="steps")
    benchmark.pedantic(one, rounds=rounds, iterations=1, warmup_rounds=1)
    benchmark.extra_info["cpu_min"] = min(cpu)


@pytest.mark.benchmark(group="dataset")
def test_run_only(benchmark):
    rows = _episode(_Discard())
    _measure(benchmark, lambda: _episode(_Discard()), rows, 5)


@pytest.mark.benchmark(group="dataset")
def test_run_with_dataset(benchmark, tmp_path):
    rows = _episode(_Discard())
    n = [0]

    def one():
        d = tmp_path / f"r{n[0]}"
        n[0] += 1
        d.mkdir()
        w = StepWriter(d, "parquet", 0)
        _episode(w)
        w.close()
        shutil.rmtree(d)
    _measure(benchmark, one, rows, 5)


@pytest.mark.benchmark(group="dataset")
@pytest.mark.parametrize("fmt", ["parquet", "webdataset"])
def test_writer_alone(benchmark, tmp_path, captured, fmt):
    n = [0]

    def one():
        d = tmp_path / f"w{n[0]}"
        n[0] += 1
        d.mkdir()
        w = StepWriter(d, fmt, 0, threaded=False)
        ends = {n: (f, h) for n, f, h in captured.ends}
        for i, (meta, frame) in enumerate(captured.steps):
            w.add(meta, frame)
            if i + 1 in ends:
                w.end_episode(*ends[i + 1])
        w.close()
        shutil.rmtree(d)
    _measure(benchmark, one, len(captured.steps), 7)
