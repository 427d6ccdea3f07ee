"""The program that runs an agent file inside its sandbox (see longpuzzle.agents.sandbox).

STANDALONE: standard library, and numpy for the frames; it runs in the sandboxed process,
where longpuzzle is not importable. It installs the public agent API (the source of
agents/api.py, sent by the harness) as ``longpuzzle.agents.base`` / ``longpuzzle.agents.api``,
runs the agent file's source, and answers the harness's calls (isolated.py):

    {"op": "load", "api", "source", "filename", "kwargs", "instantiate"}
                                    -> {"class": ..., "name": ...}  (or {"load_error": ...})
    {"op": "reset", "instruction", "action_spec"}            -> {}
    {"op": "act", "step", "time_left", "feedback", "frame"} + frames
                                                             -> {"action_json": "..."}
                                                                 | {"final": text}
                                                                 | {"unencodable": why}
                                                                 | {"garbage": type name}
    {"op": "note", "text"}                                   -> {}
    {"op": "take_over", "step", "prefix", "pair_actions", "frame", "note"}
                     + the pairs' frames, then the current one if "frame"  -> {}
    {"op": "probe", "text", "statements", "rules", "card_title"}  -> {"answer": text}

Whatever the agent raises in reset / act / note / take_over / probe (SystemExit and KeyboardInterrupt included)
comes back as ``{"raised": "Type: message"}``, or ``{"infrastructure": message}`` for an
InfrastructureError; nothing is printed.
"""

import inspect
import json
import sys
import traceback
import types

MAX_ACTION_JSON = 256 * 1024        # bytes of JSON an action may take
MAX_TEXT = 10_000                   # characters kept of a final answer
MAX_VALUES = 20_000                 # values in one action (nested lists and objects expanded)

_api = None
_agent = None
_filename = "agent.py"


def handle(call, arrays, ctx):
    op = call.get("op")
    if op == "load":
        return _load(call)
    if _agent is None:
        return {"raised": "RuntimeError: the agent was not created"}
    if op == "act":
        return _act(call, arrays)
    try:
        if op == "reset":
            _agent.reset(call.get("instruction", ""), _freeze(call.get("action_spec") or {}))
        elif op == "note":
            _agent.note(call.get("text", ""))
        elif op == "take_over":
            _agent.take_over(_takeover(call, arrays))
        elif op == "probe":
            probe = _api.Probe(str(call.get("text", "")), tuple(str(s) for s in call.get("statements") or ()),
                               tuple(int(k) for k in call.get("rules") or ()), str(call.get("card_title", "")))
            return {"answer": str(_agent.probe(probe) or "")[:MAX_TEXT]}
        else:
            return {"raised": f"RuntimeError: unknown call {op!r}"}
    except BaseException as e:      # noqa: BLE001 - the agent's failure, reported
        return _raised(e)
    return {}


def _takeover(call, arrays):
    """The api.Takeover of a take_over call: the pairs' screenshots are the first frames (one
    per pair action), the current screenshot the last when the call says it has one."""
    acts = [str(a) for a in call.get("pair_actions") or ()]
    arrays = list(arrays)
    frame = arrays.pop() if call.get("frame") and len(arrays) > len(acts) else None
    return _api.Takeover(int(call.get("step", 0)), tuple(str(t) for t in call.get("prefix") or ()),
                         tuple(zip(arrays, acts)), frame, str(call.get("note", "")))


def _install_api(src):
    global _api
    root = types.ModuleType("longpuzzle")
    root.__path__ = []                                 # a package with nothing on disk
    root.__doc__ = "Inside an agent's sandbox only the public agent API is available."
    agents = types.ModuleType("longpuzzle.agents")
    agents.__path__ = []
    base = types.ModuleType("longpuzzle.agents.base")
    sys.modules.update({"longpuzzle": root, "longpuzzle.agents": agents, "longpuzzle.agents.base": base,
                        "longpuzzle.agents.api": base})
    exec(compile(src, "<longpuzzle.agents.base>", "exec"), base.__dict__)
    root.agents, agents.base, agents.api = agents, base, base
    _api = base
    return base


