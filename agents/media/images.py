"""Frames to images for a model, and the model's coordinates back to frame pixels.

A frame goes to the model as a lossless PNG (``encode_png``). A ``View`` is the image the
model sees: the frame itself, or the frame resized by a rule (the longest side to N pixels,
or a model family's own rule such as Qwen-VL / UI-TARS ``smart_resize``). The same ``View``
converts coordinates both ways, with the pixel-centre convention a resampler uses: image
pixel i covers frame pixels [i * W / w, (i + 1) * W / w), and maps back to the frame pixel
under its centre (Pillow's sampling geometry; a centre exactly on a border goes to the
lower pixel). So every image pixel survives the round trip image -> frame -> image
exactly, and a frame pixel goes to the image pixel that was resampled from around it.

Grids: some protocols give coordinates on a fixed 0..S grid (S = 1000) whatever the image
size; grid value g is the continuous position g / S of the side, i.e. frame pixel
floor(g * W / S) (S itself is the last pixel).
"""

from __future__ import annotations

import math
import struct
import threading
import zlib
from dataclasses import dataclass, field
import io

import numpy as np
import xxhash

from longpuzzle.agents.media.png import adler32_combine
from longpuzzle.engine.lru import LRU

try:  # ISA-L's deflate: about 10x faster than zlib at level 1 on screenshots, same format
    from isal import isal_zlib as _deflate
    _LEVEL = 1
except ImportError:  # pragma: no cover - an optional accelerator
    _deflate = zlib
    _LEVEL = 1

_PNG_SIG = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


_SCRATCH = threading.local()     # each thread's buffer for the scanlines (reused: no new pages per image)


def _scanlines(h: int, n: int) -> np.ndarray:
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.size < h * n:
        buf = _SCRATCH.buf = np.empty(h * n, np.uint8)
    return buf[:h * n].reshape(h, n)


def encode_png(frame: np.ndarray) -> bytes:
    """A lossless PNG (8-bit RGB, no filter, deflate) of an (H, W, 3) uint8 frame."""
    f = np.asarray(frame)
    if f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3:
        raise ValueError(f"a frame is an (H, W, 3) uint8 array, not {f.dtype} {f.shape}")
    h, w = f.shape[:2]
    raw = _scanlines(h, w * 3 + 1)
    raw[:, 0] = 0                                   # filter type "None" on every scanline
    raw[:, 1:] = f.reshape(h, w * 3)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"".join((_PNG_SIG, _chunk(b"IHDR", ihdr), _chunk(b"IDAT", _deflate.compress(raw.data, _LEVEL)),
                     _chunk(b"IEND", b"")))


def decode_png(data: bytes) -> np.ndarray:
    """The (H, W, 3) uint8 pixels of a PNG (for tests and tools)."""
    from PIL import Image           # lazy: Pillow, for tests and tools only
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56,
                 max_pixels: int = 14 * 14 * 4 * 1280) -> tuple[int, int]:
    """Qwen2-VL / UI-TARS image size rule: both sides multiples of ``factor``, the area
    within [min_pixels, max_pixels], the aspect ratio kept as closely as possible.
    Returns (height, width)."""
    if min(height, width) <= 0:
        raise ValueError("image sides must be positive")
    if max(height, width) / min(height, width) > 200:
        raise ValueError("aspect ratio above 200 is not supported by smart_resize")
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


# UI-TARS-1.5 defaults (its processor: 100 .. 16384 patches of 28 x 28)
UITARS_MIN_PIXELS = 100 * 28 * 28
UITARS_MAX_PIXELS = 16384 * 28 * 28


PNG_MEMO = 8                    # PNGs a View keeps, by the frame's pixels (frames come back often)
BAND_ROWS = 32                  # rows of a band that _Bands compresses on its own


