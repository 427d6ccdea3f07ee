"""The frame being composed (Frame): pooled frame arrays shared with a pygame surface,
started as a copy of a base (only what changed is copied), patches put and sprites
blended (and their blends kept), finished read-only, with the box in which a frame
differs from the one before (its delta)."""

from __future__ import annotations

import sys

import numpy as np
import pygame
import xxhash

from longpuzzle.engine.geometry import Projection
from longpuzzle.render.frame.layers import Changes

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
        # the frame handed out last: (array, base, its version, boxes drawn over it, the
        # base's Changes or None), and
        # ``delta``: (the frame before it, the px box outside which the two are the same
        # pixels, (0, 0, 0, 0) for none, and the rows inside it where they may differ: disjoint
        # (y0, y1) spans top to bottom, () for none) or None when that is not known
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
        self.delta = (picture, (0, 0, 0, 0), ()) if last is not None and last[0] is picture else None
        self._last = (picture, picture, 0, [], None)    # the picture is its own base, nothing drawn over
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
        self._last = (out, base, version, drawn, changes)
        self._cur = (None, None, 0, None)
        return out

    def _delta(self, base, version, changes, drawn) -> tuple | None:
        """Frame.delta of the frame being finished: both frames are their base with boxes
        drawn over it, so they differ only inside the boxes drawn over either and the boxes
        the base changed in between (unknown when either was drawn on directly)."""
        last = self._last
        if last is None or not self.track:
            return None
        return _delta_between(last[0], last[1], last[2], last[3], base, version, changes, drawn)

    def delta_since(self, prev) -> tuple | None:
        """The delta of the frame handed out last relative to ``prev``, an earlier frame of
        this Frame that is still held (so its array was not reused), as ``delta`` is relative
        to the frame just before it: known when both were drawn over the same base, all of
        it through ``put`` and ``blit``, and the base's changes since ``prev`` are known
        (several streams of frames on one renderer, e.g. the envs of a vector env, each keep
        their own deltas); else None."""
        last = self._last
        if last is None or prev is None:
            return None
        if prev is last[0]:
            return prev, (0, 0, 0, 0), ()
        if not self.track:
            return None
        i = next((k for k, a in enumerate(self._pool) if a is prev), None)
        rec = self._made.get(i) if i is not None else None        # (its base, version, boxes drawn)
        if rec is None:
            return None
        return _delta_between(prev, *rec, last[1], last[2], last[4], last[3])

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


def _delta_between(before: np.ndarray, b_base, b_version: int, b_drawn: list | None,
                   base, version: int, changes: Changes | None, drawn: list | None) -> tuple | None:
    """The delta relative to ``before`` (drawn over ``b_base`` at its version ``b_version``,
    with the boxes ``b_drawn`` drawn over it) of a frame drawn over ``base`` at ``version``
    (``changes`` its Changes, None for a base without) with the boxes ``drawn``: both are
    their base with boxes drawn over it, so they differ only inside the boxes drawn over
    either and the boxes the base changed in between; None when that is not known (another
    base, a frame drawn on directly, a base changed since it was drawn over)."""
    if b_base is not base or b_drawn is None or drawn is None:
        return None
    if changes is not None:
        if changes.version != version:
            return None
        ch = changes.since(b_version)
    else:
        ch = [] if not base.flags.writeable and version == 0 == b_version else None
    if ch is None:
        return None
    return _boxes_delta(before, ch + b_drawn + drawn)


def _boxes_delta(before: np.ndarray, boxes: list) -> tuple:
    """A delta (Frame.delta) relative to ``before`` of a frame that differs from it only
    inside ``boxes``: their bounding box and the rows they cover, as disjoint spans top to
    bottom (a HUD line at the top and a counter at the bottom make a box of the whole
    frame, not their rows)."""
    if not boxes:
        return before, (0, 0, 0, 0), ()
    if len(boxes) == 1:
        b = boxes[0]
        return before, b, ((b[1], b[3]),)
    rows = sorted((b[1], b[3]) for b in boxes)
    spans = []
    a, z = rows[0]
    for y0, y1 in rows:
        if y0 > z:
            spans.append((a, z))
            a = y0
        if y1 > z:
            z = y1
    spans.append((a, z))
    return before, (min(b[0] for b in boxes), rows[0][0], max(b[2] for b in boxes), z), tuple(spans)
