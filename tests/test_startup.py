"""Start-up follows the game a command needs (issue 37): what a process loads, checked in
fresh subprocesses through sys.modules and through what runs - never through timings (those
are in benchmarks/test_bench_startup.py)."""

import json
import subprocess
import sys
import textwrap

import pytest

from longpuzzle.engine.catalog import Catalog
from longpuzzle.engine.registry import get_puzzle


def _run(code: str, *args: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


HEAVY = ("numpy", "numba", "llvmlite", "scipy", "pygame", "gymnasium")


def test_import_longpuzzle_loads_no_numpy_numba_pygame_or_gymnasium():
    """``import longpuzzle`` loads the package's light core only (its entry points load on
    first use) and still works as before: the names are there, Gymnasium ids come with gymnasium."""
    out = json.loads(_run("""
        import json, sys
        import longpuzzle
        heavy = sorted(m for m in HEAVY if m in sys.modules)
        missing = [n for n in longpuzzle.__all__ if n not in dir(longpuzzle) or getattr(longpuzzle, n) is None]
        level = longpuzzle.load_level("rush_hour/hard/2").id
        import gymnasium
        print(json.dumps([heavy, missing, level, "longpuzzle/RushHour-v0" in gymnasium.registry]))
    """.replace("HEAVY", repr(HEAVY))))
    assert out == [[], [], "rush_hour/hard/2", True]


def _game_modules(modules: list[str], game: str) -> list[str]:
    """The modules of ``game``: its rules, drawing, solver knowledge and kernels, generator,
    and the kernel modules generated for it (engine/specialize.py names them lp_<game>_...)."""
    return [m for m in modules
            if m.rsplit(".", 1)[-1] == game or m.rsplit(".", 1)[-1].startswith(game + "_")
            or m.startswith(f"lp_{game}_")]


def test_registering_the_gymnasium_ids_loads_no_game():
    out = json.loads(_run("""
        import json, sys
        import longpuzzle.agents.envs as envs
        print(json.dumps([len(envs.registered_ids()), sorted(sys.modules)]))
    """))
    n, modules = out
    from longpuzzle.engine.registry import puzzle_ids
    assert n == len(puzzle_ids()) + 1                     # every game and the suite
    assert [m for g in puzzle_ids() for m in _game_modules(modules, g)] == []
    assert [m for m in HEAVY[1:-1] if m in modules] == []  # (numpy and gymnasium: Gymnasium's own)


@pytest.mark.parametrize("command", [["show", "rush_hour/hard/2"], ["solve", "rush_hour/hard/2"],
                                     ["show", "nut_and_bolt/easy/1"]])
def test_a_command_about_one_game_loads_no_other_game(command):
    """``show`` and ``solve`` of a level import its game's modules (rules; for solve its
    solver knowledge and search kernels) and no module of any other game."""
    out = json.loads(_run("""
        import json, sys
        from longpuzzle.cli import main
        try:
            main(sys.argv[1:])
        except SystemExit as e:
            assert not e.code, e.code
        print(json.dumps(sorted(sys.modules)))
    """, *command).splitlines()[-1])
    from longpuzzle.engine.registry import puzzle_ids
    game = command[1].split("/")[0]
    mine = _game_modules(out, game)
    assert f"longpuzzle.puzzles.{game}" in mine
    if command[0] == "solve":
        assert f"longpuzzle.solvers.knowledge.{game}_kernels" in mine
        assert any(m.startswith(f"lp_{game}_search_") for m in mine)
    others = [m for g in puzzle_ids() if g != game for m in _game_modules(out, g)]
    assert others == []
    if command[0] == "show":                               # the rules run as Python: no numba, no pygame
        assert [m for m in ("numba", "pygame") if m in out] == []


def test_the_builtin_catalogue_builds_only_the_game_asked_for(monkeypatch):
    """A level of one game builds that game's levels only: another game's level records are
    not built (nor its rules run) until one of its levels is asked for."""
    def refuse(*a, **k):
        raise AssertionError("maze_paint's levels were built for a rush_hour level")
    monkeypatch.setattr(get_puzzle("maze_paint"), "build_level", refuse)
    cat = Catalog()
    assert cat.level("rush_hour/hard/2").id == "rush_hour/hard/2"
    assert "maze_paint" in cat.games()                     # listed, not built
    with pytest.raises(AssertionError, match="were built"):
        cat.level("maze_paint/easy/1")


def test_the_catalogue_built_lazily_is_the_one_built_at_once():
    """Levels, objectives, files and the content hash do not depend on the order games are
    first asked for."""
    lazy, eager = Catalog(), Catalog()
    eager.objectives()                                     # every game now
    first = lazy.level("truck_escape/default/1")
    assert first.data == eager.level("truck_escape/default/1").data
    assert lazy.content_hash == eager.content_hash
    assert [o.id for o in lazy.objectives()] == [o.id for o in eager.objectives()]
    assert lazy.file_of("color_connect") == eager.file_of("color_connect")


def test_the_command_line_skips_the_final_collection_at_exit():
    """``longpuzzle`` freezes the garbage collector when its process exits
    (cli._skip_final_collection), not while the command runs: a handler registered before the
    command (atexit runs them last-in, first-out) sees it frozen."""
    out = _run("""
        import atexit, gc
        atexit.register(lambda: print("at exit, frozen:", gc.get_freeze_count() > 0, flush=True))
        from longpuzzle.cli import main
        try:
            main(["levels", "--game", "rush_hour"])
        except SystemExit:
            pass
        print("after the command, frozen:", gc.get_freeze_count() > 0, flush=True)
    """)
    lines = out.splitlines()
    assert lines[-2:] == ["after the command, frozen: False", "at exit, frozen: True"]


def _run_on_terminal(args: list[str], env: dict) -> str:
    """Run ``longpuzzle ARGS`` with its stderr on a pseudo-terminal (as a person's shell gives
    it); returns what it wrote there."""
    import os
    import pty

    master, slave = pty.openpty()
    try:
        r = subprocess.run([sys.executable, "-m", "longpuzzle", *args], stdout=subprocess.DEVNULL, stderr=slave,
                           env=env, timeout=300, check=False)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:                                # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert r.returncode == 0
    return b"".join(chunks).decode()


def test_a_cold_kernel_cache_is_said_once_on_a_terminal(tmp_path):
    """The first compile of a game's kernels into an empty cache says so in one line on stderr
    when stderr is a terminal; not when it is a pipe, and not again once the cache holds them."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(LONGPUZZLE_CACHE_DIR=str(tmp_path / "cache"), LONGPUZZLE_JIT_AUTO_BUDGET="0")  # show compiles
    args = ["show", "maze_paint/easy/1"]
    piped = subprocess.run([sys.executable, "-m", "longpuzzle", *args], capture_output=True, text=True, env=env,
                           timeout=300, check=False)
    assert piped.returncode == 0 and "compiling" not in piped.stderr
    env["LONGPUZZLE_CACHE_DIR"] = str(tmp_path / "cache2")          # cold again, now on a terminal
    first = _run_on_terminal(args, env)
    lines = [ln for ln in first.splitlines() if "compiling" in ln]
    assert len(lines) == 1 and "longpuzzle.puzzles.maze_paint" in lines[0] and str(tmp_path / "cache2") in lines[0]
    assert list((tmp_path / "cache2" / "compiled").iterdir())     # marked at exit
    assert "compiling" not in _run_on_terminal(args, env)           # warm: nothing said


def test_garbage_left_at_exit_is_still_finalised():
    """The freeze at exit comes after one collection: an unreachable cycle (here one whose
    finaliser says so; in a program, say, a file object not closed) is finalised as before."""
    out = _run("""
        import gc
        from longpuzzle.cli import main
        gc.disable()                      # no automatic collection: the cycle is garbage at exit

        class Node:
            def __del__(self):
                print("finalised", flush=True)
        try:
            main(["levels", "--game", "rush_hour"])
        except SystemExit:
            pass
        a = Node()
        a.me = a
        del a
    """)
    assert out.splitlines()[-1] == "finalised"
