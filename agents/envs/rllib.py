"""RLlib on longpuzzle's Gymnasium environments.

    import ray
    from longpuzzle.agents.envs.rllib import ppo_config
    ray.init()
    algo = ppo_config({"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/1"}).build_algo()
    for _ in range(100):
        result = algo.train()               # result["env_runners"]["episode_return_mean"]

RLlib creates environments by a registered name from an ``env_config`` dict, in its own
env-runner processes: ``ENV_NAME`` ("longpuzzle") is registered with ``env_creator``, which
builds ``longpuzzle.agents.envs.make(env_config)`` (any id and keyword arguments of the registered
envs; longpuzzle.agents.envs is imported in the runner process first) and gives RLlib's default
networks float32 observations (the rules mode's state is an integer Box; the pixel mode's
frames become floats too, which is what a CNN encoder takes). Illegal actions are legal
no-ops in these envs (the state stays, reward 0), so a plain PPO learns without action
masking; ``info["action_mask"]`` is there for a masking RLModule.
"""

from __future__ import annotations

ENV_NAME = "longpuzzle"


def env_creator(env_config):
    """An env for RLlib from its env_config (a dict or RLlib's EnvContext)."""
    import gymnasium as gym
    import numpy as np

    import longpuzzle.agents.envs as envs

    env = envs.make(dict(env_config))
    if isinstance(env.observation_space, gym.spaces.Box) and env.observation_space.dtype != np.float32:
        env = gym.wrappers.DtypeObservation(env, np.float32)
    return env


def register() -> str:
    """Register ENV_NAME with Ray Tune's registry (idempotent); returns the name."""
    from ray.tune.registry import register_env
    register_env(ENV_NAME, env_creator)
    return ENV_NAME


def ppo_config(env_config: dict, *, env_runners: int = 0, batch: int = 400, minibatch: int = 100,
               epochs: int = 2, lr: float = 3e-4, hidden: tuple[int, ...] = (64, 64), seed: int | None = 0):
    """A PPOConfig (RLlib's new API stack) for one registered env: ``env_runners`` sampling
    actors (0: sample in the calling process), ``batch`` env steps per training iteration."""
    from ray.rllib.algorithms.ppo import PPOConfig

    register()
    return (PPOConfig()
            .environment(ENV_NAME, env_config=dict(env_config))
            .env_runners(num_env_runners=env_runners, rollout_fragment_length="auto")
            .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr)
            .learners(num_learners=0)
            .rl_module(model_config={"fcnet_hiddens": list(hidden)})
            .debugging(seed=seed))
