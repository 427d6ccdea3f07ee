"""Drawing of Truck Escape: the yard, progress bar frame and item buttons (static layer),
the trucks and the progress bar fill (dynamic).

Trucks never move except to leave, so the yard is composed from cached opaque patches:
one per truck rectangle (grown by the 3d extrusion and shadow), keyed by which trucks
touching that patch are still present. Each patch is a correct picture of its own region,
so they can be copied in any order. They make the base layer, kept in place: a truck
leaving recomposes only the patches it touches, so a frame copies (and hashes) only those. A
shaking truck and a truck driving away are sprites on top. The geometry is the level's TruckEscapeUI.
"""

from __future__ import annotations

import math


from longpuzzle.engine.geometry import Rect, rounded_rect_points
from longpuzzle.puzzles.truck_escape import ITEM_SIZE, ITEM_Y, ITEMS, PROGRESS_BAR
from longpuzzle.render.frame.paint import piece_frame
from longpuzzle.render.frame import (
    Changes, GameDrawing, INK, MUTED, WHITE, Painter, draw_patch, draw_sprite, mix, px_box, shade,
)

YARD, YARD_LINE, YARD_RIM, YARD_RIM_TOP = (203, 190, 160), (186, 171, 138), (121, 104, 78), (150, 131, 100)
GLASS = (44, 56, 70)
LIGHT = (255, 241, 118)
CARGO = (236, 239, 241)
COLOURS = {"yellow": (251, 192, 45), "blue": (30, 136, 229), "red": (229, 57, 53), "gray_green": (120, 144, 112),
           "green": (67, 160, 71), "orange": (251, 140, 0), "white": (240, 240, 240)}
BAR_BG, BAR_FILL = (207, 216, 220), (67, 160, 71)
SHAKE_PX, SHAKE_PERIOD = 6.0, 80.0
RIM_PAD = 10.0


