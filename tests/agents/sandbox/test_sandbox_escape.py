"""Agents cannot reach out of the sandbox (issue 35): a hostile agent file tries each way out
and reports what it got; the harness side checks that nothing arrived (its servers saw no
connection, its files kept their metadata) and that the run records what was in force.

Each attack works on a sandbox without the protection (tried while writing these tests by
switching it off in agents/sandbox/harden.py): network (TCP and UDP to 127.0.0.1, listening,
netlink, named and abstract unix sockets), metadata changes and observation of files outside
its folder (chmod, utime, setxattr, stat, inotify, as uid 0), threads without bound, threads
that go on running between calls, the host's System V IPC, dropping the parent-death signal,
and a harness killed outright leaving its sandboxed process and folder (the code setting's
pause and CPU budget per episode: tests/agents/vista/test_vista_code.py)."""

import json
import os
import socket
import time
from pathlib import Path

import pytest

from longpuzzle.agents.harness import AgentFile, Settings, run_objective
from longpuzzle.agents.sandbox import Limits, live_sandboxes

HOSTILE = '''
import json, os, socket, threading, time
from longpuzzle.agents.base import BaseAgent, FinalAnswer

TARGETS = json.loads({targets!r})


def attempt(f):
    try:
        return "worked: " + str(f())[:80]
    except BaseException as e:
        return "failed: " + type(e).__name__


def tcp():
    s = socket.create_connection(("127.0.0.1", TARGETS["tcp"]), timeout=2)
    s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
    return s.getpeername()


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"hello", ("127.0.0.1", TARGETS["udp"]))


def listen():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s.getsockname()


def netlink():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.bind((0, 0))
    return s.getsockname()


def unix(addr):
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr)
    s.sendall(b"hello")
    return "connected"


def threads(n):
    made = 0
    stop = threading.Event()
    try:
        for _ in range(n):
            threading.Thread(target=stop.wait, daemon=True).start()
            made += 1
    except RuntimeError:
        pass
    stop.set()
    return made


def inotify(path):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    wd = libc.inotify_add_watch(fd, path.encode(), 0xFFF)
    if wd < 0:
        raise OSError(ctypes.get_errno(), "inotify_add_watch")
    return wd


class Escaper(BaseAgent):
    def __init__(self, mode=""):
        self.mode = mode

    def act(self, obs):
        t, rep = TARGETS, {{}}
        if self.mode == "network":
            rep["tcp"] = attempt(tcp)
            rep["udp"] = attempt(udp)
            rep["listen"] = attempt(listen)
            rep["netlink"] = attempt(netlink)
            rep["unix"] = attempt(lambda: unix(t["unix"]))
            rep["abstract"] = attempt(lambda: unix(t["abstract"].encode()))
        if self.mode == "files":
            v = t["victim"]
            rep["chmod"] = attempt(lambda: os.chmod(v, 0o6777))
            rep["utime"] = attempt(lambda: os.utime(v, (0, 0)))
            rep["setxattr"] = attempt(lambda: os.setxattr(v, "user.lp", b"x"))
            rep["chown"] = attempt(lambda: os.chown(v, 1234, 1234))
            for name in ("project", "results", "victim"):
                rep["stat " + name] = attempt(lambda: os.stat(t[name]).st_mode)
                rep["inotify " + name] = attempt(lambda: inotify(t[name]))
            rep["uid"] = os.getuid()
        if self.mode == "threads":
            rep["threads"] = threads(t["threads"])
        if self.mode == "spinner":                                     # a thread that never stops
            spins = [0]

            def spin():
                while True:
                    spins[0] += 1
            threading.Thread(target=spin, daemon=True).start()
            return {{"type": "wait", "ms": 0}}
        if self.mode == "linger":
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            rep["pdeathsig"] = libc.prctl(1, 0, 0, 0, 0)              # PR_SET_PDEATHSIG: none
            rep["msgget"] = libc.msgget(t["key"], 0)                  # the harness's message queue
        return FinalAnswer(json.dumps(rep))
'''


