"""Agents that are code run isolated: an agent file runs in a sandboxed process of its own
(longpuzzle.agents.sandbox) and the harness talks to it only through an agent caller.

What crosses the channel, and nothing else:

    to the agent    the instruction and the action spec (plain data), then per action the
                    public observation: frame and intermediate frames (uint8 arrays), the
                    feedback (status, executed, message, frames), step, time left; notes;
                    the takeover context (its texts, screenshots as uint8 arrays); rule
                    probes (their text and statements)
    from the agent  an action as JSON text (decoded here into plain dicts, lists, strings and
                    numbers: no object of the agent's ever reaches the harness), a final
                    answer's text, a probe's answer text, or what it raised

The agent file is never run in the harness's process. Inside its process it can import
``longpuzzle.agents.base`` (the standalone public API, agents/api.py) and nothing else of
longpuzzle; it gets no paths of the project (its own source is sent over the channel, its
current folder is an empty temporary one) and, where the kernel has Landlock, cannot read
them either. Memory and CPU time (per action and in total) are bounded; an agent that
hangs, busy-loops, exits (sys.exit, os._exit), crashes, floods or garbles the channel, or
raises in ``__init__`` ends its episode as ``agent_error``; the process is killed and the
result is written as for any other end.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, replace
from importlib import resources
from pathlib import Path
from typing import Any

from longpuzzle.agents.base import AgentError, FinalAnswer, InfrastructureError
from longpuzzle.agents.harness.agent_call import AgentCaller, UnreadableAction
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.agents.sandbox import Limits, Sandbox, SandboxError

DEFAULT_LIMITS = Limits(memory_mb=4096)
MAX_FINAL_TEXT = 10_000
_PROTECTIONS = ("platform", "no_new_privs", "landlock", "landlock_scoped", "landlock_net", "capabilities_dropped",
                "seccomp", "seccomp_denies", "netns", "ipcns", "mountns", "userns", "private_tmp", "own_user",
                "threads", "parent_death", "uid", "rlimits")


def _source(package: str, name: str) -> str:
    return (resources.files(package) / name).read_text(encoding="utf-8")


class AgentFile:
    """An agent given as a Python file with one BaseAgent subclass (``eval --agent FILE.py``).

    It is an agent handle, not an agent: the harness's make_caller() gives it an
    IsolatedAgentCaller, which runs the file in a sandboxed process. ``kwargs`` are passed to
    the class's ``__init__`` where it takes them (e.g. ``seed``); ``limits`` bound the
    process; ``pass_env`` names environment variables the agent needs (e.g. an API key for a
    model it calls); ``hide`` adds paths it must not read; ``read`` paths it may read (e.g. a
    model's weights; they are bound into its view of the filesystem)."""

    trusted = False

    def __init__(self, path: str | Path, *, kwargs: dict | None = None, limits: Limits | None = None,
                 pass_env=(), hide=(), read=()):
        p = Path(path)
        if p.suffix != ".py" or not p.is_file():
            raise LongPuzzleError(f"agent file {path} is not a .py file")
        try:
            self.source = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise LongPuzzleError(f"cannot read agent file {path}: {e}") from None
        self.path = p
        self.filename = p.name
        self.name = p.stem
        self.kwargs = {k: v for k, v in (kwargs or {}).items() if _plain(v)}
        self.limits = limits or DEFAULT_LIMITS
        self.pass_env = tuple(pass_env)
        self.hide = (*hide, str(p.resolve().parent))
        self.read = tuple(str(r) for r in read)
        self.class_name = ""

    def __repr__(self) -> str:
        return f"AgentFile({str(self.path)!r})"

    def caller(self, timeout: float | None = None) -> IsolatedAgentCaller:
        return IsolatedAgentCaller(self, timeout)

    def check(self, timeout: float = 60.0) -> str:
        """Load the file in a sandbox (its module code runs there; the class is not created)
        and return the agent class's name; LongPuzzleError says why a file cannot be used."""
        c = IsolatedAgentCaller(self, timeout)
        try:
            info = c._load(timeout, instantiate=False)
        except AgentError as e:
            why = e.detail if e.kind == "raised" else f"{e.kind}: {e.detail}"
            raise LongPuzzleError(f"cannot load agent file {self.path}: {why}") from None
        except InfrastructureError as e:
            raise LongPuzzleError(str(e)) from None
        finally:
            c.close()
        self.class_name = info.get("class", "")
        return self.class_name


def _plain(v: Any) -> bool:
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


class IsolatedAgentCaller:
    """The agent caller of an AgentFile (interface of agent_call.py: reset / act / note /
    close with per-call timeouts; ``timeout`` is the default per call, None for none)."""

    trusted = False

    def __init__(self, agent: AgentFile, timeout: float | None = None):
        self.agent = agent
        self.timeout = timeout
        self.sandbox: Sandbox | None = None
        self._spent: tuple[str, str] | None = None      # (kind, detail) once the process is gone
        self._loaded = False

    # ---- the interface --------------------------------------------------------------------
    def reset(self, instruction: str, action_spec: Any, timeout: float | None = None) -> None:
        limit = self._limit(timeout)
        if not self._loaded:
            self._load(limit, instantiate=True)
        spec = {k: list(v) if isinstance(v, tuple) else v for k, v in dict(action_spec).items()}
        self._answer(self._call({"op": "reset", "instruction": str(instruction), "action_spec": spec}, (), limit))

    def act(self, observation: Any, timeout: float | None = None) -> dict | FinalAnswer:
        limit = self._limit(timeout)
        if not self._loaded:
            raise AgentError("raised", "act() before reset()")
        fb = observation.feedback
        msg = {"op": "act", "step": int(observation.step),
               "time_left": None if observation.time_left is None else float(observation.time_left),
               "feedback": None if fb is None else asdict(fb), "frame": observation.frame is not None}
        frames = [f for f in (observation.frame, *observation.frames) if f is not None]
        r = self._call(msg, frames, limit)
        if "action_json" in r:
            s = r["action_json"]
            if type(s) is not str:
                raise AgentError("garbage", "the agent process sent an action that is not JSON text")
            try:
                a = json.loads(s)
            except (ValueError, RecursionError) as e:
                return UnreadableAction(f"the action is not readable JSON ({type(e).__name__}: {str(e)[:200]})")
            if type(a) is not dict:
                raise AgentError("garbage", f"act() returned {type(a).__name__}, not an action dict or FinalAnswer")
            return a
        if "final" in r:
            return FinalAnswer(str(r["final"])[:MAX_FINAL_TEXT])
        if "unencodable" in r:
            return UnreadableAction(str(r["unencodable"])[:500])
        if "garbage" in r:
            raise AgentError("garbage", f"act() returned {str(r['garbage'])[:100]}, not an action dict or FinalAnswer")
        self._answer(r)
        raise AgentError("garbage", "the agent process answered something that is not an action")

    def note(self, text: str) -> None:
        if self._loaded:
            self._answer(self._call({"op": "note", "text": str(text)}, (), self._limit(None)))

    def take_over(self, takeover: Any, timeout: float | None = None) -> None:
        """The takeover context (api.Takeover): its texts as plain data, its screenshots (the
        pairs', then the current one) as frames of the call."""
        if not self._loaded:
            raise AgentError("raised", "take_over() before reset()")
        frames = [f for f, _ in takeover.pairs] + ([takeover.frame] if takeover.frame is not None else [])
        self._answer(self._call({"op": "take_over", "step": int(takeover.step),
                                 "prefix": [str(t) for t in takeover.prefix],
                                 "pair_actions": [str(a) for _, a in takeover.pairs],
                                 "frame": takeover.frame is not None, "note": str(takeover.note)},
                                frames, self._limit(timeout)))

    def probe(self, probe: Any, timeout: float | None = None) -> str:
        """The agent's answer to a rule probe (api.Probe), asked aside from play."""
        if not self._loaded:
            raise AgentError("raised", "probe() before reset()")
        r = self._call({"op": "probe", "text": str(probe.text), "statements": [str(s) for s in probe.statements],
                        "rules": [int(k) for k in probe.rules], "card_title": str(probe.card_title)}, (),
                       self._limit(timeout))
        self._answer(r)
        return str(r.get("answer", ""))[:MAX_FINAL_TEXT]

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()

    @property
    def isolation(self) -> dict:
        """What the results record about how the agent ran."""
        sb = self.sandbox
        prot = {k: sb.protections.get(k) for k in _PROTECTIONS} if sb is not None and sb.protections else {}
        lim = self.agent.limits
        return {"trusted": False, "mode": "process", "protections": prot,
                "limits": {"memory_mb": lim.memory_mb, "cpu_seconds": lim.cpu_seconds,
                           "call_cpu_seconds": lim.call_cpu_seconds, "threads": lim.threads,
                           "network": lim.network, "pause_between_calls": lim.pause_between_calls}}

    def log(self) -> str:
        """The agent's own output (stdout and stderr, bounded)."""
        return self.sandbox.log() if self.sandbox is not None else ""

    # ---- machinery ------------------------------------------------------------------------
    def _limit(self, timeout: float | None) -> float | None:
        t = self.timeout if timeout is None else timeout
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or math.isnan(t)):
            raise ValueError(f"timeout must be a number of seconds or None, not {t!r}")
        t = None if t is None or math.isinf(t) else float(t)
        if t is not None and t <= 0:
            raise AgentError("timeout", "no time left for the agent")
        return t

    def _load(self, limit: float | None, instantiate: bool) -> dict:
        if self._spent:
            raise AgentError(*self._spent)
        ag = self.agent
        lim = ag.limits
        if limit is not None and limit > lim.startup_seconds:
            lim = replace(lim, startup_seconds=limit)
        self.sandbox = Sandbox(_source("longpuzzle.agents.harness", "agent_host.py"), name="agent_host", limits=lim,
                               hide=ag.hide, read=ag.read, pass_env=ag.pass_env)
        try:
            self.sandbox.start()
        except SandboxError as e:
            self._spent = ("exited", f"the agent process did not start: {e.detail or e.kind}")
            raise InfrastructureError(f"the agent sandbox could not start: {e.detail or e.kind}") from None
        r = self._call({"op": "load", "api": _source("longpuzzle.agents", "api.py"), "source": ag.source,
                        "filename": ag.filename, "kwargs": ag.kwargs, "instantiate": instantiate}, (), limit)
        if "load_error" in r:
            raise AgentError("raised", str(r["load_error"])[:2000])
        if "raised" in r or "infrastructure" in r:
            self._answer(r)
        self._loaded = instantiate
        return r

    def _call(self, msg: dict, frames, limit: float | None) -> dict:
        if self._spent:
            raise AgentError(*self._spent)
        try:
            r, _ = self.sandbox.call(msg, frames, timeout=limit)
            return r
        except SandboxError as e:
            kind, detail = {
                "timeout": ("timeout", f"no answer within {limit:g} s" if limit is not None else "no answer"),
                "cpu": ("cpu_limit", e.detail),
                "exited": ("exited", e.detail),
                "protocol": ("garbage", e.detail),
                "closed": ("exited", e.detail),
                "raised": ("raised", f"the agent host failed: {e.error_type}: {e.detail}"),
            }.get(e.kind, ("raised", e.detail))
            if e.kind != "raised":
                self._spent = (kind, detail)
            raise AgentError(kind, detail) from None

    @staticmethod
    def _answer(r: dict) -> None:
        if "raised" in r:
            where = " in __init__" if r.get("in") == "__init__" else ""
            raise AgentError("raised", f"{str(r['raised'])[:2000]}{where}")
        if "infrastructure" in r:
            # An isolated agent is untrusted: its own claim that its infrastructure failed
            # cannot be checked, and honouring it would let an agent turn any bad episode
            # into an unscored one that --resume reruns. It is the agent's failure here;
            # only trusted agents (built-in, or --trusted-agent) can end an episode unscored.
            raise AgentError("infrastructure_claim",
                             f"{str(r['infrastructure'])[:2000]} (an InfrastructureError raised by an isolated "
                             "agent is scored as its own failure; run it with --trusted-agent to have such "
                             "episodes left unscored)")


def make_caller(agent: Any, timeout: float | None) -> AgentCaller | IsolatedAgentCaller:
    """The caller the harness uses for ``agent`` with the default per-call ``timeout``
    (seconds; None or 0: no limit): an agent file (AgentFile) runs in a sandboxed process of
    its own (IsolatedAgentCaller); an agent object, which is code already running in this
    process (the built-in agents, or one a Python caller made), is called in-process
    (agent_call.AgentCaller) and marked trusted in the results. It lives here, above both
    callers, so that agent_call.py need not know of agent files."""
    if type(agent) is AgentFile:
        return agent.caller(timeout or None)
    return AgentCaller(agent, timeout or None)
