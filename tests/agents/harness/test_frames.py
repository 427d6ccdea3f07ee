"""Stored frames: the frame file (lossless round trip, random access, crops, repeated frames,
cut-off and corrupt records), legacy PNG folders, and crash safety of an episode folder
under SIGKILL at seeded kill points (every event names only complete frames, result.json
comes last, replay passes the killed folder as a valid prefix)."""

import hashlib
import json
import multiprocessing as mp
import os
import random
import signal
import time

import numpy as np
import pytest

from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import (
    FrameStoreError, HarnessError, Settings, Trajectory, frame_hash, open_frames, read_episode, replay_episode,
    run_objective, step_frame_indices,
)
from longpuzzle.agents.harness.frames import FRAMES_FILE

FAST = Settings(budget=120, action_timeout=None)


def _frames(n, seed=0, shape=(48, 32, 3)):
    rng = np.random.default_rng(seed)
    out = []
    for _i in range(n):
        f = np.full(shape, 200, np.uint8)
        f[rng.integers(shape[0]), :, :] = rng.integers(0, 256, (shape[1], 3))   # one random row
        out.append(f)
    return out


def test_frame_file_round_trip_random_access_and_repeats(tmp_path):
    fr = _frames(20)
    fr[7] = fr[6].copy()                  # an action with no visible effect: stored as a reference
    t = Trajectory(tmp_path)
    hashes = [t.frame(f) for f in fr]
    t.result({"ok": True})
    assert hashes == [frame_hash(f) for f in fr] and len(set(hashes)) == 19
    with open_frames(tmp_path) as fs:
        assert len(fs) == 20 and fs.shape == (48, 32, 3) and fs.format == "lpf" and not fs.torn
        for i in (13, 0, 19, 7, 6, 7):     # random order
            a = fs.read(i)
            assert np.array_equal(a, fr[i]) and not a.flags.writeable and fs.hash(i) == hashes[i]
            assert fs.verify(i)
        assert np.array_equal(fs.read(3, box=(2, 5, 10, 9)), fr[3][5:9, 2:10])
        assert np.array_equal(fs.read(-1), fr[-1])
        with pytest.raises(IndexError):
            fs.read(20)
        with pytest.raises(ValueError):
            fs.read(0, box=(0, 0, 33, 4))
    # a changed pixel changes the hash (every pixel counts)
    g = fr[0].copy()
    g[47, 31, 2] ^= 1
    assert frame_hash(g) != hashes[0]


def test_cut_off_and_corrupt_frame_records(tmp_path):
    fr = _frames(5, seed=1)
    t = Trajectory(tmp_path)
    for f in fr:
        t.frame(f)
    t.close()
    path = tmp_path / FRAMES_FILE
    data = path.read_bytes()
    path.write_bytes(data[:-3])           # the last record cut off, as a kill leaves it
    with open_frames(tmp_path) as fs:
        assert len(fs) == 4 and fs.torn and np.array_equal(fs.read(3), fr[3])
    bad = bytearray(data)
    bad[-10] ^= 0xFF                      # a flipped byte inside the last payload
    path.write_bytes(bytes(bad))
    with open_frames(tmp_path) as fs:
        assert len(fs) == 5 and np.array_equal(fs.read(0), fr[0])
        with pytest.raises(FrameStoreError, match="corrupt"):
            fs.read(4)
    bad = bytearray(data)
    bad[24 + 4] = 9                       # the first record's index field
    path.write_bytes(bytes(bad))
    with pytest.raises(FrameStoreError, match="corrupt"):
        open_frames(tmp_path)
    path.write_bytes(b"not a frame file at all")
    with pytest.raises(FrameStoreError, match="not a frame file"):
        open_frames(tmp_path)
    with pytest.raises(FrameStoreError, match="no stored frames"):
        open_frames(tmp_path / "missing")


