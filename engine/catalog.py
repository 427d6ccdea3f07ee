"""The level catalogue: level files -> objectives -> levels.

A level file (``puzzles/levels/<game>.json``, format in puzzles/levels/FORMAT.md) holds one
game's objectives in order; an objective is one difficulty with its levels in order. Level
ids are ``game/difficulty/n`` with n counted from 1. Files are data, edited by people, and
every problem in them is reported with the file, the level and the field.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable

from longpuzzle.engine import jit
from longpuzzle.engine.textio import loads, read_text
from longpuzzle.engine.lru import LRU
from longpuzzle.engine.errors import LevelFormatError, UnknownLevelError, UnknownGameError
from longpuzzle.engine.protocol import Level, canonical_json
from longpuzzle.engine.registry import get_puzzle, puzzle_ids, specs

FILE_FORMAT = "longpuzzle-levels/1"
BEYOND = "beyond"      # the generators' tier above a game's hardest: a difficulty of every game, ordered last


def difficulty_order(puzzle) -> tuple[str, ...]:
    """A game's difficulties in order, ``beyond`` (every game's, for generated levels) last."""
    return tuple(puzzle.difficulties) + ((BEYOND,) if BEYOND not in puzzle.difficulties else ())


@dataclass(frozen=True)
class Objective:
    game: str
    difficulty: str
    level_ids: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.game}/{self.difficulty}"


def _fail(msg: str, file: str, level: str = "", field: str = "") -> LevelFormatError:
    return LevelFormatError(msg, file=file, level=level, field=field)


def parse_level_file(text: str, file: str = "<text>") -> tuple[str, list[Objective], dict[str, Level]]:
    """Parse a level file's text. Returns (game, objectives, levels by id)."""
    doc = loads(text, lambda m: _fail(m, file), "the level file")
    if not isinstance(doc, dict):
        raise _fail("the top level must be a JSON object", file)
    if doc.get("format") != FILE_FORMAT:
        raise _fail(f"expected \"format\": \"{FILE_FORMAT}\", found {doc.get('format')!r}", file, field="format")
    game = doc.get("game")
    if not isinstance(game, str):
        raise _fail("missing game id", file, field="game")
    try:
        puzzle = get_puzzle(game)
    except UnknownGameError as e:
        raise _fail(str(e), file, field="game") from None
    objs = doc.get("objectives")
    if not isinstance(objs, list) or not objs:
        raise _fail("must be a non-empty list of {\"difficulty\": ..., \"levels\": [...]}", file, field="objectives")
    objectives: list[Objective] = []
    levels: dict[str, Level] = {}
    seen: set[str] = set()
    for oi, obj in enumerate(objs):
        if not isinstance(obj, dict):
            raise _fail("each objective must be an object", file, field=f"objectives[{oi}]")
        diff = obj.get("difficulty")
        if not isinstance(diff, str) or not diff:
            raise _fail("missing difficulty", file, field=f"objectives[{oi}].difficulty")
        if puzzle.difficulties and diff not in difficulty_order(puzzle):
            raise _fail(f"unknown difficulty {diff!r} for {game} (known: {', '.join(difficulty_order(puzzle))})",
                        file, field=f"objectives[{oi}].difficulty")
        if diff in seen:
            raise _fail(f"difficulty {diff!r} appears twice", file, field=f"objectives[{oi}].difficulty")
        seen.add(diff)
        recs = obj.get("levels")
        if not isinstance(recs, list) or not recs:
            raise _fail("must be a non-empty list of level records", file, field=f"objectives[{oi}].levels")
        ids = []
        for li, rec in enumerate(recs):
            lid = f"{game}/{diff}/{li + 1}"
            if not isinstance(rec, dict):
                raise _fail("a level record must be a JSON object", file, level=lid)
            try:
                level = puzzle.build_level(rec, difficulty=diff, number=li + 1, where=file)
            except LevelFormatError:
                raise
            except (KeyError, TypeError, ValueError, IndexError) as e:
                raise _fail(f"malformed level record ({type(e).__name__}: {e})", file, level=lid) from None
            object.__setattr__(level, "source", file)
            levels[lid] = level
            ids.append(lid)
        objectives.append(Objective(game, diff, tuple(ids)))
    return game, objectives, levels


BUILTIN = "builtin"


