"""Drawing of Nut and Bolt: steel bolts (static layer) and coloured hex nuts (dynamic).

Each bolt's nut column is one cached opaque patch keyed by (bolt, colours on it, lifted
count). The patches make the base layer, kept in place: a move puts again only the columns
it changed, so a frame copies (and hashes) only those. The geometry is the
level's NutAndBoltUI (design px), the same object the engine hit-tests with.
"""

from __future__ import annotations

import math

import numpy as np

from longpuzzle.engine.geometry import Rect, rounded_rect_points
from longpuzzle.puzzles.nut_and_bolt import PALETTE
from longpuzzle.render.frame import (
    Changes, Frame, GameDrawing, Painter, draw_patch, draw_sprite, hex_rgb, mix, px_box, shade,
)

NUT_Z, ROD_Z, BASE_Z, CAP_Z = 16.0, 9.0, 12.0, 11.0
STEEL, STEEL_DARK, STEEL_LIGHT = (144, 164, 174), (84, 110, 122), (207, 216, 220)
SHAKE_PX, SHAKE_PERIOD = 7.0, 90.0


class NutAndBoltDrawing(GameDrawing):
    background = ((243, 238, 229), (224, 214, 197))
    accent = (239, 108, 0)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        self.colours = [hex_rgb(c) for _, _, c in PALETTE]
        self._patches: dict = {}
        self.boxes = []
        for b in range(ui.n):
            r = self.column(b)
            self.boxes.append(px_box(proj, [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)],
                                     zmax=NUT_Z if proj.is_3d else 0, margin=1))
        # per bolt, what _recompose puts for its box with every column at rest: the bolts
        # whose patches reach into it, in order, each with the part of the box it covers
        # and that part of its patch (base_layer's moves change whole columns at rest)
        self._rest_puts = []
        for b in range(ui.n):
            puts = []
            self._recompose(lambda arr, x0, y0, puts=puts: puts.append(arr + (x0, y0)), None, [self.boxes[b]],
                            range(ui.n), [bx[0] for bx in self.boxes], plan=True)
            self._rest_puts.append(puts)

    def column(self, b: int) -> Rect:
        u = self.ui
        half = max(u.nut_w, u.base_w + 12) / 2 + 6
        return Rect(u.cx[b] - half, u.boxes[b].y0, u.cx[b] + half, u.base[b] + 6)

    # -- pieces
    def draw_bolt(self, p: Painter, b: int) -> None:
        u = self.ui
        cx, base = u.cx[b], u.base[b]
        p.rrect(Rect(cx - u.base_w / 2 - 6, base - u.base_h, cx + u.base_w / 2 + 6, base), 5, STEEL_DARK,
                height=BASE_Z, top=STEEL)
        rod = Rect(cx - u.rod_w / 2, u.cap_y[b], cx + u.rod_w / 2, base - u.base_h)
        p.rrect(rod, 2, STEEL_DARK, height=ROD_Z, top=STEEL_LIGHT)
        zt = ROD_Z if p.is_3d else 0
        y = rod.y1 - u.step / 3
        while y > rod.y0 + 3:
            p.line((rod.x0 + 1, y), (rod.x1 - 1, y - 2), STEEL, 1.2, z=zt)
            y -= u.step / 3
        cw = u.rod_w * 2.3
        p.rrect(Rect(cx - cw / 2, u.cap_y[b] - u.cap_h / 2, cx + cw / 2, u.cap_y[b] + u.cap_h / 2), u.cap_h / 2,
                STEEL_DARK, height=CAP_Z, top=STEEL)

    def draw_nut(self, p: Painter, x: float, y: float, colour_id: int, glow: bool = False) -> None:
        u = self.ui
        c = self.colours[colour_id - 1]
        w, h = u.nut_w, u.nut_h
        r = Rect(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        pts = rounded_rect_points(r, h * 0.3)
        p.prism(pts, shade(c, 0.9), NUT_Z, top=c, shadow=False) if p.is_3d else p.poly(pts, c)
        z = NUT_Z if p.is_3d else 0.0
        p.poly(rounded_rect_points(Rect(r.x0 + 3, r.y0 + 2, r.x1 - 3, r.y0 + h * 0.38), h * 0.15),
               mix(c, (255, 255, 255), 0.35), z=z)
        p.poly([(r.x0 + 2, r.y1 - h * 0.22), (r.x1 - 2, r.y1 - h * 0.22), (r.x1 - 4, r.y1 - 1), (r.x0 + 4, r.y1 - 1)],
               shade(c, 0.78), z=z)
        for fx in (-0.2, 0.2):
            p.line((x + fx * w, r.y0 + 2), (x + fx * w, r.y1 - 2), shade(c, 0.8), 1.4, z=z)
        if glow:
            p.outline(pts, (255, 255, 255), z=z, width=2.5)

    def draw_static(self, p: Painter) -> None:
        u = self.ui
        for b in sorted(range(u.n), key=lambda b: u.base[b]):
            self.draw_bolt(p, b)

    # -- dynamic
    def _patch(self, static: np.ndarray, b: int, nuts: tuple, lifted: int) -> np.ndarray:
        key = (b, nuts, lifted)
        arr = self._patches.get(key)
        if arr is None:
            if len(self._patches) > 4096:
                self._patches.clear()
            u = self.ui

            def draw(p):
                h = len(nuts)
                for i, c in enumerate(nuts):
                    up = u.lift if i >= h - lifted else 0.0
                    self.draw_nut(p, u.cx[b], u.nut_y(b, i) - up, c, glow=up > 0)
            arr = self._patches[key] = draw_patch(self.proj, static, self.boxes[b], draw)
        return arr

    def _pose(self, suite, state, anim):
        """(each bolt's patch key (nuts, lifted count) as a frame shows it at rest, the
        moving nuts of an animation or None)."""
        u = self.ui
        n, cap = u.n, u.cap
        show = state
        moving = None
        if anim is not None:
            before = np.asarray(anim["before"], dtype=state.dtype)
            after, _ = suite.puzzle.step(suite.level, before, anim["action"])
            src, dst = divmod(anim["action"], n)
            k = int(after[dst]) - int(before[dst])
            show = after.copy()
            show[dst] = before[dst]
            show[n + dst * cap: n + (dst + 1) * cap] = before[n + dst * cap: n + (dst + 1) * cap]
            moving = (src, dst, k, int(before[n + src * cap + int(before[src]) - 1]), int(before[src]),
                      int(before[dst]))
        sel = suite.ui.get("selected") if anim is None else None
        v = show.tolist()                   # (Python ints: one conversion, not one per nut)
        keys = []
        for b in range(n):
            s0 = n + b * cap
            keys.append((tuple(v[s0:s0 + v[b]]), u.top_run(show, b) if sel == b else 0))
        return keys, moving

    def _recompose(self, put, static, regions, keys, xs, plan: bool = False) -> None:
        """Put the px ``regions`` (x0, y0, x1, y1) together again as putting every bolt's
        patch (``keys``, at px x ``xs``) over ``static`` in bolt order gives them: the static
        pixels, then every patch overlapping the region, clipped to it, in order. ``plan``:
        ``put`` is given, instead of the pixels, what they are: (the bolt, or None for the
        static layer; the rows y0, y1 and columns x0, x1 of its patch, or of the static
        layer), and where they go (x, y)."""
        boxes = self.boxes
        for rx0, ry0, rx1, ry1 in regions:
            # the last patch covering the whole region hides the static pixels and the patches
            # before it: put from that one on
            first = None
            for b in range(len(keys) - 1, -1, -1):
                bx = boxes[b]
                if xs[b] <= rx0 and bx[1] <= ry0 and xs[b] + bx[2] - bx[0] >= rx1 and bx[3] >= ry1:
                    first = b
                    break
            if first is None:
                put((None, ry0, ry1, rx0, rx1) if plan else static[ry0:ry1, rx0:rx1], rx0, ry0)
                first = 0
            for b in range(first, len(keys)):
                bx = boxes[b]
                x0, y0 = xs[b], bx[1]
                cx0, cy0, cx1, cy1 = max(rx0, x0), max(ry0, y0), min(rx1, x0 + bx[2] - bx[0]), min(ry1, bx[3])
                if cx1 > cx0 and cy1 > cy0:
                    if plan:
                        put((b, cy0 - y0, cy1 - y0, cx0 - x0, cx1 - x0), cx0, cy0)
                        continue
                    arr = self._patch(static, b, *keys[b])
                    put(arr[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0], cx0, cy0)

    def base_layer(self, static, suite, state, t, anim, phase):
        """The static layer with every bolt's nuts as a frame shows them at rest: ONE array
        updated in place where a bolt's nuts changed (its Changes), so a frame copies and
        hashes only those boxes."""
        if getattr(self, "_base_static", None) is not static:
            self._base = static.copy()
            self._base_static = static
            self._shown = None
            self.base_changes = Changes()
        keys, self._moving = self._pose(suite, state, anim)
        self._keys = keys
        if self._shown is None:
            changed = list(range(len(keys)))
        else:
            changed = [b for b in range(len(keys)) if keys[b] != self._shown[b]]
        if changed:
            base = self._base
            patch = self._patch
            for b in changed:                   # (as _recompose puts a column's box, worked out once)
                for c, sy0, sy1, sx0, sx1, x0, y0 in self._rest_puts[b]:
                    if c is None:
                        base[y0:y0 + sy1 - sy0, x0:x0 + sx1 - sx0] = static[sy0:sy1, sx0:sx1]
                    else:
                        base[y0:y0 + sy1 - sy0, x0:x0 + sx1 - sx0] = patch(static, c, *keys[c])[sy0:sy1, sx0:sx1]
            regions = [self.boxes[b] for b in changed]
            self._shown = keys
            self.base_changes.changed(regions)
        return self._base

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        # every bolt's nuts at rest are the base layer (base_layer); drawn here: a shaking
        # bolt's column moved sideways, and the nuts of a move in flight
        u = self.ui
        sh = suite.shake if suite.shake and suite.shake["t0"] <= t < suite.shake["until"] else None
        if sh is not None and sh["target"].startswith("bolt:"):
            b = int(sh["target"].split(":")[1])
            dt = t - sh["t0"]
            amp = SHAKE_PX * (1 - dt / max(1, sh["until"] - sh["t0"]))
            dx = int(round(amp * math.cos(2 * math.pi * dt / SHAKE_PERIOD) * self.proj.local_scale(u.cx[b], u.base[b])))
            if dx and 0 <= b < u.n:
                xs = [bx[0] for bx in self.boxes]
                xs[b] += dx
                x0, y0, x1, y1 = self.boxes[b]
                W = self.proj.width
                region = (max(0, min(x0, x0 + dx)), y0, min(W, max(x1, x1 + dx)), y1)
                self._recompose(f.put, f.static, [region], self._keys, xs)
        if self._moving is not None:
            self._draw_moving(f, self._moving, phase)

    def _draw_moving(self, f: Frame, moving, phase: float) -> None:
        u = self.ui
        src, dst, k, colour, hs, ht = moving
        hover = min(u.cap_y[src], u.cap_y[dst]) - u.cap_h - 1.6 * u.step
        pts = []
        for j in range(k):
            sx, sy = u.cx[src], u.nut_y(src, hs - 1 - j) - u.lift
            tx, ty = u.cx[dst], u.nut_y(dst, ht + k - 1 - j)
            hy = hover - j * u.step
            if phase < 0.3:
                q = phase / 0.3
                pts.append((sx, sy + (hy - sy) * q))
            elif phase < 0.7:
                q = (phase - 0.3) / 0.4
                q = q * q * (3 - 2 * q)
                pts.append((sx + (tx - sx) * q, hy))
            else:
                q = (phase - 0.7) / 0.3
                pts.append((tx, hy + (ty - hy) * q))
        for x, y in sorted(pts, key=lambda q: q[1]):
            r = Rect.centred(x, y, u.nut_w + 4, u.nut_h + 4)
            box = px_box(self.proj, [(r.x0, r.y0), (r.x1, r.y1), (r.x0, r.y1), (r.x1, r.y0)],
                         zmax=NUT_Z if self.proj.is_3d else 0, margin=2)
            sp = draw_sprite(self.proj, box, lambda p, x=x, y=y: self.draw_nut(p, x, y, colour, True),
                             self.colours[colour - 1])
            f.blit(sp, box[0], box[1])


DRAWING = NutAndBoltDrawing
