"""Batched stepping: the compiled cores of the environments (no Gymnasium here).

    kernels(puzzle).step_batch(lv, src[N, L], dst[N, L], actions[N], codes[N])
    kernels(puzzle).vec_step(...) / vec_reset(...)     N envs, each on its own level of a
                                                       stack (longpuzzle.agents.envs.PuzzleVectorEnv)
    kernels(puzzle).vec_rollout(...)                   T steps of the N envs in one call, actions
                                                       chosen inside (PuzzleVectorEnv.rollout)
    kernels(puzzle).env_step_one / env_step_mask
                                                       one env (engine/env.py PuzzleEnv)
    kernels(puzzle).random_walks(...)                  compiled random rollouts (CLI rollout)

Rewards are potential-based: r = P(s') - P(s), so an episode's return is P(final) - P(start)
and solving a level always collects the remainder up to 1.
"""

from __future__ import annotations

import numpy as np

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
def _reset_row(lv, init, L, row, mask_row, n_act, want_mask):
    """Env row <- the level's initial state (entries past L zeroed); its legal mask if
    wanted. Returns P of the initial state."""
    for j in range(L):
        row[j] = init[j]
    for j in range(L, row.shape[0]):
        row[j] = 0
    if want_mask:
        for j in range(mask_row.shape[0]):
            mask_row[j] = 0
        legal_into(lv, row[:L], mask_row[:n_act])
    return progress(lv, row[:L])


@njit(cache=True)
def vec_step(lvs, lv_len, inits, st_len, n_act, level_of, states, scratch, mask, want_mask,
             actions, reset_now, prog, t, max_steps, sparse, codes, rewards, solved, trunc):
    """One step of N envs in place, each on its own level of a stack: row k of ``lvs`` /
    ``inits`` holds level k (lv_len[k] / st_len[k] entries used, n_act[k] actions); env i
    plays level level_of[i]; its state is row i of ``states`` (N, Lmax; entries past the
    level's length are 0). Env i with reset_now[i] starts again: its initial state, code -1,
    reward 0, t[i] <- 0. Any other env steps: its successor under actions[i] (unchanged when
    not accepted), codes[i] the result code, solved[i] whether the new state is solved,
    rewards[i] 1/0 on solving (``sparse``) or the change of P, t[i] += 1 and trunc[i] =
    t[i] >= max_steps (when max_steps > 0). prog[i] (P of env i's state) is kept up to date.
    With want_mask, mask[i] holds the legal actions of env i's state. ``scratch``: one row."""
    for i in range(states.shape[0]):
        k = level_of[i]
        lv = lvs[k, :lv_len[k]]
        L = st_len[k]
        row = states[i]
        if reset_now[i]:
            prog[i] = _reset_row(lv, inits[k], L, row, mask[i], n_act[k], want_mask)
            codes[i] = -1
            rewards[i] = 0.0
            solved[i] = False
            trunc[i] = False
            t[i] = 0
            continue
        c = step_into(lv, row[:L], scratch[:L], actions[i])
        codes[i] = c
        p_old = prog[i]
        done = False
        p = p_old
        if c == 0:
            for j in range(L):
                row[j] = scratch[j]
            p = progress(lv, row[:L])
            done = is_solved(lv, row[:L])
            if want_mask:
                legal_into(lv, row[:L], mask[i, :n_act[k]])
        prog[i] = p
        solved[i] = done
        if sparse:
            rewards[i] = 1.0 if done else 0.0
        else:
            rewards[i] = p - p_old
        t[i] += 1
        trunc[i] = max_steps > 0 and t[i] >= max_steps


@njit(cache=True)
def _next_u64(rng, i):
    """The next 64 random bits of env i's stream (splitmix64: one uint64 of state per env)."""
    z = rng[i] + np.uint64(0x9E3779B97F4A7C15)
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _row_less(a, b, L):
    """Lexicographic a < b over the first L entries (the order of an expert table)."""
    for j in range(L):
        if a[j] != b[j]:
            return a[j] < b[j]
    return False


@njit(cache=True)
def _table_action(tab_states, tab_act, lo, hi, row, L):
    """The action the expert table gives the state ``row`` (binary search of rows lo..hi-1,
    sorted lexicographically), or -1 when the state is not in the table."""
    end = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if _row_less(tab_states[mid], row, L):
            lo = mid + 1
        else:
            hi = mid
    if lo < end:
        for j in range(L):
            if tab_states[lo, j] != row[j]:
                return -1
        return tab_act[lo]
    return -1


