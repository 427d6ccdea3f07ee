"""The generator protocol and the driver that certifies and grades what generators propose.

A game's generator (one module per game in this package, ``GENERATOR = XxxGenerator()``)
knows how to lay out a level of the game that its screen draws and its GUI plays; the
driver here makes it a certified, graded level:

    propose(rng, tier) -> record | None   a level record (puzzles/levels/FORMAT.md) drawn
                                          with ``rng`` (random.Random) for a TierSpec, or a
                                          Proposal(record, context); None: this draw failed
    finish(record, level, profile)        the record with fields that come from the figures
                                          (a recorded optimum, a reference solution)
    shape(level) -> dict                  the structural parameters of a level (board size,
                                          piece counts...): read from the catalogue into the
                                          tier data, drawn from again by propose
    certify(level, tier, context)         the certified Profile (default: solvers.profile)
    beyond                                the TierSpec above the catalogue's hardest tier

Determinism: level ``index`` of (game, tier, seed) is drawn from its own stream, seeded by a
digest of (game, tier, seed, index, generator version), so it is reproducible alone (random
access) and names its recipe. The driver proposes, builds the level through the game's own
validation (``Puzzle.build_level``), certifies it with the exhaustive solvers, replays the
certified solution through the rules, and accepts it when every defining figure lies in the
tier's accepted range; otherwise it draws again from the same stream.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass

from longpuzzle.engine.catalog import BEYOND
from longpuzzle.engine.errors import LevelFormatError, LongPuzzleError
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle, spec

MAX_ATTEMPTS = 20_000


class GenerationError(LongPuzzleError):
    """A generator could not make a level (unknown tier, too many failed attempts)."""


@dataclass(frozen=True)
class TierSpec:
    """What a tier asks for: the accepted range of each defining figure (inclusive; None
    for an open end) and the structural shapes to draw from."""
    game: str
    name: str
    accept: dict                       # figure -> (lo, hi)
    shapes: tuple = ()                 # dicts of structural parameters (from the catalogue tier)
    note: str = ""

    def accepts(self, figures: dict) -> bool:
        """Every defining figure PROVEN inside its range (Profile.figures): the optimal
        length by its proven bounds (both inside), a state count that is a lower bound only
        against a lower end."""
        for fig, (lo, hi) in self.accept.items():
            v = figures.get(fig)
            if v is None:
                return False
            v_lo = v_hi = v
            if fig == "optimal":
                v_lo, v_hi = figures.get("lower_bound", v), figures.get("upper_bound", v)
            elif fig == "states" and not figures.get("states_exact", True):
                v_hi = None                       # at least v: no proof against an upper end
            if lo is not None and (v_lo is None or v_lo < lo):
                return False
            if hi is not None and (v_hi is None or v_hi > hi):
                return False
        return True


def catalog_tiers(game: str) -> dict[str, TierSpec]:
    """The catalogue tiers of a game as TierSpecs, in difficulty order (from the tier data
    its declaration names; none: no tiers)."""
    g = spec(game).tier_data() or {"tiers": {}}
    return {name: TierSpec(game, name, {k: tuple(v) for k, v in t["accept"].items()}, tuple(t.get("shapes", ())))
            for name, t in g["tiers"].items()}


@dataclass
class Proposal:
    """What propose may return instead of a bare record: the record and a context that the
    generator's certify receives with the level (e.g. the search that made the record)."""
    record: dict
    context: object = None


@dataclass
class GeneratedLevel:
    """One generated level: the Level (id ``game/tier/index+1``), its record (what the level
    file holds, with its recipe and certified figures), and the Profile."""
    level: Level
    record: dict
    profile: object
    game: str
    tier: str
    seed: int
    index: int
    attempts: int
    seconds: float


