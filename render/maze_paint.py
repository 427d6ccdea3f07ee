"""Drawing of Maze Paint: the board (static), painted tiles and the ball (dynamic).

The board is drawn unpainted inside the static layer; the board painted everywhere is the
same shapes in other colours. Each floor cell owns the pixels where the two pictures differ
(assigned through the inverse projection, so raised walls in 3d occlude correctly); a frame
copies the painted cells' pixels with a mask and blits the cached ball sprite.

A cell's pixels, its mask and its painted picture are made when the cell is first shown
painted, from its neighbourhood alone: the picture under the board (kept from the static
layer's drawing), the painted shapes that reach the neighbourhood drawn over it at twice
the size (fills clipped to it, which leaves the pixels inside unchanged; outlines whole),
smoothed there (a 2x smoothscale averages each 2x2 block on its own), and the owner of each
of its pixels computed as for the whole board (the same float operations per pixel). So a
level's first frame costs the unpainted board and the cell the ball starts on, and the
bytes are those of drawing both boards whole.
"""

from __future__ import annotations

import math
import threading
from functools import cache

import numpy as np
import pygame

from longpuzzle.engine.geometry import Rect, corner_trig, rounded_rect_points
from longpuzzle.puzzles.maze_paint import HEADER
from longpuzzle.render.frame import (
    Changes, GameDrawing, Painter, Recorder, draw_sprite, fill_rects, layer_base, mix, outline_rects, shade,
    smooth_surface,
)

WALL_Z = 24.0
FLOOR = (238, 241, 246)
PAINT = (255, 112, 67)
WALL = (69, 90, 100)
WALL_TOP = (96, 125, 139)
BALL = (255, 255, 255)
BALL_RIM = (38, 50, 56)
RESET_CELLS = 12          # more cells than this change at once: the board is laid again from the static layer


_UNSET = object()
_SCRATCH: dict = {}                 # (w, h) -> a surface twice the frame's size, for painting cells
_SCRATCH_LOCK = threading.Lock()


def _scratch(like: pygame.Surface, size: tuple[int, int]) -> pygame.Surface:
    s = _SCRATCH.get(size)
    if s is None or s.get_bitsize() != like.get_bitsize():
        s = _SCRATCH[size] = pygame.Surface(size, 0, like)
    return s


def _point_lists(polys: np.ndarray) -> list[list[tuple[float, float]]]:
    """(n, k, 2) float px points -> n lists of k (x, y) tuples, the same floats as tolist's.
    Tuples, not tolist's lists of two: a tuple of floats is no container the garbage
    collector keeps track of once it has seen it, so a board's few thousand points, kept
    with the level, do not make every later collection longer (nor more frequent)."""
    n, k = polys.shape[:2]
    flat = list(zip(polys[:, :, 0].ravel().tolist(), polys[:, :, 1].ravel().tolist()))
    return [flat[i:i + k] for i in range(0, n * k, k)]


def _op_bounds(ops) -> np.ndarray:
    """(n, 4) float64: each recorded polygon's bbox (min x, min y, max x, max y) in px."""
    n = np.array([len(pts) for _, pts, _ in ops])
    q = np.array([xy for _, pts, _ in ops for xy in pts], np.float64)
    at = np.concatenate([[0], np.cumsum(n)[:-1]])
    return np.concatenate([np.minimum.reduceat(q, at), np.maximum.reduceat(q, at)], axis=1)


@cache
def _owner_kernel():
    from numba import njit

    @njit(cache=True, nogil=True)
    def owners(gx, gy, bx0, by0, size, rows, cols, floor, out):
        # MazePaintDrawing._owners_numpy point by point: gx, gy (n,) finite design points;
        # bx0, by0 the board's top left, size a cell's side; floor (rows * cols,) bool; out (n,)
        for i in range(gx.shape[0]):
            fc = (gx[i] - bx0) / size
            fr = (gy[i] - by0) / size
            c = min(max(int(np.floor(fc)), 0), cols - 1)
            r = min(max(int(np.floor(fr)), 0), rows - 1)
            cell = r * cols + c
            if not floor[cell]:
                ox, oy = fc - (c + 0.5), fr - (r + 0.5)
                c2, r2 = c, r
                if abs(ox) > abs(oy):
                    c2 = c + (1 if ox > 0 else -1 if ox < 0 else 0)
                else:
                    r2 = r + (1 if oy > 0 else -1 if oy < 0 else 0)
                if 0 <= c2 < cols and 0 <= r2 < rows and floor[r2 * cols + c2]:
                    cell = r2 * cols + c2
                else:
                    cell = -1
            out[i] = cell
    return owners


