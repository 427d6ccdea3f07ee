"""Dataset writing (longpuzzle.datasets), side by side with the episodes it records.

run only        the solver plays Maze Paint easy (a whole objective from the home screen,
                540 x 960 frames) exactly as ``longpuzzle dataset`` plays it, with a writer
                that keeps nothing: the raw episode run. ops = steps (rows).
run + dataset   the same episodes with the real writer (its thread encodes each frame as a
                lossless PNG, hashes it, writes the model conventions and the Parquet rows).
writer alone    the writer on its own, in this thread, over steps captured from those
                episodes: rows per second of one core (the issue's target: >= 2,000), per
                shard format.
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
    c = _Capture()
    _episode(c)
    return c


def test_run_only(benchmark):
    _episode(_Discard())
    rows = _episode(_Discard())
    benchmark.extra_info["ops"] = rows
    benchmark.pedantic(_episode, args=(_Discard(),), rounds=5, iterations=1)


def test_run_with_dataset(benchmark, tmp_path):
    rows = _episode(_Discard())
    benchmark.extra_info["ops"] = rows
    n = [0]

    def one():
        d = tmp_path / f"r{n[0]}"
        n[0] += 1
        d.mkdir()
        w = StepWriter(d, "parquet", 0)
        _episode(w)
        w.close()
        shutil.rmtree(d)
    benchmark.pedantic(one, rounds=5, iterations=1)


@pytest.mark.parametrize("fmt", ["parquet", "webdataset"])
def test_writer_alone(benchmark, tmp_path, captured, fmt):
    benchmark.extra_info["ops"] = len(captured.steps)
    n = [0]
    cpu = []

    def one():
        d = tmp_path / f"w{n[0]}"
        n[0] += 1
        d.mkdir()
        t = time.process_time()
        w = StepWriter(d, fmt, 0, threaded=False)
        for meta, frame in captured.steps:
            w.add(meta, frame)
        w.end_episode(*captured.ends[-1][1:])
        w.close()
        cpu.append(time.process_time() - t)
        shutil.rmtree(d)
    benchmark.pedantic(one, rounds=7, iterations=1)
    benchmark.extra_info["rows_per_cpu_second"] = round(len(captured.steps) / min(cpu))
