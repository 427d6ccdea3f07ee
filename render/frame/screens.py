"""The suite's screens as frames: the Renderer (home and difficulty menus, level screens
with their game's drawing, HUD lines, toasts and the completion card, at one style and
scale), the shared renderers (renderer, render), save_png and Screen (a Suite with its
renderer)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pygame
import xxhash

from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W, Rect, projection, rounded_rect_points
from longpuzzle.engine.labels import screen_text
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import CARD, Suite, difficulty_label
from longpuzzle.engine.suite.game_limits import REASON_TEXT
from longpuzzle.render.frame.buffer import Frame
from longpuzzle.render.frame.drawing import GameDrawing, drawings, level_key
from longpuzzle.render.frame.layers import draw_layer, draw_patch, draw_sprite, layer_base, px_box
from longpuzzle.render.frame.paint import (
    ACCENT, BG_BOTTOM, BG_TOP, CARD_ACCENTS, INK, MUTED, TABLE_BOTTOM, TABLE_TOP, TOAST_Y, WHITE, Painter, _init,
    font, font_file, mix, shade,
)
from longpuzzle.render.frame.widgets import draw_card, draw_widget

CARD_HEIGHT = 12                 # the completion card's thickness in 3d (its buttons stand 8 higher)


def card_box(proj) -> tuple[int, int, int, int]:
    """The px box (x0, y0, x1, y1) holding every pixel the completion card draws: the card,
    its buttons' tops and, in 3d, its shadow (Painter.prism casts it 0.35 / 0.55 of the
    height right and down)."""
    pts = rounded_rect_points(CARD, 26)
    shadow = [(x + 0.35 * CARD_HEIGHT, y + 0.55 * CARD_HEIGHT) for x, y in pts]
    return px_box(proj, pts + shadow, zmax=CARD_HEIGHT + 12, margin=4)


class Renderer:
    """Renders suites at one (style, scale, page, language), with caches of static layers and
    game drawings. The texts are drawn in the language of the renderer's projection."""

    def __init__(self, style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None,
                 lang: str = "en"):
        _init()
        self.proj = projection(style, float(scale), viewport, lang)
        self.frame = Frame(self.proj)
        self._layers: dict[Any, np.ndarray] = {}
        self._drawings: dict[str, GameDrawing] = {}
        self._sprites: dict[Any, Any] = {}
        self._lock = threading.Lock()

    # -- static layers
    def _plane(self, p: Painter, bg) -> None:
        if p.is_3d:
            w, h = p.surf.get_size()
            for i in range(64):   # the table around the tilted plane
                c = mix(TABLE_TOP, TABLE_BOTTOM, (i + 0.5) / 64)
                pygame.draw.rect(p.surf, c, (0, h * i // 64, w, h // 64 + 2))
            corners = [(0, 0), (DESIGN_W, 0), (DESIGN_W, DESIGN_H), (0, DESIGN_H)]
            p.shadow(corners, alpha=90, dx=6, dy=10)
            p.prism(corners, shade(bg[1], 0.8), 14, z0=-14, top=bg[0], shadow=False)
        p.gradient_plane(*bg)

    def drawing(self, suite: Suite) -> GameDrawing | None:
        lvl = suite.level
        key = level_key(lvl)
        d = self._drawings.get(key)
        if d is None:
            cls = drawings().get(lvl.game)
            if cls is None:
                return None
            if len(self._drawings) > 256:
                self._drawings.clear()
            d = self._drawings[key] = cls(suite.game_ui(), self.proj)
        return d

    def static_layer(self, suite: Suite) -> np.ndarray:
        name = suite.screen["name"]
        lvl = suite.level if name == "level" else None
        # menus show the suite's catalogue (its games, objectives, level counts): keyed by its content
        key = (name, suite.screen.get("game"), level_key(lvl) if lvl is not None else None, suite.direct,
               None if lvl is not None else suite.catalog.content_hash)
        arr = self._layers.get(key)
        if arr is not None:
            return arr
        if len(self._layers) > 48:
            self._layers.clear()
        if name == "home":
            arr = draw_layer(self.proj, lambda p: self._draw_home(p, suite))
        elif name == "difficulty":
            arr = draw_layer(self.proj, lambda p: self._draw_difficulty(p, suite))
        else:
            # a level screen over a cached base (a LayerBase): the game's background and title
            # and the HUD every level of an objective shows alike (difficulty label,
            # instructions, buttons) are drawn once; what a level adds (its number and its
            # board) is drawn, and smoothed, alone. The HUD goes under the level's parts
            # instead of over them: no pixel of one touches the other (tested on every level
            # against the whole drawing, _draw_level), so the order does not show
            bg, title = self._level_look(suite), suite.puzzle.title
            cls = drawings().get(suite.level.game)
            if cls is None or cls.hud_under:
                hud = self._level_hud(suite)
                base = layer_base(self.proj, ("level", bg, title, hud),
                                  lambda p: (self._draw_level_base(p, bg, title), self._draw_level_hud(p, suite)))
                arr = base.over(lambda p: self._draw_level_own(p, suite))
            else:
                base = layer_base(self.proj, ("level", bg, title), lambda p: self._draw_level_base(p, bg, title))
                arr = base.over(lambda p: self._draw_level_rest(p, suite))
        arr.setflags(write=False)
        self._layers[key] = arr
        return arr

    def _draw_widgets(self, p: Painter, widgets, accent=ACCENT) -> None:
        for _i, w in enumerate(widgets):
            draw_widget(p, w, accent)

    def _draw_home(self, p: Painter, suite: Suite) -> None:
        self._plane(p, (BG_TOP, BG_BOTTOM))
        from longpuzzle.engine.suite import HOME_SUBTITLE, HOME_TITLE
        p.text(HOME_TITLE, 270, 130, 54, INK, z=2)
        p.text(HOME_SUBTITLE, 270, 190, 28, MUTED, z=1)
        lay = suite.layout()
        for i, w in enumerate(lay.widgets):
            game = w.id.split(":", 1)[1]
            cls = drawings().get(game)
            acc = cls.accent if cls else CARD_ACCENTS[i % len(CARD_ACCENTS)]
            draw_card(p, w, acc, sub=None if cls else "")
        p.text("Tap a card to play", 270, 905, 22, MUTED)

    def _draw_difficulty(self, p: Painter, suite: Suite) -> None:
        g = suite.screen["game"]
        cls = drawings().get(g)
        acc = cls.accent if cls else ACCENT
        self._plane(p, cls.background if cls else (BG_TOP, BG_BOTTOM))
        p.text("Choose difficulty", 270, 110, 46, INK, z=2)
        p.text(get_puzzle(g).title, 270, 165, 30, acc, z=1)
        for w in suite.layout().widgets:
            if w.kind == "card":
                n = w.data[0] if w.data else 0
                draw_card(p, w, acc, sub=f"{n} level{'s' if n != 1 else ''}")
            else:
                draw_widget(p, w, acc)

    def _level_look(self, suite: Suite):
        cls = drawings().get(suite.level.game)
        return cls.background if cls else (BG_TOP, BG_BOTTOM)

    def _draw_level(self, p: Painter, suite: Suite) -> None:
        """A level screen's static layer in one go (the reference for the layered build)."""
        self._draw_level_base(p, self._level_look(suite), suite.puzzle.title)
        self._draw_level_rest(p, suite)

    def _draw_level_base(self, p: Painter, bg, title: str) -> None:
        self._plane(p, bg)      # (the title is a game's name: the same text on every screen)
        p.text(title, 270, 36, 30, MUTED, z=1)

    def _draw_level_rest(self, p: Painter, suite: Suite) -> None:
        p.game = suite.level.game
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        acc = cls.accent if cls else ACCENT
        lvl = suite.level
        p.text(f"Level {lvl.number}", 270, u.header_y, 40, INK, z=1)
        p.text(difficulty_label(lvl.difficulty), 270, u.header_y + 32, 22, acc, z=1)
        p.text(u.instructions, 270, getattr(u, "instructions_y", 935), 19, MUTED, max_w=440)
        d = self.drawing(suite)
        if d is not None:
            d.draw_static(p)
        for w in u.buttons(suite.direct):
            draw_widget(p, w, acc)

    def _level_hud(self, suite: Suite) -> tuple:
        """What _draw_level_hud draws, as a key: equal for levels whose HUDs look alike."""
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        return (difficulty_label(suite.level.difficulty), u.header_y, u.instructions,
                getattr(u, "instructions_y", 935), cls.accent if cls else ACCENT,
                tuple(repr(w) for w in u.buttons(suite.direct)))

    def _draw_level_hud(self, p: Painter, suite: Suite) -> None:
        """The parts of _draw_level_rest that every level of an objective shows alike."""
        p.game = suite.level.game
        u = suite.game_ui()
        cls = drawings().get(suite.level.game)
        acc = cls.accent if cls else ACCENT
        p.text(difficulty_label(suite.level.difficulty), 270, u.header_y + 32, 22, acc, z=1)
        p.text(u.instructions, 270, getattr(u, "instructions_y", 935), 19, MUTED, max_w=440)
        for w in u.buttons(suite.direct):
            draw_widget(p, w, acc)

    def _draw_level_own(self, p: Painter, suite: Suite) -> None:
        """The parts of _draw_level_rest that are the level's own: its number and board."""
        p.game = suite.level.game
        p.text(f"Level {suite.level.number}", 270, suite.game_ui().header_y, 40, INK, z=1)
        d = self.drawing(suite)
        if d is not None:
            d.draw_static(p)

    # -- frames
    def render(self, suite: Suite, t: int | None = None) -> np.ndarray:
        # one renderer (frame buffer and caches) serves every thread: one frame at a time
        with self._lock:
            return self._render(suite, t)

    def render_delta(self, suite: Suite, t: int | None = None, since: np.ndarray | None = None
                     ) -> tuple[np.ndarray, tuple | None]:
        """(the frame, (the frame this renderer handed out before it, the px box (x0, y0,
        x1, y1) outside which the two have the same pixels, and the rows of the box where
        they may differ: disjoint (y0, y1) spans top to bottom) or None when not known): what
        a frame store needs to keep only what changed, and a frame hash to hash only the
        rows that changed (another thread's frame may come between: compare the first with
        the frame you hold). The spans are optional: a delta of two items, (frame, box),
        means the box's rows. ``since``: the delta is relative to that frame instead, an
        earlier frame of this renderer you still hold (Frame.delta_since; None when not
        known): the frame a suite showed before, whatever other suites' frames came between."""
        with self._lock:
            out = self._render(suite, t)
            f = self.frame
            if f._last is None or f._last[0] is not out:
                return out, None
            if since is None or (f.delta is not None and f.delta[0] is since):
                return out, f.delta
            return out, f.delta_since(since)

    def _render(self, suite: Suite, t: int | None = None) -> np.ndarray:
        if suite.proj.style != self.proj.style or suite.proj.scale != self.proj.scale:
            pass   # the suite's own setting only fixes its input coordinates; we draw ours
        f = self.frame
        static = self.static_layer(suite)
        f.static = static
        t = suite.clock if t is None else t
        if suite.screen["name"] != "level":
            return f.present(static)              # a menu: its layer, nothing drawn over it
        else:
            anim, phase = None, 1.0
            for a in suite.anims:
                if a["t0"] <= t < a["t1"]:
                    anim, phase = a, (t - a["t0"]) / max(1, a["t1"] - a["t0"])
            d = self.drawing(suite)
            state = np.asarray(suite.session.state)
            base = d.base_layer(static, suite, state, t, anim, phase) if d is not None else None
            if base is None:
                f.start(static)
            else:
                f.start(base, d.base_changes)
            if d is not None:
                d.draw_dynamic(f, suite, state, t, anim, phase)
            u = suite.game_ui()
            for i, line in enumerate(u.hud_lines(suite.session)):
                self._text_sprite(f, line, 270, u.header_y + 62 + 26 * i, 22)
            if suite.toast and suite.toast["t0"] <= t < suite.toast["until"]:
                self._toast(f, suite.toast["text"], getattr(suite.game_ui(), "toast_y", TOAST_Y))
            if (suite.complete or (suite.failed and u.limits.card)) and anim is None:
                self._card(f, suite)
        return f.finish()

    def _text_sprite(self, f: Frame, text: str, x: float, y: float, size: float, color=INK) -> None:
        key = ("text", text, x, y, size, color)
        sp = self._sprites.get(key)
        if sp is None:
            w = 12 + 0.6 * size * len(text)
            r = Rect.centred(x, y, w, size * 1.4)
            box = px_box(self.proj, [(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], margin=2)
            sp = (draw_sprite(self.proj, box, lambda p: p.text(text, x, y, size, color), color), box)
            if len(self._sprites) < 2048:
                self._sprites[key] = sp
        f.blit(sp[0], sp[1][0], sp[1][1])

    def _toast(self, f: Frame, text: str, y: float) -> None:
        key = ("toast", text, y)
        sp = self._sprites.get(key)
        if sp is None:
            lang = self.proj.lang
            if lang == "en":
                w = min(480, 30 + 11 * len(text))
            else:                   # the pill fits the text as shown (a Chinese glyph is square)
                shown = screen_text(text, lang)
                w = min(480, 36 + font(24, lang, font_file(shown, lang)).size(shown)[0])
            r = Rect.centred(270, y, w, 48)
            box = px_box(self.proj, rounded_rect_points(r, 24), zmax=4, margin=3)

            def draw(p):
                p.rrect(r, 24, (38, 50, 56), z=2, height=3 if p.is_3d else 0, top=(38, 50, 56))
                p.text(text, 270, y, 24, WHITE, z=5 if p.is_3d else 0)
            sp = self._sprites[key] = (draw_sprite(self.proj, box, draw, (38, 50, 56)), box)
        f.blit(sp[0], sp[1][0], sp[1][1])

    def _card(self, f: Frame, suite: Suite) -> None:
        u = suite.game_ui()
        # the card dims the frame drawn so far: the board, and what else shows at that moment
        # (a toast, HUD lines, the game's UI state), so the layer is keyed by those pixels, not
        # by the state alone (a card cached under another toast was shown in place of this
        # one's: the frame then depended on what the renderer had drawn before)
        under = f.pixels()
        last = suite.last_level()
        key = ("card", level_key(suite.level), suite.direct, last, suite.failed, bool(suite.timer),
               xxhash.xxh3_128_intdigest(under))
        layer = self._layers.get(key)
        if layer is None:
            cls = drawings().get(suite.level.game)
            acc = cls.accent if cls else ACCENT
            layer = under >> 1                             # (the bytes of under * 5 // 10)
            # only the card is drawn (supersampled); around it the layer is the dimmed frame
            # as it is (a patch's pixels where nothing is drawn are the background's own)
            box = card_box(self.proj)

            def draw(p):
                p.game = suite.level.game
                p.rrect(CARD, 26, (250, 250, 252), z=0, height=CARD_HEIGHT, top=WHITE)
                if suite.failed:            # the game's own limits ended the level (game_limits.py)
                    p.text("Challenge over", 270, CARD.y0 + 60, 48, INK, z=12)
                    p.text(REASON_TEXT.get(suite.failed, ""), 270, CARD.y0 + 108, 24, MUTED, z=12)
                else:
                    p.text("All complete!" if last else u.complete_title, 270, CARD.y0 + 60, 48, INK, z=12)
                    p.text(u.complete_text, 270, CARD.y0 + 108, 24, MUTED, z=12)
                for w in suite.layout().widgets:
                    draw_widget(p, w, acc, z=12)
            x0, y0, x1, y1 = box
            layer[y0:y1, x0:x1] = draw_patch(self.proj, layer, box, draw)
            layer.setflags(write=False)
            self._layers[key] = layer
        # the card covers the whole screen: the frame is the layer itself (not a copy of it;
        # the frame's array keeps the board under it, which the next frame starts from)
        f.replace(layer)


_RENDERERS: dict[tuple, Renderer] = {}


def renderer(style: str = "2d", scale: float = 1.0, viewport: tuple[int, int] | None = None,
             lang: str = "en") -> Renderer:
    """The shared renderer of a (style, scale), or of a style letterboxed into a viewport page,
    drawing its texts in ``lang``."""
    key = (style, float(scale), None if viewport is None else tuple(viewport), lang)
    r = _RENDERERS.get(key)
    if r is None:
        r = _RENDERERS[key] = Renderer(style, scale, viewport, lang)
    return r


def renderer_for(suite: Suite) -> Renderer:
    """The shared renderer of the frame a suite's actions refer to (its style, scale, page)
    in the suite's language."""
    return renderer(suite.style, suite.scale, suite.viewport, suite.lang)


def render(suite: Suite | str = "home", style: str | None = None, scale: float | None = None,
           t: int | None = None, catalog=None) -> np.ndarray:
    """One frame (H, W, 3) uint8 of a Suite (or of a fresh suite started at a level id /
    "home" of ``catalog``, default the built-in one). Style and scale default to the suite's
    own (the frame its actions refer to)."""
    if isinstance(suite, str):
        suite = Suite(suite, style=style or "2d", scale=scale or 1.0, catalog=catalog)
    if style is None and scale is None:
        return renderer_for(suite).render(suite, t)
    style = style or suite.style
    scale = suite.scale if scale is None else scale
    return renderer(style, scale, lang=suite.lang).render(suite, t)


def save_png(frame: np.ndarray, path) -> None:
    from PIL import Image
    Image.fromarray(np.asarray(frame, dtype=np.uint8), "RGB").save(path, format="PNG", optimize=False)


class Screen:
    """A Suite with its renderer: what an agent harness or the play window drives (a new
    suite's level ids are those of ``catalog``, default the built-in one).

    ``act(action)`` dispatches one GUI action and returns ``(feedback, frames)``: the
    ``frames_per_move`` intermediate frames of every animation the action started, then
    the settled frame."""

    def __init__(self, start: str | Suite = "home", *, style: str = "2d", scale: float = 1.0,
                 frames_per_move: int = 0, direct: bool = False, viewport: tuple[int, int] | None = None,
                 lang: str = "en", catalog=None):
        self.suite = start if isinstance(start, Suite) else Suite(start, style=style, scale=scale, direct=direct,
                                                                  viewport=viewport, lang=lang, catalog=catalog)
        if not isinstance(frames_per_move, int) or isinstance(frames_per_move, bool) or frames_per_move < 0:
            from longpuzzle.engine.geometry import SettingsError
            raise SettingsError(f"frames_per_move must be a non-negative integer, not {frames_per_move!r}")
        self.frames_per_move = frames_per_move
        self.renderer = renderer_for(self.suite)

    def frame(self) -> np.ndarray:
        return self.renderer.render(self.suite)

    def act(self, action) -> tuple[Any, list[np.ndarray]]:
        fb = self.suite.dispatch(action)
        frames = []
        if self.frames_per_move:
            n = self.frames_per_move
            for a in self.suite.anims:
                if a["t1"] > a["t0"]:
                    for i in range(n):
                        t = a["t0"] + (a["t1"] - a["t0"]) * (i + 1) / (n + 1)
                        frames.append(self.renderer.render(self.suite, int(t)))
        frames.append(self.frame())
        return fb, frames

    def save(self, path) -> None:
        save_png(self.frame(), path)
