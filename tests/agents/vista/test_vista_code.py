"""The Code Execution CUA setting: run_python in a sandboxed process that persists across
calls, with the archived frames as numpy arrays and gui() through the same controller, and
nothing else of the game (each way to reach it is tried and fails); limits; every cell and
its output logged; NGAR counts run_python as other."""

from __future__ import annotations

import json
import os
import time

import pytest

from longpuzzle.agents.harness import Settings, read_events, replay_episode
from longpuzzle.agents.vista import Controller
from longpuzzle.agents.vista.code import CodeLimits
from longpuzzle.agents.vista.records import check_tool_records
from longpuzzle.agents.sandbox import protections_available

WAIT = {"action": {"type": "wait", "ms": 0}}
LANDLOCK = protections_available().get("landlock", 0) >= 1


def _run(c, code):
    r = c.call("run_python", {"code": code})
    return r, json.loads(r.text)


@pytest.fixture
def code(tmp_path):
    c = Controller("maze_paint", "easy", setting="code", folder=tmp_path / "ep",
                   settings=Settings(budget=600, action_timeout=None, frames_per_move=2),
                   code_limits=CodeLimits(seconds=1.5, cpu_seconds=1.5, memory_mb=1024))
    assert [t.name for t in c.tools] == ["play", "screenshot", "run_python", "final_answer"]
    yield c
    c.close()


def test_run_python_persists_sees_frames_and_acts_through_the_controller(code, tmp_path):
    c = code
    assert not c.call("play", WAIT).error
    r, out = _run(c, "import numpy\nx = 41\nx + 1")
    assert not r.error and out == {"status": "ok", "output": "42\n"}
    r, out = _run(c, "f = frames()\nprint(len(f), f[-1].shape, f[-1].dtype, turns())\nx")
    assert out["output"] == "1 (960, 540, 3) uint8 1\n41\n"               # variables survive
    # gui() goes through the controller: a turn of the episode, with its archived frames
    r, out = _run(c, "r = gui({'type': 'click', 'x': 270, 'y': 721}); r['turn'], r['feedback']")
    assert out["output"] == "(2, 'screen_changed')\n" and out["turns"] == [2] and c.turn == 2
    r, out = _run(c, "g = frame(-1); d = int((g != f[-1]).any(axis=2).sum()); d > 1000")
    assert out["output"] == "True\n"
    r, out = _run(c, "gui({'type': 'click'})")
    assert r.error and "GuiError" in out["output"] and "'x', 'y'" in out["output"] and c.turn == 2
    # play's own arguments: the action's name with x and y (the paper's form), a batch (the code setting's)
    r, out = _run(c, "r = gui('wait', ms=10); r['turn'], r['n_frames'], 'batch' in r['available_actions']")
    assert out["output"] == "(3, 1, True)\n" and c.turn == 3
    r, out = _run(c, "1 / 0")
    assert out["status"] == "error" and "ZeroDivisionError" in out["output"]
    _run(c, "x")                                                             # the process lived on
    assert c.call("run_python", {"code": ""}).error and c.call("run_python", {}).error
    c.call("final_answer", {"text": "stop"})
    res = c.result
    assert res.end == "final_answer" and res.actions == 3
    # NGAR: the opening wait and every run_python call are other (gui() inside is not a step)
    assert (res.outcome.native_steps, res.outcome.other_steps) == (0, 1 + 10 + 1)
    cells = [e for e in read_events(c.folder) if e.get("tool") == "run_python"]
    assert [e["args"].get("code", "")[:6] for e in cells][:2] == ["import", "f = fr"]
    assert cells[0]["output"] == "42\n" and cells[2]["turns"] == [2]
    assert replay_episode(c.folder).ok and check_tool_records(c.folder).ok


