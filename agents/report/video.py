"""``longpuzzle video EPISODE_DIR --out F.mp4|F.gif``: an episode as a film.

Every action is shown on the frame the agent acted on, with the action drawn over it (click
and press points as rings, drag paths with their waypoints and an arrow head, swipe arrows,
key presses, typed text, scrolls and waits as labels, batches numbered), then the frames the
action produced (animation frames, when the episode stored them); a caption band under the
game names the step, the level, the move count, progress P before and after, the action and
what it did. The last frame is held for a second.

Frames come from the episode's stored frames (the harness's ``open_frames``); an episode run
with ``--no-frames`` is drawn again from its recorded suite snapshots (exact: the engine is
deterministic). MP4 is H.264 through imageio-ffmpeg (its packaged ffmpeg binary; the
``video`` extra), GIF through Pillow.
"""

from __future__ import annotations

import math
from pathlib import Path
from collections.abc import Iterator
import importlib.util

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from longpuzzle.agents.harness import HarnessError
from longpuzzle.agents.report.data import Step, Trajectory, episode_catalog, episode_trajectories, stored_frames
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import renderer

ACTION_COLOUR = (255, 0, 144)          # magenta: readable on every game's palette
OUTLINE = (255, 255, 255)
REFUSED = (220, 30, 30)
BAND = (24, 24, 28)
BAND_TEXT = (235, 235, 235)
BAND_DIM = (170, 170, 180)
FORMATS = (".mp4", ".gif")


class VideoError(HarnessError):
    """A video that cannot be made (unknown format, missing encoder, no frames)."""


