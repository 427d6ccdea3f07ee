"""Jobs on a Ray cluster: the Ray backend of agents/runner.py.

    backend = RayBackend()                          # a local Ray (started on first use)
    backend = RayBackend("ray://head:10001")        # or any address ray.init takes
    runner.execute(out, run, backend=backend)       # eval episodes as Ray tasks
    datasets.build(out, cfg, backend=backend)       # dataset jobs as Ray tasks

Each job ``fn(*args)`` (runner.run_episode, datasets.build.run_job, the rollout jobs) runs
as one Ray task needing ``num_cpus`` CPUs (fractions for jobs that mostly wait, e.g. model
agents on an endpoint); at most ``workers`` run at once (None: as many as the cluster
schedules). Results come back in the calling process, which calls ``on_done`` as each job
finishes, so progress, resume and summaries are the runner's own.

Where the files of a job go (eval episode folders, dataset shards). The caller names its
output folder (``output(out)``, before any job). Before the jobs run, a marker file with a
random token is written there; a task that finds that marker with that token sees the same
folder (one machine, or a shared filesystem such as NFS mounted at the same path) and the
job writes there directly. A task that does not find it (a remote node without the folder)
runs the job with its own temporary folder in place of ``out`` (every argument equal to it
is replaced) and returns the files the job wrote there; the calling process writes them
into ``out`` in the order the job wrote them (so a job's completion record, result.json or
its part file, lands last) and then reports the job done. ``folders="shared"`` or
``"return"`` forces one way. Ray retries a task whose worker died (its system failures);
an exception the job raises is raised here, as the job's own exception.

A job that plays levels takes its catalogue as an argument (engine.catalog.Catalog): a
catalogue other than the built-in one (``--catalog``) goes to the workers with the job as
level data, checked there by its content hash, so generated or snapshot catalogues need
not be stored on every node.

Nodes of a remote cluster need longpuzzle importable: installed on every node, or shipped
with the job (``ship_code=True``: Ray's runtime_env py_modules uploads this package).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from longpuzzle.agents.jobs.local import Backend, BackendError

FOLDER_MODES = ("auto", "shared", "return")
MARKER = ".longpuzzle-ray-{token}"


class ClusterError(BackendError):
    """Ray is missing, cannot connect, or was given bad options."""


def ray_module():
    try:
        import ray
    except ImportError:
        raise ClusterError("the ray backend needs Ray: pip install 'longpuzzle[ray]'") from None
    return ray


SHIP_EXCLUDES = [".git", ".benchmarks", ".hypothesis", ".pytest_cache", ".ruff_cache", "results"]
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"     # "0": Ray's own nodes talk over loopback only


_SHIP_LINKS: list[str] = []             # the folders shipped_package_path made, removed at exit


def shipped_package_path() -> str:
    """The path Ray's py_modules uploads this package from. Ray names the uploaded module
    after the folder's last component, and a checkout need not be called ``longpuzzle``
    (a clone into ``main/``, installed editable, is still ``import longpuzzle``): then
    the path is a symbolic link named ``longpuzzle`` to the package folder, in a temporary
    folder removed when this process exits. Ray reads through the link and keeps its name."""
    root = Path(__file__).resolve().parents[2]
    if root.name == "longpuzzle":
        return str(root)
    holder = tempfile.mkdtemp(prefix="longpuzzle-ship-")
    if not _SHIP_LINKS:
        import atexit
        atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _SHIP_LINKS])
    _SHIP_LINKS.append(holder)
    link = Path(holder) / "longpuzzle"
    link.symlink_to(root, target_is_directory=True)
    return str(link)


def connect(address: str | None = None, *, num_cpus: int | None = None, ship_code: bool = False):
    """Ray, initialised: the running one if this process already called ``ray.init``, else
    a new local instance (``address`` None; on the loopback interface, without the
    dashboard) or a connection to ``address`` ("auto", "host:port", "ray://host:10001")."""
    if address is None and "ray" not in sys.modules:
        # a Ray of our own on one machine: without this, Ray addresses its processes by the
        # machine's network address (read when ray is imported)
        os.environ.setdefault(LOOPBACK_ENV, "0")
    ray = ray_module()
    if ray.is_initialized():
        return ray
    kw: dict = {"log_to_driver": False}
    if ship_code:                       # the package folder as it is here (.gitignore'd files and git's own left out)
        kw["runtime_env"] = {"py_modules": [shipped_package_path()], "excludes": SHIP_EXCLUDES}
    if address is None:                 # a Ray of our own on this machine: loopback only, no dashboard
        kw.update(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        ray.init(address=address, **kw)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ClusterError(f"cannot start or reach Ray{' at ' + address if address else ''}: {e}") from None
    return ray


def _remote_job(fn, args: tuple, out: str | None, token: str, mode: str):
    """Runs on a Ray worker: the job (its catalogue among its arguments), in ``out`` when
    this node sees it, else in a temporary folder whose files come back with the result."""
    if out is None or mode == "shared" or (mode == "auto" and _sees(out, token)):
        return fn(*args), None
    staging = tempfile.mkdtemp(prefix="longpuzzle-ray-")
    try:
        res = fn(*tuple(staging if isinstance(a, (str, os.PathLike)) and str(a) == out else a for a in args))
        files = []
        for p in Path(staging).rglob("*"):
            if p.is_file():
                files.append((p.stat().st_mtime_ns, p.relative_to(staging).as_posix(), p.read_bytes()))
        files.sort()
        return res, [(rel, data) for _, rel, data in files]
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _sees(out: str, token: str) -> bool:
    try:
        return (Path(out) / MARKER.format(token=token)).read_text(encoding="utf-8") == token
    except OSError:
        return False


def write_files(out: Path, files: list[tuple[str, bytes]]) -> None:
    """Write a job's returned files into ``out``, each atomically, in the order given."""
    for rel, data in files:
        p = out / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise ClusterError(f"a job returned a file outside its folder: {rel!r}")
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".ray-tmp")
        tmp.write_bytes(data)
        os.replace(tmp, p)


