"""Observation and action spaces of the rules mode, shared by every level of a source.

The observation is the game's state array (its layout is documented in the game's module,
e.g. longpuzzle/puzzles/maze_paint.py), as a ``Box`` whose per-element bounds are the game's
true bounds (``Puzzle.state_bounds``: every reachable state lies inside them). When a source
holds levels of different sizes, states are padded with zeros to the longest one and the
bounds are the union over the levels; actions are ``Discrete(largest n_actions)``, and an
action number a level does not have is rejected like any illegal move (code 2).

``obs_type="dict"`` gives a ``Dict`` instead:

    "state"        the Box above
    "action_mask"  MultiBinary(n_actions): 1 = the action is accepted and changes the state
    "level"        Discrete(number of levels): the index of the level in the env's list
                   (only for a finite source of more than one level: the state alone does
                   not say which board it is on)
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.agents.envs.levels import LevelSourceError

OBS_TYPES = ("state", "dict")


class StateLayout:
    """The padded state layout of a set of levels of one game, and its spaces."""

    def __init__(self, levels, obs_type: str = "state", n_levels: int = 1):
        if obs_type not in OBS_TYPES:
            raise ValueError(f"obs_type must be one of {', '.join(OBS_TYPES)}, not {obs_type!r}")
        levels = list(levels)
        self.obs_type = obs_type
        self.game = levels[0].game
        self.dtype = levels[0].initial.dtype
        self.length = max(lvl.initial.shape[0] for lvl in levels)
        self.n_actions = max(lvl.n_actions for lvl in levels)
        low = high = None
        for lvl in levels:
            lo, hi = self._padded_bounds(lvl)
            low = lo if low is None else np.minimum(low, lo)
            high = hi if high is None else np.maximum(high, hi)
        same = low == high                     # constant elements: one wide (module docstring)
        top = np.iinfo(self.dtype).max
        high = np.where(same & (high < top), high + 1, high).astype(self.dtype)
        low = np.where(same & (high == low), low - 1, low).astype(self.dtype)
        self.box = spaces.Box(low, high, (self.length,), self.dtype)
        self.action_space = spaces.Discrete(self.n_actions)
        self.with_level = obs_type == "dict" and n_levels > 1
        if obs_type == "state":
            self.observation_space = self.box
        else:
            parts = {"state": self.box, "action_mask": spaces.MultiBinary(self.n_actions)}
            if self.with_level:
                parts["level"] = spaces.Discrete(n_levels)
            self.observation_space = spaces.Dict(parts)

    def _padded_bounds(self, lvl: Level) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = get_puzzle(lvl.game).state_bounds(lvl)
        n = lvl.initial.shape[0]
        low = np.zeros(self.length, self.dtype)
        high = np.zeros(self.length, self.dtype)
        low[:n], high[:n] = lo, hi
        return low, high

    def check(self, lvl: Level) -> None:
        """Raise LevelSourceError unless every state of ``lvl`` fits the spaces."""
        why = ""
        if lvl.game != self.game:
            why = f"it is a {lvl.game} level, the env plays {self.game}"
        elif lvl.initial.shape[0] > self.length:
            why = f"its state has {lvl.initial.shape[0]} entries, the observation {self.length}"
        elif lvl.n_actions > self.n_actions:
            why = f"it has {lvl.n_actions} actions, the action space {self.n_actions}"
        else:
            lo, hi = self._padded_bounds(lvl)
            if (lo < self.box.low).any() or (hi > self.box.high).any():
                why = "its state bounds reach outside the observation space's"
        if why:
            raise LevelSourceError(f"level {lvl.id} does not fit this environment's spaces ({why}); "
                                   "make the env with space_levels= covering every level the source yields")

    def pad_state(self, state: np.ndarray) -> np.ndarray:
        if state.shape[0] == self.length:
            return state
        out = np.zeros(self.length, self.dtype)
        out[:state.shape[0]] = state
        return out

    def pad_mask(self, mask: np.ndarray) -> np.ndarray:
        if mask.shape[0] == self.n_actions:
            return mask
        out = np.zeros(self.n_actions, np.int8)
        out[:mask.shape[0]] = mask
        return out

    def observation(self, state: np.ndarray, mask: np.ndarray, level_index: int):
        """The observation of a (padded) state. ``mask`` must be an array the caller hands
        out (it is put into the dict as it is)."""
        if self.obs_type == "state":
            return state
        obs = {"state": state, "action_mask": mask}
        if self.with_level:
            obs["level"] = np.int64(level_index)
        return obs
