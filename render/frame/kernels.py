"""Compiled pixel loops (numba, compiled on first use and cached on disk): filling many
rects at once (fill_rects, with outline_rects giving the rects of pygame's rectangle
outlines), enlarging a picture into a surface (enlarged_surface), halving a sprite's surface
(halved_surface) and smoothing a 2x supersampled surface to frame size, byte for byte as
pygame's smoothscale (smooth_surface, _smooth_into, _smooth_restore)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pygame


def outline_rects(quads: np.ndarray, width: int, size: tuple[int, int]) -> np.ndarray | None:
    """(n, k, 4) int64: for each polygon of ``quads`` (n, 4, 2) px points, the k rects
    (x, y, w, h) whose pixels are exactly those pygame.draw.polygon outlines with
    ``width`` on a surface of ``size`` - or None unless every polygon is an axis-aligned
    rectangle [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] inside the surface, outlined 1 or
    2 px wide. pygame truncates the corners to whole px (the floor, for points inside) and
    its lines cover their rows and columns, both included; 2 px wide they widen right and
    down, less the outer bottom right pixel, for rectangles at least 2 px wide and high
    (tested against pygame on thousands of rectangles, whole and fractional)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if width not in (1, 2) or not len(q):
        return None
    x0, y0, x1, y1 = q[:, 0, 0], q[:, 0, 1], q[:, 2, 0], q[:, 2, 1]
    if not ((q[:, 1, 0] == x1) & (q[:, 1, 1] == y0) & (q[:, 3, 0] == x0) & (q[:, 3, 1] == y1)
            & (x0 >= 0) & (y0 >= 0) & (x1 < size[0]) & (y1 < size[1])).all():
        return None
    X0, Y0, X1, Y1 = (np.floor(v).astype(np.int64) for v in (x0, y0, x1, y1))
    if not ((X1 - X0 >= 2) & (Y1 - Y0 >= 2) & (size[0] >= X1 + 2) & (size[1] >= Y1 + 2)).all():
        return None
    w, h, one = X1 - X0, Y1 - Y0, np.ones_like(X0)
    if width == 1:          # the four sides
        parts = [(X0, Y0, w + 1, one), (X0, Y1, w + 1, one), (X0, Y0, one, h + 1), (X1, Y0, one, h + 1)]
    else:                   # top, bottom (two rows, the lower one a pixel shorter), left, right
        parts = [(X0, Y0, w + 2, 2 * one), (X0, Y1, w + 2, one), (X0, Y1 + 1, w + 1, one),
                 (X0, Y0, 2 * one, h + 2), (X1, Y0, 2 * one, h + 1)]
    return np.ascontiguousarray(np.stack([np.stack(p, axis=1) for p in parts], axis=1))


@cache
def _fill_rects_kernel():
    from numba import njit

    # compiled for its one signature up front (see _smooth_restore_kernel)
    @njit("void(uint32[:, ::1], uint32, int64[:, ::1])", cache=True, nogil=True)
    def fill_rects(pix, value, rects):
        # pix: (H, W) uint32 pixels; rects: (n, 4) x, y, w, h inside pix, each set to value
        for i in range(rects.shape[0]):
            x, y, w, h = rects[i, 0], rects[i, 1], rects[i, 2], rects[i, 3]
            for yy in range(y, y + h):
                pix[yy, x:x + w] = value
    return fill_rects


def fill_rects(surf: pygame.Surface, color, rects: np.ndarray) -> pygame.Rect | None:
    """Fill each of ``rects`` (..., 4) int64 (x, y, w, h, inside ``surf``, whose clip is
    not consulted) with the opaque ``color``: the pixels pygame's fill gives, by one
    compiled loop over a pixel view (hundreds of thin rects, e.g. a board's cell outlines,
    cost microseconds each through pygame). The rect around them, or None for none."""
    r = np.ascontiguousarray(rects, np.int64).reshape(-1, 4)
    if not len(r):
        return None
    if surf.get_bytesize() == 4 and surf.get_pitch() == 4 * surf.get_width():
        pix = pygame.surfarray.pixels2d(surf).T          # (H, W), rows contiguous; locks the surface
        try:
            _fill_rects_kernel()(pix, np.uint32(surf.map_rgb(color)), r)
        finally:
            del pix
    else:
        for q in r.tolist():
            surf.fill(color, q)
    x0, y0 = int(r[:, 0].min()), int(r[:, 1].min())
    return pygame.Rect(x0, y0, int((r[:, 0] + r[:, 2]).max()) - x0, int((r[:, 1] + r[:, 3]).max()) - y0)