class Generator:
    game = ""
    version = 1
    beyond: TierSpec | None = None
    confirm_with_solver = True      # False where certify already IS the game's exhaustive solver

    # ---- game ----------------------------------------------------------------
    def propose(self, rng: random.Random, tier: TierSpec) -> dict | None:
        raise NotImplementedError

    def shape(self, level: Level) -> dict:
        raise NotImplementedError

    def certify(self, level: Level, tier: TierSpec, context=None):
        """The level's Profile (``context``: what propose returned in its Proposal). A tier
        with an upper limit on the reachable states bounds the search there: a larger level
        ends as ``unknown`` (rejected) without a full search."""
        from longpuzzle.solvers.profile import DEFAULT_PROFILE_BUDGET, profile
        hi = tier.accept.get("states", (None, None))[1]
        return profile(level, budget=int(hi) + 1 if hi is not None else DEFAULT_PROFILE_BUDGET)

    def finish(self, record: dict, level: Level, profile) -> dict:
        """The record as written: game fields that come from the certified figures (e.g. a
        recorded optimum or reference solution the game's scoring reads). Default: as is."""
        return record

    # ---- generic -------------------------------------------------------------
    def name(self) -> str:
        return f"longpuzzle.solvers.generators.{self.game}"

    def tiers(self) -> list[str]:
        return list(catalog_tiers(self.game)) + ([BEYOND] if self.beyond is not None else [])

    def tier_spec(self, tier: str) -> TierSpec:
        if tier == BEYOND and self.beyond is not None:
            return self.beyond
        specs = catalog_tiers(self.game)
        if tier not in specs:
            raise GenerationError(f"{self.game} has no tier {tier!r} (tiers: {', '.join(self.tiers())})")
        return specs[tier]

    def rng(self, tier: str, seed: int, index: int) -> random.Random:
        text = f"longpuzzle-generator/{self.game}/{tier}/{int(seed)}/{int(index)}/v{self.version}"
        return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big"))

    def make(self, tier: str, seed: int, index: int, *, max_attempts: int = MAX_ATTEMPTS) -> GeneratedLevel:
        """Level ``index`` (0-based) of (tier, seed): certified and inside the tier's ranges."""
        from longpuzzle.solvers.core import check_solution, solve

        spec = self.tier_spec(tier)
        if int(index) < 0:
            raise GenerationError("a level index is 0 or more")
        rng = self.rng(tier, seed, index)
        p = get_puzzle(self.game)
        t0 = time.perf_counter()
        for attempt in range(1, max_attempts + 1):
            rec = self.propose(rng, spec)
            if rec is None:
                continue
            context = None
            if isinstance(rec, Proposal):
                rec, context = rec.record, rec.context
            rec = dict(rec)
            rec["name"] = f"gen:{self.game}:{tier}:s{int(seed)}:{int(index)}"
            try:
                level = p.build_level(rec, difficulty=tier, number=int(index) + 1, where="<generator>")
            except LevelFormatError as e:      # a generator bug: never hide it as a failed draw
                raise GenerationError(f"{self.game} generator made an invalid level: {e}") from None
            prof = self.certify(level, spec, context)
            if prof.status != "solvable" or not spec.accepts(prof.figures()):
                continue
            # the certified solution replays through the rules to a win ...
            acts = [a for text in prof.solution for a in p.actions(level, text)]
            if not check_solution(level, level.initial, acts):
                raise GenerationError(f"{level.id}: the certified solution does not solve the level")
            # ... and the exhaustive solver confirms the level (where the profile is not the
            # solver's own result) with the same optimal length
            if self.confirm_with_solver:
                r = solve(level)
                if r.status != "solvable" or not check_solution(level, level.initial, r.actions):
                    raise GenerationError(f"{level.id}: the solver does not confirm the profile")
                if r.optimal and prof.optimal is not None and r.length != prof.optimal:
                    raise GenerationError(f"{level.id}: the profile ({prof.optimal}) and the solver ({r.length}) "
                                          "disagree on the optimal length")
            rec = self.finish(rec, level, prof)
            rec["generator"] = {"name": self.name(), "version": self.version, "tier": tier, "seed": int(seed),
                                "index": int(index), "attempts": attempt}
            rec["profile"] = {k: v for k, v in prof.as_dict().items() if k not in ("level", "game", "seconds")}
            level = p.build_level(rec, difficulty=tier, number=int(index) + 1, where="<generator>")
            return GeneratedLevel(level, rec, prof, self.game, tier, int(seed), int(index), attempt,
                                  time.perf_counter() - t0)
        raise GenerationError(f"no {self.game} {tier} level within the tier's ranges after {max_attempts} "
                              f"attempts (seed {seed}, index {index})")
