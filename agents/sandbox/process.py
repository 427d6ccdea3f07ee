"""The harness's side of a sandbox: start the process, call it, bound it, end it.

See the package docstring (longpuzzle/agents/sandbox/__init__.py) for the model and the API.
"""

from __future__ import annotations

import glob
import json
import math
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import weakref
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.agents.sandbox import channel

# Runs as ``python -I -B -c BOOT``: reads the modules and the configuration from stdin
# (exactly, unbuffered, so the rest of stdin stays the channel) and calls child.main.
BOOT = r"""import os, sys, json, types
def _r(n):
    b = bytearray()
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            os._exit(70)
        b += c
    return bytes(b)
_d = json.loads(_r(int.from_bytes(_r(8), "little")))
_pkg = types.ModuleType("_lp_sandbox"); _pkg.__path__ = []; sys.modules["_lp_sandbox"] = _pkg
_progs = {}
for _name, _src in _d.pop("modules"):
    _m = types.ModuleType("_lp_sandbox." + _name); _m.__package__ = "_lp_sandbox"
    sys.modules[_m.__name__] = _m; setattr(_pkg, _name, _m); _progs[_name] = _m
    exec(compile(_src, "<sandbox:" + _name + ">", "exec"), _m.__dict__)
_progs["child"].main(_d["conf"], _progs)
"""

STANDALONE = ("channel", "harden", "child")          # modules of this package the process runs
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "ssl", "ca-certificates",
       "ca-certificates.conf", "pki", "crypto-policies", "resolv.conf", "hosts", "nsswitch.conf", "gai.conf",
       "host.conf", "services", "protocols", "passwd", "group", "mime.types", "os-release")
SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/proc/self", "/proc/cpuinfo",
               "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
PASSED_ENV = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE",
              "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "TZ")
_TICK = 0.1                                           # seconds between CPU checks while waiting


class SandboxError(LongPuzzleError):
    """The sandboxed process failed. ``kind``:

    start     it could not be started (or did not report ready in time)
    timeout   a call did not return within its timeout
    cpu       it used more CPU time than allowed (per call or in total)
    exited    it ended by itself (exit, a crash, a signal, the memory limit)
    protocol  it sent something that is not a valid message (garbage, too large, out of turn)
    raised    the program raised (``error_type`` names the exception)
    closed    the sandbox was already closed (after any of the above, or close())"""

    def __init__(self, kind: str, detail: str = "", error_type: str = ""):
        super().__init__(detail or kind)
        self.kind = kind
        self.detail = detail
        self.error_type = error_type


