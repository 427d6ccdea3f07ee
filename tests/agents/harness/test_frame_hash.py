"""The frame hash ("xxh3-128-b32", agents/harness/frames.py): its definition against a
reference computed here band by band; FrameHasher's incremental hashes equal the full ones
at every frame of seeded random GUI play on every game in both styles (the renderer's
deltas), and fall back to hashing in full whenever the delta cannot be trusted; a wrong
delta makes a wrong recorded hash, which replay (hashing every frame in full) reports;
folders and datasets recorded with the whole-frame "xxh3-128" still replay and check, and
new ones name the hash they hold."""

from __future__ import annotations

import functools
import json
import random
import shutil
import struct

import numpy as np
import pytest
import xxhash

from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import HarnessError, Settings, open_frames, read_events, replay_episode, run_objective
from longpuzzle.agents.harness import frames as F
from longpuzzle.agents.harness.frames import FrameHasher, frame_hash
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer


def _reference(frame: np.ndarray) -> str:
    """The definition, written out: xxh3-128 of (u32 height, width, channels) and the
    xxh3-128 digests of the 32-row bands, top to bottom (the last band the rows left)."""
    h, w, c = frame.shape
    acc = xxhash.xxh3_128()
    acc.update(struct.pack("<III", h, w, c))
    top = 0
    while top < h:
        band = xxhash.xxh3_128()
        band.update(frame[top:min(h, top + 32)].tobytes())
        acc.update(band.digest())
        top += 32
    return acc.hexdigest()


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def test_the_definition_every_pixel_and_the_shape_count():
    rng = np.random.default_rng(0)
    for shape in [(960, 540, 3), (720, 405, 3), (33, 7, 3), (32, 5, 3), (31, 1, 3), (1, 1, 3), (64, 64, 4)]:
        f = rng.integers(0, 256, shape, dtype=np.uint8)
        h = frame_hash(f)
        assert h == _reference(f) and len(h) == 32 and int(h, 16) >= 0
        assert F.hasher("xxh3-128-b32") is frame_hash and F.FRAME_HASH == "xxh3-128-b32"
        assert [d.hex() for d in F.band_digests(f)] == [xxhash.xxh3_128_hexdigest(f[r:r + 32].tobytes())
                                                        for r in range(0, shape[0], 32)]
        for _ in range(3):                                   # any pixel byte of any band counts
            g = f.copy()
            y, x, c = (int(rng.integers(n)) for n in shape)
            g[y, x, c] ^= 1 << int(rng.integers(8))
            assert frame_hash(g) != h
    # crops and other views hash their pixels, not their memory layout
    f = rng.integers(0, 256, (200, 120, 3), dtype=np.uint8)
    crop = f[13:170, 7:101]
    assert frame_hash(crop) == _reference(np.ascontiguousarray(crop)) == frame_hash(crop.copy())
    # the header: the same bytes in another shape are another frame
    a = np.zeros((64, 30, 3), np.uint8)
    assert frame_hash(a) != frame_hash(a.reshape(32, 60, 3)) != frame_hash(a.reshape(64, 10, 9))
    # not the whole-frame hash of older folders, which stays readable by its name
    assert F.hasher("xxh3-128")(f) == xxhash.xxh3_128_hexdigest(f.tobytes()) != frame_hash(f)
    with pytest.raises(ValueError):
        frame_hash(np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError):
        frame_hash(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(F.FrameStoreError, match=r"unknown frame hash 'xxh3-129'.*newer version"):
        F.hasher("xxh3-129")


def test_frame_hasher_uses_a_delta_only_when_it_can_be_trusted():
    rng = np.random.default_rng(1)
    base = rng.integers(0, 256, (300, 50, 3), dtype=np.uint8)
    n = 10                                                   # bands of a 300-row frame

    def changed(src, y0, y1):
        g = src.copy()
        g[y0:y1, 3:9] = rng.integers(0, 256, (y1 - y0, 6, 3), dtype=np.uint8)
        return _ro(g)
    hs = FrameHasher()
    f0 = _ro(base.copy())
    assert hs.hash(f0) == frame_hash(f0) and hs.hashed == n and [d.hex() for d in hs.digests] == \
        [d.hex() for d in F.band_digests(f0)]
    f1 = changed(f0, 40, 70)                                 # rows 40..69: bands 1 and 2
    assert hs.hash(f1, (f0, (3, 40, 9, 70))) == frame_hash(f1) and hs.hashed == n + 2
    f2 = changed(f1, 299, 300)                               # the last row: the last band
    assert hs.hash(f2, (f1, (3, 299, 9, 300))) == frame_hash(f2) and hs.hashed == n + 3
    f3 = _ro(f2.copy())                                      # the same pixels: an empty box
    assert hs.hash(f3, (f2, (0, 0, 0, 0))) == frame_hash(f2) and hs.hashed == n + 3
    # a box out of the frame's rows is clipped to them
    f4 = changed(f3, 250, 300)
    assert hs.hash(f4, (f3, (3, 250, 9, 10_000))) == frame_hash(f4) and hs.hashed == n + 6
    # deltas that cannot be trusted: every band hashed again
    f5 = changed(f4, 0, 5)
    other = _ro(f4.copy())                                   # the same pixels, another array
    assert hs.hash(f5, (other, (3, 0, 9, 5))) == frame_hash(f5) and hs.hashed == 2 * n + 6
    w6 = changed(f5, 100, 101).copy()                        # a writeable frame: hashed in full...
    assert hs.hash(w6, (f5, (3, 100, 9, 101))) == frame_hash(w6) and hs.hashed == 3 * n + 6
    w6[200, 4] ^= 255                                        # ...and never trusted as a frame before
    f7 = _ro(w6.copy())
    assert hs.hash(f7, (w6, (0, 0, 0, 0))) == frame_hash(f7) and hs.hashed == 4 * n + 6
    small = _ro(np.zeros((64, 50, 3), np.uint8))             # another shape
    assert hs.hash(small, (f7, (0, 0, 1, 1))) == frame_hash(small) and hs.hashed == 4 * n + 8
    assert hs.hash(f7) == frame_hash(f7) and hs.hashed == 5 * n + 8        # no delta
    hs.forget()
    assert hs.hash(f0, (f7, (0, 0, 50, 300))) == frame_hash(f0) and hs.hashed == 6 * n + 8
    # a wrong delta (a change outside its box) is not detected here: the hash is wrong
    bad = changed(f0, 150, 160)
    assert hs.hash(bad, (f0, (0, 0, 50, 32))) != frame_hash(bad)


def _play(style: str, game: str, seed: int, actions: int):
    """Seeded random GUI play on one game: the solver's moves as gestures, GUI actions of
    every type (mostly on widgets: menus, undo, restart, next level), waits; yields every
    frame with its render_delta (mid-animation frames too)."""
    from longpuzzle.engine import gui
    from longpuzzle.agents.testing.fuzz.gui import random_action
    rng = random.Random(seed)
    lid = builtin_catalog().objectives(game)[0].level_ids[0]
    s = Suite(lid, style=style)
    r = Renderer(style)
    yield r.render_delta(s)
    for _ in range(actions):
        legal = s.session.legal_moves() if s.session is not None and s.screen["name"] == "level" else []
        u = rng.random()
        if len(legal) and not s.complete and u < 0.55:
            a = s.gesture_for(int(rng.choice(list(legal))))
        elif u < 0.65:
            a = {"type": "wait", "ms": rng.choice((0, 50, 300, 900))}
        else:
            a = random_action(rng, s.frame_size, s)
        try:
            s.dispatch(a)
        except (gui.ActionError, LongPuzzleError):
            continue
        for t in [a_["t0"] + (a_["t1"] - a_["t0"]) * k // 3 for a_ in s.anims for k in (1, 2)] + [None]:
            yield r.render_delta(s, t)


def _diff_box(a: np.ndarray, b: np.ndarray) -> tuple:
    """The px box outside which two frames have the same pixels, from the pixels."""
    ys, xs = np.nonzero((a != b).any(axis=2))
    return (0, 0, 0, 0) if not len(ys) else (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


@pytest.mark.parametrize("style", ["2d", "3d"])
@pytest.mark.parametrize("game", builtin_catalog().games())
def test_incremental_hashes_equal_full_hashes_through_random_gui_play(game, style):
    """Every frame: the hash from the renderer's delta equals frame_hash and the reference,
    and exactly the bands meeting the delta's rows (its row spans) were hashed. Where the
    renderer knows no delta, the box is found from the pixels."""
    _incremental_hashes(game, style)


def _incremental_hashes(game, style) -> int:
    """The check above; returns the frames whose row spans spared bands of their box."""
    hs = FrameHasher()
    frames = used = renderer_deltas = spanned = 0
    prev = None
    for f, d in _play(style, game, seed=sum(map(ord, game + style)), actions=40):
        if d is None and prev is not None:
            d = (prev, _diff_box(prev, f))
        else:
            renderer_deltas += d is not None
        before = hs.hashed
        got = hs.hash(f, d)
        assert got == frame_hash(f) == _reference(f), (game, style, frames)
        assert [x.hex() for x in hs.digests] == [x.hex() for x in F.band_digests(f)]
        n_bands = -(-f.shape[0] // 32)
        if d is None:
            want = n_bands
        else:
            x0, y0, x1, y1 = d[1]
            spans = d[2] if len(d) > 2 and len(d[2]) > 1 else [(y0, y1)]
            want = 0 if x1 <= x0 or y1 <= y0 else len({i for a, z in spans for i in range(a // 32, -(-z // 32))})
            spanned += len(spans) > 1 and want < -(-y1 // 32) - y0 // 32
        assert hs.hashed - before == want, (game, style, frames, d and d[1:])
        used += want < n_bands
        frames += 1
        prev, d, f = f, None, None
    assert frames > 40 and used > frames // 2, (frames, used)
    assert hs.hashed < 0.8 * hs.bands, (hs.hashed, hs.bands)
    if game != "bolt_unscrew":
        assert renderer_deltas > frames // 2, (frames, renderer_deltas)
    return spanned


def test_row_spans_of_a_delta_hash_only_the_bands_they_meet():
    """A delta's row spans (rows apart inside its box): only the bands that meet a span are
    hashed, a band two spans meet once; the hash is frame_hash either way."""
    rng = np.random.default_rng(2)
    f0 = _ro(rng.integers(0, 256, (300, 50, 3), dtype=np.uint8))
    hs = FrameHasher()
    hs.hash(f0)
    n = hs.hashed

    def changed(f, rows):
        g = f.copy()
        for y in rows:
            g[y, 7] ^= 0x5A
        return _ro(g)
    f1 = changed(f0, (3, 290))                                # the first band and the last
    assert hs.hash(f1, (f0, (0, 3, 50, 291), ((3, 4), (290, 291)))) == frame_hash(f1) and hs.hashed == n + 2
    f2 = changed(f1, (40, 60, 100))                           # bands 1 and 3 (one span each, 40 and 60 in band 1)
    assert hs.hash(f2, (f1, (0, 40, 50, 101), ((40, 41), (60, 61), (100, 101)))) == frame_hash(f2)
    assert hs.hashed == n + 4
    f3 = changed(f2, (5,))                                    # one span: as a box
    assert hs.hash(f3, (f2, (0, 5, 50, 6), ((5, 6),))) == frame_hash(f3) and hs.hashed == n + 5
    f4 = changed(f3, (150, 299))                              # spans past the frame are clipped
    assert hs.hash(f4, (f3, (0, 150, 50, 400), ((150, 151), (299, 400)))) == frame_hash(f4) and hs.hashed == n + 7
    bad = changed(f4, (200,))                                 # a change outside the spans: a wrong hash
    assert hs.hash(bad, (f4, (0, 10, 50, 290), ((10, 11), (289, 290)))) != frame_hash(bad)


def test_the_renderer_gives_row_spans_that_hash_fewer_bands_than_its_boxes():
    """Through random GUI play on every game the renderer gives deltas with rows apart
    (a HUD line, a counter, a piece), and they spare bands the box would have hashed."""
    spared = sum(_incremental_hashes(g, "2d") for g in builtin_catalog().games())
    assert spared >= 10, spared


def test_a_wrong_delta_makes_a_recorded_hash_that_replay_reports(tmp_path, monkeypatch):
    """The renderer's delta claims no change on every frame: the trajectory believes it
    (its hashes and stored frames say nothing changed), replay hashes every frame in full."""
    from longpuzzle.render import frame as R
    orig = R.Frame._delta

    def no_change(self, *a):
        d = orig(self, *a)
        return None if d is None else (d[0], (0, 0, 0, 0))
    monkeypatch.setattr(R.Frame, "_delta", no_change)
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=6, action_timeout=None),
                  folder=tmp_path)
    ev = read_events(tmp_path)
    hashes = [ev[0]["frame"]] + [h for e in ev if e.get("stream") == "public" for h in e.get("frames", [])]
    assert len(set(hashes)) < len(hashes)                    # frames that differ recorded as the same
    rep = replay_episode(tmp_path)                           # (the wrong deltas still in force)
    assert not rep.ok and "frames differ" in rep.divergence, rep.divergence


def test_new_folders_name_their_hash_and_old_whole_frame_folders_still_replay(tmp_path, monkeypatch):
    new = tmp_path / "new"
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=5, action_timeout=None), folder=new)
    assert read_events(new)[0]["frame_hash"] == "xxh3-128-b32"
    with open_frames(new) as fs:
        assert fs.version == 3 and fs.frame_hash == "xxh3-128-b32" and (new / F.FRAMES_FILE).read_bytes()[8] == 3
        assert all(fs.verify(i) and fs.hash(i) == frame_hash(fs.read(i)) for i in range(len(fs)))
    assert replay_episode(new).ok
    # a folder as written before the bands: whole-frame xxh3-128, frame file version 2
    from longpuzzle.agents.harness import run as run_mod
    old = tmp_path / "old"
    with monkeypatch.context() as m:
        m.setattr(run_mod, "Trajectory", functools.partial(run_mod.Trajectory, frame_hash="xxh3-128"))
        run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=5, action_timeout=None),
                      folder=old)
    ev = read_events(old)
    assert ev[0]["frame_hash"] == "xxh3-128"
    with open_frames(old) as fs:
        assert fs.version == 2 and fs.frame_hash == "xxh3-128"
        assert fs.hash(3) == xxhash.xxh3_128_hexdigest(fs.read(3).tobytes()) and fs.verify(3)
    rep = replay_episode(old)
    assert rep.ok and rep.complete and rep.stored_frames, rep.divergence
    # ... where a recorded hash that is not the frame's is still found
    bad = tmp_path / "bad"
    shutil.copytree(old, bad)
    lines = (bad / "events.jsonl").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if '"stream":"public"' in ln)
    rec = json.loads(lines[k])
    rec["frames"][-1] = frame_hash(open_frames(old).read(1))   # the new hash of the right frame: wrong here
    lines[k] = json.dumps(rec)
    (bad / "events.jsonl").write_text("\n".join(lines) + "\n")
    rep = replay_episode(bad)
    assert not rep.ok and "frames differ" in rep.divergence, rep.divergence
    # events and frame file that name different hashes, or a hash this version does not know
    mixed = tmp_path / "mixed"
    shutil.copytree(old, mixed)
    shutil.copy(new / F.FRAMES_FILE, mixed / F.FRAMES_FILE)
    rep = replay_episode(mixed)
    assert not rep.ok and "xxh3-128-b32 but the events' frame hashes are xxh3-128" in rep.divergence
    future = tmp_path / "future"
    shutil.copytree(new, future)
    text = (future / "events.jsonl").read_text().replace('"frame_hash":"xxh3-128-b32"', '"frame_hash":"xxh4-256"', 1)
    (future / "events.jsonl").write_text(text)
    with pytest.raises(HarnessError, match="unknown frame hash 'xxh4-256'"):
        replay_episode(future)


def test_datasets_name_their_frame_hash_and_old_manifests_mean_whole_frame(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow.parquet")
    from longpuzzle.agents.harness import run as run_mod
    from longpuzzle.agents.datasets.build import DatasetConfig, build, load_plan, read_manifest
    from longpuzzle.agents.datasets.check import check_dataset
    from longpuzzle.agents.datasets.shards import DatasetError, read_rows

    cfg = {"objectives": ["maze_paint/easy"], "episodes": 1, "settings": {"max_actions": 12}}
    new = tmp_path / "new"
    m = build(new, DatasetConfig(**cfg))
    assert m["format"] == "longpuzzle-dataset/2" and m["frame_hash"] == "xxh3-128-b32"
    assert json.loads((new / "dataset.json").read_text())["frame_hash"] == "xxh3-128-b32"
    rows = [r for s in m["shards"] for r in read_rows(new / s["file"])]
    assert rows and check_dataset(new)["ok"]
    # a dataset as written before: whole-frame xxh3-128 hashes, format 1, no frame_hash named
    old = tmp_path / "old"
    with monkeypatch.context() as mp:
        mp.setattr(run_mod, "Trajectory", functools.partial(run_mod.Trajectory, frame_hash="xxh3-128"))
        build(old, DatasetConfig(**cfg))
    man = json.loads((old / "manifest.json").read_text())
    old_rows = [r for s in man["shards"] for r in read_rows(old / s["file"])]
    assert [r["frame_hash"] for r in old_rows] != [r["frame_hash"] for r in rows]
    assert [r["image"] for r in old_rows] == [r["image"] for r in rows]          # the same PNGs
    man["format"] = "longpuzzle-dataset/1"
    del man["frame_hash"]
    (old / "manifest.json").write_text(json.dumps(man))
    rep = check_dataset(old)
    assert rep["ok"] and rep["frames_checked"] == rep["actions_replayed"] == len(old_rows), rep["problems"]
    assert read_manifest(old)["format"] == "longpuzzle-dataset/1"
    # named wrongly, the same rows fail: the check uses the hash the manifest names
    man["format"], man["frame_hash"] = "longpuzzle-dataset/2", "xxh3-128-b32"
    (old / "manifest.json").write_text(json.dumps(man))
    rep = check_dataset(old)
    assert not rep["ok"] and any("not the recorded frame" in p for p in rep["problems"])
    # an unfinished dataset of format 1 is not resumed into a mix of hashes
    plan = json.loads((old / "dataset.json").read_text())
    plan["format"] = "longpuzzle-dataset/1"
    (old / "dataset.json").write_text(json.dumps(plan))
    with pytest.raises(DatasetError, match="older longpuzzle"):
        load_plan(old)


def test_the_png_stream_takes_the_harness_band_digests_for_the_same_bytes(tmp_path, monkeypatch):
    """A dataset job's PNG bands are keyed by the harness's band digests (not hashed again):
    the same shard bytes as a writer hashing every band itself, with next to no band hashed
    by the stream; digests that are not one per band are not used."""
    pytest.importorskip("pyarrow.parquet")
    from longpuzzle.agents.datasets.build import DatasetConfig
    from longpuzzle.agents.datasets.collect import play_episode
    from longpuzzle.agents.media.png import PngStream
    from longpuzzle.agents.datasets.shards import file_sha256
    from longpuzzle.agents.datasets.writer import StepWriter

    spec = DatasetConfig(objectives=["maze_paint/easy"], episodes=1, detours=0.1, seed=5).plan()[0]

    def job(folder):
        folder.mkdir()
        w = StepWriter(folder, "parquet", 0)
        play_episode(spec, {"budget": None, "max_actions": 60}, w)
        return [file_sha256(folder / s["file"]) for s in w.close()], w._png
    given, png = job(tmp_path / "given")
    assert png.bands > 1000 and png.hashed < 0.02 * png.bands, (png.hashed, png.bands)
    with monkeypatch.context() as m:
        m.setattr(FrameHasher, "digests_for", lambda self, frame: None)
        hashed, png2 = job(tmp_path / "hashed")
    assert given == hashed and png2.hashed > 10 * max(1, png.hashed), (png.hashed, png2.hashed)
    # the stream on its own: digests as given, or ignored when they are not the frame's bands
    rng = np.random.default_rng(2)
    f = _ro(rng.integers(0, 256, (100, 40, 3), dtype=np.uint8))
    ds = F.band_digests(f)
    a, b = PngStream(band_rows=32), PngStream(band_rows=32)
    c, d = PngStream(band_rows=50), PngStream(band_rows=50)
    assert a.encode(f, digests=ds) == b.encode(f) and c.encode(f, digests=ds) == d.encode(f)
    assert a.hashed == 0 and b.hashed == 4 and c.hashed == d.hashed == 2
