"""Messages between the harness and a sandboxed process, over two pipes.

STANDALONE: this file imports only the standard library (and numpy when arrays are sent);
the sandboxed process runs this same source, so nothing here may import longpuzzle.

A message is::

    <u32 json_len> <u32 blob_len> <json_len bytes: a UTF-8 JSON object> <blob_len bytes>

The JSON object may describe binary arrays in ``"_blobs": [{"dtype": "uint8", "shape": [h, w, 3]},
...]``; their bytes follow the JSON, in order, C-contiguous, or (``"shm": offset``) they were
copied into a shared buffer the reader maps read-only (the harness's frames to the sandbox:
one copy in, one copy out, nothing through the pipe). A reader bounds both lengths
BEFORE reading anything, refuses a malformed message (bad JSON, nesting too deep, numbers
the decoder refuses, blob descriptors that do not add up, a top level that is not an
object) with :class:`ChannelError`, and waits at most until a deadline, so a peer that
stops, floods or lies can never make the other side hang, grow without bound or crash.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

HEADER = struct.Struct("<II")
DTYPES = ("bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "int64", "float32", "float64")
_CHUNK = 1 << 20


class ChannelError(Exception):
    """The channel failed. ``kind``: "closed" (the peer is gone), "timeout" (the deadline
    passed), "too_large" (a message over the reader's bound), "malformed" (not a message)."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


def encode(msg: dict, blobs=(), shm=None) -> tuple[bytes, list]:
    """(header + JSON bytes, list of blob buffers) for a message and its arrays. With ``shm``
    (a writable shared buffer the reader maps too) arrays that fit are copied there instead
    and described by offset ("shm"), so only the JSON crosses the pipe."""
    bufs = []
    if blobs:
        import numpy as np
        desc, arrs = [], []
        for b in blobs:
            a = np.ascontiguousarray(b)
            if a.dtype.name not in DTYPES:
                raise ChannelError("malformed", f"arrays of dtype {a.dtype.name} are not sent")
            desc.append({"dtype": a.dtype.name, "shape": list(a.shape)})
            arrs.append(memoryview(a).cast("B"))
        if shm is not None and sum(-(-m.nbytes // 64) * 64 for m in arrs) <= len(shm):
            off = 0
            for d, m in zip(desc, arrs):
                shm[off:off + m.nbytes] = m
                d["shm"] = off
                off += -(-m.nbytes // 64) * 64
        else:
            bufs = arrs
        msg = dict(msg, _blobs=desc)
    # ASCII JSON: a str holding a lone surrogate (e.g. an agent's typed text "\ud800") is sent
    # as its escape and read back as the same str, never failing to encode as UTF-8
    body = json.dumps(msg, separators=(",", ":")).encode("ascii")
    n = sum(b.nbytes for b in bufs)
    if len(body) >= 1 << 32 or n >= 1 << 32:
        raise ChannelError("too_large", "a message must stay under 4 GiB")
    return HEADER.pack(len(body), n) + body, bufs


def decode(body: bytes, blob: bytes | bytearray | memoryview, shm=None) -> tuple[dict, list]:
    """The message and its arrays (read-only numpy arrays: views of ``blob``, or copies out of
    ``shm`` for arrays the writer put there)."""
    try:
        msg = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError) as e:
        raise ChannelError("malformed", f"not a JSON message ({type(e).__name__}: {str(e)[:120]})") from None
    if type(msg) is not dict:
        raise ChannelError("malformed", "a message must be a JSON object")
    desc = msg.pop("_blobs", None)
    if desc is None:
        if len(blob):
            raise ChannelError("malformed", "binary data without a description")
        return msg, []
    import numpy as np
    if type(desc) is not list or len(desc) > 4096:
        raise ChannelError("malformed", "\"_blobs\" must be a short list")
    arrays, off = [], 0
    mv = memoryview(blob)
    for d in desc:
        if type(d) is not dict or d.get("dtype") not in DTYPES or type(d.get("shape")) is not list \
                or len(d["shape"]) > 8 or not all(type(s) is int and 0 <= s < 1 << 31 for s in d["shape"]):
            raise ChannelError("malformed", "a blob descriptor is {\"dtype\": ..., \"shape\": [...]}")
        dt = np.dtype(d["dtype"])
        n = dt.itemsize
        for s in d["shape"]:
            n *= s
        if "shm" in d:
            o = d["shm"]
            if shm is None or type(o) is not int or o < 0 or o + n > len(shm):
                raise ChannelError("malformed", "a shared-memory blob outside the shared buffer")
            a = np.frombuffer(shm, dtype=dt, count=n // dt.itemsize if dt.itemsize else 0, offset=o) \
                .reshape(d["shape"]).copy()
        else:
            if off + n > len(mv):
                raise ChannelError("malformed", "the blob descriptors ask for more bytes than were sent")
            a = np.frombuffer(mv[off:off + n], dtype=dt).reshape(d["shape"])
            off += n
        a.setflags(write=False)
        arrays.append(a)
    if off != len(mv):
        raise ChannelError("malformed", "the blob descriptors do not cover the bytes sent")
    return msg, arrays


class Endpoint:
    """One side of the channel: reads messages from ``rfd``, writes to ``wfd``.

    ``max_json`` / ``max_blob`` bound what this side accepts; ``shm_out`` is a shared buffer
    this side copies outgoing arrays into, ``shm_in`` one it copies incoming arrays out of. With ``nonblocking`` the fds are
    switched to non-blocking mode and every read and write waits with select() until its
    deadline (the harness side); otherwise plain blocking I/O (the sandboxed side)."""

    def __init__(self, rfd: int, wfd: int, *, max_json: int = 1 << 20, max_blob: int = 1 << 28,
                 nonblocking: bool = False, shm_out=None, shm_in=None):
        self.rfd, self.wfd = rfd, wfd
        self.shm_out, self.shm_in = shm_out, shm_in
        self.max_json, self.max_blob = max_json, max_blob
        self.nonblocking = nonblocking
        if nonblocking:
            os.set_blocking(rfd, False)
            os.set_blocking(wfd, False)

    # ---- writing ------------------------------------------------------------------------
    def send(self, msg: dict, blobs=(), deadline: float | None = None) -> None:
        head, bufs = encode(msg, blobs, self.shm_out)
        self._write(memoryview(head), deadline)
        for b in bufs:
            self._write(b, deadline)

    def _write(self, mv: memoryview, deadline: float | None) -> None:
        while len(mv):
            try:
                n = os.write(self.wfd, mv[:_CHUNK])
            except BlockingIOError:
                self._wait(self.wfd, True, deadline)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelError("closed", "the other side closed the channel") from None
            mv = mv[n:]

    # ---- reading ------------------------------------------------------------------------
    def recv(self, deadline: float | None = None, tick: float | None = None, on_tick=None) -> tuple[dict, list]:
        """The next message. ``on_tick()`` is called every ``tick`` seconds while waiting (it
        may raise to give up, e.g. when a CPU limit is passed)."""
        head = self._read(HEADER.size, deadline, tick, on_tick)
        jl, bl = HEADER.unpack(head)
        if jl > self.max_json:
            raise ChannelError("too_large", f"a message of {jl} bytes (at most {self.max_json} are accepted)")
        if bl > self.max_blob:
            raise ChannelError("too_large", f"{bl} bytes of binary data (at most {self.max_blob} are accepted)")
        body = self._read(jl, deadline, tick, on_tick)
        blob = self._read(bl, deadline, tick, on_tick) if bl else b""
        return decode(bytes(body), blob, self.shm_in)

    def _read(self, n: int, deadline, tick, on_tick) -> bytearray:
        buf = bytearray(n)
        mv = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = os.readv(self.rfd, [mv[got:]])
            except BlockingIOError:
                self._wait(self.rfd, False, deadline, tick, on_tick)
                continue
            except ConnectionResetError:
                k = 0
            if k == 0:
                raise ChannelError("closed", "the other side closed the channel")
            got += k
        return buf

    def _wait(self, fd: int, write: bool, deadline, tick=None, on_tick=None) -> None:
        while True:
            t = None if deadline is None else deadline - time.monotonic()
            if t is not None and t <= 0:
                raise ChannelError("timeout", "the deadline passed")
            if tick is not None:
                t = tick if t is None else min(t, tick)
            p = select.poll()
            p.register(fd, select.POLLOUT if write else select.POLLIN)
            if p.poll(None if t is None else max(1, int(t * 1000 + 0.999))):
                return              # ready, or hung up / failed (the next read or write says which)
            if on_tick is not None:
                on_tick()
