"""The commands' options for where jobs run (``longpuzzle eval``, ``dataset``, ``rollout``):
``backend_options`` adds --backend, --workers, --address and --ship-code to a command, and
``backend_for`` makes the backend they name."""

from __future__ import annotations

import click

BACKENDS = ("local", "processes", "ray")


def backend_options(where: str, workers_help: str):
    """The four options, their values passed as backend_name, workers, address, ship_code.
    ``where``: the --backend help (what runs, and where); ``workers_help``: the --workers help."""
    opts = [
        click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default="local", show_default=True,
                     help=where),
        click.option("--workers", type=int, default=None, help=workers_help),
        click.option("--address", default=None,
                     help="Ray cluster address for --backend ray (auto, host:port, ray://host:10001) "
                     "[default: a local Ray]."),
        click.option("--ship-code", is_flag=True,
                     help="With --backend ray: upload this longpuzzle package to the cluster with the jobs (Ray's "
                     "runtime_env), for nodes that do not have it installed."),
    ]

    def add(f):
        for o in reversed(opts):
            f = o(f)
        return f
    return add


def backend_for(name: str, workers: int | None = None, *, address: str | None = None, ship_code: bool = False,
                num_cpus: float = 1.0, threads: bool = False):
    """The backend of ``--backend NAME`` (None: the caller's sequential default):
    ``local``: this process (``threads``: with ``workers`` > 1, that many threads, as eval's
    episodes of model agents), ``processes``: ProcessBackend(workers; default the CPUs this
    process may use), ``ray``: RayBackend at ``address`` (a local Ray when None), at most
    ``workers`` jobs at once, ``num_cpus`` per job. Options that do not apply to the backend
    are a usage error (click.UsageError)."""
    from longpuzzle.agents.jobs.local import ProcessBackend, ThreadBackend
    if name not in BACKENDS:
        raise click.UsageError(f"--backend is one of {', '.join(BACKENDS)}, not {name!r}")
    if (address or ship_code) and name != "ray":
        raise click.UsageError("--address and --ship-code are for --backend ray")
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise click.BadParameter("--workers must be at least 1")
    if name == "processes":
        return ProcessBackend(workers)
    if name == "ray":
        import importlib.util

        from longpuzzle.agents.jobs.ray_backend import RayBackend, ray_module
        if importlib.util.find_spec("ray") is None:
            ray_module()                 # its one error line now, before a command creates anything
        return RayBackend(address, workers=workers, num_cpus=num_cpus, ship_code=ship_code)
    if workers is not None and workers > 1:
        if not threads:
            raise click.UsageError("--workers runs jobs at once with --backend processes or ray (local runs them "
                                   "one after another)")
        return ThreadBackend(workers)
    return None