def label_font(size: int):
    """The font of the labels drawn on frames (``draw_action``'s ``font``), ``size`` pixels high:
    Pillow's built-in one (public: the browser app draws actions with it too)."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:                    # Pillow without FreeType sizes
        return ImageFont.load_default()


# ---- drawing an action ------------------------------------------------------------------

def _ring(d: ImageDraw.ImageDraw, x: float, y: float, r: float, colour=ACTION_COLOUR, w: int = 3):
    d.ellipse([x - r - 1, y - r - 1, x + r + 1, y + r + 1], outline=OUTLINE, width=w + 2)
    d.ellipse([x - r, y - r, x + r, y + r], outline=colour, width=w)
    d.ellipse([x - 2.5, y - 2.5, x + 2.5, y + 2.5], fill=colour)


def _arrow(d: ImageDraw.ImageDraw, pts: list[tuple[float, float]], colour=ACTION_COLOUR, w: int = 4):
    if len(pts) < 2:
        return
    d.line(pts, fill=OUTLINE, width=w + 3, joint="curve")
    d.line(pts, fill=colour, width=w, joint="curve")
    (x0, y0), (x1, y1) = pts[-2], pts[-1]
    ang = math.atan2(y1 - y0, x1 - x0)
    L = 16
    head = [(x1, y1), (x1 - L * math.cos(ang - 0.45), y1 - L * math.sin(ang - 0.45)),
            (x1 - L * math.cos(ang + 0.45), y1 - L * math.sin(ang + 0.45))]
    d.polygon(head, fill=colour, outline=OUTLINE)
    sx, sy = pts[0]
    d.ellipse([sx - 4, sy - 4, sx + 4, sy + 4], fill=colour, outline=OUTLINE)


def _label(d: ImageDraw.ImageDraw, xy, text: str, font, colour=ACTION_COLOUR):
    x, y = xy
    box = d.textbbox((x, y), text, font=font)
    d.rectangle([box[0] - 4, box[1] - 3, box[2] + 4, box[3] + 3], fill=(255, 255, 255), outline=colour, width=2)
    d.text((x, y), text, fill=colour, font=font)


SCROLL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def draw_action(img: Image.Image, action: dict, font, n: int | None = None, colour=ACTION_COLOUR,
                corner: list | None = None) -> None:
    """Draw one dispatched (validated) action over ``img`` in place."""
    d = ImageDraw.Draw(img)
    t = action.get("type")
    corner = corner if corner is not None else [8]
    tag = f"{n}. " if n is not None else ""

    def note(text):
        _label(d, (8, corner[0]), tag + text, font, colour)
        corner[0] += font.size + 12 if hasattr(font, "size") else 22

    if t == "batch":
        for i, sub in enumerate(action.get("actions", []), 1):
            draw_action(img, sub, font, i, colour, corner)
        return
    if t in ("click", "double_click", "long_press", "press", "move", "release") and action.get("x") is not None:
        x, y = action["x"], action["y"]
        r = 14 if t != "move" else 8
        _ring(d, x, y, r, colour)
        if t == "double_click":
            _ring(d, x, y, r + 7, colour, 2)
        if t == "long_press":
            _ring(d, x, y, r + 7, colour, 5)
        if tag or t not in ("click", "double_click"):
            _label(d, (x + r + 6, y - 8), tag + t.replace("_", " "), font, colour)
        return
    if t == "release":
        note("release")
        return
    if t in ("drag", "swipe") and action.get("x0") is not None:
        pts = [(action["x0"], action["y0"])] + [tuple(p) for p in (action.get("via") or [])] + \
              [(action["x1"], action["y1"])]
        _arrow(d, pts, colour, 5 if t == "swipe" else 4)
        if tag or t == "swipe":
            _label(d, (pts[0][0] + 8, pts[0][1] + 8), tag + (f"swipe {action.get('direction') or ''}".strip()
                                                               if t == "swipe" else "drag"), font, colour)
        return
    if t == "scroll":
        w, h = img.size
        x = action.get("x") if action.get("x") is not None else w / 2
        y = action.get("y") if action.get("y") is not None else h / 2
        dx, dy = SCROLL.get(action.get("direction", "down"), (0, 1))
        _arrow(d, [(x, y), (x + 40 * dx, y + 40 * dy)], colour, 3)
        note(f"scroll {action.get('direction', 'down')}")
        return
    if t == "key":
        note(f"key {action.get('name')}")
        return
    if t == "typetext":
        txt = str(action.get("text", ""))
        note(f"type {txt[:24]!r}" + ("..." if len(txt) > 24 else ""))
        return
    if t == "wait":
        note(f"wait {action.get('ms', 0)} ms")
        return
    note(str(t))


def action_text(action: dict | None) -> str:
    """A short text of an action for the caption."""
    if not isinstance(action, dict):
        return str(action)
    t = action.get("type")
    if t == "batch":
        subs = action.get("actions", [])
        return f"batch of {len(subs)}: " + ", ".join(action_text(a) for a in subs[:4]) + (" ..." if len(subs) > 4 else "")
    if action.get("x") is not None and t in ("click", "double_click", "long_press", "press", "move", "release"):
        return f"{t.replace('_', ' ')} ({action['x']:g}, {action['y']:g})"
    if t in ("drag", "swipe") and action.get("x0") is not None:
        via = f" via {len(action['via'])}" if action.get("via") else ""
        d = f" {action['direction']}" if action.get("direction") else ""
        return f"{t}{d} ({action['x0']:g}, {action['y0']:g}) -> ({action['x1']:g}, {action['y1']:g}){via}"
    if t == "key":
        return f"key {action.get('name')}"
    if t == "typetext":
        return f"type {str(action.get('text', ''))[:20]!r}"
    if t == "wait":
        return f"wait {action.get('ms', 0)} ms"
    if t == "scroll":
        return f"scroll {action.get('direction', 'down')}"
    return str(t)


def effect_text(step: Step) -> str:
    """What the action did, from the evaluator's record (and the public feedback)."""
    if step.final_answer is not None:
        return f"final answer: {step.final_answer[:60]}"
    if not step.feedback.get("executed", True):
        return "refused: " + str(step.feedback.get("message", ""))[:70]
    eff = step.record.get("effects") or []
    parts = []
    for e in eff:
        k = e.get("effect")
        if k == "move":
            parts.append(f"move {e.get('move')}" + ("" if e.get("changed", True) else " (no change)"))
        elif k == "rejected":
            parts.append(f"rejected {e.get('move')}: {e.get('message') or e.get('reason')}")
        elif k == "navigate":
            parts.append(f"to {e.get('screen')}")
        elif k in ("restart", "undo"):
            parts.append(k)
        elif k == "refused":
            parts.append(f"refused: {e.get('message') or e.get('reason')}")
    if step.record.get("win"):
        parts.append("LEVEL WON")
    if step.record.get("certificate") == "dead_end":
        parts.append("dead end")
    if not parts:
        parts.append(str(step.feedback.get("status", "nothing happened")).replace("_", " "))
    return "; ".join(parts)


