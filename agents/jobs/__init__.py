"""Where jobs run, on this machine or beyond it (Ray is an optional extra). A job is
``(key, fn, args)``; every backend runs it the same way, so eval episodes, dataset jobs and
rollouts do not know where they run.

The modules, one job each:

    local.py         the Backend interface and the backends of this machine: sequential,
                     threads, processes
    ray_backend.py   RayBackend: jobs as Ray tasks (eval episodes, dataset jobs, rollouts), and
                     how job folders come back from nodes that do not share the filesystem
    options.py       the commands' --backend, --workers, --address and --ship-code options
                     (backend_options) and the backend they name (backend_for)
    rollouts.py      the Python API for many rollouts or solver jobs over any backend:
                     random_walks (compiled), env_episodes (Gymnasium envs from a config
                     dict), solve_levels, gather

(RLlib on the registered environments lives with the environments: agents/envs/rllib.py.)
Nothing here imports Ray until a Ray backend is used, and importing this package loads none of
its modules: each name below loads its module on first use.
"""



def __getattr__(name):
    if name in ("env_episodes", "gather", "random_walks", "solve_levels"):
        from longpuzzle.agents.jobs import rollouts
        return getattr(rollouts, name)
    if name in ("RayBackend", "ClusterError", "connect"):
        from longpuzzle.agents.jobs import ray_backend
        return getattr(ray_backend, name)
    if name in ("BACKENDS", "backend_for", "backend_options"):
        from longpuzzle.agents.jobs import options
        return getattr(options, name)
    raise AttributeError(name)


__all__ = ["BACKENDS", "ClusterError", "RayBackend", "backend_for", "backend_options", "connect", "env_episodes", "gather",
           "random_walks", "solve_levels"]
