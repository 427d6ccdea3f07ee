"""The dataset writer's parts: the PNG stream (agents/media/png.py) with the renderer's deltas
(the same bytes as without them, and so the same shards, every frame decoding exactly,
fewer bands hashed; deltas it cannot trust, relative to another frame or to a frame that
may have changed, are ignored), its deflate (a band's bytes are a function of its pixels,
the library and the level alone: whatever the reused compressor did before, in a fresh
process too; the standard library's zlib when zlib-ng is missing), and the WebDataset tar
written directly (the bytes tarfile writes)."""

from __future__ import annotations

import hashlib
import io
import json
import random
import subprocess
import sys
import tarfile
import zlib

import numpy as np
import pytest
from PIL import Image

from longpuzzle.agents.datasets.build import DatasetConfig
from longpuzzle.agents.datasets.collect import play_episode
from longpuzzle.agents.media import deflate as deflate_mod
from longpuzzle.agents.media.deflate import LEVELS, Deflate, reproducible_deflate
from longpuzzle.agents.media.png import PngStream
from longpuzzle.agents.datasets.schema import COLUMNS, META_COLUMNS
from longpuzzle.agents.datasets.shards import DatasetError, WebDatasetShard, file_sha256, read_rows, ustar_header
from longpuzzle.agents.datasets.writer import StepWriter


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


class _Capture:
    def __init__(self):
        self.steps, self.ends = [], []

    def add(self, meta, frame, delta=None):
        self.steps.append((meta, frame, delta))

    def end_episode(self, frame, h=None):
        self.ends.append((len(self.steps), frame, h))


@pytest.fixture(scope="module")
def captured():
    """Steps of Maze Paint easy (with detours and a restart now and then: bands come back)
    and Rush Hour easy at another scale, as the collector hands them to the writer."""
    c = _Capture()
    plan = DatasetConfig(objectives=["maze_paint/easy"], episodes=1, detours=0.1, restarts=0.05, seed=5).plan()
    plan += DatasetConfig(objectives=["rush_hour/easy"], episodes=1, scales=[0.75]).plan()
    for spec in plan:
        play_episode(spec, {"budget": None}, c)
    return c


@pytest.mark.parametrize("cache_bands", [40, 10])
def test_deltas_give_the_same_pngs_and_cache_with_fewer_bands_hashed(captured, cache_bands):
    # byte for byte only with the reproducible deflate: ISA-L's bytes can vary from call to call
    # (agents/media/png.py), so two ISA-L streams are compared by their pixels. With 10 bands kept,
    # fewer than a frame's 15, a frame's own bands drop out of the cache while it is written
    plain = PngStream(cache_bands=cache_bands, reproducible=True)
    fast = PngStream(cache_bands=cache_bands, reproducible=True)
    for k, (_meta, frame, delta) in enumerate(captured.steps):
        png = fast.encode(frame, delta)
        assert png == plain.encode(frame), k
        assert list(fast._cache) == list(plain._cache), k        # the same recent bands, in the same order
        if k % 25 == 0:
            assert np.array_equal(_pixels(png), frame), k
    used = sum(fast.follows(d) or d is not None for _, _, d in captured.steps)
    assert used > len(captured.steps) // 2                        # most frames come with a usable delta
    assert sum(d is not None and len(d) > 2 and len(d[2]) > 1 for _, _, d in captured.steps) >= 5   # rows apart
    assert plain.hashed == plain.bands
    assert fast.hashed < plain.hashed * 0.7, (fast.hashed, plain.hashed)


def test_frames_kept_by_key_give_the_same_pngs(captured):
    """A frame encoded before under its key (the harness's hash) comes back without its
    pixels looked at, and becomes the frame encoded last (its delta usable next): the same
    PNGs as encoding every frame, with every band hashed, whatever was dropped."""
    plain, deltas = PngStream(cache_bands=40, reproducible=True), PngStream(cache_bands=40, reproducible=True)
    for _meta, frame, delta in captured.steps:
        deltas.encode(frame, delta)
    for frame_bytes in (1 << 30, 200_000):                 # everything kept; a few frames only
        keyed = PngStream(cache_bands=40, frame_bytes=frame_bytes, reproducible=True)
        for k, (meta, frame, delta) in enumerate(captured.steps):
            h = meta["frame_hash"] or f"first-{k}"
            assert keyed.encode(frame, delta, key=h) == plain.encode(frame), k
            assert keyed.recall(h) is not None
        assert keyed._frames_size <= max(frame_bytes, max(len(r[4]) for r in keyed._frames.values()))
        if frame_bytes > 1 << 20:
            # frames come back (no-effect actions, detours undone): fewer encoded, fewer hashed
            # than with the deltas alone
            assert len(keyed._frames) < len(captured.steps) * 0.9
            assert keyed.hashed < deltas.hashed * 0.9, (keyed.hashed, deltas.hashed)
        else:
            assert len(keyed._frames) < 20
    assert PngStream().recall("never seen") is None


