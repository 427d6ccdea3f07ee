"""Layers, patches and sprites, drawn supersampled and smoothed: draw_layer (a whole
frame), LayerBase and layer_base (a cached base picture that layers drawn over it cost
only what they touch), draw_patch / draw_sprite / px_box (a game's cached pieces), and
for bases a game keeps up to date in place: Changes (what changed), BoxCache (boxes as
composed before) and compose_clipped."""

from __future__ import annotations

import math
import threading
from typing import Any
from collections.abc import Callable

import numpy as np
import pygame

from longpuzzle.engine.geometry import Projection, supersampled_projection
from longpuzzle.render.frame.kernels import (_smooth_into, _smooth_restore, enlarged_surface, halved_surface,
                                            smooth_surface)
from longpuzzle.render.frame.paint import SS, Painter


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
        self.big = supersampled_projection(proj.style, proj.scale, SS, proj.lang)
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


_BASES: dict[tuple, LayerBase] = {}
_BASES_LOCK = threading.Lock()
BASES_KEPT = 6                  # about 18 MB each at scale 1


def layer_base(proj: Projection, key, draw_base: Callable[[Painter], None] | None = None) -> LayerBase:
    """The LayerBase of ``key`` (a hashable name of what ``draw_base`` draws) at ``proj``,
    built on first use; the least recently used are dropped past BASES_KEPT."""
    k = (proj.style, proj.scale, proj.viewport, proj.lang, key)
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
    big = enlarged_surface(background[y0:y1, x0:x1], SS)
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
    return halved_surface(big)                     # (smoothscale's pixels to (x1 - x0, y1 - y0))


def trim_sprite(sprite: pygame.Surface, box) -> tuple:
    """(sprite, its px box) cut down to the smallest box holding every pixel it does not
    leave fully transparent: the same pixels wherever it is blended (a pixel of alpha 0
    leaves what is under it as it was), and the boxes it changes - which frames copy, hash
    and encode - no larger than what it draws (e.g. a box made with room for the largest
    piece a sprite of its kind may hold)."""
    r = sprite.get_bounding_rect()
    if r.w == 0 or r.h == 0 or r.size == sprite.get_size():
        return sprite, box
    x0, y0 = box[0], box[1]
    return sprite.subsurface(r).copy(), (x0 + r.x, y0 + r.y, x0 + r.right, y0 + r.bottom)


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
