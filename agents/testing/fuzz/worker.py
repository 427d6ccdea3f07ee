"""Running fuzz checks in a worker process, so that a check that hangs inside compiled or C
code (which no signal can interrupt in-process) is caught: the supervisor kills the worker
when one check takes longer than its timeout, records a hang naming the check, and starts a
new worker for the rest.

A fuzz module provides ``worker_items(conf, todo) -> iterable of (key, what, check)``
(``check()`` returns "ok" or "refused: ..." and raises on a failure) and runs
``serve(worker_items)`` under ``if __name__ == "__main__"``; ``supervise(module, keys, conf,
timeout)`` runs it. Keys are JSON lists (e.g. [game, i])."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time


def supervise(module: str, keys: list, conf: dict, timeout: float) -> dict:
    """{"checked", "refused", "ok", "failures": [{"key", "game", "what", "error"}]} of every key."""
    out = {"checked": 0, "refused": 0, "ok": 0, "failures": []}
    todo = [list(k) for k in keys]
    while todo:
        proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        proc.stdin.write(json.dumps({"conf": conf, "todo": todo}).encode())
        proc.stdin.close()
        current, buf, last = None, b"", time.monotonic()
        try:
            while True:
                r, _, _ = select.select([proc.stdout], [], [], 1.0)
                if r:
                    chunk = os.read(proc.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        msg = json.loads(line)
                        last = time.monotonic()
                        if "start" in msg:
                            current = msg
                            continue
                        _record(out, todo, msg["key"], msg["what"], msg["outcome"])
                        current = None
                elif time.monotonic() - last > timeout:
                    if current is not None:
                        _record(out, todo, current["key"], current["what"], f"hang: no answer within {timeout:g} s")
                    elif todo:
                        _record(out, todo, todo[0], "(starting)", f"the worker did not start within {timeout:g} s")
                    break
        finally:
            proc.kill()
            proc.wait()
        if current is not None and current["key"] in todo:        # the worker died during a check
            _record(out, todo, current["key"], current["what"], f"crash: the worker exited ({proc.returncode})")
    return out


def _record(out: dict, todo: list, key, what: str, outcome: str) -> None:
    if key in todo:
        todo.remove(key)
    out["checked"] += 1
    if outcome == "ok":
        out["ok"] += 1
    elif outcome.startswith("refused"):
        out["refused"] += 1
    else:
        out["failures"].append({"key": key, "game": key[0] if key else "", "what": what, "error": outcome})


def serve(worker_items) -> None:
    """The worker's loop: read {"conf", "todo"} from stdin, run each check, report on stdout."""
    job = json.loads(sys.stdin.read())
    todo = {tuple(k) for k in job["todo"]}
    for key, what, check in worker_items(job["conf"], todo):
        print(json.dumps({"start": True, "key": list(key), "what": what}), flush=True)
        try:
            outcome = check()
        except BaseException as e:              # noqa: BLE001 - reported, not raised
            outcome = f"crash: {type(e).__name__}: {str(e)[:300]}"
        print(json.dumps({"key": list(key), "what": what, "outcome": str(outcome)[:400]}), flush=True)
