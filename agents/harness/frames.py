"""Frames of an episode folder: their identity (a hash over every pixel), the lossless frame
file they are stored in, and the one reading API that every reader in the repository uses.

Identity: the frame hash (FRAME_HASH, FrameHasher, ...) is agents/media/framehash.py's, re-exported
here; ``hasher(name)`` gives the hash a folder names (an unknown name: FrameStoreError).

The frame file ``frames.lpf`` (append-only; little-endian)
    file header  (24 bytes)  b"LPFRAMES", u32 version (3; 2 and 1: the digests are the
                             whole-frame "xxh3-128"; 1 has no kind 2), u32 height,
                             u32 width, u32 channels (3)
    per frame    (44 bytes)  b"LPFR", u32 index, u32 ref, u8 kind, 3 zero bytes,
                             u32 payload length, the 16-byte frame hash of the pixels
                             (version 3: FRAME_HASH; 1 and 2: "xxh3-128"),
                             u64 xxh3-64 of the payload
                 then the payload:
                     kind 0  zstd frame of the raw pixels (H * W * 3 bytes); ref = index
                     kind 1  no payload: the frame is identical to frame ``ref`` (an earlier one)
                     kind 2  u32 x0, y0, x1, y1, then a zstd frame of the pixels of that box:
                             the frame is frame ``ref`` = index - 1 with the box replaced
                             (the renderer says where a frame differs from the one before it)
    A kind 0 record stands alone; a kind 2 record goes back at most KEY_EVERY records to
    one (random access is one seek and a few small decompressions; reading in order, one).
    The writer appends a record only after the whole previous one was handed to the OS, so
    after a kill at any point the file is a run of complete records and at most one cut-off
    record at the end, which readers ignore (``FrameStore.torn`` says so).

Legacy folders (one ``frames/NNNNNN.png`` per frame, SHA-1 hashes) are read by the same API.

    with open_frames(folder) as fs:
        len(fs); fs.read(i)  # (H, W, 3) uint8, read-only; fs.read(i, box=(x0, y0, x1, y1)) a crop
        fs.hash(i)           # the stored identity of frame i (no decoding); fs.frame_hash its name
        fs.step_frames(...)  # see step_frame_indices: which frames belong to which step
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from collections.abc import Callable, Iterator

import numpy as np
import xxhash
import zstandard

from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.media.framehash import (  # noqa: F401 - the frame hash, re-exported (module doc)
    BAND_ROWS, FRAME_HASH, HASHERS, LEGACY_FRAME_HASH, WHOLE_FRAME_HASH, FrameHasher, band_digests, bands_of_rows,
    frame_hash, header_frame_hash, whole_frame_hash,
)

FRAMES_FILE = "frames.lpf"
LEGACY_DIR = "frames"
MAGIC = b"LPFRAMES"
VERSION = 3
VERSIONS = (1, 2, 3)    # what FrameStore reads
FILE_HASHES = {1: WHOLE_FRAME_HASH, 2: WHOLE_FRAME_HASH, 3: FRAME_HASH}   # version -> its digests' hash
FILE_HEAD = struct.Struct("<8sIIII")
REC_HEAD = struct.Struct("<4sIIB3xI16sQ")
BOX = struct.Struct("<IIII")
REC_MAGIC = b"LPFR"
KIND_RAW, KIND_SAME, KIND_BOX = 0, 1, 2
KEY_EVERY = 32          # a kind 2 record at most this many records after a kind 0 one
BOX_SHARE = 0.5         # a box over more than this share of the frame: a kind 0 record
ZSTD_LEVEL = 1          # ~0.3 ms and ~14 kB for a 540 x 960 frame (PNG level 1: ~11 ms, ~27 kB)


class FrameStoreError(HarnessError):
    """A frame file or frames folder that cannot be read (corrupt, not a frame file)."""


def hasher(name: str | None) -> Callable[[np.ndarray], str]:
    """The frame hash a folder was recorded with, by the name it records (``None``: folders
    from before the header named it, which used SHA-1)."""
    try:
        return HASHERS[LEGACY_FRAME_HASH if name is None else name]
    except (KeyError, TypeError):           # (TypeError: a name that is not a string, e.g. a list)
        raise FrameStoreError(f"unknown frame hash {name!r} (this longpuzzle knows "
                              f"{', '.join(sorted(HASHERS))}: the folder may be from a newer version)") from None


# ---- writing ------------------------------------------------------------------------------

class FrameEncoder:
    """Turns frames into records of the frame file (stateless but for the previous frames'
    digests and chain depth). Thread-safe to use from ONE thread: the episode's writer thread.
    ``frame_hash``: the name of the hash the digests given are (FRAME_HASH: a version 3
    file; "xxh3-128": version 2, as written before FRAME_HASH)."""

    def __init__(self, frame_hash: str = FRAME_HASH):  # noqa: F811 - the hash's name, as headers call it
        versions = [v for v in (VERSION, 2) if FILE_HASHES[v] == frame_hash]
        if not versions:
            raise FrameStoreError(f"a frame file holds {FRAME_HASH} or {WHOLE_FRAME_HASH} digests, not {frame_hash!r}")
        self.version = versions[0]
        self._zstd = zstandard.ZstdCompressor(level=ZSTD_LEVEL)   # compress() releases the GIL
        self._last: tuple[bytes, int, int] | None = None            # (digest, index, depth) of the last record with pixels
        self._depth = 0                        # records back to a kind 0 one from the previous frame
        self._next = 0                         # the index the next record must have (for kind 2)
        self.shape: tuple[int, int, int] | None = None

    def file_header(self, frame: np.ndarray) -> bytes:
        h, w, c = frame.shape
        self.shape = (h, w, c)
        return FILE_HEAD.pack(MAGIC, self.version, h, w, c)

    def records(self, items) -> bytes:
        """The records of several frames, in order: (index, frame, digest hex) or (index,
        frame, digest hex, box): ``box`` (x0, y0, x1, y1), the frame is the previous one
        (index - 1) but inside the box, or None. The pixels to compress are compressed in
        one call (the GIL is released once for all of them, not once per frame)."""
        heads, raw = [], []
        h, w = (self.shape or (0, 0))[:2]
        for it in items:
            index, frame, digest_hex = it[0], it[1], it[2]
            box = it[3] if len(it) > 3 else None
            if frame.shape != self.shape or frame.dtype != np.uint8:
                raise FrameStoreError(f"frame {index} has shape {frame.shape} {frame.dtype}, "
                                      f"the file holds {self.shape} uint8")
            digest = bytes.fromhex(digest_hex)
            follows, self._next = index == self._next, index + 1
            last = self._last
            if last is not None and last[0] == digest:
                heads.append(REC_HEAD.pack(REC_MAGIC, index, last[1], KIND_SAME, 0, digest, 0))
                self._depth = last[2]
                continue
            if box is not None and follows and last is not None and self._depth < KEY_EVERY:
                x0, y0, x1, y1 = (int(v) for v in box)
                if 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h and (x1 - x0) * (y1 - y0) <= BOX_SHARE * w * h:
                    self._depth += 1
                    self._last = (digest, index, self._depth)
                    heads.append((index, digest, len(raw), KIND_BOX, BOX.pack(x0, y0, x1, y1)))
                    raw.append(np.ascontiguousarray(frame[y0:y1, x0:x1]))
                    continue
            self._depth = 0
            self._last = (digest, index, 0)
            heads.append((index, digest, len(raw), KIND_RAW, b""))
            raw.append(np.ascontiguousarray(frame))
        if not raw:
            return b"".join(heads)
        if len(raw) > 1 and hasattr(self._zstd, "multi_compress_to_buffer"):
            payloads = [bytes(b) for b in self._zstd.multi_compress_to_buffer(raw, threads=0)]
        else:
            payloads = [self._zstd.compress(f) for f in raw]
        out = []
        for hd in heads:
            if type(hd) is bytes:
                out.append(hd)
                continue
            index, digest, k, kind, pre = hd
            payload = pre + payloads[k] if pre else payloads[k]
            out.append(REC_HEAD.pack(REC_MAGIC, index, index - 1 if kind == KIND_BOX else index, kind,
                                     len(payload), digest, xxhash.xxh3_64_intdigest(payload)))
            out.append(payload)
        return b"".join(out)

    def record(self, index: int, frame: np.ndarray, digest_hex: str, box=None) -> bytes:
        """One frame's record (records() of one item)."""
        return self.records([(index, frame, digest_hex, box)])