class _Bands:
    """The PNG of one image that changes in place (a resampler's output), its zlib stream
    made of bands of BAND_ROWS scanlines compressed independently (raw deflate ended by a
    full flush, as agents/media/png.py writes them): ``encode(image, changed)`` compresses
    again only the bands that hold a changed row and joins the rest as they were. A
    standard PNG (one zlib stream, its Adler-32 the bands' combined)."""

    def __init__(self):
        self.shape = None
        self.bands: list = []           # per band: (deflated bytes, adler32, raw length)
        self.raw = None
        self.compressor = None

    def encode(self, image: np.ndarray, changed: np.ndarray) -> bytes:
        h, w = image.shape[:2]
        line = w * 3 + 1
        if self.shape != image.shape:
            self.shape = image.shape
            self.bands = [None] * -(-h // BAND_ROWS)
            self.raw = np.zeros((BAND_ROWS, line), np.uint8)    # column 0: filter None
            self.compressor = _deflate.compressobj(_LEVEL, _deflate.DEFLATED, -15)
        c, raw, bands = self.compressor, self.raw, self.bands
        redo = np.zeros(len(bands) * BAND_ROWS, bool)
        redo[:h] = changed
        redo = redo.reshape(len(bands), BAND_ROWS).any(axis=1).tolist()
        parts = [b"\x78\x01"]                # zlib header: deflate, 32 KiB window, fastest
        adler = 1
        for b in range(len(bands)):
            band = bands[b]
            if band is None or redo[b]:
                r0 = b * BAND_ROWS
                r1 = min(h, r0 + BAND_ROWS)
                n = r1 - r0
                raw[:n, 1:] = image[r0:r1].reshape(n, w * 3)
                data = raw[:n].data
                # the full flush ends the band byte-aligned with the compressor's history
                # reset: nothing after it refers back into it
                band = bands[b] = (c.compress(data) + c.flush(_deflate.Z_FULL_FLUSH), _deflate.adler32(data),
                                        n * line)
            parts.append(band[0])
            adler = adler32_combine(adler, band[1], band[2])
        parts.append(b"\x03\x00")             # an empty final block
        parts.append(struct.pack(">I", adler))
        ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
        return b"".join((_PNG_SIG, _chunk(b"IHDR", ihdr), _chunk(b"IDAT", b"".join(parts)), _chunk(b"IEND", b"")))


class _Memo:
    """A View's working state: its resampler and its latest PNGs by frame digest."""

    def __init__(self):
        self.lock = threading.Lock()
        self.resampler = None
        self.pngs = LRU(PNG_MEMO)
        self.bands = _Bands()           # the resampler's output as a PNG, redone where it changed

    def __reduce__(self):                   # a copy (or another process) starts with a fresh one
        return _Memo, ()


@dataclass(frozen=True)
class View:
    """The image a model sees of a (W, H) frame: size (w, h); identity when equal.

    Resizing is Pillow's BICUBIC filter (UI-TARS / Qwen2.5-VL's own preprocessing), bit for
    bit, through resample.Resampler: redone only where the frame changed since the last
    one, and its PNG compressed again only in the bands of rows the resize redid
    (_Bands). ``png`` of a resized view keeps the last PNG_MEMO images by the frame's
    pixels (xxh3-128), so a frame seen again is not resized or encoded again."""
    frame_size: tuple[int, int]
    size: tuple[int, int]
    _memo: _Memo = field(default_factory=_Memo, compare=False, repr=False)

    @property
    def identity(self) -> bool:
        return self.size == self.frame_size

    def image(self, frame: np.ndarray) -> np.ndarray:
        """The frame as the model sees it (resampled with Pillow's bicubic filter when
        resized; a new array)."""
        if self.identity:
            return frame
        with self._memo.lock:
            return self._resized(frame).copy()

    def _resized(self, frame: np.ndarray) -> np.ndarray:
        f = np.asarray(frame)
        if f.shape[:2] != (self.frame_size[1], self.frame_size[0]):    # not this View's frames: Pillow itself
            from longpuzzle.agents.media.resample import pillow_bicubic   # lazy: Pillow and numba kernels
            return pillow_bicubic(f, self.size)
        m = self._memo
        if m.resampler is None:
            from longpuzzle.agents.media.resample import Resampler       # lazy: numba kernels, for resized views
            m.resampler = Resampler(self.frame_size, self.size)
        return m.resampler.resize(f)

    def png(self, frame: np.ndarray) -> bytes:
        """The PNG the model is sent of ``frame``."""
        if self.identity:                   # encoding costs about what the memo would save
            return encode_png(frame)
        f = np.ascontiguousarray(frame)
        key = (f.shape, xxhash.xxh3_128_digest(f))
        m = self._memo
        with m.lock:
            hit = m.pngs.get(key)
            if hit is not None:
                return hit
            img = self._resized(f)
            if f.shape[:2] == (self.frame_size[1], self.frame_size[0]):    # the resampler's output
                png = m.bands.encode(img, m.resampler.take_changed())
            else:
                png = encode_png(img)
            return m.pngs.put(key, png)

    # -- coordinates
    def to_frame(self, x: float, y: float) -> tuple[int, int]:
        """Image pixel (x, y) -> the frame pixel under its centre (integers, in the frame
        when the point is in the image). A centre exactly on a border between two frame
        pixels goes to the lower one."""
        (W, H), (w, h) = self.frame_size, self.size
        return _centre(x, W, w), _centre(y, H, h)

    def to_image(self, x: float, y: float) -> tuple[int, int]:
        """Frame pixel (x, y) -> the image pixel resampled from around it."""
        (W, H), (w, h) = self.frame_size, self.size
        return _centre(x, w, W), _centre(y, h, H)

    def contains(self, x: float, y: float) -> bool:
        return 0 <= x < self.size[0] and 0 <= y < self.size[1]


def _centre(p: float, dst: int, src: int) -> int:
    """The pixel on a side of ``dst`` pixels under the centre of pixel ``p`` of a side of
    ``src`` pixels: the largest i with i < (p + 0.5) * dst / src (exact for integers)."""
    if isinstance(p, int) or float(p).is_integer():
        return ((2 * int(p) + 1) * dst - 1) // (2 * src)
    return int(math.ceil((p + 0.5) * dst / src)) - 1


def grid_to_frame(g: float, side: int, scale: float) -> int:
    """A 0..scale grid value -> a pixel index on a side of ``side`` pixels (scale -> last)."""
    return min(side - 1, int(math.floor(g * side / scale)))


def frame_to_grid(p: float, side: int, scale: float) -> int:
    """A pixel index -> the nearest grid value whose pixel is ``p`` (exact when the grid is
    finer than the pixels)."""
    return min(int(scale), int(round((p + 0.5) * scale / side)))


def make_view(frame_size: tuple[int, int], rule: str | None = None, *, factor: int = 28,
              min_pixels: int = UITARS_MIN_PIXELS, max_pixels: int = UITARS_MAX_PIXELS) -> View:
    """A View from a rule: None / "none" (the frame itself), "longest:N" (the longest side
    to N pixels, aspect kept), or "smart_resize" (factor, min_pixels, max_pixels)."""
    W, H = frame_size
    if rule in (None, "", "none"):
        return View(frame_size, frame_size)
    if rule == "smart_resize":
        h, w = smart_resize(H, W, factor, min_pixels, max_pixels)
        return View(frame_size, (w, h))
    if isinstance(rule, str) and rule.startswith("longest:"):
        try:
            n = int(rule.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 8:
            raise ValueError(f"bad resize rule {rule!r}: longest:N needs N >= 8")
        k = n / max(W, H)
        return View(frame_size, (max(1, round(W * k)), max(1, round(H * k))))
    raise ValueError(f"unknown resize rule {rule!r}: use none, longest:N or smart_resize")
