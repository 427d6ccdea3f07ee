"""``Suite-v0``: the paper's setting. Each episode starts on the home screen with one
objective ("Complete all levels of Maze Paint at hard difficulty."); the agent navigates,
plays the objective's levels in order, advances and restarts through the game's own
controls, all by GUI actions on frames (agents/envs/screen.py).

    env = gymnasium.make("longpuzzle/Suite-v0", objective="maze_paint/hard")
    frame, info = env.reset(seed=0)       # info["instruction"]: the objective's instruction

``objective=``: an objective id ("game/difficulty"), or a list of them (one is drawn per
episode from the env's np_random, or taken in turn with ``order="cycle"``), or
``reset(options={"objective": ...})``. Reward, over the objective's target levels l:
``"progress"`` the change of sum_l b(l), where b(l) is the best P seen on l (1 once won, 0
unvisited: the paper's fine-grained progress, times the number of levels), so the return is
FGP x |levels|; ``"sparse"`` 1 for each target level won the first time. Progress on any
other level earns nothing (as the paper's setting-mismatch rule says). ``terminated`` when
every target level has been won; ``truncated`` by the registration's TimeLimit.

``catalog=`` (a snapshot name, NAME@VERSION, a snapshot file, "builtin" or a Catalog): the
catalogue whose objectives and menus the app shows (default: the one in use).

Extra ``info``: ``objective``, ``instruction`` (at reset), ``levels_won`` (target levels won
so far), ``fgp`` (the paper's FGP of this episode so far, in [0, 1]), ``mismatch`` (gameplay
of another game or difficulty was seen).
"""

from __future__ import annotations

from typing import Any

from longpuzzle.engine.catalog import Catalog, Objective
from longpuzzle.engine.suite import Suite
from longpuzzle.agents.envs.levels import ORDERS, LevelSourceError, resolve_catalog
from longpuzzle.agents.envs.screen import ScreenEnv

DEFAULT_OBJECTIVE = "maze_paint/easy"


def _objective(spec: Any, catalog: Catalog) -> Objective:
    if isinstance(spec, Objective):
        return spec
    if not isinstance(spec, str):
        raise LevelSourceError(f"an objective is an id like 'maze_paint/hard', not {spec!r}")
    return catalog.objective(spec.strip())


class SuiteEnv(ScreenEnv):
    def __init__(self, objective: Any = DEFAULT_OBJECTIVE, *, style: str = "2d", scale: float = 1.0,
                 reward: str = "progress", order: str = "random", render_mode: str | None = None,
                 frames_per_move: int = 0, catalog: Any = None, lang: str = "en"):
        if reward == "oracle":          # its episodes cross menus and levels: no one level's oracle
            raise ValueError("reward='oracle' is the level envs' (rules, pixels), not the Suite's; "
                             "use 'progress' or 'sparse'")
        super().__init__(style=style, scale=scale, reward=reward, render_mode=render_mode,
                         frames_per_move=frames_per_move, lang=lang)
        # the catalogue whose menus the app shows (default: the built-in one)
        self.catalog = resolve_catalog(catalog)
        specs = objective if isinstance(objective, (list, tuple)) else [objective]
        self.objectives = tuple(_objective(o, self.catalog) for o in specs)
        if not self.objectives:
            raise LevelSourceError("give at least one objective")
        if order not in ORDERS:
            raise LevelSourceError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
        self.order = order
        self._pos = 0
        self.objective: Objective | None = None
        self._best: dict[str, float] = {}
        self._won: set[str] = set()
        self._mismatch = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._pos = 0
        return super().reset(seed=seed, options=options)

    def _start(self, options: dict | None) -> dict:
        from longpuzzle.agents.base import instruction_for
        if options and options.get("objective") is not None:
            obj = _objective(options["objective"], self.catalog)
        elif len(self.objectives) == 1:
            obj = self.objectives[0]
        elif self.order == "random":
            obj = self.objectives[int(self.np_random.integers(len(self.objectives)))]
        else:
            obj = self.objectives[self._pos % len(self.objectives)]
            self._pos += 1
        self.objective = obj
        self.suite = Suite("home", style=self.style, scale=self.scale, lang=self.lang, catalog=self.catalog)
        self._best = dict.fromkeys(obj.level_ids, 0.0)
        self._won = set()
        self._mismatch = False
        return {"objective": obj.id, "instruction": instruction_for(obj.game, obj.difficulty), **self._progress()}

    def _progress(self) -> dict:
        n = len(self._best)
        return {"objective": self.objective.id, "levels_won": len(self._won),
                "fgp": sum(self._best.values()) / n, "mismatch": self._mismatch}

    def _score(self, effects: list[dict]) -> tuple[float, bool, dict]:
        s = self.suite
        before_b, before_won = sum(self._best.values()), len(self._won)
        if s.screen["name"] == "level" and s.session is not None:
            lvl = s.session.level
            if (lvl.game, lvl.difficulty) != (self.objective.game, self.objective.difficulty):
                self._mismatch = True
            if lvl.id in self._best:
                if s.session.solved:
                    self._won.add(lvl.id)
                    self._best[lvl.id] = 1.0
                else:
                    self._best[lvl.id] = max(self._best[lvl.id], s.session.progress)
        if self.reward_mode == "sparse":
            reward = float(len(self._won) - before_won)
        else:
            reward = sum(self._best.values()) - before_b
        return reward, len(self._won) == len(self._best), self._progress()
