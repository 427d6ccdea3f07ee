"""P1 of RQ4 (PAPERS.md section 5): the deterministic workflow controller. It does the entry
(from the home screen: the game's card, the difficulty card) and the
evaluator-verified advancement (a level's Next / Replay only after the evaluator has seen
that level won; the game's own failure card's retry), and leaves EVERY puzzle move to the
agent: while a target level is being played it never acts, with one exception, the Bolt
Unscrew controller that restarts a level whose board carries the paper's no-free-hole
certificate (stable, unfinished, no usable hole: checkpoints.certify_dead_end). The
protocol's opening wait (it starts the clock and returns the first screenshot) stays the
agent's, so that every agent starts as the protocol has it and sees the screen the
controller then leaves it on as the result of that wait.

It reads the live suite of the episode (the evaluator's view, never shown to the agent) and
finds its clicks with the scripted agents' own navigation (scripted.AppModelAgent.navigate
over the Suite and its Navigator), so it is not a second copy of the menus' geometry.
"""

from __future__ import annotations

from longpuzzle.agents.diagnose.checkpoints import CheckpointError, certify_dead_end
from longpuzzle.agents.scripted import AppModelAgent

DEADLOCK_GAMES = ("bolt_unscrew",)      # games whose controller restarts a certified dead end


class _Navigation(AppModelAgent):
    """The scripted agents' navigation, on the episode's own suite (no model of its own)."""

    def __init__(self, suite, game: str, difficulty: str, targets):
        self.model, self.game, self.difficulty, self.targets = suite, game, difficulty, list(targets)


class Controller:
    """The P1 controller of one objective episode (ObjectiveEpisode): ``action()`` is its
    action before the agent's next turn, or None (the agent's turn). Counts what it did:
    ``entry``, ``advance`` and ``deadlock_restarts`` actions."""

    def __init__(self, episode, *, deadlock_restart: bool = True):
        self.ep = episode
        obj = episode.obj
        self.game, self.difficulty = obj.game, obj.difficulty
        self.nav = _Navigation(episode.suite, obj.game, obj.difficulty, obj.level_ids)
        self.deadlock_restart = deadlock_restart and obj.game in DEADLOCK_GAMES
        self.counts = {"entry": 0, "advance": 0, "deadlock_restarts": 0}

    def action(self) -> tuple[str, dict] | None:
        """(kind, action) of the controller's next action, or None when the agent plays."""
        ep, s = self.ep, self.ep.suite
        if ep.run.need_wait:
            return None                                    # the opening wait: the agent's
        on_level = s.screen.get("name") == "level" and s.session is not None
        if on_level and s.level.id in self.nav.targets and not s.complete and s.failed is None:
            if self.deadlock_restart and self._certified_dead_end():
                return "deadlock_restarts", self.nav._click_widget("restart")
            return None                                    # a puzzle move: the agent's
        if on_level and s.complete:
            out = ep.ev.outcomes.get(s.level.id)
            if out is None or not out.won:                 # never advance past an unverified win
                return None
        a = self.nav.navigate()
        if a is None:
            return None
        kind = "advance" if on_level else "entry"
        return kind, a

    def _certified_dead_end(self) -> bool:
        try:
            certify_dead_end(self.ep.suite)
        except CheckpointError:
            return False
        return True