# ---- the film -----------------------------------------------------------------------

class FrameSource:
    """The frames of one trajectory, ``frame(i)`` (None past the end, or for an animation frame
    that is not redrawn) and ``close()``: stored, or drawn again from its snapshots (an episode
    run with --no-frames; exact, the engine is deterministic). Public: the browser app's viewer
    reads frames through it too."""

    def __init__(self, traj: Trajectory):
        self.traj = traj
        self.store = stored_frames(traj.folder)
        self._rend = None
        self._snap_of_frame: dict[int, str] = {}
        self._catalog = None               # the episode's catalogue, read when a frame is drawn
        if self.store is None:
            self._snap_of_frame[0] = traj.header.get("start")
            for st in traj.steps:
                if st.frames and st.snapshot:
                    self._snap_of_frame[st.first_frame + len(st.frames) - 1] = st.snapshot
            if not traj.header.get("start"):
                raise VideoError(f"{traj.folder}: no stored frames and no start snapshot to draw them from")

    def frame(self, i: int) -> np.ndarray | None:
        if self.store is not None:
            return self.store.read(i) if i < len(self.store) else None
        snap = self._snap_of_frame.get(i)
        if snap is None:
            return None                   # an intermediate animation frame: not redrawn
        if self._catalog is None:
            self._catalog = episode_catalog(self.traj.header)
        suite = Suite.restore(snap, self._catalog)
        if self._rend is None:
            self._rend = renderer(suite.style, suite.scale, suite.viewport, suite.lang)
        return self._rend.render(suite)

    def close(self):
        if self.store is not None:
            self.store.close()


def _caption(frame: np.ndarray, lines: list[tuple[str, tuple]], font, band: int) -> np.ndarray:
    h, w = frame.shape[:2]
    H = h + band
    W = w + (w % 2)
    H += H % 2
    img = Image.new("RGB", (W, H), BAND)
    img.paste(Image.fromarray(np.ascontiguousarray(frame)), (0, 0))
    d = ImageDraw.Draw(img)
    y = h + 5
    for text, colour in lines:
        while text and d.textlength(text, font=font) > W - 12:
            text = text[:-2]
        d.text((6, y), text, fill=colour, font=font)
        y += (band - 8) // max(1, len(lines))
    return np.asarray(img)


def film(folder: str | Path, hold_last: int = 4) -> Iterator[np.ndarray]:
    """The video frames of an episode folder, one per yield (each (H, W, 3) uint8, even sizes)."""
    trajs = episode_trajectories(folder)
    font = small = None
    for ti, traj in enumerate(trajs):
        src = FrameSource(traj)
        try:
            shown = src.frame(0)
            if shown is None:
                raise VideoError(f"{traj.folder}: the first frame is missing")
            if font is None:
                s = max(11, int(round(shown.shape[1] / 540 * 14)))
                font, small = label_font(s), label_font(max(10, s - 2))
                band = 2 * s + 18
            level, P = traj.level, None
            total = len(traj.steps)
            for st in traj.steps:
                rec = st.record
                head = f"step {st.step}/{total}"
                lvl_now = rec.get("level") or (rec.get("screen") if rec else None)
                after_P = rec.get("P")
                where = lvl_now or level or "menu"
                moves = rec.get("moves")
                ptxt = ""
                if after_P is not None:
                    ptxt = f"P {P:.2f} -> {after_P:.2f}" if P is not None and level == rec.get("level") else f"P {after_P:.2f}"
                line1 = "   ".join(x for x in (head, where, f"move {moves}" if moves is not None else "", ptxt) if x)
                line2 = f"{action_text(st.action) if st.action is not None else 'final answer'}  =>  {effect_text(st)}"
                refused = st.action is not None and not st.feedback.get("executed", True)
                lines = [(line1, BAND_TEXT), (line2, REFUSED if refused else BAND_DIM)]
                img = Image.fromarray(np.ascontiguousarray(shown)).convert("RGB")
                if st.action is not None:
                    draw_action(img, st.action, small, colour=REFUSED if refused else ACTION_COLOUR)
                yield _caption(np.asarray(img), lines, small, band)
                for k in range(len(st.frames)):
                    f = src.frame(st.first_frame + k)
                    if f is None:
                        continue
                    shown = f
                    if k < len(st.frames) - 1:
                        yield _caption(f, lines, small, band)
                if rec.get("level") is not None:
                    level, P = rec.get("level"), after_P
                else:
                    level, P = None, None
            end = (traj.end or {}).get("end") or "cut short (no end line)"
            last = [(f"{traj.level or traj.header.get('objective', '')}   end: {end}", BAND_TEXT),
                    (f"{total} actions" + (f"   (level {ti + 1} of {len(trajs)})" if len(trajs) > 1 else ""), BAND_DIM)]
            for _ in range(hold_last):
                yield _caption(shown, last, small, band)
        finally:
            src.close()


