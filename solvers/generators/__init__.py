"""longpuzzle.solvers.generators: seeded level generators for every game, certified by the solvers and
graded to the catalogue's tiers.

    from longpuzzle.solvers.generators import generate, LevelSampler

    for g in generate("maze_paint", "medium", seed=7, count=3):   # one at a time
        g.level            # a Level (id maze_paint/medium/1 ...), playable by Session / Suite / envs
        g.record           # its level-file record: layout, recipe ("generator") and figures ("profile")
        g.profile          # solvers.profile.Profile: solvable, optimal, states, dead ends, first moves

    sample = LevelSampler("rush_hour", "hard", seed=0)   # a level sampler (e.g. for env resets)
    sample[12]                     # level 12 of the sequence (random access, deterministic)
    sample()                       # the next level of the sequence
    sample(np_random)              # a level chosen by a numpy Generator (an env's np_random)
    for g in sample: ...           # the endless sequence

Levels are deterministic in (game, tier, seed, index, generator version): each generator's
``version`` is recorded in every level it makes. Tiers: the game's catalogue difficulties
plus ``beyond`` (above its hardest). The protocol and driver: solvers/generators/base.py; the tiers'
figures: solvers/generators/tiers.py (tiers.json). A game's generator and tier data are the
ones its declaration names (GameSpec.generator, GameSpec.tiers: engine/declaration.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.engine.registry import get_puzzle, spec, specs
from longpuzzle.solvers.generators.base import GeneratedLevel, GenerationError, Generator, TierSpec

__all__ = ["GeneratedLevel", "GenerationError", "Generator", "LevelSampler", "TierSpec", "generate", "generator",
           "generators", "level_file"]


def generators() -> list[Generator]:
    """Every game's generator, in the benchmark's game order."""
    found = (s.generator_object() for s in specs() if s.generator is not None)
    return [g for g in found if isinstance(g, Generator)]


def generator(game: str) -> Generator:
    g = spec(game).generator_object()     # an unknown game id -> UnknownGameError
    if not isinstance(g, Generator):
        raise UnknownGameError(f"{game} has no level generator")
    return g


def generate(game: str, tier: str, *, seed: int = 0, count: int | None = None, start: int = 0) -> Iterator[GeneratedLevel]:
    """Levels start, start + 1, ... of (game, tier, seed), one at a time (``count`` None:
    without end)."""
    gen = generator(game)
    gen.tier_spec(tier)          # an unknown tier fails before anything is made
    if count is not None and count < 0:
        raise GenerationError("count must be 0 or more")
    i = int(start)
    while count is None or i < start + count:
        yield gen.make(tier, seed, i)
        i += 1


class LevelSampler:
    """Generated levels of one (game, tier, seed) as a sampler: ``sampler[i]`` is level i,
    ``sampler()`` the next one, ``sampler(rng)`` one chosen by a numpy Generator (indices
    below ``pool``, so an env seeded the same way sees the same levels), ``iter(sampler)``
    the endless sequence. Made levels are kept (up to ``cache`` of them)."""

    def __init__(self, game: str, tier: str, seed: int = 0, *, pool: int = (1 << 31) - 1, cache: int = 256):
        self.gen = generator(game)
        self.gen.tier_spec(tier)
        self.game, self.tier, self.seed = game, tier, int(seed)
        self.pool = max(int(pool), 1)
        self._cache: dict[int, GeneratedLevel] = {}
        self._cache_size = max(int(cache), 0)
        self._next = 0

    def __getitem__(self, index: int) -> GeneratedLevel:
        index = int(index)
        got = self._cache.get(index)
        if got is None:
            got = self.gen.make(self.tier, self.seed, index)
            if self._cache_size:
                if len(self._cache) >= self._cache_size:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[index] = got
        return got

    def __call__(self, rng=None):
        """The Level of the next index (rng None) or of an index drawn from ``rng``."""
        if rng is None:
            i = self._next
            self._next += 1
        else:
            i = int(rng.integers(0, self.pool))
        return self[i].level

    sample = __call__          # the name Gymnasium-style level sources look for (sample(rng))

    def __iter__(self) -> Iterator[GeneratedLevel]:
        i = 0
        while True:
            yield self[i]
            i += 1

    def __repr__(self) -> str:
        return f"LevelSampler({self.game!r}, {self.tier!r}, seed={self.seed})"


def level_file(levels: list[GeneratedLevel], *, command: str = "") -> dict:
    """A level file (puzzles/levels/FORMAT.md) holding generated levels, one objective per
    tier in the game's difficulty order, levels in the given order."""
    from longpuzzle.engine.catalog import FILE_FORMAT, difficulty_order
    if not levels:
        raise GenerationError("no levels to write")
    game = levels[0].game
    if any(g.game != game for g in levels):
        raise GenerationError("a level file holds one game's levels")
    order = difficulty_order(get_puzzle(game))
    tiers = sorted({g.tier for g in levels}, key=lambda t: order.index(t) if t in order else len(order))
    gen = generator(game)
    return {"format": FILE_FORMAT, "game": game,
            "source": command or f"generated by {gen.name()} version {gen.version}",
            "generator": {"name": gen.name(), "version": gen.version},
            "objectives": [{"difficulty": t, "levels": [g.record for g in levels if g.tier == t]} for t in tiers]}
