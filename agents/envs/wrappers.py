"""DiscreteGUIActions: the pixel envs' GUI actions as ``Discrete(n)``, for simple policies.

    env = DiscreteGUIActions(gymnasium.make("longpuzzle/NutAndBolt-v0", mode="pixels"),
                             grid=(9, 16), swipes="centre")

Actions, in this order (``env.gui_action(i)`` gives the GUI action dict, ``env.describe(i)``
a short text):

    0 .. C*R-1        click at the centre of grid cell (c, r) of a C x R grid laid over the
                      frame; i = r * C + c
    then, by swipes=
      "centre"        4 swipes from the frame centre: up, down, left, right (the default
                      length, 0.4 * the frame's shorter side, as HARNESS.md says)
      "cells"         4 swipes from the centre of every grid cell, for each length in
                      ``swipe_cells`` (in grid cells; default 1): index C*R + ((r*C + c) *
                      len(swipe_cells) + j) * 4 + d, d in up, down, left, right
      "none"          no swipes

Which games this reaches: clicks play Nut and Bolt, Truck Escape, Bolt Unscrew and Color
Connect (cell by cell) when the grid is fine enough to hit their pieces; centre swipes play
Maze Paint; Rush Hour needs "cells" swipes (a vehicle is dragged along its lane). Menus and
HUD buttons are clicks too.
"""

from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces

from longpuzzle.engine.gui import DIRECTIONS

SWIPES = ("centre", "cells", "none")
_STEP = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


class DiscreteGUIActions(gym.ActionWrapper):
    def __init__(self, env: gym.Env, grid: tuple[int, int] = (9, 16), swipes: str = "centre",
                 swipe_cells: tuple[int, ...] = (1,)):
        super().__init__(env)
        size = getattr(env.unwrapped, "frame_size", None)
        if size is None:
            raise TypeError("DiscreteGUIActions wraps a pixel env (mode='pixels' or Suite-v0)")
        cols, rows = grid
        if not all(isinstance(v, int) and v >= 1 for v in (cols, rows)):
            raise ValueError(f"grid must be two positive integers (columns, rows), not {grid!r}")
        if swipes not in SWIPES:
            raise ValueError(f"swipes must be one of {', '.join(SWIPES)}, not {swipes!r}")
        if not swipe_cells or not all(isinstance(k, int) and k >= 1 for k in swipe_cells):
            raise ValueError(f"swipe_cells must be positive integers, not {swipe_cells!r}")
        w, h = size
        pw, ph = w / cols, h / rows
        self.grid = (cols, rows)
        acts: list[dict] = []
        names: list[str] = []
        centres = [(r, c, min(w - 1, round((c + 0.5) * pw)), min(h - 1, round((r + 0.5) * ph)))
                   for r in range(rows) for c in range(cols)]
        for r, c, x, y in centres:
            acts.append({"type": "click", "x": x, "y": y})
            names.append(f"click cell ({c}, {r}) at ({x}, {y})")
        if swipes == "centre":
            for d in DIRECTIONS:
                acts.append({"type": "swipe", "direction": d})
                names.append(f"swipe {d} from the centre")
        elif swipes == "cells":
            for r, c, x, y in centres:
                for k in swipe_cells:
                    for d in DIRECTIONS:
                        dx, dy = _STEP[d]
                        x1 = min(max(round(x + dx * k * pw), 0), w - 1)
                        y1 = min(max(round(y + dy * k * ph), 0), h - 1)
                        acts.append({"type": "swipe", "x0": x, "y0": y, "x1": x1, "y1": y1})
                        names.append(f"swipe {d} {k} cell{'s' if k > 1 else ''} from cell ({c}, {r})")
        self._actions = acts
        self._names = names
        self.action_space = spaces.Discrete(len(acts))

    def gui_action(self, i: int) -> dict:
        return dict(self._actions[int(i)])

    def describe(self, i: int) -> str:
        return self._names[int(i)]

    def action(self, action) -> dict:
        i = int(action)
        if not 0 <= i < len(self._actions) or i != action:
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        return dict(self._actions[i])
