"""Drawing of Rush Hour: the parking board with its exit and bushes (static layer) and the
vehicles (one cached sprite per vehicle and position). With every vehicle at rest, the
frame is the base layer: the static layer with the vehicles on it, one array updated in
place where vehicles moved (its Changes), so frames copy and hash only what changed.

Vehicles are drawn back to front (by the lower edge of their rectangle) so that in the 3d
style the extruded bodies in front cover the ones behind. A vehicle being dragged or
snapping into place is drawn at a fractional position (its sprite cached by position).
The geometry is the level's RushHourUI (design px), the object the engine hit-tests with.
"""

from __future__ import annotations


import numpy as np
import pygame

from longpuzzle.engine.geometry import Rect, circle_points, rounded_rect_points
from longpuzzle.puzzles.rush_hour import DRIVE_OUT_MS, SNAP_MS
from longpuzzle.render.frame.paint import piece_frame
from longpuzzle.render.frame import (
    BoxCache, Changes, GameDrawing, Painter, draw_sprite, mix, px_box, shade, trim_sprite,
)

ASPHALT, ASPHALT_LINE = (70, 78, 90), (96, 106, 118)
RIM, RIM_TOP = (44, 50, 60), (58, 66, 78)
EXIT = (255, 202, 40)
BUSH, BUSH_DARK, BUSH_LIGHT = (67, 160, 71), (46, 125, 50), (129, 199, 132)
GLASS = (38, 50, 66)
LIGHT = (255, 241, 118)
COLOURS = {
    "red": (229, 57, 53), "blue": (30, 136, 229), "white": (240, 242, 245), "sand": (214, 178, 112),
    "cream": (238, 224, 186), "purple": (142, 36, 170), "green": (67, 160, 71), "yellow": (253, 216, 53),
    "orange": (251, 140, 0), "black": (66, 66, 66), "gray": (158, 158, 158), "grey": (158, 158, 158),
}
RIM_PAD = 12.0


