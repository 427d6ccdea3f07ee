"""The rules mode: one game's rules state machine as a Gymnasium environment.

    env = gymnasium.make("longpuzzle/MazePaint-v0", level="maze_paint/hard/3")
    obs, info = env.reset(seed=0)
    action = env.action_space.sample(mask=info["action_mask"])
    obs, reward, terminated, truncated, info = env.step(action)

Observation: the state array (longpuzzle/agents/envs/state_space.py: a Box with the game's true
per-element bounds, or a Dict with ``obs_type="dict"``). Actions: ``Discrete(n_actions)``,
the game's action numbers (their meaning is in the game's module; ``env.unwrapped.describe
(action)`` gives the move text). An action the rules refuse leaves the state as it was
(reward 0, ``info["code"] >= 2``).

Reward: ``"progress"`` (default) the change of the benchmark's progress potential P, so an
episode's return is P(end) - P(start) and solving always collects the rest up to 1;
``"sparse"`` 1 on the solving step, else 0; ``"oracle"`` the dense reward from each move's
extra cost e(s, a) = 1 + d(s') - d(s) (agents/envs/oracle_signal.py has the formula:
-e / max(1, d(s0)) plus 1 on the win, -1 for a fatal move, so an optimal solution returns
exactly 1). ``terminated`` when the level is solved;
``truncated`` only by the TimeLimit of the registration (``max_episode_steps``, the
benchmark's per-game step limit; change it with ``gymnasium.make(..., max_episode_steps=N)``).

``info`` (reset and every step; fresh objects each call)::

    level         the level's id              level_index  its index in env.unwrapped.levels
                                                           (-1 for a sampler's level)
    code          the move's result: 0 accepted, 1 accepted no-op, >= 2 rejected (-1 at reset)
    P             the progress potential of the new state, in [0, 1]
    action_mask   int8 array of n_actions: 1 = accepted and changes the state
                  (``env.action_space.sample(mask=info["action_mask"])``); left out with
                  ``action_mask=False``, which saves finding the legal actions every step
    oracle        with ``oracle=True``: what the exact solvers know of the new state - d, its
                  bounds, dead end, the best moves as a mask (agents/envs/oracle_signal.py)

Render modes: ``"rgb_array"`` and ``"human"`` draw the level's screen showing the state
(``style``, ``scale`` as in pixel mode), ``"ansi"`` the game's text board.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from longpuzzle.engine.env import PuzzleEnv
from longpuzzle.engine.geometry import check_scale, check_style
from longpuzzle.engine.protocol import OK, Level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.agents.envs.levels import LevelSource
from longpuzzle.agents.envs.state_space import StateLayout

REWARDS = ("progress", "sparse", "oracle")


def check_reward(reward: str) -> str:
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
    return reward


def check_render_mode(env: gym.Env, render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in env.metadata["render_modes"]:
        raise ValueError(f"render_mode must be None or one of {', '.join(env.metadata['render_modes'])}, "
                         f"not {render_mode!r}")
    return render_mode


class LevelView:
    """The level's screen kept in step with a rules env (for rendering): a direct-launch
    Suite whose session plays the same accepted actions (kept in ``played``, so a pickled
    env draws the same screen again)."""

    def __init__(self, style: str, scale: float, catalog=None):
        self.style, self.scale, self.catalog = style, scale, catalog
        self.suite = None
        self.played: list[int] = []

    def reset(self, level: Level) -> None:
        from longpuzzle.engine.suite import Suite
        self.suite = Suite("home", style=self.style, scale=self.scale, direct=True, catalog=self.catalog)
        eff = self.suite.open_level(level)
        if eff["effect"] == "unavailable":
            raise ValueError(eff["message"])
        self.played = []

    def play(self, action: int) -> None:
        self.suite.session.apply_action(action)
        self.played.append(action)

    def frame(self) -> np.ndarray:
        from longpuzzle.render.frame import renderer
        return renderer(self.style, self.scale).render(self.suite)

    def __getstate__(self) -> dict:
        return {"style": self.style, "scale": self.scale, "level": self.suite.level if self.suite else None,
                "played": list(self.played), "catalog": self.catalog}

    def __setstate__(self, d: dict) -> None:
        self.style, self.scale, self.suite, self.played = d["style"], d["scale"], None, []
        self.catalog = d["catalog"]
        if d["level"] is not None:
            self.reset(d["level"])
            for a in d["played"]:
                self.play(a)


class RulesEnv(gym.Env):
    """One game's rules as a Gymnasium env (module docstring). Constructible from plain
    keyword arguments (a config dict), picklable (its compiled kernels are found again
    after unpickling)."""

    metadata = {"render_modes": ["rgb_array", "human", "ansi"], "render_fps": 30}

    def __init__(self, level: Any = None, *, game: str | None = None, reward: str = "progress",
                 obs_type: str = "state", order: str = "random", space_levels: Any = None,
                 render_mode: str | None = None, style: str = "2d", scale: float = 1.0,
                 action_mask: bool = True, catalog: Any = None, oracle: bool = False):
        if obs_type == "dict" and not action_mask:
            raise ValueError("obs_type='dict' holds the action mask: it needs action_mask=True")
        self.want_mask = bool(action_mask)
        self.source = LevelSource(level, game=game, order=order, space_levels=space_levels, catalog=catalog)
        self.game = self.source.game
        self.puzzle = get_puzzle(self.game)
        self.reward_mode = check_reward(reward)
        self._sparse = reward == "sparse"
        self.want_oracle = bool(oracle)
        # the oracle's state along the episode (reward="oracle" or oracle=True only)
        self._oracle = None
        if reward == "oracle" or oracle:
            from longpuzzle.agents.envs.oracle_signal import OracleTracker
            self._oracle = OracleTracker()
        self.render_mode = check_render_mode(self, render_mode)
        self.style, self.scale = check_style(style), check_scale(scale)
        n_levels = len(self.source.levels) if self.source.finite else 1
        self.layout = StateLayout(self.source.space_levels, obs_type, n_levels)
        self.observation_space = self.layout.observation_space
        self.action_space = self.layout.action_space
        self._plain = obs_type == "state"
        self._n = self.layout.n_actions
        self._fast = False
        self._cores: dict[int, PuzzleEnv] = {}
        self._core: PuzzleEnv | None = None
        self.level: Level | None = None
        self.level_index = -1
        self._view: LevelView | None = None
        self._viewer = None

    @property
    def levels(self) -> tuple[Level, ...] | None:
        """The levels of a finite source (``info["level_index"]`` indexes them)."""
        return self.source.levels

    # ---- gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.source.restart()
        if options and options.get("level") is not None:
            level, idx = self.source.pick(options["level"])
        else:
            level, idx = self.source.draw(self.np_random)
        core = self._cores.get(idx) if idx >= 0 else None
        if core is None or core.level is not level:
            self.layout.check(level)
            core = PuzzleEnv(level, action_mask=self.want_mask)
            if idx >= 0:
                self._cores[idx] = core
        else:
            core.reset()
        self._core, self.level, self.level_index = core, level, idx
        self._id = level.id
        if self._oracle is not None:
            self._oracle.start(level, core.state)
        self._fast = (not self.want_oracle and self._plain and level.initial.shape[0] == self.layout.length
                      and level.n_actions == self.layout.n_actions)
        if self._view is not None or self.render_mode in ("rgb_array", "human"):
            self._view = self._view or LevelView(self.style, self.scale, self.source.catalog)
            self._view.reset(level)
        info = self._info(-1)
        if self.render_mode == "human":
            self.render()
        return self._obs(), info

    def step(self, action):
        core = self._core
        if core is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = action if type(action) is int else self._action_int(action)
        if not 0 <= a < self._n:
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        p0 = core.p
        code = core.advance(a)
        if self._sparse:
            reward = 1.0 if core.solved and code == OK else 0.0
        elif self._oracle is not None and self.reward_mode == "oracle":
            reward = self._oracle.reward(core.state, 1 if code <= 1 else 0, core.solved and code == OK)
        else:
            reward = core.p - p0
        if self._view is not None:
            if code <= 1:
                self._view.play(a)
            if self.render_mode == "human":
                self.render()
        if self._fast:                   # plain state of the full length: the common case, inlined
            info = {"level": self._id, "level_index": self.level_index, "code": code, "P": core.p}
            if self.want_mask:           # (masks off take this path too: it was 0.87x with masks)
                info["action_mask"] = core.mask.copy()
            return core.state.copy(), reward, core.solved, False, info
        return self._obs(), reward, core.solved, False, self._info(code)

    def _action_int(self, action) -> int:
        if isinstance(action, (bool, np.bool_)):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"action {action!r} is not in {self.action_space}") from None
        if a != action:
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        return a

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() without a render_mode; make the env with render_mode='rgb_array'")
            return None
        if self._core is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "ansi":
            return self.puzzle.render_text(self.level, self._core.state)
        frame = self._view.frame()
        if self.render_mode == "rgb_array":
            return frame
        if self._viewer is None:
            from longpuzzle.agents.envs.viewer import Viewer
            self._viewer = Viewer((frame.shape[1], frame.shape[0]), self.metadata["render_fps"])
        self._viewer.show(frame)
        return None

    def close(self):
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    # ---- helpers ----------------------------------------------------------------------
    def _obs(self):
        core = self._core
        state = self.layout.pad_state(core.state)
        if state is core.state:
            state = state.copy()
        mask = self.layout.pad_mask(core.mask)
        return self.layout.observation(state, mask.copy() if mask is core.mask else mask, self.level_index)

    def _info(self, code: int) -> dict:
        core = self._core
        info = {"level": self._id, "level_index": self.level_index, "code": code, "P": core.p}
        if self.want_mask:
            info["action_mask"] = self.layout.pad_mask(core.mask).copy()
        if self.want_oracle:
            info["oracle"] = self._oracle.info(core.state, self.layout.n_actions)
        return info

    def describe(self, action: int) -> str:
        """The move text of an action on the current level."""
        return self.puzzle.format_move(self.level, int(action))

    @property
    def state(self) -> np.ndarray | None:
        """The current rules state (unpadded; a read-only view)."""
        if self._core is None:
            return None
        v = self._core.state.view()
        v.setflags(write=False)
        return v

    def __getstate__(self) -> dict:
        d = dict(self.__dict__)
        d["_viewer"] = None                      # a window stays behind
        return d
