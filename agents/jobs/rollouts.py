"""Many rollouts or solver jobs over any backend (one process, threads, a Ray cluster).

    from longpuzzle.agents.jobs import RayBackend, env_episodes, random_walks, solve_levels

    random_walks("maze_paint/hard/3", walks=1_000_000, steps=200, backend=RayBackend(), chunks=64)
    env_episodes({"id": "longpuzzle/RushHour-v0", "level": "rush_hour/hard"}, episodes=10_000,
                 backend=RayBackend(), chunks=32)              # Gymnasium envs from a config dict
    solve_levels(builtin_catalog().level_ids("bolt_unscrew"), backend=RayBackend())

Each call splits the work into jobs (``chunks``; default one per CPU of the backend: the
cluster's for Ray, 1 for the sequential default), runs them through ``backend.run`` (the
Backend interface of agents/jobs/local.py) and gathers the results in job order, so the
answer does not depend on which job finished first. Seeds: job 0 uses ``seed`` itself (so
``chunks=1`` is exactly the one-process run), job i > 0 a seed drawn from (seed, i).

The jobs import what they run (the kernels, the solvers, the environments) inside themselves,
lazily: in the worker or Ray task that runs them, and only for the kind of job it is.
"""

from __future__ import annotations

import time

import numpy as np

from longpuzzle.agents.jobs.local import SequentialBackend


def job_seed(seed: int, i: int) -> int:
    return int(seed) if i == 0 else int(np.random.SeedSequence([int(seed), i]).generate_state(1)[0] >> 1)


