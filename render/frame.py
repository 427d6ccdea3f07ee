"""Frames of the suite: numpy uint8 arrays (H, W, 3) and PNG files, drawn headless with pygame.

    render(suite, style=None, scale=None, t=None) -> np.ndarray     one frame of a Suite
    save_png(frame, path)
    Screen(start, style=, scale=, frames_per_move=)                 a Suite plus its renderer;
                                                                    act(action) -> (feedback, frames)

How a frame is made (fast path: only what changed is redrawn):

    1. the STATIC layer of the screen (background, header, buttons, instruction text, the
       board's fixed parts) is drawn once per (screen, style, scale), supersampled 2x and
       smoothed, and kept as a numpy array;
    2. it is copied into the frame buffer (a numpy array that a pygame surface shares);
    3. the game's drawing module (render/<game id>.py, found by discovery through
       ``drawing_for``) puts the DYNAMIC parts on top, mostly as cached opaque patches and
       small sprites keyed by what they show;
    4. transient overlays (toast, completion card) are drawn; the buffer is copied out.

Styles: "2d" flat; "3d" the same scene on a tilted table under perspective with extruded,
lit pieces and shadows (engine/geometry.py). Output is deterministic: same suite state and
settings -> same bytes (no clocks, no randomness; pygame's bundled default font).
"""

from __future__ import annotations

import importlib
import math
import os
import pkgutil
import sys
import threading
from functools import lru_cache
from typing import Any, Callable

DUMMY_DRIVER_SET = "SDL_VIDEODRIVER" not in os.environ   # headless unless the user chose a driver
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np  # noqa: E402
import pygame  # noqa: E402
import xxhash  # noqa: E402

from longpuzzle.engine.geometry import (  # noqa: E402
    DESIGN_H, DESIGN_W, Circle, Projection, Rect, Widget, circle_points, projection, rounded_rect_points,
    supersampled_projection,
)
from longpuzzle.engine.catalog import catalog  # noqa: E402
from longpuzzle.engine.registry import get_puzzle  # noqa: E402
from longpuzzle.engine.suite import CARD, Suite, difficulty_label  # noqa: E402

SS = 2                                   # supersampling of cached layers and sprites
INK = (38, 50, 56)
MUTED = (96, 112, 122)
WHITE = (255, 255, 255)
BG_TOP, BG_BOTTOM = (236, 242, 248), (214, 225, 236)
TABLE_TOP, TABLE_BOTTOM = (44, 52, 64), (24, 29, 36)
ACCENT = (30, 136, 229)
CARD_ACCENTS = [(239, 108, 0), (67, 160, 71), (30, 136, 229), (142, 36, 170), (229, 57, 53), (0, 151, 167),
                (109, 76, 65), (57, 73, 171)]
TOAST_Y = 800

_inited = False


def _init() -> None:
    global _inited
    if not _inited:
        pygame.font.init()
        _inited = True


@lru_cache(maxsize=256)
def font(px: int) -> pygame.font.Font:
    _init()
    return pygame.font.Font(None, max(6, int(px)))


def mix(c1, c2, f: float):
    return tuple(int(round(a + (b - a) * f)) for a, b in zip(c1, c2))


_SHADES: dict = {}


def shade(c, f: float):
    key = (c, f) if type(c) is tuple else None
    out = _SHADES.get(key) if key is not None else None
    if out is None:
        out = tuple(max(0, min(255, int(round(v * f)))) for v in c)
        if key is not None and len(_SHADES) < 8192:
            _SHADES[key] = out
    return out


def hex_rgb(h: str) -> tuple[int, int, int]:
    h = h.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


# ---- painter: draws in design px through a projection -----------------------------------