@njit(cache=True)
def vec_rollout(lvs, lv_len, inits, st_len, n_act, level_of, states, scratch, mask, want_mask,
                prog, t, max_steps, sparse, ended, queue, qpos, draw, policy, given, rng,
                tab_states, tab_act, tab_start, lmask,
                want_obs, out_obs, out_act, out_rew, out_term, out_trunc, out_code, out_level):
    """T = out_act.shape[1] steps of N envs in ONE call: exactly what T calls of vec_step
    with autoreset NEXT_STEP do (same states, rewards, codes, masks, step counters), with
    each step's action chosen here. Env i is stepped T times in turn (envs are independent,
    so the order of the loops changes nothing).

    State in/out (the vector env's own arrays, updated in place): states, mask, level_of,
    prog, t as in vec_step; ended[i] whether env i's episode ended on its last step (it is
    reset by its next step: level drawn, initial state, code -1, reward 0, action ignored).
    Level draws: with ``draw``, a reset takes level queue[i, qpos[i]] and qpos[i] += 1 (the
    caller leaves at least T entries; the queue holds what the env's generator draws, in
    order); without, the env keeps its level.
    Policy: 0 the given actions (given[i, s]); 1 uniform over the legal actions of the state
    from env i's splitmix64 stream rng[i] (action 0 when none is legal); 2 the expert table:
    level k's rows tab_start[k]..tab_start[k+1]-1 of tab_states (sorted) with their actions
    tab_act, falling back to policy 1 for a state not in it. A reset step draws nothing from
    rng and records action 0. ``lmask``: a scratch row of int8 for legal masks.
    Out, per env i and step s: out_obs[i, s] the observation after the step (want_obs),
    out_act the action taken, out_rew the reward, out_term / out_trunc terminated /
    truncated, out_code the result code (-1 on a reset step), out_level the level index."""
    N = states.shape[0]
    T = out_act.shape[1]
    width = states.shape[1]
    for i in range(N):
        row = states[i]
        k = level_of[i]
        L = st_len[k]
        na = n_act[k]
        lv = lvs[k, :lv_len[k]]
        # ``cur`` is the env's state: its row, or the buffer the last accepted step wrote
        # (the step's observation slot, else the scratch row) - one copy a step, not three
        cur = row[:L]
        in_row = True
        # the env's scalars live in locals during its T steps (written back after)
        p_env = prog[i]
        t_env = t[i]
        end_env = ended[i]
        for s in range(T):
            if end_env:
                if draw:
                    k = queue[i, qpos[i]]
                    qpos[i] += 1
                    L = st_len[k]
                    na = n_act[k]
                    lv = lvs[k, :lv_len[k]]
                p_env = _reset_row(lv, inits[k], L, row, mask[i], na, want_mask)
                cur = row[:L]
                in_row = True
                t_env = 0
                end_env = False
                out_act[i, s] = given[i, s] if policy == 0 else 0
                out_code[i, s] = -1
                out_rew[i, s] = 0.0
                out_term[i, s] = False
                out_trunc[i, s] = False
                if want_obs:
                    for j in range(L):
                        out_obs[i, s, j] = cur[j]
            else:
                a = -1
                if policy == 0:
                    a = given[i, s]
                elif policy == 2:
                    a = _table_action(tab_states, tab_act, tab_start[k], tab_start[k + 1], cur, L)
                if a < 0:
                    if want_mask:
                        m = mask[i, :na]
                    else:
                        m = lmask[:na]
                        legal_into(lv, cur, m)
                    cnt = 0
                    for b in range(na):
                        if m[b]:
                            cnt += 1
                    a = 0
                    if cnt > 0:
                        pick = np.int64(((_next_u64(rng, i) >> np.uint64(32)) * np.uint64(cnt)) >> np.uint64(32))
                        for b in range(na):
                            if m[b]:
                                if pick == 0:
                                    a = b
                                    break
                                pick -= 1
                out_act[i, s] = a
                if want_obs:
                    dst = out_obs[i, s, :L]
                elif in_row:
                    dst = scratch[:L]
                else:
                    dst = row[:L]
                c = step_into(lv, cur, dst, a)
                p_old = p_env
                done = False
                p = p_old
                if c == 0:
                    cur = dst
                    in_row = not in_row and not want_obs
                    p = progress(lv, cur)
                    done = is_solved(lv, cur)
                    if want_mask:
                        legal_into(lv, cur, mask[i, :na])
                elif want_obs:
                    for j in range(L):
                        dst[j] = cur[j]
                p_env = p
                t_env += 1
                tr = max_steps > 0 and t_env >= max_steps
                out_code[i, s] = c
                out_rew[i, s] = (1.0 if done else 0.0) if sparse else p - p_old
                out_term[i, s] = done
                out_trunc[i, s] = tr
                end_env = done or tr
            out_level[i, s] = k
            if want_obs:
                for j in range(L, width):
                    out_obs[i, s, j] = 0
        prog[i] = p_env
        t[i] = t_env
        ended[i] = end_env
        level_of[i] = k
        if not in_row:
            for j in range(L):
                row[j] = cur[j]


@njit(cache=True)
def vec_reset(lvs, lv_len, inits, st_len, n_act, level_of, rows, states, mask, want_mask, prog, t):
    """Reset the envs listed in ``rows`` in place (as vec_step's reset_now)."""
    for r in range(rows.shape[0]):
        i = rows[r]
        k = level_of[i]
        prog[i] = _reset_row(lvs[k, :lv_len[k]], inits[k], st_len[k], states[i], mask[i], n_act[k], want_mask)
        t[i] = 0


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
def env_step_mask(lv, state, scratch, mask, action, out):
    """One step in place: state <- successor (if accepted). When the state changed (code OK)
    out[0] <- P, out[1] <- solved and mask <- its legal actions; otherwise out and mask stay
    as they are (they describe the unchanged state). Returns the code."""
    c = step_into(lv, state, scratch, action)
    if c == 0:
        for j in range(state.shape[0]):
            state[j] = scratch[j]
        out[0] = progress(lv, state)
        out[1] = 1.0 if is_solved(lv, state) else 0.0
        legal_into(lv, state, mask)
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
