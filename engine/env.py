"""A Gymnasium-style single environment over the rules state (no pixels; for pixels and
GUI input see longpuzzle.render). Gymnasium itself is not required.

    env = PuzzleEnv("maze_paint/hard/3")
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(action)

Observation: the flat state array, a fresh array each step that the env never writes again
(unless ``copy_obs=False``, in which case it is
the env's own buffer, valid until the next step). Reward: P(s') - P(s) (potential-based, so
the return of an episode is P(final) - P(start)). ``info``: ``code`` (0 accepted, 1 no-op
move, >= 2 rejected; a rejected move leaves the state as it was) and ``P``.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.batch import kernels
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle


def _entry_point(dispatcher, *args):
    """The compiled entry of ``dispatcher`` for these argument types (skips numba's
    per-call type dispatch, which dominates the cost of a tiny kernel)."""
    dispatcher(*args)
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    ov = dispatcher.overloads.get(sig)
    return ov.entry_point if ov is not None else dispatcher


class PuzzleEnv:
    def __init__(self, level: Level | str, *, max_steps: int | None = None, copy_obs: bool = True):
        self.level = load_level(level)
        self.puzzle = get_puzzle(self.level.game)
        self.max_steps = max_steps
        self.copy_obs = copy_obs
        self.n_actions = self.level.n_actions
        self.state = self.level.initial.copy()
        self._scratch = np.empty_like(self.state)
        self._out = np.zeros(2, np.float64)
        self._lv = self.level.lv
        k = kernels(self.puzzle)
        self._step = _entry_point(k.env_step_one, self._lv, self.state.copy(), self._scratch, np.int64(0), self._out)
        self._step_new = _entry_point(k.env_step_into, self._lv, self.state.copy(), self._scratch, np.int64(0),
                                      self._out)
        self.t = 0
        self._p = 0.0
        self.reset()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.state = self.level.initial.copy()
        self.t = 0
        self._p = self.puzzle.progress(self.level, self.state)
        return (self.state.copy() if self.copy_obs else self.state), {"P": self._p}

    def step(self, action: int):
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} is out of range 0..{self.n_actions - 1}")
        if self.copy_obs:
            # the successor goes into a fresh array that the env never writes again, so it
            # can be handed out as the observation without a copy
            new = np.empty_like(self.state)
            code = self._step_new(self._lv, self.state, new, action, self._out)
            self.state = obs = new
        else:
            code = self._step(self._lv, self.state, self._scratch, action, self._out)
            obs = self.state
        p = self._out[0]
        reward = p - self._p
        self._p = p
        self.t += 1
        truncated = self.max_steps is not None and self.t >= self.max_steps
        return obs, reward, self._out[1] != 0.0, truncated, {"code": code, "P": p}

    def legal_moves(self) -> list[int]:
        return self.puzzle.legal_moves(self.level, self.state)
