"""Drawing of Color Connect: a dark board of cells with coloured dots (static), paths (dynamic).

Static layer: board panel, cells (0.9 pitch), every endpoint dot in its plain look. Per frame:

* the completed paths: the frame's base layer, the static layer with them on it, kept in step
  in place (only the boxes of the paths that came or went are composed again, with a
  ``Changes`` log of them, so a frame copies, hashes and encodes only those); it is composed from
  per-colour path sprites (cached per route), each drawn with its two dots on top in the
  "connected" look (colour halo + inner ring); what changes from one state of the completed
  paths to another (the routes, the boxes to put again) is kept, and when every path goes
  the board is copied from the static layer whole;
* the active path: a sprite cached per cell list, with the white halo and double ring on its
  start dot;
* transient feedback: the red flash of a violation (suite.shake on ``cell:r,c``), the fading
  ghost of a removed path and the green glow around the board after the last pair.

In 3d the panel is a slab, dots are discs and paths are tubes standing out of the board; every
piece is drawn through the same projection the engine hit-tests with (ColorConnectUI).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pygame

from longpuzzle.engine.geometry import Rect, circle_points, rounded_rect_points
from longpuzzle.engine.suite import difficulty_label
from longpuzzle.puzzles.color_connect import FLASH_MS, S_HEADER
from longpuzzle.render.frame import (
    BoxCache, Changes, GameDrawing, Painter, compose_clipped, draw_sprite, hex_rgb, mix, px_box, shade, trim_sprite,
)

PANEL = (42, 50, 59)
PANEL_SIDE = (30, 36, 43)
CELL = (29, 34, 40)
CELL_SHADOW = (22, 26, 31)
WHITE = (250, 250, 250)
INVALID = (255, 69, 76)
SUCCESS = (118, 255, 180)
PILL = (58, 53, 62)
BOARD_Z = 10.0        # 3d: thickness of the board slab
DOT_Z = 8.0           # 3d: height of a dot above the board
PATH_Z = 5.0          # 3d: height of a path tube above the board
PANEL_PAD = 8.0
COMPOSED = 12 << 20   # bytes of composed boxes of the completed-path board kept
ACTIVES = 48          # active-path patches kept
CHANGES_KEPT = 1024   # changes of the completed paths from one state to another kept (_update_base)


class ColorConnectDrawing(GameDrawing):
    background = ((226, 231, 238), (198, 207, 218))
    accent = (214, 76, 140)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        self.colours = [hex_rgb(h) for h in ui.level.extra["display_colors"]]
        self.z0 = BOARD_Z if proj.is_3d else 0.0
        r = ui.rect
        self.panel = Rect(r.x0 - PANEL_PAD, r.y0 - PANEL_PAD, r.x1 + PANEL_PAD, r.y1 + PANEL_PAD)
        corners = [(self.panel.x0, self.panel.y0), (self.panel.x1, self.panel.y0),
                   (self.panel.x1, self.panel.y1), (self.panel.x0, self.panel.y1)]
        self.board_box = px_box(proj, corners, zmax=self.z0 + DOT_Z + 2, margin=2)
        self._sprites: dict = {}
        self._actives: OrderedDict = OrderedDict()
        # (paths' state shown, paths' state to show) -> (the routes then, the boxes to put
        # again, each with the sprites over it and its key in _composed; None: the board
        # from the static layer): _update_base's work for a change it made before (an
        # objective's episodes draw the same routes again)
        self._changes: OrderedDict = OrderedDict()
        self.changes_reused = 0
        self._static = None              # the static layer the base was made from (held: an id could be reused)
        self._base = None

    # -- pieces (design px, through a Painter) ----------------------------------------------
    def _cell_pts(self, r: int, c: int, grow: float = 0.0):
        u = self.ui
        x, y = u.cell_center(r, c)
        h = u.cell_size / 2 + grow
        return rounded_rect_points(Rect(x - h, y - h, x + h, y + h), max(5.0, u.cell_size * 0.075), 4)

    def draw_board(self, p: Painter) -> None:
        u = self.ui
        pts = rounded_rect_points(self.panel, 18)
        if p.is_3d:
            p.shadow(pts, alpha=70, dx=5, dy=9)
            p.prism(pts, PANEL_SIDE, BOARD_Z, top=PANEL, shadow=False)
        else:
            p.poly(rounded_rect_points(Rect(self.panel.x0 + 2, self.panel.y0 + 4, self.panel.x1 + 2,
                                            self.panel.y1 + 4), 18), mix(PANEL, (120, 130, 140), 0.5))
            p.poly(pts, PANEL)
        z = self.z0
        for r in range(u.rows):
            for c in range(u.cols):
                sh = [(x + 1.5, y + 2.5) for x, y in self._cell_pts(r, c)]
                p.poly(sh, CELL_SHADOW, z=z)
                p.poly(self._cell_pts(r, c), CELL, z=z)
        for ci, (a, b) in enumerate(u.endpoints):
            for cell in (a, b):
                self.draw_dot(p, cell, ci, opaque_bg=CELL)

    def draw_dot(self, p: Painter, cell: int, ci: int, completed=False, selected=False, opaque_bg=None) -> None:
        """An endpoint dot. ``opaque_bg``: draw translucent parts pre-mixed over that colour
        (for opaque layers); otherwise with alpha (sprites)."""
        u = self.ui
        r, c = divmod(cell, u.cols)
        x, y = u.cell_center(r, c)
        rad = u.cell_size * 0.365
        col = self.colours[ci]
        z = self.z0

        def tint(rgb, a):
            return mix(opaque_bg, rgb, a / 255) if opaque_bg is not None else (*rgb, a)

        p.poly(circle_points(x + 2.5, y + 3.5, rad * 1.01, 32), tint((4, 7, 10), 92), z=z)
        if selected:
            p.poly(circle_points(x, y, rad * 1.35, 40), tint((255, 255, 255), 50), z=z)
            p.outline(circle_points(x, y, rad * 1.15, 40), (255, 255, 255), z=z,
                      width=max(4.0, u.cell_size * 0.065))
        if completed:
            p.poly(circle_points(x, y, rad * 1.18, 40), tint(col, 72), z=z)
        pts = circle_points(x, y, rad, 36)
        h = DOT_Z if p.is_3d else 0.0
        p.prism(pts, shade(col, 0.72), h, z0=z, top=col, shadow=False)
        top = z + h
        p.poly(circle_points(x - rad * 0.28, y - rad * 0.3, rad * 0.24, 20), mix(col, (255, 255, 255), 0.2), z=top)
        if completed or selected:
            p.outline(circle_points(x, y, rad * 0.78, 36), mix(col, (255, 255, 255), 0.7), z=top,
                      width=max(2.0, u.cell_size * 0.035))

    def draw_path(self, p: Painter, cells, ci: int) -> None:
        """A path through cell centres, width 0.48 cell, round joins, with its shadow."""
        if len(cells) < 2:
            return
        u = self.ui
        w = u.cell_size * 0.48
        pts = [u.cell_center(*divmod(c, u.cols)) for c in cells]
        pieces = []
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            ex, ey = (w / 2, 0.0) if y0 != y1 else (0.0, w / 2)      # widen across the segment only
            rx0, rx1 = min(x0, x1) - ex, max(x0, x1) + ex
            ry0, ry1 = min(y0, y1) - ey, max(y0, y1) + ey
            pieces.append([(rx0, ry0), (rx1, ry0), (rx1, ry1), (rx0, ry1)])
        for x, y in pts:
            pieces.append(circle_points(x, y, w / 2, 24))
        z = self.z0
        sw = u.cell_size * 0.04
        for pc in pieces:                                   # shadow (offset, translucent)
            p.poly([(x + 2 + sw, y + 2 + sw) for x, y in pc], (7, 9, 12, 92), z=z)
        col = self.colours[ci]
        if p.is_3d:
            for pc in pieces:
                p.prism(pc, shade(col, 0.7), PATH_Z, z0=z, top=col, shadow=False)
            for pc in pieces:                               # one seamless top face
                p.poly(pc, col, z=z + PATH_Z)
        else:
            for pc in pieces:
                p.poly(pc, col)

    def draw_static(self, p: Painter) -> None:
        u = self.ui
        y = u.header_y + 32                       # the pill covers the generic difficulty line
        p.rrect(Rect.centred(270, y + 1, 130, 26), 13, PILL, z=1)
        p.text(difficulty_label(u.level.difficulty), 270, y + 1, 21, WHITE, z=1)
        self.draw_board(p)

    # -- sprites and patches ------------------------------------------------------------------
    def _cells_box(self, cells, grow: float):
        u = self.ui
        pts = []
        for cell in cells:
            x, y = u.cell_center(*divmod(cell, u.cols))
            pts += [(x - grow, y - grow), (x + grow, y + grow), (x - grow, y + grow), (x + grow, y - grow)]
        x0, y0, x1, y1 = px_box(self.proj, pts, zmax=self.z0 + DOT_Z + 1, margin=3)
        bx0, by0, bx1, by1 = self.board_box           # everything a path draws lies on the panel
        return max(x0, bx0), max(y0, by0), min(x1, bx1), min(y1, by1)

    def _sprite(self, key, cells, draw):
        sp = self._sprites.get(key)
        if sp is None:
            if len(self._sprites) > 2048:
                self._sprites.clear()
                self._changes.clear()            # (they would hold the sprites let go)
            box = self._cells_box(cells, self.ui.pitch * 0.75)
            sp = self._sprites[key] = trim_sprite(draw_sprite(self.proj, box, draw), box)
        return sp

    def draw_path_piece(self, p: Painter, ci: int, cells: tuple, completed: bool) -> None:
        """A path with its dots: both in the connected look (completed), else its start selected."""
        self.draw_path(p, cells, ci)
        if completed:
            for cell in (cells[0], cells[-1]):
                self.draw_dot(p, cell, ci, completed=True)
        else:
            self.draw_dot(p, cells[0], ci, selected=True)

    def path_sprite(self, ci: int, cells: tuple, completed: bool):
        return self._sprite(("path", ci, cells, completed), cells,
                            lambda p: self.draw_path_piece(p, ci, cells, completed))

    def completed_routes(self, state) -> list[tuple[int, tuple]]:
        u = self.ui
        k, n = u.k, u.n
        out = []
        owner = np.asarray(state[S_HEADER + k:S_HEADER + k + n])
        pos = np.asarray(state[S_HEADER + k + n:S_HEADER + k + 2 * n])
        for ci in range(k):
            length = int(state[S_HEADER + ci])
            if length:
                cells = np.flatnonzero(owner == ci + 1)
                order = np.argsort(pos[cells])
                out.append((ci, tuple(int(c) for c in cells[order])))
        return out

    def _update_base(self, static: np.ndarray, state) -> np.ndarray:
        """The base layer: ``static`` with the completed paths on it, kept in step in place:
        when the completed paths change, only the boxes of the paths that came or went are
        composed again (the static layer there, then every completed path's sprite that
        reaches into the box, back to front: the pixels composing the whole board gives,
        as each pixel is the static layer with the sprites over it blended in order), and
        recorded in ``base_changes`` (so frames copy, hash and encode only those boxes)."""
        u = self.ui
        if self._static is not static:
            self._base = static.copy()
            x0, y0, x1, y1 = self.board_box
            # the board as composed, on a 32-bit surface, and as static
            self._work = pygame.surfarray.make_surface(np.ascontiguousarray(static[y0:y1, x0:x1].transpose(1, 0, 2)))
            self._clean = self._work.copy()
            self._base_surf = pygame.image.frombuffer(self._base, (static.shape[1], static.shape[0]), "RGB")
            self._composed = BoxCache(COMPOSED)      # (box, sprites' ids) -> base[box], holding the sprites
            self._static = static
            self._shown: dict = {}                   # colour -> cells of its completed path drawn
            self._shown_key = None
            self._actives.clear()
            self._changes.clear()
            self.base_changes = Changes()
        k, n = u.k, u.n
        arr = np.asarray(state[S_HEADER:S_HEADER + k + 2 * n])
        key = arr.tobytes()
        if key == self._shown_key:
            return self._base
        change = (self._shown_key, key)
        known = self._changes.get(change) if self._shown_key is not None else None
        if known is not None:
            self._changes.move_to_end(change)
            self.changes_reused += 1
            routes, plan = known
        else:
            routes, plan = self._plan_base(state, arr)
            if self._shown_key is not None:
                self._changes[change] = (routes, plan)
                if len(self._changes) > CHANGES_KEPT:
                    self._changes.popitem(last=False)
        if plan is None:
            # every path gone (the level from its start again): the board is the static
            # layer's (every pixel a path's box did not reach still is), in one copy
            x0, y0, x1, y1 = self.board_box
            self._base[y0:y1, x0:x1] = static[y0:y1, x0:x1]
            self.base_changes.changed([self.board_box])
        elif plan:
            for box, over, ck in plan:
                self._compose(box, over, ck)
            self.base_changes.changed([box for box, _, _ in plan])
        self._shown, self._shown_key = routes, key
        return self._base

    def _plan_base(self, state, arr: np.ndarray) -> tuple:
        """(the completed routes of ``state``, colour -> cells; what to put again from the
        routes shown: each box of a path that came or went, with the sprites over it and
        its key in _composed, or None when every path went) (_update_base)."""
        u = self.ui
        k, n = u.k, u.n
        old = self._shown
        if self._shown_key is None:
            routes = dict(self.completed_routes(state))
        else:
            # only the colours whose length, or whose cells' owner or place, changed: the
            # others' routes are as drawn
            prev = np.frombuffer(self._shown_key, arr.dtype)
            diff = np.flatnonzero(arr != prev)
            owner = arr[k:k + n]
            # the lengths changed, and the owners (now and before) of the cells whose owner
            # or place changed
            at = k + (diff[diff >= k] - k) % n
            who = np.concatenate((arr[at], prev[at]))
            cols = set(diff[diff < k].tolist())
            cols.update((who[who > 0] - 1).tolist())
            routes = dict(old)
            pos = arr[k + n:k + 2 * n]
            for ci in cols:
                routes.pop(ci, None)
                if int(arr[ci]):
                    cells = np.flatnonzero(owner == ci + 1)
                    routes[ci] = tuple(cells[np.argsort(pos[cells])].tolist())
        if not routes and old:
            return routes, None
        boxes = []
        for ci in sorted(set(old) | set(routes)):
            if old.get(ci) != routes.get(ci):
                for cells in (old.get(ci), routes.get(ci)):
                    if cells is not None:
                        box = self.path_sprite(ci, cells, True)[1]
                        if box not in boxes:
                            boxes.append(box)
        if not boxes:
            return routes, []
        # back to front (3d): paths whose lowest cell is further up the board first (then by colour)
        order = sorted(routes.items(), key=lambda rc: (max(rc[1]) // u.cols, rc[0]))
        sprites = [self.path_sprite(ci, cells, True) for ci, cells in order]
        plan = []
        for box in boxes:
            x0, y0, x1, y1 = box
            over = tuple((sp, b) for sp, b in sprites if b[0] < x1 and b[2] > x0 and b[1] < y1 and b[3] > y0)
            plan.append((box, over, (box, tuple(id(sp) for sp, _ in over))))
        return routes, plan

    def _compose(self, box, over, key) -> None:
        """base[box] = static[box] with the sprites ``over`` it ((surface, box), in order)
        blitted over it, clipped to the box: on a 32-bit surface of the board (the sprites
        blend there as on the whole board's surface, not as on the frame's 24-bit one),
        copied into the base. Boxes composed before of the same sprites (``key``: the box and
        the sprites' ids) are kept."""
        x0, y0, x1, y1 = box
        hit = self._composed.get(key)
        if hit is not None:
            self._base[y0:y1, x0:x1] = hit
            return
        bx0, by0 = self.board_box[:2]
        rect = pygame.Rect(x0 - bx0, y0 - by0, x1 - x0, y1 - y0)
        compose_clipped(self._work, self._clean, rect, [(sp, (b[0] - bx0, b[1] - by0)) for sp, b in over],
                        self._base_surf, (x0, y0))
        self._composed.put(key, self._base[y0:y1, x0:x1], over)   # (the sprites held: their ids stay theirs)

    def _active_patch(self, base: np.ndarray, state, cells: tuple):
        """The active path over the completed-path board, as an opaque patch (cached: an
        alpha blit of a long path costs more than a copy)."""
        key = (self._shown_key, int(state[0]), cells)
        hit = self._actives.get(key)
        if hit is not None:
            self._actives.move_to_end(key)
            return hit
        sp, box = self.path_sprite(int(state[0]) - 1, cells, False)
        x0, y0, x1, y1 = box
        crop = base[y0:y1, x0:x1]
        surf = pygame.surfarray.make_surface(np.ascontiguousarray(crop.transpose(1, 0, 2)))
        surf.blit(sp, (0, 0))
        hit = self._actives[key] = (np.ascontiguousarray(pygame.surfarray.array3d(surf).transpose(1, 0, 2)), box)
        if len(self._actives) > ACTIVES:
            self._actives.popitem(last=False)
        return hit

    def _flash_sprite(self, r: int, c: int, level: int):
        key = ("flash", r, c, level)
        sp = self._sprites.get(key)
        if sp is None:
            u = self.ui
            a = level / 4

            def draw(p):
                z = self.z0 + (DOT_Z + 1 if p.is_3d else 0)
                pts = self._cell_pts(r, c)
                p.poly(pts, (*INVALID, int(118 * a)), z=z)
                p.outline(self._cell_pts(r, c, -2), (*INVALID, int(235 * a)), z=z, width=max(3.0, u.cell_size * 0.06))
            x, y = u.cell_center(r, c)
            h = u.cell_size / 2 + 2
            box = px_box(self.proj, [(x - h, y - h), (x + h, y + h), (x - h, y + h), (x + h, y - h)],
                         zmax=self.z0 + DOT_Z + 1, margin=3)
            sp = self._sprites[key] = (draw_sprite(self.proj, box, draw, INVALID), box)
        return sp

    def _glow_sprite(self, level: int):
        key = ("glow", level)
        sp = self._sprites.get(key)
        if sp is None:
            r = self.ui.rect
            g = Rect(r.x0 - 5, r.y0 - 5, r.x1 + 5, r.y1 + 5)
            a = level / 4

            def draw(p):
                p.outline(rounded_rect_points(g, 16), (*SUCCESS, int(235 * a)), z=self.z0, width=7)
            pts = rounded_rect_points(Rect(g.x0 - 6, g.y0 - 6, g.x1 + 6, g.y1 + 6), 16)
            box = px_box(self.proj, pts, zmax=self.z0, margin=3)
            sp = self._sprites[key] = (draw_sprite(self.proj, box, draw, SUCCESS), box)
        return sp

    # -- per frame ----------------------------------------------------------------------------
    def base_layer(self, static, suite, state, t, anim, phase):
        return self._update_base(static, state)

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        u = self.ui
        if int(state[0]) != 0:
            cells = tuple(u.active_cells(state))
            patch, box = self._active_patch(self._base, state, cells)
            f.put(patch, box[0], box[1])
        if anim is not None:
            a = int(anim["action"])
            if a >= u.n + 1 + 2 * u.k:                  # removed path: fading ghost
                before = np.asarray(anim["before"])
                ci = a - u.n - 1 - 2 * u.k
                for cj, cells in self.completed_routes(before):
                    if cj == ci:
                        sp, box = self.path_sprite(ci, cells, True)
                        ghost = sp.copy()
                        ghost.set_alpha(int(round(255 * (1 - phase))))
                        f.blit(ghost, box[0], box[1])
            elif a < u.n:                               # success glow: up 0.16 s, hold, fade
                ms = phase * (anim["t1"] - anim["t0"])
                level = 4 if 160 <= ms <= 380 else max(0, min(4, round(4 * (ms / 160 if ms < 160 else
                                                                                (660 - ms) / 280))))
                if level:
                    sp, box = self._glow_sprite(level)
                    f.blit(sp, box[0], box[1])
        sh = suite.shake
        if sh and sh["target"].startswith("cell:") and sh["t0"] <= t < sh["t0"] + FLASH_MS:
            r, c = (int(v) for v in sh["target"][5:].split(","))
            dt = t - sh["t0"]
            level = 4 if dt < 80 else max(1, round(4 * (1 - (dt - 80) / (FLASH_MS - 80))))
            sp, box = self._flash_sprite(r, c, level)
            f.blit(sp, box[0], box[1])


DRAWING = ColorConnectDrawing
