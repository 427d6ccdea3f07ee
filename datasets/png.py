"""Lossless PNGs of a stream of frames, each band of rows compressed once.

Consecutive frames of an episode differ in a few places (the piece that moved, a counter):
most of each frame is the same pixels as in a frame just written. ``PngStream.encode``
writes a standard, self-contained PNG (8-bit RGB, filter None, one zlib stream) whose zlib
stream is made of independently compressed bands of BAND_ROWS scanlines: each band is raw
deflate ended by a full flush (byte-aligned, and the compressor's history reset, so nothing
refers outside the band), so the bands concatenate into one valid deflate stream in any
order (closed by an empty final block), and
the zlib checksum is the Adler-32 of the bands combined. A band seen recently (the same
pixels, by their xxh3-128 digest, at the same place and width) is not compressed again.
Any PNG decoder reads the result; it decodes to exactly the frame (tests compare pixels).
The deflate is ISA-L's (as agents/models/images.encode_png, which encodes one frame alone),
or zlib's when ISA-L is missing.
"""

from __future__ import annotations

import struct
import zlib
from collections import OrderedDict

import numpy as np
import xxhash

try:
    from isal import isal_zlib as _z
except ImportError:  # pragma: no cover - an optional accelerator
    _z = zlib

BAND_ROWS = 64                       # 15 bands a 960-row frame: fewer and the bands change less often
CACHE_BANDS = 4096
_SIG = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x01"          # deflate, 32 KiB window, fastest
_FINAL_EMPTY_BLOCK = b"\x03\x00"     # BFINAL, fixed Huffman, end of block
_BASE = 65521


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def adler32_combine(a1: int, a2: int, len2: int) -> int:
    """The Adler-32 of A + B from adler32(A), adler32(B) and len(B) (zlib's algorithm)."""
    rem = len2 % _BASE
    s1 = a1 & 0xFFFF
    s2 = (rem * s1) % _BASE
    s1 = (s1 + (a2 & 0xFFFF) + _BASE - 1) % _BASE
    s2 = (s2 + ((a1 >> 16) & 0xFFFF) + ((a2 >> 16) & 0xFFFF) + _BASE - rem) % _BASE
    return s1 | (s2 << 16)


class PngStream:
    """Encodes frames one after another (see the module doc); one per writer thread."""

    def __init__(self, level: int = 1, band_rows: int = BAND_ROWS, cache_bands: int = CACHE_BANDS):
        self.level, self.band_rows, self.cache_bands = level, band_rows, cache_bands
        self._cache: OrderedDict = OrderedDict()     # (row, width, digest) -> (deflated, adler, length)
        self._raw: np.ndarray | None = None
        self._compressor = None
        self.bands = self.compressed = 0             # bands written / compressed (not found again)

    def encode(self, frame: np.ndarray) -> bytes:
        f = np.ascontiguousarray(frame)
        if f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3:
            raise ValueError(f"a frame is an (H, W, 3) uint8 array, not {f.dtype} {f.shape}")
        h, w = f.shape[:2]
        line = w * 3 + 1
        raw = self._raw
        if raw is None or raw.shape[1] != line or raw.shape[0] < self.band_rows:
            raw = self._raw = np.zeros((self.band_rows, line), np.uint8)     # column 0: filter None
        parts = [_ZLIB_HEADER]
        adler = 1
        cache = self._cache
        c = self._compressor                       # one for every band (creating one costs more)
        if c is None:
            c = self._compressor = _z.compressobj(self.level, _z.DEFLATED, -15)
        for r0 in range(0, h, self.band_rows):
            r1 = min(h, r0 + self.band_rows)
            key = (r0, w, xxhash.xxh3_128_intdigest(f[r0:r1]))
            hit = cache.get(key)
            if hit is None:
                n = r1 - r0
                raw[:n, 1:] = f[r0:r1].reshape(n, w * 3)
                band = raw[:n].data
                # a full flush ends the band byte-aligned and resets the compressor's history:
                # what follows never refers back into it, so any band can follow any other
                hit = (c.compress(band) + c.flush(_z.Z_FULL_FLUSH), _z.adler32(band), n * line)
                cache[key] = hit
                if len(cache) > self.cache_bands:
                    cache.popitem(last=False)
                self.compressed += 1
            else:
                cache.move_to_end(key)
            self.bands += 1
            parts.append(hit[0])
            adler = adler32_combine(adler, hit[1], hit[2])
        parts.append(_FINAL_EMPTY_BLOCK)
        parts.append(struct.pack(">I", adler))
        ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
        return b"".join((_SIG, _chunk(b"IHDR", ihdr), _chunk(b"IDAT", b"".join(parts)), _chunk(b"IEND", b"")))