MASK_RECTS = 16              # a cell's mask copied as at most this many rectangles, else by numpy's masked copy


def mask_rects(mask: np.ndarray) -> list[tuple[int, int, int, int]] | None:
    """The pixels of a cell's mask (h, w, 3) bool, its channels alike, as rectangles
    (y0, y1, x0, x1) relative to its box: runs of owned pixels in rows whose runs are the
    same, merged (a cell's box less the strips its neighbours own: 2 or 3 a cell in 2d, up
    to about 10 in 3d). Copying those slices gives the bytes of np.copyto(where=mask) at a
    fraction of its cost (about 25 us for an 85 x 85 px cell). None when the channels
    differ or it takes more than MASK_RECTS rectangles."""
    own = mask[:, :, 0]
    if not np.array_equal(own, mask.all(axis=2)) or not np.array_equal(own, mask.any(axis=2)):
        return None
    edges = np.diff(own.astype(np.int8), axis=1, prepend=0, append=0)
    out: list[list[int]] = []
    open_: dict[tuple[int, int], list[int]] = {}       # (x0, x1) -> its rectangle, still growing
    for y in range(own.shape[0]):
        runs = zip(np.flatnonzero(edges[y] == 1).tolist(), np.flatnonzero(edges[y] == -1).tolist())
        now = {}
        for run in runs:
            r = open_.get(run)
            if r is None:
                r = [y, y + 1, run[0], run[1]]
                out.append(r)
                if len(out) > MASK_RECTS:
                    return None
            else:
                r[1] = y + 1
            now[run] = r
        open_ = now
    return [tuple(r) for r in out]


