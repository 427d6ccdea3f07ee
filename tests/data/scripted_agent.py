"""A test agent that plays a fixed script of moves per objective through GUI gestures (it
keeps an exact model of the app, like the built-in solver agent): used to make episodes whose
analytics are known in advance.

nut_and_bolt/medium, level 1: ten moves to a certified dead end (the tenth is fatal), two more
transfers on the dead board, three undos back to the last solvable board, a restart, the ten
moves again, then a final answer (a second dead end that is never left).
maze_paint/easy, level 1: R paints the bottom row, L returns along it (nothing new), R again
returns the board to the exact state after the first R; then U paints new cells; then a
final answer.
"""

from longpuzzle.agents.base import FinalAnswer, first_action
from longpuzzle.agents.scripted import AppModelAgent

FATAL = ["3>8", "3>7", "5>3", "1>8", "4>8", "4>3", "2>1", "3>4", "7>2", "2>7"]
SCRIPTS = {
    "nut_and_bolt/medium": FATAL + ["2>8", "4>3", "undo", "undo", "undo", "restart"] + FATAL,
    "maze_paint/easy": ["R", "L", "R", "U"],
}


class ScriptedAgent(AppModelAgent):
    name = "scripted"

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.script = list(SCRIPTS[f"{self.game}/{self.difficulty}"])

    def act(self, obs):
        if obs.frame is None:
            return self.emit(first_action(obs))
        nav = self.navigate()
        if nav is not None:
            return self.emit(nav)
        if not self.script:
            return FinalAnswer("stopping here")
        m = self.script.pop(0)
        if m in ("undo", "restart"):
            return self.emit(self._click_widget(m))
        s = self.model.session
        return self.emit(self.model.gesture_for(s.puzzle.parse_move(s.level, m)))
