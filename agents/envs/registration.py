"""Gymnasium ids of longpuzzle's environments, in the ``longpuzzle`` namespace.

    longpuzzle/<Game>-v0   one per registered puzzle (MazePaint, NutAndBolt, RushHour,
                           TruckEscape, BoltUnscrew, ColorConnect, and any third-party game):
                           mode="rules" (default, agents/envs/rules.py) or mode="pixels"
                           (agents/envs/pixels.py); vector entry point: the compiled batch env
                           (agents/envs/vector.py); max_episode_steps: the benchmark's per-game
                           step limit (agents/benchmark.json), else DEFAULT_MAX_STEPS
    longpuzzle/Suite-v0    the whole app from the home screen with an objective (agents/envs/suite.py),
                           max_episode_steps SUITE_MAX_STEPS

How Gymnasium finds them. Gymnasium 1.x (this package needs 1.1 or later; RLlib pins 1.2.2)
scans no entry-point group for plugins: environments exist once the module that registers them
is imported. So ``import longpuzzle`` registers everything, lazily, once gymnasium is
imported (agents/gym_hook.py; ``gymnasium.register_envs(longpuzzle)`` says so to linters); importing
``longpuzzle.agents.envs`` registers at once, and an id written as
``"longpuzzle.agents.envs:longpuzzle/MazePaint-v0"`` makes ``gymnasium.make`` / ``make_vec`` import it
first - the form to hand to tools that create envs in other processes (Ray / RLlib workers,
AsyncVectorEnv). The distribution also declares ``register_envs`` in the ``gymnasium.envs``
entry-point group under the name ``longpuzzle``: the plugin mechanism of Gymnasium 0.26 - 0.29
(which calls it inside ``gymnasium.envs.registration.namespace("longpuzzle")``), kept for tools
that still read it.
"""

from __future__ import annotations

import gymnasium as gym

from longpuzzle.engine.registry import get_puzzle, puzzle_ids

NAMESPACE = "longpuzzle"
VERSION = 0
DEFAULT_MAX_STEPS = 200
SUITE_MAX_STEPS = 2500
MODES = ("rules", "pixels")


def env_name(game: str) -> str:
    """maze_paint -> MazePaint."""
    return "".join(part[:1].upper() + part[1:] for part in game.split("_"))


def env_id(game: str) -> str:
    """The Gymnasium id of a game: ``longpuzzle/MazePaint-v0``."""
    return f"{NAMESPACE}/{env_name(game)}-v{VERSION}"


SUITE_ID = f"{NAMESPACE}/Suite-v{VERSION}"


def max_steps(game: str) -> int:
    from longpuzzle.agents.metrics import BENCHMARK
    return int(BENCHMARK["games"].get(game, {}).get("max_steps", DEFAULT_MAX_STEPS))


def make_game_env(game: str, mode: str = "rules", **kwargs) -> gym.Env:
    """The entry point of the game ids: a RulesEnv or a PixelEnv of ``game``."""
    get_puzzle(game)
    if mode == "rules":
        from longpuzzle.agents.envs.rules import RulesEnv
        return RulesEnv(game=game, **kwargs)
    if mode == "pixels":
        from longpuzzle.agents.envs.pixels import PixelEnv
        return PixelEnv(game=game, **kwargs)
    raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")


# what gymnasium.make reads before calling the entry point (so it can add RenderCollection
# for "rgb_array_list"); "ansi" is the rules mode's only (pixel mode refuses it)
make_game_env.metadata = {"render_modes": ["rgb_array", "human", "ansi"], "render_fps": 30}


def register_envs() -> list[str]:
    """Register (or refresh) an id for every registered puzzle and the suite; returns the
    ids. Safe to call again (e.g. after registering a third-party puzzle)."""
    ids = []
    for game in puzzle_ids():                 # the declarations: no game's rules are imported
        ids.append(_register(env_id(game), "longpuzzle.agents.envs.registration:make_game_env",
                             vector_entry_point="longpuzzle.agents.envs.vector:make_vector_env",
                             max_episode_steps=max_steps(game), kwargs={"game": game}))
    ids.append(_register(SUITE_ID, "longpuzzle.agents.envs.suite:SuiteEnv", max_episode_steps=SUITE_MAX_STEPS))
    return ids


def _register(full_id: str, entry_point: str, **kw) -> str:
    ns = gym.envs.registration.current_namespace or NAMESPACE
    name = full_id.split("/", 1)[1]
    rid = f"{ns}/{name}"
    old = gym.registry.get(rid)
    if old is None or old.entry_point != entry_point or old.kwargs != kw.get("kwargs", {}) \
            or old.max_episode_steps != kw.get("max_episode_steps"):
        if old is not None:
            del gym.registry[rid]            # refreshed on purpose: no "overriding" warning
        gym.register(rid, entry_point=entry_point, **kw)
    return rid


def registered_ids() -> list[str]:
    """Every longpuzzle id in Gymnasium's registry."""
    return sorted(i for i, spec in gym.registry.items() if spec.namespace == NAMESPACE)
