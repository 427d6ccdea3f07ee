"""A game's milestones: discrete, checkable steps of progress on a level, each an exact
predicate on the evaluator's state and a question a judge can be asked about the screen
(FlashAdventure's milestones, PAPERS.md section 7; ``longpuzzle diagnose judge`` measures a
judge's verdicts against these predicates).

A game declares its milestone KINDS once, in its GameSpec (``milestones="module:attr"`` naming a
tuple of them; engine/declaration.py). Two kinds of kinds:

    Count   a multi-item milestone: ``measure(level, state) -> (have, total)`` counts items
            (boards out, pairs connected, vehicles left, stacks sorted, cells painted); it
            gives one milestone per threshold k, "at least k of the n items", met when
            have >= k. The thresholds: ``"each"`` (k = 1..n), ``"quarters"`` (the quarter
            points of n, rounded up: ceil(n/4), ceil(n/2), ceil(3n/4), n), ``"auto"`` (each up
            to EACH_UP_TO items, quarters above).
    Check   a single milestone: ``holds(level, state) -> bool`` (e.g. Rush Hour's way clear).

Every level also has the milestone every game shares, LEVEL_WON ("the level is solved": the
game's own is_solved), last in the list. A level's milestones are in the order they are
checked: the kinds as declared, a Count's thresholds ascending, then LEVEL_WON, so that
FlashAdventure's "in order, stopping at the first unmet one" follows the way a level fills up.

Seen from an objective's final state (FlashAdventure's judge resumed at a game's end),
``objective_milestones`` adds "level k of n won" for every other target level, in order.

The question is a ``str.format`` template: a Count's gets ``k`` and ``n`` (the threshold and the
level's number of items), a Check's nothing. Example (a game's own module)::

    MILESTONES = (Count("boxes_on_goals", "mygame.milestones:boxes",
                        "Do at least {k} of the {n} boxes stand on a goal square?"),)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from longpuzzle.engine.declaration import DeclarationError, load_object
from longpuzzle.engine.registry import get_puzzle

EACH_UP_TO = 8                  # "auto": one milestone per item up to this many items
THRESHOLDS = ("each", "quarters", "auto")
LEVEL_WON_ID = "level_won"
OBJECTIVE_LEVEL_WON_ID = "objective_level_won"
OBJECTIVE_LEVEL_WON = ("Has level {k} of {n} been completed: levels are played in order, so has the game moved "
                       "past level {k}, or does it show level {k} complete?")


def _resolve(ref, what: str) -> Callable:
    f = load_object(ref) if isinstance(ref, str) else ref
    if not callable(f):
        raise DeclarationError(f"milestone {what}: {ref!r} is not a function")
    return f


@dataclass(frozen=True)
class Count:
    """A multi-item milestone kind (module doc): ``measure`` is a function or "module:attr"."""
    id: str
    measure: str | Callable
    question: str
    thresholds: str = "auto"

    counting = True

    def __post_init__(self):
        if self.thresholds not in THRESHOLDS:
            raise DeclarationError(f"milestone {self.id}: thresholds {self.thresholds!r}: use one of "
                                   f"{', '.join(THRESHOLDS)}")

    def measured(self, level, state) -> tuple[int, int]:
        have, total = _resolve(self.measure, self.id)(level, state)
        return int(have), int(total)

    def ks(self, n: int) -> list[int]:
        """The thresholds of a level with ``n`` items, ascending (none when n is 0)."""
        if n <= 0:
            return []
        if self.thresholds == "each" or (self.thresholds == "auto" and n <= EACH_UP_TO):
            return list(range(1, n + 1))
        return sorted({max(1, math.ceil(n * q / 4)) for q in (1, 2, 3, 4)})


@dataclass(frozen=True)
class Check:
    """A single milestone kind (module doc): ``holds`` is a function or "module:attr"."""
    id: str
    holds: str | Callable
    question: str

    counting = False

    def measured(self, level, state) -> tuple[int, int]:
        return int(bool(_resolve(self.holds, self.id)(level, state))), 1


def _level_won(level, state) -> bool:
    return bool(get_puzzle(level.game).is_solved(level, state))


LEVEL_WON = Check(LEVEL_WON_ID, _level_won, "Is this level solved: does the screen show that the level is "
                                             "complete?")


@dataclass(frozen=True)
class Milestone:
    """One milestone of a level: its kind, its threshold ``k`` of ``n`` items (1 of 1 for a
    Check), its place in the level's list and the question put to a judge."""
    kind: str
    counting: bool
    k: int
    n: int
    index: int
    question: str

    @property
    def id(self) -> str:
        if self.counting:
            return f"{self.kind}>={self.k}/{self.n}"
        return self.kind if self.n == 1 else f"{self.kind}#{self.k}/{self.n}"


def milestone_kinds(spec) -> tuple:
    """The kinds a game declares (its GameSpec's ``milestones``), then LEVEL_WON."""
    ref = getattr(spec, "milestones", None)
    kinds = () if ref is None else (load_object(ref) if isinstance(ref, str) else ref)
    if not isinstance(kinds, (tuple, list)) or not all(isinstance(k, (Count, Check)) for k in kinds):
        raise DeclarationError(f"{spec.id}: milestones {ref!r} is not a tuple of Count / Check")
    ids = [k.id for k in kinds]
    if len(set(ids)) != len(ids) or LEVEL_WON_ID in ids:
        raise DeclarationError(f"{spec.id}: milestone kinds must have distinct ids other than {LEVEL_WON_ID!r}")
    return (*kinds, LEVEL_WON)


def level_milestones(kinds, level, state) -> list[tuple[Milestone, int, bool]]:
    """Every milestone of ``level`` in checking order, each with the exact count of its kind
    in ``state`` (``have``: items counted, 0/1 for a Check) and whether it holds there.
    The number of items n is the level's own (the count's total, a property of the level)."""
    out = []
    for kind in kinds:
        have, n = kind.measured(level, state)
        if kind.counting:
            for k in kind.ks(n):
                m = Milestone(kind.id, True, k, n, len(out), kind.question.format(k=k, n=n))
                out.append((m, have, have >= k))
        else:
            out.append((Milestone(kind.id, False, 1, 1, len(out), kind.question.format()), have, bool(have)))
    return out


def objective_milestones(level_ids, current: str, won, own: list) -> list[tuple[Milestone, int, bool]]:
    """The milestones of a whole objective seen from its final state (FlashAdventure's judge
    resumed at a game's final state): "level k of n won" for each target level in order
    (true when the evaluator observed its win: ``won``, a set of level ids), with the
    current level's own milestones (``own``: level_milestones of the level on screen) in
    the place of its "won" (before all of them when the level on screen is not a target)."""
    ids = list(level_ids)
    out: list = [] if current in ids else list(own)
    n = len(ids)
    for k, lid in enumerate(ids, 1):
        if lid == current:
            out.extend(own)
            continue
        m = Milestone(OBJECTIVE_LEVEL_WON_ID, False, k, n, 0, OBJECTIVE_LEVEL_WON.format(k=k, n=n))
        out.append((m, int(lid in won), lid in won))
    return [(replace(m, index=i), have, holds) for i, (m, have, holds) in enumerate(out)]
