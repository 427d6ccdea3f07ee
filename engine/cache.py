"""Where longpuzzle keeps what it compiles: one folder for the generated kernels
(longpuzzle.engine.specialize) and numba's own cache of every compiled function.

    $LONGPUZZLE_CACHE_DIR, else $XDG_CACHE_HOME/longpuzzle, else ~/.cache/longpuzzle
        kernels/    generated per-game modules (and numba's cache of them)
        numba/      numba's cache of the games' kernels, unless $NUMBA_CACHE_DIR is set

So one folder holds every compiled artefact: deleting it (or pointing LONGPUZZLE_CACHE_DIR at
an empty folder) gives a truly cold start. An explicit NUMBA_CACHE_DIR is respected. This
module imports nothing heavy: it runs before numba is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_dir() -> Path:
    env = os.environ.get("LONGPUZZLE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "longpuzzle"


def use_project_numba_cache() -> None:
    """Point numba's cache at ``cache_dir()/numba`` unless NUMBA_CACHE_DIR says otherwise.

    numba reads NUMBA_CACHE_DIR when it is imported, so this sets the variable (which child
    processes inherit too); if numba was imported already, its loaded configuration is set
    the same way."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    path = str(cache_dir() / "numba")
    os.environ["NUMBA_CACHE_DIR"] = path
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = path


# ---- the first compile, said once --------------------------------------------------------
# numba compiles a kernel the first time it is called and keeps the machine code in its cache
# (above); a cold cache costs a command tens of seconds of compiling, after which every run
# loads the code in a fraction of a second. So that a person at a terminal is not left
# wondering, the first compile is said on stderr in one line (as tools that build a cache on
# first use do), and only when stderr is a terminal: scripts and pipes see nothing. Whether a
# set of kernels was compiled before is kept as a mark file per set under cache_dir()/compiled,
# written at exit once its kernels have code; the marks live beside the code they stand for,
# so deleting the cache folder forgets both.

COLD_NOTE = "compiling {what} once (about 10 s, up to a minute on a busy machine); later runs load them from {where}"
_noted: list[str] = []                 # the mark names this process has said it compiles
_to_mark: list[tuple[Path, object]] = []


def mark_key(*parts: object) -> str:
    """A mark file's name from what decides whether numba's cached code is still valid (for
    example a source file's path, modification time and size, numba's and Python's versions)."""
    import hashlib

    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:24]


def note_first_compile(what: str, key: str, dispatchers, stream=None) -> bool:
    """Before kernels ``what`` run for the first time in this process: if their mark ``key``
    is missing (never compiled into this cache), say that they compile now, on ``stream``
    (default stderr) if it is a terminal, at most once a process; at exit, mark them compiled
    if ``dispatchers()`` (numba dispatchers) then hold code. Returns whether the line was said."""
    if key in _noted:
        return False
    _noted.append(key)
    mark = cache_dir() / "compiled" / key
    if mark.exists() or _jit_disabled():
        return False
    if not _to_mark:
        import atexit

        atexit.register(_write_marks)
    _to_mark.append((mark, dispatchers))
    stream = sys.stderr if stream is None else stream
    said = len(_to_mark) == 1 and _is_terminal(stream)
    if said:
        print("longpuzzle: " + COLD_NOTE.format(what=what, where=cache_dir()) + " ...", file=stream, flush=True)
    return said


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):         # a closed or replaced stream
        return False


def _jit_disabled() -> bool:
    """NUMBA_DISABLE_JIT=1: nothing is compiled, nothing to say."""
    config = sys.modules.get("numba.core.config")
    if config is not None:
        return bool(getattr(config, "DISABLE_JIT", False))
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _write_marks() -> None:
    for mark, dispatchers in _to_mark:
        try:
            if any(getattr(d, "signatures", None) for d in dispatchers()):
                mark.parent.mkdir(parents=True, exist_ok=True)
                mark.touch()
        except OSError:                           # a read-only cache: the line is said again next time
            pass
