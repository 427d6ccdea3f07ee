"""Calling an agent: per-call timeouts, and every failure of the agent turned into an AgentError.

The harness talks to an agent ONLY through an agent caller, whose interface is::

    caller.reset(instruction, action_spec, timeout=None)
    caller.act(observation, timeout=None) -> action dict | FinalAnswer
    caller.note(text)                       an extra instruction mid-episode (an intervention)
    caller.take_over(takeover)              the takeover context (api.Takeover), once after reset
    caller.probe(probe, timeout=None) -> answer text   a rule probe asked aside from play (api.Probe)
    caller.close()

Timeouts are in seconds; ``None`` means the caller's default (its ``timeout``, itself None
for no limit); a timeout <= 0 means no time is left and the agent is not called. A call that
does not return in time raises ``AgentError("timeout", ...)``; an exception in the agent
raises ``AgentError("raised", ...)``; ``act`` returning something that is neither an action
dict nor a FinalAnswer raises ``AgentError("garbage", ...)``. An InfrastructureError raised
by the agent passes through unchanged (it is not the agent's failure). After a timeout the
caller is spent: the agent may still be running, so every later call raises a timeout too.

:class:`AgentCaller` is the in-process caller for trusted agents (the built-in ones). On the
main thread it calls the agent directly, with the deadline enforced by an interval timer
(SIGALRM raises inside the agent's code when its time is up; a call that still returns late,
e.g. from compiled code that does not look at signals, is a timeout all the same): no thread
handoff per action. Elsewhere (episodes on worker threads, or SIGALRM in use by someone
else) the agent runs on one daemon worker thread, so a hung agent never keeps the process
alive. Other callers (an agent in a separate process) implement the same four methods.
"""

from __future__ import annotations

import hashlib
import json
import math
import queue
import signal
import threading
import time
import weakref
from typing import Any

from longpuzzle.agents.base import AgentError, BaseAgent, FinalAnswer, InfrastructureError, InternalError
from longpuzzle.engine import gui

_STOP = object()


class AgentCaller:
    """In-process caller of a trusted agent; ``timeout`` is the default per call (None: none)."""

    trusted = True

    def __init__(self, agent: BaseAgent, timeout: float | None = None):
        self.agent = agent
        self.timeout = timeout
        self._jobs: queue.SimpleQueue | None = None
        self._spent = ""                     # why the caller can no longer be used
        self._alarm = None                   # _Alarm while this caller holds it (main thread)

    # ---- the interface ------------------------------------------------------------------
    def reset(self, instruction: str, action_spec: Any, timeout: float | None = None) -> None:
        self._call(self.agent.reset, (instruction, action_spec), timeout)

    def act(self, observation: Any, timeout: float | None = None) -> dict | FinalAnswer:
        return self._call(_act_plain, (self.agent, observation), timeout)

    def note(self, text: str) -> None:
        self._call(self.agent.note, (text,), None)

    def take_over(self, takeover: Any, timeout: float | None = None) -> None:
        """The takeover context (api.Takeover), once after reset and before the first act."""
        self._call(self.agent.take_over, (takeover,), timeout)

    def probe(self, probe: Any, timeout: float | None = None) -> str:
        """The agent's answer to a rule probe (api.Probe), asked aside from play."""
        return str(self._call(self.agent.probe, (probe,), timeout) or "")

    def close(self) -> None:
        if self._jobs is not None and not self._spent:
            self._jobs.put(_STOP)
        self._jobs = None
        if self._alarm is not None:
            self._alarm = None
            self._release()

    # ---- machinery ----------------------------------------------------------------------
    def _limit(self, timeout: float | None) -> float | None:
        t = self.timeout if timeout is None else timeout
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or math.isnan(t)):
            raise ValueError(f"timeout must be a number of seconds or None, not {t!r}")
        return None if t is None or math.isinf(t) else float(t)

    def _call(self, fn, args: tuple, timeout: float | None):
        if self._spent:
            raise AgentError("timeout", self._spent)
        limit = self._limit(timeout)
        if limit is None:
            return _guarded(fn, args)
        if limit <= 0:
            raise AgentError("timeout", "no time left for the agent")
        if self._alarm is None and self._jobs is None:
            self._alarm = _Alarm.take()
            if self._alarm is not None:      # given back on close(), or when the caller is collected
                self._release = weakref.finalize(self, _Alarm.release)
        if self._alarm is not None and threading.current_thread() is threading.main_thread() \
                and not _Alarm.armed:
            return self._call_here(fn, args, limit)
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            threading.Thread(target=_worker, args=(self._jobs,), name="agent", daemon=True).start()
        done = threading.Event()
        box: list = []
        self._jobs.put((fn, args, box, done))
        if not done.wait(limit):
            self._spent = f"no answer within {limit:g} s"
            self._jobs = None                # the worker may never come back; it is a daemon
            raise AgentError("timeout", self._spent)
        ok, value = box[0]
        if ok:
            return value
        raise value

    def _call_here(self, fn, args: tuple, limit: float):
        """The agent called on this (the main) thread, interrupted at ``limit`` seconds."""
        alarm = self._alarm
        t0 = time.perf_counter()
        try:
            alarm.arm(limit)
            try:
                value = _guarded(fn, args)
            finally:
                alarm.disarm()
        except _Deadline:
            value = _Deadline
        if value is _Deadline or time.perf_counter() - t0 > limit:
            self._spent = f"no answer within {limit:g} s"
            raise AgentError("timeout", self._spent)
        return value


class _Deadline(BaseException):
    """Raised inside a directly called agent when its time is up (a BaseException, so that
    the agent's own ``except Exception`` does not swallow it)."""