def levels_hash(docs: dict[str, dict]) -> str:
    """The content hash of a catalogue given as {game: level-file document}: sha256 of the
    canonical JSON of [{"game", "objectives": [{"difficulty", "levels": [records]}]}] in the
    benchmark's game order (sources, names of files and other top-level keys do not count)."""
    order = puzzle_ids()
    body = [{"game": g, "objectives": [{"difficulty": o["difficulty"], "levels": o["levels"]}
                                       for o in docs[g]["objectives"]]}
            for g in sorted(docs, key=lambda g: order.index(g) if g in order else len(order))]
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def builtin_sources() -> dict[str, tuple[str, str]]:
    """{game: (text, file)} of the level files the games declare (GameSpec.levels)."""
    sources: dict[str, tuple[str, str]] = {}
    for s in specs():
        got = s.level_text()
        if got is not None:
            sources[s.id] = got
    return sources


class Catalog:
    """Objectives and levels of every registered game, from the built-in level files plus
    any extra files given (an extra file for a game replaces the built-in one).

    A catalogue has an identity that every result records: ``name`` ("builtin", or a
    snapshot's name: engine/catalog_store.py), ``version`` (a snapshot's, else None) and
    ``content_hash`` (sha256 of its objectives and level records, canonical JSON: equal
    hashes mean the same levels). ``sources``: {game: (level-file text, file name)} instead
    of the built-in files (a snapshot's games only)."""

    def __init__(self, extra_files: Iterable[str | Path] = (), *, sources: dict[str, tuple[str, str]] | None = None,
                 name: str | None = None, version: int | None = None, generators: dict | None = None):
        self._objectives: dict[str, list[Objective]] = {}
        self._levels: dict[str, Level] = {}
        self._files: dict[str, str] = {}
        self._records: dict[str, list] = {}
        extra_files = list(extra_files)
        self.name = name or (BUILTIN if sources is None and not extra_files else "custom")
        self.version = version
        self.generators = dict(generators or {})
        # the built-in files are parsed per game on first use (a command about one game builds
        # only that game's levels, and runs only its rules); files and sources given here are
        # the user's, parsed now so that a problem in them is reported at once
        self._pending: dict[str, tuple[str, str]] = builtin_sources() if sources is None else {}
        self._lock = threading.Lock()
        given = dict(sources or {})
        for path in extra_files:
            path = Path(path)
            text = read_text(path, lambda m, path=path: LevelFormatError(m, file=str(path)), "the level file")
            game, _, _ = parse_level_file(text, str(path))
            given[game] = (text, str(path))
            self._pending.pop(game, None)
        for text, file in given.values():
            self._parse(text, file)
        self._hash = None

    def _parse(self, text: str, file: str) -> None:
        with jit.one_shot():                   # building levels calls the rules a few times
            g, objectives, levels = parse_level_file(text, file)
        self._objectives[g] = objectives
        self._levels.update(levels)
        self._files[g] = file

    def _load(self, game: str | None = None) -> None:
        """Parse a pending built-in game's file (every pending game's when ``game`` is None)."""
        if not self._pending or (game is not None and game not in self._pending):
            return
        with self._lock:
            for g in ([game] if game is not None else list(self._pending)):
                if g in self._pending:
                    self._parse(*self._pending[g])
                    del self._pending[g]

    @property
    def content_hash(self) -> str:
        """sha256 over the catalogue's games, objectives and level records (canonical JSON)."""
        if self._hash is None:
            self._hash = levels_hash({g: self.level_file(g) for g in self.games()})
        return self._hash

    @property
    def label(self) -> str:
        """``name`` or ``name@version``."""
        return self.name if self.version is None else f"{self.name}@{self.version}"

    def identity(self) -> dict:
        """What result files record: {"name", "version", "hash"}."""
        return {"name": self.name, "version": self.version, "hash": self.content_hash}

    def level_file(self, game: str) -> dict:
        """The game's part of the catalogue as a level-file document."""
        objs = self.objectives(game)
        return {"format": FILE_FORMAT, "game": game, "source": f"catalogue {self.label}",
                "objectives": [{"difficulty": o.difficulty, "levels": [self._levels[lid].data for lid in o.level_ids]}
                               for o in objs]}

    def games(self) -> list[str]:
        order = puzzle_ids()
        return [g for g in order if g in self._objectives or g in self._pending]

    def objectives(self, game: str | None = None) -> list[Objective]:
        games = [game] if game else self.games()
        out = []
        for g in games:
            self._load(g)
            if g not in self._objectives:
                get_puzzle(g)  # raises UnknownGameError for unknown ids
                raise UnknownLevelError(f"no levels are loaded for game {g!r}")
            out.extend(self._objectives[g])
        return out

    def objective(self, objective_id: str) -> Objective:
        for o in self.objectives():
            if o.id == objective_id:
                return o
        raise UnknownLevelError(f"unknown objective {objective_id!r}; "
                                f"objectives are game/difficulty, e.g. {self.objectives()[0].id}")

    def level_ids(self, game: str | None = None) -> list[str]:
        return [lid for o in self.objectives(game) for lid in o.level_ids]

    def levels(self, game: str | None = None) -> list[Level]:
        return [self._levels[lid] for lid in self.level_ids(game)]

    def level(self, level_id: str) -> Level:
        if not isinstance(level_id, str):
            raise UnknownLevelError(f"a level id is text like 'maze_paint/hard/3', not {level_id!r}")
        lid = level_id.strip()
        self._load(lid.split("/", 1)[0])
        if lid in self._levels:
            return self._levels[lid]
        parts = lid.split("/")
        if len(parts) != 3:
            raise UnknownLevelError(f"level ids look like game/difficulty/n (e.g. maze_paint/hard/3), got {level_id!r}")
        game, diff, num = parts
        get_puzzle(game)  # unknown game -> UnknownGameError
        objs = {o.difficulty: o for o in self.objectives(game)}
        if diff not in objs:
            raise UnknownLevelError(f"{game} has no difficulty {diff!r} (it has: {', '.join(objs)})")
        n = len(objs[diff].level_ids)
        raise UnknownLevelError(f"{game}/{diff} has levels 1..{n}; {num!r} is not one of them")

    def file_of(self, game: str) -> str:
        self._load(game)
        return self._files[game]

    # A catalogue is a value passed to what needs it; to another process (a job's argument,
    # a worker, a Ray task) it travels as its level data, checked there by its content hash.
    # The built-in catalogue travels as a reference: every process has it.
    spec = ""        # how the store names it (NAME@VERSION, a snapshot file's path), else ""
    path = ""        # the snapshot file it was read from, else ""

    def to_doc(self) -> dict:
        """The catalogue as JSON-able data another process rebuilds it from."""
        return {"hash": self.content_hash, "name": self.name, "version": self.version, "spec": self.spec,
                "generators": dict(self.generators),
                "sources": {g: (json.dumps(self.level_file(g)), f"{self.label}:{g}") for g in self.games()}}

    def __reduce__(self):
        if self is _DEFAULT or (self.name == BUILTIN and self.content_hash == builtin_catalog().content_hash):
            return (builtin_catalog, ())
        return (_catalog_from_doc, (self.to_doc(),))


