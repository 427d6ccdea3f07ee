"""One level's compiled stepping: the fast core under the Gymnasium environments of
longpuzzle.agents.envs (which add spaces, level sources, reward modes and rendering). No
Gymnasium here.

    core = PuzzleEnv("maze_paint/hard/3")
    obs, info = core.reset()
    obs, reward, terminated, truncated, info = core.step(action)
    code = core.advance(action)        # the same step without building the result tuple;
                                       # then read core.state, core.p, core.solved, core.mask

The state is stepped in place (``core.state``). Observations are copies that the core never
writes (with ``copy_obs=False`` the core's own buffer is handed out instead: it changes with
the next step). Reward: P(s') - P(s) (potential-based, so the return of an episode is
P(final) - P(start)). ``info``: ``code`` (0 accepted, 1 no-op move, >= 2 rejected; a rejected
move leaves the state as it was) and ``P``. With ``action_mask=True`` every step also finds
the legal actions of the new state in the same compiled call (``core.mask``, int8 of
``n_actions``: 1 = the action is accepted and changes the state; a copy is in
``info["action_mask"]``). A core pickles; its compiled entry points are found again after
unpickling.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.batch import kernels
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle

_ENTRIES: dict = {}


def _entry_point(dispatcher, *args):
    """The compiled entry of ``dispatcher`` for these argument types (skips numba's
    per-call type dispatch, which dominates the cost of a tiny kernel). Cached per
    (kernel, argument types): every level of a game shares its kernels' signatures."""
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    key = (id(dispatcher), sig)
    e = _ENTRIES.get(key)
    if e is None:
        dispatcher(*args)
        ov = dispatcher.overloads.get(sig)
        e = _ENTRIES[key] = ov.entry_point if ov is not None else dispatcher
    return e


class PuzzleEnv:
    """One level, stepped by compiled kernels. ``max_steps`` truncates (``truncated`` once
    ``t >= max_steps``)."""

    def __init__(self, level: Level | str, *, max_steps: int | None = None, copy_obs: bool = True,
                 action_mask: bool = False):
        self.level = load_level(level)
        self.puzzle = get_puzzle(self.level.game)
        self.max_steps = max_steps
        self.copy_obs = copy_obs
        self.action_mask = bool(action_mask)
        self.n_actions = self.level.n_actions
        self.state = self.level.initial.copy()
        self.mask = np.zeros(self.n_actions, np.int8)
        self._scratch = np.empty_like(self.state)
        self._out = np.zeros(2, np.float64)
        self._lv = self.level.lv
        self._bind()
        self.t = 0
        self.p = 0.0
        self.solved = False
        self.reset()

    def _bind(self) -> None:
        k = kernels(self.puzzle)
        probe = self.level.initial.copy()
        self._step = _entry_point(k.env_step_one, self._lv, probe, self._scratch, 0, self._out)
        self._step_mask = _entry_point(k.env_step_mask, self._lv, probe, self._scratch, self.mask.copy(), 0,
                                       self._out)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Back to the level's initial state; returns (obs, info)."""
        self.state[:] = self.level.initial
        self.t = 0
        self.p = self.puzzle.progress(self.level, self.state)
        self.solved = self.puzzle.is_solved(self.level, self.state)
        self._out[0], self._out[1] = self.p, float(self.solved)
        info = {"P": self.p}
        if self.action_mask:
            self.puzzle.kernels.legal_into(self._lv, self.state, self.mask)
            info["action_mask"] = self.mask.copy()
        return (self.state.copy() if self.copy_obs else self.state), info

    def advance(self, action: int) -> int:
        """One step in place (``action`` an int; integers that are not actions of the level
        are rejected with code BAD_ACTION); updates state, p, solved, t (and mask).
        Returns the move's code."""
        out = self._out
        if self.action_mask:
            code = self._step_mask(self._lv, self.state, self._scratch, self.mask, action, out)
        else:
            code = self._step(self._lv, self.state, self._scratch, action, out)
        self.p = out[0]
        self.solved = bool(out[1])
        self.t += 1
        return code

    def step(self, action: int):
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} is out of range 0..{self.n_actions - 1}")
        p0 = self.p
        code = self.advance(action)
        truncated = self.max_steps is not None and self.t >= self.max_steps
        info = {"code": code, "P": self.p}
        if self.action_mask:
            info["action_mask"] = self.mask.copy()
        return (self.state.copy() if self.copy_obs else self.state), self.p - p0, self.solved, truncated, info

    def legal_moves(self) -> list[int]:
        return self.puzzle.legal_moves(self.level, self.state)

    def __getstate__(self) -> dict:
        d = dict(self.__dict__)
        del d["_step"], d["_step_mask"], d["puzzle"]     # compiled entries: found again on load
        return d

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        self.puzzle = get_puzzle(self.level.game)
        self._lv = self.level.lv
        self._bind()
