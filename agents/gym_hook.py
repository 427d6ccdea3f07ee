"""Gymnasium finds longpuzzle's environments once ``import longpuzzle`` has run, without that
import paying for Gymnasium (the convention of Gymnasium's plugin packages:
``import longpuzzle; gymnasium.make("longpuzzle/MazePaint-v0")``, or
``gymnasium.register_envs(longpuzzle)`` to tell linters the import is used).

    install()   called by ``longpuzzle/__init__.py``: if gymnasium is already imported, the ids
                are registered now; otherwise a one-shot import hook registers them right after
                ``gymnasium`` itself has been imported (never before: a program that imports
                longpuzzle without Gymnasium never loads it)

Registering costs the discovery of the puzzles (their modules, no compiled kernels) and the
light ``longpuzzle.agents.envs`` package (its classes load on first use): ~25 ms, measured in
benchmarks/bench_import.py.
"""

from __future__ import annotations

import importlib.abc
import sys
import warnings


def _register() -> None:
    """Register every id; a broken third-party puzzle must not break ``import gymnasium``."""
    if "longpuzzle.agents.envs" in sys.modules:
        return                  # imported (or being imported): the package registers the ids itself
    try:
        from longpuzzle.agents.envs.registration import register_envs
        register_envs()
    except Exception as e:  # noqa: BLE001  # pragma: no cover - reported, not raised: the import itself must succeed
        warnings.warn(f"longpuzzle could not register its Gymnasium environments: {type(e).__name__}: {e}",
                      stacklevel=2)


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, followed by the registration once the module has executed."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        # the module keeps its real loader (resources and reloads go through it)
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        _register()

    def __getattr__(self, name):             # anything else a caller asks of a loader
        return getattr(self.loader, name)


class _GymnasiumWatcher(importlib.abc.MetaPathFinder):
    """Waits for ``import gymnasium`` (a submodule import imports it first), then steps aside."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        _uninstall()
        for finder in sys.meta_path:            # the finder that would have found it without us
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None                            # not installed: the import fails as it would


def _uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _GymnasiumWatcher)]


def install() -> None:
    if "gymnasium" in sys.modules:
        _register()
    elif not any(isinstance(f, _GymnasiumWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumWatcher())