@dataclass(frozen=True)
class Limits:
    """What a sandboxed process may use. ``None`` = no limit of that kind."""

    memory_mb: int | None = 4096            # address space (RLIMIT_AS), MiB
    cpu_seconds: float | None = None        # CPU time in total (RLIMIT_CPU, and checked while waiting)
    call_cpu_seconds: float | None = None   # CPU time per call (checked while waiting)
    max_reply_bytes: int = 1 << 20          # JSON part of one message from the process
    max_reply_blob_bytes: int = 1 << 26     # binary part of one message from the process
    max_log_bytes: int = 64 << 10           # kept of its stdout + stderr (head and tail)
    file_mb: int | None = 256               # largest file it may write (in its work folder)
    open_files: int | None = 256
    processes: bool = False                 # may it start processes (fork / exec)?
    network: bool = False                   # may it open sockets (its own network)? no: no network at all
    threads: int | None = 64                # threads and processes at once (RLIMIT_NPROC, with a user of its own)
    tmp_mb: int | None = 512                # size of its private /tmp, which holds its work folder (MiB)
    pause_between_calls: bool = True        # stopped (SIGSTOP) while no call runs: nothing runs in between
    startup_seconds: float = 60.0           # to start and report ready

    def __post_init__(self):
        for k in ("memory_mb", "cpu_seconds", "call_cpu_seconds", "file_mb", "open_files", "threads", "tmp_mb"):
            v = getattr(self, k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                                  or v <= 0):
                raise SandboxError("start", f"sandbox limit {k} must be a positive number or None, not {v!r}")
        for k in ("max_reply_bytes", "max_reply_blob_bytes", "max_log_bytes"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise SandboxError("start", f"sandbox limit {k} must be a non-negative integer, not {v!r}")
        if isinstance(self.startup_seconds, bool) or not isinstance(self.startup_seconds, (int, float)) \
                or not self.startup_seconds > 0:
            raise SandboxError("start", f"startup_seconds must be positive, not {self.startup_seconds!r}")

    def as_dict(self) -> dict:
        return asdict(self)


def project_paths() -> list[str]:
    """Paths of this project that a sandboxed process must not see: the package folder, its
    installed metadata and editable-install hooks, the kernel cache, the current folder."""
    package = Path(__file__).resolve().parents[2]   # (agents/sandbox/process.py in the package folder)
    out = [str(package), os.getcwd()]
    cache = os.environ.get("LONGPUZZLE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "longpuzzle")
    out.append(cache)
    for site in _site_dirs():
        for pat in ("longpuzzle*", "__editable__*longpuzzle*", "__editable___longpuzzle*"):
            out.extend(glob.glob(os.path.join(site, pat)))
    return out


def _site_dirs() -> list[str]:
    paths = sysconfig.get_paths()
    return sorted({paths[k] for k in ("purelib", "platlib") if k in paths})


def readable_roots(hide: Iterable[str] = (), extra: Iterable[str] = ()) -> list[str]:
    """The paths a sandboxed process may read: the Python runtime and its libraries, system
    libraries, a few files of /etc, its own /proc entry, and ``extra``, minus every ``hide``
    subtree (a root that holds a hidden path is replaced by its other entries)."""
    paths = sysconfig.get_paths()
    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)),
             *(paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths),
             *SYSTEM_READ, *(os.path.join("/etc", e) for e in ETC), *extra]
    hidden = sorted({os.path.realpath(h) for h in hide if h})
    out: list[str] = []
    seen: set[str] = set()
    for r in roots:
        if r and os.path.exists(r):
            _allow(r if r.startswith("/proc/") else os.path.realpath(r), hidden, out, seen, 0)
    return out


def _allow(root: str, hidden: list[str], out: list, seen: set, depth: int) -> None:
    if root in seen:
        return
    seen.add(root)
    if any(root == h for h in hidden):
        return
    inside = [h for h in hidden if h.startswith(root.rstrip("/") + "/")]
    if not inside:
        out.append(root)
        return
    if depth > 12:
        return
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return
    for e in entries:
        p = os.path.join(root, e)
        rp = os.path.realpath(p)
        if any(rp == h or rp.startswith(h.rstrip("/") + "/") for h in hidden):
            continue                         # e.g. a symlink into a hidden folder
        _allow(p if rp == p else rp, hidden, out, seen, depth + 1)


SPECIAL = ("/proc", "/sys", "/dev", "/tmp")             # kept (/proc remounted, /tmp private) by the view


def _within(p: str, root: str) -> bool:
    return p == root or p.startswith(root.rstrip("/") + "/")


