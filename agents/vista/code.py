"""run_python, the paper's Code Execution CUA: the agent's code runs in a sandboxed process of
its own (longpuzzle.agents.sandbox: no longpuzzle, no project files, no evaluator, limits on time,
CPU and memory) that persists across calls, so variables, imports and functions survive.

Inside, besides the standard library and numpy (``np``), the code has only:

    frames(turn=None)      the archived frames of a turn (default: the last) as a list of
                           (H, W, 3) uint8 arrays, intermediate ones first
    frame(turn=-1, index=-1)   one archived frame
    turns()                the number of turns so far
    gui(action, x=None, y=None, **fields)   play's arguments (tools.play_action: an action
                           name with its fields, or one action object; a batch where the
                           episode takes them) through the same controller as play;
                           returns {"turn", "feedback", "n_frames", "time_left",
                           "available_actions"} (raises GuiError for an action the
                           controller refuses)

Each call gets ``Limits`` (wall time, CPU time, memory): a call that exceeds them ends the
process (the next call starts a fresh one; its variables are gone) and says so. The episode
has a CPU budget for all its calls together (across fresh processes too): once it is spent,
run_python says so and runs nothing more. Between calls the process is stopped (SIGSTOP),
so nothing a cell started (a thread) runs while no call does; it has no network, runs as a
user of its own and sees only its own folder (see longpuzzle.agents.sandbox). The output
(stdout and stderr, and the value of a last bare expression, as a notebook shows it) comes
back capped; the controller logs every cell and its output in the episode's events.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from longpuzzle.agents.vista.archive import ArchiveError
from longpuzzle.agents.vista.tools import ToolError

OUTPUT_CAP = 20_000        # characters of output returned per call

KERNEL = r'''
import ast, io, sys, traceback

import numpy as np

OUTPUT_CAP = %d


class GuiError(Exception):
    """An action the controller refused (the message says why)."""


GuiError.__module__ = "__main__"               # tracebacks name it GuiError


_ctx = None


def frames(turn=None):
    """The archived frames of a turn (default: the last) as (H, W, 3) uint8 arrays."""
    reply, arrays = _ctx.request({"op": "frames", "turn": turn})
    if "error" in reply:
        raise ValueError(reply["error"])
    return [np.asarray(a) for a in arrays]


def frame(turn=-1, index=-1):
    """One archived frame: turn (negative counts from the last) and frame index in it."""
    reply, arrays = _ctx.request({"op": "frame", "turn": turn, "index": index})
    if "error" in reply:
        raise ValueError(reply["error"])
    return np.asarray(arrays[0])


def turns():
    """The number of turns so far."""
    return _ctx.request({"op": "turns"})[0]["turns"]


def gui(action, x=None, y=None, **fields):
    """Send one GUI action through the controller, as play: gui("click", 10, 20), or one
    action object gui({"type": "click", "x": 10, "y": 20}); returns its result."""
    args = {"action": action, **{k: v for k, v in (("x", x), ("y", y)) if v is not None}, **fields}
    reply, _ = _ctx.request({"op": "gui", "args": args})
    if "error" in reply:
        raise GuiError(reply["error"])
    return reply


SPACE = {"__name__": "__agent__", "np": np, "frames": frames, "frame": frame, "turns": turns, "gui": gui,
         "GuiError": GuiError}


def _run(code):
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), SPACE)
    if last is not None:
        v = eval(compile(last, "<cell>", "eval"), SPACE)
        if v is not None:
            print(repr(v))


def handle(call, arrays, ctx):
    global _ctx
    _ctx = ctx
    buf = io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = buf
    status = "ok"
    try:
        _run(call["code"])
    except BaseException as e:                 # the agent's exception: reported, the process lives on
        status = "error"
        tb = traceback.extract_tb(e.__traceback__)
        tb = [f for f in tb if f.filename == "<cell>"]
        buf.write("Traceback (most recent call last):\n" + "".join(traceback.format_list(tb)))
        buf.write("".join(traceback.format_exception_only(type(e), e)))
    finally:
        sys.stdout, sys.stderr = old
        _ctx = None
    out = buf.getvalue()
    if len(out) > OUTPUT_CAP:
        out = out[:OUTPUT_CAP // 2] + "\n... (%%d characters left out) ...\n" %% (len(out) - OUTPUT_CAP) + out[-OUTPUT_CAP // 2:]
    return {"status": status, "output": out}
''' % OUTPUT_CAP  # noqa: UP031 - the kernel's own % formats stay in the template


@dataclass(frozen=True)
class CodeLimits:
    """Per call: wall seconds and CPU seconds; for the process: memory (MiB) and threads; for
    the episode: CPU seconds of all calls together."""
    seconds: float = 30.0
    cpu_seconds: float = 30.0
    memory_mb: int = 2048
    episode_cpu_seconds: float = 600.0
    threads: int = 32


class CodeRunner:
    """The agent's Python process for one episode (started on the first call)."""

    def __init__(self, controller, limits: CodeLimits | None = None):
        self.c = controller
        self.limits = limits or CodeLimits()
        self.sb = None
        self.cells = 0
        self.restarts = 0
        self.cpu_spent = 0.0             # CPU seconds of the processes already ended

    def cpu_used(self) -> float:
        """CPU seconds the episode's code has used so far (all its processes)."""
        return self.cpu_spent + (self.sb.cpu_time() if self.sb is not None else 0.0)

    def _start(self, left: float):
        from longpuzzle.agents.sandbox import Limits, Sandbox
        lim = self.limits
        hide = [str(self.c.folder)] if self.c.folder is not None else []     # the episode folder too
        self.sb = Sandbox(KERNEL, name="agent_code", hide=hide,
                          limits=Limits(memory_mb=lim.memory_mb, call_cpu_seconds=lim.cpu_seconds,
                                        cpu_seconds=left, threads=lim.threads))
        self.sb.start()

    def run(self, code: str, refs: list) -> dict:
        """Run one cell: {"status": "ok" | "error" | "ended", "output": text, "turns": [...]}."""
        from longpuzzle.agents.sandbox import SandboxError
        self.cells += 1
        turns0 = self.c.turn
        note = ""
        budget = self.limits.episode_cpu_seconds
        spent = {"status": "ended", "output": f"the CPU budget of this episode's code ({budget:g} s) is spent: "
                                               "nothing was run"}
        left = budget - self.cpu_used()
        if left <= 0:
            return spent
        if self.sb is None or not self.sb.alive:
            if self.sb is not None:
                self.restarts += 1
                self.cpu_spent += self.sb.cpu_time()
                self.sb = None
                note = "(a new Python process: the previous one was ended, its variables are gone)\n"
            try:
                self._start(left)
            except SandboxError as e:           # (what the budget left was not enough even to start)
                self.cpu_spent += self.sb.cpu_time()
                self.sb = None
                if e.kind == "cpu":
                    self.cpu_spent = max(self.cpu_spent, budget)
                    return spent
                return {"status": "ended", "output": f"the Python process could not start ({e.kind}: {e.detail})"}
        try:
            reply, _ = self.sb.call({"code": code}, timeout=self.limits.seconds,
                                    on_callback=lambda msg, arrays: self._callback(msg, refs))
            status, out = reply.get("status", "error"), str(reply.get("output", ""))
        except SandboxError as e:
            status = "ended"
            out = (f"the Python process was ended ({e.kind}: {e.detail or e}); the next call starts a new one "
                   "and its variables are gone")
            self.sb.close()
        res = {"status": status, "output": note + out}
        made = list(range(turns0 + 1, self.c.turn + 1))
        if made:
            res["turns"] = made
        return res

    def _callback(self, msg: dict, refs: list):
        op = msg.get("op")
        a = self.c.archive
        try:
            if op == "turns":
                return {"turns": a.last_turn}
            if op == "frames":
                t = msg.get("turn")
                t, _, _ = a.resolve(-1 if t is None else t, -1)
                n = a.count(t)
                first = a.index(t, 0)
                refs.extend({"index": first + k, "turn": t, "frame": k, "to": "code"} for k in range(n))
                return {"turn": t, "n": n}, [np.ascontiguousarray(a.read(first + k)) for k in range(n)]
            if op == "frame":
                t, k, i = a.resolve(msg.get("turn", -1), msg.get("index", -1))
                refs.append({"index": i, "turn": t, "frame": k, "to": "code"})
                return {"index": i}, [np.ascontiguousarray(a.read(i))]
            if op == "gui":
                if self.c.done or self.c.ep.poll():
                    return {"error": f"the episode has ended ({self.c.ep.end})"}
                try:
                    out = self.c.gui(self.c.play_action(msg.get("args")), None, with_image=False)
                except ToolError as e:
                    return {"error": str(e)}
                if out["error"]:
                    return {"error": out["text"].get("message") or "not executed", **out["text"]}
                return out["text"]
        except (ArchiveError, ValueError, TypeError) as e:
            return {"error": str(e)}
        return {"error": f"unknown request {op!r}"}

    def close(self) -> None:
        if self.sb is not None:
            self.sb.close()
            self.cpu_spent += self.sb.cpu_time()
            self.sb = None
