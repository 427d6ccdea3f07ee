"""What the agent could see, turn by turn, and its attempts at the current level.

Everything here is public: the action as dispatched, the public feedback, the number of
frames, and the screen as a person reads it off the frame (harness ``public_screen``: home,
a game's difficulty menu, or a level with its game title, difficulty label and "Level N"
header, and the completion card) with the labelled controls the action pressed that acted
(Restart / Replay, Undo). Nothing of the game state, the progress potential P, the
evaluator's records or its dead-end certificates.

Attempts (the public rule)
    An attempt is at one level, identified by what its header shows (game, difficulty,
    level number). It starts at the turn whose screen first shows that level (entered from
    a menu or from the previous level's card) or at a turn that pressed Restart / Replay on
    it, and ends at the turn that shows its completion card ("win"), the game's own failure
    card ("game_over": Maze Paint on the hub, engine/suite/game_limits.py), at a restart
    ("restart"), at a turn that shows another screen ("left"), or is still open
    ("ongoing"; "end" once the episode has ended). Turns on a card after the win (or the
    game over) belong to no attempt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longpuzzle.agents.base import NO_VISIBLE_EFFECT, RETURNED_TO_RECENT, SCREEN_CHANGED, WAIT_COMPLETED

FEEDBACK_KINDS = (SCREEN_CHANGED, NO_VISIBLE_EFFECT, RETURNED_TO_RECENT, WAIT_COMPLETED)


def level_key(screen: dict) -> tuple | None:
    """(game, difficulty, level) of a level screen, else None."""
    if screen.get("screen") != "level":
        return None
    return screen["game"], screen["difficulty"], screen["level"]


@dataclass
class Attempt:
    number: int                             # 1, 2, ... among the attempts at its level
    level: tuple
    start_turn: int
    started_by: str                         # "entry" | "restart"
    end_turn: int = 0
    ended_by: str = "ongoing"               # "win" | "game_over" | "restart" | "left" | "ongoing" | "end"
    turns: int = 0
    undos: int = 0
    feedback: dict = field(default_factory=lambda: dict.fromkeys(FEEDBACK_KINDS, 0))

    def as_dict(self) -> dict:
        g, d, n = self.level
        return {"attempt": self.number, "level": {"game": g, "difficulty": d, "level": n},
                "start_turn": self.start_turn, "end_turn": self.end_turn, "started_by": self.started_by,
                "ended_by": self.ended_by, "turns": self.turns, "undos": self.undos, "feedback": dict(self.feedback),
                "first_frame": {"turn": self.start_turn, "frame": -1}, "last_frame": {"turn": self.end_turn, "frame": -1}}


class History:
    """The public record of an episode's turns, and its attempts, kept as turns happen."""

    def __init__(self):
        self.events: list[dict] = []
        self.attempts: list[Attempt] = []
        self.open: Attempt | None = None
        self.level: tuple | None = None      # the level of the last level screen shown

    def add(self, turn: int, action: dict, feedback, frames: int, screen: dict, controls: list[str]) -> dict:
        rec = {"turn": turn, "action": action, "feedback": feedback.status, "n_frames": frames, "screen": screen}
        if controls:
            rec["controls"] = list(controls)
        self.events.append(rec)
        key = level_key(screen)
        a = self.open
        if key is None:
            if a is not None:
                self._close(a, turn, "left")
        else:
            self.level = key
            if a is not None and a.level != key:
                self._close(a, turn, "left")
                a = None
            elif a is not None and "restart" in controls:
                self._close(a, turn, "restart")
                a = None
            if a is None and (screen.get("card") is None or "restart" in controls or not self._won_here(key)):
                n = 1 + sum(x.level == key for x in self.attempts)        # numbered per level
                a = self.open = Attempt(n, key, turn, "restart" if "restart" in controls else "entry")
                self.attempts.append(a)
            if a is not None:
                a.turns += 1
                a.end_turn = turn
                a.undos += controls.count("undo")
                a.feedback[feedback.status] = a.feedback.get(feedback.status, 0) + 1
                if screen.get("card") is not None:
                    self._close(a, turn, "game_over" if screen["card"] == "game_over" else "win")
        return rec

    def _won_here(self, key) -> bool:
        return bool(self.attempts) and self.attempts[-1].level == key and self.attempts[-1].ended_by in ("win",
                                                                                                     "game_over")

    def _close(self, a: Attempt, turn: int, how: str) -> None:
        if how != "left":
            a.end_turn = turn
        a.ended_by = how
        self.open = None

    def end(self) -> None:
        """The episode ended: an open attempt ends with it."""
        if self.open is not None:
            self.open.ended_by = "end"
            self.open = None

    # ---- views ------------------------------------------------------------------------------
    def view_events(self, start: int | None, end: int | None, limit: int) -> list[dict]:
        """The records of turns [start, end) (None: unbounded), the latest ``limit`` of them."""
        ev = [e for e in self.events if (start is None or e["turn"] >= start) and (end is None or e["turn"] < end)]
        return ev[-limit:]

    def view_attempts(self, start: int | None, end: int | None, limit: int) -> tuple[dict | None, list[dict]]:
        """(the current level, its attempts that started in turns [start, end), the latest
        ``limit``), the current level being the one the last level screen showed."""
        if self.level is None:
            return None, []
        g, d, n = self.level
        at = [a for a in self.attempts if a.level == self.level]
        at = [a for a in at if (start is None or a.start_turn >= start) and (end is None or a.start_turn < end)]
        return {"game": g, "difficulty": d, "level": n}, [a.as_dict() for a in at[-limit:]]