@cache
def _enlarge_kernel():
    from numba import njit, types

    # compiled for its one signature up front (see _smooth_restore_kernel); the source may
    # be read-only (a cached layer) or not
    @njit(types.void(types.Array(types.uint8, 3, "A", readonly=True), types.uint32[:, ::1], types.int64,
                     types.int64, types.int64, types.int64), cache=True, nogil=True)
    def enlarge(src, pix, k, rs, gs, bs):
        # src: (h, w, 3) uint8 RGB (any strides); pix: (h * k, w * k) uint32 pixels, each
        # source pixel a k x k block of them; rs, gs, bs: the bit shifts of red, green, blue
        h, w = src.shape[0], src.shape[1]
        for y in range(h):
            row = pix[y * k]
            for x in range(w):
                v = (np.uint32(src[y, x, 0]) << np.uint32(rs)) | (np.uint32(src[y, x, 1]) << np.uint32(gs)) \
                    | (np.uint32(src[y, x, 2]) << np.uint32(bs))
                for i in range(k):
                    row[x * k + i] = v
            for j in range(1, k):
                pix[y * k + j] = row
    return enlarge


def enlarged_surface(pixels: np.ndarray, k: int) -> pygame.Surface:
    """A 32-bit surface (no alpha) of the (h, w, 3) uint8 ``pixels`` enlarged k times, each
    pixel a k x k block: the pixels (all 32 bits of each) of
    ``pygame.transform.scale(pygame.surfarray.make_surface(pixels.transpose(1, 0, 2)), (w * k, h * k))``,
    in one compiled pass instead of a transposed copy, a surface and a scaled one (tested)."""
    h, w = pixels.shape[:2]
    if pixels.dtype == np.uint8 and pixels.ndim == 3 and pixels.shape[2] == 3:
        surf = pygame.Surface((w * k, h * k), 0, 32, (0xFF0000, 0x00FF00, 0x0000FF, 0))
        if surf.get_pitch() == 4 * w * k:             # (rows never seen padded)
            pix = pygame.surfarray.pixels2d(surf).T   # (h * k, w * k), rows contiguous; locks the surface
            try:
                _enlarge_kernel()(pixels, pix, k, *surf.get_shifts()[:3])
            finally:
                del pix
            return surf
    # another kind of array (or padded rows): pygame's own way, or its error
    return pygame.transform.scale(pygame.surfarray.make_surface(np.ascontiguousarray(pixels.transpose(1, 0, 2))),
                                  (w * k, h * k))


@cache
def _halve_pixels_kernel():
    from numba import njit

    # compiled for its one signature up front (see _smooth_restore_kernel)
    @njit("void(uint32[:, ::1], uint32[:, ::1])", cache=True, nogil=True)
    def halve_pixels(src, out):
        # src: (2h, 2w) uint32 pixels; out: (h, w). Each of a pixel's four bytes as pygame's
        # smoothscale to half size rounds it: x then y, each step the floor of the mean of two
        for y in range(out.shape[0]):
            top, bottom = src[2 * y], src[2 * y + 1]
            row = out[y]
            for x in range(out.shape[1]):
                a, b, c, d = top[2 * x], top[2 * x + 1], bottom[2 * x], bottom[2 * x + 1]
                v = np.uint32(0)
                for s in range(0, 32, 8):
                    sh = np.uint32(s)
                    m = np.uint32(255)
                    t = (((a >> sh) & m) + ((b >> sh) & m)) >> np.uint32(1)
                    u = (((c >> sh) & m) + ((d >> sh) & m)) >> np.uint32(1)
                    v |= ((t + u) >> np.uint32(1)) << sh
                row[x] = v
    return halve_pixels