def test_the_default_deflate_gives_the_same_pixels(captured):
    """The default stream (ISA-L's deflate where it is installed: VISTA's and the model
    agents' images) with deltas and cached bands: every frame decodes to its pixels."""
    s = PngStream(cache_bands=40)
    for k, (_meta, frame, delta) in enumerate(captured.steps):
        png = s.encode(frame, delta)
        if k % 5 == 0:
            assert np.array_equal(_pixels(png), frame), k


def test_untrusted_deltas_are_ignored():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 255, (200, 60, 3), dtype=np.uint8)
    a.setflags(write=False)
    b = a.copy()
    b[150:160] = 7
    b.setflags(write=False)
    s = PngStream(band_rows=32)
    s.encode(a)
    other = a.copy()
    other.setflags(write=False)
    # a delta relative to a frame the stream did not encode last (claiming nothing changed)
    assert np.array_equal(_pixels(s.encode(b, (other, (0, 0, 0, 0)))), b)
    # a frame that can still be written to may have changed since it was encoded
    w = b.copy()
    s.encode(w)
    w[10:20] = 200
    assert np.array_equal(_pixels(s.encode(w.copy(), (w, (0, 0, 0, 0)))), w)
    # a view of the whole frame stands for it (the harness hands agents such views)
    s.encode(a.view())
    h0 = s.hashed
    assert np.array_equal(_pixels(s.encode(b, (a, (0, 150, 60, 160)))), b)
    assert s.hashed - h0 == 1                                   # only the band of rows 128-160
    h0 = s.hashed
    assert np.array_equal(_pixels(s.encode(b.view(), (b, (0, 0, 0, 0)))), b)
    assert s.hashed == h0


def test_the_writer_writes_the_same_shard_with_and_without_deltas(captured, tmp_path):
    shas = []
    for use in (True, False):
        d = tmp_path / str(use)
        d.mkdir()
        w = StepWriter(d, "parquet", 0, threaded=False)
        ends = {n: (f, h) for n, f, h in captured.ends}
        for i, (meta, frame, delta) in enumerate(captured.steps):
            w.add(dict(meta), frame, delta if use else None)
            if i + 1 in ends:
                w.end_episode(*ends[i + 1])
        shas.append([file_sha256(d / s["file"]) for s in w.close()])
        if use:
            assert w._png.hashed < w._png.bands * 0.7
    assert shas[0] == shas[1]


def test_frames_shown_ahead_give_the_same_shard(tmp_path):
    """The collector hands each frame to the writer as soon as it is shown (StepWriter.shown:
    encoded while fresh in the caches); a writer without ``shown`` encodes each row's frame
    when the row comes; a writer thread (threaded=True) does the same work off the episode's
    thread: the same bytes."""
    class NoShown:                                  # the writer, with rows only
        def __init__(self, w):
            self.w = w

        def add(self, *a):
            self.w.add(*a)

        def end_episode(self, *a):
            self.w.end_episode(*a)
    shas = []
    for ahead, threaded in ((True, False), (False, False), (True, True)):
        d = tmp_path / f"{ahead}-{threaded}"
        d.mkdir()
        w = StepWriter(d, "parquet", 0, threaded=threaded)
        for spec in DatasetConfig(objectives=["maze_paint/easy"], episodes=2, detours=0.1, seed=2).plan():
            play_episode(spec, {"budget": None}, w if ahead else NoShown(w))
        shas.append([file_sha256(d / s["file"]) for s in w.close()])
        assert w._ahead == ahead and w.rows > 100 and w.cpu_seconds > 0
        if ahead:
            assert w._png.hashed < w._png.bands * 0.7
    assert shas[0] == shas[1] == shas[2]


