"""Start-up of the command line, as whole processes: ``longpuzzle show`` (a one-shot command
that runs the rules as Python, engine/jit.py) against ``import longpuzzle`` and against
``longpuzzle rollout`` (which imports numba and loads compiled kernels from the cache).

Run with ``--benchmark-enable``; compare the fastest rounds side by side (a ratio: the
machine is shared)."""

import subprocess
import sys

import pytest

COMMANDS = {
    "import": [sys.executable, "-c", "import longpuzzle"],
    "show": [sys.executable, "-m", "longpuzzle", "show"],
    "show_bolt_hard_4": [sys.executable, "-m", "longpuzzle", "show", "bolt_unscrew/hard/4"],
    "rollout_1_walk": [sys.executable, "-m", "longpuzzle", "rollout", "maze_paint/easy/1", "--walks", "1",
                       "--steps", "1"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_process_start(benchmark, name):
    cmd = COMMANDS[name]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)       # caches warm
    benchmark.group = "startup"
    benchmark.pedantic(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), rounds=7, iterations=1)
