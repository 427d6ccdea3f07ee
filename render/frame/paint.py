"""Drawing in design px: the Painter (shapes, prisms, text through a projection), the
Recorder that records a Painter's polygons for replay, the palette and colour helpers
(font, mix, shade, hex_rgb) and pygame's one-time font setup."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pygame

from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W, Projection, Rect, circle_points, rounded_rect_points
from longpuzzle.engine.labels import screen_text

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


# the Chinese screens' font: Noto Sans CJK SC Bold subset to the glyphs the screens use
# (fonts/make_subset.py rebuilds it; fonts/OFL.txt is its licence)
CJK_FONT = Path(__file__).with_name("fonts") / "NotoSansCJKsc-Bold.subset.otf"
# the CJK face at the size pygame's default font is asked for: the default font's glyphs fill
# more of their nominal size than Noto's (whose em box leaves room for ascenders), so Chinese
# texts are drawn at this share of the size to take the same height on screen
CJK_SIZE = 0.8


@lru_cache(maxsize=256)
def font(px: int, lang: str = "en", file: str | None = None) -> pygame.font.Font:
    """The font of a text at ``px`` in ``lang``; ``file``: a non-English text's font file
    (font_file; default the shipped CJK_FONT)."""
    _init()
    if lang == "en":
        return pygame.font.Font(None, max(6, int(px)))
    return pygame.font.Font(file or str(CJK_FONT), max(6, int(round(px * CJK_SIZE))))


# ---- fonts a game brings (GameSpec.fonts) ------------------------------------------------
# The shipped CJK font holds the glyphs of longpuzzle's own texts only. A game of another
# package may declare font files of its own per language: a text the shipped font cannot draw
# whole is drawn in the first declared font that can (the game's own first, then the other
# games', for texts of menus, which show every game's title).

@lru_cache(maxsize=64)
def _face(file: str):
    import pygame.freetype     # (reads a font's character map: get_metrics is None for a missing glyph)
    pygame.freetype.init()
    return pygame.freetype.Font(file, 12)


@lru_cache(maxsize=8192)
def _has_glyph(file: str, ch: str) -> bool:
    return _face(file).get_metrics(ch)[0] is not None


def _missing(file: str, text: str) -> str:
    return "".join(dict.fromkeys(ch for ch in text if not ch.isspace() and not _has_glyph(file, ch)))


def declared_fonts(lang: str, game: str | None = None) -> list[str]:
    """The font files the games declare for ``lang`` (GameSpec.fonts): ``game``'s first,
    then every other game's, in the benchmark's order."""
    from longpuzzle.engine.registry import spec, specs
    ordered = ([spec(game)] if game is not None else []) + [s for s in specs() if s.id != game]
    out: list[str] = []
    for s in ordered:
        for f in s.font_files(lang):
            if f not in out:
                out.append(f)
    return out


@lru_cache(maxsize=4096)
def font_file(text: str, lang: str, game: str | None = None) -> str:
    """The font file a text shown in ``lang`` is drawn in: the shipped CJK_FONT when it has
    every glyph of the text (always, for longpuzzle's own texts), else the first declared font
    that has them all (declared_fonts), else the one that lacks the fewest."""
    files = [str(CJK_FONT)] + declared_fonts(lang, game)
    return min(files, key=lambda f: (len(_missing(f, text)), files.index(f)))


def missing_glyphs(text: str, lang: str, game: str | None = None) -> str:
    """The characters of ``text`` (as shown in ``lang``) that its font (font_file) has no
    glyph for: drawn as blanks. Empty when the text can be drawn."""
    return _missing(font_file(text, lang, game), text)


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
        # the game whose screen is drawn (None: a menu): a text may read differently on one
        # game's screen in a language (engine/labels.py)
        self.game: str | None = None

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

    def grid(self, r: Rect, rows: int, cols: int, cell, color, width, z=0.0):
        """The lines of a board of rows x cols cells of ``cell`` px from r's top-left corner:
        the rows' lines top to bottom, then the columns' left to right."""
        for i in range(rows + 1):
            y = r.y0 + i * cell
            self.line((r.x0, y), (r.x1, y), color, width, z=z)
        for j in range(cols + 1):
            x = r.x0 + j * cell
            self.line((x, r.y0), (x, r.y1), color, width, z=z)

    def text(self, s: str, x, y, size, color=INK, z=0.0, anchor="center", max_w=None):
        if not s:
            return
        lang = self.proj.lang            # texts are written in English; shown in the screen's language
        if lang != "en":
            s = screen_text(s, lang, self.game)
        k = self.scale_at(x, y)
        file = None if lang == "en" else font_file(s, lang, self.game)
        f = font(round(size * k), lang, file)
        img = f.render(s, True, color)
        if max_w is not None and img.get_width() > max_w * k:
            f = font(round(size * k * max_w * k / img.get_width()), lang, file)
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


def piece_frame(r: Rect, horiz: bool, forward: bool):
    """``lr(a0, a1, w0, w1) -> Rect``: a rectangle in the coordinates of a piece lying in r
    (a vehicle, a truck) - along its long side 0 (rear) .. 1 (front), across -0.5 .. 0.5;
    ``forward``: the front at the right / bottom end."""
    L = r.w if horiz else r.h
    W = r.h if horiz else r.w
    cx, cy = r.center

    def lr(a0, a1, w0, w1) -> Rect:
        if not forward:
            a0, a1 = 1 - a1, 1 - a0
        if horiz:
            return Rect(r.x0 + a0 * L, cy + w0 * W, r.x0 + a1 * L, cy + w1 * W)
        return Rect(cx + w0 * W, r.y0 + a0 * L, cx + w1 * W, r.y0 + a1 * L)
    return lr


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
