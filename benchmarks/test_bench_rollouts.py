"""Batched rollouts (``PuzzleVectorEnv.rollout``): env-steps per second at N = 1024, 16 steps
per compiled call, side by side in one run with Jumanji's Maze stepped 16 steps per
``jax.lax.scan`` (benchmarks/jumanji_maze.py, in a worker process; its rounds alternate with
ours, in pytest-benchmark's untimed set-up, so both sides see the same load).

Jumanji (jax, jaxlib, jumanji) is a benchmark-only dependency, found in this interpreter or
in the folder named by ``$LONGPUZZLE_JUMANJI_PATH`` (a ``pip install --target`` folder, which
keeps JAX's numpy apart from the project's); without it the Jumanji side is skipped and says
why. JAX runs on the CPU here.

Workloads, ours: Maze Paint hard (the closest to Jumanji's Maze: one piece moved on a grid
per action) and every other game's hardest objective, random legal moves chosen inside the
compiled loop, every state recorded (``rollout(16)``, in fresh arrays or with ``out=`` in the
last call's) or not (``observations=False``: rewards, terminations, ... as Jumanji's scan
returns its rewards), and given actions; one compiled call per step (``step`` 16 times)
beside them. Jumanji's: its
vmapped step with uniform random actions and no reset ("plain"), and with
``VmapAutoResetWrapper`` and random legal actions ("autoreset", our semantics).
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import longpuzzle.agents.envs  # noqa: F401  (registers the ids)
from longpuzzle.agents.envs import env_id

N, T = 1024, 16
CALLS = 20                       # compiled calls per round, ours and Jumanji's
OBJECTIVES = ["maze_paint/hard", "rush_hour/hard", "nut_and_bolt/hard", "bolt_unscrew/hard",
              "truck_escape/default", "color_connect/hard"]
WORKER = Path(__file__).with_name("jumanji_maze.py")


def _jumanji_env() -> tuple[dict | None, str]:
    """The environment a Jumanji worker runs in, or None and the reason it cannot."""
    extra = os.environ.get("LONGPUZZLE_JUMANJI_PATH")
    env = dict(os.environ)
    if extra:
        env["PYTHONPATH"] = extra
        return env, ""
    if importlib.util.find_spec("jumanji") and importlib.util.find_spec("jax"):
        return env, ""
    return None, ("Jumanji is not installed: pip install jax jaxlib jumanji (or pip install --target DIR "
                  "and set LONGPUZZLE_JUMANJI_PATH=DIR)")


class Jumanji:
    """A worker process timing K calls of its compiled scan per request."""

    def __init__(self, variant: str):
        env, why = _jumanji_env()
        if env is None:
            pytest.skip(why)
        self.proc = subprocess.Popen([sys.executable, str(WORKER), variant, str(N), str(T)], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            pytest.skip(f"the Jumanji worker did not start (exit {self.proc.returncode})")
        self.versions = json.loads(line)
        self.walls: list[float] = []
        self.cpus: list[float] = []

    def round(self, calls: int) -> None:
        self.proc.stdin.write(f"{calls}\n")
        got = json.loads(self.proc.stdout.readline())
        self.walls.append(got["wall"])
        self.cpus.append(got["cpu"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _vec(objective: str, **kw):
    env = gym.make_vec(env_id(objective.split("/")[0]), N, level=objective, max_episode_steps=200, **kw).unwrapped
    env.reset(seed=0)
    env.rollout(T, seed=0)                                   # compiled / loaded before timing
    return env


def _record_cpu(benchmark, fn):
    """fn timed with the process's CPU time of each round kept (least in cpu_min)."""
    cpu = []

    def timed():
        c0 = time.process_time()
        fn()
        cpu.append(time.process_time() - c0)
    return timed, cpu


@pytest.mark.parametrize("ours", ["compact", "states"])
@pytest.mark.parametrize("side", ["plain", "autoreset"])
def test_rollout_beside_jumanji_maze(benchmark, side, ours):
    """Maze Paint hard, random legal moves chosen inside the compiled loop, beside Jumanji's
    Maze: ours returning what its scan returns (per-step rewards, terminations, ... but no
    states: ``observations=False``), or every state as well (written into the arrays of
    the call before, ``out=``)."""
    if side == "autoreset" and ours == "states":
        pytest.skip("one pairing with Jumanji's slow autoreset is enough")
    jm = Jumanji(side)
    calls = CALLS if side == "plain" else 1                 # its autoreset is slow: one call a round
    env = _vec("maze_paint/hard")
    last = [env.rollout(T)]

    def one():
        if ours == "compact":
            env.rollout(T, observations=False)
        else:
            env.rollout(T, out=last[0])

    def loop():
        for _ in range(CALLS):
            one()
    timed, cpu = _record_cpu(benchmark, loop)
    try:
        benchmark.pedantic(timed, setup=lambda: jm.round(calls), rounds=7, iterations=1, warmup_rounds=0)
    finally:
        jm.close()
    benchmark.group = "rollouts"
    benchmark.extra_info.update(
        ops=CALLS * N * T, cpu_min=min(cpu), unit="env-steps", side_name=f"Jumanji Maze-v0 ({side})",
        side_ops=calls * N * T, side_min=min(jm.walls), side_median=float(np.median(jm.walls)),
        side_cpu_min=min(jm.cpus), side_versions=jm.versions)


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("how", ["random", "random-reused", "random-compact", "given", "step"])
def test_rollout(benchmark, objective, how):
    """Every game: 16 steps of 1024 envs in one call (random legal moves with the states
    recorded in fresh arrays or in the last call's, or not recorded; or given actions), or
    in 16 calls of step."""
    env = _vec(objective)
    acts = np.random.default_rng(1).integers(0, env.single_action_space.n, (N, T))
    last = env.rollout(T)
    if how == "random":
        def one(): env.rollout(T)
    elif how == "random-reused":
        def one(): env.rollout(T, out=last)
    elif how == "random-compact":
        def one(): env.rollout(T, observations=False)
    elif how == "given":
        def one(): env.rollout(T, acts)
    else:
        def one():
            for s in range(T):
                env.step(acts[:, s])

    def loop():
        for _ in range(CALLS):
            one()
    timed, cpu = _record_cpu(benchmark, loop)
    benchmark.pedantic(timed, rounds=5, iterations=1, warmup_rounds=1)
    benchmark.group = "rollouts"
    benchmark.extra_info.update(ops=CALLS * N * T, cpu_min=min(cpu), unit="env-steps")
