"""The sandboxed process's side: restrictions first, then the message loop.

STANDALONE (standard library; numpy once arrays are exchanged): the harness starts
``python -I -B -c <boot>`` (no script path, no PYTHON* variables, no user site, no current
folder on sys.path) and writes to its stdin the sources of channel.py, harden.py, this file
and the program to run, with the configuration; the boot code turns them into modules of
the package ``_lp_sandbox`` and calls :func:`main`.

main() applies harden.apply() while the process is still single-threaded, takes the
channel over (stdin becomes /dev/null), makes the blocked packages unimportable (removes
their finders, e.g. an editable install's, and their modules), starts a watchdog that ends
the process when the harness goes away, reports ``ready`` with what was applied, and then
serves calls::

    harness -> {"id": n, "call": {...}} + arrays       program.handle(call, arrays, ctx)
    sandbox -> {"id": n, "reply": {...}} + arrays       its return value (dict, or (dict, arrays))
            or {"id": n, "error": {"type", "message"}}  it raised (BaseException included)
            or {"id": n, "callback": {...}} + arrays    ctx.request(): a call back to the
    harness -> {"id": n, "callback_reply": {...}}       harness in the middle of a call
    harness -> {"close": true}                          exit
"""

from __future__ import annotations

import gc
import os
import sys
import threading

from . import channel, harden


class Context:
    """What a program's handle() gets besides the call: ``request`` calls the harness back."""

    def __init__(self, ep: channel.Endpoint, conf: dict):
        self._ep = ep
        self._id = None
        self.conf = conf
        self.protections: dict = {}

    def request(self, msg: dict, blobs=()) -> tuple[dict, list]:
        """Send ``msg`` to the harness's callback handler and wait for its answer."""
        if self._id is None:
            raise RuntimeError("ctx.request() works only during a call")
        self._ep.send({"id": self._id, "callback": msg}, blobs)
        got, arrays = self._ep.recv()
        if got.get("id") != self._id or "callback_reply" not in got:
            raise RuntimeError("the harness did not answer the callback")
        return got["callback_reply"], arrays


class _Blocker:
    """A meta-path finder that refuses the blocked packages (except modules already provided)."""

    def __init__(self, prefixes):
        self.prefixes = tuple(prefixes)

    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in self.prefixes):
            raise ModuleNotFoundError(f"No module named {name!r} (not available inside the sandbox)", name=name)
        return None

    def invalidate_caches(self):
        pass


def _scrub(blocked: list) -> None:
    def bad(modname: str) -> bool:
        return modname.startswith("__editable__") or any(
            modname == p or modname.startswith(p + ".") for p in blocked)
    sys.meta_path[:] = [f for f in sys.meta_path if not bad(getattr(f, "__module__", "") or "")
                        and not bad(getattr(type(f), "__module__", "") or "")]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not bad(getattr(h, "__module__", "") or "")]
    for k in list(sys.path_importer_cache):
        if "__editable__" in str(k):
            del sys.path_importer_cache[k]
    for name in [m for m in sys.modules if bad(m)]:
        del sys.modules[name]
    sys.meta_path.insert(0, _Blocker(blocked))
    sys.argv = ["sandbox"]
    gc.collect()


def _watchdog(fd: int) -> None:
    """End the process when the harness's end of the request pipe closes (harness gone)."""
    import select
    p = select.poll()
    p.register(fd, 0)                 # only hang-up / error / invalid fd wake us
    while True:
        try:
            if p.poll():
                os._exit(0)
        except InterruptedError:
            continue


def main(conf: dict, programs: dict) -> None:
    rep = harden.apply(conf.get("harden", {}))
    rfd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    wfd = int(conf["reply_fd"])
    shm = None
    if conf.get("shm_fd") is not None and conf.get("shm_size"):
        import mmap
        shm = mmap.mmap(int(conf["shm_fd"]), int(conf["shm_size"]), prot=mmap.PROT_READ)
        os.close(int(conf["shm_fd"]))
    ep = channel.Endpoint(rfd, wfd, max_json=int(conf.get("max_request", 1 << 26)),
                          max_blob=int(conf.get("max_request_blobs", 1 << 30)), shm_in=shm)
    _scrub(list(conf.get("blocked", ())))
    threading.Thread(target=_watchdog, args=(rfd,), name="sandbox-watchdog", daemon=True).start()
    ctx = Context(ep, conf)
    ctx.protections = rep
    prog = programs[conf["program"]]
    ep.send({"ready": {"protections": rep, "pid": os.getpid()}})
    max_reply = int(conf.get("max_reply", 1 << 20))
    while True:
        try:
            msg, arrays = ep.recv()
        except channel.ChannelError:
            os._exit(0)
        if msg.get("close"):
            os._exit(0)
        cid = msg.get("id")
        ctx._id = cid
        try:
            out = prog.handle(msg.get("call") or {}, arrays, ctx)
            reply, blobs = out if isinstance(out, tuple) else (out, ())
            head, bufs = channel.encode({"id": cid, "reply": reply}, blobs)
            if len(head) - channel.HEADER.size > max_reply:
                raise ValueError(f"the reply is {len(head)} bytes (at most {max_reply})")
        except BaseException as e:      # noqa: BLE001 - reported to the harness, never printed
            reply, blobs = {"id": cid, "error": {"type": type(e).__name__, "message": _text(e)}}, ()
            head, bufs = channel.encode(reply)
        ctx._id = None
        try:
            ep._write(memoryview(head), None)
            for b in bufs:
                ep._write(b, None)
        except channel.ChannelError:
            os._exit(0)


def _text(e: BaseException, limit: int = 2000) -> str:
    try:
        s = str(e)
    except BaseException:            # noqa: BLE001 - a hostile __str__
        s = "<unprintable>"
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} characters)"