class Painter:
    """Draws design-px shapes onto a pygame surface. ``proj`` is the projection of the
    surface's resolution (already including supersampling); ``offset`` is the surface's
    top-left corner in that projection's px (for sprites and patches)."""

    def __init__(self, surf: pygame.Surface, proj: Projection, offset=(0.0, 0.0)):
        self.surf = surf
        self.proj = proj
        self.ox, self.oy = offset
        self.is_3d = proj.is_3d
        self.dirty: list | None = None      # a list: the px rects every primitive touched go here
        # a surface that ``surf`` was a copy of when this painter began, never drawn on itself
        # (a LayerBase's pristine base): outside the rects in ``dirty``, ``surf`` has its pixels
        self.base: pygame.Surface | None = None

    def _mark(self, rect) -> None:
        if self.dirty is not None:
            self.dirty.append(rect)

    def _polygon(self, color, pts, width=0) -> None:
        """Every filled or outlined polygon of the primitives below is drawn here."""
        self._mark(pygame.draw.polygon(self.surf, color, pts, width))

    def replay(self, ops, recolour: dict | None = None) -> None:
        """Draw polygons recorded by a Recorder at the same projection (and offset), with
        colours optionally replaced: the same pixels as drawing the shapes again."""
        if self.dirty is None or type(self)._polygon is not Painter._polygon:
            for color, pts, width in ops:
                if recolour:
                    color = recolour.get(color, color)
                self._polygon(color, pts, width)
            return
        # the rects touched are marked as one rect around them (it holds every pixel drawn):
        # a board's hundreds of polygons give the touched-rect cover one rect, not hundreds
        surf, touched = self.surf, []
        for color, pts, width in ops:
            if recolour:
                color = recolour.get(color, color)
            r = pygame.draw.polygon(surf, color, pts, width)
            if r.w > 0 and r.h > 0:
                touched.append(r)
        if touched:
            self.dirty.append(touched[0].unionall(touched))

    def px(self, x, y, z=0.0):
        a, b = self.proj.to_px(x, y, z)
        return a - self.ox, b - self.oy

    def pts(self, pts, z=0.0):
        # point by point in Python: Projection.to_px written out (the same float operations in
        # the same order), several times faster than arrays for the few points of a shape
        pr, ox, oy, z = self.proj, self.ox, self.oy, float(z)
        sx, sy, pox, poy = pr.sx, pr.sy, pr.ox, pr.oy
        if not pr.is_3d:
            return [[q[0] * sx + pox - ox, q[1] * sy + poy - oy] for q in pts]
        f, s, c, kf, cx, cy = pr._f, pr._s, pr._c, pr._k * pr._f, pr._cx, pr._cy
        hw, hh = DESIGN_W / 2, DESIGN_H / 2
        out = []
        for q in pts:
            zz = q[2] if len(q) > 2 else z
            X, Y = q[0] - hw, q[1] - hh
            m = kf / (f - Y * s - zz * c)
            out.append([(cx + m * X) * sx + pox - ox, (cy + m * (Y * c - zz * s)) * sy + poy - oy])
        return out

    def scale_at(self, x, y) -> float:
        return self.proj.local_scale(x, y)

    # -- primitives
    def poly(self, pts, color, z=0.0, width=0):
        p = self.pts(pts, z)
        if len(p) >= 3:
            self._polygon(color, p, width)

    def shadow(self, pts, alpha=60, dx=4.0, dy=7.0, grow=0.0):
        """A soft dark footprint under a raised piece (3d only)."""
        if not self.is_3d:
            return
        p = np.asarray(self.pts([(x + dx, y + dy) for x, y in pts], 0.0))
        x0, y0 = np.floor(p.min(axis=0)) - 2
        x1, y1 = np.ceil(p.max(axis=0)) + 2
        w, h = int(x1 - x0), int(y1 - y0)
        if w <= 0 or h <= 0:
            return
        tmp = pygame.Surface((w, h), pygame.SRCALPHA)
        pygame.draw.polygon(tmp, (0, 0, 0, alpha), (p - [x0, y0]).tolist())
        self._mark(self.surf.blit(tmp, (int(x0), int(y0))))

    def prism(self, pts, color, height, z0=0.0, top=None, shadow=True, side=0.68):
        """An extruded shape: in 3d side faces (lit) + top face at z0 + height; in 2d the
        outline filled flat. ``pts`` clockwise on screen (y down)."""
        if not self.is_3d or height <= 0:
            self.poly(pts, top or color, z0)
            return
        if shadow and z0 == 0:
            self.shadow(pts, dx=0.35 * height, dy=0.55 * height)
        z1 = z0 + height
        base = self.pts(pts, z0)
        up = self.pts(pts, z1)
        n = len(pts)
        for i in range(n):
            j = (i + 1) % n
            q = [base[i], base[j], up[j], up[i]]
            area = 0.0
            for k in range(4):
                (ax, ay), (bx, by) = q[k], q[(k + 1) % 4]
                area += ax * by - bx * ay
            if area <= 0:
                continue
            ex, ey = pts[j][0] - pts[i][0], pts[j][1] - pts[i][1]
            ln = math.hypot(ex, ey) or 1.0
            nx = -ey / ln            # outward normal (clockwise outline, y down)
            f = side + 0.14 * (-nx) * 0.9
            self._polygon(shade(color, f), q)
        self._polygon(top or color, up)

    def rrect(self, r: Rect, radius, color, z=0.0, height=0.0, top=None, outline=None, width=2.0):
        pts = rounded_rect_points(r, radius)
        self.prism(pts, color, height, z, top)
        if outline is not None:
            self.outline(pts, outline, z + height, width)

    def circle(self, cx, cy, r, color, z=0.0, height=0.0, top=None, outline=None, width=2.0):
        pts = circle_points(cx, cy, r, 48 if r * self.scale_at(cx, cy) > 30 else 28)
        self.prism(pts, color, height, z, top)
        if outline is not None:
            self.outline(pts, outline, z + height, width)

    def outline(self, pts, color, z=0.0, width=2.0):
        p = self.pts(pts, z)
        wpx = max(1, int(round(width * self.scale_at(*pts[0]))))
        self._polygon(color, p, wpx)

    def line(self, a, b, color, width=2.0, z=0.0):
        pa, pb = self.px(*a, z), self.px(*b, z)
        wpx = max(1, int(round(width * self.scale_at(*a))))
        self._mark(pygame.draw.line(self.surf, color, pa, pb, wpx))

    def text(self, s: str, x, y, size, color=INK, z=0.0, anchor="center", max_w=None):
        if not s:
            return
        k = self.scale_at(x, y)
        f = font(round(size * k))
        img = f.render(s, True, color)
        if max_w is not None and img.get_width() > max_w * k:
            f = font(round(size * k * max_w * k / img.get_width()))
            img = f.render(s, True, color)
        px, py = self.px(x, y, z)
        w, h = img.get_size()
        if anchor == "center":
            pos = (px - w / 2, py - h / 2)
        elif anchor == "left":
            pos = (px, py - h / 2)
        else:
            pos = (px - w, py - h / 2)
        self._mark(self.surf.blit(img, (round(pos[0]), round(pos[1]))))

    def gradient_plane(self, top, bottom, strips=48):
        for i in range(strips):
            y0 = DESIGN_H * i / strips
            y1 = DESIGN_H * (i + 1) / strips + 0.6
            self.poly([(0, y0), (DESIGN_W, y0), (DESIGN_W, y1), (0, y1)], mix(top, bottom, (i + 0.5) / strips))


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
    if not ((X1 - X0 >= 2) & (Y1 - Y0 >= 2) & (X1 + 2 <= size[0]) & (Y1 + 2 <= size[1])).all():
        return None
    w, h, one = X1 - X0, Y1 - Y0, np.ones_like(X0)
    if width == 1:          # the four sides
        parts = [(X0, Y0, w + 1, one), (X0, Y1, w + 1, one), (X0, Y0, one, h + 1), (X1, Y0, one, h + 1)]
    else:                   # top, bottom (two rows, the lower one a pixel shorter), left, right
        parts = [(X0, Y0, w + 2, 2 * one), (X0, Y1, w + 2, one), (X0, Y1 + 1, w + 1, one),
                 (X0, Y0, 2 * one, h + 2), (X1, Y0, 2 * one, h + 1)]
    return np.ascontiguousarray(np.stack([np.stack(p, axis=1) for p in parts], axis=1))


@lru_cache(maxsize=None)
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


class Recorder(Painter):
    """A Painter that draws nothing and records its polygons (``ops``) in px, to be drawn
    by ``Painter.replay`` as often as needed (shapes drawn several times in different
    colours are projected once). Records polygons only: text and shadows are refused."""

    def __init__(self, proj: Projection, offset=(0.0, 0.0)):
        super().__init__(None, proj, offset)
        self.ops: list = []

    def _polygon(self, color, pts, width=0) -> None:
        self.ops.append((tuple(color), pts, width))

    def text(self, *a, **k):
        raise TypeError("a Recorder records polygons only")

    def shadow(self, pts, *a, **k):
        if self.is_3d:
            raise TypeError("a Recorder records polygons only")

    def line(self, *a, **k):
        raise TypeError("a Recorder records polygons only")


# ---- layers, patches, sprites -------------------------------------------------------------

def surface_to_array(surf: pygame.Surface) -> np.ndarray:
    """(H, W, 3) uint8 copy of a surface's pixels."""
    w, h = surf.get_size()
    return np.frombuffer(pygame.image.tobytes(surf, "RGB"), np.uint8).reshape(h, w, 3).copy()


def draw_layer(proj: Projection, draw: Callable[[Painter], None]) -> np.ndarray:
    """A full frame drawn supersampled, smoothed down to ``proj``'s size."""
    big = proj.supersampled(SS)
    surf = pygame.Surface(big.size)
    draw(Painter(surf, big))
    if big.size == (SS * proj.width, SS * proj.height):
        return smooth_surface(surf)
    return surface_to_array(pygame.transform.smoothscale(surf, proj.size))


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


@lru_cache(maxsize=None)
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


@lru_cache(maxsize=None)
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