def test_episode_frames_by_step_and_a_legacy_png_folder_replays(tmp_path):
    from PIL import Image

    a = tmp_path / "a"
    r = run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=6, action_timeout=None),
                      folder=a)
    ev, cut = read_episode(a)
    idx = step_frame_indices(ev)
    assert not cut and sorted(idx) == list(range(r.actions + 1))
    pub = {e["step"]: e for e in ev if e.get("stream") == "public"}
    with open_frames(a) as fs:
        assert len(fs) == r.actions + 1
        for step, ks in idx.items():
            want = [ev[0]["frame"]] if step == 0 else pub[step]["frames"]
            assert [fs.hash(k) for k in ks] == want
        frames = list(fs)
    # the format of folders written before the frame file: one PNG per frame, SHA-1 hashes
    b = tmp_path / "b"
    (b / "frames").mkdir(parents=True)
    sha = [hashlib.sha1(f.tobytes()).hexdigest() for f in frames]
    for i, f in enumerate(frames):
        Image.fromarray(f).save(b / "frames" / f"{i:06d}.png")
    lines = []
    n = 1
    for rec in ev:
        if rec.get("type") == "header":
            rec = {k: v for k, v in rec.items() if k != "frame_hash"}
            rec["frame"] = sha[0]
        elif rec.get("stream") == "public" and "frames" in rec:
            rec = {**rec, "frames": sha[n:n + len(rec["frames"])]}
            n += len(rec["frames"])
        lines.append(json.dumps(rec))
    (b / "events.jsonl").write_text("\n".join(lines) + "\n")
    (b / "result.json").write_text((a / "result.json").read_text())
    with open_frames(b) as fs:
        assert fs.format == "png" and len(fs) == len(frames) and fs.hash(2) == sha[2]
        assert np.array_equal(fs.read(2), frames[2])
    rep = replay_episode(b)
    assert rep.ok and rep.complete and rep.stored_frames and rep.steps == r.actions
    os.remove(b / "frames" / "000003.png")          # a frame lost: refused, not skipped
    assert "missing" in str(pytest.raises(FrameStoreError, open_frames, b).value)
    assert not replay_episode(b).ok


def test_frames_png_names_a_file_for_one_frame_and_screenshot_writes_only_png(tmp_path):
    """`frames EP --index 5 --png f5.png` writes that file (not a folder named f5.png); several
    frames into one .png file, or a screenshot under a .jpg name, are usage errors that write
    nothing."""
    from click.testing import CliRunner
    from PIL import Image

    from longpuzzle.cli import cli

    ep = tmp_path / "ep"
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=6, action_timeout=None), folder=ep)
    r = CliRunner().invoke(cli, ["frames", str(ep), "--index", "5", "--png", str(tmp_path / "f5.png")])
    assert r.exit_code == 0 and (tmp_path / "f5.png").is_file(), r.output
    with open_frames(ep) as fs, Image.open(tmp_path / "f5.png") as im:
        assert im.format == "PNG" and np.array_equal(np.asarray(im.convert("RGB")), fs.read(5))
    r = CliRunner().invoke(cli, ["frames", str(ep), "--index", "1", "--index", "2", "--png", str(tmp_path / "two.png")])
    assert r.exit_code == 2 and "is one file, for one frame" in r.output and not (tmp_path / "two.png").exists()
    r = CliRunner().invoke(cli, ["frames", str(ep), "--index", "1", "--index", "2", "--png", str(tmp_path / "pngs")])
    assert r.exit_code == 0 and sorted(p.name for p in (tmp_path / "pngs").iterdir()) == ["000001.png", "000002.png"]
    r = CliRunner().invoke(cli, ["screenshot", "--out", str(tmp_path / "x.jpg")])
    assert r.exit_code == 2 and "name it .png" in r.output and not (tmp_path / "x.jpg").exists()


def test_replay_checks_the_stored_frames(tmp_path):
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=5, action_timeout=None),
                  folder=tmp_path)
    path = tmp_path / FRAMES_FILE
    data = bytearray(path.read_bytes())
    # re-encode frame 3 with one pixel changed and a consistent record: only its pixels tell
    from longpuzzle.agents.harness.frames import REC_HEAD
    with open_frames(tmp_path) as fs:
        offs = [fs._index[i][0] for i in range(len(fs))]
        f3 = fs.read(3).copy()
    f3[100, 100, 0] ^= 0x40
    import xxhash
    import zstandard
    payload = zstandard.ZstdCompressor(level=1).compress(f3)
    start = offs[3] - REC_HEAD.size
    magic, i, ref, kind, n, digest, check = REC_HEAD.unpack(bytes(data[start:offs[3]]))
    rec = REC_HEAD.pack(magic, i, ref, kind, len(payload), digest, xxhash.xxh3_64_intdigest(payload)) + payload
    path.write_bytes(bytes(data[:start]) + rec + bytes(data[offs[3] + n:]))
    rep = replay_episode(tmp_path)
    assert not rep.ok and "stored frame 3 differs" in rep.divergence


# ---- crash safety: SIGKILL at seeded points ----------------------------------------------

def _child(folder):
    try:
        run_objective(SolverAgent(), "maze_paint", "easy", settings=FAST, folder=folder)
    finally:
        os._exit(0)


def _kill_at(folder, events_bytes, ctx):
    """Start an episode in a forked process; SIGKILL it once events.jsonl holds at least
    ``events_bytes`` bytes (None: let it finish)."""
    p = ctx.Process(target=_child, args=(str(folder),))
    p.start()
    ev = folder / "events.jsonl"
    t_end = time.monotonic() + 60
    while p.is_alive() and time.monotonic() < t_end:
        if events_bytes is not None and ev.is_file() and ev.stat().st_size >= events_bytes:
            os.kill(p.pid, signal.SIGKILL)
            break
        time.sleep(0.0005)
    p.join(30)
    assert p.exitcode is not None