def view_plan(read: Iterable[str], write: Iterable[str], hide: Iterable[str]) -> dict:
    """The mount plan of a sandboxed process's view of the filesystem (harden._view builds
    it in its mount namespace): every top-level folder holding nothing it may read or write
    is ``empty``; one holding some is rebuilt with only those bound back (grouped by the
    entry of the folder they are in, so a Python runtime is one bind) and its symlinks that
    lead to them; what is readable under /tmp is bound into the private /tmp; the hidden
    paths are covered wherever they would still show."""
    allowed = [p for p in (*read, *write) if p]
    plan: dict = {"empty": [], "rebuild": [], "cover": [], "tmp": []}

    def binds(folder: str, under: list[str]) -> list[str]:
        groups: dict[str, list[str]] = {}
        for a in under:
            groups.setdefault(a[len(folder.rstrip("/")) + 1:].split("/")[0], []).append(a)
        return sorted(os.path.commonpath(g) for g in groups.values())

    try:
        top = sorted(os.listdir("/"))
    except OSError:
        top = []
    for e in top:
        d = "/" + e
        if d in SPECIAL or os.path.islink(d) or not os.path.isdir(d):
            continue
        under = [a for a in allowed if _within(a, d)]
        if not under:
            plan["empty"].append(d)
        elif d not in under:
            links = []
            try:
                for n in sorted(os.listdir(d)):
                    q = os.path.join(d, n)
                    if os.path.islink(q):
                        to = os.path.realpath(q)
                        if any(_within(to, a) for a in allowed):
                            links.append([q, os.readlink(q)])
            except OSError:
                pass
            plan["rebuild"].append([d, binds(d, under), links])
    plan["tmp"] = binds("/tmp", [a for a in allowed if a != "/tmp" and _within(a, "/tmp")])
    for h in hide:
        h = os.path.realpath(h) if h else ""
        if h and not any(_within(a, h) for a in (*allowed, *SPECIAL)) and os.path.lexists(h):
            plan["cover"].append(h)
    return plan


def protections_available() -> dict:
    """What this machine offers (without starting a process): Landlock ABI, platform."""
    from longpuzzle.agents.sandbox import harden
    import platform
    return {"platform": platform.system().lower(), "machine": platform.machine(),
            "landlock": harden.landlock_abi(), "seccomp": platform.machine() in harden.ARCH}


