"""Commands of longpuzzle.render: ``screenshot`` and ``play`` (added to the ``longpuzzle`` CLI)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.engine.errors import LongPuzzleError

EPISODE_FORMAT = "longpuzzle-gui-episode/1"


class DisplayError(LongPuzzleError):
    """The play window cannot be opened (no display)."""


def _read_episode(source: str) -> tuple[list, dict | None]:
    """(actions, the saved episode or None) from a JSON list of GUI actions, an episode file
    saved by ``play``, or JSON lines."""
    from longpuzzle.engine.textio import decode, loads, read_text

    if source == "-":
        text = decode(sys.stdin.buffer.read(), LongPuzzleError, "the actions on stdin")
    else:
        text = read_text(source, LongPuzzleError, f"actions file {source}")
    text = text.strip()
    if not text:
        return [], None
    try:
        doc = loads(text, LongPuzzleError, f"actions file {source}")
    except LongPuzzleError as whole:
        if "not valid JSON" not in str(whole):
            raise                       # nested too deeply, a number too long: not JSON lines either
        doc = [loads(line, LongPuzzleError, f"actions in {source} (a list, an episode file or one action per "
                                            f"line), line {i + 1},") for i, line in enumerate(text.splitlines())
               if line.strip()]
    episode = None
    if isinstance(doc, dict) and "actions" in doc and doc.get("format") == EPISODE_FORMAT:
        episode, doc = doc, doc["actions"]
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise LongPuzzleError(f"actions in {source} must be a JSON list of actions")
    return doc, episode


def _read_actions(source: str) -> list:
    return _read_episode(source)[0]


def _episode(start, style, scale, actions, screen) -> dict:
    s = screen.suite
    return {
        "format": EPISODE_FORMAT, "start": start, "style": style, "scale": scale, "lang": s.lang, "actions": actions,
        "level": s.level.id if s.level else None,
        "moves": s.session.move_texts() if s.session else [],
        "episode": s.session.episode_text() if s.session else "",
        "solved": bool(s.session.solved) if s.session else False,
        "snapshot": s.snapshot(),
    }


@click.command("screenshot")
@click.argument("target", default="home")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="PNG file to write.")
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--scale", type=float, default=1.0, show_default=True, help="1 -> 540 x 960, 2 -> 1080 x 1920.")
@click.option("--moves", help="Moves (text, separated by spaces) to play first, e.g. '1>3 2>1'.")
@click.option("--actions", "actions_file", help="GUI actions (JSON file, or - for stdin) to dispatch first.")
@click.option("--viewport", default=None, metavar="WxH",
              help="Letterbox the suite into a W x H page (e.g. 1280x900); actions in page px.")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="The language of the screens' texts (zh: the original's Chinese interface; same layout).")
@click.option("--preset", type=click.Choice(["paper", "fast", "repo"]), default=None,
              help="The screen of an evaluation preset (paper: 1280x900 page, Chinese); --viewport and "
              "--lang given as well win.")
@catalog_option
@click.pass_context
def screenshot_cmd(ctx, target, out, style, scale, moves, actions_file, viewport, lang, preset, catalog):
    """Write a PNG of the home screen or of LEVEL_ID (after MOVES / ACTIONS)."""
    from click.core import ParameterSource

    from longpuzzle.engine.geometry import parse_viewport
    from longpuzzle.render.frame import Screen, save_png

    if Path(out).suffix.lower() not in ("", ".png"):     # never PNG bytes under another type's name
        raise click.BadParameter(f"the screenshot is a PNG file: name it .png, not {Path(out).name}",
                                 param_hint="--out")
    vp = None if viewport is None else parse_viewport(viewport)
    if preset is not None:
        from longpuzzle.engine.geometry import PRESET_SCREENS
        screen = PRESET_SCREENS[preset]
        if viewport is None:
            vp = screen.get("viewport")
        if ctx.get_parameter_source("lang") == ParameterSource.DEFAULT:
            lang = screen.get("lang", "en")
        if ctx.get_parameter_source("scale") == ParameterSource.DEFAULT:
            scale = screen.get("scale", scale)
    sc = Screen(target, style=style, scale=scale, viewport=vp, lang=lang, catalog=catalog)
    if moves:
        if sc.suite.session is None:
            raise LongPuzzleError("--moves needs a level id, not the home screen")
        sc.suite.play_moves(moves.split())
    for a in _read_actions(actions_file) if actions_file else []:
        sc.act(a)
    save_png(sc.frame(), out)
    w, h = sc.suite.frame_size
    click.echo(f"wrote {out} ({w} x {h}, {style}, {sc.suite.screen_name()})")


def _display_available() -> bool:
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


@click.command("play")
@click.argument("start", default="home")
@click.option("--headless", is_flag=True, help="No window: read GUI actions from --actions (JSON) instead.")
@click.option("--actions", "actions_file", default="-", show_default=True,
              help="With --headless: a JSON list of actions, an episode file, or JSON lines (- = stdin).")
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--scale", type=float, default=1.0, show_default=True)
@click.option("--save", "save", type=click.Path(dir_okay=False), default="episode.json", show_default=True,
              help="Where to save the episode (actions, moves, final snapshot).")
@click.option("--frames", "frames_dir", type=click.Path(file_okay=False), help="Also save every frame as PNG here.")
@click.option("--frames-per-move", type=int, default=0, show_default=True, help="Intermediate animation frames.")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="The language of the screens' texts (zh: the original's Chinese interface; same layout).")
@catalog_option
@click.pass_context
def play_cmd(ctx, start, headless, actions_file, style, scale, save, frames_dir, frames_per_move, lang, catalog):
    """Play from the home screen or a level, with the mouse and keyboard (or scripted, --headless).

    Click, drag and type in the window; close it (or press Ctrl+Q) to finish: the episode
    (actions, moves, final snapshot) is saved to --save and can be replayed with
    --headless --actions FILE."""
    from longpuzzle.render.frame import Screen, save_png

    actions, saved = _read_episode(actions_file) if headless else ([], None)
    if saved is not None:
        # replaying a saved episode: its start and settings, unless given on the command line
        from click.core import ParameterSource
        for name in ("start", "style", "scale", "lang"):
            if ctx.get_parameter_source(name) == ParameterSource.DEFAULT and name in saved:
                if name == "start":
                    start = saved["start"]
                elif name == "style":
                    style = saved["style"]
                elif name == "lang":
                    lang = saved["lang"]
                else:
                    scale = saved["scale"]
    screen = Screen(start, style=style, scale=scale, frames_per_move=frames_per_move, lang=lang, catalog=catalog)
    done: list = []
    n_frames = 0

    def keep(frames):
        nonlocal n_frames
        if frames_dir:
            Path(frames_dir).mkdir(parents=True, exist_ok=True)
            for fr in frames:
                save_png(fr, Path(frames_dir) / f"frame_{n_frames:05d}.png")
                n_frames += 1

    if headless:
        keep([screen.frame()])
        for i, a in enumerate(actions):
            try:
                fb, frames = screen.act(a)
            except LongPuzzleError as e:        # a malformed action is refused, the run goes on
                click.echo(json.dumps({"step": i, "error": str(e)}))
                continue
            done.append(a)
            keep(frames)
            click.echo(json.dumps({"step": i, **fb.as_dict()}))
    else:
        try:
            _window_loop(screen, done, keep)
        except KeyboardInterrupt:          # Ctrl+C in the terminal: keep what was played
            pass
    ep = _episode(start, style, scale, done, screen)
    Path(save).write_text(json.dumps(ep, indent=1), encoding="utf-8")
    click.echo(f"saved {save}: {len(done)} actions, moves: {' '.join(ep['moves']) or '(none)'}"
               f"{'  SOLVED' if ep['solved'] else ''}")
    if saved is not None and "moves" in saved:
        if saved["moves"] != ep["moves"] or saved.get("level") != ep["level"]:
            raise LongPuzzleError(f"the replay differs from the saved episode: moves {ep['moves']} "
                                  f"on {ep['level']}, saved {saved['moves']} on {saved.get('level')}")
        click.echo("the replay gives the saved episode's moves")


def _window_loop(screen, done: list, keep) -> None:
    if not _display_available() or os.environ.get("LONGPUZZLE_FORCE_NO_DISPLAY"):
        raise DisplayError("no display is available for the play window (DISPLAY / WAYLAND_DISPLAY unset); "
                           "use --headless with --actions")
    from longpuzzle.render import frame as fr
    if fr.DUMMY_DRIVER_SET:
        os.environ.pop("SDL_VIDEODRIVER", None)
    import pygame
    try:
        pygame.display.init()
        w, h = screen.suite.frame_size
        win = pygame.display.set_mode((w, h))
    except pygame.error as e:
        raise DisplayError(f"cannot open the play window: {e}; use --headless") from None
    pygame.display.set_caption("longpuzzle")
    keys = {pygame.K_RETURN: "Enter", pygame.K_ESCAPE: "Escape", pygame.K_SPACE: "Space",
            pygame.K_BACKSPACE: "Backspace", pygame.K_TAB: "Tab", pygame.K_UP: "ArrowUp",
            pygame.K_DOWN: "ArrowDown", pygame.K_LEFT: "ArrowLeft", pygame.K_RIGHT: "ArrowRight"}

    def show(frames):
        for f in frames:
            surf = pygame.image.frombuffer(f.tobytes(), (f.shape[1], f.shape[0]), "RGB")
            win.blit(surf, (0, 0))
            pygame.display.flip()
            pygame.time.wait(16)
        keep(frames)

    show([screen.frame()])
    down = None
    clock = pygame.time.Clock()
    while True:
        action = None
        for ev in pygame.event.get():
            if ev.type == pygame.QUIT:
                pygame.display.quit()
                return
            if ev.type == pygame.MOUSEBUTTONDOWN and ev.button == 1:
                down = (ev.pos, pygame.time.get_ticks())
            elif ev.type == pygame.MOUSEBUTTONUP and ev.button == 1 and down is not None:
                (x0, y0), t0 = down
                x1, y1 = ev.pos
                down = None
                if abs(x1 - x0) + abs(y1 - y0) < 6:
                    action = {"type": "click", "x": x1, "y": y1}
                else:
                    ms = max(1, min(5000, pygame.time.get_ticks() - t0))
                    action = {"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": 10, "ms": ms}
            elif ev.type == pygame.KEYDOWN and ev.key == pygame.K_q and ev.mod & pygame.KMOD_CTRL:
                pygame.display.quit()       # Ctrl+Q closes the window (and saves the episode)
                return
            elif ev.type == pygame.KEYDOWN:
                name = keys.get(ev.key) or (ev.unicode if ev.unicode and ev.unicode.isascii()
                                            and ev.unicode.isalnum() else None)
                if name:
                    action = {"type": "key", "name": name}
            if action is not None:
                try:
                    _, frames = screen.act(action)
                except LongPuzzleError:
                    action = None
                    continue
                done.append(action)
                show(frames)
                action = None
        clock.tick(60)


COMMANDS = [screenshot_cmd, play_cmd]
