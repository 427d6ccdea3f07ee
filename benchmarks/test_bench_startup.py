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
    # a subpackage's command imports only its own module (cli.COMMAND_MODULES)
    "dataset_help": [sys.executable, "-m", "longpuzzle", "dataset", "--help"],
    # a whole one-episode dataset job (about 100 rows) in its fresh process: the start counts
    "dataset_1_episode": [sys.executable, "-m", "longpuzzle", "dataset", "--objective", "maze_paint/easy",
                          "--episodes", "1", "--out", "{out}"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_process_start(benchmark, name, tmp_path):
    runs = iter(range(100))

    def run():
        out = tmp_path / f"out-{next(runs)}"          # (a dataset folder is new)
        subprocess.run([a.format(out=out) for a in COMMANDS[name]], check=True, stdout=subprocess.DEVNULL)
    run()                                              # caches warm
    benchmark.group = "startup"
    benchmark.pedantic(run, rounds=7, iterations=1)
