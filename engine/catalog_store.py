"""Named, versioned catalogue snapshots, next to the built-in catalogue.

    longpuzzle catalog snapshot NAME --from FILE ...     (snapshot() here)
    --catalog NAME | NAME@VERSION | FILE.json | builtin  (open_catalog() and catalog_option() here)

A snapshot fixes a set of objectives and levels for evaluation, as the paper refreshes its
catalogue between evaluation snapshots. Each is one JSON file ``<store>/<NAME>/v<VERSION>.json``
(store: $LONGPUZZLE_CATALOG_DIR, else $XDG_DATA_HOME/longpuzzle/catalogs, else
~/.local/share/longpuzzle/catalogs)::

    {"format": "longpuzzle-catalog/1", "name": NAME, "version": 3, "created": "2026-...Z",
     "hash": <sha256 of the levels: Catalog.content_hash>, "generators": {game: version},
     "sources": [the files it was made from], "games": {game: <level-file document>}}

Versions count from 1; a snapshot whose levels equal the latest version's (same hash) makes
no new version. A stored file is checked on load (format, levels, hash): a changed or
corrupt file is an error, never silently another catalogue.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from collections.abc import Iterable

from longpuzzle.engine.catalog import (
    BUILTIN, Catalog, builtin_catalog, builtin_sources, difficulty_order, levels_hash, parse_level_file,
)
from longpuzzle.engine.errors import LevelFormatError, LongPuzzleError
from longpuzzle.engine.protocol import canonical_json
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.textio import loads, read_text

SNAPSHOT_FORMAT = "longpuzzle-catalog/1"
STORE_ENV = "LONGPUZZLE_CATALOG_DIR"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class CatalogError(LongPuzzleError):
    """An unknown catalogue name or version, a bad name, or a corrupt snapshot file."""


def store_dir() -> Path:
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "longpuzzle" / "catalogs"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or name == BUILTIN:
        raise CatalogError(f"{name!r} is not a usable catalogue name (letters, digits, '_', '.', '-'; "
                           f"not {BUILTIN!r})")
    return name


def _versions(name: str) -> list[int]:
    folder = store_dir() / name
    out = []
    if folder.is_dir():
        for p in folder.glob("v*.json"):
            if p.stem[1:].isdigit():
                out.append(int(p.stem[1:]))
    return sorted(out)


def _merge(files: Iterable[str | Path], with_builtin: bool) -> tuple[dict, dict, list[str]]:
    """({game: level-file doc}, {game: generator version}, sources) of the files: a game's
    objectives from several files are merged (a difficulty may come from one file only)."""
    games: dict[str, dict] = {}
    gens: dict[str, object] = {}
    seen: dict[tuple[str, str], str] = {}
    sources = []
    for path in files:
        path = Path(path)
        # UTF-8 only (a binary or UTF-16 file is one LevelFormatError naming it, not a traceback)
        text = read_text(path, lambda m, f=str(path): LevelFormatError(m, file=f), "the level file")
        game, objectives, _ = parse_level_file(text, str(path))      # every level validated here
        doc = json.loads(text)
        sources.append(str(path))
        entry = games.setdefault(game, {"objectives": {}})
        for obj in doc["objectives"]:
            d = obj["difficulty"]
            if (game, d) in seen:
                raise CatalogError(f"{game}/{d} comes from both {seen[(game, d)]} and {path}")
            seen[(game, d)] = str(path)
            entry["objectives"][d] = obj["levels"]
        g = doc.get("generator")
        if isinstance(g, dict) and "version" in g:
            gens[game] = g["version"]
    if with_builtin:
        for game, (text, file) in builtin_sources().items():
            if game not in games:
                doc = json.loads(text)
                games[game] = {"objectives": {o["difficulty"]: o["levels"] for o in doc["objectives"]}}
                sources.append(f"builtin:{file}")
    docs = {}
    for game, entry in games.items():
        order = difficulty_order(get_puzzle(game))
        diffs = sorted(entry["objectives"], key=lambda d: order.index(d) if d in order else len(order))
        docs[game] = {"format": "longpuzzle-levels/1", "game": game, "source": "catalogue snapshot",
                      "objectives": [{"difficulty": d, "levels": entry["objectives"][d]} for d in diffs]}
    return docs, gens, sources


def _catalog_of(docs: dict, *, name: str, version: int | None, generators: dict, where: str) -> Catalog:
    sources = {g: (json.dumps(doc, ensure_ascii=False), f"{where}:{g}") for g, doc in docs.items()}
    return Catalog(sources=sources, name=name, version=version, generators=generators)


def snapshot(name: str, files: Iterable[str | Path], *, with_builtin: bool = False) -> dict:
    """Store the levels of ``files`` as catalogue ``name`` (a new version if they differ from
    the latest). Returns {"name", "version", "hash", "path", "created", "levels", "objectives"}."""
    _check_name(name)
    files = list(files)
    if not files:
        raise CatalogError("a snapshot needs at least one level file (--from FILE)")
    docs, gens, sources = _merge(files, with_builtin)
    cat = _catalog_of(docs, name=name, version=None, generators=gens, where=name)
    digest = cat.content_hash
    versions = _versions(name)
    info = {"name": name, "hash": digest, "levels": len(cat.level_ids()), "objectives": len(cat.objectives())}
    if versions:
        latest = open_catalog(f"{name}@{versions[-1]}")
        if latest.content_hash == digest:
            return {**info, "version": versions[-1], "created": False, "path": str(_path(name, versions[-1]))}
    version = (versions[-1] if versions else 0) + 1
    body = {"format": SNAPSHOT_FORMAT, "name": name, "version": version,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "hash": digest,
            "generators": gens, "sources": sources, "games": docs}
    path = _path(name, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    if path.exists():            # another process took this version meanwhile: never overwrite
        os.unlink(tmp)
        raise CatalogError(f"{name}@{version} was created meanwhile; run the snapshot again")
    os.replace(tmp, path)
    return {**info, "version": version, "created": True, "path": str(path)}


def _path(name: str, version: int) -> Path:
    return store_dir() / name / f"v{version}.json"


def load_snapshot_file(path: str | Path, spec: str = "") -> Catalog:
    path = Path(path)
    # every way the file can be unreadable (not UTF-8, not JSON, nested too deeply) is one CatalogError
    body = loads(read_text(path, CatalogError, f"catalogue {path}"), CatalogError, f"catalogue {path}")
    if not isinstance(body, dict) or body.get("format") != SNAPSHOT_FORMAT:
        raise CatalogError(f"{path} is not a catalogue snapshot (expected format {SNAPSHOT_FORMAT!r})")
    try:
        name, version, docs = body["name"], int(body["version"]), body["games"]
        if not isinstance(docs, dict) or not docs:
            raise TypeError("no games")
        if levels_hash(docs) != body.get("hash"):
            raise CatalogError(f"catalogue {path}: its levels do not match its recorded hash (changed or corrupt)")
        cat = _catalog_of(docs, name=str(name), version=version, generators=dict(body.get("generators") or {}),
                          where=f"{name}@{version}")
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, LongPuzzleError):
            raise
        raise CatalogError(f"catalogue {path} is malformed ({type(e).__name__}: {e})") from None
    if cat.content_hash != body.get("hash"):
        raise CatalogError(f"catalogue {path}: its levels do not match its recorded hash (changed or corrupt)")
    cat.spec = spec or str(path.resolve())
    cat.path = str(path)
    return cat


_OPENED: dict[tuple[str, float], Catalog] = {}


def open_catalog(spec: str) -> Catalog:
    """A catalogue by name (latest version), NAME@VERSION, snapshot file path, or "builtin"."""
    spec = str(spec).strip()
    if spec in ("", BUILTIN):
        return builtin_catalog()
    p = Path(spec)
    if spec.endswith(".json") and p.is_file():
        return _cached(p, str(p.resolve()))
    name, _, ver = spec.partition("@")
    _check_name(name)
    versions = _versions(name)
    if not versions:
        known = ", ".join(r["name"] for r in list_catalogs() if r["latest"]) or "none yet"
        raise CatalogError(f"no catalogue {name!r} in {store_dir()} (stored: {known}; "
                           f"make one with `longpuzzle catalog snapshot {name} --from FILE`)")
    if ver:
        if not ver.isdigit() or int(ver) not in versions:
            raise CatalogError(f"catalogue {name!r} has no version {ver!r} (versions: {', '.join(map(str, versions))})")
        v = int(ver)
    else:
        v = versions[-1]
    return _cached(_path(name, v), f"{name}@{v}")


def _cached(path: Path, spec: str) -> Catalog:
    key = (str(path.resolve()), path.stat().st_mtime)
    got = _OPENED.get(key)
    if got is None:
        got = _OPENED[key] = load_snapshot_file(path, spec)
    return got


def list_catalogs() -> list[dict]:
    """Every stored catalogue version: name, version, latest, hash, created, levels, objectives."""
    rows = []
    root = store_dir()
    if not root.is_dir():
        return rows
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        versions = _versions(folder.name)
        for v in versions:
            try:
                body = loads(read_text(_path(folder.name, v), CatalogError), CatalogError)
                games = body.get("games", {})
                rows.append({"name": folder.name, "version": v, "latest": v == versions[-1], "hash": body.get("hash", ""),
                             "created": body.get("created", ""),
                             "objectives": sum(len(d.get("objectives", [])) for d in games.values()),
                             "levels": sum(len(o.get("levels", [])) for d in games.values()
                                           for o in d.get("objectives", []))})
            except (CatalogError, ValueError, AttributeError):
                rows.append({"name": folder.name, "version": v, "latest": v == versions[-1], "hash": "",
                             "created": "", "objectives": 0, "levels": 0, "corrupt": True})
    return rows


CATALOG_ENV = "LONGPUZZLE_CATALOG"     # the user's default of --catalog, read once when a command line is parsed


def catalog_option(command=None):
    """A click decorator: ``--catalog NAME`` (default $LONGPUZZLE_CATALOG, else builtin) opens
    the catalogue and passes it to the command as its ``catalog`` argument (a Catalog), which
    the command passes on to whatever looks levels up. Nothing is switched process-wide:
    processes the command starts get the catalogue explicitly (job arguments)."""
    import click

    def opened(ctx, param, value):
        return open_catalog(value) if value else builtin_catalog()

    deco = click.option("--catalog", "catalog", metavar="NAME", default=None, envvar=CATALOG_ENV, is_eager=True,
                        callback=opened,
                        help="Catalogue to use: a snapshot NAME, NAME@VERSION, a snapshot file, or builtin "
                             f"[default: ${CATALOG_ENV}, else builtin].")
    return deco(command) if command is not None else deco


__all__ = ["CatalogError", "SNAPSHOT_FORMAT", "canonical_json", "catalog_option", "list_catalogs",
           "load_snapshot_file", "open_catalog", "snapshot", "store_dir"]
