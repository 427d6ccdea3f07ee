"""Pillow's bicubic resize, bit for bit, updated frame by frame where the frame changed.

Why: UI-TARS-1.5 sees screenshots resized by its own image processor (Qwen2.5-VL's), which
resizes with Pillow's BICUBIC filter to the ``smart_resize`` size; the model must see those
exact pixels. Pillow resamples the whole image every time (5-13 ms at 540 x 960), while two
consecutive frames of a puzzle differ in a few small regions.

How Pillow resamples 8-bit images (libImaging/Resample.c), which this module reproduces:
two separable passes, horizontal first (every source row to the output width: the
intermediate image), then vertical (the intermediate's columns to the output height). Each
output sample is ``clamp((2**21 + sum_t k_t * p_t) >> 22, 0, 255)`` over the source samples
p_t inside the output pixel's filter window, with integer coefficients k_t (the normalised
bicubic weights times 2**22, rounded half away from zero) that depend only on the two sizes.

Here:
- the coefficients are read out of Pillow itself, not recomputed: Pillow's 32-bit integer
  path resamples with the same double-precision weights and rounds ``value * weight`` half
  away from zero, so an impulse of 2**22 comes out as exactly the 8-bit path's integer
  coefficient (``_taps``: impulses spaced wider than a window, so each output sample sees at
  most one of them);
- the two passes are the same integer sums (numba kernels), so the result is Pillow's to the
  bit; ``Resampler`` checks that once per pair of sizes on a noise image and uses Pillow
  itself if it ever differs (a Pillow whose arithmetic changed);
- incrementally: each frame is compared with the previous one row by row; the horizontal
  pass redoes only the changed rows and, in them, only the output columns whose window
  covers a changed pixel; the vertical pass redoes only the output rows whose window covers
  a changed intermediate row, over the union of those rows' changed columns. Every sample
  is a pure function of the samples in its window, so the result equals a whole resize.
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np
from numba import njit

PRECISION = 22                  # Pillow's PRECISION_BITS for 8-bit images (32 - 8 - 2)
_HALF = 1 << (PRECISION - 1)


@functools.lru_cache(maxsize=32)
def _taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pillow's integer bicubic coefficients for one side, ``n_in`` -> ``n_out`` samples:
    ``(start, count, taps)``; output sample o is the sum of taps[o, t] * p[start[o] + t] for
    t < count[o] (zero coefficients at a window's ends left out)."""
    from PIL import Image

    scale = n_in / n_out
    support = 2.0 * max(1.0, scale)                 # bicubic support, widened when shrinking
    spacing = 2 * math.ceil(support) + 6            # > any candidate window below
    probe = np.zeros((spacing, n_in), np.int32)
    for r in range(spacing):
        probe[r, r::spacing] = 1 << PRECISION       # row r: impulses at columns = r (mod spacing)
    im = Image.fromarray(probe)
    if im.mode != "I":
        raise RuntimeError(f"a 32-bit probe image came out as mode {im.mode}")
    resp = np.asarray(im.resize((n_out, spacing), Image.BICUBIC)).astype(np.int64)   # (spacing, n_out)
    starts, counts, rows = [], [], []
    for o in range(n_out):
        centre = (o + 0.5) * scale
        lo = max(0, math.floor(centre - support) - 1)          # contains Pillow's window
        hi = min(n_in, math.ceil(centre + support) + 2)
        k = [int(resp[c % spacing, o]) for c in range(lo, hi)]
        a, b = 0, len(k)
        while a < b and k[a] == 0:
            a += 1
        while b > a and k[b - 1] == 0:
            b -= 1
        starts.append(lo + a)
        counts.append(b - a)
        rows.append(k[a:b])
    width = max(counts)
    taps = np.zeros((n_out, max(1, width)), np.int32)
    for o, k in enumerate(rows):
        taps[o, :len(k)] = k
    out = np.array(starts, np.int32), np.array(counts, np.int32), taps
    for a in out:
        a.flags.writeable = False                   # shared by every resampler of these sizes
    return out