def _load(call):
    global _agent, _filename
    import numpy  # noqa: F401 - frames are numpy arrays; imported before the agent runs

    api = _install_api(call["api"])
    _filename = str(call.get("filename") or "agent.py")
    stem = _filename[:-3] if _filename.endswith(".py") else _filename
    modname = stem if stem.isidentifier() else "agent"
    mod = types.ModuleType(modname)
    mod.__file__ = _filename
    sys.modules[modname] = mod
    try:
        exec(compile(call["source"], _filename, "exec"), mod.__dict__)
    except BaseException as e:      # noqa: BLE001
        return {"load_error": _where(e)}
    found = [v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, api.BaseAgent)
             and v is not api.BaseAgent and v.__module__ == modname]
    if len(found) != 1:
        return {"load_error": f"it must define exactly one BaseAgent subclass (found {len(found)})"}
    cls = found[0]
    out = {"class": cls.__name__, "name": str(getattr(cls, "name", "agent"))[:100]}
    if call.get("instantiate"):
        kwargs = call.get("kwargs") or {}
        try:
            params = inspect.signature(cls.__init__).parameters      # (as load_agent does in-process)
            _agent = cls(**{k: v for k, v in kwargs.items() if k in params})
        except BaseException as e:  # noqa: BLE001 - an exception in __init__
            r = _raised(e)
            r["in"] = "__init__"
            return r
    return out


def _act(call, arrays):
    api = _api
    fb = call.get("feedback")
    has_frame = bool(call.get("frame", True)) and bool(arrays)
    obs = api.Observation(arrays[0] if has_frame else None,
                          api.Feedback(**fb) if isinstance(fb, dict) else None,
                          call.get("step", 0), call.get("time_left"), tuple(arrays[1:] if has_frame else arrays))
    try:
        r = _agent.act(obs)
    except BaseException as e:      # noqa: BLE001
        return _raised(e)
    if isinstance(r, api.FinalAnswer):
        t = r.text if isinstance(r.text, str) else repr(r.text)
        return {"final": t if len(t) <= MAX_TEXT else t[:MAX_TEXT] + f"... ({len(t)} characters)"}
    if isinstance(r, dict):
        n = _values(r, MAX_VALUES)
        if n > MAX_VALUES:
            return {"unencodable": f"the action holds more than {MAX_VALUES} values"}
        try:
            s = json.dumps(r, separators=(",", ":"), ensure_ascii=False)
        except BaseException as e:  # noqa: BLE001 - not JSON (an object inside, a cycle, a huge int)
            return {"unencodable": f"the action is not JSON data ({type(e).__name__}: {_short(e)})"}
        if len(s) > MAX_ACTION_JSON:
            return {"unencodable": f"the action is {len(s)} characters of JSON (at most {MAX_ACTION_JSON})"}
        return {"action_json": s}
    return {"garbage": type(r).__name__[:100]}


def _values(v, limit):
    """How many values ``v`` holds, counting shared sub-lists each time they occur (as JSON
    would write them out), stopping just past ``limit``."""
    n, stack = 0, [v]
    while stack and n <= limit:
        x = stack.pop()
        n += 1
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    return n


def _freeze(spec):
    """The action spec as the in-process agents get it: a read-only mapping, lists as tuples."""
    if not isinstance(spec, dict):
        return spec
    return types.MappingProxyType({k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()})


def _short(e, n=300):
    try:
        s = str(e)
    except BaseException:           # noqa: BLE001
        s = "<unprintable>"
    return s if len(s) <= n else s[:n] + "..."


def _where(e):
    """'Type: message (file.py, line N)' with the innermost line of the agent file."""
    line = ""
    try:
        for fr in reversed(traceback.extract_tb(e.__traceback__)):
            if fr.filename == _filename:
                line = f" ({_filename}, line {fr.lineno})"
                break
        if isinstance(e, SyntaxError) and e.lineno:
            line = f" ({_filename}, line {e.lineno})"
    except BaseException:           # noqa: BLE001
        pass
    return f"{type(e).__name__}: {_short(e)}{line}"


def _raised(e):
    if _api is not None and isinstance(e, _api.InfrastructureError):
        return {"infrastructure": _short(e, 2000)}
    return {"raised": _where(e)}
