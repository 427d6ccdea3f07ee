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