@pytest.mark.parametrize("n", [0, 1, 7])
def test_webdataset_shards_are_the_bytes_tarfile_writes(tmp_path, n):
    rng = np.random.default_rng(n)
    rows = []
    for i in range(n):
        row = dict.fromkeys(COLUMNS)
        size = [0, 512, 1024, 3, 700, 5000, 12345][i]
        row.update(key=f"e{i:05d}-s{i * 7:06d}", image=rng.integers(0, 255, size, dtype=np.uint8).tobytes(),
                   moves=["R"] * i, step=i, level="g/é/1")
        rows.append(row)
    sh = WebDatasetShard(tmp_path / "a.tar")
    for r in rows:
        sh.add(r)
    sh.close()
    ref = io.BytesIO()
    with tarfile.open(fileobj=ref, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for r in rows:
            meta = json.dumps({k: r[k] for k in META_COLUMNS}, separators=(",", ":")).encode()
            for name, data in ((f"{r['key']}.png", r["image"]), (f"{r['key']}.json", meta)):
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
    assert (tmp_path / "a.tar").read_bytes() == ref.getvalue()
    assert [r["image"] for r in read_rows(tmp_path / "a.tar")] == [r["image"] for r in rows]
    with pytest.raises(DatasetError):
        ustar_header("x" * 100 + ".png", 1)


# ---- the deflate -----------------------------------------------------------------------------

def _deflated(c, band: bytes) -> bytes:
    """A band as PngStream deflates it: raw deflate ended by a full flush."""
    return c.compress(band) + c.flush(zlib.Z_FULL_FLUSH)


@pytest.fixture(scope="module")
def bands(captured):
    """Distinct 32-row bands of the captured frames as the PNG stream compresses them (each
    row led by its filter byte), every 4th kept, and the short last bands of the Rush Hour
    frames (720 rows: 16 rows)."""
    seen: dict = {}
    for _, frame, _ in captured.steps:
        h, w = frame.shape[:2]
        for r0 in range(0, h, 32):
            rows = frame[r0:r0 + 32]
            raw = np.zeros((len(rows), w * 3 + 1), np.uint8)
            raw[:, 1:] = rows.reshape(len(rows), -1)
            seen.setdefault(hashlib.sha1(raw).digest(), raw.tobytes())
    every = list(seen.values())
    full = max(map(len, every))
    short = [b for b in every if len(b) < full // 2]
    assert short
    return every[::4] + short[:8]


def _zlib(level: int) -> Deflate:
    return Deflate("zlib", zlib.ZLIB_RUNTIME_VERSION, level, zlib)


@pytest.mark.parametrize("level", LEVELS)
def test_a_bands_bytes_depend_on_its_pixels_alone_whatever_the_compressor_did_before(bands, level):
    """The recent-band cache and the frames kept by key hand a band's bytes out again in
    other frames: one reused compressor must give every band the bytes a fresh one gives
    it, in any order, after random bytes, after a band cut short and after a longer input
    (which leave other bytes past the band's end in the compressor's window: zlib-ng's
    issue #2100), for zlib-ng and for the standard library's zlib (the fallback)."""
    rng = random.Random(level)
    noise = rng.randbytes(60_000)
    for deflate in (reproducible_deflate(level), _zlib(level)):
        fresh = [_deflated(deflate.compressor(), b) for b in bands]
        c = deflate.compressor()
        order = list(range(len(bands)))
        rng.shuffle(order)
        for i in [*range(len(bands)), *reversed(range(len(bands))), *order]:
            assert _deflated(c, bands[i]) == fresh[i], (deflate, i)
        for i, b in enumerate(bands):
            other = bands[(i * 7 + 3) % len(bands)]
            _deflated(c, [noise, other[:len(other) // 3], other + noise[:4000]][i % 3])
            assert _deflated(c, b) == fresh[i], (deflate, i)
        stream = b"".join(fresh) + b"\x03\x00"                        # the bands in one deflate stream
        assert zlib.decompress(stream, -15) == b"".join(bands)


_FRESH_BANDS = """
import hashlib, sys
from longpuzzle.agents.media.deflate import reproducible_deflate
data = open(sys.argv[1], "rb").read()
bands, at = [], 0
while at < len(data):
    n = int.from_bytes(data[at:at + 4], "big")
    bands.append(data[at + 4:at + 4 + n])
    at += 4 + n
for level in (1, 2, 9):
    c = reproducible_deflate(level).compressor()
    print(level, " ".join(hashlib.sha256(c.compress(b) + c.flush(3)).hexdigest()[:16] for b in bands))
"""


def test_a_fresh_process_deflates_the_bands_to_the_same_bytes(bands, tmp_path):
    """Bands deflated here after other work, and in a new process with nothing before them
    (its own compressor, reused band after band as PngStream does): the same bytes."""
    f = tmp_path / "bands"
    f.write_bytes(b"".join(len(b).to_bytes(4, "big") + b for b in bands))
    out = subprocess.run([sys.executable, "-c", _FRESH_BANDS, str(f)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    there = {int(line.split()[0]): line.split()[1:] for line in out.stdout.strip().splitlines()}
    assert sorted(there) == [1, 2, 9]
    for level, shas in there.items():
        c = reproducible_deflate(level).compressor()
        _deflated(c, random.Random(1).randbytes(70_000))
        here = [hashlib.sha256(_deflated(c, b)).hexdigest()[:16] for b in reversed(bands)][::-1]
        assert here == shas, level


def test_the_stream_gives_every_frame_the_same_png_in_any_order(captured):
    """One stream encoding the frames in order and another in reverse (and so every band
    after other bands than the first saw), no band reused from a cache: the same PNGs."""
    frames = [frame for _, frame, _ in captured.steps][::9]
    a = PngStream(band_rows=32, cache_bands=0, reproducible=True)
    b = PngStream(band_rows=32, cache_bands=0, reproducible=True)
    forward = [a.encode(f) for f in frames]
    backward = [b.encode(f) for f in reversed(frames)][::-1]
    assert forward == backward
    assert a.compressed == a.bands and a.deflate.library == "zlib-ng"
    assert np.array_equal(_pixels(forward[-1]), frames[-1])


class _CutShort:
    """A deflate module whose compressor stops (an exception) half way through its Nth band."""

    DEFLATED, Z_FULL_FLUSH = zlib.DEFLATED, zlib.Z_FULL_FLUSH

    def __init__(self, real, n):
        self.real, self.n = real, n

    def compressobj(self, *a):
        mod, c = self, self.real.compressobj(*a)

        class Compressor:
            def compress(self, data):
                mod.n -= 1
                if mod.n == 0:
                    c.compress(bytes(data)[:len(data) // 2])
                    raise KeyboardInterrupt
                return c.compress(data)

            def flush(self, mode=zlib.Z_FINISH):
                return c.flush(mode)
        return Compressor()


def test_a_band_cut_short_leaves_no_trace_in_the_next_frames(captured):
    """A deflate interrupted in the middle of a band (an exception: ^C, memory) must not
    leave its half band in the compressor that the next band continues from: the stream
    drops that compressor. The frames after it get the bytes a fresh stream gives them."""
    frames = [frame for _, frame, _ in captured.steps][:12]
    real = reproducible_deflate(1)
    cut = PngStream(band_rows=32, cache_bands=0, deflate=Deflate("zlib-ng", real.version, 1, _CutShort(real.module, 40)))
    with pytest.raises(KeyboardInterrupt):
        for f in frames:
            cut.encode(f)
    plain = PngStream(band_rows=32, cache_bands=0, deflate=real)
    for f in frames[2:]:
        assert cut.encode(f) == plain.encode(f)


def test_without_zlib_ng_the_standard_librarys_zlib_deflates_and_says_so(monkeypatch, captured):
    monkeypatch.setattr(deflate_mod, "_zng", None)
    d = reproducible_deflate(3)
    assert d.module is zlib and d.record()["library"] == "zlib" and "zlib-ng could not be imported" in d.note
    assert d.record()["level"] == 3 and d.header == zlib.compress(b"", 3)[:2]
    s = PngStream(band_rows=32, reproducible=True)
    frame = captured.steps[5][1]
    assert s.deflate.library == "zlib" and np.array_equal(_pixels(s.encode(frame)), frame)
    with pytest.raises(ValueError, match=r"1 \(fastest\) to 9"):
        reproducible_deflate(0)


def _shard_rows(captured, tmp_path, name, repeats=1):
    """One Parquet shard of the captured steps (``repeats`` times over: the same episodes
    again, each time under other names)."""
    d = tmp_path / name
    d.mkdir()
    w = StepWriter(d, "parquet", 0, threaded=False)
    ends = {n: (f, h) for n, f, h in captured.ends}
    for r in range(repeats):
        for i, (meta, frame, delta) in enumerate(captured.steps):
            w.add(dict(meta, episode=f"{meta['episode']}-r{r}") if repeats > 1 else dict(meta), frame, delta)
            if i + 1 in ends:
                w.end_episode(*ends[i + 1])
    entries = w.close()
    assert len(entries) == 1 and entries[0]["rows"] == repeats * len(captured.steps)
    return d / entries[0]["file"]


def test_a_parquet_row_group_stores_a_png_shown_again_once_and_ends_at_its_byte_cap(captured, tmp_path, monkeypatch):
    """The image column's dictionary is one per row group: within a row group a PNG that
    comes back (the same frame again) is stored once, so a shard in one row group is smaller
    than its rows' PNGs together, by about the repeated ones; a row group also ends once its
    distinct PNGs reach ROW_GROUP_BYTES (what the writer holds), and the rows read back the
    same. The file's schema is the plain one (the image column binary, not the dictionary
    type it is written from)."""
    import pyarrow.parquet as pq
    from longpuzzle.agents.datasets import shards as shards_mod
    from longpuzzle.agents.datasets.shards import arrow_schema
    one = _shard_rows(captured, tmp_path, "one")
    rows = list(read_rows(one))
    n = len(rows)
    assert n == len(captured.steps) and n <= shards_mod.ROW_GROUP
    assert pq.ParquetFile(one).metadata.num_row_groups == 1
    pngs = [r["image"] for r in rows]
    total, distinct = sum(map(len, pngs)), sum(len(p) for p in set(pngs))
    assert distinct < 0.95 * total                      # frames do come back in these episodes
    assert one.stat().st_size < distinct + 0.02 * (total - distinct) + 100_000
    cap = total // 5
    monkeypatch.setattr(shards_mod, "ROW_GROUP_BYTES", cap)
    split = _shard_rows(captured, tmp_path, "split")
    md = pq.ParquetFile(split).metadata
    assert md.num_row_groups >= 5
    sizes, k = [], 0
    def distinct_bytes(group):
        return sum(len(p) for p in dict.fromkeys(group))

    for g in range(md.num_row_groups):                  # each group: rows up to the first past the cap
        m = md.row_group(g).num_rows
        group = pngs[k:k + m]
        assert distinct_bytes(group[:-1]) < cap and (g == md.num_row_groups - 1 or distinct_bytes(group) >= cap)
        sizes.append(m)
        k += m
    assert k == n
    assert list(read_rows(split)) == rows
    assert pq.read_schema(split).equals(arrow_schema()) and pq.read_schema(one).equals(arrow_schema())
    assert split.stat().st_size > one.stat().st_size   # the PNGs repeated across groups are stored again


def test_a_default_shard_is_one_row_group_and_stores_a_png_shown_again_once(captured, tmp_path, monkeypatch):
    """A shard of up to DEFAULT_SHARD_SIZE rows (the default) is one row group, so a frame
    that comes back more than 1,024 rows later is not stored again; reading decodes
    READ_BATCH rows at a time and gives back every row as written, whatever that size."""
    import pyarrow.parquet as pq
    from longpuzzle.agents.datasets import shards as shards_mod
    from longpuzzle.agents.datasets.writer import DEFAULT_SHARD_SIZE
    repeats = 1024 // len(captured.steps) + 2            # the same episodes again, under other names
    path = _shard_rows(captured, tmp_path, "long", repeats)
    n = repeats * len(captured.steps)
    assert 1024 < n <= DEFAULT_SHARD_SIZE
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    rows = list(read_rows(path))
    assert [r["key"] for r in rows] == [f"{m['episode']}-r{r}-s{m['step']:06d}" for r in range(repeats)
                                        for m, _, _ in captured.steps]
    pngs = [r["image"] for r in rows]
    total, distinct = sum(map(len, pngs)), sum(len(p) for p in set(pngs))
    assert distinct < total / repeats + 1                # each replay shows the same frames
    assert path.stat().st_size < distinct + 0.02 * (total - distinct) + 100_000
    monkeypatch.setattr(shards_mod, "READ_BATCH", 97)   # batches across the episodes' ends
    assert list(read_rows(path)) == rows


def test_a_parquet_shard_stores_a_png_that_comes_back_once(tmp_path):
    """The image column's dictionary holds each distinct PNG of a row group once, also one
    that comes back as another bytes object, or after others of its size (the column stays
    dictionary-encoded); the rows read back exactly, and the same rows give the same file."""
    from longpuzzle.agents.datasets.shards import ParquetShard
    rng = random.Random(3)
    a, b, c = (rng.randbytes(40_000) for _ in range(3))

    def row(i, h, png):
        r = {k: ([] if t.startswith("list") else None if t.endswith("?") else "" if t == "str" else
                 False if t == "bool" else 0) for k, (t, _) in COLUMNS.items()}
        r.update(key=f"e0-s{i:06d}", frame_hash=h, image=png)
        return r

    rows = [row(0, "h1", a), row(1, "h1", bytes(bytearray(a))), row(2, "h1", b), row(3, "h1", a),
            row(4, "", c), row(5, "", bytes(bytearray(c)))] + [row(6 + i, "h2", a) for i in range(20)]
    paths = []
    for name in ("x.parquet", "y.parquet"):
        sh = ParquetShard(tmp_path / name)
        for r in rows:
            sh.add(dict(r))
        entry = sh.close()
        paths.append(tmp_path / name)
        # the manifest entry names the file as written (pyarrow writes it; its digest read back)
        assert entry == {"file": name, "rows": len(rows), "bytes": paths[-1].stat().st_size,
                         "sha256": hashlib.sha256(paths[-1].read_bytes()).hexdigest()}
        assert not (tmp_path / f"{name}.part").exists()
    back = list(read_rows(paths[0]))
    assert [r["image"] for r in back] == [r["image"] for r in rows]
    assert [r["key"] for r in back] == [r["key"] for r in rows]
    size = paths[0].stat().st_size
    assert 3 * 40_000 < size < 3 * 40_000 + 20_000       # a, b and c, once each
    assert paths[0].read_bytes() == paths[1].read_bytes()
    import pyarrow.parquet as pq
    md = pq.ParquetFile(paths[0]).metadata.row_group(0)
    assert "RLE_DICTIONARY" in md.column(list(COLUMNS).index("image")).encodings


def test_row_group_columns_built_from_buffers_equal_pyarrows_and_write_the_same_parquet(tmp_path):
    """agents/datasets/columns.py builds a row group's Arrow arrays from the buffers (so pyarrow never
    probes for pandas): equal to Table.from_pydict's arrays, nulls, non-ASCII text and empty
    lists included, and the same Parquet bytes; a process writing a shard imports no pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from longpuzzle.agents.datasets.columns import record_batch
    from longpuzzle.agents.datasets.shards import arrow_schema
    schema = arrow_schema()
    rng = random.Random(5)
    text = ["", "a", "move 3>1", "ü→★", "x" * 300]

    def value(t):
        nullable, t = t.endswith("?"), t.rstrip("?")
        if nullable and rng.random() < 0.3:
            return None
        return {"str": lambda: rng.choice(text), "binary": lambda: rng.randbytes(rng.randrange(0, 50)),
                "int32": lambda: rng.randrange(-2**31, 2**31), "float64": lambda: rng.uniform(-1, 1),
                "bool": lambda: rng.random() < 0.5,
                "list<str>": lambda: [rng.choice(text) for _ in range(rng.randrange(0, 4))],
                "list<int32>": lambda: [rng.randrange(0, 99) for _ in range(rng.randrange(0, 4))]}[t]()

    for n in (0, 1, 7, 300):
        cols = {k: [value(t) for _ in range(n)] for k, (t, _) in COLUMNS.items()}
        ours = record_batch(pa, schema, cols)
        ours.validate(full=True)
        theirs = pa.Table.from_pydict(cols, schema=schema)
        assert pa.Table.from_batches([ours], schema=schema).equals(theirs), n
        a, b = tmp_path / f"ours{n}.parquet", tmp_path / f"theirs{n}.parquet"
        for path, write in ((a, lambda w: w.write_batch(ours)), (b, lambda w: w.write_table(theirs))):
            with pq.ParquetWriter(path, schema, write_statistics=False) as w:
                write(w)
        assert a.read_bytes() == b.read_bytes(), n
    code = ("import sys, tempfile\nfrom longpuzzle.agents.datasets.shards import ParquetShard\n"
            "from longpuzzle.agents.datasets.schema import COLUMNS\n"
            "sh = ParquetShard(tempfile.mkdtemp() + '/s.parquet')\n"
            "row = {k: ([] if t.startswith('list') else None if t.endswith('?') else b'' if t == 'binary' "
            "else '' if t == 'str' else 0) for k, (t, _) in COLUMNS.items()}\n"
            "sh.add(row); sh.close(); print('pandas' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