class MazePaintDrawing(GameDrawing):
    background = ((232, 240, 250), (206, 220, 238))
    accent = (94, 53, 177)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        lv = ui.level.lv
        self.rows, self.cols = ui.rows, ui.cols
        n = self.rows * self.cols
        self.floor = np.asarray(lv[HEADER:HEADER + n]).astype(bool)
        self._masks = None
        self._painted = None
        self._lazy = None             # what cells are painted from when first shown (draw_static)
        self._balls: dict = {}
        self._ops: dict = {}
        self._bounds: dict = {}        # key of _ops -> their _op_bounds, when known from _record_flat
        # key of _ops -> (the surface size, the index range [i0, i1) of the cells' outlines in
        # the ops, their outline_rects (i1 - i0, k, 4)) when known from _record_flat: the
        # outlines drawn as those rects' fills (one compiled loop) instead of polygons
        self._outlines: dict = {}
        # the unpainted board's colours that painting changes (nothing else uses them)
        self._recolour = {FLOOR: PAINT, mix(FLOOR, WALL, 0.12): shade(PAINT, 0.9)}

    # -- board
    def board_rect(self) -> Rect:
        u = self.ui
        w, h = self.cols * u.cell, self.rows * u.cell
        return Rect.centred(270, 496, w, h)

    def draw_board(self, p: Painter, painted: bool, record_only: bool = False) -> None:
        """The board, unpainted or with every floor cell painted (polygons only: the shapes
        are projected once per projection and replayed in either colouring)."""
        key = (p.proj.style, p.proj.scale, p.ox, p.oy)
        ops = self._ops.get(key)
        if ops is None:
            if p.proj.is_3d:
                rec = Recorder(p.proj, (p.ox, p.oy))
                self._draw_board(rec, False)
                ops = rec.ops
            else:
                ops, self._bounds[key], self._outlines[key] = self._record_flat(p.proj, p.ox, p.oy)
            self._ops[key] = ops
        if record_only:
            return
        recolour = self._recolour if painted else None
        out = self._outlines_for(key, p)
        if out is None:
            p.replay(ops, recolour)
            return
        i0, i1, rects = out                 # the same pixels, in the same order
        p.replay(ops[:i0], recolour)
        color = ops[i0][0]
        p._mark(fill_rects(p.surf, recolour.get(color, color) if recolour else color, rects))
        p.replay(ops[i1:], recolour)

    def _outlines_for(self, key, p: Painter):
        """self._outlines[key] when its rects are for ``p``'s surface, a plain Painter's."""
        o = self._outlines.get(key)
        if o is None or p.surf is None or type(p)._polygon is not Painter._polygon or o[0] != p.surf.get_size():
            return None
        return o[1:]

    def _draw_board(self, p: Painter, painted: bool) -> None:
        u = self.ui
        br = self.board_rect()
        pad = 10
        outer = Rect(br.x0 - pad, br.y0 - pad, br.x1 + pad, br.y1 + pad)
        p.rrect(outer, 14, WALL)
        for cell in range(self.rows * self.cols):
            if self.floor[cell]:
                r = u.cell_rect(cell)
                p.poly([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], PAINT if painted else FLOOR)
        line = mix(FLOOR, WALL, 0.12) if not painted else shade(PAINT, 0.9)
        for cell in range(self.rows * self.cols):
            if self.floor[cell]:
                r = u.cell_rect(cell)
                p.outline([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], line, width=1)
        walls = [c for c in range(self.rows * self.cols) if not self.floor[c]]
        inset = 0.0 if p.is_3d else u.cell * 0.06
        for cell in sorted(walls):       # row-major = back to front
            r = u.cell_rect(cell)
            rr = Rect(r.x0 + inset, r.y0 + inset, r.x1 - inset, r.y1 - inset)
            if p.is_3d:
                p.prism([(rr.x0, rr.y0), (rr.x1, rr.y0), (rr.x1, rr.y1), (rr.x0, rr.y1)], WALL, WALL_Z,
                        top=WALL_TOP, shadow=False)
            else:
                p.poly(rounded_rect_points(rr, u.cell * 0.12), WALL_TOP)
        if p.is_3d:          # the rim around the board
            for r in (Rect(outer.x0, outer.y0, outer.x1, br.y0), Rect(outer.x0, br.y0, br.x0, br.y1),
                      Rect(br.x1, br.y0, outer.x1, br.y1), Rect(outer.x0, br.y1, outer.x1, outer.y1)):
                p.prism([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], WALL, WALL_Z, top=WALL_TOP,
                        shadow=False)

    def _record_flat(self, proj, ox: float, oy: float) -> tuple[list, np.ndarray, tuple | None]:
        """(the polygons a Recorder records from _draw_board in 2d (unpainted), their
        _op_bounds, the cells' outlines as rects (self._outlines) or None): the cells and
        walls computed all at once, the same float operations in the same order as
        cell_rect, rounded_rect_points and Painter.pts, so the same points (tested)."""
        u = self.ui
        rec = Recorder(proj, (ox, oy))
        br = self.board_rect()
        pad = 10
        rec.rrect(Rect(br.x0 - pad, br.y0 - pad, br.x1 + pad, br.y1 + pad), 14, WALL)
        sx, sy, pox, poy = proj.sx, proj.sy, proj.ox, proj.oy

        def px(xs, ys):               # design points (n, k) -> px points (n, k, 2), as Painter.pts
            return np.stack([xs * sx + pox - ox, ys * sy + poy - oy], axis=-1)

        def rects(cells):             # u.cell_rect of each cell: (x0, y0, x1, y1) arrays
            r, c = np.divmod(cells, self.cols)
            cx = 270 + (c - (self.cols - 1) / 2) * u.cell
            cy = 496 + (r - (self.rows - 1) / 2) * u.cell
            return cx - u.cell / 2, cy - u.cell / 2, cx + u.cell / 2, cy + u.cell / 2

        x0, y0, x1, y1 = rects(np.flatnonzero(self.floor))
        quads_arr = px(np.stack([x0, x1, x1, x0], axis=1), np.stack([y0, y0, y1, y1], axis=1))
        ops = rec.ops
        quads = _point_lists(quads_arr)   # (fills and outlines share the point lists: nothing changes them)
        ops += [(FLOOR, q, 0) for q in quads]
        wpx = max(1, int(round(1 * proj.local_scale(0.0, 0.0))))          # Painter.outline's width 1
        line = mix(FLOOR, WALL, 0.12)
        ops += [(line, q, wpx) for q in quads]
        x0, y0, x1, y1 = rects(np.flatnonzero(~self.floor))                # row-major: back to front
        inset = u.cell * 0.06
        x0, y0, x1, y1 = x0 + inset, y0 + inset, x1 - inset, y1 - inset
        rad = np.maximum(0.0, np.minimum(np.minimum(u.cell * 0.12, (x1 - x0) / 2), (y1 - y0) / 2))
        if len(rad) and not (rad > 0).all():
            raise AssertionError("a wall without rounded corners")      # walls are cells: never
        xs, ys = [], []
        for (ccx, ccy), trig in zip(((x1 - rad, y0 + rad), (x1 - rad, y1 - rad), (x0 + rad, y1 - rad),
                                     (x0 + rad, y0 + rad)), corner_trig(6)):
            cos, sin = np.array(trig).T
            xs.append(ccx[:, None] + rad[:, None] * cos[None, :])
            ys.append(ccy[:, None] + rad[:, None] * sin[None, :])
        walls = px(np.concatenate(xs, axis=1), np.concatenate(ys, axis=1))
        ops += [(WALL_TOP, q, 0) for q in _point_lists(walls)]
        # every polygon's bbox (_op_bounds), from the arrays: the frame, the cells twice, the walls
        cells, frame = np.concatenate([quads_arr.min(axis=1), quads_arr.max(axis=1)], axis=1), _op_bounds(ops[:1])
        bounds = np.concatenate([frame, cells, cells, np.concatenate([walls.min(axis=1), walls.max(axis=1)], axis=1)])
        # the outlines as rects where every one is a rectangle with integral corners (at twice
        # the size, cells of a whole or half design px: the usual case)
        size = (proj.width, proj.height)
        orects = outline_rects(quads_arr, wpx, size)
        n = len(quads)
        outlines = None if orects is None else (size, 1 + n, 1 + 2 * n, orects)
        return ops, bounds, outlines

    def draw_static(self, p: Painter) -> None:
        br = self.board_rect()
        p.shadow(rounded_rect_points(Rect(br.x0 - 10, br.y0 - 10, br.x1 + 10, br.y1 + 10), 14), alpha=50, dx=6, dy=10)
        sw, sh = p.surf.get_size()
        if (sw, sh) == (2 * self.proj.width, 2 * self.proj.height) and (p.ox, p.oy) == (0.0, 0.0):
            # the picture under the board, kept: cells are painted from it when first shown
            self.draw_board(p, painted=False, record_only=True)
            key = (p.proj.style, p.proj.scale, p.ox, p.oy)
            ops = self._ops[key]
            bounds = self._bounds[key] if key in self._bounds else _op_bounds(ops)
            x0, y0 = max(0, int(bounds[:, 0].min()) - 4) // 2, max(0, int(bounds[:, 1].min()) - 4) // 2
            x1, y1 = min(sw, int(bounds[:, 2].max()) + 6) // 2, min(sh, int(bounds[:, 3].max()) + 6) // 2
            box2 = pygame.Rect(2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0))
            if p.base is not None and p.dirty is not None and box2.collidelist(p.dirty) < 0:
                # nothing drawn there yet (2d: the level's number is above the board): the
                # picture under the board is the painter's base, which is never drawn on
                under, under_at = p.base, (0, 0)
            else:
                under, under_at = pygame.Surface(box2.size, 0, p.surf), box2.topleft
                under.blit(p.surf, (0, 0), box2)
            self._lazy = {"box": (x0, y0, x1, y1), "under": under, "under_at": under_at, "ops": ops,
                          "bounds": bounds, "outlines": self._outlines_for(key, p)}
        else:
            self._lazy = None
        self.draw_board(p, painted=False)
        if self._lazy is not None:
            # the cells painted at the start, from the board just drawn: a level's first frame
            # paints them without drawing the painted shapes (_paint_from_board)
            pre = self._lazy["pre"] = {}
            for cell in np.flatnonzero(np.asarray(self.ui.level.initial[2:]) != 0).tolist():
                region = self._cell_region(cell)
                paint = None if region is None else self._paint_from_board(p.surf, *region)
                if paint is not None:
                    pre[cell] = paint

    def _owners(self, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        """The floor cell owning each pixel (-1: none), from the design point of its centre
        (gx, gy): its cell, or for a pixel over a wall the floor cell beside it on the side
        it leans to. Elementwise: the same answer for a pixel, whatever else is asked.
        Compiled (_owner_kernel) for finite points, the same operations as _owners_numpy."""
        gx, gy = np.ascontiguousarray(gx, np.float64).ravel(), np.ascontiguousarray(gy, np.float64).ravel()
        if not (np.isfinite(gx).all() and np.isfinite(gy).all()):
            return self._owners_numpy(gx, gy)
        br = self.board_rect()
        out = np.empty(len(gx), np.int64)
        _owner_kernel()(gx, gy, float(br.x0), float(br.y0), float(self.ui.cell), self.rows, self.cols, self.floor, out)
        return out

    def _owners_numpy(self, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        """_owners with numpy (any points)."""
        u = self.ui
        br = self.board_rect()
        fc = (gx - br.x0) / u.cell
        fr = (gy - br.y0) / u.cell
        c = np.clip(np.floor(fc).astype(int), 0, self.cols - 1)
        r = np.clip(np.floor(fr).astype(int), 0, self.rows - 1)
        cell = r * self.cols + c
        bad = ~self.floor[cell]
        if bad.any():
            ox, oy = fc - (c + 0.5), fr - (r + 0.5)
            horiz = np.abs(ox) > np.abs(oy)
            c2 = np.where(horiz, c + np.sign(ox).astype(int), c)
            r2 = np.where(horiz, r, r + np.sign(oy).astype(int))
            ok = (c2 >= 0) & (c2 < self.cols) & (r2 >= 0) & (r2 < self.rows)
            cell2 = np.where(ok, np.clip(r2, 0, self.rows - 1) * self.cols + np.clip(c2, 0, self.cols - 1), 0)
            ok &= self.floor[cell2]
            cell = np.where(bad, np.where(ok, cell2, -1), cell)
        return cell

    def _prepare(self, static: np.ndarray) -> None:
        """Per-cell pixel masks: where the painted board differs from the unpainted one."""
        if self._lazy is not None:
            self._static = static
            self._masks, self._painted = {}, None      # made per cell when first painted (_cell_mask)
            self._board_box = self._lazy["box"]
            return
        black = layer_base(self.proj, "black")    # only the board's rects are drawn and smoothed
        painted, b1 = black.over_box(lambda p: self.draw_board(p, True))
        plain, b2 = black.over_box(lambda p: self.draw_board(p, False))
        boxes = [b for b in (b1, b2) if b is not None]
        if not boxes:
            self._masks, self._painted, self._board_box = {}, painted, (0, 0, 0, 0)
            return
        X0, Y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        X1, Y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        d = painted[Y0:Y1, X0:X1] != plain[Y0:Y1, X0:X1]                         # the same elsewhere
        diff = d[:, :, 0] | d[:, :, 1] | d[:, :, 2]          # (any over the channel axis is far slower)
        ys, xs = np.nonzero(diff)
        ys += Y0
        xs += X0
        pr = self.proj
        # the design point of every pixel centre, by rows and columns of the box broadcast
        # (the same float operations per pixel as from_px_array of the pixels alone)
        gx, gy = pr.from_px_array(np.arange(X0, X1)[None, :] + 0.5, np.arange(Y0, Y1)[:, None] + 0.5)
        gx, gy = np.broadcast_to(gx, diff.shape), np.broadcast_to(gy, diff.shape)
        cell = self._owners(gx[ys - Y0, xs - X0], gy[ys - Y0, xs - X0])
        # each cell's pixels: a label image over the box and the cell's bounding box; its
        # mask is cut from the label image when the cell is first painted
        keep = cell >= 0
        ys, xs = ys[keep], xs[keep]
        cell = cell[keep].astype(np.int16 if self.rows * self.cols < 32768 else np.int32)
        label = np.full((Y1 - Y0, X1 - X0), -1, cell.dtype)
        label[ys - Y0, xs - X0] = cell
        order = np.argsort(cell, kind="stable")                # a radix sort for 16-bit keys
        ys, xs, cell = ys[order], xs[order], cell[order]
        masks = {}
        if len(cell):
            starts = np.concatenate([[0], np.flatnonzero(np.diff(cell)) + 1])
            y0s, y1s = np.minimum.reduceat(ys, starts), np.maximum.reduceat(ys, starts) + 1
            x0s, x1s = np.minimum.reduceat(xs, starts), np.maximum.reduceat(xs, starts) + 1
            for k, y0, y1, x0, x1 in zip(cell[starts].tolist(), y0s.tolist(), y1s.tolist(), x0s.tolist(),
                                         x1s.tolist()):
                masks[k] = (y0, y1, x0, x1, None, None)
        self._label, self._label_at = label, (Y0, X0)
        self._masks = masks
        self._painted = painted
        self._board_box = (X0, Y0, X1, Y1)

    def _lazy_cell(self, cell: int):
        """(y0, y1, x0, x1, mask, painted pixels) of a cell from its neighbourhood (module doc),
        or None when it owns no pixel."""
        region = self._cell_region(cell)
        if region is None:
            return None
        x0, y0, x1, y1 = region
        pr = self.proj
        paint = self._lazy.get("pre", {}).pop(int(cell), None)
        if paint is None:
            paint = self._paint_region(x0, y0, x1, y1)
        d = paint != self._static[y0:y1, x0:x1]
        diff = d[:, :, 0] | d[:, :, 1] | d[:, :, 2]
        ys, xs = np.nonzero(diff)
        gx, gy = pr.from_px_array(np.arange(x0, x1)[None, :] + 0.5, np.arange(y0, y1)[:, None] + 0.5)
        gx, gy = np.broadcast_to(gx, diff.shape), np.broadcast_to(gy, diff.shape)
        own = self._owners(gx[ys, xs], gy[ys, xs]) == cell
        ys, xs = ys[own], xs[own]
        if not len(ys):
            return None
        my0, my1, mx0, mx1 = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
        m = np.zeros((my1 - my0, mx1 - mx0), bool)
        m[ys - my0, xs - mx0] = True
        return (y0 + my0, y0 + my1, x0 + mx0, x0 + mx1, True if m.all() else np.repeat(m[:, :, None], 3, axis=2),
                np.ascontiguousarray(paint[my0:my1, mx0:mx1]))

    def _cell_region(self, cell: int) -> tuple[int, int, int, int] | None:
        """The frame px box (x0, y0, x1, y1) inside the kept box holding every pixel a cell
        may own (its row and column neighbours, open beyond the board's edge), or None."""
        lz = self._lazy
        X0, Y0, X1, Y1 = lz["box"]
        pr = self.proj
        if "design" not in lz:
            # the design bbox of the kept box's pixel centres (a perspective maps the box to a
            # convex quad: its corners bound it)
            gx, gy = pr.from_px_array(np.array([X0, X1 - 1, X0, X1 - 1]) + 0.5, np.array([Y0, Y0, Y1 - 1, Y1 - 1]) + 0.5)
            lz["design"] = (float(gx.min()) - 1, float(gy.min()) - 1, float(gx.max()) + 1, float(gy.max()) + 1)
        DX0, DY0, DX1, DY1 = lz["design"]
        u = self.ui
        br = self.board_rect()
        r, c = divmod(int(cell), self.cols)
        # the design region whose pixels the cell may own: its row and column neighbours
        # (a pixel over a wall goes to the floor cell beside it), open beyond the board's edge
        dx0 = br.x0 + (c - 1) * u.cell if c > 0 else min(DX0, br.x0)
        dx1 = br.x0 + (c + 2) * u.cell if c < self.cols - 1 else max(DX1, br.x1)
        dy0 = br.y0 + (r - 1) * u.cell if r > 0 else min(DY0, br.y0)
        dy1 = br.y0 + (r + 2) * u.cell if r < self.rows - 1 else max(DY1, br.y1)
        pts = [pr.to_px(x, y) for x in (dx0, dx1) for y in (dy0, dy1)]
        x0 = max(X0, int(math.floor(min(q[0] for q in pts))) - 2)
        x1 = min(X1, int(math.ceil(max(q[0] for q in pts))) + 2)
        y0 = max(Y0, int(math.floor(min(q[1] for q in pts))) - 2)
        y1 = min(Y1, int(math.ceil(max(q[1] for q in pts))) + 2)
        return None if x1 <= x0 or y1 <= y0 else (x0, y0, x1, y1)

    def _paint_region(self, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
        """The board painted everywhere in frame px [y0, y1) x [x0, x1) (inside the kept box):
        the picture under the board with the painted shapes that reach the region drawn over
        it at twice the size, in the frame's own coordinates (pygame's rasterising is not
        shift-invariant), then smoothed."""
        lz = self._lazy
        reach = lz.get("reach")
        if reach is None:
            # the px bbox of each painted shape, widened by its outline's width and a margin
            b, w = lz["bounds"], np.array([width for _, _, width in lz["ops"]], np.float64)[:, None]
            reach = lz["reach"] = np.concatenate([b[:, :2] - w - 2, b[:, 2:] + w + 2], axis=1)
        rx, ry, rw, rh = 2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)
        with _SCRATCH_LOCK:
            work = _scratch(lz["under"], (2 * self.proj.width, 2 * self.proj.height))
            ux, uy = lz["under_at"]
            # copied through pixel views, not blitted: the picture under the board may be a
            # layer base's pristine surface, which that base locks while it smooths a level
            # screen on another thread (a blit from a locked surface is refused)
            dst, src = pygame.surfarray.pixels2d(work), pygame.surfarray.pixels2d(lz["under"])
            try:
                dst[rx:rx + rw, ry:ry + rh] = src[rx - ux:rx - ux + rw, ry - uy:ry - uy + rh]
            finally:
                del dst, src
            clip = pygame.Rect(rx, ry, rw, rh)
            ops, recolour = lz["ops"], self._recolour
            near = ~((reach[:, 2] < rx) | (reach[:, 0] > rx + rw) | (reach[:, 3] < ry) | (reach[:, 1] > ry + rh))
            near = np.flatnonzero(near)
            out = lz["outlines"] if work.get_size() == (2 * self.proj.width, 2 * self.proj.height) else None
            i0, i1 = (out[0], out[1]) if out is not None else (len(ops), len(ops))
            # the shapes that reach the region, in order; the cells' outlines (ops i0 to i1) as rects
            for part in (near[near < i0], near[(near >= i0) & (near < i1)], near[near >= i1]):
                if len(part) and part[0] >= i0 and part[0] < i1:
                    color = ops[i0][0]
                    work.set_clip(None)                   # outlines are drawn whole
                    fill_rects(work, recolour.get(color, color), out[2][part - i0])
                    continue
                for i in part.tolist():
                    color, pts, width = ops[i]
                    work.set_clip(clip if width == 0 else None)       # (a clip keeps a fill's pixels)
                    pygame.draw.polygon(work, recolour.get(color, color), pts, width)
            work.set_clip(None)
            return smooth_surface(work.subsurface(clip))

    def _paint_from_board(self, surf: pygame.Surface, x0: int, y0: int, x1: int, y1: int) -> np.ndarray | None:
        """_paint_region(x0, y0, x1, y1) made from ``surf`` while it holds the unpainted board
        just drawn over the picture under it (twice the size, in the frame's coordinates):
        painting changes only the colours in self._recolour, which no other shape of the
        board has, so where no pixel under the board has one of them either, the painted
        picture is the drawn one with those colours replaced. None when one does."""
        lz = self._lazy
        rx, ry, rw, rh = 2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)
        ux, uy = lz["under_at"]
        rgb = np.uint32(surf.get_masks()[0] | surf.get_masks()[1] | surf.get_masks()[2])
        keys = [np.uint32(surf.map_rgb(c)) for c in self._recolour]
        vals = [np.uint32(surf.map_rgb(c)) for c in self._recolour.values()]
        under = pygame.surfarray.pixels2d(lz["under"])
        try:
            region = under[rx - ux:rx - ux + rw, ry - uy:ry - uy + rh] & rgb
            if any((region == k).any() for k in keys):
                return None
        finally:
            del under
        drawn = pygame.surfarray.pixels2d(surf)
        try:
            painted = drawn[rx:rx + rw, ry:ry + rh].copy()
        finally:
            del drawn
        hits = [painted == k for k in keys]                    # found before any is replaced
        for hit, v in zip(hits, vals):
            painted[hit] = v
        with _SCRATCH_LOCK:
            work = _scratch(lz["under"], (2 * self.proj.width, 2 * self.proj.height))
            dst = pygame.surfarray.pixels2d(work)
            try:
                dst[rx:rx + rw, ry:ry + rh] = painted
            finally:
                del dst
            return smooth_surface(work.subsurface(pygame.Rect(rx, ry, rw, rh)))

    def _update_board(self, static: np.ndarray, painted: np.ndarray) -> np.ndarray:
        """The base layer: ``static`` with the cells in ``painted`` painted, kept in step
        by redrawing only the cells whose paint differs from the last call."""
        if getattr(self, "_base", None) is None or self._base_static is not static:
            self._base = static.copy()
            self._base_static = static
            self._shown = np.zeros(len(self.floor), bool)
            self.base_changes = Changes()
            self._rects: dict = {}                 # cell -> mask_rects of its mask
        base = self._base
        changed = np.flatnonzero(painted != self._shown)
        if len(changed) > RESET_CELLS:
            # many cells changed (a level started again): the board as static, then the
            # painted cells on it (every cell's pixels lie in the board's box)
            X0, Y0, X1, Y1 = self._board_box
            base[Y0:Y1, X0:X1] = static[Y0:Y1, X0:X1]
            changed = np.flatnonzero(painted)
            boxes = [(X0, Y0, X1, Y1)]
        else:
            boxes = []
        if len(changed) or boxes:
            for cell in changed.tolist():
                m = self._cell_mask(cell)
                if m is not None:
                    y0, y1, x0, x1, mask, paint = m
                    if not painted[cell]:
                        src = static[y0:y1, x0:x1]
                    elif paint is not None:
                        src = paint
                    else:
                        src = self._painted[y0:y1, x0:x1]
                    if mask is True:          # the cell owns its whole box
                        base[y0:y1, x0:x1] = src
                        boxes.append((x0, y0, x1, y1))
                        continue
                    rects = self._rects.get(cell, _UNSET)
                    if rects is _UNSET:
                        rects = self._rects[cell] = mask_rects(mask)
                    if rects is not None and src.shape == mask.shape:
                        for ry0, ry1, rx0, rx1 in rects:      # the owned pixels, a few slices
                            base[y0 + ry0:y0 + ry1, x0 + rx0:x0 + rx1] = src[ry0:ry1, rx0:rx1]
                    else:
                        np.copyto(base[y0:y1, x0:x1], src, where=mask)
                    boxes.append((x0, y0, x1, y1))
            self._shown = painted.copy()
            self.base_changes.changed(boxes)
        return base

    def _cell_mask(self, cell: int):
        """(y0, y1, x0, x1, mask (h, w, 3) bool, or True when the cell owns its whole box,
        its painted pixels or None: take them from the painted board) of the pixels a cell
        owns, or None. Made on first use and kept (a
        mask of all three channels copies several times faster than one broadcast over them):
        from the cell's neighbourhood (_lazy_cell), or cut from the whole board's label image."""
        m = self._masks.get(cell, _UNSET)
        if m is _UNSET:
            if self._lazy is None:
                return None
            m = self._masks[cell] = self._lazy_cell(cell)
            return m
        if m is None or m[4] is not None:
            return m
        y0, y1, x0, x1, _, _ = m
        Y0, X0 = self._label_at
        own = self._label[y0 - Y0:y1 - Y0, x0 - X0:x1 - X0] == cell
        mask = True if own.all() else np.repeat(own[:, :, None], 3, axis=2)
        m = self._masks[cell] = (y0, y1, x0, x1, mask, None)
        return m

    # -- dynamic
    def _ball_sprite(self, x: float, y: float):
        u = self.ui
        rad = u.cell * 0.34
        zc = rad if self.proj.is_3d else 0.0
        key = (round(x, 2), round(y, 2))
        sp = self._balls.get(key)
        if sp is None:
            k = self.proj.local_scale(x, y)
            cx, cy = self.proj.to_px(x, y, zc)
            sx, sy = self.proj.to_px(x + rad * 0.25, y + rad * 0.35, 0)
            m = rad * k + 4
            box = (int(math.floor(min(cx, sx) - m)), int(math.floor(min(cy, sy) - m)),
                   int(math.ceil(max(cx, sx) + m)), int(math.ceil(max(cy, sy) + m)))

            def draw(p):
                import pygame
                kk = p.scale_at(x, y)
                if p.is_3d:
                    p.shadow([(x + rad * math.cos(a) * 0.95, y + rad * math.sin(a) * 0.95)
                              for a in np.linspace(0, 2 * math.pi, 28, endpoint=False)], alpha=80, dx=rad * 0.25,
                             dy=rad * 0.35)
                px, py = p.px(x, y, zc)
                pygame.draw.circle(p.surf, BALL_RIM, (px, py), rad * kk)
                pygame.draw.circle(p.surf, (226, 232, 240), (px, py), rad * kk - 2.2 * kk)
                pygame.draw.circle(p.surf, BALL, (px - rad * kk * 0.12, py - rad * kk * 0.12), rad * kk * 0.72)
                pygame.draw.circle(p.surf, (255, 255, 255), (px - rad * kk * 0.35, py - rad * kk * 0.35),
                                   rad * kk * 0.22)
            sp = draw_sprite(self.proj, box, draw, BALL_RIM), box
            if len(self._balls) < 4096:
                self._balls[key] = sp
        return sp

    def _pose(self, suite, state, anim, phase):
        """(painted cells, ball centre in design px) of a frame, in between for an animation."""
        u = self.ui
        cols = self.cols
        if anim is None:
            return state[2:].astype(bool), u.cell_center(int(state[0]))
        before = np.asarray(anim["before"], dtype=state.dtype)
        after, _ = suite.puzzle.step(suite.level, before, anim["action"])
        p0, p1 = int(before[0]), int(after[0])
        r0, c0 = divmod(p0, cols)
        r1, c1 = divmod(p1, cols)
        dist = abs(r1 - r0) + abs(c1 - c0)
        painted = before[2:].astype(bool).copy()
        if dist:
            pos = phase * dist
            k = int(pos)
            dr, dc = (r1 > r0) - (r1 < r0), (c1 > c0) - (c1 < c0)
            for i in range(1, min(k, dist) + 1):
                painted[(r0 + dr * i) * cols + c0 + dc * i] = True
            (x0, y0), (x1, y1) = u.cell_center(p0), u.cell_center(p1)
            return painted, (x0 + (x1 - x0) * phase, y0 + (y1 - y0) * phase)
        dr, dc = ((-1, 0), (1, 0), (0, -1), (0, 1))[anim["action"]]
        bx, by = u.cell_center(p0)
        a = 0.14 * u.cell * math.sin(math.pi * phase)
        return painted, (bx + dc * a, by + dr * a)

    def base_layer(self, static, suite, state, t, anim, phase):
        if self._masks is None:
            self._prepare(static)
        painted, self._ball_at = self._pose(suite, state, anim, phase)
        return self._update_board(static, painted)

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        bx, by = self._ball_at
        sp, box = self._ball_sprite(bx, by)
        f.blit(sp, box[0], box[1])


DRAWING = MazePaintDrawing