def _report(folder) -> dict:
    for line in (Path(folder) / "events.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "final_answer" in rec:
            return json.loads(rec["final_answer"])
    raise AssertionError("no final answer recorded")


def _run(tmp_path, mode, targets, limits=None, read=()):
    src = tmp_path / "escaper.py"
    src.write_text(HOSTILE.format(targets=json.dumps(targets)))
    agent = AgentFile(src, kwargs={"mode": mode}, limits=limits or Limits(memory_mb=1024), read=read)
    out = tmp_path / "results" / mode
    r = run_objective(agent, "maze_paint", "easy", settings=Settings(budget=60), folder=out)
    assert r.end == "final_answer", (r.end, r.error)
    res = json.loads((out / "result.json").read_text())
    assert live_sandboxes() == []
    return _report(out), res["agent_isolation"]["protections"]


def test_an_agent_file_has_no_network(tmp_path):
    tcp = socket.create_server(("127.0.0.1", 0))                 # a server on 127.0.0.1, as `mcp --http` is
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    named = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "s.sock")
    named.bind(path)
    named.listen()
    abstract = socket.socket(socket.AF_UNIX)
    name = f"\0lp-escape-{os.getpid()}"
    abstract.bind(name.encode())
    abstract.listen()
    for s in (tcp, udp, named, abstract):
        s.setblocking(False)
    try:
        rep, prot = _run(tmp_path, "network", {"tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1],
                                               "unix": path, "abstract": name})
        assert all(v.startswith("failed") for v in rep.values()), rep
        for s in (tcp, named, abstract):                          # nothing reached the harness's side
            with pytest.raises(BlockingIOError):
                s.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(100)
        assert prot["netns"] or "sockets" in prot["seccomp_denies"], prot
    finally:
        for s in (tcp, udp, named, abstract):
            s.close()


def test_an_agent_file_cannot_touch_or_watch_files_outside_its_folder(tmp_path):
    import longpuzzle
    victim = tmp_path / "victim.txt"          # readable by the agent (bound into its view), never changeable
    victim.write_text("keep me")
    os.chmod(victim, 0o644)
    before = os.stat(victim)
    results = tmp_path / "results"
    results.mkdir()
    rep, prot = _run(tmp_path, "files", {"victim": str(victim), "project": os.path.dirname(longpuzzle.__file__),
                                         "results": str(results)}, read=[str(victim)])
    for what in ("chmod", "utime", "setxattr", "chown", "stat project", "stat results", "inotify project",
                 "inotify results", "inotify victim"):
        assert rep[what].startswith("failed"), (what, rep)
    assert rep["stat victim"].startswith("worked")               # it may read what it was given ...
    after = os.stat(victim)                                       # ... and change nothing of it
    assert (after.st_mode, after.st_mtime_ns, after.st_uid) == (before.st_mode, before.st_mtime_ns, before.st_uid)
    assert os.listxattr(victim) == []
    if os.geteuid() == 0:                                         # started by root: a user of its own
        assert rep["uid"] != 0 and prot["own_user"] and prot["uid"] == rep["uid"], (rep, prot)


def test_an_agent_file_cannot_outlive_its_harness_or_reach_its_ipc(tmp_path):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x4C50_0000 + os.getpid() % 0xFFFF
    q = libc.msgget(key, 0o1666)                                  # IPC_CREAT | 0666
    assert q >= 0
    try:
        rep, prot = _run(tmp_path, "linger", {"key": key})
    finally:
        libc.msgctl(q, 0, None)                                   # IPC_RMID
    assert rep == {"pdeathsig": -1, "msgget": -1}, rep            # its parent-death signal stays; no host IPC
    assert prot["ipcns"] and prot["parent_death"]


def test_an_agent_file_has_a_bounded_number_of_threads(tmp_path):
    rep, prot = _run(tmp_path, "threads", {"threads": 300}, limits=Limits(memory_mb=2048, threads=16))
    if prot["threads"] is None:
        pytest.skip(f"no thread bound on this machine: {prot}")
    assert prot["threads"] == 16
    assert rep["threads"] < 16, rep                               # (the main thread and the watchdog count)