def live_sandboxes() -> list[int]:
    """Process ids of the sandboxed processes this process started that are still alive (not
    yet reaped zombies excluded): what a test or a supervisor checks is empty after a run."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_bytes().rsplit(b")", 1)[1].split()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and b"_lp_sandbox" in cmd and stat[0] != b"Z":
            out.append(int(d))
    return out


def _module_source(name: str) -> str:
    return (resources.files("longpuzzle.agents.sandbox") / f"{name}.py").read_text(encoding="utf-8")


class Sandbox:
    """One sandboxed process running ``program`` (Python source, standalone: standard library
    and numpy only) that defines ``handle(call: dict, arrays: list, ctx) -> dict | (dict, arrays)``.

        sb = Sandbox(program_source, limits=Limits(memory_mb=1024))
        sb.start()                                    # spawns it; sb.protections says what held
        reply, arrays = sb.call({"op": "sum"}, [np.arange(5)], timeout=2.0)
        sb.close()                                    # the process is gone afterwards

    ``call`` raises SandboxError (see its kinds); after any error except ``raised`` the
    process has been killed and the sandbox is closed. ``on_callback(msg, arrays) -> dict |
    (dict, arrays)`` answers the program's ``ctx.request`` during a call. ``hide`` adds paths
    the process must not read (the project's own are always hidden); ``read`` adds readable
    ones; ``pass_env`` names environment variables to pass on (the environment is otherwise
    nearly empty); ``blocked`` are package names it cannot import; ``shared_bytes`` is the size
    of the shared buffer arrays to the process go through (Linux; larger calls use the pipe)."""

    def __init__(self, program: str, *, limits: Limits | None = None, name: str = "program",
                 hide: Iterable[str] = (), read: Iterable[str] = (), pass_env: Iterable[str] = (),
                 blocked: Iterable[str] = ("longpuzzle",), modules: Iterable[tuple[str, str]] = (),
                 shared_bytes: int = 64 << 20):
        self.program = program
        self.shared_bytes = shared_bytes
        self.name = name
        self.limits = limits or Limits()
        self.hide = list(hide)
        self.read = list(read)
        self.pass_env = list(pass_env)
        self.blocked = list(blocked)
        self.modules = list(modules)
        self.protections: dict = {}
        self.proc: subprocess.Popen | None = None
        self.workdir = ""
        self._ep: channel.Endpoint | None = None
        self._log = _Log(self.limits.max_log_bytes)
        self._id = 0
        self._closed = False
        self._why = ""                     # why it ended (for SandboxError("closed"))
        self._fin = None
        self._stopped = False              # paused between calls (SIGSTOP)
        self._cpu = [0.0]                  # its CPU time when last read; exact once reaped (wait4)
        self._host_dir: list[str] = []     # a work folder on the host (no private /tmp), removed at the end

    # ---- life ---------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc is not None and not self._closed and _reap(self.proc, 0, self._cpu) is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def log(self) -> str:
        """What the process wrote to stdout and stderr (bounded: head and tail)."""
        return self._log.text()

    def start(self) -> dict:
        """Start the process; returns (and keeps in ``protections``) what was applied."""
        if self.proc is not None:
            raise SandboxError("start", "the sandbox was already started")
        if os.name != "posix":
            raise SandboxError("start", "sandboxed processes need a POSIX system")
        lim = self.limits
        _sweep()
        r_req, w_req = os.pipe()
        r_rep, w_rep = os.pipe()
        r_out, w_out = os.pipe()
        for fd in (w_req, r_rep):
            _bigger_pipe(fd)
        shm, shm_ro = _shared_buffer(self.shared_bytes)
        # HOME, TMPDIR and the current folder: its work folder, which the process makes itself
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMEXPR_NUM_THREADS": "1"}
        extra_read = []
        for k in (*PASSED_ENV, *self.pass_env):
            if k in os.environ:
                env[k] = os.environ[k]
                if k in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
                    extra_read.append(os.environ[k])
        hide = [*project_paths(), *self.hide]
        read = readable_roots(hide, [*self.read, *extra_read])
        conf = {
            "reply_fd": w_rep, "program": self.name, "blocked": self.blocked,
            "shm_fd": shm_ro, "shm_size": len(shm) if shm is not None else 0,
            "max_reply": lim.max_reply_bytes,
            "harden": {"memory_mb": lim.memory_mb, "cpu_seconds": lim.cpu_seconds, "file_mb": lim.file_mb,
                       "open_files": lim.open_files, "processes": lim.processes, "network": lim.network,
                       "threads": lim.threads, "tmp_mb": lim.tmp_mb, "parent": os.getpid(),
                       "workdir_prefix": f"{WORK_PREFIX}{os.getpid()}-", "tmp": tempfile.gettempdir(),
                       "read": read, "write": list(DEVICES), "view": view_plan(read, DEVICES, hide)},
        }
        mods = [[m, _module_source(m)] for m in STANDALONE] + [list(m) for m in self.modules] \
            + [[self.name, self.program]]
        try:
            self.proc = _spawn(
                [sys.executable, "-I", "-B", "-c", BOOT], stdin=r_req, stdout=w_out, stderr=w_out,
                pass_fds=(w_rep,) + ((shm_ro,) if shm_ro is not None else ()), cwd="/", env=env,
                start_new_session=True, close_fds=True)
        except OSError as e:
            for fd in (r_req, w_req, r_rep, w_rep, r_out, w_out) + ((shm_ro,) if shm_ro is not None else ()):
                os.close(fd)
            raise SandboxError("start", f"cannot start a sandboxed process: {e}") from None
        for fd in (r_req, w_rep, w_out) + ((shm_ro,) if shm_ro is not None else ()):
            os.close(fd)
        self._fin = weakref.finalize(self, _cleanup, self.proc, [w_req, r_rep], self._host_dir, self._cpu)
        threading.Thread(target=self._log.drain, args=(r_out,), name="sandbox-log", daemon=True).start()
        self._ep = channel.Endpoint(r_rep, w_req, max_json=lim.max_reply_bytes, max_blob=lim.max_reply_blob_bytes,
                                    nonblocking=True, shm_out=shm)
        deadline = time.monotonic() + lim.startup_seconds
        try:
            payload = json.dumps({"modules": mods, "conf": conf}).encode("utf-8")
            self._ep._write(memoryview(len(payload).to_bytes(8, "little") + payload), deadline)
            msg, _ = self._ep.recv(deadline, _TICK, self._check_cpu_total)
        except channel.ChannelError as e:
            self._fail(e, "starting")
        ready = msg.get("ready")
        if type(ready) is not dict:
            self._kill("it did not report ready")
            raise SandboxError("start", "the sandboxed process did not start properly")
        self.protections = ready.get("protections") if type(ready.get("protections")) is dict else {}
        wd = self.protections.get("workdir")
        self.workdir = wd if type(wd) is str else ""
        if self.workdir and not self.protections.get("private_tmp") \
                and os.path.dirname(self.workdir) == tempfile.gettempdir() \
                and os.path.basename(self.workdir).startswith(f"{WORK_PREFIX}{os.getpid()}-"):
            self._host_dir.append(self.workdir)
        self._pause()
        return self.protections

    # ---- pausing: nothing of it runs while no call does -----------------------------------
    def _pause(self) -> None:
        if self.limits.pause_between_calls and self.proc is not None and self.proc.returncode is None \
                and not self._stopped:                 # (a reaped process's pid may be another's)
            pid = self.proc.pid
            try:
                os.kill(pid, signal.SIGSTOP)
                self._stopped = True
                # wait until every thread has stopped (or the process ended; that report is
                # left for _reap), then consume the stop report so the next pause waits anew
                got = os.waitid(os.P_PID, pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
                if got is not None and got.si_code == os.CLD_STOPPED:
                    os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG)
            except (OSError, AttributeError):       # gone, reaped, or no waitid here
                pass

    def _resume(self) -> None:
        if self._stopped and self.proc.returncode is None:
            self._stopped = False
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def close(self, grace: float = 0.5) -> None:
        """End the process (asking first, then SIGKILL after ``grace`` seconds); idempotent."""
        if self.proc is None or self._closed:
            self._closed = True
            return
        if _reap(self.proc, 0, self._cpu) is None and self._ep is not None:
            self._resume()
            try:
                self._ep.send({"close": True}, (), time.monotonic() + min(grace, 0.2))
                _reap(self.proc, grace, self._cpu)
            except channel.ChannelError:
                pass
        self._kill(self._why or "closed")

    # ---- calls --------------------------------------------------------------------------
    def call(self, call: dict, blobs=(), *, timeout: float | None = None,
             on_callback: Callable[[dict, list], Any] | None = None) -> tuple[dict, list]:
        """Send one call; return the program's reply and arrays. See the class docstring."""
        if self.proc is None:
            self.start()
        if self._closed or self._ep is None:
            raise SandboxError("closed", f"the sandboxed process is gone ({self._why or 'closed'})")
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        lim = self.limits
        cpu0 = self.cpu_time() if lim.call_cpu_seconds is not None else 0.0
        self._id += 1
        cid = self._id

        def on_tick():
            self._check_cpu_total()
            if lim.call_cpu_seconds is not None and self.cpu_time() - cpu0 > lim.call_cpu_seconds:
                self._kill(f"more than {lim.call_cpu_seconds:g} s of CPU time in one call")
                raise SandboxError("cpu", f"it used more than {lim.call_cpu_seconds:g} s of CPU time in one call")

        self._resume()
        try:
            self._ep.send({"id": cid, "call": call}, blobs, deadline)
            while True:
                msg, arrays = self._ep.recv(deadline, _TICK, on_tick)
                if msg.get("id") != cid:
                    self._kill("a message out of turn")
                    raise SandboxError("protocol", "it sent a message out of turn")
                if "reply" in msg:
                    if type(msg["reply"]) is not dict:
                        self._kill("a reply that is not an object")
                        raise SandboxError("protocol", "its reply is not a JSON object")
                    return msg["reply"], arrays
                if "error" in msg:
                    e = msg["error"] if type(msg["error"]) is dict else {}
                    t, m = e.get("type"), e.get("message")
                    raise SandboxError("raised", str(m)[:2000] if m is not None else "",
                                       error_type=str(t)[:100] if t is not None else "Exception")
                if "callback" in msg and on_callback is not None and type(msg["callback"]) is dict:
                    out = on_callback(msg["callback"], arrays)
                    r, rb = out if isinstance(out, tuple) else (out, ())
                    self._ep.send({"id": cid, "callback_reply": r}, rb, deadline)
                    continue
                self._kill("an unexpected message")
                raise SandboxError("protocol", "it sent a message that is not a reply")
        except channel.ChannelError as e:
            self._fail(e, "in a call")
        finally:
            if not self._closed:
                self._pause()

    # ---- accounting ---------------------------------------------------------------------
    def cpu_time(self) -> float:
        """CPU seconds used by the process so far (user + system, all threads; Linux)."""
        if self.proc is None or self.proc.returncode is not None:
            return self._cpu[0]
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            self._cpu[0] = max(self._cpu[0], (int(fields[11]) + int(fields[12])) / _CLK_TCK)
        except (OSError, IndexError, ValueError):
            pass
        return self._cpu[0]

    def _check_cpu_total(self) -> None:
        lim = self.limits.cpu_seconds
        if lim is not None and self.cpu_time() > lim:
            self._kill(f"more than {lim:g} s of CPU time in total")
            raise SandboxError("cpu", f"it used more than {lim:g} s of CPU time in total")

    # ---- failure ------------------------------------------------------------------------
    def _fail(self, e: channel.ChannelError, when: str):
        if e.kind == "timeout":
            self._kill("timed out")
            raise SandboxError("start" if when == "starting" else "timeout",
                               "it did not start in time" if when == "starting" else "no reply in time") from None
        if e.kind == "closed":
            why = self._exit_reason()
            self._kill(why)
            raise SandboxError("start" if when == "starting" else "exited", why) from None
        self._kill(f"it broke the channel ({e.kind})")
        raise SandboxError("protocol", f"it sent something that is not a valid message: {e}") from None

    def _exit_reason(self) -> str:
        rc = _reap(self.proc, 1.0, self._cpu)
        if rc is None:
            return "it closed the channel"
        if rc >= 0:
            return f"the process exited with status {rc}"
        sig = -rc
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: CPU or memory limit?)",
                "SIGSEGV": " (crashed)", "SIGABRT": " (aborted)"}.get(name, "")
        if name == "SIGKILL" and self.limits.cpu_seconds is not None and self.cpu_time() >= self.limits.cpu_seconds:
            hint = " (CPU time limit)"
        if hint == " (CPU time limit)" and self.limits.cpu_seconds is not None:
            # the kernel's CPU clock reaches the limit before the accounted time does: it used it all
            self._cpu[0] = max(self._cpu[0], float(self.limits.cpu_seconds))
        return f"the process was ended by {name}{hint}"

    def _kill(self, why: str) -> None:
        if not self._why:
            self._why = why
        self._closed = True
        self.cpu_time()                      # its last reading, kept
        if self._fin is not None:
            self._fin()                      # kill the group, reap, close fds, remove the work folder
        self._ep = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _reap(proc: subprocess.Popen, timeout: float, cpu: list) -> int | None:
    """Reap the process if it has ended (waiting up to ``timeout`` seconds): its exit code (as
    Popen's returncode), or None while it runs. Reaped with wait4, whose resource usage gives
    its exact CPU time in ``cpu[0]`` (its /proc entry, read while it ran, goes with it)."""
    deadline = time.monotonic() + timeout
    while proc.returncode is None:
        try:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:            # reaped elsewhere
            proc.poll()
            break
        if pid:
            cpu[0] = max(cpu[0], ru.ru_utime + ru.ru_stime)
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)
    return proc.returncode


