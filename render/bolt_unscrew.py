"""Drawing of Bolt Unscrew: the brown frame, the play zone and the black anchor holes
(static layer); wooden boards and pads, silver screws, the boards-out counter and the hint
line (dynamic).

Pieces are drawn in the original's order (render_order, then level order; higher = on
top), screws above every piece, and an empty anchor's hole lies in the static layer, so a
piece covering it hides it. Board and pad holes are cut out of the wood (what lies below
shows through) with a dark rim. Each piece is a cached transparent sprite keyed by its
exact pose (the fixed-point centre and angle of the state); only pieces that moved need
drawing anew. The board region is the frame's base layer, kept in step in place: the boxes
of what came, went or moved are composed again (static layer, then every sprite reaching
into the box, in order, clipped to it, on a 32-bit surface) or put back as composed before,
with a ``Changes`` log of them, so a frame copies, hashes and encodes only what changed. At
rest, the region's items of a (state, selection, hint) are kept, and so are the boxes to
compose between two such sets of items (an objective's episodes make the same moves again).

A move animates in two parts: the screw travels from its anchor to the target (MOVE_MS),
then the pieces swing through the intermediate poses that ``BoltUnscrew.settle_frames``
computes with the rules' own kernel, while released pieces drop out of the frame or fall
onto the pegs they come to rest on (SETTLE_MS). The geometry is the level's BoltUnscrewUI (design px), the object the engine
hit-tests with.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pygame

from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W, Rect, circle_points, rounded_rect_points
from longpuzzle.puzzles.bolt_unscrew import (
    CORNER_RADIUS, HINT_DEFAULT, LEFT, MOVE_MS, N_ANG, PLAY_ZONE, Q,
)
from longpuzzle.render.frame import (
    BoxCache, Changes, GameDrawing, Painter, compose_clipped, difficulty_label, draw_patch, draw_sprite, px_box,
    shade, trim_sprite,
)

FRAME_BG = (82, 56, 36)
ZONE, ZONE_EDGE = (235, 191, 122), (115, 71, 36)
HOLE_RIM, HOLE_DARK = (64, 41, 20), (13, 8, 5)
BOARD_EDGE = (74, 44, 20)
CREAM, CREAM_MUTED = (255, 245, 220), (222, 200, 165)
PAD = (188, 119, 55)
PAD_GRAIN = (135, 82, 39)
SILVER, SILVER_HI, SILVER_DARK, SILVER_EDGE = (176, 182, 188), (226, 230, 234), (120, 126, 134), (62, 66, 72)
SELECT_RING = (255, 214, 0)
# wood tones per texture index 1..10: (top face, grain)
WOODS = [((226, 178, 110), (196, 146, 80)), ((214, 160, 88), (182, 128, 62)), ((201, 142, 72), (168, 112, 50)),
         ((190, 128, 64), (156, 98, 44)), ((172, 112, 56), (140, 86, 40)), ((158, 98, 52), (128, 76, 38)),
         ((176, 100, 66), (144, 76, 48)), ((142, 92, 56), (112, 70, 40)), ((232, 196, 138), (204, 164, 104)),
         ((150, 80, 52), (118, 60, 38))]
HOLE_OUTER, HOLE_INNER = 19.75, 17.0
SCREW_R = 22.0
LIFT, LIFT_SCALE, RING_R = 26.0, 1.06, 29.0
THICK = 7.0                  # board thickness in 3d (design px)
LAYER_DZ = 1.6               # extra height per render layer in 3d
SCREW_H = 6.0
HUD_COUNTER = (20.0, 70.0)
COMPOSED = 16 << 20          # bytes of composed boxes of the region kept
AT_REST = 1024               # states at rest whose region items are kept (base_layer)
CHANGES_KEPT = 2048          # changes between two kept sets of region items kept (_update_region)


def _item(img: pygame.Surface, x0: int, y0: int) -> tuple:
    """What the region shows of one sprite or patch: (surface, x0, y0, x1, y1), its px box
    (x0, y0)-(x1, y1) on the frame (its surface's size at (x0, y0)), kept with it so that the
    boxes it changes and the items over a box are found without asking the surface."""
    w, h = img.get_size()
    return (img, x0, y0, x0 + w, y0 + h)


def _ease(q: float) -> float:
    q = min(1.0, max(0.0, q))
    return q * q * (3 - 2 * q)


class BoltUnscrewDrawing(GameDrawing):
    background = ((245, 226, 195), (226, 196, 150))
    accent = (160, 104, 52)
    hud_under = False         # the board covers the whole screen (its own header and hint)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        lvl = ui.level
        lv = lvl.lv
        self.nA, self.nP, self.H, self.ss = int(lv[0]), int(lv[1]), int(lv[2]), int(lv[11])
        self.pieces = lvl.extra["pieces"]
        self.index = {pid: i for i, pid in enumerate(lvl.extra["piece_ids"])}
        self.order = sorted(range(self.nP), key=lambda p: (int(self.pieces[p]["order"]), p))
        self._rank = {p: i for i, p in enumerate(self.order)}     # a piece's place in that order
        ranks = sorted({int(pc["order"]) for pc in self.pieces})
        self.z0 = [0.0] * self.nP
        if proj.is_3d:
            for p in range(self.nP):
                self.z0[p] = LAYER_DZ * min(ranks.index(int(self.pieces[p]["order"])), 8)
        self.holes = []          # local hole centres (y down)
        self.outline = []        # local outline (y down, clockwise on screen)
        for pc in self.pieces:
            self.holes.append([(hx, -hy) for hx, hy in pc["holes"]])
            if pc["kind"] == 0:
                hw, hh = pc["w"] / 2, pc["h"] / 2
                rc = min(CORNER_RADIUS, hw, hh)
                self.outline.append(rounded_rect_points(Rect(-hw, -hh, hw, hh), rc, seg=5))
            else:
                r = pc["radius"]
                self.outline.append(circle_points(0.0, 0.0, r, 56))
        self._sprites: dict = {}
        self._screws: dict = {}
        self._patches: dict = {}
        self._traces: dict = {}
        self._at_rest: OrderedDict = OrderedDict()   # (state, selected, hint) -> _items' answer at rest
        # (id(items shown), id(items to show)) -> (those two dicts, the boxes to compose for
        # the change, each with its key in _composed): what _update_region works out of two
        # kept sets of items (at rest: an objective's episodes make the same moves again)
        self._changes: OrderedDict = OrderedDict()
        self.changes_reused = 0                      # region changes found there (not worked out again)
        # hint line and counter boxes (px)
        iy = ui.instructions_y
        self._hint_rect = Rect(14, iy - 16, DESIGN_W - 14, iy + 16)
        self._hint_box = self._box_of(self._hint_rect)
        cx, cy = HUD_COUNTER
        self._count_rect = Rect(cx - 4, cy - 15, cx + 240, cy + 15)
        self._count_box = self._box_of(self._count_rect)
        # the board region is composed in a 32-bit surface (alpha blits onto it are ~10x
        # faster than onto the 24-bit frame), then copied into the frame in one blit
        top = min(proj.to_px(0, PLAY_ZONE[1] - 24, 40.0)[1], proj.to_px(0, PLAY_ZONE[1] - 24)[1])
        self._region = pygame.Rect(0, max(0, int(top)), proj.width, proj.height - max(0, int(top)))
        self._region_box = (self._region.x, self._region.y, self._region.right, self._region.bottom)  # px
        self._work = pygame.Surface(proj.size, 0, 32)
        self._base = None
        self._base_of = None

    def _box_of(self, r: Rect, zmax=0.0):
        return px_box(self.proj, [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], zmax=zmax, margin=1)

    # ---- static -----------------------------------------------------------------------
    def draw_static(self, p: Painter) -> None:
        u = self.ui
        lvl = u.level
        p.poly([(0, 0), (DESIGN_W, 0), (DESIGN_W, DESIGN_H), (0, DESIGN_H)], FRAME_BG)
        x0, y0, x1, y1 = PLAY_ZONE
        zone = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        p.poly(zone, ZONE)
        p.outline(zone, ZONE_EDGE, width=6)
        for (x, y) in u.anchors:
            p.circle(x, y, HOLE_OUTER, HOLE_RIM)
            p.circle(x, y, HOLE_INNER, HOLE_DARK)
        p.text(f"Level {lvl.number} \u00b7 {difficulty_label(lvl.difficulty)}", 20, 32, 30, CREAM, anchor="left")
        p.text(u.puzzle.title, 20, 100, 20, CREAM_MUTED, anchor="left")
        p.text(HINT_DEFAULT, 270, u.instructions_y, 21, CREAM, max_w=500)

    # ---- geometry -----------------------------------------------------------------------
    def _world(self, p: int, cx: float, cy: float, deg: float, pts):
        a = math.radians(deg)
        c, s = math.cos(a), math.sin(a)
        return [(cx + x * c - y * s, cy + x * s + y * c) for x, y in pts]

    def draw_piece(self, p: Painter, i: int, cx: float, cy: float, deg: float) -> None:
        pc = self.pieces[i]
        is3 = p.is_3d
        out = self._world(i, cx, cy, deg, self.outline[i])
        holes = self._world(i, cx, cy, deg, self.holes[i])
        if pc["kind"] == 0:
            top, grain = WOODS[(int(pc.get("texture_index") or 1) - 1) % len(WOODS)]
        else:
            top, grain = PAD, PAD_GRAIN
        z0 = self.z0[i]
        zt = z0 + THICK if is3 else 0.0
        if is3:
            p.shadow(out, alpha=70, dx=3.0 + 0.4 * z0, dy=5.0 + 0.6 * z0)
            p.prism(out, shade(top, 0.62), THICK, z0, top=top, shadow=False)
        else:
            p.poly(out, top)
        # grain
        if pc["kind"] == 0:
            hw, hh = pc["w"] / 2, pc["h"] / 2
            long_x = hw >= hh
            for f in (-0.42, -0.05, 0.33):
                if long_x:
                    a, b = (-hw + 12, f * hh), (hw - 12, f * hh + 1.5)
                else:
                    a, b = (f * hw, -hh + 12), (f * hw + 1.5, hh - 12)
                wa, wb = self._world(i, cx, cy, deg, [a, b])
                p.line(wa, wb, grain, 1.6, z=zt)
            p.outline(out, BOARD_EDGE, z=zt, width=2.0)
        else:
            r = pc["radius"]
            for k, (ox, oy) in ((0.56, (0.08, -0.02)), (0.82, (-0.10, 0.04))):
                ring = self._world(i, cx, cy, deg, circle_points(ox * r, oy * r, k * r, 40))
                p.outline(ring, PAD_GRAIN, z=zt, width=1.2)
            p.outline(out, HOLE_DARK, z=zt, width=2.5)
        # drilled holes: a dark rim, then the hole itself is cut out of the wood
        for hx, hy in holes:
            p.poly(circle_points(hx, hy, HOLE_OUTER, 32), HOLE_RIM, z=zt)
            if is3:
                p.poly(circle_points(hx, hy, HOLE_INNER, 32), shade(HOLE_RIM, 0.55), z=zt)
                p.poly(circle_points(hx, hy, HOLE_INNER - 1.0, 32), (0, 0, 0, 0), z=z0)
            else:
                p.poly(circle_points(hx, hy, HOLE_INNER, 32), (0, 0, 0, 0))

    def piece_box(self, i: int, cx: float, cy: float, deg: float):
        pts = self._world(i, cx, cy, deg, self.outline[i])
        if self.proj.is_3d:
            z0 = self.z0[i]
            pts = pts + [(x + 3.0 + 0.4 * z0 + 2, y + 5.0 + 0.6 * z0 + 2) for x, y in pts]
            return px_box(self.proj, pts, zmax=z0 + THICK + 1, margin=2)
        return px_box(self.proj, pts, margin=2)

    def draw_screw(self, p: Painter, x: float, y: float, zb: float, lifted: bool, ring: bool) -> None:
        is3 = p.is_3d
        r = SCREW_R * (LIFT_SCALE if lifted else 1.0)
        if ring:
            pts = circle_points(x, y, RING_R, 48)
            p.outline(pts, SELECT_RING, z=zb, width=4.0)
        sx, sy, z = x, y, zb
        if lifted:
            if is3:
                z = zb + LIFT
            else:
                sy = y - LIFT
        head = circle_points(sx, sy, r, 40)
        if is3:
            p.shadow(head, alpha=80, dx=2.0 + 0.35 * (z - zb), dy=3.0 + 0.6 * (z - zb))
            p.prism(head, SILVER_DARK, SCREW_H, z, top=SILVER, shadow=False)
            z += SCREW_H
        else:
            if lifted:
                p.poly(circle_points(x + 2, y - LIFT + 6, r, 40), (0, 0, 0, 60))
            p.poly(head, SILVER)
        p.poly(circle_points(sx - r * 0.12, sy - r * 0.14, r * 0.72, 32), SILVER_HI, z=z)
        p.poly(circle_points(sx, sy, r * 0.5, 28), SILVER, z=z)
        p.outline(head, SILVER_EDGE, z=z, width=2.0)
        k = r * 0.5
        p.line((sx - k, sy), (sx + k, sy), SILVER_EDGE, 4.0, z=z)
        p.line((sx, sy - k), (sx, sy + k), SILVER_EDGE, 4.0, z=z)

    def screw_box(self, x: float, y: float, zb: float, lifted: bool):
        R = RING_R + 3
        pts = [(x - R, y - R - (LIFT if lifted else 0)), (x + R + 8, y - R - (LIFT if lifted else 0)),
               (x + R + 8, y + R + 10), (x - R, y + R + 10)]
        return px_box(self.proj, pts, zmax=zb + (LIFT if lifted else 0) + SCREW_H + 2 if self.proj.is_3d else 0,
                      margin=2)

    # ---- sprites ------------------------------------------------------------------------
    def _piece_sprite(self, i: int, qx: int, qy: int, qt: int, keep: bool = True):
        key = (i, qx, qy, qt)
        sp = self._sprites.get(key)
        if sp is None:
            cx, cy, deg = qx / Q, qy / Q, qt * 360.0 / N_ANG
            box = self.piece_box(i, cx, cy, deg)
            # cut down to the pixels it draws (the box around a turned board, and in 3d its
            # shadow's room, hold many it leaves as they are): the boxes a move changes - which
            # the region composes and frames copy, hash and encode - are no larger than those
            img, box = trim_sprite(draw_sprite(self.proj, box, lambda p: self.draw_piece(p, i, cx, cy, deg),
                                               key_colour=(60, 40, 20)), box)
            # run-length encoded: ~10x faster blits. Every sprite is blitted this way (RLE
            # blending rounds differently from the plain blit), so bytes never depend on caching
            img.set_alpha(255, pygame.RLEACCEL)
            sp = _item(img, box[0], box[1])
            if keep:
                if len(self._sprites) > 3000:
                    self._sprites.clear()
                    self._let_go_items()         # (they would hold the sprites let go)
                self._sprites[key] = sp
        return sp

    def _screw_sprite(self, x: float, y: float, zb: float, lifted: bool, ring: bool, keep: bool = True):
        key = (x, y, zb, lifted, ring)
        sp = self._screws.get(key)
        if sp is None:
            box = self.screw_box(x, y, zb, lifted)
            # trimmed: screw_box has room for the ring and the lift; a screw at rest draws in
            # about a third of it
            img, box = trim_sprite(draw_sprite(self.proj, box, lambda p: self.draw_screw(p, x, y, zb, lifted, ring),
                                               key_colour=SILVER_EDGE), box)
            img.set_alpha(255, pygame.RLEACCEL)
            sp = _item(img, box[0], box[1])
            if keep:
                if len(self._screws) > 1000:
                    self._screws.clear()
                    self._let_go_items()
                self._screws[key] = sp
        return sp

    def _screw_heights(self, state) -> list[float]:
        """Per anchor: the top of the highest live piece pinned there (3d; 0 in 2d)."""
        zs = [0.0] * self.nA
        if not self.proj.is_3d:
            return zs
        nA, ss, H = self.nA, self.ss, self.H
        for p in range(self.nP):
            b = nA + p * ss
            if int(state[b]) == LEFT:
                continue
            top = self.z0[p] + THICK
            for k in range(H):
                a = int(state[b + 4 + k])
                if a >= 0 and zs[a] < top:
                    zs[a] = top
        return zs

    def _text_patch(self, static: np.ndarray, key, box, draw):
        """(the patch's pixels (h, w, 3), the region item showing it at ``box``)."""
        arr = self._patches.get(key)
        if arr is None:
            if len(self._patches) > 256:
                self._patches.clear()
            arr = draw_patch(self.proj, static, box, draw)
            arr = self._patches[key] = (arr, _item(self._surface_of(arr), box[0], box[1]))
        return arr

    # ---- dynamic ------------------------------------------------------------------------
    def _trace(self, suite, before, action):
        key = (before.tobytes(), int(action))
        tr = self._traces.get(key)
        if tr is None:
            after, frames = suite.puzzle.settle_frames(suite.level, before, int(action))
            # per piece the poses it passes through: its swing, then (when it comes to rest on
            # pegs) its fall; a piece that leaves the frame swings and then drops out
            seqs: dict[int, list] = {}
            for fr in frames:
                p = self.index[fr["piece"]]
                if fr["status"] == "attached" or (fr["status"] == "released" and int(after[self.nA + p * self.ss]) != LEFT):
                    seqs.setdefault(p, []).append((fr["x"], fr["y"], fr["angle"]))
            if len(self._traces) > 16:
                self._traces.clear()
            tr = self._traces[key] = (after, seqs)
        return tr

    def base_layer(self, static, suite, state, t, anim, phase):
        """The frame's base (the static layer with the region composed as this frame shows
        it), brought in step here, before the frame starts from it."""
        if self._base_of is not static:
            self._base = self._surface_of(static)          # the static layer, 32-bit
            self._base_of = static
            self._frame_base = static.copy()                # the frame's base: static, the region as composed
            self._frame_surf = pygame.image.frombuffer(self._frame_base, self.proj.size, "RGB")
            self._shown: dict = {}
            self._shown_kept = False              # _shown is a kept set of items (_update_region)
            self._count_shown = None
            self._composed = BoxCache(COMPOSED)   # (box, items over it) -> base[box], holding the items
            self._let_go_items()                  # (their hint patches are of the static layer)
            self._work.blit(self._base, self._region.topleft, self._region)
            self.base_changes = Changes()
        # a frame at rest (no animation) shows what its state, selection and hint give: the
        # region's items, their order and the counter's text are kept for the states seen
        # last (an objective's episodes come back to the same states), not built again
        kept = rest_key = None
        if anim is None:                     # (items kept: _update_region keeps what changes between them too)
            rest_key = (state.tobytes(), suite.ui.get("selected"), suite.ui.get("hint"))
            kept = self._at_rest.get(rest_key)
        if kept is not None:
            self._at_rest.move_to_end(rest_key)
            items, order, text = kept
        else:
            items, order, text = self._items(static, suite, state, anim, phase)
            if rest_key is not None:
                self._at_rest[rest_key] = (items, order, text)
                if len(self._at_rest) > AT_REST:
                    self._at_rest.popitem(last=False)
        boxes = self._update_region(items, order, kept=rest_key is not None)
        # HUD: boards out (of the state shown), over the region, in the base too
        cx, cy = HUD_COUNTER
        x0, y0, x1, y1 = self._count_box
        if text != self._count_shown or any(b[0] < x1 and b[2] > x0 and b[1] < y1 and b[3] > y0 for b in boxes):
            arr, _ = self._text_patch(static, ("count", text), self._count_box,
                                      lambda p: p.text(text, cx, cy, 24, CREAM, anchor="left"))
            h, w = arr.shape[:2]
            self._frame_base[y0:y0 + h, x0:x0 + w] = arr
            self._count_shown = text
            boxes.append((x0, y0, x0 + w, y0 + h))
        if boxes:
            self.base_changes.changed(boxes)
        return self._frame_base

    def _items(self, static, suite, state, anim, phase) -> tuple:
        """What the region shows at ``phase`` of ``anim`` (or at rest): (slot -> item, the
        items bottom to top, the counter's text). Slots bottom to top: -1 the hint line,
        0.. the pieces in drawing order, then the screws by anchor, then the flying screw."""
        u = self.ui
        nA, ss = self.nA, self.ss
        show = state
        poses = None          # piece -> (x, y, deg) override during an animation
        flying = None
        if anim is not None:
            before = np.asarray(anim["before"], dtype=state.dtype)
            src, dst = divmod(int(anim["action"]), nA)
            total = max(1, anim["t1"] - anim["t0"])
            f1 = min(1.0, MOVE_MS / total)
            if phase < f1:
                show = before.copy()
                show[src] = 0
                q = _ease(phase / f1)
                (sx, sy), (tx, ty) = u.anchors[src], u.anchors[dst]
                flying = (sx + (tx - sx) * q, sy + (ty - sy) * q, math.sin(math.pi * q))
            else:
                _, seqs = self._trace(suite, before, anim["action"])
                q = (phase - f1) / max(1e-9, 1.0 - f1)
                poses = {}
                for p in range(self.nP):
                    b = nA + p * ss
                    if int(before[b]) == LEFT:
                        continue
                    seq = seqs.get(p)
                    x0, y0, d0 = int(before[b + 1]) / Q, int(before[b + 2]) / Q, int(before[b + 3]) * 360.0 / N_ANG
                    if seq:
                        k = min(len(seq) - 1, int(_ease(q) * len(seq)))
                        x0, y0, d0 = seq[k]
                        if int(state[b]) != LEFT:
                            poses[p] = (x0, y0, d0)
                    if int(state[b]) == LEFT:
                        fall = (DESIGN_H + 260 - y0) * q * q
                        spin = (8.0 if p % 2 else -8.0) * q * q
                        poses[p] = (x0, y0 + fall, d0 + spin)
                show = state
        sel = suite.ui.get("selected") if anim is None else None
        # what the region shows: slot -> item (_item), slots bottom to top: -1 the hint, 0..
        # the pieces in drawing order, then the screws by anchor, then the flying screw
        items: dict = {}
        # the hint line replaces the default instruction (under the pieces, which may fall past it)
        hint = suite.ui.get("hint")
        if hint:
            r = self._hint_rect
            sel_hint = sel is not None

            def draw(p, hint=hint, sel_hint=sel_hint):
                p.poly([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], FRAME_BG)
                p.text(hint, 270, u.instructions_y, 21, SELECT_RING if sel_hint else CREAM, max_w=500)
            items[-1] = self._text_patch(static, ("hint", hint, sel_hint), self._hint_box, draw)[1]
        # pieces, bottom to top
        for p in self.order:
            b = nA + p * ss
            if poses is not None and p in poses:
                x, y, d = poses[p]
                sp = self._piece_sprite(p, int(round(x * Q)), int(round(y * Q)), int(round(d * N_ANG / 360.0)),
                                        keep=False)
            else:
                if int(show[b]) == LEFT:
                    continue
                sp = self._piece_sprite(p, int(show[b + 1]), int(show[b + 2]), int(show[b + 3]))
            items[self._rank[p]] = sp
        # screws above every piece
        zs = self._screw_heights(show)
        for a in range(nA):
            if int(show[a]) == 0:
                continue
            x, y = u.anchors[a]
            items[self.nP + a] = self._screw_sprite(x, y, zs[a], a == sel, a == sel)
        if flying is not None:
            x, y, arc = flying
            zb = max(self._screw_heights(before)[src], self._screw_heights(state)[dst])
            is3 = self.proj.is_3d
            items[self.nP + nA] = self._screw_sprite(x, y - (0.0 if is3 else 18.0 * arc),
                                                     zb + (18.0 * arc if is3 else 0.0), True, False, keep=False)
        # HUD: boards out (of the state shown)
        cnt = state if anim is None or poses is not None else before
        out = sum(1 for p in range(self.nP) if int(cnt[nA + p * ss]) == LEFT)
        return items, [items[k] for k in sorted(items)], f"Boards out: {out} / {self.nP}"

    def _let_go_items(self) -> None:
        """Let go of the region items kept at rest and the changes between them."""
        self._at_rest.clear()
        self._changes.clear()

    def _update_region(self, items: dict, order: list, kept: bool = False) -> list:
        """The frame's base kept in step: the boxes of what came, went or moved (its old and
        new place) are composed again - the static layer there, then every item that reaches
        into the box, in order, clipped to it, on the 32-bit working surface (the same blends
        as composing the whole region: each pixel is the static layer with the items over it
        blended in order) - and copied into the base. ``items``: slot -> item (_item), as
        _items gives them, ``order`` those items bottom to top; ``kept``: ``items`` is kept
        (the at-rest cache: never changed), so that the boxes to compose from the items shown
        to these (a function of the two sets of items alone) are kept for when the same two
        follow each other again. The px boxes (x0, y0, x1, y1) changed (for base_changes)."""
        old = self._shown
        self._shown = items
        ck = (id(old), id(items))
        known = self._changes.get(ck) if kept else None
        # (the entry holds both dicts, so their ids name them while it is kept)
        if known is not None and known[0] is old and known[1] is items:
            self._changes.move_to_end(ck)
            plan = known[2]
            self.changes_reused += 1
        else:
            plan = self._plan_region(old, items, order)
            if kept and self._shown_kept:
                self._changes[ck] = (old, items, plan)
                if len(self._changes) > CHANGES_KEPT:
                    self._changes.popitem(last=False)
        self._shown_kept = kept
        fb = self._frame_base
        composed = self._composed
        for key in plan:
            x0, y0, x1, y1 = key[0]
            hit = composed.get(key)
            if hit is not None:
                fb[y0:y1, x0:x1] = hit
                continue
            r = pygame.Rect(x0, y0, x1 - x0, y1 - y0)
            compose_clipped(self._work, self._base, r, [(it[0], (it[1], it[2])) for it in key[1]], self._frame_surf,
                            r.topleft)
            composed.put(key, fb[y0:y1, x0:x1], key[1])
        return [key[0] for key in plan]

    def _plan_region(self, old: dict, items: dict, order: list) -> list:
        """The boxes to compose when the region goes from showing ``old`` to ``items``
        (_update_region), each as its key in _composed: (the px box, the items over it in
        ``order``)."""
        rx0, ry0, rx1, ry1 = self._region_box
        moved = []            # the items whose place must be composed again: came, went, or old and new place
        for k, b in items.items():
            a = old.get(k)
            if a is b:
                continue
            if a is None:
                moved.append(b)
            elif a[0] is not b[0] or a[1:] != b[1:]:
                moved.append(a)
                moved.append(b)
        for k, a in old.items():
            if k not in items:
                moved.append(a)
        # their boxes clipped to the region, overlapping ones as one (each pixel composed once;
        # the boxes merged are the same whatever their order: the finest grouping whose boxes
        # around each group do not overlap)
        merged: list = []     # px boxes (x0, y0, x1, y1), none overlapping another
        for _, x0, y0, x1, y1 in moved:
            x0, y0, x1, y1 = max(x0, rx0), max(y0, ry0), min(x1, rx1), min(y1, ry1)
            if x1 <= x0 or y1 <= y0:
                continue
            i = 0
            while i < len(merged):
                m = merged[i]
                if m[0] < x1 and x0 < m[2] and m[1] < y1 and y0 < m[3]:
                    del merged[i]
                    x0, y0, x1, y1 = min(x0, m[0]), min(y0, m[1]), max(x1, m[2]), max(y1, m[3])
                    i = 0
                else:
                    i += 1
            merged.append((x0, y0, x1, y1))
        # the items over each box (the items themselves name them: a surface compares and
        # hashes as itself; _composed holds them, so a key found names the same surfaces)
        return [(box, tuple([it for it in order if it[1] < box[2] and it[3] > box[0] and it[2] < box[3]
                             and it[4] > box[1]])) for box in merged]

    @staticmethod
    def _surface_of(arr: np.ndarray) -> pygame.Surface:
        h, w = arr.shape[:2]
        rgb = pygame.image.frombuffer(np.ascontiguousarray(arr), (w, h), "RGB")
        out = pygame.Surface((w, h), 0, 32)
        out.blit(rgb, (0, 0))
        return out


DRAWING = BoltUnscrewDrawing
