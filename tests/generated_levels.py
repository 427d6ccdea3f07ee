"""Generated levels for the tests, made once per version of the code that makes them.

    made, cached = generated_levels.levels("nut_and_bolt", "hard", seed=2026, count=20)

Generation is deterministic in (game, tier, seed, index, generator version) and in the code
that draws, builds and certifies a level, so the levels of a recipe are a pure function of
that code. They are kept in ``cache_dir()/generated`` (engine/cache.py: the folder of every
compiled artefact, so a cold start is still one folder away), named by a digest of every
.py and .json file of the packages that make them (generators, solvers, puzzles, engine)
and of the recipe: any change there makes them again. A test that reads cached levels
checks them all as before (figures in the tier, certified solutions replayed through the
rules) and makes one of them again to see the cache still holds what the generator makes.
"""

from __future__ import annotations

import hashlib
import pickle
from functools import lru_cache
from pathlib import Path

import longpuzzle
from longpuzzle.engine.cache import cache_dir
from longpuzzle.solvers.generators import generate

SOURCES = ("generators", "solvers", "puzzles", "engine")


@lru_cache(maxsize=1)
def source_digest() -> str:
    root = Path(longpuzzle.__file__).resolve().parent
    h = hashlib.sha256()
    for sub in SOURCES:
        for p in sorted((root / sub).rglob("*")):
            if p.suffix in (".py", ".json") and p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode())
                h.update(b"\0")
                h.update(p.read_bytes())
    return h.hexdigest()


def levels(game: str, tier: str, *, seed: int, count: int) -> tuple[list, bool]:
    """(the GeneratedLevels 0..count-1 of (game, tier, seed), whether they came from the cache)."""
    stem = f"{game}-{tier}-s{int(seed)}-n{int(count)}"
    key = hashlib.sha256(f"{source_digest()}/{stem}".encode()).hexdigest()[:24]
    folder = cache_dir() / "generated"
    path = folder / f"{stem}-{key}.pickle"
    if path.is_file():
        try:
            return pickle.loads(path.read_bytes()), True
        except Exception:            # a torn or foreign file: make the levels again
            pass
    made = list(generate(game, tier, seed=seed, count=count))
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{stem}-*.pickle"):      # levels of older code
        old.unlink(missing_ok=True)
    tmp = path.with_suffix(f".{id(made)}.tmp")
    tmp.write_bytes(pickle.dumps(made))
    tmp.replace(path)
    return made, False
