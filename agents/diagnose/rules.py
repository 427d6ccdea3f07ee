"""Rule cards and rule probes (RQ4, PAPERS.md section 5): what K1 tells the agent, and how the
agent's knowledge of the rules is measured and graded without a judge.

The card. Each game declares its rule card once, in its GameSpec (``rule_card``: the built-in
games' are puzzles/rule_cards.json, Sokoban's examples/sokoban/.../rule_card.json): a title
and NUMBERED rules, the legal interactions and constraints only (no level, coordinate,
solution or action sequence), in English and Chinese (the zh interface gets the Chinese;
``{Restart}``, ``{Undo}``, ``{Replay}`` become the button's own label on that game's screen).
The card as the agent reads it is the title line, then one line ``<k>. <rule>`` per rule.

The probes. A probe is a closed questionnaire over the game's numbered rule list: for EVERY
rule k it holds two statements, the rule itself (true) and its declared false counterpart,
in an order shuffled per game and probe (seeded by both: fixed, the same for every agent),
numbered S1..S2n. The agent answers one line ``S<i>: true|false`` each (``unknown``, a
missing line or a line that says both count as not answered). Grading, machine-only:

* a statement is right when its verdict equals its truth;
* rule k is STATED CORRECTLY in that probe when both of its statements are right, so neither
  a constant answer ("true" to everything: 0 rules) nor a guess (a quarter of the rules on
  average) passes for knowledge, and an evasive answer scores nothing;
* the probe's outcome is the share of the game's rules stated correctly (the paper's
  outcome), with the rules per probe kept for "first stated after the initial probe".

Verdict words accepted (case-insensitive, the first word after the colon): true / yes /
correct / t / 对 / 是 / 正确 / 真, and false / no / incorrect / f / 错 / 否 / 错误 / 假.

A probe is asked aside from play: ``caller.probe(Probe)`` (agents/api.py ``BaseAgent.probe``:
a model agent answers in a request of its own on a copy of its context, a scripted agent from
what it was told), and its answer never enters the acting history.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from longpuzzle.agents.api import Probe
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.labels import screen_text
from longpuzzle.engine.registry import spec

LANGS = ("en", "zh")
BUTTONS = ("Restart", "Undo", "Replay")       # placeholders {Restart} ... in a card's texts
PROBES_PER_SESSION = 5                         # the paper's five isolated probes per session

TRUE_WORDS = ("true", "yes", "correct", "t", "对", "是", "正确", "真")
FALSE_WORDS = ("false", "no", "incorrect", "f", "错", "否", "错误", "假")
_LINE = re.compile(r"^\W*S\s*(\d+)[*_]*\s*[:：.)\-]\s*(.*)$", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+|[\u4e00-\u9fff]{1,2}", re.IGNORECASE)

_QUESTION = {
    "en": ("A question about the rules of {game}, asked aside from play (answering it does not change the game).\n"
           "For each statement below answer true or false (or unknown if you do not know).\n"
           "Reply with exactly one line per statement, in the form \"S1: true\".\n"),
    "zh": ("关于{game}规则的问题，与游戏操作无关（回答不会改变游戏）。\n"
           "请判断下面每条陈述是对还是错：回答 true 或 false（不知道就回答 unknown）。\n"
           "每条陈述只回答一行，格式为 \"S1: true\"。\n"),
}


class RuleCardError(LongPuzzleError):
    """A game without a rule card, or a malformed card."""


@dataclass(frozen=True)
class Rule:
    number: int                  # its number in the game's rule list (1-based)
    text: dict                   # {lang: the rule}
    false: dict                  # {lang: its false counterpart}


@dataclass(frozen=True)
class RuleCard:
    """A game's rule card: its title and numbered rules (module doc)."""
    game: str
    title: dict                  # {lang: the card's first line}
    rules: tuple[Rule, ...]

    def rule(self, k: int, lang: str = "en", truth: bool = True) -> str:
        r = self.rules[k - 1]
        return self._text(r.text if truth else r.false, lang)

    def text(self, lang: str = "en") -> str:
        """The card as the agent reads it: the title line, then ``<k>. <rule>`` per rule."""
        lines = [self._text(self.title, lang)]
        lines += [f"{r.number}. {self.rule(r.number, lang)}" for r in self.rules]
        return "\n".join(lines)

    def _text(self, texts: dict, lang: str) -> str:
        s = texts.get(lang) or texts["en"]
        for b in BUTTONS:
            s = s.replace("{" + b + "}", screen_text(b, lang, self.game))
        return s


