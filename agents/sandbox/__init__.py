"""Sandboxed processes: untrusted Python code (an agent file, a model's code) in a process of
its own that talks to the harness only through a narrow message channel, within limits.

The model
    The harness starts ``python -I -B -c <boot>`` with a nearly empty environment, an empty
    temporary work folder as its current folder, no inherited file descriptors but the
    channel, and in a session of its own. The process restricts itself before any untrusted
    code runs (harden.py: rlimits, a network namespace and a mount namespace whose view holds
    only what it may read with a private /tmp for its work folder, a user of its own,
    no_new_privs, Landlock, dropped capabilities, seccomp with no sockets; each best effort
    and reported in ``Sandbox.protections``, read as guarantees by guarantees.py), makes
    ``longpuzzle`` unimportable, and then serves calls. Between calls it is stopped
    (SIGSTOP), and it dies with the harness (its parent-death signal). It never gets a
    longpuzzle object or a path of the project: only the JSON messages and numpy arrays the
    harness chooses to send.

    Every wait is bounded (a timeout per call, CPU time per call and in total, a size bound
    on every message), and every failure of the process (it exits, crashes, hangs,
    busy-loops, floods or garbles the channel) raises :class:`SandboxError` and leaves the
    process killed, never a hang or a traceback from the channel.

The API (harness side)::

    from longpuzzle.agents.sandbox import Limits, Sandbox, SandboxError

    PROGRAM = '''
    def handle(call, arrays, ctx):                  # one call -> a JSON-able dict (+ arrays)
        if call["op"] == "sum":
            return {"sum": float(arrays[0].sum())}
        if call["op"] == "ask":                     # a call back to the harness mid-call
            answer, _ = ctx.request({"question": call["q"]})
            return {"answer": answer}
    '''
    sb = Sandbox(PROGRAM, limits=Limits(memory_mb=1024, cpu_seconds=60, call_cpu_seconds=5))
    sb.start()                       # -> sb.protections: {"landlock": 7, "seccomp": True, ...}
    reply, arrays = sb.call({"op": "sum"}, [frame], timeout=2.0)
    reply, _ = sb.call({"op": "ask", "q": "x"}, timeout=2.0, on_callback=lambda msg, arrays: {"a": 1})
    sb.log()                         # its stdout + stderr (bounded head and tail)
    sb.close()                       # asks, then kills; the process is gone afterwards

    The program (source text) runs inside the process and may import only the standard
    library and installed third-party packages (numpy for arrays); ``handle`` may keep state
    in module globals across calls (a persistent runtime). Its exceptions come back as
    ``SandboxError("raised", message, error_type=...)`` and the process lives on; every
    other SandboxError kind (start, timeout, cpu, exited, protocol, closed) means the
    process was killed.

Modules
    process.py   Sandbox, Limits, SandboxError, the readable-path policy (harness side)
    channel.py   message framing with bounds and deadlines (both sides; standalone)
    harden.py    the restrictions the process applies to itself (standalone)
    guarantees.py  what the protections guarantee, what each needs, the probe a run records
    child.py     the process's message loop, callbacks and watchdog (standalone)
"""

from longpuzzle.agents.sandbox.process import (Limits, Sandbox, SandboxError, live_sandboxes, project_paths, protections_available,
                                        readable_roots)

__all__ = ["Limits", "Sandbox", "SandboxError", "live_sandboxes", "project_paths", "protections_available",
           "readable_roots"]
