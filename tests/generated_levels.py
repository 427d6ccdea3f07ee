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
The first levels of a longer cached run serve a shorter request of the same recipe, and the
files of other code are kept a while (worktrees of several versions share the folder).
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


KEEP = 4          # files of other code kept per recipe: worktrees of other versions share the folder


def _key(stem: str) -> str:
    return hashlib.sha256(f"{source_digest()}/{stem}".encode()).hexdigest()[:24]


def _mtime(p: Path) -> int:
    try:
        return p.stat().st_mtime_ns
    except OSError:                  # gone meanwhile (another process pruned it)
        return 0


def levels(game: str, tier: str, *, seed: int, count: int) -> tuple[list, bool]:
    """(the GeneratedLevels 0..count-1 of (game, tier, seed), whether they came from the cache).

    Level i of a recipe does not depend on how many levels are made (random access by index),
    so the first ``count`` levels of a longer cached run of this code serve too."""
    head = f"{game}-{tier}-s{int(seed)}-n"
    stem = f"{head}{int(count)}"
    folder = cache_dir() / "generated"
    path = folder / f"{stem}-{_key(stem)}.pickle"
    longer = []
    for p in folder.glob(f"{head}*-*.pickle") if folder.is_dir() else ():
        n, _, key = p.stem[len(head):].partition("-")
        if n.isdigit() and int(n) > count and key == _key(f"{head}{n}"):
            longer.append(p)
    for p in [path, *longer]:
        if p.is_file():
            try:
                return pickle.loads(p.read_bytes())[:count], True
            except Exception:        # a torn or foreign file: make the levels again
                pass
    made = list(generate(game, tier, seed=seed, count=count))
    folder.mkdir(parents=True, exist_ok=True)
    # levels of other code: the newest KEEP stay (another worktree's, which would otherwise
    # make them again on its next run), older ones go
    others = sorted((p for p in folder.glob(f"{stem}-*.pickle") if p != path), key=_mtime, reverse=True)
    for old in others[KEEP:]:
        old.unlink(missing_ok=True)
    tmp = path.with_suffix(f".{id(made)}.tmp")
    tmp.write_bytes(pickle.dumps(made))
    tmp.replace(path)
    return made, False