def halved_surface(big: pygame.Surface) -> pygame.Surface:
    """``pygame.transform.smoothscale(big, half its size)`` for a 32-bit surface with
    per-pixel alpha of even size (a supersampled sprite): the same pixels, all four bytes, and
    the same format (tested), in one compiled pass; other surfaces go to smoothscale."""
    w, h = big.get_size()
    if big.get_bitsize() != 32 or not big.get_flags() & pygame.SRCALPHA or w % 2 or h % 2 or not w \
            or not h or big.get_pitch() != 4 * w:
        return pygame.transform.smoothscale(big, (w // 2, h // 2))
    out = pygame.Surface((w // 2, h // 2), pygame.SRCALPHA, big)      # (big's pixel format)
    if out.get_pitch() != 2 * w:                                        # (rows never seen padded)
        return pygame.transform.smoothscale(big, (w // 2, h // 2))
    src, dst = pygame.surfarray.pixels2d(big).T, pygame.surfarray.pixels2d(out).T    # rows contiguous; lock both
    try:
        _halve_pixels_kernel()(src, dst)
    finally:
        del src, dst
    return out


def _smooth_into(out: np.ndarray, work: pygame.Surface, rects) -> None:
    """Smooth the px ``rects`` (even-aligned) of a surface twice ``out``'s size into ``out``:
    a 2x smoothscale averages each 2x2 block on its own, so this gives the same bytes as
    smoothing the whole surface. The blocks are averaged in place by _halve (compiled), as
    pygame's smoothscale rounds them (tested against it), without the copies it makes."""
    if not rects:
        return
    src = pygame.surfarray.pixels3d(work)          # (W, H, 3), a view that locks the surface
    try:
        for x, y, w, h in rects:
            _halve(src, out, x, y, w, h)
    finally:
        del src


def _smooth_restore(out: np.ndarray, work: pygame.Surface, base: pygame.Surface, rects, into=None) -> None:
    """_smooth_into(out, work, rects), then the ``rects`` of ``into`` (default: ``work``)
    copied from ``base`` (32-bit surfaces of one pixel format), in one pass: each pair of
    rows is smoothed and copied while it is in cache, instead of a second pass over memory
    for the copy. The same bytes as _smooth_into and the blits (tested)."""
    if not rects:
        return
    into = work if into is None else into
    if not all(s.get_pitch() == 4 * s.get_width() for s in (work, base, into)):
        _smooth_into(out, work, rects)              # rows with padding: the two steps
        for r in rects:
            into.blit(base, r[:2], r)
        return
    # (H, W) uint32 views of the pixels (pixels2d transposed: rows contiguous), which lock the surfaces
    src = pygame.surfarray.pixels2d(work).T
    org = pygame.surfarray.pixels2d(base).T
    dst = src if into is work else pygame.surfarray.pixels2d(into).T
    rs, gs, bs, _ = work.get_shifts()
    try:
        for x, y, w, h in rects:
            _smooth_restore_kernel()(src, org, dst, out, x, y, w, h, rs, gs, bs)
    finally:
        del src, org, dst


@cache
def _smooth_restore_kernel():
    from numba import njit

    # compiled for its one signature up front: compiling on the first call keeps that call's
    # arguments (views that lock the surfaces) alive in reference cycles until a collection
    @njit("void(uint32[:, ::1], uint32[:, ::1], uint32[:, ::1], uint8[:, :, ::1], int64, int64, int64, int64, "
          "int64, int64, int64)", cache=True, nogil=True)
    def smooth_restore(src, org, dst, out, x, y, w, h, rs, gs, bs):
        # src, org, dst: (H, W) uint32 pixels (dst may be src); out: (H / 2, W / 2, 3) uint8
        # RGB; rs, gs, bs: the bit shifts of red, green, blue in a pixel. Each 2x2 block of
        # src averaged as _halve does (x then y, each the floor of the mean of two), the
        # channels of a pixel at once: per byte, the floor of the mean of p and q is
        # (p & q) + ((p ^ q) >> 1) with the bit each byte shifts out masked off. Then the
        # two rows are copied from org to dst
        low = np.uint32(0x7F7F7F7F)
        n = w // 2
        means = np.empty(n, np.uint32)                     # a row of block means, then split
        for j in range(h // 2):
            sy = y + 2 * j
            oy = y // 2 + j
            top, bottom = src[sy, x:x + 2 * n], src[sy + 1, x:x + 2 * n]
            for i in range(n):
                a, b, c, d = top[2 * i], top[2 * i + 1], bottom[2 * i], bottom[2 * i + 1]
                t = (a & b) + (((a ^ b) >> np.uint32(1)) & low)
                u = (c & d) + (((c ^ d) >> np.uint32(1)) & low)
                means[i] = (t & u) + (((t ^ u) >> np.uint32(1)) & low)
            row = out[oy, x // 2:x // 2 + n]
            for i in range(n):
                m = means[i]
                row[i, 0] = np.uint8((m >> np.uint32(rs)) & np.uint32(255))
                row[i, 1] = np.uint8((m >> np.uint32(gs)) & np.uint32(255))
                row[i, 2] = np.uint8((m >> np.uint32(bs)) & np.uint32(255))
            dst[sy, x:x + w] = org[sy, x:x + w]
            dst[sy + 1, x:x + w] = org[sy + 1, x:x + w]
        for yy in range(y + 2 * (h // 2), y + h):          # an odd last row: copied only
            dst[yy, x:x + w] = org[yy, x:x + w]
    return smooth_restore


def smooth_surface(work: pygame.Surface) -> np.ndarray:
    """(H / 2, W / 2, 3) uint8: a surface of even size smoothed to half its size, the bytes
    of pygame.transform.smoothscale to that size (see _smooth_into)."""
    w, h = work.get_size()
    out = np.empty((h // 2, w // 2, 3), np.uint8)
    _smooth_into(out, work, [(0, 0, w, h)])
    return out


@cache
def _halve_kernel():
    from numba import njit

    @njit(cache=True, nogil=True)
    def halve(src, out, x, y, w, h):
        # src: (W, H, 3) uint8, x-major (pygame's pixels3d); out: (H / 2, W / 2, 3) uint8.
        # pygame's smoothscale halves x then y, each step the floor of the mean of two
        for j in range(h // 2):
            sy = y + 2 * j
            oy = y // 2 + j
            for i in range(w // 2):
                sx = x + 2 * i
                ox = x // 2 + i
                for c in range(3):
                    top = (np.int32(src[sx, sy, c]) + np.int32(src[sx + 1, sy, c])) >> 1
                    bottom = (np.int32(src[sx, sy + 1, c]) + np.int32(src[sx + 1, sy + 1, c])) >> 1
                    out[oy, ox, c] = np.uint8((top + bottom) >> 1)
    return halve


def _halve(src, out, x, y, w, h) -> None:
    _halve_kernel()(src, out, x, y, w, h)
