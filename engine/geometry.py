"""Screen geometry shared by drawing (longpuzzle.render) and hit-testing (engine/suite/).

Everything on screen is laid out in DESIGN px: the 540 x 960 portrait frame of the original,
origin top-left, y down (RULES.md section 0). A :class:`Projection` maps design px to the
pixels of an output frame and back:

    style "2d"   uniform scale: px = x * W/540, py = y * H/960
    style "3d"   the design plane is a table top seen at an angle: the plane is tilted
                 back about its horizontal centre line by TILT_DEG and viewed by a pinhole
                 camera at CAMERA_DIST design px, then fitted into the frame. A point may
                 stand out of the plane by ``z`` design px (towards the viewer) - pieces are
                 drawn as extruded prisms. On the plane (z = 0) the map is a homography and
                 ``from_px`` is its exact inverse.

A projection may also place the frame letterboxed in a larger PAGE (``viewport=(W, H)``, as
the paper's agents saw the portrait game inside a 1280 x 900 browser viewport): the game is
scaled to fit (scale = min(W / 540, H / 960)) and centred, output px are page px, and the
bars are outside the game (nothing there to hit). ``to_px`` / ``from_px`` include that
offset, so drawing and hit-testing go through the same letterbox.

A projection also carries the screen's language (``lang``: "en" or "zh", engine/labels.py):
the texts the renderer draws are in it. It moves nothing: the geometry (and so hit-testing)
of a screen is the same in every language.

Widgets (:class:`Widget`) are the things a pointer can hit: a shape in design px (``Rect``
or ``Circle``), an id such as ``"restart"`` or ``"bolt:3"``, a kind and a label that the
renderer draws. The SAME widget objects are drawn by render/ and hit-tested by the engine,
so what a person sees is what an agent's click reaches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.labels import check_lang

DESIGN_W, DESIGN_H = 540, 960
STYLES = ("2d", "3d")
TILT_DEG = 30.0
CAMERA_DIST = 1400.0
FIT = 0.965          # share of the frame width the tilted plane's near edge may take


class SettingsError(LongPuzzleError, ValueError):
    """A style / scale / screen setting that cannot be used."""


MAX_SCALE = 4.0          # frames up to 2160 x 3840 (drawing supersamples them 2x)


def check_scale(scale: Any, limit: float = MAX_SCALE) -> float:
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise SettingsError(f"scale must be a positive number (1 -> 540 x 960, 2 -> 1080 x 1920), not {scale!r}")
    if round(DESIGN_W * scale) < 1 or round(DESIGN_H * scale) < 1 or scale > limit:
        raise SettingsError(f"scale {scale:g} gives an unusable frame size (allowed: above 0 and up to {limit:g})")
    return float(scale)


MAX_VIEWPORT = 8192


def check_viewport(viewport: Any) -> tuple[int, int]:
    """(W, H) page size in px for a letterboxed frame."""
    ok = isinstance(viewport, (tuple, list)) and len(viewport) == 2 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in viewport)
    if not ok or not all(16 <= v <= MAX_VIEWPORT for v in viewport):
        raise SettingsError(f"viewport must be (width, height) in whole px, each 16 to {MAX_VIEWPORT}, "
                            f"not {viewport!r}")
    return int(viewport[0]), int(viewport[1])


def parse_viewport(text: str) -> tuple[int, int]:
    """'1280x900' -> (1280, 900)."""
    try:
        w, h = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        raise SettingsError(f"viewport must look like 1280x900, not {text!r}") from None
    return check_viewport((w, h))


# The screen of each evaluation preset (agents/harness/presets.py, which holds the rest of a
# preset; here so that `screenshot --preset` shows that screen without loading the harness):
# the page it is letterboxed into (None: the game's own frame), its language and scale.
PAPER_VIEWPORT = (1280, 900)            # the paper's 1280 x 900 browser page
PRESET_SCREENS: dict[str, dict] = {
    "paper": {"viewport": PAPER_VIEWPORT, "lang": "zh", "scale": 1.0},
    "fast": {"viewport": None, "lang": "en", "scale": 1.0},
    "repo": {"viewport": None, "lang": "zh", "scale": 2.0},
}


def check_style(style: Any) -> str:
    if style not in STYLES:
        raise SettingsError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    return style


class Projection:
    """Design px <-> output px for one (style, scale). Immutable; get one with projection()."""

    def __init__(self, style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None,
                 _limit: float = MAX_SCALE, lang: str = "en"):
        self.style = check_style(style)
        self.lang = check_lang(lang)
        self.viewport = None if viewport is None else check_viewport(viewport)
        if self.viewport is not None:        # the game fitted into the page (the scale follows)
            scale = min(self.viewport[0] / DESIGN_W, self.viewport[1] / DESIGN_H)
            if scale < 0.1:
                raise SettingsError(f"viewport {self.viewport} is too small for the game")
        self.scale = check_scale(scale, max(_limit, 2 * MAX_SCALE) if self.viewport is not None else _limit)
        gw = max(1, round(DESIGN_W * self.scale))        # the game's rectangle in px
        gh = max(1, round(DESIGN_H * self.scale))
        self.sx = gw / DESIGN_W
        self.sy = gh / DESIGN_H
        if self.viewport is None:
            self.width, self.height = gw, gh
            self.ox = self.oy = 0.0
        else:
            self.width, self.height = self.viewport
            self.ox, self.oy = float((self.width - gw) // 2), float((self.height - gh) // 2)
        self.size: tuple[int, int] = (self.width, self.height)       # frame (W, H) in px (the page)
        self.game_rect: tuple[int, int, int, int] = (int(self.ox), int(self.oy), gw, gh)   # x, y, w, h
        self.is_3d = style == "3d"
        th = math.radians(TILT_DEG)
        self._s, self._c, self._f = math.sin(th), math.cos(th), CAMERA_DIST
        if self.is_3d:
            f, s, c = self._f, self._s, self._c
            near = f / (f - (DESIGN_H / 2) * s)
            far = f / (f + (DESIGN_H / 2) * s)
            k = FIT * DESIGN_W / (DESIGN_W * near)
            v_top = -(DESIGN_H / 2) * c * far
            v_bot = (DESIGN_H / 2) * c * near
            k = min(k, FIT * DESIGN_H / (v_bot - v_top))
            self._k = k
            self._cx = DESIGN_W / 2
            # the plane's far edge sits a little lower than centred: leaves room for the backdrop
            self._cy = DESIGN_H / 2 - k * (v_top + v_bot) / 2 + 0.15 * (DESIGN_H - k * (v_bot - v_top)) / 2
        else:
            self._k, self._cx, self._cy = 1.0, 0.0, 0.0

    def to_px(self, x: float, y: float, z: float = 0.0) -> tuple[float, float]:
        if not self.is_3d:
            return x * self.sx + self.ox, y * self.sy + self.oy
        X, Y = x - DESIGN_W / 2, y - DESIGN_H / 2
        d = self._f - Y * self._s - z * self._c
        m = self._k * self._f / d
        return ((self._cx + m * X) * self.sx + self.ox,
                (self._cy + m * (Y * self._c - z * self._s)) * self.sy + self.oy)

    def from_px(self, px: float, py: float) -> tuple[float, float]:
        """Output px -> the design point on the z = 0 plane that projects there."""
        if not self.is_3d:
            return (px - self.ox) / self.sx, (py - self.oy) / self.sy
        u = ((px - self.ox) / self.sx - self._cx) / self._k
        v = ((py - self.oy) / self.sy - self._cy) / self._k
        den = self._f * self._c + v * self._s
        if den <= 1e-9:        # above the horizon: no point of the plane projects there
            return float("nan"), float("nan")
        Y = v * self._f / den
        X = u * (self._f - Y * self._s) / self._f
        return X + DESIGN_W / 2, Y + DESIGN_H / 2

    def to_px_array(self, pts: np.ndarray) -> np.ndarray:
        """(N, 2) or (N, 3) design points -> (N, 2) float px."""
        pts = np.asarray(pts, dtype=np.float64)
        x, y = pts[:, 0], pts[:, 1]
        if not self.is_3d:
            return np.stack([x * self.sx + self.ox, y * self.sy + self.oy], axis=1)
        z = pts[:, 2] if pts.shape[1] > 2 else 0.0
        X, Y = x - DESIGN_W / 2, y - DESIGN_H / 2
        m = self._k * self._f / (self._f - Y * self._s - z * self._c)
        return np.stack([(self._cx + m * X) * self.sx + self.ox,
                         (self._cy + m * (Y * self._c - z * self._s)) * self.sy + self.oy], axis=1)

    def from_px_array(self, px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised from_px (points above the horizon give NaN)."""
        px, py = np.asarray(px, dtype=np.float64), np.asarray(py, dtype=np.float64)
        if not self.is_3d:
            return (px - self.ox) / self.sx, (py - self.oy) / self.sy
        u = ((px - self.ox) / self.sx - self._cx) / self._k
        v = ((py - self.oy) / self.sy - self._cy) / self._k
        den = self._f * self._c + v * self._s
        with np.errstate(divide="ignore", invalid="ignore"):
            Y = np.where(den > 1e-9, v * self._f / den, np.nan)
        X = u * (self._f - Y * self._s) / self._f
        return X + DESIGN_W / 2, Y + DESIGN_H / 2

    def local_scale(self, x: float, y: float) -> float:
        """Output px per design px near (x, y) on the plane (horizontal direction)."""
        if not self.is_3d:
            return self.sx
        Y = y - DESIGN_H / 2
        return self._k * self._f / (self._f - Y * self._s) * self.sx

    def supersampled(self, k: int) -> Projection:
        """The same picture k times finer (for supersampled drawing): every px map times k."""
        if self.viewport is None:
            return supersampled_projection(self.style, self.scale, k, self.lang)
        p = Projection.__new__(Projection)
        p.__dict__.update(self.__dict__)
        p.scale, p.sx, p.sy, p.ox, p.oy = self.scale * k, self.sx * k, self.sy * k, self.ox * k, self.oy * k
        p.width, p.height = self.width * k, self.height * k
        p.size = (p.width, p.height)
        x, y, w, h = self.game_rect
        p.game_rect = (x * k, y * k, w * k, h * k)
        p.viewport = p.size
        return p

    def __repr__(self) -> str:
        lang = "" if self.lang == "en" else f", lang={self.lang!r}"
        if self.viewport is not None:
            return f"Projection({self.style!r}, viewport={self.viewport}{lang})"
        return f"Projection({self.style!r}, {self.scale}{lang})"


