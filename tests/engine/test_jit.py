"""Kernels compiled only when needed (engine/jit.py): one-shot commands and ``import
longpuzzle`` never import numba; results are the same whether a kernel ran as Python or
compiled; compiling swaps every kernel of a module for its numba dispatcher."""

import json
import os
import random
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from longpuzzle.engine import jit
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Session

PROBE = textwrap.dedent("""
    import json, sys
    import longpuzzle
    after_import = "numba" in sys.modules
    from longpuzzle.cli import cli
    out = {"import": after_import}
    for name, args in json.loads(sys.argv[1]):
        cli.main(args, standalone_mode=False)
        out[name] = "numba" in sys.modules
    print("RESULT " + json.dumps(out))
""")


# one-shot work runs as Python for AUTO_BUDGET seconds of rule calls: the tests give it no limit
# (or none at all), so that what they see never depends on how fast a busy machine runs
UNLIMITED = dict(os.environ, LONGPUZZLE_JIT_AUTO_BUDGET="inf")
NO_BUDGET = dict(os.environ, LONGPUZZLE_JIT_AUTO_BUDGET="0")


def _probe(commands, env=UNLIMITED):
    r = subprocess.run([sys.executable, "-c", PROBE, json.dumps(commands)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    return json.loads(next(l for l in lines if l.startswith("RESULT "))[7:]), lines


def test_import_show_check_replay_and_levels_do_not_import_numba():
    out, lines = _probe([
        ["levels", ["levels"]],
        ["show", ["show"]],
        ["show_bolt", ["show", "bolt_unscrew/hard/4"]],
        ["check", ["check", "nut_and_bolt/easy/1", "--moves", "2>3 1>3 1>2", "--json"]],
        ["replay", ["replay", "nut_and_bolt/easy/1: 2>3 1>3 undo"]],
    ])
    assert out == {"import": False, "levels": False, "show": False, "show_bolt": False, "check": False,
                   "replay": False}
    assert any(l.startswith("legal now: ") for l in lines)


def test_one_shot_work_compiles_once_past_the_budget_of_the_environment():
    """The budget is the only thing deciding: with none, even `show` compiles."""
    out, _ = _probe([["show", ["show", "bolt_unscrew/hard/4"]]], env=NO_BUDGET)
    assert out == {"import": False, "show": True}


def test_commands_that_need_compiled_kernels_still_compile():
    out, _ = _probe([["rollout", ["rollout", "maze_paint/easy/1", "--walks", "20", "--steps", "10", "--json"]]])
    assert out == {"import": False, "rollout": True}


@pytest.mark.parametrize("game", ["bolt_unscrew", "rush_hour", "nut_and_bolt", "truck_escape", "maze_paint",
                                  "color_connect"])
def test_show_and_check_as_python_equal_the_compiled_rules(game):
    """A subprocess checks a random walk with its kernels run as Python (auto mode); this
    process replays the same walk compiled: the same board, verdicts and progress."""
    lvl = builtin_catalog().levels(game)[-1]
    p = get_puzzle(game)
    rng = random.Random(3)
    state, acts = lvl.initial.copy(), []
    for _ in range(12):                     # legal moves only, while there are any
        legal = p.legal_moves(lvl, state)
        if not legal:
            break
        acts.append(rng.choice(legal))
        state = p.apply(lvl, state, acts[-1])
    walk = p.format_moves(lvl, acts)
    assert walk
    moves = " ".join(walk)
    script = ("import json, sys\nfrom longpuzzle.cli import cli\n"
              "cli.main(['check', sys.argv[1], '--moves', sys.argv[2], '--json'], standalone_mode=False)\n"
              "cli.main(['show', sys.argv[1], '--moves', sys.argv[2]], standalone_mode=False)\n"
              "print('NUMBA', 'numba' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", script, lvl.id, moves], capture_output=True, text=True, timeout=600,
                       env=UNLIMITED)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "NUMBA False"
    got = json.loads(lines[0])
    with jit.using("compiled"):
        s = Session(lvl)
        for m in walk:
            s.play(m)
        assert p.kernels.step_into.__class__.__name__ != "Kernel"        # really compiled here
        legal = " ".join(p.format_moves(s.level, s.legal_moves())) or "(none)"
        assert got["progress"] == s.progress and got["solved"] == s.solved and got["applied"] == len(walk)
        assert "\n".join(lines[1:]).count(s.show()) == 1
        assert f"legal now: {legal}" in lines


def _module():
    mod = types.ModuleType("lp_jit_probe")
    src = textwrap.dedent("""
        from longpuzzle.engine.jit import njit

        @njit(cache=False)
        def double(x):
            return 2 * x

        @njit
        def total(a):
            s = 0
            for v in a:
                s += double(v)
            return s
    """)
    sys.modules[mod.__name__] = mod
    exec(compile(src, "<lp_jit_probe>", "exec"), mod.__dict__)
    return mod


def test_kernels_run_as_python_until_compiled_then_the_module_holds_dispatchers():
    mod = _module()
    a = np.arange(10, dtype=np.int64)
    with jit.using("interpreted"):
        assert mod.total(a) == 90
        assert isinstance(mod.total, jit.Kernel) and mod.total.dispatcher is None
    early = mod.double                       # a reference taken before compiling
    jit.compiled(mod)
    assert jit.is_compiled(mod) and hasattr(mod.total, "overloads") and hasattr(mod.double, "overloads")
    assert mod.total(a) == 90 and early(21) == 42 and early.dispatcher is mod.double

    from numba import njit

    @njit
    def uses_early(x):                      # numba types the early reference as its dispatcher
        return early(x) + 1
    assert uses_early(4) == 9
    del sys.modules[mod.__name__]


def test_auto_mode_compiles_once_python_time_passes_its_budget(monkeypatch):
    mod = _module()
    a = np.arange(5, dtype=np.int64)
    monkeypatch.setitem(jit._state, "spent", 0.0)
    monkeypatch.setattr(jit, "AUTO_BUDGET", 1e-9)
    with jit.using("auto"):
        assert mod.total(a) == 20                        # the first call: Python
        assert isinstance(mod.total, jit.Kernel)
        assert mod.total(a) == 20                        # over budget: compiled now
        assert hasattr(mod.total, "overloads")
    with pytest.raises(ValueError, match="jit mode"):
        jit.set_mode("fast")
    del sys.modules[mod.__name__]