class TruckEscapeDrawing(GameDrawing):
    background = ((246, 236, 214), (226, 210, 178))
    accent = (245, 124, 0)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        ex = ui.level.extra
        self.colour = [COLOURS.get(t.get("color"), COLOURS["yellow"]) for t in ex["trucks"]]
        self.height = min(18.0, 0.45 * ui.width)       # cargo box height in 3d (design px)
        is3 = proj.is_3d
        n = ui.n
        self.boxes = []
        for i in range(n):
            r = ui.rects[i]
            g = self.height if is3 else 1.0
            pts = [(r.x0 - 1, r.y0 - 1), (r.x1 + g, r.y0 - 1), (r.x1 + g, r.y1 + g), (r.x0 - 1, r.y1 + g)]
            self.boxes.append(px_box(proj, pts, zmax=self.height * 1.1 if is3 else 0.0, margin=2))
        # back to front: by the lower edge, then left to right
        self.order = sorted(range(n), key=lambda i: (ui.rects[i].y1, ui.rects[i].x0))
        rank = {i: k for k, i in enumerate(self.order)}
        self.touch = []
        for i in range(n):
            a = self.boxes[i]
            nb = [j for j in range(n) if self._overlap(a, self.boxes[j])]
            self.touch.append(tuple(sorted(nb, key=lambda j: rank[j])))
        self.touched_by = [[i for i in range(n) if j in self.touch[i]] for j in range(n)]   # patches showing truck j
        self._patches: dict = {}
        self._sprites: dict = {}
        self._bar: dict = {}
        b = PROGRESS_BAR
        self._bar_box = px_box(proj, [(b.x0 - 4, b.y0 - 4), (b.x1 + 4, b.y1 + 4)], zmax=6 if is3 else 0, margin=2)

    @staticmethod
    def _overlap(a, b) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    # -- static
    def draw_static(self, p: Painter) -> None:
        u = self.ui
        # the title plate (design y 60) between the menu and restart buttons; it covers the
        # generic header lines so that the progress bar at y 110 stays clear
        plate = Rect(120, 18, 420, 95)
        p.poly(rounded_rect_points(Rect(plate.x0 - 2, plate.y0 - 2, plate.x1 + 2, plate.y1 + 2), 20),
               mix(self.background[0], YARD_RIM, 0.35))
        p.poly(rounded_rect_points(plate, 18), mix(self.background[0], WHITE, 0.6))
        p.text(u.puzzle.title, 270, 36, 22, MUTED)
        p.text(f"Level {u.level.number}", 270, 68, 38, INK)
        fr = u.field
        outer = Rect(fr.x0 - RIM_PAD, fr.y0 - RIM_PAD, fr.x1 + RIM_PAD, fr.y1 + RIM_PAD)
        p.shadow(rounded_rect_points(outer, 14), alpha=50, dx=6, dy=10)
        p.rrect(outer, 14, YARD_RIM, height=8 if p.is_3d else 0, top=YARD_RIM_TOP)
        z = 8.0 if p.is_3d else 0.0
        p.poly([(fr.x0, fr.y0), (fr.x1, fr.y0), (fr.x1, fr.y1), (fr.x0, fr.y1)], YARD, z=z)
        p.grid(fr, u.rows, u.cols, u.cell, YARD_LINE, 1.2, z=z)
        # progress bar frame (the fill is dynamic) and the item buttons
        for k, name, x in ITEMS:
            r = Rect.centred(x, ITEM_Y, ITEM_SIZE, ITEM_SIZE)
            h = 8 if p.is_3d else 0
            p.rrect(r, 20, (176, 190, 197), height=h, top=(236, 239, 241))
            p.outline(rounded_rect_points(r, 20), (144, 164, 174), z=h, width=2)
            self._item_icon(p, k, x, ITEM_Y - 12, h)
            p.text(name, x, ITEM_Y + 28, 20, MUTED, z=h)

    def _item_icon(self, p: Painter, k: str, x: float, y: float, z: float) -> None:
        c = (120, 144, 156)
        if k == "remove":          # a cross
            p.line((x - 13, y - 13), (x + 13, y + 13), c, 5, z=z)
            p.line((x - 13, y + 13), (x + 13, y - 13), c, 5, z=z)
        elif k == "shuffle":       # two crossing arrows
            p.line((x - 16, y - 9), (x + 12, y + 9), c, 4, z=z)
            p.line((x - 16, y + 9), (x + 12, y - 9), c, 4, z=z)
            p.poly([(x + 10, y + 3), (x + 18, y + 10), (x + 8, y + 14)], c, z=z)
            p.poly([(x + 10, y - 3), (x + 18, y - 10), (x + 8, y - 14)], c, z=z)
        else:                      # flip: a U-turn arrow
            p.line((x - 10, y + 12), (x - 10, y - 6), c, 4, z=z)
            p.line((x - 10, y - 6), (x - 3, y - 13), c, 4, z=z)
            p.line((x - 3, y - 13), (x + 5, y - 13), c, 4, z=z)
            p.line((x + 5, y - 13), (x + 11, y - 6), c, 4, z=z)
            p.line((x + 11, y - 6), (x + 11, y + 6), c, 4, z=z)
            p.poly([(x + 4, y + 4), (x + 18, y + 4), (x + 11, y + 14)], c, z=z)

    # -- trucks
    def draw_truck(self, p: Painter, i: int, dx: float = 0.0, dy: float = 0.0) -> None:
        u = self.ui
        r0 = u.rects[i]
        r = Rect(r0.x0 + dx, r0.y0 + dy, r0.x1 + dx, r0.y1 + dy)
        d = u.dirs[i]                           # 0 up, 1 down, 2 left, 3 right
        horiz = d >= 2
        L = r.w if horiz else r.h
        W = r.h if horiz else r.w
        cx, cy = r.center
        fwd = d in (1, 3)                       # the head is at the bottom / right end

        lr = piece_frame(r, horiz, fwd)         # truck coordinates: along 0 (tail) .. 1 (head)

        def at(a, w):
            if not fwd:
                a = 1 - a
            return (r.x0 + a * L, cy + w * W) if horiz else (cx + w * W, r.y0 + a * L)

        c = self.colour[i]
        is3 = p.is_3d
        h = self.height if is3 else 0.0
        if is3:
            p.shadow(rounded_rect_points(r, W * 0.15), alpha=70, dx=h * 0.35, dy=h * 0.55)
        cargo = lr(0.0, 0.66, -0.5, 0.5)
        cab = lr(0.7, 1.0, -0.46, 0.46)
        p.rrect(cab, W * 0.2, shade(c, 0.7), height=h * 0.8, top=c)
        zc = h * 0.8
        p.outline(rounded_rect_points(cab, W * 0.2), shade(c, 0.55), z=zc, width=1.5)
        p.poly(rounded_rect_points(lr(0.8, 0.9, -0.36, 0.36), W * 0.05), GLASS, z=zc)
        for w0, w1 in ((-0.4, -0.24), (0.24, 0.4)):
            p.poly(rounded_rect_points(lr(0.96, 0.995, w0, w1), 1.2), LIGHT, z=zc)
        p.rrect(cargo, W * 0.1, shade(CARGO, 0.72), height=h, top=CARGO)
        p.outline(rounded_rect_points(cargo, W * 0.1), mix(c, INK, 0.3), z=h, width=2)
        # a stripe of the truck's colour and the arrow of its direction on the roof
        p.poly(rounded_rect_points(lr(0.04, 0.62, -0.42, -0.3), 1.5), c, z=h)
        p.poly(rounded_rect_points(lr(0.04, 0.62, 0.3, 0.42), 1.5), c, z=h)
        p.poly([at(0.58, 0.0), at(0.36, -0.22), at(0.36, -0.08), at(0.1, -0.08), at(0.1, 0.08), at(0.36, 0.08),
                at(0.36, 0.22)], mix(c, INK, 0.25), z=h)

    def _patch(self, static, i: int, present: tuple):
        key = (i, present)
        arr = self._patches.get(key)
        if arr is None:
            if len(self._patches) > 6000:
                self._patches.clear()
            nb = self.touch[i]

            def draw(p):
                for j, on in zip(nb, present):
                    if on:
                        self.draw_truck(p, j)
            arr = self._patches[key] = draw_patch(self.proj, static, self.boxes[i], draw)
        return arr

    def _sprite(self, i: int, dx: float, dy: float):
        key = (i, round(dx, 2), round(dy, 2))
        sp = self._sprites.get(key)
        if sp is None:
            u = self.ui
            r = u.rects[i]
            g = self.height if self.proj.is_3d else 1.0
            pts = [(r.x0 + dx - 1, r.y0 + dy - 1), (r.x1 + dx + g, r.y0 + dy - 1), (r.x1 + dx + g, r.y1 + dy + g),
                   (r.x0 + dx - 1, r.y1 + dy + g)]
            box = px_box(self.proj, pts, zmax=self.height * 1.1 if self.proj.is_3d else 0.0, margin=2)
            sp = (draw_sprite(self.proj, box, lambda p: self.draw_truck(p, i, dx, dy), self.colour[i]), box)
            if len(self._sprites) > 512:
                self._sprites.clear()
            self._sprites[key] = sp
        return sp

    def _bar_patch(self, static, pct: int):
        arr = self._bar.get(pct)
        if arr is None:
            b = PROGRESS_BAR

            def draw(p):
                h = 5 if p.is_3d else 0
                p.rrect(b, 14, shade(BAR_BG, 0.8), height=h, top=BAR_BG)
                if pct > 0:
                    w = max(28.0, b.w * pct / 100)
                    p.poly(rounded_rect_points(Rect(b.x0, b.y0, b.x0 + w, b.y1), 14), BAR_FILL, z=h)
                p.text(f"{pct}%", 270, 110, 22, INK if pct < 50 else WHITE, z=h)
            arr = self._bar[pct] = draw_patch(self.proj, static, self._bar_box, draw)
        return arr

    def _pct(self, state) -> int:
        n = self.ui.n
        return int(math.floor(100 * (n - int(state[0])) / n + 0.5)) if n else 100

    def base_layer(self, static, suite, state, t, anim, phase):
        """The static layer with the yard as the state stands (every present truck's patch)
        and the progress bar: ONE array updated in place, where a truck left (the patches of
        the trucks touching it) and when the bar's percentage changes, each update recorded
        in ``base_changes`` - a frame copies only those boxes and knows its delta."""
        if getattr(self, "_base_static", None) is not static:
            self._base = static.copy()
            self._base_static = static
            self._shown: list = [None] * self.ui.n     # the patch key shown per truck
            self._present = None                        # the trucks present as shown
            self._shown_pct = None
            self.base_changes = Changes()
        base = self._base
        present = [bool(v) for v in state[1:]]
        last = self._present
        if last is None:
            changed = list(range(self.ui.n))
        elif present == last:
            changed = []
        else:                                   # the patches touching a truck that came or went
            changed = sorted({i for j in range(self.ui.n) if present[j] != last[j] for i in self.touched_by[j]})
        keys = self._shown
        if changed:
            keys = list(keys)
            for i in changed:
                keys[i] = tuple(present[j] for j in self.touch[i])
        self._present = present
        boxes: list = []

        def put(patch, x0, y0):
            h, w = patch.shape[:2]
            base[y0:y0 + h, x0:x0 + w] = patch
            boxes.append((x0, y0, x0 + w, y0 + h))
        self._compose(put, static, keys, changed)
        self._shown = keys
        pct = self._pct(state)
        if pct != self._shown_pct or any(self._overlap(b, self._bar_box) for b in boxes):
            put(self._bar_patch(static, pct), *self._bar_box[:2])
            self._shown_pct = pct
        if boxes:
            self.base_changes.changed(boxes)
        return base

    def _compose(self, put, static, keys, changed) -> None:
        """Put the patches of trucks ``changed`` (their keys in ``keys``) where the other
        patches already are, with the bytes of putting every patch in truck order (a later
        patch covers an earlier one where they overlap, by a pixel row or so): after a
        changed patch, every later patch overlapping it is put again over the overlap."""
        if not changed:
            return
        boxes = self.boxes
        first = changed[0]
        ch = set(changed)
        for i in range(first, self.ui.n):
            if i in ch:
                put(self._patch(static, i, keys[i]), *boxes[i][:2])
                continue
            b = boxes[i]
            patch = None
            for m in changed:
                if m >= i:
                    break
                a = boxes[m]
                x0, y0, x1, y1 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
                if x1 > x0 and y1 > y0:
                    if patch is None:
                        patch = self._patch(static, i, keys[i])
                    put(patch[y0 - b[1]:y1 - b[1], x0 - b[0]:x1 - b[0]], x0, y0)

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        # the trucks present and the bar are the base layer (base_layer); drawn here: a
        # shaking truck (its patches without it, the truck as a sprite) and one driving away
        u = self.ui
        sh = suite.shake if suite.shake and suite.shake["t0"] <= t < suite.shake["until"] else None
        shaking = None
        if sh is not None and sh["target"].startswith("truck:"):
            shaking = int(sh["target"].split(":")[1])
            if not state[1 + shaking]:
                shaking = None
        if shaking is not None:
            present = [bool(v) for v in state[1:]]
            present[shaking] = False
            keys = [tuple(present[j] for j in self.touch[i]) for i in range(u.n)]
            changed = [i for i in range(u.n) if shaking in self.touch[i]]
            self._compose(f.put, f.static, keys, changed)
            over_bar = any(self._overlap(self.boxes[i], self._bar_box) for i in changed)
            dt = t - sh["t0"]
            amp = SHAKE_PX * (1 - dt / max(1, sh["until"] - sh["t0"]))
            off = round(amp * math.sin(2 * math.pi * dt / SHAKE_PERIOD), 1)
            dx, dy = (off, 0.0) if u.dirs[shaking] < 2 else (0.0, off)
            sp, box = self._sprite(shaking, dx, dy)
            f.blit(sp, box[0], box[1])
            over_bar = over_bar or self._overlap(box, self._bar_box)
        else:
            over_bar = False
        if anim is not None:
            i = int(anim["action"])
            q = phase * phase
            d = u.dirs[i]
            sx, sy = ((0, -1), (0, 1), (-1, 0), (1, 0))[d]
            cx, cy = u.centers[i]
            # far enough to leave the frame exactly at the end of the animation
            dist = (cy, 960 - cy, cx, 540 - cx)[d] + u.length / 2 + 2 * self.height + 4
            sp, box = self._sprite(i, round(sx * dist * q, 2), round(sy * dist * q, 2))
            f.blit(sp, box[0], box[1])
            over_bar = over_bar or self._overlap(box, self._bar_box)
        if over_bar:                          # the bar is drawn over the trucks
            f.put(self._bar_patch(f.static, self._pct(state)), *self._bar_box[:2])


DRAWING = TruckEscapeDrawing
