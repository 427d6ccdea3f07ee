"""Start-up of the command line, as whole processes: ``longpuzzle show`` (a one-shot command
that runs the rules as Python, engine/jit.py) against ``import longpuzzle`` and against
``longpuzzle rollout`` (which imports numba and loads compiled kernels from the cache).

Run with ``--benchmark-enable``; compare the fastest rounds side by side (a ratio: the
machine is shared). ``dataset_job_process_side_by_side``: a 4-episode dataset job's whole
process beside START_BASELINE's, in alternating rounds.

``startup_side_by_side`` (issue 37, a command loads only the game it needs): ``show`` and
``solve`` of one level, ``import longpuzzle`` and ``import longpuzzle.agents.envs``, each beside
the same command of STARTUP_BASELINE (main before that work) and beside two floors, ``python
-c pass`` and ``python -c "import gymnasium"``, in turn within each round; extra_info holds
each one's median CPU and wall seconds (the whole child process) and the ratios."""

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

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


STARTUP_BASELINE = "cc4ebc0"   # main before a command loaded only its game (issue 37): every game's rules,
                               # knowledge and levels at start, numpy at `import longpuzzle`
STARTUP = {
    "show_rush_hour": ["-m", "longpuzzle", "show", "rush_hour/hard/2"],
    "solve_rush_hour": ["-m", "longpuzzle", "solve", "rush_hour/hard/2"],
    "import_longpuzzle": ["-c", "import longpuzzle"],
    "import_envs": ["-c", "import longpuzzle.agents.envs"],
}
FLOORS = {"python": ["-c", "pass"], "gymnasium": ["-c", "import gymnasium"]}


def _child(args, env) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one whole child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def _with_bytecode(env: dict, where) -> dict:
    """Compiled bytecode kept (in a folder of the benchmark's), as an installed package has it:
    $PYTHONDONTWRITEBYTECODE would make both sides compile every module's source each run."""
    env = dict(env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(where)
    return env


@pytest.mark.parametrize("name", list(STARTUP))
def test_startup_side_by_side(benchmark, name, tmp_path_factory):
    """One command of today beside STARTUP_BASELINE's and beside the two floors, in turn; the
    caches (kernels, bytecode) warm on every side first."""
    from baseline import env_for, tree
    pyc = tmp_path_factory.getbasetemp() / "pycache"
    new_env = _with_bytecode(dict(os.environ, SDL_VIDEODRIVER="dummy"), pyc / "new")
    old_env = _with_bytecode(env_for(tree(STARTUP_BASELINE)), pyc / "old")
    sides = {"old": (STARTUP[name], old_env), **{f: (a, new_env) for f, a in FLOORS.items()}}
    figures: dict[str, list[tuple[float, float]]] = {"new": [], **{k: [] for k in sides}}
    for args, env in [(STARTUP[name], new_env), *sides.values()]:
        _child(args, env)                                  # warm: kernels compiled, bytecode written

    def others():
        for key, (args, env) in sides.items():
            figures[key].append(_child(args, env))

    def new():
        figures["new"].append(_child(STARTUP[name], new_env))
    benchmark.group = "startup side by side"
    benchmark.pedantic(new, setup=others, rounds=7, iterations=1)
    cpu = {k: statistics.median(c for c, _ in v) for k, v in figures.items()}
    wall = {k: statistics.median(w for _, w in v) for k, v in figures.items()}
    benchmark.extra_info.update(
        cpu_median=cpu, wall_median=wall,
        cpu_vs_baseline=cpu["new"] / cpu["old"], wall_vs_baseline=wall["new"] / wall["old"],
        cpu_vs_python=cpu["new"] / cpu["python"], cpu_vs_gymnasium=cpu["new"] / cpu["gymnasium"])
    print(f"\n{name}: CPU {cpu['new']:.3f} s (baseline {cpu['old']:.3f}, python -c pass {cpu['python']:.3f}, "
          f"import gymnasium {cpu['gymnasium']:.3f}); wall {wall['new']:.3f} s (baseline {wall['old']:.3f})")
