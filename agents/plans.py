"""The solver agent's plans, kept: for the process in memory, and on disk in the cache folder.

A plan the solvers search for is a function of the level's content, the state, the state
budget, whether the shortest plan was asked for and the code that searched (the searches
are exact and deterministic, with no clock). So a position met again is planned once per
process (the next episode of an objective, a level's start after a restart), and once per
cache folder across processes (a dataset's worker processes, the next job): the seconds a
hard Bolt Unscrew level's first plan takes are spent once.

    <cache_dir>/plans/<game>/<key[:2]>/<key>.json    {"level": id, "plan": [actions]}

``key`` is a SHA-256 over the code's digest (the sources of the solvers, the games' rules
and the engine, and the version), the level's content hash, the budget, the shortest flag
and the state's bytes. Disk keeps only plans that solve and whose search took at least
DISK_SECONDS (a quicker search costs less than a file). A plan read from disk is played
through the rules before it is used: one that does not solve the level from that state, or
a file that is not a plan, is ignored (and the position searched again). Writes are atomic
(a temporary file renamed), so worker processes may share the folder; a folder that cannot
be written only loses the disk copy.

LONGPUZZLE_PLAN_CACHE=0 keeps plans in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

import longpuzzle
from longpuzzle.engine.cache import cache_dir
from longpuzzle.engine.lru import LRU

log = logging.getLogger(__name__)

KEPT = 4096                 # plans kept in memory per process (the oldest go first)
DISK_SECONDS = 0.05         # a search at least this long is kept on disk
MISSING = object()          # lookup(): not kept, search

_memory = LRU(KEPT, threadsafe=True)
_code_digest: str | None = None
_warned: list = []          # the disk copy failed once in this process


def disk_enabled() -> bool:
    return os.environ.get("LONGPUZZLE_PLAN_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def folder() -> Path:
    return cache_dir() / "plans"


def code_digest() -> str:
    """SHA-256 over the version and the sources a plan depends on (solvers, puzzles, engine),
    worked out once per process."""
    global _code_digest
    if _code_digest is None:
        root = Path(longpuzzle.__file__).resolve().parent
        h = hashlib.sha256(str(getattr(longpuzzle, "__version__", "")).encode())
        for sub in ("solvers", "puzzles", "engine"):
            for f in sorted((root / sub).rglob("*.py")):
                h.update(str(f.relative_to(root)).encode() + b"\0")
                h.update(f.read_bytes())
        _code_digest = h.hexdigest()
    return _code_digest


def _key(level, state, budget: int, shortest: bool) -> str:
    h = hashlib.sha256(f"{code_digest()}|{level.id}|{level.sha256}|{int(budget)}|{bool(shortest)}|"
                       f"{state.dtype.str}|{state.shape}|".encode())
    h.update(state.tobytes())
    return h.hexdigest()


def _path(level, key: str) -> Path:
    return folder() / level.game / key[:2] / f"{key}.json"


def _memory_key(level, state, budget: int, shortest: bool) -> tuple:
    return (level.id, level.sha256, state.tobytes(), int(budget), bool(shortest))


def lookup(level, state, budget: int, shortest: bool):
    """The kept plan (a tuple of actions, or None for "no plan": a dead end or out of
    budget), or ``MISSING`` when this position must be searched."""
    from longpuzzle.solvers.core import check_solution    # lazy: the solvers' kernels load at the first plan

    mkey = _memory_key(level, state, budget, shortest)
    plan = _memory.get(mkey, MISSING)
    if plan is not MISSING or not disk_enabled():
        return plan
    path = _path(level, _key(level, state, budget, shortest))
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return MISSING
    except (OSError, ValueError) as e:
        log.warning("ignoring the unreadable kept plan %s: %s", path, e)
        return MISSING
    acts = doc.get("plan") if isinstance(doc, dict) else None
    if (not isinstance(acts, list) or doc.get("level") != level.id
            or not all(type(a) is int and 0 <= a < level.n_actions for a in acts)
            or not check_solution(level, state, acts)):
        log.warning("ignoring the kept plan %s: it is not a plan that solves %s from that state", path, level.id)
        return MISSING
    plan = tuple(acts)
    _remember(mkey, plan)
    return plan


def keep(level, state, budget: int, shortest: bool, plan, seconds: float) -> None:
    """Remember a searched plan (tuple of actions, or None) for the process, and on disk when
    it solves and took at least DISK_SECONDS."""
    _remember(_memory_key(level, state, budget, shortest), plan)
    if plan is None or seconds < DISK_SECONDS or not disk_enabled():
        return
    path = _path(level, _key(level, state, budget, shortest))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".plan-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"level": level.id, "plan": [int(a) for a in plan]}, f)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        if not _warned:                   # once a process: the next plans would fail alike
            _warned.append(str(e))
            log.warning("could not keep a plan in %s (plans stay in memory): %s", path.parent, e)


def _remember(mkey, plan) -> None:
    _memory.put(mkey, plan)


def clear_memory() -> None:
    """Forget the plans kept in memory (the disk copies stay)."""
    _memory.clear()

