"""Helpers for testing puzzles (used by the conformance suite; usable by third-party
puzzle authors too)."""

from __future__ import annotations

import random

from longpuzzle.engine.catalog import Catalog, _in_use
from longpuzzle.engine.protocol import NOOP, Level
from longpuzzle.engine.registry import get_puzzle


def sample_levels(game: str, k: int = 4, catalog: Catalog | None = None) -> list[str]:
    """First, last and evenly spread levels of a game in ``catalog`` (default: the built-in
    one; all of them if there are few)."""
    ids = (catalog or _in_use()).level_ids(game)
    if len(ids) <= k:
        return ids
    step = (len(ids) - 1) / (k - 1)
    return sorted({ids[round(i * step)] for i in range(k)}, key=ids.index)


def random_walk(level: Level, n: int, seed: int, rejected_rate: float = 0.2) -> list[int]:
    """n actions: mostly legal moves, some arbitrary (possibly rejected) ones."""
    p = get_puzzle(level.game)
    rng = random.Random(seed)
    state = level.initial.copy()
    out = []
    for _ in range(n):
        legal = p.legal_moves(level, state)
        if legal and rng.random() > rejected_rate:
            a = rng.choice(legal)
        else:
            a = rng.randrange(level.n_actions)
        out.append(a)
        nxt, code = p.step(level, state, a)
        if code <= NOOP:
            state = nxt
    return out


def walk_states(level: Level, actions: list[int]):
    """Yield (state, action, next_state, code) along a walk (rejected actions keep the state)."""
    p = get_puzzle(level.game)
    state = level.initial.copy()
    for a in actions:
        nxt, code = p.step(level, state, a)
        yield state, a, nxt, code
        if code <= NOOP:
            state = nxt