_DEFAULT: Catalog | None = None


def builtin_catalog() -> Catalog:
    """The catalogue of the built-in level files (loaded once): the default of every
    function that takes a ``catalog`` and is given none."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Catalog()
    return _DEFAULT


# Catalogues received from other processes (job arguments: pickled as level data), by content
# hash, so the jobs a worker runs share one Catalog value per catalogue (and so its caches).
_RECEIVED = LRU(8, threadsafe=True)


def _catalog_from_doc(doc: dict) -> Catalog:
    """Unpickling a Catalog (Catalog.__reduce__): rebuilt from its level data once per
    process, checked by its content hash (a catalogue that changed on the way is an error)."""
    got = _RECEIVED.get(doc["hash"])
    if got is not None:
        return got
    cat = Catalog(sources={g: tuple(v) for g, v in doc["sources"].items()}, name=doc["name"],
                  version=doc["version"], generators=doc["generators"])
    if cat.content_hash != doc["hash"]:
        raise LevelFormatError(f"catalogue {cat.label} rebuilt from the data sent to this process "
                               "is not the sender's (its content hash differs)")
    cat.spec = doc.get("spec", "")
    return _RECEIVED.put(doc["hash"], cat)


def load_level(level_id: str | Level, catalog: Catalog | None = None) -> Level:
    """A level of ``catalog`` (default: the built-in one) by id (a Level passes through)."""
    if isinstance(level_id, Level):
        return level_id
    return (catalog or builtin_catalog()).level(level_id)
