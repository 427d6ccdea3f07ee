"""The pixel mode of a game: the benchmark's own interface on one level at a time.

    env = gymnasium.make("longpuzzle/MazePaint-v0", mode="pixels", level="maze_paint/hard/3",
                         style="3d", scale=0.5)
    frame, info = env.reset(seed=0)
    frame, reward, terminated, truncated, info = env.step({"type": "swipe", "direction": "left"})

Each episode launches its level directly (as the original repository's level protocol does:
no menus, the completion card offers only "Replay"). Frames, actions and the public
``info["status"]`` are those of agents/envs/screen.py; ``level=`` takes every level source of
agents/envs/levels.py. Reward: ``"progress"`` the change of the level's P (a restart through the
HUD gives it back), ``"sparse"`` 1 on the solving action, ``"oracle"`` the dense reward from
the extra cost of the action's moves (agents/envs/oracle_signal.py; an undo or a restart is no
move and gets 0, as ``analyze --oracle`` counts). ``terminated`` when the level is
solved; ``truncated`` by the registration's TimeLimit (the benchmark's per-game step limit,
counted in GUI actions).

Extra ``info``: ``level_index`` (in ``env.unwrapped.levels``, -1 for a sampler's level),
``moves`` (moves the rules accepted this episode); with ``oracle=True``, ``oracle``: what
the exact solvers know of the level's state (as in the rules env).
"""

from __future__ import annotations

from typing import Any

from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Suite
from longpuzzle.agents.envs.levels import LevelSource
from longpuzzle.agents.envs.screen import ScreenEnv


class PixelEnv(ScreenEnv):
    def __init__(self, level: Any = None, *, game: str | None = None, style: str = "2d", scale: float = 1.0,
                 reward: str = "progress", order: str = "random", space_levels: Any = None,
                 render_mode: str | None = None, frames_per_move: int = 0, catalog: Any = None,
                 lang: str = "en", oracle: bool = False):
        super().__init__(style=style, scale=scale, reward=reward, render_mode=render_mode,
                         frames_per_move=frames_per_move, lang=lang)
        self.source = LevelSource(level, game=game, order=order, space_levels=space_levels, catalog=catalog)
        self.game = self.source.game
        if getattr(get_puzzle(self.game), "ui", None) is None:
            raise ValueError(f"{get_puzzle(self.game).title} has no screen (its puzzle class has no `ui`); "
                             "use mode='rules'")
        self.level = None
        self.level_index = -1
        self._p = 0.0
        self.want_oracle = bool(oracle)
        self._oracle = None
        if oracle or reward == "oracle":
            from longpuzzle.agents.envs.oracle_signal import OracleTracker
            self._oracle = OracleTracker()

    @property
    def levels(self):
        return self.source.levels

    def _start(self, options: dict | None) -> dict:
        if options and options.get("level") is not None:
            level, idx = self.source.pick(options["level"])
        else:
            level, idx = self.source.draw(self.np_random)
        suite = Suite("home", style=self.style, scale=self.scale, direct=True, lang=self.lang,
                      catalog=self.source.catalog)
        eff = suite.open_level(level)
        if eff["effect"] == "unavailable":
            raise ValueError(eff["message"])
        self.suite, self.level, self.level_index = suite, level, idx
        self._p = suite.session.progress
        extra = {"level_index": idx, "moves": 0}
        if self._oracle is not None:
            self._oracle.start(level, suite.session.state)
            if self.want_oracle:
                extra["oracle"] = self._oracle.info(suite.session.state, level.n_actions)
        return extra

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.source.restart()
        return super().reset(seed=seed, options=options)

    def _score(self, effects: list[dict]) -> tuple[float, bool, dict]:
        s = self.suite.session
        p = s.progress
        solved = self.suite.complete
        if self.reward_mode == "sparse":
            reward = 1.0 if solved and any(e.get("effect") == "move" for e in effects) else 0.0
        else:
            reward = p - self._p
        if self._oracle is not None:
            n = sum(e.get("effect") == "move" for e in effects)
            r = self._oracle.reward(s.state, n, solved)
            if self.reward_mode == "oracle":
                reward = r
        self._p = p
        extra = {"level_index": self.level_index, "moves": s.counters.moves}
        if self.want_oracle:
            extra["oracle"] = self._oracle.info(s.state, self.level.n_actions)
        return reward, solved, extra