def _on_alarm(signum, frame):
    if _Alarm.armed:
        _Alarm.armed = False
        raise _Deadline()


class _Alarm:
    """SIGALRM and the real-time interval timer, shared by the callers on the main thread while
    nobody else uses them: the handler is installed when the first caller takes it and put
    back when the last one is closed (or collected), so a call costs two setitimer calls."""

    users = 0
    armed = False
    prev = None

    @classmethod
    def take(cls) -> type[_Alarm] | None:
        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            return None
        try:
            if cls.users == 0:
                if signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL \
                        or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
                    return None             # someone else's timer: leave it alone
                cls.prev = signal.signal(signal.SIGALRM, _on_alarm)
            elif signal.getsignal(signal.SIGALRM) is not _on_alarm:
                return None                 # replaced since: not ours any more
        except (ValueError, OSError):
            return None
        cls.users += 1
        return cls

    @classmethod
    def arm(cls, seconds: float) -> bool:
        """Start the timer; False if it is running already (a call inside a call)."""
        if cls.armed:
            return False
        cls.armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return True

    @classmethod
    def disarm(cls) -> None:
        cls.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)

    @classmethod
    def release(cls) -> None:
        cls.users -= 1
        if cls.users == 0:
            try:
                if signal.getsignal(signal.SIGALRM) is _on_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, cls.prev or signal.SIG_DFL)
            except (ValueError, OSError):   # not on the main thread (a collected caller)
                pass


def caller_isolation(caller: Any) -> dict:
    """How the agent ran, for the results: {"trusted": ..., "mode": "in-process" | "process", ...}."""
    iso = getattr(caller, "isolation", None)
    if isinstance(iso, dict):
        return iso
    return {"trusted": bool(getattr(caller, "trusted", True)), "mode": "in-process"}


AGENT_LOG = "agent.log"


def save_agent_log(caller: Any, folder) -> None:
    """Write what an isolated agent printed (its stdout and stderr, bounded by the sandbox)
    to ``agent.log`` in the episode folder, so its author can debug it; nothing when it
    printed nothing or runs in-process (its output then goes where the harness's does)."""
    log = getattr(caller, "log", None)
    if folder is None or not callable(log):
        return
    text = log()
    if text:
        from pathlib import Path

        Path(folder, AGENT_LOG).write_text(text, encoding="utf-8", errors="replace")


def _act_plain(agent: BaseAgent, observation: Any) -> Any:
    """agent.act(observation), and what it returned read as plain data, all inside the timed
    call: an action comes back as an exact dict (a dict subclass is read through gui.plain,
    which never runs the object's code; what cannot be read becomes an UnreadableAction,
    refused and counted), a FinalAnswer as an exact FinalAnswer; anything else is garbage."""
    a = agent.act(observation)
    t = type(a)
    if t is dict or t is FinalAnswer:
        return a
    if issubclass(t, dict):
        try:
            return gui.plain(a)
        except gui.ActionError as e:
            return UnreadableAction(str(e))
    if issubclass(t, FinalAnswer):
        text = a.text
        return FinalAnswer(str.__str__(text) if issubclass(type(text), str) else f"<{type(text).__name__}>")
    raise AgentError("garbage", f"act() returned {t.__name__}, not an action dict or FinalAnswer")


def _guarded(fn, args):
    try:
        return fn(*args)
    except (InfrastructureError, AgentError, InternalError):    # (InternalError: our own bug stops the run)
        raise
    except (Exception, SystemExit) as e:
        raise AgentError("raised", f"{type(e).__name__}: {e}") from e      # Ctrl+C still stops the run)


def _worker(jobs: queue.SimpleQueue) -> None:
    while True:
        job = jobs.get()
        if job is _STOP:
            return
        fn, args, box, done = job
        try:
            box.append((True, _guarded(fn, args)))
        except BaseException as e:           # noqa: BLE001 - handed back to the harness thread
            if not isinstance(e, (AgentError, InfrastructureError, InternalError)):
                e = AgentError("raised", f"{type(e).__name__}: {e}")
            box.append((False, e))
        done.set()


def check_returned(action: Any) -> None:
    """An agent must return an action (a dict, possibly malformed: that is refused with a
    message and counted invalid) or a FinalAnswer; anything else is garbage and ends the
    episode as an agent error."""
    if not isinstance(action, (dict, FinalAnswer)):
        raise AgentError("garbage", f"act() returned {type(action).__name__}, not an action dict or FinalAnswer")


class UnreadableAction(dict):
    """What an agent returned in place of an action that could not even be read as data (not
    JSON-encodable, too large): the harness refuses it with ``message`` and counts it as an
    invalid action, as any malformed action (it is an empty dict, so it passes as one)."""

    def __init__(self, message: str):
        super().__init__()
        self.message = message


MAX_RECORDED_ACTION = 2048       # characters of JSON a refused action may take in events.jsonl


def jsonable_action(a: Any) -> Any:
    """The action as recorded in events.jsonl: as given when it is plain data of at most
    MAX_RECORDED_ACTION characters of JSON, else a compact summary (what kind of value, its
    size and digest, the start of its text), so one refusal costs a bounded number of bytes."""
    if isinstance(a, UnreadableAction):
        return {"unreadable": a.message[:500]}
    try:
        p = gui.plain(a)
        text = json.dumps(p, separators=(",", ":"))
    except (gui.ActionError, ValueError) as e:
        return {"unrecordable": str(e)[:300], "kind": type(a).__name__[:60]}
    if len(text) <= MAX_RECORDED_ACTION:
        return p
    return {"oversized": {"kind": type(a).__name__[:60], "json_chars": len(text),
                          "sha256": hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(),
                          "head": text[:200]}}
