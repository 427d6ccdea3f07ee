"""The frame hash (agents/harness/frames.py), side by side in one process with the one before
it (whole_frame_hash: xxh3-128 of the whole frame's bytes at once), over the frames a dataset
job's episode shows (Maze Paint easy from the home screen, 540 x 960, with the renderer's
deltas as the harness got them; the first FRAMES frames, held in memory).

incremental   FrameHasher.hash(frame, delta) over the frames in order, as the trajectory
              hashes them: only the 32-row bands meeting each delta's box are hashed
full          frame_hash(frame) of every frame: the same identity, every band hashed
ops = frames hashed."""

from __future__ import annotations

import pytest

from longpuzzle.agents.harness import frames as F
from longpuzzle.agents.harness import trajectory as T
from longpuzzle.agents.datasets.build import DatasetConfig
from longpuzzle.agents.datasets.collect import play_episode

from baseline import side_by_side

FRAMES = 150


class _Nothing:
    def add(self, meta, frame, delta=None):
        pass

    def end_episode(self, frame, h=None):
        pass


@pytest.fixture(scope="module")
def captured():
    got = []
    orig = T.Trajectory.frame

    def frame(self, f, delta=None):
        if len(got) < FRAMES:
            got.append((f, delta))
        return orig(self, f, delta)
    T.Trajectory.frame = frame
    try:
        spec = DatasetConfig(objectives=["maze_paint/easy"], episodes=1, detours=0.05).plan()[0]
        play_episode(spec, {"budget": None}, _Nothing())
    finally:
        T.Trajectory.frame = orig
    return got


def test_incremental(benchmark, captured):
    def new():
        h = F.FrameHasher()
        for f, d in captured:
            h.hash(f, d)
        return h

    def old():
        for f, _ in captured:
            F.whole_frame_hash(f)
    hs = new()
    assert [hs.hash(f) for f, _ in captured[:1]] == [F.frame_hash(captured[0][0])]
    benchmark.group = "frame hash"
    side_by_side(benchmark, new, old, 30, len(captured), len(captured), unit="frames",
                 pair="incremental vs whole-frame", bands_hashed=hs.hashed / max(1, hs.bands))


def test_full(benchmark, captured):
    def new():
        for f, _ in captured:
            F.frame_hash(f)

    def old():
        for f, _ in captured:
            F.whole_frame_hash(f)
    benchmark.group = "frame hash"
    side_by_side(benchmark, new, old, 30, len(captured), len(captured), unit="frames",
                 pair="full bands vs whole-frame")
