"""The menus' and HUD's widgets drawn with a Painter: cards (draw_card) and buttons
(draw_widget)."""

from __future__ import annotations

from longpuzzle.engine.geometry import Circle, Rect, Widget, rounded_rect_points
from longpuzzle.render.frame.paint import ACCENT, INK, MUTED, WHITE, Painter, mix, shade


def draw_card(p: Painter, w: Widget, accent, sub=None) -> None:
    r = w.shape
    h = 10 if p.is_3d else 0
    p.rrect(r, 18, (238, 242, 246), height=h, top=WHITE)
    p.outline(rounded_rect_points(r, 18), mix(accent, WHITE, 0.55), z=h, width=2)
    stripe = Rect(r.x0 + 14, r.y0 + 16, r.x0 + 24, r.y1 - 16)
    p.rrect(stripe, 5, accent, z=h)
    cx = (r.x0 + r.x1) / 2
    if sub:
        p.text(w.label, cx, r.center[1] - 13, 38, INK, z=h)
        p.text(sub, cx, r.center[1] + 24, 21, MUTED, z=h)
    elif sub == "":
        p.text(w.label, cx, r.center[1] - 10, 36, MUTED, z=h)
        p.text("coming soon", cx, r.center[1] + 22, 19, MUTED, z=h)
    else:      # (narrower than its text only on a home screen of more than ten games)
        p.text(w.label, cx, r.center[1], 38, INK, z=h, max_w=r.w - 40)


def draw_widget(p: Painter, w: Widget, accent=ACCENT, z=0.0) -> None:
    h = 8 if p.is_3d else 0
    if w.kind == "round_button" and isinstance(w.shape, Circle):
        c = w.shape
        p.circle(c.cx, c.cy, c.r, shade(accent, 0.8), z=z, height=h, top=WHITE,
                 outline=accent, width=3)
        size = 17 if c.r < 30 else 19 if c.r < 34 else 22
        p.text(w.label, c.cx, c.cy, size, INK, z=z + h, max_w=2 * c.r - 6)
    elif w.kind in ("pill_button", "button"):
        r = w.shape
        p.rrect(r, min(r.h / 2, 26), shade(accent, 0.7), z=z, height=h, top=accent)
        p.text(w.label, *r.center, 26 if r.h >= 50 else 22, WHITE, z=z + h)
    elif w.kind == "card":
        draw_card(p, w, accent)