def rule_card(game: str) -> RuleCard:
    """The rule card the game declares (GameSpec.rule_card), checked."""
    data = spec(game).rule_card_data()
    if data is None:
        raise RuleCardError(f"{game} declares no rule card (GameSpec.rule_card)")
    try:
        title = dict(data["title"])
        rules = tuple(Rule(k, dict(r), dict(r["false"])) for k, r in enumerate(data["rules"], 1))
    except (KeyError, TypeError, ValueError) as e:
        raise RuleCardError(f"{game}: its rule card is malformed ({type(e).__name__}: {e})") from None
    if not rules or "en" not in title or any("en" not in r.text or "en" not in r.false for r in rules):
        raise RuleCardError(f"{game}: its rule card needs a title and rules, each with an English text and "
                            "an English false counterpart")
    return RuleCard(game, title, rules)


# ---- probes ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Question:
    """A probe as asked (``probe``) with what grades it: ``truths[i]`` of statement S<i+1>."""
    index: int                   # 0..4: its place in the session
    probe: Probe
    truths: tuple[bool, ...]


def make_question(card: RuleCard, index: int, lang: str = "en") -> Question:
    """Probe ``index`` of a session: both statements of every rule, in an order fixed by the
    game and the index (module doc)."""
    items = [(r.number, truth) for r in card.rules for truth in (True, False)]
    random.Random(f"{card.game}:{index}").shuffle(items)
    statements = tuple(card.rule(k, lang, truth) for k, truth in items)
    lines = "".join(f"S{i}: {s}\n" for i, s in enumerate(statements, 1))
    game = screen_text(_title(card.game), lang, card.game)
    text = _QUESTION.get(lang, _QUESTION["en"]).format(game=game) + lines
    probe = Probe(text, statements, tuple(k for k, _ in items), card.text(lang).splitlines()[0])
    return Question(index, probe, tuple(t for _, t in items))


def _title(game: str) -> str:
    from longpuzzle.engine.registry import get_puzzle

    return get_puzzle(game).title


def parse_answer(text: str, n: int) -> list[bool | None]:
    """The verdict of each of ``n`` statements in an answer text: True, False, or None (not
    answered: no line, unknown, a line that says both, or two lines that disagree)."""
    seen: dict[int, set] = {}
    for line in (text or "").splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        i = int(m.group(1))
        if not 1 <= i <= n:
            continue
        words = [w.lower() for w in _WORD.findall(m.group(2))[:3]]
        t = any(w in TRUE_WORDS for w in words)
        f = any(w in FALSE_WORDS for w in words)
        seen.setdefault(i, set()).add(None if t == f else t)
    return [next(iter(v)) if v and len(v) == 1 else None for v in (seen.get(i) for i in range(1, n + 1))]


@dataclass(frozen=True)
class Grade:
    """One probe graded: which rules were stated correctly, and the share."""
    index: int
    rules: tuple[bool, ...]      # rules[k-1]: rule k stated correctly (both statements right)
    answered: int                # statements given a verdict
    right: int                   # statements answered right

    @property
    def share(self) -> float:
        return sum(self.rules) / len(self.rules)

    def as_dict(self) -> dict:
        return {"index": self.index, "rules": [int(r) for r in self.rules], "answered": self.answered,
                "right": self.right, "share": round(self.share, 6)}


def grade(card: RuleCard, question: Question, answer: str) -> Grade:
    """Grade an answer against the card's rule list (module doc)."""
    verdicts = parse_answer(answer, len(question.truths))
    ok: dict[int, bool] = {r.number: True for r in card.rules}
    for k, truth, v in zip(question.probe.rules, question.truths, verdicts):
        if v is None or v != truth:
            ok[k] = False
    right = sum(v is not None and v == t for v, t in zip(verdicts, question.truths))
    return Grade(question.index, tuple(ok[r.number] for r in card.rules),
                 sum(v is not None for v in verdicts), right)


def probe_steps(max_actions: int, n: int = PROBES_PER_SESSION) -> tuple[int, ...]:
    """The agent actions after which the first n - 1 probes of a session are asked: the first
    before any action, the others evenly over the session's action ceiling; the last probe
    is asked when the session ends (and so is every earlier one the session did not reach,
    so that every session has its n probes)."""
    return tuple(round(i * max_actions / (n - 1)) for i in range(n - 1))
