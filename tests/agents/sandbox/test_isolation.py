"""Agent isolation: the sandbox (process, channel, limits) and agent files run in it.

Every cheat of issue 13 is tried from an agent file and scores nothing; the same cheat code
run in-process (the trusted path) does find the evaluator, so the test can fail. Agents that
hang, busy-loop, exit, crash, flood or raise in __init__ end as agent_error, with the result
written, no traceback printed and no process left behind."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from longpuzzle.agents.registry import load_agent
from longpuzzle.agents.harness import AgentFile, Settings, make_caller, replay_episode, run_level_chain, run_objective
from longpuzzle.agents.harness.isolated import IsolatedAgentCaller
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.agents.sandbox import Limits, Sandbox, SandboxError, live_sandboxes, protections_available
from longpuzzle.agents.sandbox.channel import ChannelError, Endpoint, HEADER

HAVE = protections_available()
LANDLOCK = HAVE["landlock"] >= 1
SCOPED = HAVE["landlock"] >= 6
SECCOMP = HAVE["seccomp"] and HAVE["platform"] == "linux"


# ---- the sandbox itself ----------------------------------------------------------------------

PROGRAM = '''
import os, sys, time
_state = {}
def handle(call, arrays, ctx):
    op = call["op"]
    if op == "sum":
        _state["n"] = _state.get("n", 0) + 1
        return {"sum": int(arrays[0].sum()), "calls": _state["n"]}, [arrays[0] * 2]
    if op == "ask":
        answer, arrs = ctx.request({"question": call["q"]})
        return {"answer": answer, "got": len(arrs)}
    if op == "raise":
        raise KeyError("boom")
    if op == "print":
        sys.stdout.write("x" * 5_000_000); sys.stdout.flush()
        return {}
    if op == "memory":
        b = bytearray(8 << 30)
        return {}
    if op == "exit":
        os._exit(3)
    if op == "sleep":
        time.sleep(60)
    if op == "spin":
        while True:
            pass
    if op == "garble":
        fds = [int(f) for f in os.listdir("/proc/self/fd") if int(f) > 2]
        for f in fds:
            try:
                os.write(f, b"\\xff" * 64)
            except OSError:
                pass
        time.sleep(30)
'''


def test_sandbox_calls_arrays_callbacks_and_failures_that_keep_it():
    with Sandbox(PROGRAM, limits=Limits(memory_mb=1024, max_log_bytes=4096)) as sb:
        prot = sb.start()
        assert prot["rlimits"]["as"] == 1024 << 20
        a = np.arange(12, dtype=np.uint8).reshape(3, 4)
        for i in (1, 2):                                    # state persists across calls
            r, arrs = sb.call({"op": "sum"}, [a], timeout=10)
            assert r == {"sum": 66, "calls": i} and np.array_equal(arrs[0], a * 2) and not arrs[0].flags.writeable
        seen = []
        r, _ = sb.call({"op": "ask", "q": "why"}, timeout=10,
                       on_callback=lambda m, arrs: (seen.append(m) or {"because": 1}, [a]))
        assert seen == [{"question": "why"}] and r == {"answer": {"because": 1}, "got": 1}
        with pytest.raises(SandboxError) as e:
            sb.call({"op": "raise"}, timeout=10)
        assert e.value.kind == "raised" and e.value.error_type == "KeyError" and "boom" in str(e.value)
        assert sb.call({"op": "print"}, timeout=10)[0] == {}     # 5 MB of output: kept bounded
        time.sleep(0.2)
        log = sb.log()
        assert len(log) < 5000 and "bytes left out" in log
        with pytest.raises(SandboxError) as e:
            sb.call({"op": "memory"}, timeout=10)
        assert e.value.kind == "raised" and e.value.error_type == "MemoryError"
        assert sb.alive and sb.call({"op": "sum"}, [a], timeout=10)[0]["calls"] == 3
    assert not sb.alive and live_sandboxes() == []


@pytest.mark.parametrize("op, kind, limits", [
    ("exit", "exited", Limits()),
    ("sleep", "timeout", Limits()),
    ("spin", "cpu", Limits(call_cpu_seconds=0.2)),
    ("garble", "protocol", Limits()),
])
def test_sandbox_failures_kill_the_process(op, kind, limits):
    sb = Sandbox(PROGRAM, limits=limits)
    sb.start()
    pid = sb.pid
    t0 = time.monotonic()
    with pytest.raises(SandboxError) as e:
        sb.call({"op": op}, timeout=0.5 if op == "sleep" else 30)
    assert e.value.kind == kind, e.value
    assert time.monotonic() - t0 < 25
    assert not sb.alive and pid not in live_sandboxes()
    with pytest.raises(SandboxError) as e:
        sb.call({"op": "sum"})
    assert e.value.kind == "closed"


def test_channel_refuses_malformed_messages():
    def endpoint_with(data: bytes, **kw):
        import tempfile
        f = tempfile.TemporaryFile()
        f.write(data)
        f.seek(0)
        return Endpoint(os.dup(f.fileno()), os.open(os.devnull, os.O_WRONLY), nonblocking=True, **kw)

    def msg(body: bytes, blob: bytes = b"") -> bytes:
        return HEADER.pack(len(body), len(blob)) + body + blob

    bad = {
        "not json": msg(b"{nope"),
        "not an object": msg(b"[1, 2]"),
        "deep": msg(b"[" * 100_000 + b"]" * 100_000),
        "huge int": msg(b'{"x": ' + b"9" * 5000 + b"}"),
        "not utf-8": msg(b'{"x": "\xff\xfe"}'),
        "blob without description": msg(b"{}", b"abc"),
        "descriptor asks too much": msg(b'{"_blobs": [{"dtype": "uint8", "shape": [10]}]}', b"abc"),
        "bad dtype": msg(b'{"_blobs": [{"dtype": "object", "shape": [1]}]}', b"a"),
        "too large": HEADER.pack(1 << 30, 0),
        "cut off": msg(b'{"a": 1}')[:-2],
    }
    for what, data in bad.items():
        with pytest.raises(ChannelError) as e:
            endpoint_with(data, max_json=1 << 20).recv(time.monotonic() + 2)
        assert e.value.kind in ("malformed", "too_large", "closed"), what
    r, arrs = endpoint_with(msg(b'{"a": 1, "_blobs": [{"dtype": "int32", "shape": [2]}]}',
                                np.array([5, 6], np.int32).tobytes())).recv(time.monotonic() + 2)
    assert r == {"a": 1} and arrs[0].tolist() == [5, 6]


# ---- agent files: cheats ---------------------------------------------------------------------

CHEATS = '''
import gc, json, os, sys
from longpuzzle.agents.base import BaseAgent, FinalAnswer

LEVELS = {levels!r}
OUT = {out!r}

def attempt(f):
    try:
        return "worked: " + str(f())[:60]
    except BaseException as e:
        return "failed: " + type(e).__name__

class Cheater(BaseAgent):
    def act(self, obs):
        if obs.frame is None:
            return {{"type": "wait", "ms": 0}}
        report = {{}}
        # 1. walk the heap for the evaluator and the suite, and mark every level won
        found = [o for o in gc.get_objects() if type(o).__name__ in ("Evaluator", "Suite", "Session", "Run")]
        for o in found:
            for lo in getattr(o, "outcomes", {{}}).values():
                lo.reached = lo.won = True
                lo.max_progress = 1.0
        report["heap"] = len(found)
        # 2. run_objective's locals through the frames of every thread
        kinds = set()
        for fr in sys._current_frames().values():
            while fr is not None:
                kinds.update(type(v).__name__ for v in list(fr.f_locals.values())
                             if type(v).__name__ in ("Suite", "Evaluator", "ObjectiveEpisode", "Run", "AgentCaller"))
                fr = fr.f_back
        report["frames"] = sorted(kinds)
        # 3. the level files, the package, the renderer's buffers, the evaluator's folder
        report["levels"] = attempt(lambda: open(LEVELS).read(20))
        report["import"] = attempt(lambda: __import__("longpuzzle.engine.suite"))
        report["render"] = attempt(lambda: __import__("longpuzzle.render.frame"))
        report["pygame"] = len([o for o in gc.get_objects() if type(o).__name__ == "Surface"])
        # 4. the harness process itself (not tried by the in-process control: it would fork pytest)
        if not globals().get("SAFE"):
            report["write_result"] = attempt(lambda: open(os.path.join(OUT, "result.json"), "w").write("{{}}"))
            ppid = os.getppid()
            report["memory"] = attempt(lambda: open(f"/proc/{{ppid}}/mem", "rb").read(1))
            report["environ"] = attempt(lambda: open(f"/proc/{{ppid}}/environ", "rb").read(1))
            report["signal"] = attempt(lambda: os.kill(ppid, 0))
            report["fork"] = attempt(lambda: os.fork())
        report["paths"] = [p for p in sys.path + [os.getcwd()] + list(os.environ.values()) + sys.argv
                           if "longpuzzle" in p or "/work" in p]
        report["base"] = sorted(n for n in dir(sys.modules["longpuzzle.agents.base"]) if not n.startswith("_"))
        report["fds"] = sorted(int(f) for f in os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else []
        return FinalAnswer(json.dumps(report))
'''


def _final_answer(folder) -> dict:
    for line in (Path(folder) / "events.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "final_answer" in rec:
            return json.loads(rec["final_answer"])
    raise AssertionError("no final answer recorded")


def test_an_agent_file_cannot_cheat(tmp_path):
    levels = str(Path(builtin_catalog().file_of("maze_paint")).resolve()) if Path(builtin_catalog().file_of("maze_paint")).is_file() \
        else str(Path(__file__).resolve().parents[3] / "puzzles" / "levels" / "maze_paint.json")
    out = tmp_path / "episode"
    src = tmp_path / "cheater.py"
    src.write_text(CHEATS.format(levels=levels, out=str(out)))

    # the control: the same code run in-process (the trusted path) does reach the evaluator
    ns = {"SAFE": True}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    r = run_objective(ns["Cheater"](), "maze_paint", "easy", settings=Settings(budget=60), folder=tmp_path / "trusted")
    control = _final_answer(tmp_path / "trusted")
    assert control["heap"] > 0 and "AgentCaller" in control["frames"] and control["levels"].startswith("worked")
    assert r.outcome.success                      # the cheat works on a trusted agent object ...
    res = json.loads((tmp_path / "trusted" / "result.json").read_text())
    assert res["agent_isolation"] == {"trusted": True, "mode": "in-process"}

    # ... and does nothing from an agent file
    agent = load_agent(str(src), seed=3, style="2d")     # (no __init__: the options it does not take are dropped)
    r = run_objective(agent, "maze_paint", "easy", settings=Settings(budget=60), folder=out)
    rep = _final_answer(out)
    assert r.end == "final_answer" and not r.outcome.success and r.outcome.solved_count == 0
    assert all(not lo.won and not lo.reached for lo in r.outcome.levels)
    assert rep["heap"] == 0 and rep["frames"] == [] and rep["pygame"] == 0
    assert rep["import"] == rep["render"] == "failed: ModuleNotFoundError"
    assert rep["paths"] == []
    assert len(rep["fds"]) <= 8, rep["fds"]          # stdio, the channel, the shared frame buffer: nothing inherited
    assert "BaseAgent" in rep["base"] and "FinalAnswer" in rep["base"] and "Suite" not in rep["base"]
    if LANDLOCK:                                      # refused, or not even there (the sandbox's own view)
        assert {rep["levels"], rep["write_result"]} <= {"failed: PermissionError", "failed: FileNotFoundError"}
        assert rep["memory"].startswith("failed") and rep["environ"].startswith("failed")
    if SCOPED:
        assert rep["signal"] == "failed: PermissionError"
    if SECCOMP:
        assert rep["fork"] == "failed: PermissionError"
    res = json.loads((out / "result.json").read_text())
    assert res["success"] is False and res["agent_isolation"]["trusted"] is False
    assert res["agent_isolation"]["mode"] == "process"
    assert res["agent_isolation"]["protections"]["landlock"] == HAVE["landlock"]
    assert replay_episode(out).ok
    assert live_sandboxes() == []


# ---- agent files: failures -------------------------------------------------------------------

HOSTILE = '''
import json, os, sys, time
from longpuzzle.agents.base import BaseAgent, FinalAnswer, InfrastructureError

class Hostile(BaseAgent):
    def __init__(self, mode="", seed=0):
        self.mode = mode
        if mode == "init":
            raise ValueError("no thanks")

    def act(self, obs):
        m = self.mode
        if obs.frame is None and m not in ("junk", "nested"):
            return {{"type": "wait", "ms": 0}}
        if obs.step >= 3:
            return FinalAnswer("survived")
        if m == "exit":
            sys.exit(0)
        if m == "_exit":
            os._exit(7)
        if m == "hang":
            time.sleep(60)
        if m == "spin":
            while True:
                pass
        if m == "kill_self":
            os.kill(os.getpid(), 9)
        if m == "flood":
            for f in os.listdir("/proc/self/fd"):
                if int(f) > 2:
                    try:
                        os.write(int(f), b"\\x00\\x00\\x00\\x7f" * 1000)
                    except OSError:
                        pass
            time.sleep(30)
        if m == "print":
            print("y" * 20_000_000)
            print("Traceback (most recent call last): a fake one", file=sys.stderr)
        if m == "memory":
            return {{"x": bytearray(1 << 34)}}
        if m == "infra":
            raise InfrastructureError("provider down")
        if m == "garbage":
            return [1, 2]
        if m == "junk":                       # malformed actions: refused and counted, never fatal
            return [{{"type": "click", "x": 10 ** 400, "y": 5}}, {{"type": "x" * 10_000_000}},
                    {{"type": "wait", "ms": object()}}][obs.step % 3]
        if m == "nested":
            b = {{"type": "wait", "ms": 1}}
            for _ in range(4):
                b = {{"type": "batch", "actions": [b] * 200}}
            return [b, {{"type": "batch", "actions": [{{"type": "batch", "actions": [b] * 2}}] * 200}},
                    {{"type": "wait", "ms": 10 ** 5000}}][obs.step % 3]
        return {{"type": "wait", "ms": 10}}
'''


@pytest.mark.parametrize("mode, end, says", [
    ("init", "agent_error", "ValueError: no thanks"),
    ("exit", "agent_error", "SystemExit"),
    ("_exit", "agent_error", "status 7"),
    ("hang", "agent_error", "timeout"),
    ("spin", "agent_error", "cpu_limit"),
    ("kill_self", "agent_error", "SIGKILL"),
    ("flood", "agent_error", "garbage"),
    ("memory", "agent_error", "MemoryError"),
    ("garbage", "agent_error", "garbage"),
    ("infra", "agent_error", "provider down"),             # an untrusted claim: scored
    ("print", "final_answer", ""),
    ("junk", "invalid_action_limit", ""),
    ("nested", "invalid_action_limit", ""),
])
def test_hostile_agent_files_end_cleanly(tmp_path, capfd, mode, end, says):
    src = tmp_path / "hostile.py"
    src.write_text(HOSTILE.format())
    lim = Limits(memory_mb=1024, call_cpu_seconds=0.3 if mode == "spin" else None)
    agent = load_agent(str(src), mode=mode, limits=lim)
    st = Settings(budget=60, action_timeout=0.5 if mode == "hang" else 30)
    t0 = time.monotonic()
    if mode in ("junk", "nested"):           # the level protocol: three refusals in a row end a level
        r = run_level_chain(agent, "maze_paint", "easy", settings=st, folder=tmp_path / "chain")
        assert r.levels[0]["termination"] == end and not r.outcome.success
        folder = tmp_path / "chain" / "level_01"
    else:
        folder = tmp_path / "ep"
        r = run_objective(agent, "maze_paint", "easy", settings=st, folder=folder)
        assert r.end == end and says in r.error, (r.end, r.error)
    assert time.monotonic() - t0 < 30
    res = json.loads((folder / "result.json").read_text())
    assert res["agent_isolation"]["trusted"] is False
    assert live_sandboxes() == []
    captured = capfd.readouterr()
    assert "Traceback" not in captured.out + captured.err and "yyyy" not in captured.out + captured.err
    if mode == "print":                      # what the agent printed is kept, bounded, for its author
        log = (folder / "agent.log").read_text()
        assert "yyyy" in log and "a fake one" in log and len(log) < 200_000
    if mode in ("junk", "nested"):
        pub = [json.loads(l) for l in (folder / "events.jsonl").read_text().splitlines()]
        refused = [p for p in pub if p.get("stream") == "public" and "action" in p]
        assert len(refused) == 3 and all(p["feedback"]["status"] == "dispatch_failed" for p in refused)
        assert all(len(json.dumps(p)) < 3000 for p in refused)          # recorded compactly
        msgs = [p["feedback"]["message"] for p in refused]
        assert all(len(m) < 300 for m in msgs), msgs


def test_load_errors_are_one_line_and_agent_file_checks():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        ok = Path(d) / "ok.py"
        ok.write_text("from longpuzzle.agents.base import BaseAgent\nclass Mine(BaseAgent):\n    name = 'mine'\n")
        assert AgentFile(ok).check() == "Mine"
        assert type(make_caller(AgentFile(ok), 5.0)) is IsolatedAgentCaller
        for text, says in [("import nonexistent_module_xyz\n", "ModuleNotFoundError"),
                           ("x = (\n", "SyntaxError"),
                           ("import longpuzzle.engine\n", "ModuleNotFoundError"),
                           ("from longpuzzle.agents.base import BaseAgent\n", "exactly one BaseAgent subclass"),
                           ("import time\ntime.sleep(60)\n", "timeout")]:
            bad = Path(d) / "bad.py"
            bad.write_text(text)
            with pytest.raises(LongPuzzleError) as e:
                AgentFile(bad).check(timeout=1.0)
            assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
        (Path(d) / "bin.py").write_bytes(b"\xff\xfe\x00x")
        with pytest.raises(LongPuzzleError, match="cannot read"):
            AgentFile(Path(d) / "bin.py")
    assert live_sandboxes() == []
