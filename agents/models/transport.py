"""The HTTP transport of the model clients: every request has a total deadline and a reply
size cap, streamed or not.

The SDKs' own timeout applies to each read of the socket, so an endless stream or a reply
dripping one byte at a time never ends, and nothing bounds a reply's size. Here each
request (one attempt of ``ModelClient.complete``) runs under ``Bounds`` set for the calling
thread (``bounded(...)``): connect, write and every read are limited by the time left; a
watchdog shuts the connection down at the deadline while a reply is being read; the reply
is counted byte by byte and refused past the cap (a declared Content-Length above it is
refused before the body is read). Replies are asked for uncompressed (``Accept-Encoding:
identity``) so that the bytes counted are the bytes kept; a compressed reply is refused.

A breach raises ``BoundExceeded`` (an httpx transport error, which the SDKs pass on as a
connection error) and is recorded on the Bounds with its reason, which the client reports
in its ProviderError. The Bounds also note whether a request reached the network at all:
an exception raised before that is an error of our own code, not the provider's.
"""

from __future__ import annotations

import contextvars
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlparse
from urllib.request import getproxies, proxy_bypass

import httpx2

_CURRENT: contextvars.ContextVar[Bounds | None] = contextvars.ContextVar("model_request_bounds", default=None)


class BoundExceeded(httpx2.TransportError):
    """A request went past its deadline or its reply past the size cap."""


@dataclass
class Bounds:
    """The limits of one request and what happened under them."""
    deadline: float                  # time.monotonic() by which the reply must be complete
    seconds: float                   # the deadline as a duration (for messages)
    max_bytes: int                   # reply bytes (headers excluded) accepted
    received: int = 0
    sent: bool = False               # a request was handed to the network
    failure: str | None = None       # the reason of a breach: "deadline" or "size"
    detail: str = ""

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def breach(self, kind: str, detail: str) -> BoundExceeded:
        if self.failure is None:
            self.failure, self.detail = kind, detail
        return BoundExceeded(self.detail)

    def late(self) -> BoundExceeded:
        return self.breach("deadline", f"the reply was not complete within the request deadline of {self.seconds:g} s")

    def too_big(self, n: int) -> BoundExceeded:
        return self.breach("size", f"the reply exceeds the cap of {self.max_bytes} bytes ({n} bytes or more)")


@contextmanager
def bounded(seconds: float, max_bytes: int):
    """Run the requests made inside under one deadline (``seconds`` from now) and reply cap."""
    b = Bounds(time.monotonic() + seconds, seconds, max_bytes)
    token = _CURRENT.set(b)
    try:
        yield b
    finally:
        _CURRENT.reset(token)


class _Body(httpx2.SyncByteStream):
    """A reply body read under the Bounds: counted, timed, cut off by the watchdog."""

    def __init__(self, inner, bounds: Bounds, sock):
        self.inner, self.b, self.sock = inner, bounds, sock
        self.timer = None
        self.done = False            # read to its end or closed: the watchdog leaves the socket alone
                                     # (the pool may hand the connection to the next request)
        left = bounds.left()
        if sock is not None:
            self.timer = threading.Timer(max(0.0, left), self._expire)
            self.timer.daemon = True
            self.timer.start()

    def _expire(self) -> None:
        if self.done:
            return
        self.b.late()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)      # wakes the read blocked on it
        except OSError:
            pass

    def __iter__(self):
        b = self.b
        try:
            for chunk in self.inner:
                if b.failure == "deadline" or b.left() < 0:
                    raise b.late()
                b.received += len(chunk)
                if b.received > b.max_bytes:
                    raise b.too_big(b.received)
                yield chunk
        except BoundExceeded:
            raise
        except Exception:
            if b.failure is not None:                # the watchdog cut the connection
                raise BoundExceeded(b.detail) from None
            raise
        self._stop_watch()
        if b.failure == "deadline":
            raise BoundExceeded(b.detail)

    def _stop_watch(self) -> None:
        self.done = True
        if self.timer is not None:
            self.timer.cancel()

    def close(self) -> None:
        self._stop_watch()
        self.inner.close()


class BoundedTransport(httpx2.BaseTransport):
    """An httpx transport that applies the calling thread's Bounds to each request."""

    def __init__(self, inner: httpx2.BaseTransport):
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        b = _CURRENT.get()
        if b is None:
            return self.inner.handle_request(request)
        left = b.left()
        if left <= 0:
            raise b.late()
        t = dict(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {k: left if t.get(k) is None else min(t[k], left)
                                         for k in ("connect", "read", "write", "pool")}
        b.sent = True
        try:
            resp = self.inner.handle_request(request)
        except httpx2.TimeoutException:
            if b.left() <= 0:
                raise b.late() from None
            raise
        enc = resp.headers.get("content-encoding", "identity").strip().lower()
        n = resp.headers.get("content-length")
        try:
            declared = int(n) if n is not None else None
        except ValueError:
            declared = None
        if enc not in ("", "identity"):
            resp.close()
            raise b.breach("size", f"the reply is compressed ({enc}) although none was asked for: "
                                   "its size cannot be bounded")
        if declared is not None and declared > b.max_bytes:
            resp.close()
            raise b.too_big(declared)
        stream = resp.extensions.get("network_stream")
        sock = None
        if stream is not None:
            try:
                sock = stream.get_extra_info("socket")
            except Exception:  # noqa: BLE001 - a transport without sockets: the per-chunk check alone
                sock = None
        return httpx2.Response(resp.status_code, headers=resp.headers, stream=_Body(resp.stream, b, sock),
                               extensions=resp.extensions)

    def close(self) -> None:
        self.inner.close()


def http_client(client_cls, base_url: str | None, timeout: float):
    """The SDK's default HTTP client (``client_cls``: openai/anthropic DefaultHttpxClient)
    on a BoundedTransport, with the environment's proxy for ``base_url`` if any (a custom
    transport turns httpx's own proxy lookup off), asking for uncompressed replies."""
    proxy = None
    host = urlparse(base_url or "https://api.openai.com").hostname or ""
    scheme = urlparse(base_url or "https://").scheme or "https"
    proxies = getproxies()
    if proxies.get(scheme) and not proxy_bypass(host):
        proxy = proxies[scheme]
    inner = httpx2.HTTPTransport(proxy=proxy)
    return client_cls(transport=BoundedTransport(inner), timeout=timeout,
                      headers={"Accept-Encoding": "identity"})
