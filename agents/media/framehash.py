"""The identity of a frame: a hash over every pixel, cheap where a frame changed only in a box.

Identity (``FRAME_HASH`` = "xxh3-128-b32")
    ``frame_hash(frame)`` of an (H, W, C) uint8 frame: the frame cut into bands of
    BAND_ROWS = 32 rows (the last one shorter), each band's bytes (row-major) hashed with
    xxh3-128 (xxhash), and the frame hash = xxh3-128 of a 12-byte header (u32 height, width,
    channels, little-endian) followed by the bands' 16-byte digests in order, as 32 hex
    digits. Still over every pixel, so a replay catches any drawing difference, and about
    30x cheaper than SHA-1; and a frame that differs from the one before only inside a box
    (the renderer says which: ``Renderer.render_delta``) costs only the bands that meet the
    box's rows: ``FrameHasher`` keeps the last frame's band digests and hashes those bands
    alone, the result being exactly ``frame_hash(frame)`` (in a dataset job, Maze Paint easy:
    a quarter of the bands of the frames that come with a delta, and about one frame in five
    - a completion card, the next level's first frame, a menu - has none and is hashed in
    full: 41% of all bands, 2.4x cheaper than hashing every frame whole).
    ``FrameHasher.digests`` are the bands' digests of the frame it hashed last (the dataset
    PNG stream's bands are the same 32 rows).
    Folders name the hash they were recorded with (the events header's ``frame_hash``):
    "xxh3-128-b32"; "xxh3-128", xxh3-128 of the whole frame's bytes at once (folders, frame
    files of versions 1 and 2, and datasets written before the bands); none, SHA-1 (40 hex
    digits; folders written before the header named it). ``hasher(name)`` gives each.

Below the harness (whose frame file stores these digests) and the Gymnasium envs (whose
feedback compares them): agents/harness/frames.py re-exports every name.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable

import numpy as np
import xxhash

FRAME_HASH = "xxh3-128-b32"   # the frame hash of everything written now (module doc)
WHOLE_FRAME_HASH = "xxh3-128"  # the one before it: xxh3-128 of the whole frame's bytes
BAND_ROWS = 32                 # rows of a band of FRAME_HASH (the last band of a frame: fewer)
_SHAPE = struct.Struct("<III")


def _frame_array(frame: np.ndarray) -> np.ndarray:
    f = np.ascontiguousarray(frame)
    if f.ndim != 3 or f.dtype != np.uint8:
        raise ValueError(f"a frame is an (H, W, C) uint8 array, not {f.dtype} {f.shape}")
    return f


def _bands(f: np.ndarray) -> list[bytes]:
    """The band digests of a checked frame (_frame_array)."""
    digest = xxhash.xxh3_128_digest
    return [digest(f[r:r + BAND_ROWS]) for r in range(0, f.shape[0], BAND_ROWS)]


def bands_of_rows(spans, band_rows: int, n_bands: int) -> list[int]:
    """The bands of ``band_rows`` rows (of ``n_bands``) that meet the rows of ``spans``,
    disjoint (y0, y1) row spans top to bottom (a delta's, Renderer.render_delta), in order,
    each once."""
    out: list[int] = []
    for y0, y1 in spans:
        i0, i1 = max(0, int(y0)) // band_rows, min(n_bands, -(-int(y1) // band_rows))
        if out and i0 <= out[-1]:
            i0 = out[-1] + 1                  # (a band two spans meet)
        out.extend(range(i0, i1))
    return out


def band_digests(frame: np.ndarray) -> list[bytes]:
    """The xxh3-128 digests (16 bytes each) of a frame's bands of BAND_ROWS rows, top first."""
    return _bands(_frame_array(frame))


def _combine(shape: tuple, digests: list[bytes]) -> str:
    return xxhash.xxh3_128_hexdigest(_SHAPE.pack(*shape) + b"".join(digests))


def frame_hash(frame: np.ndarray) -> str:
    """The identity of a frame's pixels (every byte): FRAME_HASH, 32 hex digits (module doc)."""
    f = _frame_array(frame)
    return _combine(f.shape, _bands(f))


def whole_frame_hash(frame: np.ndarray) -> str:
    """"xxh3-128": xxh3-128 of the frame's bytes at once, 32 hex digits (folders and datasets
    recorded before FRAME_HASH)."""
    return xxhash.xxh3_128_hexdigest(np.ascontiguousarray(frame))


def _sha1(frame: np.ndarray) -> str:
    return hashlib.sha1(memoryview(np.ascontiguousarray(frame)).cast("B")).hexdigest()


LEGACY_FRAME_HASH = "sha1"           # the frame hash of folders whose header names none
HASHERS: dict[str, Callable[[np.ndarray], str]] = {
    FRAME_HASH: frame_hash, WHOLE_FRAME_HASH: whole_frame_hash, LEGACY_FRAME_HASH: _sha1}


def header_frame_hash(header: dict) -> str:
    """The name of the frame hash an episode's header says its frames were hashed with
    (LEGACY_FRAME_HASH when it names none: folders from before the header named it)."""
    return header.get("frame_hash") or LEGACY_FRAME_HASH


class FrameHasher:
    """frame_hash of a stream of frames, each computed from the bands that changed.

    ``hash(frame, delta)``: with ``delta`` = (the frame before, the px box (x0, y0, x1, y1)
    outside which the two have the same pixels[, the rows of the box where they may differ:
    disjoint (y0, y1) spans top to bottom]), as ``Renderer.render_delta`` gives it,
    where the frame before is the very array hashed last (``is``) and neither it nor
    ``frame`` is writeable (frames handed out are read-only and never written again while
    anyone holds them: this object holds the last one), only the bands that meet the
    box's rows (the spans', when given) are hashed; the others' digests are the last
    frame's. Anything else - no delta, a delta relative to another array, a writeable array,
    another shape - is hashed in full. Either way the result is exactly ``frame_hash(frame)``; a wrong delta (pixels
    changed outside its box) gives a wrong hash, which a replay, hashing every frame in
    full, reports. ``digests``: the band digests of the frame hashed last; ``bands`` /
    ``hashed``: bands seen / hashed so far."""

    band_rows = BAND_ROWS

    def __init__(self):
        self._frame: np.ndarray | None = None     # the frame hashed last (held: never drawn over)
        self.digests: list[bytes] = []            # its bands' digests
        self.shape: tuple | None = None
        self.bands = self.hashed = 0

    def hash(self, frame: np.ndarray, delta: tuple | None = None) -> str:
        prev = self._frame
        digest = xxhash.xxh3_128_digest
        if delta is not None and prev is not None and delta[0] is prev and frame.shape == self.shape \
                and frame.dtype == np.uint8 and not frame.flags.writeable and not prev.flags.writeable \
                and frame.flags.c_contiguous:
            h = frame.shape[0]
            x0, y0, x1, y1 = delta[1]
            old = self.digests
            if x1 <= x0 or y1 <= y0 or y1 <= 0 or y0 >= h:
                ds = old                                  # the same pixels
            elif len(delta) > 2 and len(delta[2]) > 1:    # rows apart: the bands that meet them
                ds = list(old)
                bands = bands_of_rows(delta[2], BAND_ROWS, len(old))
                for i in bands:
                    ds[i] = digest(frame[i * BAND_ROWS:(i + 1) * BAND_ROWS])
                self.hashed += len(bands)
            else:
                i0, i1 = max(0, int(y0)) // BAND_ROWS, -(-min(h, int(y1)) // BAND_ROWS)
                ds = old[:i0]
                ds.extend(digest(frame[r:r + BAND_ROWS]) for r in range(i0 * BAND_ROWS, i1 * BAND_ROWS, BAND_ROWS))
                ds.extend(old[i1:])
                self.hashed += i1 - i0
        else:
            f = _frame_array(frame)
            ds = _bands(f)
            self.hashed += len(ds)
            self.shape = f.shape
        self.bands += len(ds)
        self.digests = ds
        # a writeable array may change after this: its digests are never trusted again
        self._frame = None if frame.flags.writeable else frame
        return _combine(self.shape, ds)

    def digests_for(self, frame: np.ndarray) -> list[bytes] | None:
        """The band digests of ``frame`` if it is the (read-only) array hashed last, else None."""
        return self.digests if frame is self._frame and frame is not None else None

    def forget(self) -> None:
        """Let go of the frame hashed last (its next frame is hashed in full)."""
        self._frame = None


