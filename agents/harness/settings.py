"""Episode settings, the objective instruction, and the harness's own error."""

from __future__ import annotations

from dataclasses import dataclass

from longpuzzle.agents.evaluator import CERTIFY_BUDGET
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.registry import get_puzzle

DEFAULT_BUDGET = 3600.0
DEFAULT_ACTION_TIMEOUT = 120.0


def instruction_for(game: str, difficulty: str) -> str:
    return f"Complete all levels of {get_puzzle(game).title} at {difficulty} difficulty."


class HarnessError(LongPuzzleError):
    """A harness-level problem (bad settings, an unreadable episode folder)."""


@dataclass
class Settings:
    style: str = "2d"
    scale: float = 1.0
    frames_per_move: int = 0
    budget: float | None = DEFAULT_BUDGET       # wall-clock seconds (objective protocol)
    max_actions: int | None = None
    action_timeout: float | None = DEFAULT_ACTION_TIMEOUT
    certify_budget: int = CERTIFY_BUDGET
    save_frames: bool = True

    def as_dict(self) -> dict:
        return dict(self.__dict__)
