"""Random play and dead ends: how often a player that moves at random ends in a certified
dead end (the paper's Bolt Unscrew finding: the human reached one in 52 of 69 attempts).

    from longpuzzle.solvers.random_play import random_play_dead_ends, dead_end_share
    outs = random_play_dead_ends("bolt_unscrew/hard/1", attempts=100, seed=0)
    share = dead_end_share(outs)                   # e.g. 0.9

Each attempt starts from the level's initial state and plays legal moves chosen uniformly at
random (for Bolt Unscrew: every relocation of a screw into a usable hole) until the level is
solved, no legal move is left, or ``max_moves`` moves were played. A state with no legal move
that is not solved is a certified dead end by the rules' own predicate (the paper's
certificate: stable, nothing pending, no admissible relocation); ``locate=True`` also finds,
with the solvers' certificates, the first move after which the attempt could no longer be won
(unsolvability is kept along a trajectory, so a binary search over its states finds it).

Generic over the puzzle protocol: works for any game with ``dead_ends``; ``free_holes`` is
filled from the game's ``diagnostics()["usable_holes"]`` where it reports one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle


@dataclass
class AttemptOutcome:
    """One random attempt.

    end          "solved", "dead_end" (no legal move left, not solved) or "max_moves"
    moves        moves played
    dead_end     True when the attempt ended in a certified dead end (end == "dead_end")
    dead_end_at  moves played when the no-legal-move dead end was reached, else None
    unsolvable_from  (locate=True) the smallest k such that the state after k moves is
                 certified unsolvable; None when never (or not located); -1 when a
                 certificate on the way was "unknown" and the search could not pin it down
    free_holes   usable empty holes before the first move and after every move (Bolt)
    progress     the progress potential P after the last move
    actions      the moves played (action ids; ``puzzle.format_moves`` writes them)
    """

    end: str
    moves: int
    dead_end: bool
    dead_end_at: int | None
    unsolvable_from: int | None = None
    free_holes: list[int] = field(default_factory=list)
    progress: float = 0.0
    actions: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _free_holes(puzzle, level, state) -> int | None:
    v = puzzle.diagnostics(level, state).get("usable_holes")
    return int(v) if v is not None else None


def random_attempt(level, rng: np.random.Generator, *, max_moves: int = 500, locate: bool = False,
                   certify_budget: int = 20_000) -> AttemptOutcome:
    """One attempt from the initial state of ``level`` with moves drawn from ``rng``."""
    level = load_level(level)
    puzzle = get_puzzle(level.game)
    s = level.initial.copy()
    states = [s]
    actions: list[int] = []
    holes: list[int] = []
    h = _free_holes(puzzle, level, s)
    if h is not None:
        holes.append(h)
    end = "max_moves"
    mask = np.empty(level.n_actions, np.uint8)
    while True:
        if puzzle.is_solved(level, s):
            end = "solved"
            break
        mask[:] = puzzle.legal_mask(level, s)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            end = "dead_end"
            break
        if len(actions) >= max_moves:
            break
        a = int(legal[int(rng.integers(legal.size))])
        s, code = puzzle.step(level, s, a)
        if code != 0:            # a legal move is always accepted; guard against a rules bug
            raise RuntimeError(f"{level.id}: legal move {puzzle.format_move(level, a)} was rejected ({code})")
        actions.append(a)
        states.append(s)
        h = _free_holes(puzzle, level, s)
        if h is not None:
            holes.append(h)
    out = AttemptOutcome(end=end, moves=len(actions), dead_end=end == "dead_end",
                         dead_end_at=len(actions) if end == "dead_end" else None,
                         free_holes=holes, progress=float(puzzle.progress(level, s)), actions=actions)
    if locate and end != "solved":
        out.unsolvable_from = _first_unsolvable(level, states, certify_budget, known_dead=end == "dead_end")
    return out


def _first_unsolvable(level, states, budget, known_dead) -> int | None:
    from longpuzzle.solvers import certify

    memo: dict[int, str] = {}

    def status(k):
        if k not in memo:
            memo[k] = certify(level, states[k], budget=budget).status
        return memo[k]

    hi = len(states) - 1
    if not known_dead:
        st = status(hi)
        if st == "solvable":
            return None
        if st != "unsolvable":
            return -1
    lo = 0                  # the initial state of a catalogue level is solvable
    while hi - lo > 1:      # invariant: states[lo] solvable, states[hi] unsolvable
        mid = (lo + hi) // 2
        st = status(mid)
        if st == "unsolvable":
            hi = mid
        elif st == "solvable":
            lo = mid
        else:
            return -1
    return hi


def random_play_dead_ends(level, attempts: int = 100, seed: int = 0, *, max_moves: int = 500,
                          locate: bool = False, certify_budget: int = 20_000) -> list[AttemptOutcome]:
    """``attempts`` independent random attempts on ``level`` (a Level or a catalogue id such
    as "bolt_unscrew/hard/1"); attempt i draws from ``numpy.random.default_rng([seed, i])``,
    so any attempt can be replayed alone and results do not depend on ``attempts``."""
    level = load_level(level)
    return [random_attempt(level, np.random.default_rng([int(seed), i]), max_moves=max_moves, locate=locate,
                           certify_budget=certify_budget)
            for i in range(int(attempts))]


def dead_end_share(outcomes: list[AttemptOutcome]) -> float:
    """Share of attempts that ended in a certified dead end (0.0 for no attempts)."""
    return sum(o.dead_end for o in outcomes) / len(outcomes) if outcomes else 0.0


def summary(outcomes: list[AttemptOutcome]) -> dict:
    """Counts per end, the dead-end share, the mean moves, and the mean free holes at the
    last move before a dead end (how many holes the player had when it spent the last)."""
    ends: dict[str, int] = {}
    for o in outcomes:
        ends[o.end] = ends.get(o.end, 0) + 1
    dead = [o for o in outcomes if o.dead_end]
    before = [o.free_holes[-2] for o in dead if len(o.free_holes) >= 2]
    return {"attempts": len(outcomes), "ends": ends, "dead_end_share": dead_end_share(outcomes),
            "mean_moves": float(np.mean([o.moves for o in outcomes])) if outcomes else 0.0,
            "mean_moves_to_dead_end": float(np.mean([o.moves for o in dead])) if dead else None,
            "mean_free_holes_before_dead_end": float(np.mean(before)) if before else None}
