"""Shared by the play tests: the GUI actions a person would make to enter an objective from the
home screen and win its first levels (the solver agent's, from its own model of the app), and
to win one level launched directly."""

from __future__ import annotations

import numpy as np

from longpuzzle.agents.base import Observation, action_spec, instruction_for
from longpuzzle.agents.scripted import SolverAgent


def solver_actions(game: str, difficulty: str, levels: int = 1, level: int | None = None,
                   size=(540, 960), style: str = "2d") -> list[dict]:
    """The solver's actions from the home screen (or, with ``level``, on that level launched
    directly) until ``levels`` levels are won, on the screens of ``style``; the last one is the
    winning move."""
    a = SolverAgent(style=style)
    text = instruction_for(game, difficulty) + (f" (level {level})" if level else "")
    a.reset(text, action_spec(*size, first_wait=level is None))
    obs = Observation(np.zeros((size[1], size[0], 3), np.uint8), None, 1, None)
    acts, won = [], 0
    while won < levels:
        x = a.act(obs)
        acts.append(x)
        if a.model.complete:
            won += 1
            if won < levels:
                acts.append(a.act(obs))      # the Next button
    return acts
