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

``backend_for``: the backend the commands' ``--backend`` / ``--workers`` options name
(agents/backends.py holds the ones of this machine: sequential, threads, processes).

Nothing here imports Ray until a Ray backend is used.
"""

from longpuzzle.cluster.rollouts import env_episodes, gather, random_walks, solve_levels

BACKENDS = ("local", "processes", "ray")


def backend_for(name: str, workers: int | None = None, *, address: str | None = None, ship_code: bool = False,
                num_cpus: float = 1.0, threads: bool = False):
    """The backend of ``--backend NAME`` (None: the caller's sequential default):
    ``local``: this process (``threads``: with ``workers`` > 1, that many threads, as eval's
    episodes of model agents), ``processes``: ProcessBackend(workers; default the CPUs this
    process may use), ``ray``: RayBackend at ``address`` (a local Ray when None), at most
    ``workers`` jobs at once, ``num_cpus`` per job. Options that do not apply to the backend
    are a usage error (click.UsageError)."""
    import click

    from longpuzzle.agents.backends import ProcessBackend, ThreadBackend
    if name not in BACKENDS:
        raise click.UsageError(f"--backend is one of {', '.join(BACKENDS)}, not {name!r}")
    if (address or ship_code) and name != "ray":
        raise click.UsageError("--address and --ship-code are for --backend ray")
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise click.BadParameter("--workers must be at least 1")
    if name == "processes":
        return ProcessBackend(workers)
    if name == "ray":
        from longpuzzle.cluster.ray_backend import RayBackend
        return RayBackend(address, workers=workers, num_cpus=num_cpus, ship_code=ship_code)
    if workers is not None and workers > 1:
        if not threads:
            raise click.UsageError("--workers runs jobs at once with --backend processes or ray (local runs them "
                                   "one after another)")
        return ThreadBackend(workers)
    return None


def __getattr__(name):
    if name in ("RayBackend", "ClusterError", "connect"):
        from longpuzzle.cluster import ray_backend
        return getattr(ray_backend, name)
    raise AttributeError(name)


__all__ = ["BACKENDS", "ClusterError", "RayBackend", "backend_for", "connect", "env_episodes", "gather", "random_walks",
           "solve_levels"]