# regions of boards composed (static pixels, vehicles blended over them; pygame's alpha blit
# onto 24-bit pixels costs about 70 us a vehicle), kept by (drawing, static layer, region,
# vehicles and positions over it) up to COMPOSED_BYTES, the least recently used dropped first;
# each entry holds its drawing and static layer, so that their ids in the key are not reused
# meanwhile (shared by every drawing, on any thread)
COMPOSED_BYTES = 24 << 20
_COMPOSED = BoxCache(COMPOSED_BYTES, largest=COMPOSED_BYTES // 4)


def _ease(q: float) -> float:
    q = min(max(q, 0.0), 1.0)
    return q * q * (3 - 2 * q)


class RushHourDrawing(GameDrawing):
    background = ((229, 236, 243), (200, 212, 224))
    accent = (229, 57, 53)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        vs = ui.level.extra["vehicles"]
        self.colour = [COLOURS.get(v.get("color"), COLOURS["white"]) for v in vs]
        self.style = [v.get("style", "sedan") for v in vs]
        self.flip = [bool(v.get("flip_visual", False)) for v in vs]
        self.height = min(16.0, 0.2 * ui.cell)       # body height in 3d (design px)
        self._sprites: dict = {}
        self._rank: dict = {}                        # (vehicle, position) -> its drawing order key

    # -- board
    def draw_static(self, p: Painter) -> None:
        u = self.ui
        b = u.board
        outer = Rect(b.x0 - RIM_PAD, b.y0 - RIM_PAD, b.x1 + RIM_PAD, b.y1 + RIM_PAD)
        p.shadow(rounded_rect_points(outer, 16), alpha=55, dx=6, dy=10)
        h = 10.0 if p.is_3d else 0.0
        p.rrect(outer, 16, RIM, height=h, top=RIM_TOP)
        p.poly([(b.x0, b.y0), (b.x1, b.y0), (b.x1, b.y1), (b.x0, b.y1)], ASPHALT, z=h)
        p.grid(b, u.rows, u.cols, u.cell, ASPHALT_LINE, 1.5, z=h)
        # the exit: a gap in the rim at the right end of the exit row, with arrows
        ey0, ey1 = b.y0 + u.exit_row * u.cell + 3, b.y0 + (u.exit_row + 1) * u.cell - 3
        gap = [(b.x1, ey0), (outer.x1 + 0.5, ey0), (outer.x1 + 0.5, ey1), (b.x1, ey1)]
        if p.is_3d:
            p.prism(gap, ASPHALT, h, shadow=False, top=ASPHALT)
        else:
            p.poly(gap, ASPHALT)
        p.line((b.x1 + 3, ey0 + 2), (b.x1 + 3, ey1 - 2), EXIT, 3.0, z=h)
        cy = (ey0 + ey1) / 2
        a = min(14.0, u.cell * 0.16)
        for k in range(2):
            x = b.x1 - u.cell * 0.32 - k * a * 1.4
            p.poly([(x - a * 0.5, cy - a), (x + a * 0.5, cy), (x - a * 0.5, cy + a), (x - a * 0.05, cy)],
                   mix(EXIT, ASPHALT, 0.35 + 0.25 * k), z=h)
        p.text("EXIT", (outer.x1 + 540) / 2, cy, 13, (198, 40, 40))
        for bush in u.level.extra["blockers"]:
            self.draw_bush(p, bush["row"], bush["col"], h)

    def draw_bush(self, p: Painter, row: int, col: int, z0: float) -> None:
        u = self.ui
        cx, cy = u.cell_center(row, col)
        r = u.cell * 0.25
        hb = 0.18 * u.cell if p.is_3d else 0.0
        blobs = [(-0.55, 0.35), (0.55, 0.35), (0.0, -0.45), (0.0, 0.1)]
        if p.is_3d:
            p.shadow(circle_points(cx, cy + r * 0.2, r * 1.7, 28), alpha=60, dx=hb * 0.4, dy=hb * 0.6)
        for i, (dx, dy) in enumerate(blobs):
            x, y = cx + dx * r, cy + dy * r
            col_ = BUSH if i < 3 else BUSH_LIGHT
            if p.is_3d:
                p.prism(circle_points(x, y, r, 24), BUSH_DARK, hb + z0, top=col_, shadow=False)
            else:
                p.circle(x, y, r, col_, outline=BUSH_DARK, width=1.5)

    # -- vehicles
    def draw_vehicle(self, p: Painter, v: int, pos: float) -> None:
        u = self.ui
        r = u.vehicle_rect(v, pos)
        horiz = u.horiz[v]
        L = r.w if horiz else r.h
        W = r.h if horiz else r.w
        front_plus = not self.flip[v]          # the front is at the right / bottom end

        lr = piece_frame(r, horiz, front_plus)   # a rectangle in vehicle coordinates

        c = self.colour[v]
        style = self.style[v]
        is3 = p.is_3d
        hgt = self.height if is3 else 0.0
        z = hgt
        dark = shade(c, 0.72)
        outline = shade(c, 0.55) if sum(c) > 600 else shade(c, 0.7)
        rad = W * 0.22
        if is3:
            p.shadow(rounded_rect_points(r, rad), alpha=70, dx=hgt * 0.35, dy=hgt * 0.55)
        if style == "semi":
            cab = lr(0.76 if 2 * u.cell < L else 0.66, 1.0, -0.5, 0.5)
            trailer = lr(0.0, 0.73 if 2 * u.cell < L else 0.62, -0.5, 0.5)
            tc = mix(c, (255, 255, 255), 0.25)
            p.rrect(trailer, W * 0.08, shade(tc, 0.8), height=hgt * 1.15, top=tc)
            zt = hgt * 1.15 if is3 else 0.0
            p.outline(rounded_rect_points(trailer, W * 0.08), outline, z=zt, width=1.5)
            rr = trailer
            for k in range(1, 5):
                a = k / 5
                if horiz:
                    x = rr.x0 + a * rr.w
                    p.line((x, rr.y0 + 3), (x, rr.y1 - 3), shade(tc, 0.85), 1.2, z=zt)
                else:
                    y = rr.y0 + a * rr.h
                    p.line((rr.x0 + 3, y), (rr.x1 - 3, y), shade(tc, 0.85), 1.2, z=zt)
            p.rrect(cab, W * 0.2, dark, height=hgt, top=c)
            p.outline(rounded_rect_points(cab, W * 0.2), outline, z=z, width=1.5)
            p.poly(rounded_rect_points(lr(0.8, 0.93, -0.38, 0.38), W * 0.06), GLASS, z=z)
            self._lights(p, lr, z)
            return
        p.rrect(r, rad, dark, height=hgt, top=c)
        p.outline(rounded_rect_points(r, rad), outline, z=z, width=1.5)
        if style == "bus":
            p.poly(rounded_rect_points(lr(0.9, 0.97, -0.4, 0.4), W * 0.05), GLASS, z=z)
            p.poly(rounded_rect_points(lr(0.06, 0.86, -0.3, 0.3), W * 0.08), mix(c, (255, 255, 255), 0.35), z=z)
            for k in range(6):
                a0 = 0.08 + k * 0.13
                for w0, w1 in ((-0.46, -0.36), (0.36, 0.46)):
                    p.poly(self._pts(lr(a0, a0 + 0.1, w0, w1)), GLASS, z=z)
        elif style == "pickup":
            p.poly(rounded_rect_points(lr(0.06, 0.5, -0.36, 0.36), W * 0.06), shade(c, 0.62), z=z)
            p.poly(rounded_rect_points(lr(0.58, 0.66, -0.38, 0.38), W * 0.06), GLASS, z=z)
            p.poly(rounded_rect_points(lr(0.66, 0.82, -0.36, 0.36), W * 0.08), mix(c, (255, 255, 255), 0.2), z=z)
            p.poly(rounded_rect_points(lr(0.82, 0.88, -0.38, 0.38), W * 0.06), GLASS, z=z)
        else:      # target, sedan, coupe: a car seen from above
            coupe = style == "coupe"
            rear0, rear1 = (0.2, 0.3) if not coupe else (0.24, 0.36)
            p.poly(rounded_rect_points(lr(rear0, rear1, -0.36, 0.36), W * 0.06), GLASS, z=z)
            p.poly(rounded_rect_points(lr(rear1, 0.58, -0.34, 0.34), W * 0.08), mix(c, (255, 255, 255), 0.22), z=z)
            p.poly(rounded_rect_points(lr(0.58, 0.72, -0.38, 0.38), W * 0.06), GLASS, z=z)
            if style == "target":
                p.poly(self._pts(lr(0.75, 0.97, -0.06, 0.06)), (255, 255, 255), z=z)
                p.poly(self._pts(lr(0.02, 0.18, -0.06, 0.06)), (255, 255, 255), z=z)
        self._lights(p, lr, z)

    @staticmethod
    def _pts(rr: Rect):
        return [(rr.x0, rr.y0), (rr.x1, rr.y0), (rr.x1, rr.y1), (rr.x0, rr.y1)]

    def _lights(self, p, lr, z) -> None:
        for w0, w1 in ((-0.42, -0.24), (0.24, 0.42)):
            p.poly(rounded_rect_points(lr(0.95, 0.995, w0, w1), 1.5), LIGHT, z=z)
            p.poly(self._pts(lr(0.005, 0.035, w0, w1)), (198, 40, 40), z=z)

    def sprite_box(self, v: int, pos: float) -> tuple:
        """The px box (x0, y0, x1, y1) vehicle ``v`` at ``pos`` is drawn in: its rectangle,
        in 3d grown right and down by the body's height (raised by 1.2 times it), 3 px more."""
        r = self.ui.vehicle_rect(v, pos)
        hz = self.height * 1.2 if self.proj.is_3d else 0.0
        grow = self.height if self.proj.is_3d else 0.0
        pts = [(r.x0, r.y0), (r.x1 + grow, r.y0), (r.x1 + grow, r.y1 + grow), (r.x0, r.y1 + grow)]
        return px_box(self.proj, pts, zmax=hz, margin=3)

    def _sprite(self, v: int, pos: float):
        # keyed by the exact position drawn (a key rounded from several positions gave the
        # sprite of whichever was drawn first: frames depended on what came before)
        key = (v, float(pos))
        sp = self._sprites.get(key)
        if sp is None:
            # drawn in a box with room for the 3d body and its shadow, then cut down to the
            # pixels it draws: the regions a move changes (composed, copied, hashed, encoded)
            # are no larger than the vehicle's pixels at both positions
            box = self.sprite_box(v, pos)
            sp = trim_sprite(draw_sprite(self.proj, box, lambda p: self.draw_vehicle(p, v, pos), self.colour[v]), box)
            if len(self._sprites) > 3000:
                self._sprites.clear()
            self._sprites[key] = sp
        return sp

    def positions(self, suite, state, t, anim, phase) -> list[float]:
        """Where each vehicle is drawn (moving coordinate, fractional while moving)."""
        u = self.ui
        pos = [float(x) for x in state]
        d = suite.ui.get("drag") if anim is None else None
        if d is not None:
            pos[d["v"]] += d["off"]
        if anim is not None:
            before = np.asarray(anim["before"])
            v = int(anim["action"]) // (2 * u.m)
            p0, p1 = float(before[v]), float(state[v])
            snap = suite.ui.get("snap")
            if snap is not None and snap.get("v") == v:
                p0 = p0 + float(snap["from"])
            ms = phase * (anim["t1"] - anim["t0"])
            if ms < SNAP_MS:
                pos[v] = p0 + (p1 - p0) * _ease(ms / SNAP_MS)
            else:
                pos[v] = p1
                if v == u.target and anim["t1"] - anim["t0"] > SNAP_MS:
                    q = (ms - SNAP_MS) / DRIVE_OUT_MS
                    pos[v] = p1 + (u.length[v] + 1.5) * q * q
        return pos

    def _order(self, pos) -> list[int]:
        u = self.ui
        rank = self._rank
        out = []
        for v in range(u.n):
            p = pos[v]
            if p is None:
                continue
            k = rank.get((v, p))
            if k is None:
                r = u.vehicle_rect(v, p)
                k = (r.y1, r.x0)
                if len(rank) < 4096:
                    rank[(v, p)] = k
            out.append((k, v))
        out.sort()
        return [v for _, v in out]

    def _moved(self, before, after) -> list:
        """For each vehicle at another position in ``after`` than in ``before``, the px box
        around its sprite at both."""
        out = []
        for v in range(len(after)):
            if after[v] != before[v]:
                a, b = self._sprite(v, before[v])[1], self._sprite(v, after[v])[1]
                out.append((min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])))
        return out

    def base_layer(self, static, suite, state, t, anim, phase):
        if suite.complete and anim is None:
            return None                   # the completion card dims the board without vehicles
        return self._update_base(static, state)

    def _update_base(self, static: np.ndarray, state) -> np.ndarray:
        """The base layer: ``static`` with every vehicle at rest in ``state``, ONE array kept
        in step in place - only the regions of vehicles that moved since the last call are
        composed again (the static pixels, then every vehicle over them back to front), and
        recorded in ``base_changes``, so a frame copies only those and knows its delta."""
        if getattr(self, "_base_static", None) is not static:
            u = self.ui
            b = u.board
            m = RIM_PAD + 2 + (self.height if self.proj.is_3d else 0)
            pts = [(b.x0 - m, b.y0 - m), (b.x1 + m, b.y0 - m), (b.x1 + m, b.y1 + m), (b.x0 - m, b.y1 + m)]
            # the board's px box: vehicles at rest are drawn inside it only (clipped to it)
            self._bbox = px_box(self.proj, pts, zmax=self.height * 1.3 if self.proj.is_3d else 0, margin=4)
            self._base = static.copy()
            self._bsurf = pygame.image.frombuffer(self._base, self.proj.size, "RGB")
            self._base_static = static
            self._bpos = None
            self.base_changes = Changes()
        pos = [int(v) for v in state]
        if pos == self._bpos:
            return self._base
        x0, y0, x1, y1 = self._bbox
        order = self._order(pos)
        if self._bpos is None:
            regions = [(x0, y0, x1, y1)]
        else:
            regions = self._moved(self._bpos, pos)
        boxes = []
        base, surf = self._base, self._bsurf
        for rx0, ry0, rx1, ry1 in regions:
            rx0, ry0, rx1, ry1 = max(rx0, x0), max(ry0, y0), min(rx1, x1), min(ry1, y1)
            if rx1 <= rx0 or ry1 <= ry0:
                continue
            over = []
            for v in order:
                box = self._sprite(v, pos[v])[1]
                if box[0] < rx1 and rx0 < box[2] and box[1] < ry1 and ry0 < box[3]:
                    over.append((v, pos[v]))
            # the region is a function of the static pixels and the vehicles over it: one
            # composed before (a state come back to, a level played again) is copied back
            key = (id(self), id(static), rx0, ry0, rx1, ry1, tuple(over))
            done = _COMPOSED.get(key)
            if done is not None:
                base[ry0:ry1, rx0:rx1] = done
            else:
                base[ry0:ry1, rx0:rx1] = static[ry0:ry1, rx0:rx1]
                surf.set_clip(pygame.Rect(rx0, ry0, rx1 - rx0, ry1 - ry0))
                for v, p in over:
                    sp, box = self._sprite(v, p)
                    surf.blit(sp, (box[0], box[1]))
                surf.set_clip(None)
                _COMPOSED.put(key, base[ry0:ry1, rx0:rx1], (self, static))
            boxes.append((rx0, ry0, rx1, ry1))
        self._bpos = pos
        self.base_changes.changed(boxes)
        return base

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        if suite.complete and anim is None:
            return                        # the completion card covers the board
        if anim is None and suite.ui.get("drag") is None:
            return                        # every vehicle at rest: the base layer is the frame
        # a vehicle moving (dragged, snapping, driving out): the base shows every vehicle at
        # rest in ``state``; where a vehicle is drawn elsewhere (its box at rest and its box
        # drawn), the region is composed again as the static pixels with every vehicle
        # over them back to front, and put over the base
        pos = self.positions(suite, state, t, anim, phase)
        rest = self._bpos
        W, H = self.proj.size
        regions = self._moved(rest, pos)
        x0, y0, x1, y1 = self._bbox
        for v in range(len(pos)):
            if pos[v] == rest[v]:
                # a vehicle at rest whose sprite reaches out of the board's box: the base
                # has it clipped to the box, a frame with a vehicle moving shows it whole
                b = self._sprite(v, pos[v])[1]
                if b[0] < x0 or b[1] < y0 or b[2] > x1 or b[3] > y1:
                    regions.append(b)
        if not regions:
            return
        order = self._order(pos)
        static = f.static
        for rx0, ry0, rx1, ry1 in regions:
            rx0, ry0, rx1, ry1 = max(rx0, 0), max(ry0, 0), min(rx1, W), min(ry1, H)
            if rx1 <= rx0 or ry1 <= ry0:
                continue
            reg = static[ry0:ry1, rx0:rx1].copy()
            surf = pygame.image.frombuffer(reg, (rx1 - rx0, ry1 - ry0), "RGB")
            for v in order:
                sp, box = self._sprite(v, pos[v])
                if box[0] < rx1 and rx0 < box[2] and box[1] < ry1 and ry0 < box[3]:
                    surf.blit(sp, (box[0] - rx0, box[1] - ry0))
            del surf
            f.put(reg, rx0, ry0)


DRAWING = RushHourDrawing
