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
The bands' deflate (``Deflate``, agents/media/deflate.py: library, version, level) is ISA-L's
where it is installed, else zlib's; with ``reproducible=True`` it is zlib-ng's, whose bytes
repeat and, after a full flush, depend on the band's pixels alone (deflate.py says why).
"""

from __future__ import annotations

import struct
from collections import OrderedDict

import numpy as np
import xxhash

from longpuzzle.agents.media.deflate import DEFAULT_LEVEL, Deflate, checksums as _ck, fast_deflate, reproducible_deflate

_U32 = struct.Struct(">I").pack
_band_digest = xxhash.xxh3_128_digest           # a band's pixels' identity (its rows, C-contiguous), as the harness's FrameHasher has it

BAND_ROWS = 64                       # 15 bands a 960-row frame: fewer and the bands change less often
CACHE_BANDS = 4096
FRAME_BYTES = 64 << 20               # PNGs of whole frames kept by their key (encode's ``key``): 64 MiB
_SIG = b"\x89PNG\r\n\x1a\n"
_FINAL_EMPTY_BLOCK = b"\x03\x00"     # BFINAL, fixed Huffman, end of block
_BASE = 65521


def _chunk(kind: bytes, data: bytes) -> bytes:
    return _U32(len(data)) + kind + data + _U32(_ck.crc32(data, _ck.crc32(kind)))


def _head(w: int, h: int) -> bytes:
    """A PNG's signature and IHDR chunk (8-bit RGB, no interlace)."""
    return _SIG + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))


_IEND = _chunk(b"IEND", b"")


def adler32_combine(a1: int, a2: int, len2: int) -> int:
    """The Adler-32 of A + B from adler32(A), adler32(B) and len(B) (zlib's algorithm)."""
    rem = len2 % _BASE
    s1 = a1 & 0xFFFF
    s2 = (rem * s1) % _BASE
    s1 = (s1 + (a2 & 0xFFFF) + _BASE - 1) % _BASE
    s2 = (s2 + ((a1 >> 16) & 0xFFFF) + ((a2 >> 16) & 0xFFFF) + _BASE - rem) % _BASE
    return s1 | (s2 << 16)