class RayBackend(Backend):
    """Jobs as Ray tasks (module doc)."""

    shares_memory = False

    def __init__(self, address: str | None = None, *, workers: int | None = None, num_cpus: float = 1.0,
                 folders: str = "auto", ship_code: bool = False, local_cpus: int | None = None):
        if folders not in FOLDER_MODES:
            raise ClusterError(f"folders must be one of {', '.join(FOLDER_MODES)}, not {folders!r}")
        if workers is not None and workers < 1:
            raise ClusterError("--workers must be at least 1")
        if not num_cpus > 0:
            raise ClusterError("num_cpus per job must be positive")
        self.address, self.workers, self.num_cpus = address, workers, float(num_cpus)
        self.folders, self.ship_code, self.local_cpus = folders, ship_code, local_cpus
        self.out: Path | None = None
        self.returned_files = 0          # files that came back from nodes without the folder

    def output(self, out: str | Path) -> None:
        self.out = Path(out)

    def cluster_cpus(self) -> int:
        ray = connect(self.address, num_cpus=self.local_cpus, ship_code=self.ship_code)
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def default_jobs(self) -> int:
        """The tasks allowed at once, else the cluster's CPUs."""
        return self.workers or self.cluster_cpus()

    def run(self, jobs, on_done, on_tick=None):
        ray = connect(self.address, num_cpus=self.local_cpus, ship_code=self.ship_code)
        task = ray.remote(num_cpus=self.num_cpus)(_remote_job)
        token = uuid.uuid4().hex
        out = str(self.out.resolve()) if self.out is not None else None
        marker = None
        if out is not None:
            self.out.mkdir(parents=True, exist_ok=True)
            marker = self.out / MARKER.format(token=token)
            marker.write_text(token, encoding="utf-8")
        todo = list(jobs)
        todo.reverse()
        pending: dict = {}
        limit = self.workers or len(todo) or 1
        try:
            while todo or pending:
                while todo and len(pending) < limit:
                    key, fn, args = todo.pop()
                    args = tuple(out if out is not None and isinstance(a, (str, os.PathLike))
                                 and str(Path(a).resolve()) == out else a for a in args)
                    pending[task.remote(fn, args, out, token, self.folders)] = key
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    key = pending.pop(ref)
                    try:
                        res, files = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        raise e.as_instanceof_cause() from None
                    if files:
                        write_files(self.out, files)
                        self.returned_files += len(files)
                    on_done(key, res)
                if on_tick:
                    on_tick()
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        finally:
            if marker is not None:
                marker.unlink(missing_ok=True)