def _split(n: int, k: int) -> list[int]:
    k = max(1, min(k, n))
    return [(i + 1) * n // k - i * n // k for i in range(k)]


def _chunks(backend, chunks: int | None) -> int:
    if chunks is not None:
        if chunks < 1:
            raise ValueError("chunks must be at least 1")
        return chunks
    return backend.default_jobs() if backend is not None else 1


def gather(backend, fn, arg_lists: list[tuple]) -> list:
    """``[fn(*args) for args in arg_lists]`` run as jobs of ``backend`` (default: in this
    process), results in the order of ``arg_lists``."""
    backend = backend or SequentialBackend()
    out: list = [None] * len(arg_lists)

    def done(i, res):
        out[i] = res
    backend.run([(i, fn, tuple(a)) for i, a in enumerate(arg_lists)], done)
    return out


# ---- compiled random walks --------------------------------------------------------------

def walk_job(level_id: str, walks: int, steps: int, seed: int, catalog=None) -> dict:
    """``walks`` compiled random walks of at most ``steps`` moves on one level (of ``catalog``,
    default the built-in catalogue)."""
    from longpuzzle.engine.batch import kernels
    from longpuzzle.engine.catalog import load_level
    from longpuzzle.engine.registry import get_puzzle

    level = load_level(level_id, catalog)
    p = get_puzzle(level.game)
    k = kernels(p)
    final = np.empty((walks, level.initial.shape[0]), level.initial.dtype)
    solved = np.zeros(walks, np.bool_)
    t0 = time.perf_counter()
    k.random_walks(level.lv, level.initial, 1, 1, seed, level.n_actions, final[:1], solved[:1])  # compile / load
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    moves = k.random_walks(level.lv, level.initial, walks, steps, seed, level.n_actions, final, solved)
    dt = time.perf_counter() - t0
    return {"walks": walks, "seed": seed, "solved": int(solved.sum()),
            "progress_sum": float(sum(p.progress(level, final[i]) for i in range(walks))),
            "moves": int(moves), "seconds": dt, "warmup_seconds": warm}


def random_walks(level_id: str, walks: int = 10_000, steps: int = 200, seed: int = 0, *, backend=None,
                 chunks: int | None = None, catalog=None) -> dict:
    """Random legal-move walks in compiled code, split over jobs (the level: an id of
    ``catalog``, default the built-in catalogue, which the jobs are given); the solve rate, mean final
    P and throughput: ``moves_per_second`` over the jobs' own walking time added up (per
    core), ``moves_per_wall_second`` over the whole call (start-up and scheduling included)."""
    from longpuzzle.engine.catalog import load_level

    if walks < 1 or steps < 1:
        raise ValueError("walks and steps must be at least 1")
    level = load_level(level_id, catalog)
    sizes = _split(walks, _chunks(backend, chunks))
    t0 = time.perf_counter()
    parts = gather(backend, walk_job, [(level.id, n, steps, job_seed(seed, i), catalog)
                                         for i, n in enumerate(sizes)])
    wall = time.perf_counter() - t0
    moves = sum(r["moves"] for r in parts)
    busy = sum(r["seconds"] for r in parts)
    return {"level": level.id, "walks": walks, "max_steps": steps, "seed": seed, "jobs": len(parts),
            "solved": sum(r["solved"] for r in parts), "solved_rate": sum(r["solved"] for r in parts) / walks,
            "mean_final_progress": sum(r["progress_sum"] for r in parts) / walks, "moves": moves,
            "seconds": round(busy, 4), "moves_per_second": round(moves / busy) if busy > 0 else None,
            "wall_seconds": round(wall, 4), "moves_per_wall_second": round(moves / wall) if wall > 0 else None,
            "warmup_seconds": round(max(r["warmup_seconds"] for r in parts), 4)}


# ---- Gymnasium env episodes ---------------------------------------------------------------

def random_policy(obs, info, env, rng):
    """A uniformly random action among the legal ones (``info["action_mask"]``), or of the
    action space."""
    mask = info.get("action_mask")
    if mask is not None and mask.any():
        return int(rng.choice(np.flatnonzero(mask)))
    return env.action_space.sample()


def env_job(config: dict, episodes: int, seed: int, policy=None) -> list[dict]:
    """``episodes`` episodes of the env built from ``config`` (longpuzzle.agents.envs.make) under
    ``policy(obs, info, env, rng) -> action`` (default random_policy)."""
    import longpuzzle.agents.envs as envs

    policy = policy or random_policy
    env = envs.make(config)
    env.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    out = []
    try:
        for e in range(episodes):
            obs, info = env.reset(seed=seed + e)
            ret, n, term, trunc = 0.0, 0, False, False
            t0 = time.perf_counter()
            while not (term or trunc):
                obs, r, term, trunc, info = env.step(policy(obs, info, env, rng))
                ret += float(r)
                n += 1
            out.append({"level": info.get("level"), "return": ret, "length": n, "terminated": bool(term),
                        "truncated": bool(trunc), "seconds": time.perf_counter() - t0})
    finally:
        env.close()
    return out


def env_episodes(config: dict, episodes: int, seed: int = 0, *, policy=None, backend=None,
                 chunks: int | None = None) -> dict:
    """Episodes of a Gymnasium env (from a config dict, so every job builds its own) split
    over jobs; per-episode records and totals. ``policy`` must be picklable for Ray (a
    module-level function)."""
    if episodes < 1:
        raise ValueError("episodes must be at least 1")
    sizes = _split(episodes, _chunks(backend, chunks))
    t0 = time.perf_counter()
    parts = gather(backend, env_job, [(dict(config), n, job_seed(seed, i), policy) for i, n in enumerate(sizes)])
    wall = time.perf_counter() - t0
    eps = [e for part in parts for e in part]
    steps = sum(e["length"] for e in eps)
    return {"config": dict(config), "episodes": len(eps), "jobs": len(parts), "steps": steps,
            "solved": sum(e["terminated"] for e in eps), "solved_rate": sum(e["terminated"] for e in eps) / len(eps),
            "mean_return": sum(e["return"] for e in eps) / len(eps), "wall_seconds": round(wall, 4),
            "steps_per_second": round(steps / wall) if wall > 0 else None, "records": eps}


# ---- solver jobs --------------------------------------------------------------------------

def solve_job(level_id: str, budget: int | None, catalog=None) -> dict:
    from longpuzzle.engine.catalog import load_level
    from longpuzzle.solvers import solve
    kw = {} if budget is None else {"budget": budget}
    return solve(load_level(level_id, catalog), **kw).as_dict()


def solve_levels(level_ids: list[str], *, budget: int | None = None, backend=None, catalog=None) -> list[dict]:
    """The exhaustive solver on each level (ids of ``catalog``, default the built-in one, which
    the jobs are given), one job per level; results in the given order."""
    return gather(backend, solve_job, [(lid, budget, catalog) for lid in level_ids])