def _check_consistent(folder):
    """The invariants a killed folder must keep; returns the replay report."""
    lines = (folder / "events.jsonl").read_bytes().count(b"\n") if (folder / "events.jsonl").is_file() else 0
    if lines <= 1:
        # killed before any line, or after the header alone (the writer took the header's
        # batch before the first action was recorded, e.g. on a loaded machine): nothing
        # to replay, and replay says so
        assert not (folder / "result.json").exists()
        with pytest.raises(HarnessError):
            replay_episode(folder)
        return None
    ev, _ = read_episode(folder)
    has_end = any(e.get("type") == "end" for e in ev)
    if (folder / "result.json").exists():
        assert has_end and json.loads((folder / "result.json").read_text())["end"] == "completed"
    assert not (folder / "result.json.tmp").exists() or not (folder / "result.json").exists() or has_end
    named = max(k for ks in step_frame_indices(ev).values() for k in ks)
    with open_frames(folder) as fs:
        assert len(fs) > named                       # every frame an event names is on disk...
        for k in range(named + 1):
            assert fs.verify(k)                      # ...complete
    rep = replay_episode(folder)
    assert rep.ok, rep.divergence
    assert rep.complete == (folder / "result.json").exists()
    return rep


@pytest.mark.slow
def test_sigkill_at_any_point_leaves_a_consistent_folder(tmp_path):
    ctx = mp.get_context("fork")
    run_objective(SolverAgent(), "maze_paint", "easy", settings=FAST, folder=tmp_path / "warm")  # kernels, plans
    full = (tmp_path / "warm" / "events.jsonl").stat().st_size
    rng = random.Random(13)
    points = [0, 1] + sorted(rng.randrange(2, full) for _ in range(5)) + [full, None]
    seen = {"complete": 0, "prefix": 0}
    for j, b in enumerate(points):
        folder = tmp_path / f"k{j}"
        _kill_at(folder, b, ctx)
        rep = _check_consistent(folder)
        if rep is not None:
            seen["complete" if rep.complete else "prefix"] += 1
    assert seen["prefix"] >= 3 and seen["complete"] >= 1, seen


def test_frames_command_lists_and_exports(tmp_path):
    from click.testing import CliRunner
    from PIL import Image

    from longpuzzle.cli import cli

    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=3, action_timeout=None),
                  folder=tmp_path / "e")
    r = CliRunner().invoke(cli, ["frames", str(tmp_path / "e"), "--step", "2", "--index", "-1", "--json",
                                 "--png", str(tmp_path / "png")])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["frames"] == 4 and info["size"] == [540, 960] and set(info["hashes"]) == {"2", "3"}
    with open_frames(tmp_path / "e") as fs:
        assert np.array_equal(np.asarray(Image.open(tmp_path / "png" / "000003.png").convert("RGB")), fs.read(3))
    r = CliRunner().invoke(cli, ["frames", str(tmp_path / "e"), "--index", "9"])
    assert r.exit_code == 2 and "error: " in r.output and "no frame 9" in r.output


def test_a_run_of_frames_encodes_to_the_records_of_one_frame_at_a_time():
    """FrameEncoder.records (the writer's runs of frames, compressed in one call) gives the
    bytes of record() frame by frame, repeats (references) included, across runs."""
    from longpuzzle.agents.harness.frames import FrameEncoder
    fr = _frames(11, seed=3)
    fr[4] = fr[3].copy()
    fr[5] = fr[3].copy()
    fr[8] = fr[7].copy()
    items = [(i, f, frame_hash(f)) for i, f in enumerate(fr)]
    one, runs = FrameEncoder(), FrameEncoder()
    a = one.file_header(fr[0]) + b"".join(one.record(*it) for it in items)
    b = runs.file_header(fr[0]) + b"".join(runs.records(items[i:j]) for i, j in ((0, 1), (1, 4), (4, 5), (5, 11)))
    assert a == b and a.count(b"LPFR") == 12          # the file header and 11 records
    with pytest.raises(FrameStoreError):
        runs.records([(11, np.zeros((2, 2, 3), np.uint8), frame_hash(np.zeros((2, 2, 3), np.uint8)))])


