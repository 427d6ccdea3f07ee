"""The ``human`` render mode: one pygame window per process showing the env's frames.

Headless machines (tests, CI, a server): with ``SDL_VIDEODRIVER=dummy``, or with no display at
all (a warning says so once), the window is drawn off screen and nothing waits for a person -
so Gymnasium's ``check_env``, which tries every declared render mode, works anywhere. With a
real display the window keeps the env's
``render_fps``; closing it is ignored until the env is closed (the env owns its episode).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from longpuzzle.engine.errors import LongPuzzleError


class DisplayError(LongPuzzleError):
    """render_mode="human" was asked for where no window can be opened."""


def _display_available() -> bool:
    if os.environ.get("SDL_VIDEODRIVER"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


_OPEN = [0]          # viewers open in this process (they share pygame's one window)
_WARNED = [False]


def _draw_off_screen() -> None:
    """No display: SDL's dummy driver (before pygame's display starts), said once per process."""
    from longpuzzle.render import frame as fr
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    fr.DUMMY_DRIVER_SET = True
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn("render_mode='human' without a display (DISPLAY / WAYLAND_DISPLAY unset): the window is "
                      "drawn off screen", stacklevel=4)


class Viewer:
    """A window of ``size`` (W, H) px; ``show(frame)`` puts an (H, W, 3) uint8 frame on it.
    Several viewers in one process share pygame's single window (the last shown wins)."""

    def __init__(self, size: tuple[int, int], fps: float = 30.0, caption: str = "longpuzzle"):
        from longpuzzle.render import frame as fr     # pygame, headless defaults
        import pygame

        if fr.DUMMY_DRIVER_SET and os.environ.get("SDL_VIDEODRIVER") == "dummy":
            os.environ.pop("SDL_VIDEODRIVER", None)     # render/frame/ chose dummy, not the user
            fr.DUMMY_DRIVER_SET = False
        if not _display_available():
            _draw_off_screen()
        self._pg = pygame
        self.size = size
        self.caption = caption
        self.fps = fps
        self.headless = os.environ.get("SDL_VIDEODRIVER") == "dummy"
        self._open()
        self.clock = pygame.time.Clock()
        self.closed = False
        _OPEN[0] += 1

    def _open(self) -> None:
        pg = self._pg
        try:
            pg.display.init()
            self.win = pg.display.set_mode(self.size)
        except pg.error as e:
            raise DisplayError(f"cannot open a window for render_mode='human': {e}") from None
        pg.display.set_caption(self.caption)

    def show(self, frame: np.ndarray) -> None:
        if self.closed:
            return
        pg = self._pg
        if not pg.display.get_init() or pg.display.get_surface() is None \
                or pg.display.get_surface().get_size() != self.size:
            self._open()                               # another viewer changed or closed the window
        h, w = frame.shape[:2]
        surf = pg.image.frombuffer(np.ascontiguousarray(frame).tobytes(), (w, h), "RGB")
        if (w, h) != self.size:
            surf = pg.transform.smoothscale(surf, self.size)
        pg.display.get_surface().blit(surf, (0, 0))
        pg.event.pump()
        pg.display.flip()
        if not self.headless:
            self.clock.tick(self.fps)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _OPEN[0] -= 1
            if _OPEN[0] == 0:
                self._pg.display.quit()