class PngStream:
    """Encodes frames one after another (see the module doc); one per writer thread.

    ``encode(frame, delta)``: with ``delta`` = (the frame before, the px box outside which
    the two have the same pixels[, the rows of the box where they may differ]), as
    ``Renderer.render_delta`` gives it, and the frame before the one this stream encoded
    last, the bands outside the box (and inside it, outside its rows) are that frame's bands
    as they are: neither hashed nor looked up (the same bytes, and the same recent-band
    cache, as without the delta). Any other delta is ignored: every band is hashed.

    ``encode(frame, delta, digests=...)``: ``digests`` the xxh3-128 digests (16 bytes each,
    top first) of the frame's bands of ``band_rows`` rows, as the harness's FrameHasher has
    them for the frame it hashed last (``FrameHasher.digests_for``; its bands are 32 rows):
    the bands' cache keys are taken from them instead of hashing the bands again (ignored
    unless there is one per band). The same bytes either way.

    ``encode(frame, delta, key)``: with ``key`` an identity of the frame's pixels (the harness's
    frame hash), a frame encoded before under the same key is not looked at again: its PNG
    and its bands' record come back (the same bytes as encoding it again: a band's bytes
    depend on its pixels alone), and it becomes the frame encoded last, so that a delta
    relative to it is usable next. An episode comes back to frames it showed before (an
    action without effect, a detour undone) and the episodes of one objective show many of
    the same frames; the PNGs of about ``frame_bytes`` bytes of frames are kept."""

    def __init__(self, level: int = DEFAULT_LEVEL, band_rows: int = BAND_ROWS, cache_bands: int = CACHE_BANDS,
                 reproducible: bool = False, frame_bytes: int = FRAME_BYTES, deflate: Deflate | None = None):
        if deflate is None:
            deflate = reproducible_deflate(level) if reproducible else fast_deflate(level)
        self.deflate = deflate                       # the bands' deflate (module doc: reproducible bytes)
        self.level, self.band_rows, self.cache_bands = deflate.level, band_rows, cache_bands
        self.frame_bytes = frame_bytes
        self._frames: OrderedDict = OrderedDict()    # key -> a frame's record (self._last without its array)
        self._frames_size = 0                        # the bytes of the PNGs in it
        self._cache: OrderedDict = OrderedDict()     # (row, width, digest) -> (deflated, adler, length)
        self._raw: np.ndarray | None = None
        self._idat_start = b"IDAT" + deflate.header      # an IDAT chunk's type and zlib header
        self._idat_crc = _ck.crc32(self._idat_start)
        self._heads: dict = {}                       # (W, H) -> the PNG's signature and IHDR chunk
        self._compressor = None
        # the frame encoded last: (the array it was given, its shape, each band's cache key,
        # each band's entry, the Adler-32 of the bands up to each one, its PNG)
        self._last: tuple | None = None
        self.bands = self.compressed = 0             # bands written / compressed (not found again)
        self.hashed = 0                              # bands hashed (the rest known from a delta)

    def follows(self, delta) -> bool:
        """Whether ``delta`` is relative to the frame this stream encoded last."""
        return delta is not None and self._last is not None and _same_array(delta[0], self._last[0])

    def recall(self, key) -> bytes | None:
        """The PNG of the frame encoded under ``key`` if it is still kept (else None),
        leaving the stream as it is."""
        rec = self._frames.get(key)
        return rec[4] if rec is not None else None

    def encode(self, frame: np.ndarray, delta: tuple | None = None, key=None, digests=None) -> bytes:
        if key is not None:
            rec = self._frames.get(key)
            if rec is not None and rec[0] == frame.shape:
                self._frames.move_to_end(key)
                self.bands += len(rec[1])
                self._last = (_source(frame),) + rec
                return rec[4]
        png = self._encode(frame, delta, digests)
        if key is not None:
            self._keep(key, self._last[1:])
        return png

    def _keep(self, key, rec: tuple) -> None:
        frames = self._frames
        old = frames.pop(key, None)
        if old is not None:
            self._frames_size -= len(old[4])
        frames[key] = rec
        self._frames_size += len(rec[4])
        while self._frames_size > self.frame_bytes and len(frames) > 1:
            self._frames_size -= len(frames.popitem(last=False)[1][4])

    def _encode(self, frame: np.ndarray, delta: tuple | None, digests=None) -> bytes:
        f = np.ascontiguousarray(frame)
        if f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3:
            raise ValueError(f"a frame is an (H, W, 3) uint8 array, not {f.dtype} {f.shape}")
        h, w = f.shape[:2]
        last = self._last
        y0 = y1 = None                                     # rows outside [y0, y1): the last frame's
        if delta is not None and last is not None and last[1] == f.shape and _same_array(delta[0], last[0]) \
                and not _writeable(delta[0]):
            x0, y0, x1, y1 = delta[1]
            if x1 <= x0 or y1 <= y0:
                y0 = y1 = 0
        cache = self._cache
        br = self.band_rows
        if y0 is not None and y0 == y1:                    # the same pixels: the same PNG
            _touch(cache, last[2], last[3], self.cache_bands)
            self.bands += len(last[2])
            self._last = (_source(frame),) + last[1:]
            return last[5]
        line = w * 3 + 1
        raw = self._raw
        if raw is None or raw.shape != (br, line):
            raw = self._raw = np.zeros((br, line), np.uint8)     # column 0: filter None
        c = self._compressor                       # one for every band (creating one costs more)
        if c is None:
            c = self._compressor = self.deflate.compressor()
        full_flush = self.deflate.module.Z_FULL_FLUSH
        n_bands = -(-h // br)
        if digests is not None and len(digests) != n_bands:
            digests = None                                 # not this stream's bands: hashed here
        same = None                                        # bands inside the box but outside its rows
        if y0 is None:
            i0, i1 = 0, n_bands                            # every band hashed
        else:                                              # the bands that reach into the box
            i0, i1 = min(n_bands, y0 // br), min(n_bands, -(-y1 // br))
            if len(delta) > 2 and len(delta[2]) > 1:       # rows apart: the bands between them are the last frame's
                same = set(range(i0, i1))
                for s0, s1 in delta[2]:
                    same.difference_update(range(max(0, s0) // br, -(-s1 // br)))
        size = self.cache_bands
        if i0:                                             # above the box: the last frame's bands
            keys, hits = last[2][:i0], last[3][:i0]
            adlers = _prefix(last, i0)
            _touch(cache, keys, hits, size)
            adler = adlers[-1]
        else:
            keys, hits, adlers, adler = [], [], [], 1
        digest = _band_digest
        get, again = cache.get, cache.move_to_end
        checksum, combine = _ck.adler32, adler32_combine
        key_add, hit_add, adler_add = keys.append, hits.append, adlers.append
        pixels = raw[:, 1:]
        compressed = 0
        for r0 in range(i0 * br, min(h, i1 * br), br):
            if same and r0 // br in same:                  # as above and below the box
                i = r0 // br
                key, hit = last[2][i], last[3][i]
                _touch(cache, (key,), (hit,), size)
                adler = combine(adler, hit[1], hit[2])
                key_add(key)
                hit_add(hit)
                adler_add(adler)
                continue
            rows = f[r0:r0 + br]                           # (the last band may be shorter)
            # a band: its place, width and pixels (by the harness's digest of it when given)
            key = (r0, w, digest(rows) if digests is None else digests[r0 // br])
            hit = get(key)
            if hit is None:
                n = len(rows)
                if n == br:
                    pixels[...] = rows.reshape(n, -1)
                    band = raw.data
                else:
                    pixels[:n] = rows.reshape(n, -1)
                    band = raw[:n].data
                # a full flush ends the band byte-aligned and resets the compressor's history:
                # what follows never refers back into it, so any band can follow any other
                try:
                    data = c.compress(band) + c.flush(full_flush)
                except BaseException:
                    self._compressor = None        # (cut short: its next band would follow this one's start)
                    raise
                hit = cache[key] = (data, checksum(band), n * line)
                if len(cache) > size:
                    cache.popitem(last=False)
                compressed += 1
            else:
                again(key)
            adler = combine(adler, hit[1], hit[2])
            key_add(key)
            hit_add(hit)
            adler_add(adler)
        self.compressed += compressed
        if digests is None:
            self.hashed += i1 - i0
        if i1 < n_bands:                                   # below the box: the last frame's bands
            tail_keys, tail_hits = last[2][i1:], last[3][i1:]
            _touch(cache, tail_keys, tail_hits, size)
            # the Adler-32 of those bands together, from the last frame's checksums
            tail = adler32_split(_prefix(last, i1)[-1], last[4][-1], (h - i1 * br) * line)
            adler = adler32_combine(adler, tail, (h - i1 * br) * line)
            keys = keys + tail_keys
            hits = hits + tail_hits
            adlers.extend([None] * (n_bands - i1 - 1))     # (worked out when a later frame needs them)
            adlers.append(adler)
        self.bands += len(keys)
        # the PNG in one piece: the IDAT chunk's CRC worked out over its pieces (joining them
        # first to checksum them would make every PNG's bytes twice)
        head = self._heads.get((w, h))
        if head is None:
            head = self._heads[(w, h)] = _head(w, h)
        datas = [x[0] for x in hits]
        end = _FINAL_EMPTY_BLOCK + _U32(adler)
        crc32 = _ck.crc32
        crc = self._idat_crc
        n = len(self._idat_start) - 4 + len(end)
        for d in datas:
            crc = crc32(d, crc)
            n += len(d)
        png = b"".join([head, _U32(n), self._idat_start, *datas, end, _U32(crc32(end, crc)), _IEND])
        self._last = (_source(frame), f.shape, keys, hits, adlers, png)
        return png


def adler32_split(a1: int, a12: int, len2: int) -> int:
    """The Adler-32 of B from adler32(A), adler32(A + B) and len(B): adler32_combine undone."""
    rem = len2 % _BASE
    s1a, s2a = a1 & 0xFFFF, (a1 >> 16) & 0xFFFF
    s1 = ((a12 & 0xFFFF) - s1a + 1) % _BASE
    s2 = (((a12 >> 16) & 0xFFFF) - s2a - rem * s1a + rem) % _BASE
    return s1 | (s2 << 16)


def _prefix(last: tuple, n: int) -> list:
    """The Adler-32 of the last frame's first 1, 2, ... n bands (its record's checksums,
    those not known yet worked out from the ones before, and kept)."""
    adlers = last[4]
    k = n
    while adlers[k - 1] is None:
        k -= 1
    a = adlers[k - 1] if k else 1
    for i in range(k, n):
        hit = last[3][i]
        a = adlers[i] = adler32_combine(a, hit[1], hit[2])
    return adlers[:n]


def _touch(cache: OrderedDict, keys: list, hits: list, size: int) -> None:
    """What looking ``keys`` up again does to the recent-band cache (``hits``: their
    entries, put back if dropped since, as compressing them again would)."""
    again = cache.move_to_end
    for key in keys:
        try:
            again(key)
        except KeyError:
            break
    else:
        return
    for key, hit in zip(keys, hits):                # (one was dropped: in order, from the start)
        if key in cache:
            cache.move_to_end(key)
        else:
            cache[key] = hit
            if len(cache) > size:
                cache.popitem(last=False)


def _source(a: np.ndarray) -> np.ndarray:
    """The array whose memory ``a`` shows whole (a view of a whole frame, as the harness
    hands frames to agents, stands for the frame), else ``a``."""
    b = a.base
    if isinstance(b, np.ndarray) and b.shape == a.shape and b.strides == a.strides \
            and b.__array_interface__["data"][0] == a.__array_interface__["data"][0]:
        return b
    return a


def _same_array(a, b) -> bool:
    return a is b or (isinstance(a, np.ndarray) and _source(a) is b)


def _writeable(a) -> bool:
    """A writeable array may have changed since it was encoded: its delta is not trusted."""
    return not isinstance(a, np.ndarray) or bool(_source(a).flags.writeable)