def _boxed(n, seed=5, shape=(48, 32, 3)):
    """n frames, each the previous one with a random box repainted, and each box."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 256, shape, np.uint8)
    out = [(f, None)]
    H, W = shape[:2]
    for i in range(1, n):
        f = f.copy()
        x0, y0 = int(rng.integers(0, W - 4)), int(rng.integers(0, H - 4))
        x1, y1 = x0 + int(rng.integers(1, 5)), y0 + int(rng.integers(1, 5))
        if i % 9 != 5:                    # (now and then the same frame again)
            f[y0:y1, x0:x1] = rng.integers(0, 256, (y1 - y0, x1 - x0, 3))
        out.append((f, (x0, y0, x1, y1)))
    return out


def test_frames_stored_as_the_box_that_changed_read_back_exactly(tmp_path, monkeypatch):
    """Kind 2 records (a frame = the one before with a box replaced): every frame reads back
    exactly in any order, chains end at a kind 0 record within KEY_EVERY, a box claimed for
    another frame than the one recorded last is not used, a cut-off or corrupt box record
    is found, and version 1 files (no kind 2) still read."""
    from longpuzzle.agents.harness import frames as F
    monkeypatch.setattr(F, "KEY_EVERY", 6)
    fr = _boxed(40)
    t = Trajectory(tmp_path)
    prev = None
    hashes = []
    for i, (f, box) in enumerate(fr):
        other = np.zeros_like(f)                     # a delta against a frame not recorded last
        hashes.append(t.frame(f, None if box is None else ((prev if i % 13 else other), box)))
        prev = f
    t.result({"ok": True})
    with open_frames(tmp_path) as fs:
        kinds = [e[2] for e in fs._index]
        assert kinds.count(F.KIND_BOX) > 20 and kinds.count(F.KIND_SAME) > 2 and fs.version == 3
        assert fs.frame_hash == F.FRAME_HASH == "xxh3-128-b32"
        assert kinds[13] == kinds[26] == F.KIND_RAW                 # the foreign delta was not used
        depth = 0
        for k in kinds:
            depth = 0 if k == F.KIND_RAW else depth + 1
            assert depth <= 6 + 1
        order = list(range(40))
        random.Random(1).shuffle(order)
        for i in order + list(range(40)) + list(range(39, -1, -1)):
            assert np.array_equal(fs.read(i), fr[i][0]), i
            assert fs.hash(i) == hashes[i]
        assert np.array_equal(fs.read(37, box=(3, 4, 20, 30)), fr[37][0][4:30, 3:20])
        assert all(fs.verify(i) for i in range(40))
    path = tmp_path / FRAMES_FILE
    data = path.read_bytes()
    with open_frames(tmp_path) as fs:
        off, ref, kind, n, _, _ = fs._index[-1] if fs._index[-1][2] == F.KIND_BOX else fs._index[-2]
    bad = bytearray(data)
    bad[off] ^= 0x7F                      # the box's x0: the payload's check fails
    path.write_bytes(bytes(bad))
    with open_frames(tmp_path) as fs:
        j = next(i for i in range(39, 0, -1) if fs._index[i][0] == off)
        with pytest.raises(FrameStoreError, match="corrupt"):
            fs.read(j)
    path.write_bytes(data[:-5])
    with open_frames(tmp_path) as fs:
        assert fs.torn and len(fs) == 39 and np.array_equal(fs.read(38), fr[38][0])
    # version 1: kind 0 and 1 records only (whole-frame xxh3-128 digests); a kind 2 record in
    # one is corruption
    enc = F.FrameEncoder(F.WHOLE_FRAME_HASH)
    v1 = bytearray(enc.file_header(fr[0][0]) + b"".join(enc.record(i, f, F.whole_frame_hash(f)) for i, (f, _) in
                                                           enumerate(fr[:5])))
    assert v1[8:12] == (2).to_bytes(4, "little")
    v1[8:12] = (1).to_bytes(4, "little")
    path.write_bytes(bytes(v1))
    with open_frames(tmp_path) as fs:
        assert fs.version == 1 and [np.array_equal(fs.read(i), fr[i][0]) for i in range(5)] == [True] * 5
        assert fs.frame_hash == "xxh3-128" and all(fs.verify(i) for i in range(5))
    v1[8:12] = (4).to_bytes(4, "little")          # a version from the future: refused, saying so
    path.write_bytes(bytes(v1))
    with pytest.raises(FrameStoreError, match="version 4, which this longpuzzle does not read"):
        open_frames(tmp_path)
    enc = F.FrameEncoder(F.WHOLE_FRAME_HASH)
    v1 = bytearray(enc.file_header(fr[0][0]) + enc.records([(i, f, F.whole_frame_hash(f), b) for i, (f, b) in
                                                            enumerate(fr[:5])]))
    v1[8:12] = (1).to_bytes(4, "little")
    path.write_bytes(bytes(v1))
    with pytest.raises(FrameStoreError, match="corrupt"):
        open_frames(tmp_path)
