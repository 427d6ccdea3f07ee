"""The public agent API: what an agent is given and what it returns, and nothing else.

STANDALONE: this file imports only the standard library. It is the whole of longpuzzle an
agent file sees when it runs isolated (``eval --agent FILE.py``): inside the agent's sandbox
this same source is installed as ``longpuzzle.agents.base`` (so ``from longpuzzle.agents.base
import BaseAgent, FinalAnswer`` works there) and every other part of longpuzzle is
unimportable. In the harness, longpuzzle.agents.base re-exports these classes.

    class MyAgent(BaseAgent):
        def reset(self, instruction, action_spec): ...
        def act(self, observation): return {"type": "click", "x": 100, "y": 200}

``act`` may return one action dict, a ``{"type": "batch", "actions": [...]}``, or
``FinalAnswer("...")`` to end the episode. ``take_over(Takeover)`` is called once, after
``reset`` and before the first ``act``, when the agent takes over an episode another agent
(or an earlier run) played (a diagnose continuation): the public record of what was done
before it (PAPERS.md section 4, D.1). ``probe(Probe)`` answers a question about the
game's rules asked aside from play (the rule probes of ``diagnose rules``): its answer never
enters the episode, and an agent must not let it change what it does next.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

# public feedback statuses (HARNESS.md section 5)
SCREEN_CHANGED = "screen_changed"
NO_VISIBLE_EFFECT = "no_visible_effect"
RETURNED_TO_RECENT = "returned_to_recent_screen"
WAIT_COMPLETED = "wait_completed"
DISPATCH_FAILED = "dispatch_failed"


@dataclass(frozen=True)
class FinalAnswer:
    """Returned by an agent to end its episode (its claim is not evidence of success)."""
    text: str = ""


@dataclass(frozen=True)
class Feedback:
    """Public feedback on the last action."""
    status: str                  # one of the statuses above
    executed: bool               # False when the action was refused before dispatch
    message: str = ""            # e.g. what was malformed about a refused action
    frames: int = 1              # frames produced by the action (intermediate + final)


@dataclass(frozen=True)
class Observation:
    frame: Any                   # numpy (H, W, 3) uint8, read-only, the agent's own copy; None
                                 # before the first action of the objective protocol (a wait)
    feedback: Feedback | None    # None before the first action
    step: int                    # actions taken so far
    time_left: float | None      # seconds of budget left (None: no budget)
    frames: tuple = ()           # intermediate frames of the last action (copies), oldest first


@dataclass(frozen=True)
class Probe:
    """A rule probe (``diagnose rules``, RQ4): closed statements about the game's rules, each to
    be answered true or false, asked aside from play. ``text`` is the whole question as a
    person (or a model) reads it, asking for one line ``S<i>: true|false`` per statement;
    ``statements[i]`` is statement S<i+1>, about rule ``rules[i]`` of the game's numbered rule
    list; a rule card shown to the agent starts with the line ``card_title`` followed by its
    rules as lines ``<k>. <text>`` (so what an agent was told can be looked up)."""
    text: str
    statements: tuple[str, ...] = ()
    rules: tuple[int, ...] = ()
    card_title: str = ""


@dataclass(frozen=True)
class Takeover:
    """The takeover context of the diagnostics' harness (PAPERS.md section 4, D.1), given to an
    agent that continues an episode at step ``step`` of its source: ``prefix`` the public
    action prefix as text (one line per recorded action, oldest first, e.g.
    ``"step 7: click(412, 300) -> screen_changed"``); ``pairs`` up to four (screenshot, action
    text) pairs of the last actions before the takeover, oldest first, each screenshot the one
    the action was chosen on (numpy (H, W, 3) uint8); ``frame`` the current screenshot (the
    state taken over; the first observation still has none until the opening wait);
    ``note`` the intervention's text, also added to the instruction ("" for none)."""
    step: int
    prefix: tuple[str, ...] = ()
    pairs: tuple[tuple[Any, str], ...] = ()
    frame: Any = None
    note: str = ""

    def prefix_text(self) -> str:
        """The public action prefix as one text (what a model is shown at takeover)."""
        if not self.prefix:
            return f"No action was taken before step {self.step}."
        return (f"Actions taken so far by the previous player ({len(self.prefix)}, oldest first):\n"
                + "\n".join(self.prefix))


def told_rules(told: str, card_title: str) -> dict[int, str]:
    """{k: text of rule k} of the rule card in the text ``told`` (the lines ``<k>. <text>``
    after the line ``card_title``), or {} when it holds no such card."""
    lines = told.splitlines()
    out: dict[int, str] = {}
    if not card_title or card_title not in lines:
        return out
    for line in lines[lines.index(card_title) + 1:]:
        k, dot, text = line.strip().partition(". ")
        if not dot or not k.isdigit():
            break
        out[int(k)] = text.strip()
    return out


def answer_from_told(probe: Probe, told: str) -> str:
    """The answer of an agent that knows only what it was told: a statement is true when it
    is, word for word, the rule of its number in the card it was told, false when that rule
    reads otherwise, and unknown when it was told no such rule (no card)."""
    rules = told_rules(told, probe.card_title)
    out = []
    for i, (statement, k) in enumerate(zip(probe.statements, probe.rules), 1):
        rule = rules.get(k)
        verdict = "unknown" if rule is None else "true" if rule == statement.strip() else "false"
        out.append(f"S{i}: {verdict}")
    return "\n".join(out)


FIRST_ACTION = MappingProxyType({"type": "wait", "ms": 0})


def first_action(obs: Observation) -> dict | None:
    """The wait an agent must send first when its observation has no frame yet, else None."""
    return dict(FIRST_ACTION) if obs.frame is None else None


class BaseAgent:
    """Subclass and implement ``act``. ``name`` appears in results."""

    name = "agent"

    def reset(self, instruction: str, action_spec: Any) -> None:
        self.instruction = instruction
        self.action_spec = action_spec

    def act(self, observation: Observation) -> dict | FinalAnswer:
        raise NotImplementedError

    def note(self, text: str) -> None:
        """An extra instruction given mid-episode (an intervention)."""
        self.instruction = f"{getattr(self, 'instruction', '')}\n{text}".strip()

    def take_over(self, takeover: Takeover) -> None:
        """Called once after ``reset``, before the first ``act``, when the agent continues an
        episode played before it (a takeover): what was done up to here. Default: kept as
        ``self.takeover`` and nothing else, so an agent that knows nothing of takeovers plays
        on from the screenshot it is given, as before (the intervention's note is already in
        its instruction)."""
        self.takeover = takeover

    def probe(self, probe: Probe) -> str:
        """The answer to a rule probe, asked aside from play: it must leave the agent as it was
        (a model agent answers in a separate request on a copy of its context). Default: from
        what the agent was told (its instruction and notes; answer_from_told)."""
        return answer_from_told(probe, getattr(self, "instruction", "") or "")


class InfrastructureError(Exception):
    """Raised by an agent when the infrastructure it depends on failed (a model provider that
    still fails after retries, a dead endpoint, a broken tool server): not the agent's fault.
    The episode ends as ``infrastructure_error`` and is UNSCORED (PAPERS.md section 4, Scored
    episodes): it is left out of every metric and ``eval --resume`` runs it again."""


__all__ = ["BaseAgent", "DISPATCH_FAILED", "FIRST_ACTION", "Feedback", "FinalAnswer", "InfrastructureError", "NO_VISIBLE_EFFECT",
           "Observation", "Probe", "RETURNED_TO_RECENT", "SCREEN_CHANGED", "Takeover", "WAIT_COMPLETED", "answer_from_told",
           "first_action", "told_rules"]
