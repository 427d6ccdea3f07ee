"""Start-up of the command line, as whole processes: ``longpuzzle show`` (a one-shot command
that runs the rules as Python, engine/jit.py) against ``import longpuzzle`` and against
``longpuzzle rollout`` (which imports numba and loads compiled kernels from the cache).

Run with ``--benchmark-enable``; compare the fastest rounds side by side (a ratio: the
machine is shared). ``dataset_job_process_side_by_side``: a 4-episode dataset job's whole
process beside START_BASELINE's, in alternating rounds."""

import json
import resource
import shutil
import subprocess
import sys

import pytest

COMMANDS = {
    "import": [sys.executable, "-c", "import longpuzzle"],
    # the Gymnasium ids registered once gymnasium is imported (agents/gym_hook.py): the first of the
    # pair is the floor (the hook taken out before gymnasium comes), the second pays for the
    # registration (puzzle discovery, the light longpuzzle.agents.envs package)
    "import_and_gymnasium_unregistered": [sys.executable, "-c", "import longpuzzle, longpuzzle.agents.gym_hook as h; "
                                          "h._uninstall(); import gymnasium"],
    "import_and_gymnasium": [sys.executable, "-c", "import longpuzzle, gymnasium"],
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


START_BASELINE = "411a8d6"   # main before a dataset job's process start was cut (CLI modules, Arrow columns, card box)


def _job_process(env, out) -> tuple[float, int]:
    """(CPU seconds of the whole process, rows): a 4-episode Maze Paint dataset job, as
    ``longpuzzle dataset`` runs it in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "longpuzzle", "dataset", "--objective", "maze_paint/easy", "--episodes",
                    "4", "--out", str(out)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = json.loads((out / "manifest.json").read_text())["counts"]["rows"]
    shutil.rmtree(out)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, rows


def test_dataset_job_process_side_by_side(benchmark, tmp_path):
    """The whole process of a short dataset job (imports, kernels loaded, first screens,
    the job), side by side with START_BASELINE's in alternating rounds; ops = rows, and the
    "per CPU second" lines count the child processes' CPU time."""
    from baseline import env_for, side_by_side, tree
    old_env = env_for(tree(START_BASELINE))
    runs = iter(range(1000))
    new_cpu, old_cpu, rows = [], [], []

    def new():
        cpu, n = _job_process(None, tmp_path / f"new-{next(runs)}")
        new_cpu.append(cpu)
        rows.append(n)

    def old():
        cpu, n = _job_process(old_env, tmp_path / f"old-{next(runs)}")
        old_cpu.append(cpu)
        rows.append(n)
        return {"cpu": cpu}
    new()
    old()                                                # caches warm on both sides
    benchmark.group = "startup"
    side_by_side(benchmark, new, old, rounds=5, ops=rows[0], old_ops=rows[0], unit="rows")
    assert len(set(rows)) == 1                           # the same job on both sides
    benchmark.extra_info["cpu_min"] = min(new_cpu[1:])  # (this process's own CPU time is nearly none)