FINAL = "from longpuzzle.agents.base import BaseAgent, FinalAnswer\nclass Stop(BaseAgent):\n" \
        "    def act(self, obs):\n        return FinalAnswer('stop')\n"


def _eval(tmp_path, name):
    from click.testing import CliRunner
    from longpuzzle.cli import cli
    src = tmp_path / "stop.py"
    src.write_text(FINAL)
    out = tmp_path / name
    r = CliRunner().invoke(cli, ["eval", "--agent", str(src), "--objective", "maze_paint/easy", "--out", str(out),
                                 "--budget", "60"])
    assert r.exit_code == 0, r.output
    return r, json.loads((out / "run.json").read_text())["run"]["sandbox"]


def test_a_run_records_the_guarantees_in_force_and_says_once_what_is_missing(tmp_path, monkeypatch):
    from longpuzzle.agents.sandbox import guarantees
    r, rec = _eval(tmp_path, "here")
    assert rec["in_force"] == guarantees.in_force(guarantees.probe())
    if all(rec["in_force"].values()):                           # (this machine and CI: root, Linux 6.12+)
        assert "lacks" not in r.output
    # a kernel without namespaces, Landlock or seccomp, and an evaluator not run as root
    bare = {"platform": "linux", "netns": False, "mountns": False, "own_user": False, "threads": None, "landlock": 0,
            "landlock_scoped": False, "seccomp": False, "seccomp_denies": [], "parent_death": True, "errors": []}
    monkeypatch.setattr(guarantees, "_probe", bare)
    r, rec = _eval(tmp_path, "bare")
    assert not any(v for k, v in rec["in_force"].items() if k != "dies_with_harness")
    assert r.output.count("lacks") == 1 and "no network (needs seccomp" in r.output
    assert "read only (needs Landlock" in r.output and "own user (needs the evaluator running as root)" in r.output


