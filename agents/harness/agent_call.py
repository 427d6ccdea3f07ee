"""Calling an agent: per-call timeouts, and every failure of the agent turned into an AgentError.

The harness talks to an agent ONLY through an agent caller, whose interface is::

    caller.reset(instruction, action_spec, timeout=None)
    caller.act(observation, timeout=None) -> action dict | FinalAnswer
    caller.note(text)                       an extra instruction mid-episode (an intervention)
    caller.close()

Timeouts are in seconds; ``None`` means the caller's default (its ``timeout``, itself None
for no limit); a timeout <= 0 means no time is left and the agent is not called. A call that
does not return in time raises ``AgentError("timeout", ...)``; an exception in the agent
raises ``AgentError("raised", ...)``; ``act`` returning something that is neither an action
dict nor a FinalAnswer raises ``AgentError("garbage", ...)``. An InfrastructureError raised
by the agent passes through unchanged (it is not the agent's failure). After a timeout the
caller is spent: the agent may still be running, so every later call raises a timeout too.

:class:`AgentCaller` is the in-process caller for trusted agents (the built-in ones): the
agent runs on one daemon worker thread, so a hung agent never keeps the process alive. Other
callers (an agent in a separate process) implement the same four methods.
"""

from __future__ import annotations

import json
import math
import queue
import threading
from typing import Any

from longpuzzle.agents.base import AgentError, BaseAgent, FinalAnswer, InfrastructureError

_STOP = object()


class AgentCaller:
    """In-process caller of a trusted agent; ``timeout`` is the default per call (None: none)."""

    trusted = True

    def __init__(self, agent: BaseAgent, timeout: float | None = None):
        self.agent = agent
        self.timeout = timeout
        self._jobs: queue.SimpleQueue | None = None
        self._spent = ""                     # why the caller can no longer be used

    # ---- the interface ------------------------------------------------------------------
    def reset(self, instruction: str, action_spec: Any, timeout: float | None = None) -> None:
        self._call(self.agent.reset, (instruction, action_spec), timeout)

    def act(self, observation: Any, timeout: float | None = None) -> dict | FinalAnswer:
        action = self._call(self.agent.act, (observation,), timeout)
        check_returned(action)
        return action

    def note(self, text: str) -> None:
        self._call(self.agent.note, (text,), None)

    def close(self) -> None:
        if self._jobs is not None and not self._spent:
            self._jobs.put(_STOP)
        self._jobs = None

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


def make_caller(agent: BaseAgent, timeout: float | None) -> AgentCaller:
    """The caller the harness uses for ``agent`` with the default per-call ``timeout``
    (seconds; None or 0: no limit)."""
    return AgentCaller(agent, timeout or None)


def _guarded(fn, args):
    try:
        return fn(*args)
    except InfrastructureError:
        raise
    except AgentError:
        raise
    except Exception as e:                   # noqa: BLE001 - any agent failure ends its episode
        raise AgentError("raised", f"{type(e).__name__}: {e}") from e


def _worker(jobs: queue.SimpleQueue) -> None:
    while True:
        job = jobs.get()
        if job is _STOP:
            return
        fn, args, box, done = job
        try:
            box.append((True, _guarded(fn, args)))
        except BaseException as e:           # noqa: BLE001 - handed back to the harness thread
            if not isinstance(e, (AgentError, InfrastructureError)):
                e = AgentError("raised", f"{type(e).__name__}: {e}")
            box.append((False, e))
        done.set()


def check_returned(action: Any) -> None:
    """An agent must return an action (a dict, possibly malformed: that is refused with a
    message and counted invalid) or a FinalAnswer; anything else is garbage and ends the
    episode as an agent error."""
    if not isinstance(action, (dict, FinalAnswer)):
        raise AgentError("garbage", f"act() returned {type(action).__name__}, not an action dict or FinalAnswer")


def jsonable_action(a: Any) -> Any:
    try:
        json.dumps(a)
        return a
    except (TypeError, ValueError):
        return repr(a)
