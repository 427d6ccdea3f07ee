"""Who may ask the app what (issue 40, "Safe"): one ASGI middleware in front of every route.

- The Host header must name the address the app is bound to (or, bound to the loopback,
  ``localhost``): a page of another site that makes its name resolve to 127.0.0.1 (DNS
  rebinding) is refused.
- Bound to another address than the loopback, every request needs the access token: given
  once as ``?token=...`` (the URL ``serve`` prints), then carried by an HttpOnly, SameSite=Strict
  cookie.
- A state-changing request (any method but GET, HEAD, OPTIONS) needs the page token (each page
  carries it in ``<meta name="lp-token">``; the scripts send it as the ``X-LP-Token`` header)
  and must come from the app's own origin: a request another site makes (``Sec-Fetch-Site:
  cross-site`` or a foreign ``Origin``) is refused, whatever it carries.
- A cross-site request of any kind is refused but a top-level navigation (a link followed to
  the app), so no other page can embed the app's frames or read its data.
- Every answer carries a Content Security Policy that runs only the app's own script files (no
  inline script, no eval), so a string from a run folder that slipped into the markup still
  could not run; plus nosniff, no framing, no referrer.
"""

from __future__ import annotations

import hmac
import json
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

ACCESS_COOKIE = "lp_access"
PAGE_TOKEN_HEADER = "x-lp-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin")]


def is_loopback(host: str) -> bool:
    return host.strip("[]") in LOOPBACK or host.startswith("127.")


class Security:
    """ASGI middleware: ``Security(app, host, page_token, access_token)``; ``access_token``
    None bound to the loopback (the address is the protection), required otherwise."""

    def __init__(self, app, host: str, page_token: str, access_token: str | None):
        if not is_loopback(host) and not access_token:
            raise ValueError("an app bound to another address than the loopback needs an access token")
        self.app = app
        self.host = host.strip("[]")
        self.page_token = page_token
        self.access_token = access_token
        self.port: int | None = None                  # set once the server knows it (host check)

    def allowed_host(self, value: str) -> bool:
        name = urlsplit("//" + value).hostname or ""
        names = LOOPBACK if is_loopback(self.host) else {self.host}
        return name in names or name == self.host

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.check(scope, headers)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        set_cookie = None
        if self.access_token:
            q = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
            if q is not None and hmac.compare_digest(q, self.access_token):
                set_cookie = f"{ACCESS_COOKIE}={self.access_token}; HttpOnly; SameSite=Strict; Path=/"

        async def send_secured(message):
            if message["type"] == "http.response.start":
                extra = list(HEADERS)
                if set_cookie:
                    extra.append((b"set-cookie", set_cookie.encode()))
                message = dict(message, headers=list(message.get("headers", [])) + extra)
            await send(message)

        await self.app(scope, receive, send_secured)

    def check(self, scope, headers: dict) -> tuple[int, str] | None:
        """(status, reason) of a refused request, None for one let through."""
        if not self.allowed_host(headers.get("host", "")):
            return 421, "this app answers only to the address it was started on"
        if self.access_token and not self._has_access(scope, headers):
            return 401, "this app needs its access token: open the URL `longpuzzle serve` printed"
        site = headers.get("sec-fetch-site", "")
        method = scope.get("method", "GET").upper()
        navigation = headers.get("sec-fetch-mode", "") == "navigate" and method == "GET"
        if site == "cross-site" and not navigation:
            return 403, "cross-site request refused"
        if method in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and not self.allowed_host(urlsplit(origin).netloc):
            return 403, "cross-site request refused"
        if site not in ("", "same-origin", "none"):
            return 403, "cross-site request refused"
        token = headers.get(PAGE_TOKEN_HEADER, "")
        if not hmac.compare_digest(token.encode(), self.page_token.encode()):
            return 403, "a state-changing request needs the page's token"
        return None

    def _has_access(self, scope, headers: dict) -> bool:
        q = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
        if q is not None and hmac.compare_digest(q, self.access_token):
            return True
        c = SimpleCookie()
        try:
            c.load(headers.get("cookie", ""))
        except Exception:                       # noqa: BLE001 - a malformed cookie header is no access
            return False
        got = c.get(ACCESS_COOKIE)
        return got is not None and hmac.compare_digest(got.value, self.access_token)


async def _plain(send, status: int, text: str) -> None:
    body = json.dumps({"error": text}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *HEADERS]})
    await send({"type": "http.response.body", "body": body})