HARNESS = """
import time
from longpuzzle.agents.sandbox import Sandbox
sb = Sandbox("def handle(call, arrays, ctx):\\n    return {}\\n")
sb.start()
print(sb.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat", "rb").read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def test_a_harness_killed_outright_leaves_no_process_and_no_folder(tmp_path):
    import subprocess
    import sys
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-c", HARNESS], stdout=subprocess.PIPE, env=env, text=True)
    try:
        pid = int(p.stdout.readline())
        assert not _gone(pid)
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    for _ in range(500):                       # the paused sandboxed process ends with its harness
        if _gone(pid):
            break
        time.sleep(0.02)
    assert _gone(pid)
    assert list(tmp_path.iterdir()) == []      # and no work folder is left behind


def test_work_folders_of_harnesses_gone_are_swept(tmp_path, monkeypatch):
    import subprocess
    import tempfile
    from longpuzzle.agents.sandbox import Sandbox
    dead = subprocess.Popen(["true"])
    dead.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"lp-sandbox-{dead.pid}-x1"             # left by a harness killed without a private /tmp
    stale.mkdir()
    (stale / "notes.txt").write_text("x")
    alive = tmp_path / f"lp-sandbox-{os.getppid()}-x2"          # a harness still running: kept
    alive.mkdir()
    with Sandbox("def handle(call, arrays, ctx):\n    return {}\n") as sb:
        sb.start()
    assert not stale.exists() and alive.exists()


def test_agent_network_lets_an_agent_file_open_sockets_and_is_recorded(tmp_path):
    tcp = socket.create_server(("127.0.0.1", 0))
    try:
        rep, prot = _run(tmp_path, "network", {"tcp": tcp.getsockname()[1], "udp": 9, "unix": "/nowhere",
                                               "abstract": "\0nowhere"}, limits=Limits(memory_mb=1024, network=True))
        assert rep["tcp"].startswith("worked") and tcp.accept()[0]         # on purpose, it reaches out
        assert not prot["netns"] and "sockets" not in prot["seccomp_denies"]
    finally:
        tcp.close()
    from click.testing import CliRunner
    from longpuzzle.cli import cli
    out = tmp_path / "net"
    (tmp_path / "stop.py").write_text(FINAL)
    r = CliRunner().invoke(cli, ["eval", "--agent", str(tmp_path / "stop.py"), "--objective", "maze_paint/easy",
                                 "--out", str(out), "--budget", "60", "--agent-network"])
    assert r.exit_code == 0, r.output
    run = json.loads((out / "run.json").read_text())["run"]
    assert run["agent_file"]["limits"]["network"] is True and run["sandbox"]["in_force"]["no_network"] is False
    assert "no network" not in r.output                                     # asked for: not a missing protection


NOOP = "def handle(call, arrays, ctx):\n    return {'ok': True}\n"


def _start_one(q):
    from longpuzzle.agents.sandbox import Sandbox
    with Sandbox(NOOP) as sb:
        q.put(sb.call({}, timeout=30)[0])


def test_a_process_forked_from_a_harness_starts_sandboxes_too():
    import multiprocessing
    from longpuzzle.agents.sandbox import Sandbox
    with Sandbox(NOOP) as sb:                   # this process's spawner thread runs (it is not forked along)
        assert sb.call({}, timeout=30)[0] == {"ok": True}
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_start_one, args=(q,), daemon=True)
    p.start()
    try:
        assert q.get(timeout=60) == {"ok": True}
    finally:
        p.join(10)


def test_nothing_an_agent_file_started_runs_between_its_calls(tmp_path):
    from longpuzzle.agents.base import Feedback, Observation, make_frame
    from longpuzzle.render.frame import render
    src = tmp_path / "escaper.py"
    src.write_text(HOSTILE.format(targets="{}"))
    caller = AgentFile(src, kwargs={"mode": "spinner"}, limits=Limits(memory_mb=1024)).caller(30.0)
    try:
        caller.reset("go", {"frame": (540, 960)})
        obs = Observation(make_frame(render("maze_paint/easy/1")), Feedback("screen_changed", True, "", 1), 1, 60.0)
        assert caller.act(obs) == {"type": "wait", "ms": 0}
        pid = caller.sandbox.pid
        state, cpu = _stat(pid)
        assert state == "T"                                    # stopped while the harness works ...
        time.sleep(0.3)
        assert _stat(pid) == (state, cpu)                      # ... so its spinning thread used no CPU
        caller.act(obs)                                        # (it runs during the next call)
        assert _stat(pid)[0] == "T"
    finally:
        caller.close()
    assert live_sandboxes() == []


def _stat(pid: int) -> tuple[str, int]:
    fields = open(f"/proc/{pid}/stat", "rb").read().rsplit(b")", 1)[1].split()
    return fields[0].decode(), int(fields[11]) + int(fields[12])


INSIDE = """
import json
from longpuzzle.agents.sandbox import Sandbox
PROGRAM = "import os\\ndef handle(call, arrays, ctx):\\n    return {'uid': os.getuid(), 'cwd': os.getcwd()}\\n"
with Sandbox(PROGRAM) as sb:
    prot = sb.start()
    print(json.dumps({"reply": sb.call({}, timeout=30)[0], "prot": prot}))
"""


def test_a_harness_that_is_root_only_in_its_user_namespace_gets_the_rest(tmp_path):
    import shutil
    import subprocess
    import sys
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rn", "true"]).returncode != 0:
        pytest.skip("no unprivileged user namespaces here (unshare -rn)")
    r = subprocess.run(["unshare", "-rn", sys.executable, "-c", INSIDE], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    prot = got["prot"]
    assert got["reply"] == {"uid": 0, "cwd": "/tmp/lp-sandbox"}      # no user of its own to switch to ...
    assert not prot["own_user"] and "no user of its own" in " ".join(prot["errors"])
    assert prot["netns"] and prot["mountns"] and prot["private_tmp"] and prot["seccomp"]   # ... the rest holds
