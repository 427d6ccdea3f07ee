"""The browser app's safety (issue 40): the address it answers to, its access token off the
loopback, only the folders given (path traversal), the page token and cross-site refusals on
state-changing requests, and the Content Security Policy on every answer. Over real HTTP."""

from __future__ import annotations

import json
import os
import types

import pytest
from starlette.responses import JSONResponse
from starlette.routing import Route

from longpuzzle.agents.serve.app import ROUTE_MODULES, make_app
from longpuzzle.agents.serve.security import CSP

EPISODE = "bolt_unscrew_hard/episode_001"         # (conftest.py: greedy_run)


def _posting_module():
    """A route module with one state-changing route (what play adds), to test the gate."""
    async def act(request):
        return JSONResponse({"done": await request.json()})

    return types.SimpleNamespace(routes=lambda ctx: [Route("/api/act", act, methods=["POST"])], NAV=[])


@pytest.fixture
def app(serve, greedy_run):
    return serve([greedy_run], page_token="page-token-1", route_modules=(*ROUTE_MODULES, _posting_module()))


def test_every_answer_carries_the_csp_and_the_hardening_headers(app):
    for path in ("/", "/run/0", f"/episode/0/{EPISODE}", "/api/runs", "/static/app.js", "/nope",
                 f"/frame/0/1/{EPISODE}"):
        status, h, _ = app.request("GET", path)
        assert h.get("content-security-policy") == CSP, path
        assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
        assert h.get("x-content-type-options") == "nosniff" and h.get("x-frame-options") == "DENY", path
    status, h, _ = app.request("POST", "/api/act", body=b"{}")         # a refusal too
    assert status == 403 and h.get("content-security-policy") == CSP


def test_only_the_address_it_was_started_on_is_answered(app):
    assert app.request("GET", "/", {"Host": f"localhost:{app.port}"})[0] == 200
    for host in ("evil.example", f"evil.example:{app.port}", f"127.0.0.1.evil.example:{app.port}", ""):
        status, _, body = app.request("GET", "/api/runs", {"Host": host})
        assert status == 421, host                       # a rebound DNS name reads nothing
        assert b"greedy" not in body


def test_another_address_requires_the_access_token(serve, greedy_run):
    with pytest.raises(ValueError, match="access token"):
        make_app([greedy_run], host="0.0.0.0")
    s = serve([greedy_run], host="10.1.2.3", access_token="s3cret-access")
    h = {"Host": "10.1.2.3:8765"}
    assert s.request("GET", "/api/runs", h)[0] == 401
    assert s.request("GET", "/api/runs?token=wrong", h)[0] == 401
    assert s.request("GET", "/api/runs", {**h, "Cookie": "lp_access=wrong"})[0] == 401
    status, hs, _ = s.request("GET", "/?token=s3cret-access", h)
    assert status == 200
    cookie = hs["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, body = s.request("GET", "/api/runs", {**h, "Cookie": cookie.split(";")[0]})
    assert status == 200 and json.loads(body)["runs"][0]["agent"] == "greedy"
    assert s.request("GET", "/api/runs", {"Host": "127.0.0.1:8765", "Cookie": cookie.split(";")[0]})[0] == 421


@pytest.mark.parametrize("path", [
    "/api/episode/0/../../../../etc",
    "/api/episode/0/%2e%2e/%2e%2e/%2e%2e/etc",
    "/api/episode/0/..%2f..%2f..%2fetc",
    "/api/episode/0//etc",
    "/api/episode/0/outside_link",
    "/api/episode/1/anything",
    "/api/episode/0/bolt_unscrew_hard",               # inside, but not an episode folder
    "/frame/0/0/..%2f..%2foutside",
    "/frame/0/0/outside_link",
    "/episode/0/outside_link",
    "/static/../app.py",
    "/static/%2e%2e/app.py",
    "/api/runs/7",
])
def test_nothing_outside_the_folders_given_is_served(app, greedy_run, path):
    outside = greedy_run.parent / "outside"
    if not outside.exists():               # an episode folder beside the run, linked from inside it
        outside.mkdir()
        (outside / "events.jsonl").write_text('{"type": "header", "secret": "OUTSIDE-SECRET"}\n')
        os.symlink(outside, greedy_run / "outside_link")
    status, _, body = app.request("GET", path)
    assert status == 404, (path, status)
    assert b"OUTSIDE-SECRET" not in body and b"from __future__" not in body


def test_a_state_changing_request_needs_the_page_token_and_the_apps_own_origin(app):
    ok = {"X-LP-Token": "page-token-1", "Content-Type": "application/json"}
    origin = {"Origin": f"http://127.0.0.1:{app.port}", "Sec-Fetch-Site": "same-origin"}
    status, _, body = app.request("POST", "/api/act", {**ok, **origin}, b'{"n": 1}')
    assert status == 200 and json.loads(body) == {"done": {"n": 1}}
    refused = [
        {},                                                             # no token
        {"X-LP-Token": "page-token-2"},                                 # another token
        {**ok, "Origin": "http://evil.example"},                        # a foreign origin
        {**ok, "Origin": "null"},
        {**ok, "Sec-Fetch-Site": "cross-site"},                         # the browser says so
        {**ok, "Sec-Fetch-Site": "same-site", "Origin": "http://sub.127.0.0.1.example"},
    ]
    for h in refused:
        status, _, body = app.request("POST", "/api/act", h, b'{"n": 2}')
        assert status == 403, h
        assert b"done" not in body
    # the page carries its token for its own scripts
    _, _, page = app.request("GET", "/")
    assert b'<meta name="lp-token" content="page-token-1">' in page


def test_cross_site_reads_are_refused_but_a_link_followed_to_the_app_opens(app):
    embed = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
    assert app.request("GET", f"/frame/0/1/{EPISODE}", embed)[0] == 403
    assert app.request("GET", "/api/runs", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"})[0] == 403
    nav = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    assert app.request("GET", "/", nav)[0] == 200
    assert app.request("GET", f"/frame/0/1/{EPISODE}", {"Sec-Fetch-Site": "same-origin"})[0] == 200
