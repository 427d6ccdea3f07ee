"""Batched stepping: N states and N actions in one compiled call, and a vectorised
environment built on it (auto-reset, rewards = change of the progress potential P).

    kernels(puzzle).step_batch(lv, src[N, L], dst[N, L], actions[N], codes[N])
    kernels(puzzle).env_step(lv, init[L], states[N, L], scratch[L], actions[N],
                             codes[N], prog[N], rewards[N], solved[N], autoreset)

Rewards are potential-based: r = P(s') - P(s), so an episode's return is P(final) - P(start)
and solving a level always collects the remainder up to 1.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import Level, Puzzle
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.specialize import specialize

TEMPLATE = '''
import numpy as np
from numba import njit


@njit(cache=True)
def step_batch(lv, src, dst, actions, codes):
    for i in range(src.shape[0]):
        codes[i] = step_into(lv, src[i], dst[i], actions[i])


@njit(cache=True)
def env_step(lv, init, states, scratch, actions, codes, prog, rewards, solved, autoreset):
    for i in range(states.shape[0]):
        row = states[i]
        c = step_into(lv, row, scratch, actions[i])
        codes[i] = c
        p_old = prog[i]
        p = p_old
        if c == 0:
            for j in range(row.shape[0]):
                row[j] = scratch[j]
            p = progress(lv, row)
        rewards[i] = p - p_old
        done = is_solved(lv, row)
        solved[i] = done
        if done and autoreset:
            for j in range(row.shape[0]):
                row[j] = init[j]
            p = progress(lv, row)
        prog[i] = p


@njit(cache=True)
def env_step_one(lv, state, scratch, action, out):
    """One step in place: state <- successor (if accepted); out[0] <- P, out[1] <- solved."""
    c = step_into(lv, state, scratch, action)
    if c == 0:
        for j in range(state.shape[0]):
            state[j] = scratch[j]
    out[0] = progress(lv, state)
    out[1] = 1.0 if is_solved(lv, state) else 0.0
    return c


@njit(cache=True)
def env_step_into(lv, state, dst, action, out):
    """One step into a fresh array: dst <- successor (== state if not accepted);
    out[0] <- P(dst), out[1] <- solved(dst). ``state`` is not written."""
    c = step_into(lv, state, dst, action)
    out[0] = progress(lv, dst)
    out[1] = 1.0 if is_solved(lv, dst) else 0.0
    return c


@njit(cache=True)
def random_walks(lv, init, n_walks, n_steps, seed, n_actions, out_final, out_solved):
    """n_walks uniform random walks over the legal moves, n_steps each (a walk stops when
    solved or stuck). Writes final states and whether each walk solved the level;
    returns the number of moves made in total."""
    np.random.seed(seed)
    mask = np.zeros(n_actions, np.uint8)
    cur = init.copy()
    nxt = init.copy()
    total = 0
    for w in range(n_walks):
        for j in range(cur.shape[0]):
            cur[j] = init[j]
        solved = False
        for t in range(n_steps):
            if is_solved(lv, cur):
                solved = True
                break
            k = legal_into(lv, cur, mask)
            if k == 0:
                break
            pick = np.random.randint(k)
            a = 0
            for b in range(n_actions):
                if mask[b]:
                    if pick == 0:
                        a = b
                        break
                    pick -= 1
            step_into(lv, cur, nxt, a)
            for j in range(cur.shape[0]):
                cur[j] = nxt[j]
            total += 1
        out_final[w, :] = cur
        out_solved[w] = solved or is_solved(lv, cur)
    return total
'''


def kernels(puzzle: Puzzle | str):
    """The batched kernels module of a game (generated and cached on first use)."""
    p = get_puzzle(puzzle) if isinstance(puzzle, str) else puzzle
    return specialize(p, TEMPLATE, "batch")


def step_batch(level: Level, states: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pure batched step: returns (new_states, codes); ``states`` is not modified."""
    p = get_puzzle(level.game)
    states = np.ascontiguousarray(states, dtype=level.initial.dtype)
    if states.ndim != 2 or states.shape[1] != level.initial.shape[0]:
        raise ValueError(f"states must have shape (N, {level.initial.shape[0]})")
    actions = np.ascontiguousarray(actions, dtype=np.int64)
    if actions.shape != (states.shape[0],):
        raise ValueError("need one action per state")
    dst = np.empty_like(states)
    codes = np.empty(states.shape[0], np.int64)
    kernels(p).step_batch(level.lv, states, dst, actions, codes)
    return dst, codes


class VectorEnv:
    """N copies of one level stepped together (Gymnasium's vector-env conventions).

    ``reset()`` -> states (N, L); ``step(actions)`` -> (states, rewards, terminated,
    truncated, info) where terminated marks the envs that were solved by this step (they
    have been reset already when ``autoreset``), and info holds the move ``codes`` (0 OK,
    1 no-op move, >= 2 rejected) and the progress ``P`` of each env. ``max_steps`` truncates.
    """

    def __init__(self, level: Level | str, num_envs: int, *, autoreset: bool = True, max_steps: int | None = None):
        if num_envs < 1:
            raise ValueError("num_envs must be at least 1")
        self.level = load_level(level)
        self.puzzle = get_puzzle(self.level.game)
        self.num_envs = num_envs
        self.autoreset = autoreset
        self.max_steps = max_steps
        self.n_actions = self.level.n_actions
        self._k = kernels(self.puzzle)
        L = self.level.initial.shape[0]
        self.states = np.empty((num_envs, L), self.level.initial.dtype)
        self._scratch = np.empty(L, self.level.initial.dtype)
        self._codes = np.zeros(num_envs, np.int64)
        self._prog = np.zeros(num_envs, np.float64)
        self._rewards = np.zeros(num_envs, np.float64)
        self._solved = np.zeros(num_envs, np.bool_)
        self._t = np.zeros(num_envs, np.int64)
        self.reset()

    def reset(self) -> np.ndarray:
        self.states[:] = self.level.initial
        self._prog[:] = self.puzzle.progress(self.level, self.level.initial)
        self._t[:] = 0
        return self.states

    def step(self, actions):
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"need {self.num_envs} actions, got shape {actions.shape}")
        self._k.env_step(self.level.lv, self.level.initial, self.states, self._scratch, actions,
                         self._codes, self._prog, self._rewards, self._solved, self.autoreset)
        self._t += 1
        self._t[self._solved] = 0
        truncated = np.zeros(self.num_envs, np.bool_)
        if self.max_steps is not None:
            truncated = self._t >= self.max_steps
            if truncated.any() and self.autoreset:
                self.states[truncated] = self.level.initial
                self._prog[truncated] = self.puzzle.progress(self.level, self.level.initial)
                self._t[truncated] = 0
        return self.states, self._rewards, self._solved, truncated, {"codes": self._codes, "P": self._prog}
