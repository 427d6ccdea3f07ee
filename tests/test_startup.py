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
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_import_longpuzzle_loads_no_numba_pygame_or_gymnasium():
    out = json.loads(_run("""
        import json, sys
        import longpuzzle
        print(json.dumps(sorted(m for m in ("numba", "llvmlite", "scipy", "pygame", "gymnasium") if m in sys.modules)))
    """))
    assert out == []


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
