"""The agents that play a dataset's episodes, with randomised variety on request.

Any agent of ``longpuzzle eval --agent`` plays (solver, greedy, random, random_anywhere, a
FILE.py). The built-in agents that keep a model of the app (solver, greedy, random) can
also leave their plan now and then, so that the data shows recoveries and not only
perfect play:

    detours    the probability, at each board step, of playing a random legal move that the
               plan did not ask for (the solver then mends its plan where it can: the plan
               without that move, the plan as it was, or the move undone and then the plan,
               the shortest that still solves; else it plans again from where it is; in
               games with dead ends this can cost a restart)
    restarts   the probability, at each board step of a level with moves on it, of pressing
               the level's Restart control (the plan starts again from the initial board)
    gestures   "runs": the agent's own gestures (the solver plays a run of moves in one
               press where the screen allows, e.g. a whole Color Connect route in one drag
               through its corners); "moves": one gesture per move, which every model
               convention in schema.CONVENTIONS can express

Every draw comes from the episode's seed, so an episode is reproducible. After each
``act`` the agent's ``last_variety`` is "detour", "restart" or None (the row's
``variety`` column).
"""

from __future__ import annotations

import random

from longpuzzle.agents.base import BaseAgent
from longpuzzle.agents.registry import load_agent
from longpuzzle.agents.scripted import AppModelAgent
from longpuzzle.agents.datasets.shards import DatasetError

GESTURES = ("runs", "moves")
_CLASSES: dict[type, type] = {}


def _varied(cls: type) -> type:
    """``cls`` (a AppModelAgent) with detours, restarts and per-move gestures."""
    if cls in _CLASSES:
        return _CLASSES[cls]

    class Varied(cls):
        detours = 0.0
        restarts = 0.0
        per_move = False
        last_variety = None

        def act(self, obs):
            self.last_variety = None
            return super().act(obs)

        def gesture(self, obs):
            s = self.model.session
            r = self._variety_rng
            if self.restarts and s.moves and r.random() < self.restarts:
                self.plan = []
                self.last_variety = "restart"
                return None                        # AppModelAgent.act presses Restart
            if self.detours and r.random() < self.detours:
                legal = list(s.puzzle.legal_moves(s.level, s.state))
                if legal:
                    move = r.choice(legal)
                    self.leave_plan(move)
                    self.last_variety = "detour"
                    return self.model.gesture_for(move)
            if self.per_move:
                return AppModelAgent.gesture(self, obs)      # choose() one move, one gesture
            return super().gesture(obs)

    Varied.__name__ = Varied.__qualname__ = f"Varied{cls.__name__}"
    _CLASSES[cls] = Varied
    return Varied


def make_agent(name: str, *, style: str = "2d", seed: int = 0, detours: float = 0.0, restarts: float = 0.0,
               gestures: str = "runs", catalog=None) -> BaseAgent:
    """The agent of one episode (module doc), on the levels of ``catalog``."""
    for what, p in (("detours", detours), ("restarts", restarts)):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise DatasetError(f"{what} must be a probability between 0 and 1, not {p!r}")
    if gestures not in GESTURES:
        raise DatasetError(f"gestures must be {' or '.join(GESTURES)}, not {gestures!r}")
    agent = load_agent(name, style=style, seed=seed, catalog=catalog)
    if not (detours or restarts or gestures == "moves"):
        return agent
    if not isinstance(agent, AppModelAgent):
        raise DatasetError(f"detours, restarts and gestures 'moves' need an agent that keeps a model of the app "
                           f"(solver, greedy, random), not {name!r}")
    agent.__class__ = _varied(type(agent))
    agent.detours, agent.restarts, agent.per_move = float(detours), float(restarts), gestures == "moves"
    agent._variety_rng = random.Random(f"variety:{seed}")
    return agent