def _cleanup(proc: subprocess.Popen, fds: list[int], host_dirs: list[str], cpu: list) -> None:
    if proc.returncode is None:              # (not reaped: its pid is still its own)
        for kill in (os.killpg, os.kill):
            try:
                kill(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    _reap(proc, 5.0, cpu)
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    for d in host_dirs:
        import shutil
        shutil.rmtree(d, ignore_errors=True)


WORK_PREFIX = "lp-sandbox-"          # + the harness's pid + "-": a work folder on the host


def _sweep() -> None:
    """Remove the host work folders of harnesses that are gone (killed outright, they could not
    remove them): only where there is no private /tmp, and only folders of this user."""
    import shutil
    tmp = tempfile.gettempdir()
    for d in glob.glob(os.path.join(glob.escape(tmp), WORK_PREFIX + "*-*")):
        pid = os.path.basename(d)[len(WORK_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if os.stat(d).st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass


class _Spawner:
    """Starts every sandboxed process from one thread that lives as long as this process: a
    process's parent-death signal fires when the thread that started it ends, and it must
    fire only when the harness does (a paused process cannot notice by itself)."""

    lock = threading.Lock()
    jobs = None

    @classmethod
    def run(cls, fn):
        import queue
        with cls.lock:
            if cls.jobs is None:
                cls.jobs = queue.SimpleQueue()
                threading.Thread(target=cls._loop, args=(cls.jobs,), name="sandbox-spawner", daemon=True).start()
        box: list = []
        done = threading.Event()
        cls.jobs.put((fn, box, done))
        done.wait()
        ok, value = box[0]
        if ok:
            return value
        raise value

    @staticmethod
    def _loop(jobs) -> None:
        while True:
            fn, box, done = jobs.get()
            try:
                box.append((True, fn()))
            except BaseException as e:      # noqa: BLE001 - handed back to the caller
                box.append((False, e))
            done.set()


def _spawn(args, **kw) -> subprocess.Popen:
    return _Spawner.run(lambda: subprocess.Popen(args, **kw))


def _forked() -> None:
    """In a child forked from a harness (a worker process): its spawner thread did not come
    along; the child starts its own."""
    _Spawner.lock = threading.Lock()
    _Spawner.jobs = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _shared_buffer(size: int):
    """(a shared writable mapping, a READ-ONLY fd of it for the process) or (None, None).
    The memfd is sealed against shrinking, so the process cannot make our writes fault."""
    if not size or not hasattr(os, "memfd_create"):
        return None, None
    import fcntl
    import mmap
    try:
        fd = os.memfd_create("lp-sandbox-frames", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            mm = mmap.mmap(fd, size)
            ro = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            os.close(fd)
    except (OSError, AttributeError, ValueError):
        return None, None
    return mm, ro


def _bigger_pipe(fd: int) -> None:
    try:
        import fcntl
        fcntl.fcntl(fd, 1031, 1 << 20)       # F_SETPIPE_SZ: fewer wake-ups for a frame
    except (ImportError, OSError):
        pass


try:
    _CLK_TCK = os.sysconf("SC_CLK_TCK")
except (ValueError, OSError, AttributeError):   # pragma: no cover
    _CLK_TCK = 100


class _Log:
    """Keeps the head and the tail of a byte stream (bounded), counting what was dropped."""

    def __init__(self, limit: int):
        self.head_max = limit // 4
        self.tail_max = limit - self.head_max
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def drain(self, fd: int) -> None:
        try:
            while True:
                b = os.read(fd, 65536)
                if not b:
                    break
                with self.lock:
                    self.total += len(b)
                    room = self.head_max - len(self.head)
                    if room > 0:
                        self.head += b[:room]
                        b = b[room:]
                    if b and self.tail_max:
                        self.tail += b
                        if len(self.tail) > self.tail_max:
                            del self.tail[:len(self.tail) - self.tail_max]
        except OSError:
            pass
        finally:
            os.close(fd)

    def text(self) -> str:
        with self.lock:
            kept = len(self.head) + len(self.tail)
            mid = f"\n[... {self.total - kept} bytes left out ...]\n" if self.total > kept else ""
            return (bytes(self.head).decode("utf-8", "replace") + mid + bytes(self.tail).decode("utf-8", "replace"))