def write_video(folder: str | Path, out: str | Path, fps: float = 4.0, scale: float = 1.0) -> dict:
    """Write an episode's film to ``out`` (.mp4 or .gif); returns {"path", "frames", "fps", "size",
    "seconds", "images"}: ``frames`` of the film, ``images`` stored in the file (a GIF stores a
    run of identical frames once, shown that much longer, so it may hold fewer)."""
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise VideoError(f"{out}: the video file must end in .mp4 or .gif")
    if not (0 < fps <= 60):
        raise VideoError(f"--fps must be in (0, 60], not {fps}")
    if not (0.1 <= scale <= 4):
        raise VideoError(f"--scale must be between 0.1 and 4, not {scale}")
    hold = max(1, int(round(fps)))
    frames = film(folder, hold_last=hold)
    if scale != 1.0:
        frames = (_rescale(f, scale) for f in frames)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.stem + ".part" + out.suffix)
    try:
        n, size = (_write_mp4 if suffix == ".mp4" else _write_gif)(frames, tmp, fps)
        images = n
        if suffix == ".gif":
            with Image.open(tmp) as im:
                images = im.n_frames
        tmp.replace(out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return {"path": str(out), "frames": n, "fps": fps, "size": list(size), "seconds": n / fps, "images": images}


def _rescale(f: np.ndarray, s: float) -> np.ndarray:
    h, w = f.shape[:2]
    W, H = max(2, int(w * s) // 2 * 2), max(2, int(h * s) // 2 * 2)
    return np.asarray(Image.fromarray(f).resize((W, H), Image.Resampling.LANCZOS))


def mp4_available() -> bool:
    return importlib.util.find_spec("imageio_ffmpeg") is not None


def _write_mp4(frames, path: Path, fps: float):
    try:
        import imageio_ffmpeg
    except ImportError:
        raise VideoError("MP4 needs imageio-ffmpeg (pip install 'longpuzzle[video]'); or write a .gif") from None
    it = iter(frames)
    first = next(it, None)
    if first is None:
        raise VideoError("the episode has no frames")
    h, w = first.shape[:2]
    gen = imageio_ffmpeg.write_frames(str(path), (w, h), fps=fps, codec="libx264", pix_fmt_in="rgb24",
                                      pix_fmt_out="yuv420p", macro_block_size=2, quality=None,
                                      output_params=["-crf", "20", "-preset", "veryfast", "-movflags", "+faststart"],
                                      ffmpeg_log_level="error")
    gen.send(None)
    n = 0
    try:
        for f in _chain(first, it):
            if f.shape[:2] != (h, w):     # a level of another size (level protocol): fit it
                f = _fit(f, w, h)
            gen.send(np.ascontiguousarray(f))
            n += 1
    finally:
        gen.close()
    return n, (w, h)


def _write_gif(frames, path: Path, fps: float):
    imgs = []
    size = None
    for f in frames:
        im = Image.fromarray(f)
        if size is None:
            size = im.size
        elif im.size != size:
            im = Image.fromarray(_fit(f, *size))
        imgs.append(im.quantize(colors=255, method=Image.Quantize.FASTOCTREE))
    if not imgs:
        raise VideoError("the episode has no frames")
    imgs[0].save(path, format="GIF", save_all=True, append_images=imgs[1:], duration=int(round(1000 / fps)),
                 loop=0, disposal=1)
    return len(imgs), size


def _fit(f: np.ndarray, w: int, h: int) -> np.ndarray:
    img = Image.new("RGB", (w, h), BAND)
    src = Image.fromarray(f)
    src.thumbnail((w, h))
    img.paste(src, (0, 0))
    return np.asarray(img)


def _chain(first, rest):
    yield first
    yield from rest