@lru_cache(maxsize=64)
def _projection(style: str, scale: float, viewport: tuple[int, int] | None, lang: str) -> Projection:
    return Projection(style, scale, viewport, lang=lang)


@lru_cache(maxsize=64)
def supersampled_projection(style: str, scale: float, k: int, lang: str = "en") -> Projection:
    """The (cached) projection of (style, scale * k): the drawing's supersampled canvas, which
    may exceed MAX_SCALE by the factor k."""
    return Projection(style, scale * k, _limit=MAX_SCALE * k, lang=lang)


def projection(style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None,
               lang: str = "en") -> Projection:
    """The (cached) projection of a (style, scale), or of a style letterboxed into a viewport,
    with its screens' texts in ``lang``."""
    return _projection(style, scale, None if viewport is None else tuple(viewport), lang)


# ---- shapes and widgets (design px) -----------------------------------------

@dataclass(frozen=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def centred(cls, cx: float, cy: float, w: float, h: float) -> Rect:
        return cls(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x < self.x1 and self.y0 <= y < self.y1

    @property
    def center(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    @property
    def w(self) -> float:
        return self.x1 - self.x0

    @property
    def h(self) -> float:
        return self.y1 - self.y0


@dataclass(frozen=True)
class Circle:
    cx: float
    cy: float
    r: float

    def contains(self, x: float, y: float) -> bool:
        return (x - self.cx) ** 2 + (y - self.cy) ** 2 <= self.r * self.r

    @property
    def center(self) -> tuple[float, float]:
        return self.cx, self.cy


@dataclass(frozen=True)
class Widget:
    """Something on screen a pointer can hit. ``kind`` tells the renderer how to draw it
    (e.g. "card", "round_button", "pill_button", "target" - targets are drawn by the game)."""
    id: str
    shape: Rect | Circle
    kind: str = "button"
    label: str = ""
    data: tuple = field(default=())

    def contains(self, x: float, y: float) -> bool:
        return self.shape.contains(x, y)

    @property
    def center(self) -> tuple[float, float]:
        return self.shape.center


_MIXED = object()         # Layout's exact-answer index: "depends on the point"


class Layout:
    """The widgets of one screen, in drawing order (the last drawn is hit first)."""

    GRID = 40.0           # design px per cell of the hit-test index
    FINE = 8.0            # design px per square of the exact-answer index (built at first hit);
    _FINV = 0.125         # 1 / FINE, exact (a power of two): int(y * _FINV) == int(y // FINE)

    def __init__(self, widgets):
        self.widgets: tuple[Widget, ...] = tuple(widgets)
        self._fine: list | None = None
        self._fnx = int(DESIGN_W // self.FINE) + 1
        self.by_id = {w.id: w for w in self.widgets}
        self._rev = self.widgets[::-1]
        # spatial index: grid cell -> widgets whose bounding box touches it (topmost first)
        g = self.GRID
        self._nx, self._ny = int(DESIGN_W // g) + 1, int(DESIGN_H // g) + 1
        cells: dict[int, list] = {}
        for w in self._rev:
            sh = w.shape
            x0, y0, x1, y1 = ((sh.x0, sh.y0, sh.x1, sh.y1) if isinstance(sh, Rect)
                              else (sh.cx - sh.r, sh.cy - sh.r, sh.cx + sh.r, sh.cy + sh.r))
            for gy in range(max(0, int(y0 // g)), min(self._ny - 1, int(y1 // g)) + 1):
                for gx in range(max(0, int(x0 // g)), min(self._nx - 1, int(x1 // g)) + 1):
                    cells.setdefault(gy * self._nx + gx, []).append(w)
        # per cell: (kind, a, b, c, d, widget) - kind 0: rect [a, c) x [b, d); 1: circle centre
        # (a, b), squared radius c; 2: any other shape (its own contains())
        def entry(w):
            sh = w.shape
            if type(sh) is Rect:
                return (0, sh.x0, sh.y0, sh.x1, sh.y1, w)
            if type(sh) is Circle:
                return (1, sh.cx, sh.cy, sh.r * sh.r, 0.0, w)
            return (2, 0.0, 0.0, 0.0, 0.0, w)
        self._cells = {k: tuple(entry(w) for w in v) for k, v in cells.items()}

    def _build_fine(self) -> list:
        """The exact-answer index: per FINE x FINE design-px square (row-major, _fnx per row)
        the widget hit at EVERY point of the square, None when no widget comes near it, or
        _MIXED when the answer depends on the point (then the grid index decides)."""
        f = self.FINE
        nx, ny = self._fnx, int(DESIGN_H // f) + 1
        code = np.full((ny, nx), -1, np.int64)      # -1: no widget; -2: mixed; i: widgets[i]
        for i, w in enumerate(self.widgets):       # bottom first: a later widget overrides
            sh = w.shape
            if type(sh) is Rect:
                x0, y0, x1, y1 = sh.x0, sh.y0, sh.x1, sh.y1
            elif type(sh) is Circle:
                x0, y0, x1, y1 = sh.cx - sh.r, sh.cy - sh.r, sh.cx + sh.r, sh.cy + sh.r
            else:
                code[:, :] = -2
                continue
            gx0, gx1 = max(0, int(x0 // f)), min(nx - 1, int(x1 // f))
            gy0, gy1 = max(0, int(y0 // f)), min(ny - 1, int(y1 // f))
            if gx0 > gx1 or gy0 > gy1:
                continue
            code[gy0:gy1 + 1, gx0:gx1 + 1] = -2
            X0 = np.arange(gx0, gx1 + 1) * f                   # square left / top edges
            Y0 = np.arange(gy0, gy1 + 1) * f
            if type(sh) is Rect:                                # the half-open square inside
                inside = ((x0 <= X0) & (X0 + f <= x1))[None, :] & ((y0 <= Y0) & (Y0 + f <= y1))[:, None]
            else:                                               # all four corners inside
                lim = sh.r * sh.r - 1e-6 * (1.0 + sh.r * sh.r)  # far above float rounding
                dx = np.maximum((X0 - sh.cx) ** 2, (X0 + f - sh.cx) ** 2)[None, :]
                dy = np.maximum((Y0 - sh.cy) ** 2, (Y0 + f - sh.cy) ** 2)[:, None]
                inside = dx + dy <= lim
            code[gy0:gy1 + 1, gx0:gx1 + 1][inside] = i
        ws = self.widgets
        self._fine = [None if v == -1 else _MIXED if v == -2 else ws[v] for v in code.ravel().tolist()]
        return self._fine

    def hit(self, x: float, y: float) -> Widget | None:
        """The topmost widget containing the design point, or None (also off the frame / NaN)."""
        if not (0.0 <= x < DESIGN_W and 0.0 <= y < DESIGN_H):
            return None
        f = self._FINV
        v = (self._fine or self._build_fine())[int(y * f) * self._fnx + int(x * f)]
        if v is not _MIXED:
            return v
        g = self.GRID
        for kind, a, b, c, d, w in self._cells.get(int(y // g) * self._nx + int(x // g), ()):
            if kind == 0:
                if a <= x < c and b <= y < d:
                    return w
            elif kind == 1:
                if (x - a) ** 2 + (y - b) ** 2 <= c:
                    return w
            elif w.shape.contains(x, y):
                return w
        return None

    def __getitem__(self, wid: str) -> Widget:
        return self.by_id[wid]

    def __contains__(self, wid: str) -> bool:
        return wid in self.by_id


@lru_cache(maxsize=64)
def corner_trig(seg: int) -> tuple:
    """(cos, sin) of each rounded corner's angles, as rounded_rect_points uses them."""
    return tuple(tuple((math.cos(a), math.sin(a)) for a in (math.radians(a0 + 90 * i / seg) for i in range(seg + 1)))
                 for a0 in (-90, 0, 90, 180))


@lru_cache(maxsize=64)
def _circle_trig(n: int) -> tuple:
    return tuple((math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)) for i in range(n))


def rounded_rect_points(r: Rect, radius: float, seg: int = 6) -> list[tuple[float, float]]:
    """Outline of a rounded rectangle in design px (for projected drawing)."""
    rad = max(0.0, min(radius, r.w / 2, r.h / 2))
    if rad <= 0:
        return [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)]
    pts = []
    for (cx, cy), trig in zip(((r.x1 - rad, r.y0 + rad), (r.x1 - rad, r.y1 - rad), (r.x0 + rad, r.y1 - rad),
                               (r.x0 + rad, r.y0 + rad)), corner_trig(seg)):
        pts.extend([(cx + rad * c, cy + rad * s) for c, s in trig])
    return pts


def circle_points(cx: float, cy: float, r: float, n: int = 40) -> list[tuple[float, float]]:
    return [(cx + r * c, cy + r * s) for c, s in _circle_trig(n)]
