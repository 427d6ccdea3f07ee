"""The compiled batch environment: N rules envs stepped in ONE compiled call per step, as a
real ``gymnasium.vector.VectorEnv`` (what ``make_vec(..., vectorization_mode=
"vector_entry_point")`` returns for every game id; the default vectorization of those ids).

    envs = gymnasium.make_vec("longpuzzle/MazePaint-v0", num_envs=256, level="maze_paint/hard")
    obs, info = envs.reset(seed=0)                       # obs: (256, L) states
    obs, rewards, terminated, truncated, info = envs.step(actions)

Every sub-env is exactly the rules env (agents/envs/rules.py) with the same arguments: the same
spaces, rewards, ``info`` keys (arrays of N with Gymnasium's ``_key`` masks) and level
draws - sub-env i draws its levels from its own generator seeded ``seed + i``, as
SyncVectorEnv seeds its envs, so a seeded run gives the same numbers in every
vectorization mode. Only a finite level source can be compiled (a sampler: use
``vectorization_mode="sync"`` or ``"async"``).

Autoreset (``autoreset_mode=``, also in ``metadata["autoreset_mode"]``):

    NEXT_STEP  (default) a sub-env that ended is reset by the next step (its action is
               ignored; reward 0, code -1)
    SAME_STEP  it is reset in the step that ended it; the ended episode's last observation
               and info are in info["final_obs"] / info["final_info"] (masked by "_final_obs")
    DISABLED   ended sub-envs must be reset with reset(options={"reset_mask": mask})

``max_episode_steps`` truncates (the registration's limit is passed in by make_vec).
Observations and infos are fresh arrays on every call. ``action_mask=False`` skips the
legal-action masks (faster for games whose masks are costly; info then has no
"action_mask" and ``obs_type="dict"`` is not available).

``reward="oracle"`` and ``oracle=True`` (agents/envs/oracle_signal.py) are the rules env's,
sub-env by sub-env (one Oracle per level, shared by every sub-env on it): they read each
state in Python after the compiled step, so they cost the oracle's look-ups, and ``rollout``
does not take them. ``info["oracle"]`` is a dict of arrays of N (``best``: (N, n_actions)).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from longpuzzle.engine.batch import kernels
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.agents.envs.levels import LevelSource, LevelSourceError
from longpuzzle.agents.envs.rollout import ExpertTable, Rollout, rollout_seeds
from longpuzzle.agents.envs.rules import check_reward
from longpuzzle.agents.envs.state_space import StateLayout


def _autoreset_mode(mode: Any) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    for m in AutoresetMode:
        if isinstance(mode, str) and mode.lower().replace("_", "") in (m.value.lower(), m.name.lower().replace("_", "")):
            return m
    raise ValueError(f"autoreset_mode must be one of {', '.join(m.name for m in AutoresetMode)}, not {mode!r}")


class PuzzleVectorEnv(gym.vector.VectorEnv):
    """N rules envs of one game in one compiled call per step (module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, level: Any = None, *, game: str | None = None,
                 reward: str = "progress", obs_type: str = "state", order: str = "random",
                 max_episode_steps: int | None = None, autoreset_mode: Any = AutoresetMode.NEXT_STEP,
                 action_mask: bool = True, render_mode: str | None = None, catalog: Any = None,
                 oracle: bool = False):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, not {num_envs!r}")
        if render_mode is not None:
            raise ValueError("the compiled vector env does not render; use vectorization_mode='sync' "
                             "with render_mode")
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be a positive integer or None, not {max_episode_steps!r}")
        self.source = LevelSource(level, game=game, order=order, catalog=catalog)
        if not self.source.finite:
            raise LevelSourceError("the compiled vector env needs a finite list of levels; for a sampler use "
                                   "gymnasium.make_vec(..., vectorization_mode='sync') or 'async'")
        if obs_type == "dict" and not action_mask:
            raise ValueError("obs_type='dict' holds the action mask: it needs action_mask=True")
        self.num_envs = int(num_envs)
        self.game = self.source.game
        self.puzzle = get_puzzle(self.game)
        self.reward_mode = check_reward(reward)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = None
        self.max_episode_steps = max_episode_steps
        self.want_mask = bool(action_mask)
        levels = self.source.levels
        self.layout = StateLayout(levels, obs_type, len(levels))
        self.single_observation_space = self.layout.observation_space
        self.single_action_space = self.layout.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # the level stack the kernel reads
        n, L, n_act = len(levels), self.layout.length, self.layout.n_actions
        self._lv_len = np.array([lvl.lv.shape[0] for lvl in levels], np.int64)
        self._lvs = np.zeros((n, int(self._lv_len.max())), np.int32)
        self._inits = np.zeros((n, L), self.layout.dtype)
        self._st_len = np.array([lvl.initial.shape[0] for lvl in levels], np.int64)
        self._n_act = np.array([lvl.n_actions for lvl in levels], np.int64)
        for k, lvl in enumerate(levels):
            self._lvs[k, :lvl.lv.shape[0]] = lvl.lv
            self._inits[k, :lvl.initial.shape[0]] = lvl.initial
        self._ids = np.array([lvl.id for lvl in levels], dtype=object)
        self._k = kernels(self.puzzle)
        N = self.num_envs
        self._states = np.zeros((N, L), self.layout.dtype)
        self._scratch = np.zeros(L, self.layout.dtype)
        self._masks = np.zeros((N, n_act if self.want_mask else 1), np.int8)
        self._level_of = np.zeros(N, np.int64)
        self._prog = np.zeros(N, np.float64)
        self._t = np.zeros(N, np.int64)
        self._ended = np.zeros(N, np.bool_)
        self._rngs: list[np.random.Generator] = [seeding.np_random()[0] for _ in range(N)]
        self._pos = np.zeros(N, np.int64)           # per sub-env position of order="cycle"
        # Upcoming level draws of each sub-env, drawn ahead from its generator (or cycle) in
        # order, so a compiled rollout can reset envs itself: row i's entries qpos[i] ..
        # qlen[i]-1 are env i's next levels. Drawing ahead changes no level an env plays.
        self._queue = np.zeros((N, 0), np.int64)
        self._qpos = np.zeros(N, np.int64)
        self._qlen = np.zeros(N, np.int64)
        self._act_rng = rollout_seeds(None, N)        # the rollout's random policy, per env
        self._lmask = np.zeros(n_act, np.int8)          # rollout scratch: a legal mask
        self._no_obs = np.zeros((1, 1, 1), self.layout.dtype)
        self._no_table = (np.zeros((0, L), self.layout.dtype), np.zeros(0, np.int64), np.zeros(n + 1, np.int64))
        self._sparse = self.reward_mode == "sparse"
        self.want_oracle = bool(oracle)
        self._oracles = None                          # one OracleTracker per sub-env
        if self.want_oracle or self.reward_mode == "oracle":
            from longpuzzle.agents.envs.oracle_signal import OracleTracker
            self._oracles = [OracleTracker() for _ in range(N)]
        self._max = 0 if max_episode_steps is None else int(max_episode_steps)
        self._reset_rows(np.arange(N))               # a valid state before the first reset
        self._oracle_start(np.arange(N))

    @property
    def levels(self):
        return self.source.levels

    # ---- gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        N = self.num_envs
        super().reset(seed=seed if seed is None or isinstance(seed, (int, np.integer)) else int(seed[0]))
        if seed is not None:
            seeds = [seed + i for i in range(N)] if isinstance(seed, (int, np.integer)) else list(seed)
            if len(seeds) != N:
                raise ValueError(f"give one seed or {N} seeds, not {len(seeds)}")
            self._rngs = [seeding.np_random(s)[0] for s in seeds]
            self._pos[:] = 0
            self._qpos[:] = 0
            self._qlen[:] = 0
            self._act_rng = rollout_seeds(seeds, N)
        options = options or {}
        mask = options.get("reset_mask")
        if mask is None:
            rows = np.arange(N)
        else:
            mask = np.asarray(mask, dtype=np.bool_)
            if mask.shape != (N,):
                raise ValueError(f"reset_mask must be {N} booleans")
            rows = np.flatnonzero(mask)
        forced = options.get("level")
        if forced is not None:
            lvl, idx = self.source.pick(forced)
            if idx < 0:
                raise LevelSourceError(f"{lvl.id} is not one of this vector env's levels")
        self._reset_rows(rows, None if forced is None else idx)
        self._ended[rows] = False
        self._oracle_start(rows)
        return self._obs(), self._info(np.full(N, -1, np.int64))

    def step(self, actions):
        N = self.num_envs
        acts = actions
        # what action_space.sample() gives (contiguous int64 of shape (N,)) goes straight through
        if not (type(acts) is np.ndarray and acts.dtype == np.int64 and acts.shape == (N,)
                and acts.flags.c_contiguous):
            acts = np.asarray(actions)
            if acts.shape != (N,):
                raise ValueError(f"need {N} actions, got shape {acts.shape}")
            if acts.dtype.kind not in "iu" and (acts.dtype.kind != "f" or not np.array_equal(acts, np.round(acts))):
                raise ValueError(f"actions must be integers, not {acts.dtype}")
            acts = np.ascontiguousarray(acts, dtype=np.int64)
        # the range: two numpy reductions cost more than Python's min / max over a few envs
        if N <= 32:
            vals = acts.tolist()
            lo, hi = min(vals), max(vals)
        else:
            lo, hi = acts.min(), acts.max()
        if lo < 0 or hi >= self.layout.n_actions:
            raise ValueError(f"actions must be in 0..{self.layout.n_actions - 1}")
        mode = self.autoreset_mode
        if mode is AutoresetMode.NEXT_STEP:
            reset_now = self._ended
            if reset_now.any():
                self._draw_levels(np.flatnonzero(reset_now))
        else:
            if mode is AutoresetMode.DISABLED and self._ended.any():
                raise gym.error.ResetNeeded(
                    f"sub-envs {np.flatnonzero(self._ended).tolist()} ended; with autoreset DISABLED reset them "
                    "with reset(options={'reset_mask': mask}) first")
            reset_now = np.zeros(N, np.bool_)
        codes = np.empty(N, np.int64)
        rewards = np.empty(N, np.float64)
        solved = np.empty(N, np.bool_)
        trunc = np.empty(N, np.bool_)
        self._k.vec_step(self._lvs, self._lv_len, self._inits, self._st_len, self._n_act, self._level_of,
                         self._states, self._scratch, self._masks, self.want_mask, acts, reset_now,
                         self._prog, self._t, self._max, self._sparse, codes, rewards, solved, trunc)
        if self._oracles is not None:
            self._oracle_step(reset_now, codes, solved, rewards)
        ended = solved | trunc
        if mode is AutoresetMode.SAME_STEP and ended.any():
            rows = np.flatnonzero(ended)
            final_obs = np.full(N, None, dtype=object)
            last = self._obs()
            for i in rows:
                final_obs[i] = last[i] if self.layout.obs_type == "state" else {k: v[i] for k, v in last.items()}
            final_info = self._info(codes, rows)
            self._draw_levels(rows)
            self._reset_rows(rows, draw=False)
            self._oracle_start(rows)
            obs = self._obs()
            info = self._info(np.where(ended, -1, codes))
            info["final_obs"], info["_final_obs"] = final_obs, ended.copy()
            info["final_info"], info["_final_info"] = final_info, ended.copy()
            self._ended = np.zeros(N, np.bool_)
            return obs, rewards, solved, trunc, info
        self._ended = ended if mode is not AutoresetMode.SAME_STEP else np.zeros(N, np.bool_)
        return self._obs(), rewards, solved, trunc, self._info(codes)

    def rollout(self, n_steps: int, policy: Any = "random", *, seed: Any = None,
                observations: bool = True, out: Rollout | None = None) -> Rollout:
        """``n_steps`` steps of every sub-env in ONE compiled call, each step's action chosen
        inside it: exactly what ``n_steps`` calls of ``step`` would do with those actions
        (agents/envs/rollout.py). ``policy``: "random" (uniform over the legal moves of each state,
        from a splitmix64 stream per sub-env: seeded by ``seed`` here, else by reset's seed,
        else at random; it continues from one rollout to the next), an int array (N,
        n_steps) of actions, or an ExpertTable (its move where it has one, else random).
        ``observations=False`` records no states (the compact form). ``out``: an earlier
        Rollout of the same shape to write into (its arrays are overwritten and returned;
        saves allocating fresh memory, most of the cost of recording states at large N).
        Needs autoreset NEXT_STEP."""
        if self.autoreset_mode is not AutoresetMode.NEXT_STEP:
            raise ValueError("rollout runs with autoreset_mode NEXT_STEP only")
        if self._oracles is not None:
            raise ValueError("rollout chooses and grades its moves in compiled code: reward='oracle' and "
                             "oracle=True are for step(); annotate a rollout's states with the oracle after")
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer, not {n_steps!r}")
        N, T = self.num_envs, int(n_steps)
        given = np.zeros((1, 1), np.int64)
        tab = self._no_table
        if isinstance(policy, str):
            if policy != "random":
                raise ValueError(f"policy must be 'random', an action array or an ExpertTable, not {policy!r}")
            code = 1
        elif isinstance(policy, ExpertTable):
            code = 2
            tab = policy.arrays(self.source.levels, self.layout.length, self.layout.dtype)
        else:
            given = np.asarray(policy)
            if given.shape != (N, T):
                raise ValueError(f"given actions must have shape ({N}, {T}), not {given.shape}")
            if given.dtype.kind not in "iu":
                raise ValueError(f"actions must be integers, not {given.dtype}")
            given = np.ascontiguousarray(given, dtype=np.int64)
            if given.min() < 0 or given.max() >= self.layout.n_actions:
                raise ValueError(f"actions must be in 0..{self.layout.n_actions - 1}")
            code = 0
        if seed is not None:
            self._act_rng = rollout_seeds(seed, N)
        draw = len(self.source.levels) > 1
        if draw:
            self._fill_queue(np.arange(N), T)
        L = self.layout.length
        if out is not None:
            want = self._rollout_like(N, T, L, observations)
            for f, (shape, dtype) in want.items():
                arr = getattr(out, f)
                if arr is None or arr.shape != shape or arr.dtype != dtype or not arr.flags.c_contiguous:
                    raise ValueError(f"out.{f} must be a contiguous {np.dtype(dtype).name} array of shape {shape}")
        else:
            out = Rollout(observations=np.empty((N, T, L), self.layout.dtype) if observations else None,
                          actions=np.empty((N, T), np.int64), rewards=np.empty((N, T), np.float64),
                          terminated=np.empty((N, T), np.bool_), truncated=np.empty((N, T), np.bool_),
                          codes=np.empty((N, T), np.int64), level_index=np.empty((N, T), np.int64))
        self._k.vec_rollout(self._lvs, self._lv_len, self._inits, self._st_len, self._n_act, self._level_of,
                            self._states, self._scratch, self._masks, self.want_mask, self._prog, self._t,
                            self._max, self._sparse, self._ended, self._queue, self._qpos, draw, code, given,
                            self._act_rng, tab[0], tab[1], tab[2], self._lmask, observations,
                            out.observations if observations else self._no_obs, out.actions, out.rewards,
                            out.terminated, out.truncated, out.codes, out.level_index)
        return out

    def _rollout_like(self, N, T, L, observations):
        """Shape and dtype of each array a rollout writes."""
        want = {"actions": ((N, T), np.int64), "rewards": ((N, T), np.float64), "terminated": ((N, T), np.bool_),
                "truncated": ((N, T), np.bool_), "codes": ((N, T), np.int64), "level_index": ((N, T), np.int64)}
        if observations:
            want["observations"] = ((N, T, L), np.dtype(self.layout.dtype))
        return want

    # ---- helpers ----------------------------------------------------------------------
    def _draw_levels(self, rows: np.ndarray, forced: int | None = None) -> None:
        n = len(self.source.levels)
        if forced is not None:
            self._level_of[rows] = forced
        elif n > 1:
            rows = np.asarray(rows, dtype=np.int64)
            self._fill_queue(rows, 1)
            self._level_of[rows] = self._queue[rows, self._qpos[rows]]
            self._qpos[rows] += 1

    def _fill_queue(self, rows: np.ndarray, need: int) -> None:
        """At least ``need`` upcoming level draws queued for each env of ``rows``."""
        n = len(self.source.levels)
        short = rows[self._qlen[rows] - self._qpos[rows] < need]
        if not len(short):
            return
        width = max(self._queue.shape[1], 2 * need, 16)
        if width > self._queue.shape[1]:
            grown = np.zeros((self.num_envs, width), np.int64)
            grown[:, :self._queue.shape[1]] = self._queue
            self._queue = grown
        for i in short:
            left = self._queue[i, self._qpos[i]:self._qlen[i]].copy()
            more = width - len(left)
            if self.source.order == "random":
                new = self._rngs[i].integers(n, size=more)
            else:
                new = (self._pos[i] + np.arange(more)) % n
                self._pos[i] += more
            self._queue[i, :len(left)] = left
            self._queue[i, len(left):] = new
            self._qpos[i], self._qlen[i] = 0, width

    def _reset_rows(self, rows: np.ndarray, forced: int | None = None, draw: bool = True) -> None:
        if draw:
            self._draw_levels(rows, forced)
        self._k.vec_reset(self._lvs, self._lv_len, self._inits, self._st_len, self._n_act, self._level_of,
                          np.ascontiguousarray(rows, dtype=np.int64), self._states, self._masks, self.want_mask,
                          self._prog, self._t)

    def _level_state(self, i: int) -> np.ndarray:
        """Sub-env i's state without the padding of the batch."""
        return self._states[i, :self._st_len[self._level_of[i]]]

    def _oracle_start(self, rows) -> None:
        if self._oracles is not None:
            for i in rows:
                self._oracles[i].start(self.source.levels[self._level_of[i]], self._level_state(i))

    def _oracle_step(self, reset_now, codes, solved, rewards) -> None:
        """After a compiled step: each sub-env's oracle follows its new state (a reset one
        starts again); reward="oracle" writes the rewards (as the rules env's)."""
        oracle_reward = self.reward_mode == "oracle"
        for i in range(self.num_envs):
            if reset_now[i]:
                self._oracle_start((i,))
                continue
            c = int(codes[i])
            r = self._oracles[i].reward(self._level_state(i), 1 if c <= 1 else 0, bool(solved[i]) and c == 0)
            if oracle_reward:
                rewards[i] = r

    def _obs(self):
        state = self._states.copy()
        if self.layout.obs_type == "state":
            return state
        obs = {"state": state, "action_mask": self._masks.copy()}
        if self.layout.with_level:
            obs["level"] = self._level_of.copy()
        return obs

    def _info(self, codes: np.ndarray, rows: np.ndarray | None = None) -> dict:
        """Infos of every sub-env (or of ``rows`` only: the others masked out)."""
        N = self.num_envs
        info = {"level": self._ids[self._level_of], "level_index": self._level_of.copy(), "code": codes.copy(),
                "P": self._prog.copy()}
        if self.want_mask:
            info["action_mask"] = self._masks.copy()
        if self.want_oracle:
            info["oracle"] = self._oracle_info(rows)
        # the "_key" flags: one allocation, a row of it each (separate arrays, no shared elements)
        present = np.ones((len(info), N), np.bool_) if rows is None else np.zeros((len(info), N), np.bool_)
        if rows is not None:
            present[:, rows] = True
        for j, k in enumerate(list(info)):
            info["_" + k] = present[j]
        return info


    def _oracle_info(self, rows: np.ndarray | None = None) -> dict:
        """info["oracle"] of every sub-env (or of ``rows`` only): the rules env's keys, each an
        array of N with its "_key" mask, as Gymnasium batches a nested info dict."""
        N, n = self.num_envs, self.layout.n_actions
        rows = range(N) if rows is None else rows
        out = {"d": np.zeros(N), "lower": np.zeros(N), "upper": np.zeros(N), "exact": np.zeros(N, np.bool_),
               "dead_end": np.zeros(N, np.bool_), "best": np.zeros((N, n), np.int8)}
        present = np.zeros(N, np.bool_)
        for i in rows:
            for k, v in self._oracles[i].info(self._level_state(i), n).items():
                out[k][i] = v
            present[i] = True
        for k in list(out):
            out["_" + k] = present.copy()
        return out


def make_vector_env(num_envs: int = 1, *, game: str, mode: str = "rules", max_episode_steps: int | None = None,
                    **kwargs) -> gym.vector.VectorEnv:
    """The vector entry point of the game ids: the compiled PuzzleVectorEnv in rules mode;
    pixel mode has no compiled batch, so it gives a SyncVectorEnv of pixel envs."""
    if mode == "rules":
        return PuzzleVectorEnv(num_envs, game=game, max_episode_steps=max_episode_steps, **kwargs)
    from longpuzzle.agents.envs.registration import make_game_env
    autoreset = _autoreset_mode(kwargs.pop("autoreset_mode", AutoresetMode.NEXT_STEP))

    def one():
        env = make_game_env(game=game, mode=mode, **kwargs)
        if max_episode_steps is not None:
            env = gym.wrappers.TimeLimit(env, max_episode_steps)
        return env
    return gym.vector.SyncVectorEnv([one for _ in range(num_envs)], autoreset_mode=autoreset)
