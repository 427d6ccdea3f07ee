"""Frames of the suite: numpy uint8 arrays (H, W, 3) and PNG files, drawn headless with pygame.

    render(suite, style=None, scale=None, t=None) -> np.ndarray     one frame of a Suite
    save_png(frame, path)
    Screen(start, style=, scale=, frames_per_move=)                 a Suite plus its renderer;
                                                                    act(action) -> (feedback, frames)

How a frame is made (fast path: only what changed is redrawn):

    1. the STATIC layer of the screen (background, header, buttons, instruction text, the
       board's fixed parts) is drawn once per (screen, style, scale), supersampled 2x and
       smoothed, and kept as a numpy array;
    2. it is copied into the frame buffer (a numpy array that a pygame surface shares);
    3. the game's drawing (render/<game id>.py, named by its declaration, through
       ``drawing_for``) puts the DYNAMIC parts on top, mostly as cached opaque patches and
       small sprites keyed by what they show;
    4. transient overlays (toast, completion card) are drawn; the buffer is copied out.

Styles: "2d" flat; "3d" the same scene on a tilted table under perspective with extruded,
lit pieces and shadows (engine/geometry.py). Output is deterministic: same suite state and
settings -> same bytes (no clocks, no randomness; pygame's bundled default font).

Layout (each module imports only those above it):

    paint.py     Painter, Recorder, the palette, font / mix / shade / hex_rgb
    kernels.py   compiled pixel loops: fill_rects (outline_rects), 2x smoothing
    layers.py    draw_layer, LayerBase / layer_base, draw_patch, draw_sprite, trim_sprite,
                 px_box, Changes, BoxCache, compose_clipped
    buffer.py    Frame: the frame being composed (pooled arrays, deltas, kept blends)
    drawing.py   GameDrawing, drawings() (the drawings the games declare), level_key
    widgets.py   draw_card, draw_widget
    screens.py   Renderer, renderer, render, save_png, Screen

The names the game drawings and callers use are re-exported here.
"""

import os

DUMMY_DRIVER_SET = "SDL_VIDEODRIVER" not in os.environ   # headless unless the user chose a driver
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")        # (before any module here imports pygame)
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from longpuzzle.engine.suite import difficulty_label  # noqa: E402
from longpuzzle.render.frame.buffer import Frame  # noqa: E402
from longpuzzle.render.frame.drawing import GameDrawing, drawings, level_key  # noqa: E402
from longpuzzle.render.frame.kernels import fill_rects, outline_rects, smooth_surface  # noqa: E402
from longpuzzle.render.frame.layers import (  # noqa: E402
    BoxCache, Changes, LayerBase, compose_clipped, draw_patch, draw_sprite, layer_base, px_box, trim_sprite,
)
from longpuzzle.render.frame.paint import (  # noqa: E402
    ACCENT, INK, MUTED, SS, WHITE, Painter, Recorder, font, hex_rgb, mix, shade,
)
from longpuzzle.render.frame.screens import Renderer, Screen, render, renderer, save_png  # noqa: E402
from longpuzzle.render.frame.widgets import draw_card, draw_widget  # noqa: E402

__all__ = [
    "ACCENT", "BoxCache", "Changes", "DUMMY_DRIVER_SET", "Frame", "GameDrawing", "INK", "LayerBase", "MUTED",
    "Painter", "Recorder", "Renderer", "SS", "Screen", "WHITE", "compose_clipped", "difficulty_label", "draw_card",
    "draw_patch", "draw_sprite", "draw_widget", "drawings", "fill_rects", "font", "hex_rgb", "layer_base",
    "level_key", "mix", "outline_rects", "px_box", "render", "renderer", "save_png", "shade", "smooth_surface",
    "trim_sprite",
]
