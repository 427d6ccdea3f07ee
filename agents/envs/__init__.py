"""Gymnasium environments of longpuzzle (importing this package, or ``longpuzzle`` and then
gymnasium, registers them: longpuzzle/agents/gym_hook.py).

    import gymnasium, longpuzzle
    env = gymnasium.make("longpuzzle/MazePaint-v0", level="maze_paint/hard/3")          # rules
    env = gymnasium.make("longpuzzle/MazePaint-v0", mode="pixels", style="3d")          # frames
    env = gymnasium.make("longpuzzle/Suite-v0", objective="maze_paint/hard")            # the paper's
    envs = gymnasium.make_vec("longpuzzle/NutAndBolt-v0", num_envs=512, level="nut_and_bolt/hard")

The modules, one job each:

    registration.py   the ids (one per game, plus Suite-v0) and how Gymnasium finds them
    levels.py         level sources: a level, a list, an objective, a sampler (generators)
    state_space.py    the rules mode's observation (true per-element bounds) and action spaces
    rules.py          RulesEnv: a game's rules state machine (Discrete actions, action masks)
    gui_space.py      the GUI action set as a Dict space; samples <-> GUI action dicts
    screen.py         what the pixel envs share (frames, GUI actions, public feedback)
    pixels.py         PixelEnv: a game's level screen, launched directly, driven by GUI actions
    suite.py          SuiteEnv: the home screen with an objective
    vector.py         PuzzleVectorEnv: N rules envs in one compiled call per step
    oracle_signal.py  the oracle in the envs: info["oracle"] and reward="oracle"
    wrappers.py       DiscreteGUIActions: a click grid and swipes as Discrete(n)
    viewer.py         the "human" render mode's window

Every env is constructible from plain keyword arguments (a config dict) and picklable, so
worker pools (Ray actors, AsyncVectorEnv) can build or ship them.
"""

from longpuzzle.agents.envs.registration import SUITE_ID, env_id, make_game_env, register_envs, registered_ids

register_envs()

# the classes load on first use (PEP 562), so that registering the ids - which `import gymnasium`
# does after `import longpuzzle` (agents/gym_hook.py) - costs no compiled kernels or pygame
_LAZY = {
    "GUI_TYPES": "gui_space", "KEYS": "gui_space", "from_gui": "gui_space", "gui_action_space": "gui_space",
    "to_gui": "gui_space", "LevelSource": "levels", "LevelSourceError": "levels", "PixelEnv": "pixels",
    "RulesEnv": "rules", "SuiteEnv": "suite", "PuzzleVectorEnv": "vector", "DiscreteGUIActions": "wrappers",
    "ExpertTable": "rollout", "Rollout": "rollout",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def make(config: dict):
    """An env from one config dict, e.g. ``{"id": "longpuzzle/MazePaint-v0", "level": ...}``
    (the shape worker pools pass around; ``num_envs`` makes a vector env with make_vec)."""
    import gymnasium as gym

    cfg = dict(config)
    eid = cfg.pop("id", None)
    if not isinstance(eid, str):
        raise ValueError("the config needs an 'id', e.g. 'longpuzzle/MazePaint-v0'")
    if "num_envs" in cfg:
        return gym.make_vec(eid, **cfg)
    return gym.make(eid, **cfg)


__all__ = [
    "DiscreteGUIActions", "ExpertTable", "GUI_TYPES", "KEYS", "LevelSource", "LevelSourceError", "PixelEnv", "PuzzleVectorEnv",
    "Rollout", "RulesEnv", "SUITE_ID", "SuiteEnv", "env_id", "from_gui", "gui_action_space", "make", "make_game_env",
    "register_envs", "registered_ids", "to_gui",
]