def test_the_code_cannot_reach_the_game(code):
    c = code
    c.call("play", WAIT)
    import longpuzzle
    pkg = os.path.dirname(longpuzzle.__file__)
    tries = {
        "import": "import longpuzzle",
        "levels": f"open({os.path.join(pkg, 'puzzles', 'levels', 'maze_paint.json')!r}).read(10)",
        "events": f"open({str(c.folder / 'events.jsonl')!r}).read(10)",
        "frames": f"open({str(c.folder / 'frames.lpf')!r}, 'rb').read(10)",
        "parent": "import os; open(f'/proc/{os.getppid()}/environ').read(10)",
        "memory": "import os; open(f'/proc/{os.getppid()}/mem', 'rb').read(10)",
        "objects": "import gc; [o for o in gc.get_objects() if type(o).__name__ in "
                   "('Evaluator', 'Suite', 'Session', 'Controller', 'ObjectiveEpisode')][0]",
    }
    import socket
    server = socket.create_server(("127.0.0.1", 0))            # as an `mcp --http` server would listen
    tries["network"] = f"import socket; socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 2)"
    tries["os.chmod"] = f"import os; os.chmod({os.path.join(pkg, '__init__.py')!r}, 0o777)"
    for what, src in tries.items():
        if what in ("levels", "events", "frames", "parent", "memory") and not LANDLOCK:
            continue                                   # (no Landlock on this kernel: reads are not confined)
        r, out = _run(c, src)
        assert out["status"] == "error", (what, out)
        assert any(e in out["output"] for e in ("ModuleNotFoundError", "PermissionError", "IndexError",
                                                 "FileNotFoundError")), (what, out)
    server.setblocking(False)
    with pytest.raises(BlockingIOError):                        # nothing reached it
        server.accept()
    server.close()
    assert c.turn == 1


def test_limits_end_the_process_and_the_next_call_starts_afresh(code):
    c = code
    c.call("play", WAIT)
    _run(c, "kept = 1")
    r, out = _run(c, "while True: pass")
    assert r.error and out["status"] == "ended" and "ended" in out["output"]
    r, out = _run(c, "kept")
    assert "new Python process" in out["output"] and "NameError" in out["output"]
    r, out = _run(c, "b = bytearray(2 * 1024 ** 3)")                      # over the memory limit
    assert r.error and ("MemoryError" in out["output"] or out["status"] == "ended")
    assert not c.done and c.turn == 1


def _state_and_cpu(pid: int) -> tuple[str, int]:
    fields = open(f"/proc/{pid}/stat", "rb").read().rsplit(b")", 1)[1].split()
    return fields[0].decode(), int(fields[11]) + int(fields[12])


def test_nothing_a_cell_started_runs_between_calls(code):
    c = code
    c.call("play", WAIT)
    r, out = _run(c, "import threading\nspins = [0]\ndef spin():\n    while True:\n        spins[0] += 1\n"
                     "threading.Thread(target=spin, daemon=True).start()\n'started'")
    assert out == {"status": "ok", "output": "'started'\n"}
    sb = c._code.sb
    state, cpu = _state_and_cpu(sb.pid)
    assert state == "T"                                   # stopped while no call runs ...
    time.sleep(0.3)
    assert _state_and_cpu(sb.pid) == (state, cpu)         # ... so the spinning thread used no CPU meanwhile
    r, out = _run(c, "spins[0] > 0")                      # it lives on, and runs during calls
    assert out["output"] == "True\n" and _state_and_cpu(sb.pid)[0] == "T"


def test_the_code_of_an_episode_has_one_cpu_budget(tmp_path):
    c = Controller("maze_paint", "easy", setting="code", folder=tmp_path / "ep",
                   settings=Settings(budget=600, action_timeout=None, frames_per_move=2),
                   code_limits=CodeLimits(seconds=20, cpu_seconds=5, memory_mb=1024, episode_cpu_seconds=1.0))
    try:
        c.call("play", WAIT)
        spin = "import time\nwhile time.process_time() < {}: pass\n'done'"
        r, out = _run(c, spin.format(0.5))                 # CPU time of the process, startup included
        assert out == {"status": "ok", "output": "'done'\n"}
        r, out = _run(c, spin.format(3.0))                 # past the episode's budget: the process is ended
        assert r.error and out["status"] == "ended" and "CPU" in out["output"], out
        r, out = _run(c, "'again'")                        # and no fresh process gets a new budget
        assert r.error and out["status"] == "ended" and "budget" in out["output"] and "nothing was run" in out["output"]
        assert c._code.cpu_used() >= 1.0
    finally:
        c.close()
