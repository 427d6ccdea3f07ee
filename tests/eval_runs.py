"""A small solver eval run on a given backend, and the part of its summary that must not
depend on where its episodes ran: what tests/agents/jobs/test_cluster.py (Ray) and
tests/agents/jobs/test_process_backend.py (worker processes) compare with a sequential run."""

from __future__ import annotations

from pathlib import Path

from longpuzzle.agents.harness import Settings
from longpuzzle.agents.runner import RunConfig, execute, start_run


def solver_run(out: Path, backend, episodes=2, max_actions=45, catalog=None) -> dict:
    """Run (and summarise) ``episodes`` solver episodes of maze_paint/easy in ``out``, on the
    levels of ``catalog`` (default: the built-in catalogue)."""
    run = RunConfig(agent="solver", objectives=["maze_paint/easy"], episodes=episodes,
                    settings=Settings(budget=None, max_actions=max_actions).as_dict(),
                    catalog=None if catalog is None else catalog.identity())
    start_run(out, run)
    return execute(out, run, backend=backend, quiet=True, catalog=catalog)


def placeless(summary: dict) -> dict:
    """The metrics and each episode's folder, end, actions, solved count and level outcomes
    (timings aside)."""
    eps = [{k: e[k] for k in ("folder", "end", "actions", "solved", "levels_outcome")} for e in summary["episodes"]]
    return {"metrics": summary["metrics"], "episodes": eps}
