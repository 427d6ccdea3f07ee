"""Kernels that are compiled only when they are needed.

The games' rule kernels are written for numba (``@njit(cache=True)``), but importing numba
and loading cached machine code costs about half a second, more than a one-shot command such
as ``longpuzzle show`` spends on the rules (a few calls). So the puzzle modules decorate their
kernels with ``njit`` from here: the decorated function stays a plain Python function inside
a :class:`Kernel` until the module's kernels are first needed compiled. Then numba is imported
and EVERY kernel of that module is replaced, in the module's namespace, by its numba
dispatcher (kernels calling each other compile together; callers that look kernels up on the
module, like ``Puzzle.kernels.step_into``, get the dispatcher directly from then on).

Modes (``set_mode``; ``mode()`` tells the current one):

    compiled      the first call compiles (or loads from numba's cache); the default
    auto          calls run as plain Python, exactly as under NUMBA_DISABLE_JIT=1 (which the
                  conformance suite checks gives identical bytes), until they have taken
                  AUTO_BUDGET seconds in all (0.15, or $LONGPUZZLE_JIT_AUTO_BUDGET);
                  then the kernels are compiled. ``one_shot()``
                  blocks use it: building the level catalogue, and the one-shot commands
                  (levels, show, check, replay of an episode text).
    interpreted   always plain Python (debugging; slow)

``compiled(module)`` compiles a module's kernels now (the code generator does this before it
writes code that imports them). Nothing here imports numba until a kernel is compiled.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from collections.abc import Callable

from longpuzzle.engine.cache import mark_key, note_first_compile


def _auto_budget(default: float = 0.15) -> float:
    """Seconds of interpreted kernel time before 'auto' compiles: $LONGPUZZLE_JIT_AUTO_BUDGET
    ("inf": one-shot work never compiles, "0": it always does; the tests use these so that no
    outcome depends on how fast a busy machine runs), else ``default``."""
    try:
        value = float(os.environ.get("LONGPUZZLE_JIT_AUTO_BUDGET", default))
    except ValueError:
        return default
    return value if value >= 0 else default


AUTO_BUDGET = _auto_budget()
_MODES = ("compiled", "auto", "interpreted")
_state = {"mode": "compiled", "spent": 0.0}
_lock = threading.RLock()
_depth = threading.local()


def set_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"jit mode must be one of {', '.join(_MODES)}, not {mode!r}")
    _state["mode"] = mode


def mode() -> str:
    return _state["mode"]


@contextmanager
def one_shot():
    """A block that calls kernels a few times (building the catalogue, a one-shot command):
    'auto' mode, unless the mode is 'interpreted' already."""
    with using("interpreted" if _state["mode"] == "interpreted" else "auto"):
        yield


@contextmanager
def using(m: str):
    """Run a block in jit mode ``m`` (the mode before is restored after it)."""
    before = _state["mode"]
    set_mode(m)
    try:
        yield
    finally:
        _state["mode"] = before


class Kernel:
    """A kernel not compiled yet: callable (as Python, or compiling its module first)."""

    def __init__(self, fn: Callable, options: dict):
        self.py_func = fn
        self.options = options
        self.module = fn.__module__
        self.name = fn.__name__
        self.dispatcher = None
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__

    def __repr__(self) -> str:
        state = "compiled" if self.dispatcher is not None else "not compiled yet"
        return f"<kernel {self.module}.{self.name} ({state})>"

    def __call__(self, *args: Any):
        d = self.dispatcher
        if d is not None:
            return d(*args)
        m = _state["mode"]
        if m == "compiled":
            return self.compile()(*args)
        depth = getattr(_depth, "n", 0)
        if depth:                              # inside another interpreted kernel: no timing
            return self.py_func(*args)
        if m == "auto" and _state["spent"] >= AUTO_BUDGET:
            return self.compile()(*args)
        _depth.n = 1
        t0 = time.perf_counter()
        try:
            return self.py_func(*args)
        finally:
            _depth.n = 0
            _state["spent"] += time.perf_counter() - t0

    def compile(self):
        """This kernel's numba dispatcher (compiling its whole module's kernels first)."""
        if self.dispatcher is None:
            compiled(sys.modules[self.module])
        return self.dispatcher


def njit(*args, **options):
    """``numba.njit``, deferred (see the module docstring): ``@njit`` or ``@njit(cache=True)``."""
    if args and callable(args[0]) and len(args) == 1 and not options:
        return Kernel(args[0], {})
    if args:
        raise TypeError("njit takes the function, or keyword options only (signatures are not supported)")
    return lambda fn: Kernel(fn, dict(options))


def compiled(module: ModuleType) -> ModuleType:
    """Replace every Kernel of ``module`` by its numba dispatcher (idempotent)."""
    with _lock:
        ks = [(k, v) for k, v in vars(module).items() if isinstance(v, Kernel)]
        if not ks:
            return module
        import numba

        _register_typeof()
        fresh = [k for _, k in ks if k.dispatcher is None]
        for k in fresh:
            k.dispatcher = numba.njit(**k.options)(k.py_func)
        cached = [k.dispatcher for k in fresh if k.options.get("cache")]
        try:
            stat = os.stat(module.__file__) if cached else None
        except (AttributeError, TypeError, OSError):  # no source file of its own: nothing numba caches by it
            stat = None
        if stat is not None:
            note_first_compile(f"the kernels of {module.__name__}",
                               mark_key(module.__file__, stat.st_mtime_ns, stat.st_size, numba.__version__,
                                        sys.version, os.environ.get("NUMBA_CACHE_DIR")),
                               lambda: cached)
        for name, k in ks:
            setattr(module, name, k.dispatcher)
    return module


_registered = False


def _register_typeof() -> None:
    """Let numba type a Kernel object that compiled code reaches before its module was
    compiled (a reference taken early): as its dispatcher."""
    global _registered
    if _registered:
        return
    from numba.extending import typeof_impl

    @typeof_impl.register(Kernel)
    def _typeof_kernel(val, c):
        return typeof_impl(val.compile(), c)

    _registered = True


def is_jitted(obj) -> bool:
    """A numba dispatcher (numba.extending.is_jitted), without importing numba if it is not loaded."""
    if "numba" not in sys.modules:
        return False
    from numba.extending import is_jitted as numba_is_jitted

    return numba_is_jitted(obj)


def is_compiled(module: ModuleType) -> bool:
    return not any(isinstance(v, Kernel) for v in vars(module).values())
