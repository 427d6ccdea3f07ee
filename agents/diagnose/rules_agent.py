"""A scripted agent for RQ4 that behaves like the paper's agents with and without the rule card
(registered as ``rulebook``; no model endpoint).

Without the card it does not know the rules: half of its board gestures (seeded) are guesses -
a random tap, drag or swipe on the board's pieces, as the ``random`` agent makes them - and the
other half the greedy move. Told the card (in its instruction or a note: the card's title line
and its numbered rules, api.told_rules), it plays the greedy move every time. It answers the
rule probes from what it was told (BaseAgent.probe), so without the card it answers "unknown".
It enters, advances and restarts on its own like every scripted agent (under P1 the
controller does the entry and advancement, and its model of the app follows: ``external``).
"""

from __future__ import annotations

from longpuzzle.agents.api import told_rules
from longpuzzle.agents.diagnose.rules import LANGS, rule_card
from longpuzzle.agents.scripted import GreedyAgent, RandomAgent


class RulebookAgent(GreedyAgent):
    name = "rulebook"

    def __init__(self, style: str = "2d", seed: int = 0, catalog=None, guess: float = 0.5):
        super().__init__(style, seed, catalog)
        self.guess = guess               # the share of its gestures that are guesses without the card

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.card = rule_card(self.game)
        self._read()

    def note(self, text: str) -> None:
        super().note(text)
        self._read()

    def _read(self) -> None:
        """Whether what it was told holds the game's card (in any language)."""
        self.knows = any(told_rules(self.instruction, self.card.title[lang]) for lang in LANGS
                         if lang in self.card.title)

    def gesture(self, obs):
        if not self.knows and self.rng.random() < self.guess:
            return RandomAgent.gesture(self, obs)          # a guess at what the board takes
        return super().gesture(obs)
