"""Where jobs run: the backends of eval episodes (agents/runner.py), dataset jobs
(agents/datasets/build.py) and rollouts (agents/jobs/rollouts.py).

    SequentialBackend   one job after another, in this thread
    ThreadBackend(N)    N jobs at once in threads of this process: for jobs that mostly wait
                        (model agents on an endpoint: N = 32 on two cores is fine); jobs
                        that compute share one interpreter lock and run no faster
    ProcessBackend(N)   N jobs at once in worker processes of this machine (default: the
                        CPUs this process may use): for jobs that compute (the solver's
                        episodes, dataset jobs, random walks, solver jobs), one per core,
                        without a cluster (``--backend processes``)
    cluster.RayBackend  jobs as Ray tasks, on a local Ray or a cluster (``--backend ray``)

A job is ``(key, fn, args)``: ``fn(*args)`` runs and ``on_done(key, result)`` is called in
the calling thread as each job finishes. Jobs of ProcessBackend and RayBackend run in other
processes: ``fn`` is a module-level function and its arguments and result are picklable.
A job that plays levels takes its catalogue as an argument (an engine.catalog.Catalog):
pickled, a catalogue other than the built-in one travels as its level data and is rebuilt
once per process, checked by its content hash; the built-in one as a reference.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any
from collections.abc import Callable

from longpuzzle.engine.errors import LongPuzzleError


class BackendError(LongPuzzleError):
    """A backend was given bad options, or could not run its jobs (a worker process died)."""


class Backend:
    """Runs jobs ``fn(*args)``; calls ``on_done(key, result)`` in the calling thread as
    each finishes (``on_tick()`` about once a second while waiting). ``shares_memory``:
    jobs may report live state through objects passed to them (threads, not processes)."""

    shares_memory = False
    workers = 1

    def output(self, out: Path) -> None:
        """The run's output folder, given before any job runs (a backend whose jobs may run
        where that folder is not, e.g. cluster.RayBackend, brings their files back there)."""

    def run(self, jobs: list[tuple[Any, Callable, tuple]], on_done: Callable, on_tick: Callable | None = None) -> None:
        raise NotImplementedError

    def default_jobs(self) -> int:
        """How many jobs to split work into when the caller does not say (dataset --jobs,
        rollout --chunks): one per job running at once."""
        return max(1, self.workers)


class SequentialBackend(Backend):
    shares_memory = True

    def run(self, jobs, on_done, on_tick=None):
        for key, fn, args in jobs:
            on_done(key, fn(*args))
            if on_tick:
                on_tick()


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise BackendError(f"--workers must be at least 1, not {workers!r}")
    return workers


class ThreadBackend(Backend):
    shares_memory = True

    def __init__(self, workers: int):
        self.workers = _check_workers(workers)

    def run(self, jobs, on_done, on_tick=None):
        with cf.ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="episode") as pool:
            futs = {pool.submit(fn, *args): key for key, fn, args in jobs}
            pending = set(futs)
            try:
                while pending:
                    done, pending = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                    for f in done:
                        on_done(futs[f], f.result())
                    if on_tick:
                        on_tick()
            except BaseException:
                for f in pending:
                    f.cancel()
                raise


def make_backend(workers: int) -> Backend:
    return SequentialBackend() if workers <= 1 else ThreadBackend(workers)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, e.g. a container's or
    ``taskset``'s share of the machine), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):      # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


# imported by the fork server before it forks the workers (with the jobs' own modules): what
# the jobs of eval, datasets and rollouts import when they start (about 0.2 to 0.5 s each)
PRELOAD = (__name__, "longpuzzle.agents.harness", "longpuzzle.agents.datasets.collect", "longpuzzle.agents.datasets.writer")


class ProcessBackend(Backend):
    """Jobs in ``workers`` worker processes on this machine (default: available_cpus()).

    The workers are forked from a fork server that imported the jobs' modules once (a worker
    does not import them again, and forks from a process that runs nothing else: no threads
    of this one are copied), and each runs one job at a time, the jobs in turn: its caches
    (compiled kernels, level screens, plans) stay warm from job to job. The workers are
    started for ``run`` and stopped when it returns. A job's exception is raised here as its
    own (with the worker's traceback as its cause); a worker that dies (killed, out of
    memory) stops the run with BackendError naming the jobs not finished; an interrupt
    (Ctrl-C) or any error stops every worker at once (workers ignore SIGINT themselves: the
    caller stops them), and the jobs not finished are left to ``--resume``."""

    shares_memory = False

    def __init__(self, workers: int | None = None):
        self.workers = available_cpus() if workers is None else _check_workers(workers)

    def run(self, jobs, on_done, on_tick=None):
        jobs = list(jobs)
        if not jobs:
            return
        ctx = multiprocessing.get_context("forkserver")
        # (the fork server starts once per process, preloading what the first run names;
        # modules of later runs' jobs are imported by each worker)
        ctx.set_forkserver_preload(sorted({fn.__module__ for _, fn, _ in jobs} | set(PRELOAD)))
        pool = cf.ProcessPoolExecutor(max_workers=min(self.workers, len(jobs)), mp_context=ctx,
                                      initializer=_start_worker)
        futs: dict = {}
        finished: set = set()
        try:
            for key, fn, args in jobs:
                futs[pool.submit(fn, *args)] = key
            pending = set(futs)
            while pending:
                done, pending = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                for f in [g for g in futs if g in done]:        # (in job order)
                    try:
                        res = f.result()
                    except BrokenProcessPool:
                        left = [k for k in futs.values() if k not in finished]
                        raise BackendError(
                            f"a worker process died (killed, or out of memory?) before {len(left)} of "
                            f"{len(futs)} jobs finished: {', '.join(map(str, left[:8]))}"
                            f"{' ...' if len(left) > 8 else ''}{_unguarded_main()}") from None
                    finished.add(futs[f])
                    on_done(futs[f], res)
                if on_tick:
                    on_tick()
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)


def _unguarded_main() -> str:
    """A hint when the caller is a script: Python's multiprocessing runs the main script
    again in each worker (the script's name, not its ``if __name__ == "__main__":`` block)."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None or not getattr(main, "__file__", None):
        return ""
    return (f"; if {Path(main.__file__).name} starts these jobs at import, put that in an "
            "'if __name__ == \"__main__\":' block (each worker process imports the script again)")


def _start_worker() -> None:
    """In each worker process, before its first job: SIGINT ignored (a terminal's Ctrl-C
    reaches the whole process group: the caller stops us)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool's workers now, their running jobs with them: by the executor's own
    ``terminate_workers`` where it has one (Python 3.14 and later), else by terminating the
    worker processes it holds (the executor names them only in a private attribute)."""
    if hasattr(pool, "terminate_workers"):         # pragma: no cover - Python 3.14+
        pool.terminate_workers()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            if p.is_alive():
                p.terminate()
        except (OSError, ValueError):     # pragma: no cover - already gone
            pass
    for p in procs:
        try:
            p.join(5)
        except (OSError, ValueError, AssertionError):   # pragma: no cover
            pass