# ---- reading ------------------------------------------------------------------------------

class FrameStore:
    """Random access to the stored frames of one episode folder (either format). ``shape``:
    the (height, width, 3) the episode's screen has (its settings make it); a frame file
    whose header names another size is refused before any frame is decoded (a forged
    header must not make a reader allocate what no genuine episode needs)."""

    def __init__(self, folder: str | Path, shape: tuple[int, int, int] | None = None):
        self.folder = Path(folder)
        self.expect_shape = tuple(shape) if shape is not None else None
        self.torn = False                       # the frame file ends in a cut-off record
        self._file = None
        self._png: list[Path] | None = None
        self._cache: tuple[int, np.ndarray] | None = None
        path = self.folder / FRAMES_FILE
        if path.is_file():
            self._open_file(path)
        elif (self.folder / LEGACY_DIR).is_dir():
            self._png = sorted((self.folder / LEGACY_DIR).glob("*.png"))
            for i, p in enumerate(self._png):
                if p.name != f"{i:06d}.png":
                    raise FrameStoreError(f"{self.folder / LEGACY_DIR}: frame {i} is missing ({p.name} found)")
            self.format = "png"
            self.frame_hash = LEGACY_FRAME_HASH
            self.shape = None
        else:
            raise FrameStoreError(f"{self.folder} holds no stored frames ({FRAMES_FILE} or {LEGACY_DIR}/)")

    def _open_file(self, path: Path) -> None:
        self.format = "lpf"
        self.version = VERSION
        self.frame_hash = FRAME_HASH        # the hash the records' digests are (by the version)
        f = self._file = open(path, "rb")  # noqa: SIM115 - the store owns the file (close())
        head = f.read(FILE_HEAD.size)
        if len(head) < FILE_HEAD.size:          # killed before the first frame was written
            if head[:8] != MAGIC[:len(head)]:
                raise FrameStoreError(f"{path} is not a frame file")
            self.shape, self._index = None, []
            self.torn = len(head) > 0
            return
        magic, version, h, w, c = FILE_HEAD.unpack(head)
        if magic == MAGIC and version not in VERSIONS:
            raise FrameStoreError(f"{path} is a frame file of version {version}, which this longpuzzle does not "
                                  f"read (versions {', '.join(map(str, VERSIONS))}): written by a newer version")
        if magic != MAGIC or c != 3 or not (0 < h <= 1 << 15 and 0 < w <= 1 << 15):
            raise FrameStoreError(f"{path} is not a frame file of version {VERSION}")
        if self.expect_shape is not None and (h, w, c) != self.expect_shape:
            raise FrameStoreError(f"{path}: its header says the frames are {w} x {h}, but the episode's screen is "
                                  f"{self.expect_shape[1]} x {self.expect_shape[0]}")
        self.shape = (h, w, c)
        self.version = version
        self.frame_hash = FILE_HASHES[version]
        self._index: list[tuple[int, int, int, int, bytes, int]] = []   # (offset, ref, kind, length, digest, check)
        self._pos = FILE_HEAD.size
        self._zstd = zstandard.ZstdDecompressor()
        self._scan()

    def _scan(self) -> None:
        """Index the records from ``self._pos`` to the end of the file as it is now."""
        f, path, index = self._file, self.folder / FRAMES_FILE, self._index
        size = os.fstat(f.fileno()).st_size
        pos = self._pos
        self.torn = False
        while pos < size:
            if size - pos < REC_HEAD.size:
                self.torn = True
                break
            f.seek(pos)
            magic, i, ref, kind, n, digest, check = REC_HEAD.unpack(f.read(REC_HEAD.size))
            kinds = (KIND_RAW, KIND_SAME) if self.version == 1 else (KIND_RAW, KIND_SAME, KIND_BOX)
            if magic != REC_MAGIC or i != len(index) or kind not in kinds or \
                    (kind == KIND_SAME and (ref >= i or n)) or (kind == KIND_RAW and ref != i) or \
                    (kind == KIND_BOX and (ref + 1 != i or n < BOX.size)):
                raise FrameStoreError(f"{path}: record {len(index)} at byte {pos} is corrupt")
            if pos + REC_HEAD.size + n > size:
                self.torn = True
                break
            index.append((pos + REC_HEAD.size, ref, kind, n, digest, check))
            pos += REC_HEAD.size + n
        self._pos = pos

    def refresh(self) -> int:
        """Index the frames appended since the store was opened (an episode still being
        written: its writer must have handed them to the OS, Trajectory.flush); returns
        the number of frames now readable."""
        if self._file is None and self._png is None:
            raise FrameStoreError(f"{self.folder}: the frame store is closed")
        if self._png is not None:
            self._png = sorted((self.folder / LEGACY_DIR).glob("*.png"))
        elif self.shape is None:                 # no file header yet when it was opened
            self._file.close()
            self._open_file(self.folder / FRAMES_FILE)
        else:
            self._scan()
        return len(self)

    def __len__(self) -> int:
        return len(self._png) if self._png is not None else len(self._index)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _check(self, i: int) -> int:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"frame index must be an int, not {type(i).__name__}")
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.folder} has {n} stored frames; no frame {i}")
        return int(i)

    def hash(self, i: int) -> str:
        """The stored identity of frame i (legacy folders: SHA-1 of the decoded PNG)."""
        i = self._check(i)
        if self._png is not None:
            return HASHERS[LEGACY_FRAME_HASH](self.read(i))      # legacy PNG folders: SHA-1
        return self._index[i][4].hex()

    def read(self, i: int, box: tuple[int, int, int, int] | None = None) -> np.ndarray:
        """Frame i as a read-only (H, W, 3) uint8 array; ``box`` = (x0, y0, x1, y1) crops it."""
        i = self._check(i)
        if self._cache is not None and self._cache[0] == i:
            arr = self._cache[1]
        elif self._png is not None:
            from PIL import Image
            with Image.open(self._png[i]) as im:
                arr = np.asarray(im.convert("RGB"), dtype=np.uint8).copy()
        else:
            off, ref, kind, n, digest, check = self._index[i]
            if kind == KIND_SAME:
                return self.read(ref, box)
            if kind == KIND_RAW:
                arr = self._decode(i, self.shape)
            else:
                arr = self._rebuild(i)
        arr.setflags(write=False)
        self._cache = (i, arr)
        if box is not None:
            x0, y0, x1, y1 = box
            H, W = arr.shape[:2]
            if not (0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H):
                raise ValueError(f"crop box {box} is not inside the {W} x {H} frame")
            return arr[y0:y1, x0:x1]
        return arr

    def _payload(self, i: int) -> bytes:
        off, ref, kind, n, digest, check = self._index[i]
        self._file.seek(off)
        payload = self._file.read(n)
        if len(payload) != n or xxhash.xxh3_64_intdigest(payload) != check:
            raise FrameStoreError(f"{self.folder / FRAMES_FILE}: frame {i} is corrupt")
        return payload

    def _decode(self, i: int, shape, payload: bytes | None = None) -> np.ndarray:
        """The pixels of record i's zstd frame (kind 0: the frame; kind 2: its box)."""
        if payload is None:
            payload = self._payload(i)
        h, w, c = shape
        try:
            raw = self._zstd.decompress(payload, max_output_size=h * w * c)
        except zstandard.ZstdError as e:
            raise FrameStoreError(f"{self.folder / FRAMES_FILE}: frame {i} does not decompress: {e}") from None
        if len(raw) != h * w * c:
            raise FrameStoreError(f"{self.folder / FRAMES_FILE}: frame {i} has {len(raw)} bytes, not {h * w * c}")
        return np.frombuffer(raw, np.uint8).reshape(h, w, c)

    def _rebuild(self, i: int) -> np.ndarray:
        """Frame i of kind 2: the frames before it back to one at hand (a kind 0 record, or
        the frame read last), their boxes applied in order."""
        chain, j = [], i
        while True:
            if self._cache is not None and self._cache[0] == j:
                arr = self._cache[1].copy()
                break
            kind, ref = self._index[j][2], self._index[j][1]
            if kind == KIND_SAME:
                j = ref
                continue
            if kind == KIND_RAW:
                arr = self._decode(j, self.shape).copy()
                break
            chain.append(j)
            j = ref
            if len(chain) > 1 << 16:
                raise FrameStoreError(f"{self.folder / FRAMES_FILE}: frame {i} refers back too far")
        H, W = self.shape[:2]
        for j in reversed(chain):
            payload = self._payload(j)
            x0, y0, x1, y1 = BOX.unpack_from(payload)
            if not (0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H):
                raise FrameStoreError(f"{self.folder / FRAMES_FILE}: frame {j} is corrupt (box {x0, y0, x1, y1})")
            arr[y0:y1, x0:x1] = self._decode(j, (y1 - y0, x1 - x0, 3), payload[BOX.size:])
        return arr

    def verify(self, i: int) -> bool:
        """Whether frame i's decoded pixels have the stored identity (by the hash the file's
        version names: ``frame_hash``)."""
        if self._png is not None:
            return True
        return hasher(self.frame_hash)(self.read(i)) == self.hash(i)

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self.read(i)


def open_frames(folder: str | Path, shape: tuple[int, int, int] | None = None) -> FrameStore:
    """The stored frames of an episode folder (``frames.lpf``, or a legacy ``frames/`` of
    PNGs); ``shape``: the size the episode's screen has (FrameStore)."""
    return FrameStore(folder, shape)


def step_frame_indices(events: list[dict]) -> dict[int, list[int]]:
    """Frame indices of each recorded step, from an episode's events: step 0 is the first
    observation (frame 0); a step refused before dispatch has no frames."""
    out = {0: [0]}
    n = 1
    for rec in events:
        if rec.get("stream") == "public" and "frames" in rec:
            k = len(rec["frames"])
            out[rec["step"]] = list(range(n, n + k))
            n += k
    return out
