"""What the sandbox guarantees on this machine: the protections a sandboxed process reports
(harden.apply) read as guarantees, each with what it needs from the kernel, for the records
of a run (run.json) and the one note ``eval`` prints when some are missing.

    probe()              the protections of a trivial sandboxed process, started once per process
    in_force(prot)       {guarantee: bool} for a protections report
    missing_note(prot)   one line naming what is missing and what each needs ("" if nothing)
"""

from __future__ import annotations

import threading

# guarantee -> (what it means, what it needs); the order is the docs' (docs/guides/evaluating-agents.md)
GUARANTEES = {
    "no_network": ("no socket of any kind: no address is reachable, not even 127.0.0.1",
                   "seccomp (Linux, x86_64 or aarch64) or a network namespace (root, or unprivileged user "
                   "namespaces)"),
    "private_view": ("files outside its folder and what it may read are not there: no stat, inotify or "
                     "metadata change can reach them",
                     "a mount namespace (root, or unprivileged user namespaces)"),
    "read_only": ("it can read only the Python runtime, its libraries and a few system files, and write only "
                  "its own folder", "Landlock (Linux 5.13+)"),
    "own_user": ("a user and group of its own, not root", "the evaluator running as root"),
    "no_metadata_changes": ("no chmod, chown, utime or xattr change, no inotify or fanotify",
                            "seccomp (Linux, x86_64 or aarch64)"),
    "no_processes": ("no new process (fork, exec), no ptrace", "seccomp (Linux, x86_64 or aarch64)"),
    "bounded_threads": ("a bounded number of threads (RLIMIT_NPROC)",
                        "a user of its own (the evaluator running as root) or a user namespace"),
    "no_signals": ("it cannot signal or trace processes outside the sandbox", "Landlock ABI 6 (Linux 6.12+)"),
    "dies_with_harness": ("it ends when the evaluator does, even while paused", "Linux (PR_SET_PDEATHSIG)"),
}


def in_force(prot: dict) -> dict[str, bool]:
    """Each guarantee of GUARANTEES: does the protections report ``prot`` give it?"""
    denies = set(prot.get("seccomp_denies") or ())
    return {
        "no_network": bool(prot.get("netns")) or "sockets" in denies,
        "private_view": bool(prot.get("mountns") and prot.get("private_tmp")),
        "read_only": (prot.get("landlock") or 0) >= 1,
        "own_user": bool(prot.get("own_user")),
        "no_metadata_changes": {"metadata", "watching"} <= denies,
        "no_processes": "processes" in denies,
        "bounded_threads": prot.get("threads") is not None,
        "no_signals": bool(prot.get("landlock_scoped")),
        "dies_with_harness": bool(prot.get("parent_death")),
    }


def missing_note(prot: dict, network: bool = False) -> str:
    """One line: the guarantees missing here and what each needs ("" when all hold); with
    ``network`` (the run allowed sockets on purpose) no network is not counted missing."""
    miss = [k for k, ok in in_force(prot).items() if not ok and not (network and k == "no_network")]
    if not miss:
        return ""
    return ("the agent sandbox on this machine lacks: "
            + "; ".join(f"{k.replace('_', ' ')} (needs {GUARANTEES[k][1]})" for k in miss)
            + "; run.json records what held")


_probe: dict | None = None            # the report without network (what every run but --agent-network gets)
_lock = threading.Lock()


def probe(network: bool = False) -> dict:
    """The protections a sandboxed process gets here (one trivial process, started once per
    process; {} with an "errors" entry if none can start); ``network``: one allowed sockets."""
    global _probe
    with _lock:
        if _probe is not None and not network:
            return dict(_probe)
        from longpuzzle.agents.sandbox.process import Limits, Sandbox, SandboxError
        sb = Sandbox("def handle(call, arrays, ctx):\n    return {}\n", name="probe",
                     limits=Limits(memory_mb=1024, startup_seconds=60, network=network))
        try:
            got = dict(sb.start())
        except SandboxError as e:
            got = {"errors": [f"the sandbox cannot start: {e.detail or e.kind}"]}
        finally:
            sb.close()
        if not network:
            _probe = got
        return dict(got)


def record(prot: dict | None = None) -> dict:
    """What a run records of its sandbox (run.json): the guarantees in force and the report."""
    prot = probe() if prot is None else prot
    keep = ("platform", "netns", "ipcns", "mountns", "userns", "private_tmp", "own_user", "uid", "threads", "landlock",
            "landlock_scoped", "landlock_net", "seccomp", "seccomp_denies", "capabilities_dropped",
            "no_new_privs", "parent_death", "errors")
    return {"in_force": in_force(prot), "protections": {k: prot[k] for k in keep if k in prot}}