def _cover(rects, size, tile: int = 32) -> list[tuple[int, int, int, int]]:
    """A few even-aligned rects (x, y, w, h) inside ``size`` covering every rect given (with
    a margin): the touched tiles of a ``tile`` px grid, per row of tiles the span from the
    first to the last, rows with equal spans merged."""
    W, H = size
    nx, ny = -(-W // tile), -(-H // tile)
    grid = np.zeros((ny, nx), bool)
    for r in rects:
        x0, y0, w, h = r[0] - 2, r[1] - 2, r[2] + 4, r[3] + 4
        if r[2] <= 0 or r[3] <= 0:
            continue
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x0 + w), min(H, y0 + h)
        if x1 > x0 and y1 > y0:
            grid[y0 // tile:(y1 - 1) // tile + 1, x0 // tile:(x1 - 1) // tile + 1] = True
    rows = np.flatnonzero(grid.any(axis=1))
    first = grid[rows].argmax(axis=1)
    last = nx - grid[rows][:, ::-1].argmax(axis=1)
    out: list[list[int]] = []
    prev = None
    for j, c0, c1 in zip(rows.tolist(), first.tolist(), last.tolist()):
        if prev == (j - 1, c0, c1):                    # the row above had the same span
            out[-1][3] = min(H, (j + 1) * tile) - out[-1][1]
        else:
            x0, x1 = c0 * tile, min(W, c1 * tile)
            out.append([x0, j * tile, x1 - x0, min(H, (j + 1) * tile) - j * tile])
        prev = (j, c0, c1)
    return [tuple(r) for r in out]


class LayerBase:
    """A supersampled base picture (e.g. a screen's background and title, or nothing) kept
    with its smoothed copy, so that layers drawn over it cost only what they touch:
    ``over(draw)`` draws on a working copy of the base, smooths the touched rects into a
    copy of the smoothed base and restores them. The bytes are those of ``draw_layer`` of
    the base drawing followed by ``draw`` (when the supersampled size is exactly twice
    the frame's; otherwise ``over`` simply draws the whole layer)."""

    def __init__(self, proj: Projection, draw_base: Callable[[Painter], None] | None):
        self.proj = proj
        self.big = supersampled_projection(proj.style, proj.scale, SS)
        self.draw_base = draw_base
        self._lock = threading.Lock()
        self.exact = self.big.size == (proj.width * SS, proj.height * SS)
        if self.exact:
            self.pristine = pygame.Surface(self.big.size)
            if draw_base is not None:
                draw_base(Painter(self.pristine, self.big))
            self.work = pygame.Surface(self.big.size, 0, self.pristine)
            W, H = self.big.size
            self.small = np.empty((proj.height, proj.width, 3), np.uint8)
            # 32-bit pixels of one layout: smoothing and copying done in one pass (_smooth_restore)
            self.one_pass = self.work.get_bytesize() == 4 and self.work.get_shifts() == self.pristine.get_shifts()
            if self.one_pass:
                # the smoothed base and the working copy made in one pass over the base
                _smooth_restore(self.small, self.pristine, self.pristine, [(0, 0, W, H)], into=self.work)
            else:
                self.work.blit(self.pristine, (0, 0))
                _smooth_into(self.small, self.pristine, [(0, 0, W, H)])

    def over(self, draw: Callable[[Painter], None]) -> np.ndarray:
        return self.over_box(draw)[0]

    def over_box(self, draw: Callable[[Painter], None]):
        """(layer, the frame px box (x0, y0, x1, y1) outside which it is the smoothed base, or
        None when nothing was drawn)."""
        with self._lock:                       # one working copy: renderers on other threads wait
            arr = self._over(draw)
            return arr, self.box

    def _over(self, draw: Callable[[Painter], None]) -> np.ndarray:
        if not self.exact:
            base = self.draw_base
            self.box = (0, 0, self.proj.width, self.proj.height)
            return draw_layer(self.proj, lambda p: (base(p) if base else None, draw(p)))
        p = Painter(self.work, self.big)
        p.dirty = []
        p.base = self.pristine
        draw(p)
        out = self.small.copy()
        rects = _cover(p.dirty, self.big.size)
        # the frame px box outside which ``out`` is the smoothed base
        self.box = (min(r[0] for r in rects) // 2, min(r[1] for r in rects) // 2,
                    max(r[0] + r[2] for r in rects) // 2, max(r[1] + r[3] for r in rects) // 2) if rects else None
        if self.one_pass:
            # smoothed and the working copy made the base again in one pass (_smooth_restore)
            _smooth_restore(out, self.work, self.pristine, rects)
            return out
        _smooth_into(out, self.work, rects)
        for r in rects:                                # the working copy is the base again
            self.work.blit(self.pristine, r[:2], r)
        return out


_BASES: "dict[tuple, LayerBase]" = {}
_BASES_LOCK = threading.Lock()
BASES_KEPT = 6                  # about 18 MB each at scale 1


def layer_base(proj: Projection, key, draw_base: Callable[[Painter], None] | None = None) -> LayerBase:
    """The LayerBase of ``key`` (a hashable name of what ``draw_base`` draws) at ``proj``,
    built on first use; the least recently used are dropped past BASES_KEPT."""
    k = (proj.style, proj.scale, key)
    with _BASES_LOCK:
        b = _BASES.pop(k, None)
        if b is None:
            b = LayerBase(proj, draw_base)
            while len(_BASES) >= BASES_KEPT:
                _BASES.pop(next(iter(_BASES)))
        _BASES[k] = b
    return b


def px_box(proj: Projection, pts, zmax=0.0, margin=2) -> tuple[int, int, int, int]:
    """Integer px bounding box (x0, y0, x1, y1) of design points (also raised by zmax),
    clipped to the frame."""
    arr = np.asarray(pts, dtype=np.float64)[:, :2]
    p = proj.to_px_array(arr)
    if zmax:
        p = np.concatenate([p, proj.to_px_array(np.concatenate([arr, np.full((len(arr), 1), zmax)], axis=1))])
    x0 = max(0, int(math.floor(p[:, 0].min())) - margin)
    y0 = max(0, int(math.floor(p[:, 1].min())) - margin)
    x1 = min(proj.width, int(math.ceil(p[:, 0].max())) + margin)
    y1 = min(proj.height, int(math.ceil(p[:, 1].max())) + margin)
    return x0, y0, max(x0 + 1, x1), max(y0 + 1, y1)


def draw_patch(proj: Projection, background: np.ndarray, box, draw: Callable[[Painter], None]) -> np.ndarray:
    """An opaque patch (h, w, 3): ``background[box]`` with ``draw`` on top, supersampled."""
    x0, y0, x1, y1 = box
    crop = background[y0:y1, x0:x1]
    base = pygame.surfarray.make_surface(np.ascontiguousarray(crop.transpose(1, 0, 2)))
    big = pygame.transform.scale(base, ((x1 - x0) * SS, (y1 - y0) * SS))
    bp = proj.supersampled(SS)
    fx, fy = bp.width / proj.width, bp.height / proj.height
    draw(Painter(big, bp, (x0 * fx, y0 * fy)))
    return smooth_surface(big)


def draw_sprite(proj: Projection, box, draw: Callable[[Painter], None], key_colour=(128, 128, 128)) -> pygame.Surface:
    """A transparent sprite covering px ``box``, supersampled."""
    x0, y0, x1, y1 = box
    bp = proj.supersampled(SS)
    fx, fy = bp.width / proj.width, bp.height / proj.height
    big = pygame.Surface(((x1 - x0) * SS, (y1 - y0) * SS), pygame.SRCALPHA)
    big.fill((*key_colour, 0))
    draw(Painter(big, bp, (x0 * fx, y0 * fy)))
    return pygame.transform.smoothscale(big, (x1 - x0, y1 - y0))


class Changes:
    """What changed in a base layer that its drawing keeps up to date in place (e.g. Maze
    Paint's board as painted): ``version`` counts the updates, ``changed(boxes)`` records
    one, ``since(v)`` gives the px boxes (x0, y0, x1, y1) changed after version v, or None
    when that goes back further than the log kept (then a frame copies the whole base)."""

    KEPT = 512                                # boxes of the latest updates kept

    def __init__(self):
        self.version = 0
        self._log: list[tuple[int, tuple]] = []   # (version, box), oldest first
        self._known = 0                           # since(v) is known for every v >= this

    def changed(self, boxes) -> None:
        self.version += 1
        v = self.version
        self._log.extend((v, b) for b in boxes)
        if len(self._log) > 2 * self.KEPT:
            cut = len(self._log) - self.KEPT
            self._known = self._log[cut - 1][0]
            del self._log[:cut]

    def since(self, v: int) -> list | None:
        if v < self._known:
            return None
        log = self._log
        i = len(log)
        while i and log[i - 1][0] > v:
            i -= 1
        return [b for _, b in log[i:]]


class BoxCache:
    """Boxes of a base layer as composed before, for a game that keeps its base in step in
    place: key -> a read-only copy of the box's pixels, up to ``limit`` bytes, the least
    recently used dropped first (one is always kept), none larger than ``largest`` bytes.
    Each entry holds ``held`` (the sprites or layers whose ids its key names), so that those
    ids are not reused while it is kept: a key found names the same objects. Thread-safe."""

    def __init__(self, limit: int, largest: int | None = None):
        self.limit, self.largest = limit, largest
        self._entries: dict[Any, tuple] = {}      # key -> (pixels, held), oldest used first
        self._size = 0                            # their bytes
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key) -> np.ndarray | None:
        with self._lock:
            hit = self._entries.pop(key, None)
            if hit is None:
                return None
            self._entries[key] = hit              # the most recently used now
            return hit[0]

    def put(self, key, pixels: np.ndarray, held=None) -> None:
        """Keep a copy of ``pixels`` (the box as composed) under ``key``."""
        if self.largest is not None and pixels.nbytes > self.largest:
            return
        arr = pixels.copy()
        arr.setflags(write=False)
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (arr, held)
            self._size += arr.nbytes
            while self._size > self.limit and len(self._entries) > 1:
                self._size -= self._entries.pop(next(iter(self._entries)))[0].nbytes


def compose_clipped(work: pygame.Surface, clean: pygame.Surface, rect: pygame.Rect, blits,
                    into: pygame.Surface, at) -> None:
    """Compose ``rect`` of ``work`` again and copy it into ``into`` at ``at``: ``clean``
    (a surface of work's size: what lies under every sprite) there, then each of ``blits``
    (surface, (x, y) in work's px) in order, clipped to ``rect`` - the pixels composing the
    whole of ``work`` gives there (each pixel is ``clean`` with the sprites over it blended
    in order). ``work`` opaque: the copy into ``into`` is a plain copy of its pixels."""
    work.blit(clean, rect.topleft, rect)
    work.set_clip(rect)
    for sp, xy in blits:
        work.blit(sp, xy)
    work.set_clip(None)
    into.blit(work, at, rect)


MERGE_BOXES = 24             # more boxes than this to copy into a reused frame array: one box around them


class Frame:
    """The frame being composed: ``buf`` (H, W, 3) shared with the pygame surface ``surf``.
    Every frame is composed in an array of its own and handed out by ``finish`` read-only:
    nothing writes to it afterwards, so the harness hashes, stores and shows it to the agent
    without another copy.

    ``start`` begins a frame as a copy of its base (the static layer, or a game's base
    layer). The arrays are pooled, and an array a later frame reuses still holds the frame
    it was: when that frame started from the same base, and everything drawn over it went
    through ``put`` and ``blit`` (which note the boxes they touch), only those boxes and the
    boxes the base changed in since then (its ``Changes``; a read-only base never changes)
    are copied from the base - the same pixels as copying all of it. Reaching ``buf`` or
    ``surf`` directly makes the frame's drawing unknown, and its array is copied whole next
    time."""

    def __init__(self, proj: Projection):
        self.proj = proj
        self._buf = np.zeros((proj.height, proj.width, 3), np.uint8)
        self._surf = pygame.image.frombuffer(self._buf, proj.size, "RGB")
        self.static: np.ndarray | None = None
        self._pool: list[np.ndarray] = []
        self._made: dict[int, tuple] = {}        # pool index -> (base, its version, boxes drawn over it)
        self._cur: tuple = (None, None, 0, None)   # the frame being drawn: pool index, base, version, changes
        self._boxes: list | None = None          # boxes drawn over the base (None: not known)
        # the frame handed out last: (array, base, its version, boxes drawn over it), and
        # ``delta``: (the frame before it, the px box outside which the two are the same
        # pixels, (0, 0, 0, 0) for none) or None when that is not known
        self._last: tuple | None = None
        self.delta: tuple | None = None
        self._picture: np.ndarray | None = None   # the frame handed out instead (replace)
        # (sprite, x0, y0, hash of the pixels under it) -> the pixels after blending it (blit)
        self._blits: dict[tuple, np.ndarray] = {}
        self._blits_size = 0                     # their bytes
        self.blits_reused = 0

    POOL = 32                                 # frame arrays kept for reuse
    BLITS = 16 << 20                          # bytes of blended sprites kept (blit; at most 4,096 of them)
    track = True                              # False: every frame copies its whole base

    @property
    def buf(self) -> np.ndarray:
        self._boxes = None                    # drawn on directly: not tracked
        return self._buf

    @property
    def surf(self) -> pygame.Surface:
        self._boxes = None
        return self._surf

    def start(self, base: np.ndarray, changes: Changes | None = None) -> None:
        """Begin a frame as a copy of ``base`` (the static layer, or a game's base layer;
        ``changes``: the base's record of what its in-place updates changed)."""
        # (the last frame's delta is its caller's now: the frame before it is not held here,
        # so that its array is free for this frame when nobody else holds it)
        self.delta = None
        i, buf = self._free_array(base)
        version = changes.version if changes is not None else 0
        made = self._made.pop(i, None) if i is not None else None
        boxes = None
        if made is not None and made[0] is base and made[2] is not None and self.track:
            if changes is not None:
                boxes = changes.since(made[1])
            elif not base.flags.writeable and made[1] == 0:
                boxes = []                    # a read-only base never changes
            if boxes is not None:
                boxes = boxes + made[2]
                if len(boxes) > MERGE_BOXES:  # many small copies: one of the box around them
                    boxes = [(min(b[0] for b in boxes), min(b[1] for b in boxes),
                              max(b[2] for b in boxes), max(b[3] for b in boxes))]
        if boxes is None:
            np.copyto(buf, base)
        else:
            for x0, y0, x1, y1 in boxes:
                buf[y0:y1, x0:x1] = base[y0:y1, x0:x1]
        self._buf = buf
        self._surf = pygame.image.frombuffer(buf, self.proj.size, "RGB")
        self._cur = (i, base, version, changes)
        self._boxes = []
        self._picture = None

    def pixels(self) -> np.ndarray:
        """The frame as drawn so far, to read only (unlike ``buf``, its tracking stays)."""
        return self._buf

    def replace(self, picture: np.ndarray) -> None:
        """The frame is ``picture`` (a read-only array of the frame's shape that nothing
        writes to, e.g. a cached layer covering the whole screen): ``finish`` hands it out
        as it is, without copying it into the frame's array, which keeps what was drawn so
        far for the next frame (so that one copies only what changed, not the whole base)."""
        if picture.shape != self._buf.shape or picture.flags.writeable:
            raise ValueError("a frame's replacement is a read-only array of its shape")
        self._picture = picture

    def present(self, picture: np.ndarray) -> np.ndarray:
        """The frame is ``picture`` itself, with nothing drawn over it (a read-only array of
        the frame's shape that nothing writes to: a menu's cached layer): handed out at once,
        instead of ``start`` and ``finish``, without taking a frame array or copying anything
        (a frame array copies the whole picture when the screen changes). Its delta: nothing
        changed when the frame before was the same picture, else not known. A frame started
        from the same picture next is known to differ from it only where drawn over."""
        if picture.shape != self._buf.shape or picture.flags.writeable:
            raise ValueError("a frame presented as it is is a read-only array of its shape")
        last = self._last
        self.delta = (picture, (0, 0, 0, 0)) if last is not None and last[0] is picture else None
        self._last = (picture, picture, 0, [])    # the picture is its own base, nothing drawn over
        self._cur = (None, None, 0, None)
        self._picture = None
        return picture

    def finish(self) -> np.ndarray:
        out = self._buf
        self._surf = None                     # the surface no longer refers to the frame
        out.setflags(write=False)
        i, base, version, changes = self._cur
        drawn = self._boxes
        if i is not None:
            self._made[i] = (base, version, drawn)
        if self._picture is not None:         # handed out instead: its delta is not known
            out, drawn, self._picture = self._picture, None, None
        self.delta = self._delta(base, version, changes, drawn)
        self._last = (out, base, version, drawn)
        self._cur = (None, None, 0, None)
        return out

    def _delta(self, base, version, changes, drawn) -> tuple | None:
        """Frame.delta of the frame being finished: both frames are their base with boxes
        drawn over it, so they differ only inside the boxes drawn over either and the boxes
        the base changed in between (unknown when either was drawn on directly)."""
        last = self._last
        if last is None or drawn is None or last[3] is None or last[1] is not base or not self.track:
            return None
        if changes is not None:
            if changes.version != version:
                return None
            ch = changes.since(last[2])
        else:
            ch = [] if not base.flags.writeable and version == 0 == last[2] else None
        if ch is None:
            return None
        boxes = ch + last[3] + drawn
        if not boxes:
            return last[0], (0, 0, 0, 0)
        return last[0], (min(b[0] for b in boxes), min(b[1] for b in boxes),
                         max(b[2] for b in boxes), max(b[3] for b in boxes))

    def _free_array(self, base=None) -> tuple[int | None, np.ndarray]:
        """(pool index or None, an array for the next frame): a pooled one that nobody holds
        any more (handed-out frames are never written again while anyone can see them) -
        of those, the latest frame made from ``base`` - else a new one. Reuse spares the page
        faults of fresh memory on every frame, and the copy of what did not change."""
        pool, made = self._pool, self._made
        best, best_v = None, -1
        for i in range(len(pool)):
            a = pool[i]
            # references: the pool's, ``a``, getrefcount's argument; any more is a user's
            if sys.getrefcount(a) <= 3:
                m = made.get(i)
                v = m[1] if m is not None and m[0] is base and m[2] is not None else -1
                if best is None or v > best_v:
                    best, best_v = i, v
        if best is not None:
            a = pool[best]
            a.setflags(write=True)
            return best, a
        a = np.empty((self.proj.height, self.proj.width, 3), np.uint8)
        if len(pool) < self.POOL:
            pool.append(a)
            return len(pool) - 1, a
        return None, a

    def _touch(self, x0: int, y0: int, x1: int, y1: int) -> None:
        b = self._boxes
        if b is not None:
            H, W = self._buf.shape[:2]
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
            if x1 > x0 and y1 > y0:
                b.append((x0, y0, x1, y1))

    def put(self, patch: np.ndarray, x0: int, y0: int) -> None:
        h, w = patch.shape[:2]
        H, W = self._buf.shape[:2]
        sx0, sy0 = max(0, -x0), max(0, -y0)
        dx0, dy0 = max(0, x0), max(0, y0)
        dx1, dy1 = min(W, x0 + w), min(H, y0 + h)
        if dx1 > dx0 and dy1 > dy0:
            self._buf[dy0:dy1, dx0:dx1] = patch[sy0:sy0 + dy1 - dy0, sx0:sx0 + dx1 - dx0]
            self._touch(dx0, dy0, dx1, dy1)

    def blit(self, sprite: pygame.Surface, x0: int, y0: int) -> None:
        """``sprite`` alpha-blended at px (x0, y0). The result is a function of the sprite and
        the pixels under it alone: it is kept, by the sprite and the hash of those pixels
        (BLITS bytes of them), and put back as it was for the same sprite over the same pixels - a
        ball on a cell it has been on before, a HUD line over the same header - instead of
        blending again (pygame's per-pixel-alpha blit costs about 20 us a ball)."""
        x0, y0 = int(x0), int(y0)
        w, h = sprite.get_size()
        H, W = self._buf.shape[:2]
        bx0, by0, bx1, by1 = max(0, x0), max(0, y0), min(W, x0 + w), min(H, y0 + h)
        if bx1 <= bx0 or by1 <= by0:
            return                            # off the frame: nothing drawn
        under = self._buf[by0:by1, bx0:bx1]
        key = (sprite, x0, y0, xxhash.xxh3_128_intdigest(np.ascontiguousarray(under)))
        done = self._blits.get(key)
        if done is None:
            self._surf.blit(sprite, (x0, y0))
            if self.BLITS:
                done = self._blits[key] = under.copy()
                self._blits_size += done.nbytes
                while self._blits_size > self.BLITS or len(self._blits) > 4096:
                    self._blits_size -= self._blits.pop(next(iter(self._blits))).nbytes   # the oldest
        else:
            under[...] = done
            self.blits_reused += 1
        self._touch(bx0, by0, bx1, by1)


# ---- drawing-module registry ---------------------------------------------------------------

class GameDrawing:
    """Base class of a game's drawing class. A module render/<game id>.py defines
    ``GAME = "<game id>"`` and ``DRAWING = <subclass>``; it is found by discovery.

    One instance per (level, projection), built with the level's GameUI (the geometry the
    engine hit-tests with) - it may cache freely (patches, sprites). Class attributes
    ``background`` (top, bottom colours) and ``accent`` colour the menus and HUD.
      draw_static(p)   the board's fixed parts, once, into the static layer (supersampled
                       Painter in design px: rrect / circle / prism / text / poly / shadow;
                       in 3d give pieces a height, in 2d keep them flat)
      draw_dynamic(f, suite, state, t, anim, phase)   per frame: copy cached opaque patches
                       (f.put, made with draw_patch over f.static) and small sprites (f.blit,
                       draw_sprite) for what changes with the state and suite.ui / suite.shake
                       at virtual time t; when ``anim`` is given draw the in-between picture
                       at ``phase`` (anim["before"] is the state before anim["action"]).
    Generic parts (background, title, "Level N", difficulty, buttons, instruction text,
    hud_lines, toast, completion card) are drawn by the Renderer."""

    background = (BG_TOP, BG_BOTTOM)
    accent = ACCENT

    def __init__(self, ui, proj: Projection):
        self.ui = ui
        self.proj = proj

    def draw_static(self, p: Painter) -> None:
        """The board's fixed parts, drawn into the static layer (supersampled painter)."""

    def draw_dynamic(self, f: Frame, suite: Suite, state: np.ndarray, t: int, anim: dict | None,
                     phase: float) -> None:
        """The parts that change with the state / UI state. ``anim`` (a suite animation
        record with the state before the move) and ``phase`` in (0, 1) are given for
        intermediate frames; then ``state`` is the state after the move."""

    def base_layer(self, static: np.ndarray, suite: Suite, state: np.ndarray, t: int, anim: dict | None,
                   phase: float) -> np.ndarray | None:
        """Optionally, a full frame to start this frame from instead of ``static`` (e.g. the
        static layer with the board as it stands, kept up to date incrementally), so that
        draw_dynamic only adds what moves. Called just before draw_dynamic, same arguments.
        A base kept up to date in place records what each update changed in ``base_changes``
        (a Changes; None: frames copy all of it)."""
        return None

    base_changes: "Changes | None" = None
    # the level screen's HUD (difficulty label, instructions, buttons) may be drawn into the
    # game's cached base, under the level's own static drawing: no pixel of one touches the
    # other. False for a drawing whose static parts cover the HUD's place (then the HUD is
    # drawn over them for every level)
    hud_under = True


_DRAWINGS: dict[str, type] | None = None


def drawings() -> dict[str, type]:
    """game id -> drawing class, discovered from the modules of longpuzzle.render."""
    global _DRAWINGS
    if _DRAWINGS is None:
        import longpuzzle.render as pkg
        found = {}
        for m in pkgutil.iter_modules(pkg.__path__):
            if m.name.startswith("_") or m.name in ("frame", "cli", "play"):
                continue
            mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
            g, d = getattr(mod, "GAME", None), getattr(mod, "DRAWING", None)
            if isinstance(g, str) and isinstance(d, type) and issubclass(d, GameDrawing):
                found[g] = d
        _DRAWINGS = found
    return _DRAWINGS


# ---- the renderer ------------------------------------------------------------------------

def level_key(level) -> tuple:
    """What the renderer's caches know a level by: its id AND its content digest, so a level
    replaced under the same id (an edited level file loaded in the same process) is drawn
    afresh instead of from the old level's cached drawing."""
    return (level.id, level.sha256)


class Renderer:
    """Renders suites at one (style, scale), with caches of static layers and game drawings."""

    def __init__(self, style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None):
        _init()
        self.proj = projection(style, float(scale), viewport)
        self.frame = Frame(self.proj)
        self._layers: dict[Any, np.ndarray] = {}
        self._drawings: dict[str, GameDrawing] = {}
        self._sprites: dict[Any, Any] = {}
        self._lock = threading.Lock()

    # -- static layers
    def _plane(self, p: Painter, bg) -> None:
        if p.is_3d:
            w, h = p.surf.get_size()
            for i in range(64):   # the table around the tilted plane
                c = mix(TABLE_TOP, TABLE_BOTTOM, (i + 0.5) / 64)
                pygame.draw.rect(p.surf, c, (0, h * i // 64, w, h // 64 + 2))
            corners = [(0, 0), (DESIGN_W, 0), (DESIGN_W, DESIGN_H), (0, DESIGN_H)]
            p.shadow(corners, alpha=90, dx=6, dy=10)
            p.prism(corners, shade(bg[1], 0.8), 14, z0=-14, top=bg[0], shadow=False)
        p.gradient_plane(*bg)

    def drawing(self, suite: Suite) -> GameDrawing | None:
        lvl = suite.level
        key = level_key(lvl)
        d = self._drawings.get(key)
        if d is None:
            cls = drawings().get(lvl.game)
            if cls is None:
                return None
            if len(self._drawings) > 256:
                self._drawings.clear()
            d = self._drawings[key] = cls(suite.game_ui(), self.proj)
        return d

    def static_layer(self, suite: Suite) -> np.ndarray:
        name = suite.screen["name"]
        lvl = suite.level if name == "level" else None
        # menus show the catalogue in use (its games, objectives, level counts): keyed by its content
        key = (name, suite.screen.get("game"), level_key(lvl) if lvl is not None else None, suite.direct,
               None if lvl is not None else catalog().content_hash)
        arr = self._layers.get(key)
        if arr is not None:
            return arr
        if len(self._layers) > 48:
            self._layers.clear()
        if name == "home":
            arr = draw_layer(self.proj, lambda p: self._draw_home(p, suite))
        elif name == "difficulty":
            arr = draw_layer(self.proj, lambda p: self._draw_difficulty(p, suite))
        else:
            # a level screen over a cached base (a LayerBase): the game's background and title
            # and the HUD every level of an objective shows alike (difficulty label,
            # instructions, buttons) are drawn once; what a level adds (its number and its
            # board) is drawn, and smoothed, alone. The HUD goes under the level's parts
            # instead of over them: no pixel of one touches the other (tested on every level
            # against the whole drawing, _draw_level), so the order does not show
            bg, title = self._level_look(suite), suite.puzzle.title
            cls = drawings().get(suite.level.game)
            if cls is None or cls.hud_under:
                hud = self._level_hud(suite)
                base = layer_base(self.proj, ("level", bg, title, hud),
                                  lambda p: (self._draw_level_base(p, bg, title), self._draw_level_hud(p, suite)))
                arr = base.over(lambda p: self._draw_level_own(p, suite))
            else:
                base = layer_base(self.proj, ("level", bg, title), lambda p: self._draw_level_base(p, bg, title))
                arr = base.over(lambda p: self._draw_level_rest(p, suite))
        arr.setflags(write=False)
        self._layers[key] = arr
        return arr

    def _draw_widgets(self, p: Painter, widgets, accent=ACCENT) -> None:
        for i, w in enumerate(widgets):
            draw_widget(p, w, accent)

    def _draw_home(self, p: Painter, suite: Suite) -> None:
        self._plane(p, (BG_TOP, BG_BOTTOM))
        from longpuzzle.engine.suite import HOME_SUBTITLE, HOME_TITLE
        p.text(HOME_TITLE, 270, 130, 54, INK, z=2)
        p.text(HOME_SUBTITLE, 270, 190, 28, MUTED, z=1)
        lay = suite.layout()
        for i, w in enumerate(lay.widgets):
            game = w.id.split(":", 1)[1]
            cls = drawings().get(game)
            acc = cls.accent if cls else CARD_ACCENTS[i % len(CARD_ACCENTS)]
            draw_card(p, w, acc, sub=None if cls else "")
        p.text("Tap a card to play", 270, 905, 22, MUTED)

    def _draw_difficulty(self, p: Painter, suite: Suite) -> None:
        g = suite.screen["game"]
        cls = drawings().get(g)
        acc = cls.accent if cls else ACCENT
        self._plane(p, cls.background if cls else (BG_TOP, BG_BOTTOM))
        p.text("Choose difficulty", 270, 110, 46, INK, z=2)
        p.text(get_puzzle(g).title, 270, 165, 30, acc, z=1)
        for w in suite.layout().widgets:
            if w.kind == "card":
                n = w.data[0] if w.data else 0
                draw_card(p, w, acc, sub=f"{n} level{'s' if n != 1 else ''}")
            else:
                draw_widget(p, w, acc)

    def _level_look(self, suite: Suite):
        cls = drawings().get(suite.level.game)
        return cls.background if cls else (BG_TOP, BG_BOTTOM)

    def _draw_level(self, p: Painter, suite: Suite) -> None:
        """A level screen's static layer in one go (the reference for the layered build)."""
        self._draw_level_base(p, self._level_look(suite), suite.puzzle.title)
        self._draw_level_rest(p, suite)

    def _draw_level_base(self, p: Painter, bg, title: str) -> None:
        self._plane(p, bg)
        p.text(title, 270, 36, 30, MUTED, z=1)

    def _draw_level_rest(self, p: Painter, suite: Suite) -> None:
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        acc = cls.accent if cls else ACCENT
        lvl = suite.level
        p.text(f"Level {lvl.number}", 270, u.header_y, 40, INK, z=1)
        p.text(difficulty_label(lvl.difficulty), 270, u.header_y + 32, 22, acc, z=1)
        p.text(u.instructions, 270, getattr(u, "instructions_y", 935), 19, MUTED, max_w=440)
        d = self.drawing(suite)
        if d is not None:
            d.draw_static(p)
        for w in u.buttons(suite.direct):
            draw_widget(p, w, acc)

    def _level_hud(self, suite: Suite) -> tuple:
        """What _draw_level_hud draws, as a key: equal for levels whose HUDs look alike."""
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        return (difficulty_label(suite.level.difficulty), u.header_y, u.instructions,
                getattr(u, "instructions_y", 935), cls.accent if cls else ACCENT,
                tuple(repr(w) for w in u.buttons(suite.direct)))

    def _draw_level_hud(self, p: Painter, suite: Suite) -> None:
        """The parts of _draw_level_rest that every level of an objective shows alike."""
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        acc = cls.accent if cls else ACCENT
        p.text(difficulty_label(suite.level.difficulty), 270, u.header_y + 32, 22, acc, z=1)
        p.text(u.instructions, 270, getattr(u, "instructions_y", 935), 19, MUTED, max_w=440)
        for w in u.buttons(suite.direct):
            draw_widget(p, w, acc)

    def _draw_level_own(self, p: Painter, suite: Suite) -> None:
        """The parts of _draw_level_rest that are the level's own: its number and board."""
        p.text(f"Level {suite.level.number}", 270, suite.game_ui().header_y, 40, INK, z=1)
        d = self.drawing(suite)
        if d is not None:
            d.draw_static(p)

    # -- frames
    def render(self, suite: Suite, t: int | None = None) -> np.ndarray:
        # one renderer (frame buffer and caches) serves every thread: one frame at a time
        with self._lock:
            return self._render(suite, t)

    def render_delta(self, suite: Suite, t: int | None = None) -> tuple[np.ndarray, tuple | None]:
        """(the frame, (the frame this renderer handed out before it, the px box (x0, y0,
        x1, y1) outside which the two have the same pixels) or None when not known): what a
        frame store needs to keep only what changed (another thread's frame may come
        between: compare the first with the frame you hold)."""
        with self._lock:
            out = self._render(suite, t)
            f = self.frame
            return out, (f.delta if f._last is not None and f._last[0] is out else None)

    def _render(self, suite: Suite, t: int | None = None) -> np.ndarray:
        if suite.proj.style != self.proj.style or suite.proj.scale != self.proj.scale:
            pass   # the suite's own setting only fixes its input coordinates; we draw ours
        f = self.frame
        static = self.static_layer(suite)
        f.static = static
        t = suite.clock if t is None else t
        if suite.screen["name"] != "level":
            return f.present(static)              # a menu: its layer, nothing drawn over it
        else:
            anim, phase = None, 1.0
            for a in suite.anims:
                if a["t0"] <= t < a["t1"]:
                    anim, phase = a, (t - a["t0"]) / max(1, a["t1"] - a["t0"])
            d = self.drawing(suite)
            state = np.asarray(suite.session.state)
            base = d.base_layer(static, suite, state, t, anim, phase) if d is not None else None
            if base is None:
                f.start(static)
            else:
                f.start(base, d.base_changes)
            if d is not None:
                d.draw_dynamic(f, suite, state, t, anim, phase)
            u = suite.game_ui()
            for i, line in enumerate(u.hud_lines(suite.session)):
                self._text_sprite(f, line, 270, u.header_y + 62 + 26 * i, 22)
            if suite.toast and suite.toast["t0"] <= t < suite.toast["until"]:
                self._toast(f, suite.toast["text"], getattr(suite.game_ui(), "toast_y", TOAST_Y))
            if suite.complete and anim is None:
                self._card(f, suite)
        return f.finish()

    def _text_sprite(self, f: Frame, text: str, x: float, y: float, size: float, color=INK) -> None:
        key = ("text", text, x, y, size, color)
        sp = self._sprites.get(key)
        if sp is None:
            w = 12 + 0.6 * size * len(text)
            r = Rect.centred(x, y, w, size * 1.4)
            box = px_box(self.proj, [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], margin=2)
            sp = (draw_sprite(self.proj, box, lambda p: p.text(text, x, y, size, color), color), box)
            if len(self._sprites) < 2048:
                self._sprites[key] = sp
        f.blit(sp[0], sp[1][0], sp[1][1])

    def _toast(self, f: Frame, text: str, y: float) -> None:
        key = ("toast", text, y)
        sp = self._sprites.get(key)
        if sp is None:
            w = min(480, 30 + 11 * len(text))
            r = Rect.centred(270, y, w, 48)
            box = px_box(self.proj, rounded_rect_points(r, 24), zmax=4, margin=3)

            def draw(p):
                p.rrect(r, 24, (38, 50, 56), z=2, height=3 if p.is_3d else 0, top=(38, 50, 56))
                p.text(text, 270, y, 24, WHITE, z=5 if p.is_3d else 0)
            sp = self._sprites[key] = (draw_sprite(self.proj, box, draw, (38, 50, 56)), box)
        f.blit(sp[0], sp[1][0], sp[1][1])

    def _card(self, f: Frame, suite: Suite) -> None:
        u = suite.game_ui()
        # the card dims the frame drawn so far: the board, and what else shows at that moment
        # (a toast, HUD lines, the game's UI state), so the layer is keyed by those pixels, not
        # by the state alone (a card cached under another toast was shown in place of this
        # one's: the frame then depended on what the renderer had drawn before)
        under = f.pixels()
        last = suite.last_level()
        key = ("card", level_key(suite.level), suite.direct, last, xxhash.xxh3_128_intdigest(under))
        layer = self._layers.get(key)
        if layer is None:
            cls = drawings().get(suite.level.game)
            acc = cls.accent if cls else ACCENT
            base = (under.astype(np.uint16) * 5 // 10).astype(np.uint8)
            box = (0, 0, self.proj.width, self.proj.height)

            def draw(p):
                p.rrect(CARD, 26, (250, 250, 252), z=0, height=12, top=WHITE)
                p.text("All complete!" if last else u.complete_title, 270, CARD.y0 + 60, 48, INK, z=12)
                p.text(u.complete_text, 270, CARD.y0 + 108, 24, MUTED, z=12)
                for w in suite.layout().widgets:
                    draw_widget(p, w, acc, z=12)
            layer = draw_patch(self.proj, base, box, draw)
            layer.setflags(write=False)
            self._layers[key] = layer
        # the card covers the whole screen: the frame is the layer itself (not a copy of it;
        # the frame's array keeps the board under it, which the next frame starts from)
        f.replace(layer)


def draw_card(p: Painter, w: Widget, accent, sub=None) -> None:
    r = w.shape
    h = 10 if p.is_3d else 0
    p.rrect(r, 18, (238, 242, 246), height=h, top=WHITE)
    p.outline(rounded_rect_points(r, 18), mix(accent, WHITE, 0.55), z=h, width=2)
    stripe = Rect(r.x0 + 14, r.y0 + 16, r.x0 + 24, r.y1 - 16)
    p.rrect(stripe, 5, accent, z=h)
    cx = (r.x0 + r.x1) / 2
    if sub:
        p.text(w.label, cx, r.center[1] - 13, 38, INK, z=h)
        p.text(sub, cx, r.center[1] + 24, 21, MUTED, z=h)
    elif sub == "":
        p.text(w.label, cx, r.center[1] - 10, 36, MUTED, z=h)
        p.text("coming soon", cx, r.center[1] + 22, 19, MUTED, z=h)
    else:
        p.text(w.label, cx, r.center[1], 38, INK, z=h)


def draw_widget(p: Painter, w: Widget, accent=ACCENT, z=0.0) -> None:
    h = 8 if p.is_3d else 0
    if w.kind == "round_button" and isinstance(w.shape, Circle):
        c = w.shape
        p.circle(c.cx, c.cy, c.r, shade(accent, 0.8), z=z, height=h, top=WHITE,
                 outline=accent, width=3)
        size = 17 if c.r < 30 else 19 if c.r < 34 else 22
        p.text(w.label, c.cx, c.cy, size, INK, z=z + h, max_w=2 * c.r - 6)
    elif w.kind in ("pill_button", "button"):
        r = w.shape
        p.rrect(r, min(r.h / 2, 26), shade(accent, 0.7), z=z, height=h, top=accent)
        p.text(w.label, *r.center, 26 if r.h >= 50 else 22, WHITE, z=z + h)
    elif w.kind == "card":
        draw_card(p, w, accent)


# ---- module-level API ----------------------------------------------------------------------

_RENDERERS: dict[tuple, Renderer] = {}


def renderer(style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None) -> Renderer:
    """The shared renderer of a (style, scale), or of a style letterboxed into a viewport page."""
    key = (style, float(scale), None if viewport is None else tuple(viewport))
    r = _RENDERERS.get(key)
    if r is None:
        r = _RENDERERS[key] = Renderer(style, scale, viewport)
    return r


def render(suite: Suite | str = "home", style: str | None = None, scale: float | None = None,
           t: int | None = None) -> np.ndarray:
    """One frame (H, W, 3) uint8 of a Suite (or of a fresh suite started at a level id /
    "home"). Style and scale default to the suite's own (the frame its actions refer to)."""
    if isinstance(suite, str):
        suite = Suite(suite, style=style or "2d", scale=scale or 1.0)
    if style is None and scale is None:
        return renderer(suite.style, suite.scale, suite.viewport).render(suite, t)
    style = style or suite.style
    scale = suite.scale if scale is None else scale
    return renderer(style, scale).render(suite, t)


def save_png(frame: np.ndarray, path) -> None:
    from PIL import Image
    Image.fromarray(np.asarray(frame, dtype=np.uint8), "RGB").save(path, format="PNG", optimize=False)


class Screen:
    """A Suite with its renderer: what an agent harness or the play window drives.

    ``act(action)`` dispatches one GUI action and returns ``(feedback, frames)``: the
    ``frames_per_move`` intermediate frames of every animation the action started, then
    the settled frame."""

    def __init__(self, start: str | Suite = "home", *, style: str = "2d", scale: float = 1.0,
                 frames_per_move: int = 0, direct: bool = False, viewport: tuple[int, int] | None = None):
        self.suite = start if isinstance(start, Suite) else Suite(start, style=style, scale=scale, direct=direct,
                                                                  viewport=viewport)
        if not isinstance(frames_per_move, int) or isinstance(frames_per_move, bool) or frames_per_move < 0:
            from longpuzzle.engine.geometry import SettingsError
            raise SettingsError(f"frames_per_move must be a non-negative integer, not {frames_per_move!r}")
        self.frames_per_move = frames_per_move
        self.renderer = renderer(self.suite.style, self.suite.scale, self.suite.viewport)

    def frame(self) -> np.ndarray:
        return self.renderer.render(self.suite)

    def act(self, action) -> tuple[Any, list[np.ndarray]]:
        fb = self.suite.dispatch(action)
        frames = []
        if self.frames_per_move:
            n = self.frames_per_move
            for a in self.suite.anims:
                if a["t1"] > a["t0"]:
                    for i in range(n):
                        t = a["t0"] + (a["t1"] - a["t0"]) * (i + 1) / (n + 1)
                        frames.append(self.renderer.render(self.suite, int(t)))
        frames.append(self.frame())
        return fb, frames

    def save(self, path) -> None:
        save_png(self.frame(), path)