def _reach(start: np.ndarray, count: np.ndarray, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """For each input sample c: the first and the last output sample whose window holds it
    (windows are ordered, so the outputs a range of inputs reaches is one range); first >
    last for an input no window uses."""
    end = start + count                             # window o is [start[o], end[o])
    c = np.arange(n_in)
    first = np.searchsorted(end, c, side="right")   # the first o with end[o] > c
    last = np.searchsorted(start, c, side="right") - 1   # the last o with start[o] <= c
    return first.astype(np.int32), last.astype(np.int32)


@njit(cache=True, nogil=True)
def _changed_rows(prev, cur, lo, hi, full):
    """Compare (H, W*3) frames row by row: lo[y] / hi[y] the first / last changed pixel of
    row y (-1: unchanged), copying changed rows into prev; ``full``: every row counts as
    changed. Returns the number of changed rows."""
    h, n = cur.shape
    changed = 0
    for y in range(h):
        if not full:
            acc = 0
            for i in range(n):
                acc |= prev[y, i] ^ cur[y, i]
            if acc == 0:
                lo[y] = -1
                hi[y] = -1
                continue
            a = 0
            while prev[y, a] == cur[y, a]:
                a += 1
            b = n - 1
            while prev[y, b] == cur[y, b]:
                b -= 1
            lo[y] = a // 3
            hi[y] = b // 3
        else:
            lo[y] = 0
            hi[y] = n // 3 - 1
        for i in range(n):
            prev[y, i] = cur[y, i]
        changed += 1
    return changed


@njit(cache=True, nogil=True)
def _along_rows(src, dst, lo, hi, first, last, start, count, taps, ksum, run, dlo, dhi):
    """Resample rows (src (R, W, 3) -> dst (R, w, 3)) where they changed: row y's changed
    input pixels lo[y] .. hi[y] (-1: unchanged); dlo / dhi get the output pixels redone.
    Shortcuts that give the same integers: a row equal to the row above (over the pixels
    read) copies the row above's outputs (dst[y - 1] is always up to date when row y is
    done); a window of one colour p gives (2**21 + p * ksum[o]) >> 22 (ksum: the sum of
    window o's coefficients). run is an int32 scratch array of W."""
    for y in range(src.shape[0]):
        o0 = first[lo[y]] if lo[y] >= 0 else 1
        o1 = last[hi[y]] if lo[y] >= 0 else 0
        if o0 > o1:
            dlo[y] = -1
            dhi[y] = -1
            continue
        dlo[y] = o0
        dhi[y] = o1
        x0 = start[o0]
        x1 = start[o1] + count[o1]                  # the input pixels these outputs read
        row = src[y].ravel()
        out = dst[y].ravel()
        if y > 0:                                   # (slices looped from 0: vectorised)
            a = row[3 * x0:3 * x1]
            b = src[y - 1].ravel()[3 * x0:3 * x1]
            diff = np.uint8(0)
            for i in range(a.size):
                diff |= a[i] ^ b[i]
            if diff == 0:
                p = dst[y - 1].ravel()[3 * o0:3 * o1 + 3]
                q = out[3 * o0:3 * o1 + 3]
                for i in range(p.size):
                    q[i] = p[i]
                continue
        run[x1 - 1] = x1 - 1                        # run[x]: the last pixel of x's run of one colour
        for x in range(x1 - 2, x0 - 1, -1):
            j = 3 * x
            if row[j] == row[j + 3] and row[j + 1] == row[j + 4] and row[j + 2] == row[j + 5]:
                run[x] = run[x + 1]
            else:
                run[x] = x
        for o in range(o0, o1 + 1):
            s = start[o]
            c = count[o]
            j = 3 * s
            if run[s] >= s + c - 1:                 # one colour under the whole window
                k = ksum[o]
                out[3 * o] = _clip(_HALF + np.int32(row[j]) * k)
                out[3 * o + 1] = _clip(_HALF + np.int32(row[j + 1]) * k)
                out[3 * o + 2] = _clip(_HALF + np.int32(row[j + 2]) * k)
                continue
            a0 = _HALF
            a1 = _HALF
            a2 = _HALF
            for t in range(c):
                k = taps[o, t]
                a0 += np.int32(row[j]) * k
                a1 += np.int32(row[j + 1]) * k
                a2 += np.int32(row[j + 2]) * k
                j += 3
            out[3 * o] = _clip(a0)
            out[3 * o + 1] = _clip(a1)
            out[3 * o + 2] = _clip(a2)


@njit(cache=True, nogil=True)
def _along_columns(src, dst, lo, hi, start, count, taps, acc, dlo, dhi):
    """Resample columns (src (H, C*3) -> dst (h, C*3), flat rows) where they changed: an
    output row is redone where its window holds a changed input row, over the union of
    those rows' changed pixels (lo / hi, -1: unchanged), which dlo / dhi get; acc is an
    int32 scratch row of C*3. (Loops over slices from 0: numba then vectorises them.)"""
    for o in range(dst.shape[0]):
        s = start[o]
        c0 = 1 << 30
        c1 = -1
        for t in range(count[o]):
            r = s + t
            if lo[r] >= 0:
                c0 = min(c0, lo[r])
                c1 = max(c1, hi[r])
        dlo[o] = c0 if c1 >= 0 else -1
        dhi[o] = c1
        if c1 < 0:
            continue
        i0 = 3 * c0
        n = 3 * (c1 + 1 - c0)
        a = acc[:n]
        for i in range(n):
            a[i] = _HALF
        for t in range(count[o]):
            k = taps[o, t]
            row = src[s + t, i0:i0 + n]
            for i in range(n):
                a[i] += np.int32(row[i]) * k
        out = dst[o, i0:i0 + n]
        for i in range(n):
            out[i] = _clip(a[i])


@njit(cache=True, inline="always")
def _clip(a):
    v = a >> PRECISION
    if v < 0:
        return np.uint8(0)
    if v > 255:
        return np.uint8(255)
    return np.uint8(v)


_ORDERS: dict[tuple, str | None] = {}   # (frame size, image size) -> the pass order Pillow uses (None: unmatched)
_ORDERS_LOCK = threading.Lock()


def pillow_bicubic(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Pillow's own BICUBIC resize of an (H, W, 3) uint8 frame to size = (w, h)."""
    from PIL import Image
    return np.asarray(Image.fromarray(np.ascontiguousarray(frame)).resize(size, Image.BICUBIC))


def _likely_orders(W: int, H: int, w: int, h: int) -> list[str]:
    """The pass orders to try, the likelier first. Pillow up to 12 always resamples rows
    first; Pillow 13 resamples columns first when the height shrinks by more than twice
    what the width does (observed, not documented). A side of unchanged size has no pass."""
    if w == W:
        return ["cols"]
    if h == H:
        return ["rows"]
    cols_first = h < H and H - h > 2 * (W - w)
    return ["cols,rows", "rows,cols"] if cols_first else ["rows,cols", "cols,rows"]


class Resampler:
    """Resizes (H, W, 3) uint8 frames of ``frame_size`` = (W, H) to ``size`` = (w, h) with
    Pillow's BICUBIC filter, identically, redoing only what changed since the last frame.
    ``resize(frame)`` returns the resampler's own output buffer (read-only; valid until the
    next call). Safe to share between threads (one call at a time).

    ``order`` is the order of the passes, as Pillow runs them for these sizes ("rows,cols":
    rows first), found by comparing with Pillow on a noise frame once per pair of sizes and
    process; ``exact`` False: neither order matched (each frame then goes to Pillow)."""

    def __init__(self, frame_size: tuple[int, int], size: tuple[int, int]):
        (W, H), (w, h) = frame_size, size
        if min(W, H, w, h) <= 0 or (w, h) == (W, H):
            raise ValueError(f"not a resize: {frame_size} -> {size}")
        self.frame_size, self.size = (W, H), (w, h)
        self._lock = threading.Lock()
        self._rows = _taps(W, w) if w != W else None
        self._cols = _taps(H, h) if h != H else None
        if self._rows is not None:
            self._first, self._last = _reach(self._rows[0], self._rows[1], W)
            self._ksum = self._rows[2].sum(axis=1, dtype=np.int64).astype(np.int32)
            self._run = np.empty(W, np.int32)
        self._prev = np.zeros((H, W * 3), np.uint8)
        self._lo = np.empty(H, np.int32)
        self._hi = np.empty(H, np.int32)
        key = (self.frame_size, self.size)
        with _ORDERS_LOCK:
            if key not in _ORDERS:
                _ORDERS[key] = self._find_order()
            self.order = _ORDERS[key]
        self.exact = self.order is not None
        if self.exact:
            self._plan_for(self.order)

    def _plan_for(self, order: str) -> None:
        """Buffers for the passes in ``order``: [(kind, output (n, m, 3), its lo, its hi, acc)]."""
        (W, H), (w, h) = self.frame_size, self.size
        rows_n, cols_n = H, W                       # the image each pass reads
        self._plan = []
        for kind in order.split(","):
            if kind == "rows":
                out_shape = (rows_n, w, 3)
            else:
                out_shape = (h, cols_n, 3)
            buf = np.zeros(out_shape, np.uint8)
            acc = np.empty(cols_n * 3, np.int32) if kind == "cols" else None
            self._plan.append((kind, buf, np.empty(out_shape[0], np.int32), np.empty(out_shape[0], np.int32), acc))
            rows_n, cols_n = out_shape[0], out_shape[1]
        self._out = self._plan[-1][1]
        self._fresh = True                          # the next frame is resampled whole
        self._dirty = np.ones(self._out.shape[0], bool)   # output rows redone since take_changed()

    def _find_order(self) -> str | None:
        W, H = self.frame_size
        noise = np.random.default_rng(2024).integers(0, 256, (H, W, 3), dtype=np.uint8)
        want = pillow_bicubic(noise, self.size)
        for order in _likely_orders(W, H, *self.size):
            self._plan_for(order)
            if np.array_equal(self._resize(noise), want):
                return order
        return None

    def resize(self, frame: np.ndarray) -> np.ndarray:
        f = np.asarray(frame)
        W, H = self.frame_size
        if f.shape != (H, W, 3) or f.dtype != np.uint8:
            raise ValueError(f"the resampler takes ({H}, {W}, 3) uint8 frames, not {f.dtype} {f.shape}")
        with self._lock:
            out = self._resize(f) if self.exact else pillow_bicubic(f, self.size)
            out = out.view()
            out.flags.writeable = False
            return out

    def _resize(self, f: np.ndarray) -> np.ndarray:
        W, H = self.frame_size
        f = np.ascontiguousarray(f)
        full, self._fresh = self._fresh, False
        if not _changed_rows(self._prev, f.reshape(H, W * 3), self._lo, self._hi, full):
            return self._out
        src, lo, hi = f, self._lo, self._hi
        for kind, dst, dlo, dhi, acc in self._plan:
            if kind == "rows":
                _along_rows(src, dst, lo, hi, self._first, self._last, *self._rows, self._ksum, self._run, dlo, dhi)
            else:
                _along_columns(src.reshape(src.shape[0], -1), dst.reshape(dst.shape[0], -1), lo, hi, *self._cols,
                               acc, dlo, dhi)
            src, lo, hi = dst, dlo, dhi
        self._dirty |= lo >= 0
        return self._out

    def take_changed(self) -> np.ndarray:
        """Which rows of the output (a bool per row) were redone since the last call: an
        incremental encoder of the output redoes only those (every row when this
        resampler hands over to Pillow: it does not follow changes then)."""
        with self._lock:
            if not self.exact:
                return np.ones(self.size[1], bool)
            out, self._dirty = self._dirty, np.zeros_like(self._dirty)
            return out
