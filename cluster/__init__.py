"""Beyond one process: longpuzzle's jobs on worker processes or a Ray cluster (ray is an
optional extra).

The modules, one job each:

    ray_backend.py   RayBackend: the Backend of agents/runner.py that runs jobs as Ray tasks
                     (eval episodes, dataset jobs, rollouts), and how job folders come back
                     from nodes that do not share the filesystem
    rollouts.py      the Python API for many rollouts or solver jobs over any backend:
                     random_walks (compiled), env_episodes (Gymnasium envs from a config
                     dict), solve_levels, gather
    rllib.py         RLlib on the registered environments: env_creator, register, ppo_config

    options.py       the commands' --backend, --workers, --address and --ship-code options
                     (backend_options) and the backend they name (backend_for); the
                     backends of this machine (sequential, threads, processes) are
                     agents/backends.py's

Nothing here imports Ray until a Ray backend is used.
"""

from longpuzzle.cluster.rollouts import env_episodes, gather, random_walks, solve_levels

def __getattr__(name):
    if name in ("RayBackend", "ClusterError", "connect"):
        from longpuzzle.cluster import ray_backend
        return getattr(ray_backend, name)
    if name in ("BACKENDS", "backend_for", "backend_options"):
        from longpuzzle.cluster import options
        return getattr(options, name)
    raise AttributeError(name)


__all__ = ["BACKENDS", "ClusterError", "RayBackend", "backend_for", "backend_options", "connect", "env_episodes", "gather",
           "random_walks", "solve_levels"]
