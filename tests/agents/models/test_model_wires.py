"""The model clients on every wire (OpenAI Chat Completions, OpenAI Responses, Anthropic
Messages) against the scripted server on 127.0.0.1, which checks each request as the real
API would (agents/testing/wire_schema.py): what is sent is what the installed SDK and the
API accept, every request has a deadline and a reply cap, errors of our own code stop the
run, and unscored episodes make ``eval`` fail."""

from __future__ import annotations

import json

import httpx2
import pytest
from click.testing import CliRunner

from longpuzzle.agents.base import InternalError
from longpuzzle.agents.models import clients as clients_mod
from longpuzzle.agents.models.clients import AnthropicClient, ProviderError, make_client, unsupported_settings
from longpuzzle.agents.models.config import ModelConfig
from longpuzzle.agents.testing.endpoints import ScriptedServer
from longpuzzle.agents.registry import MODEL_AGENTS
from longpuzzle.cli import cli as cli_main

APIS = ("openai-chat", "openai-responses", "anthropic")
PATHS = {"openai-chat": "chat/completions", "openai-responses": "responses", "anthropic": "messages"}
HI = [{"role": "user", "parts": [{"text": "hi"}]}]


def cfg(srv, api, **kw):
    kw = {"max_retries": 0, "backoff_base": 0.001, **kw}
    return ModelConfig(model="scripted-model", api=api, base_url=srv.url if api == "anthropic" else srv.url_v1,
                       api_key_env="", **kw)


def post(http, srv, api, body, headers=None):
    # a generous safety net, not a timing: the server's first request loads the SDKs' request
    # types to check the body against (seconds; more than 10 s on a loaded 2-core machine)
    r = http.post(f"{srv.url}/v1/{PATHS[api]}", json=body, timeout=120, headers=headers)
    return r.status_code, r.json()


# ---- the test server refuses what the real APIs refuse ---------------------------------------

def test_the_scripted_server_refuses_what_the_real_api_refuses():
    img = "data:image/png;base64,iVBORw0KGgo="
    tool = {"name": "gui", "description": "d", "parameters": {"type": "object", "properties": {}}}
    good = {
        "openai-chat": {"model": "m", "messages": [
            {"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "image_url", "image_url": {"url": img}}]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                 "function": {"name": "gui", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
            "tools": [{"type": "function", "function": tool}], "max_completion_tokens": 10, "temperature": 0.5},
        "openai-responses": {"model": "m", "instructions": "s", "max_output_tokens": 16, "input": [
            {"role": "user", "content": [{"type": "input_image", "image_url": img, "detail": "high"}]},
            {"type": "function_call", "call_id": "c1", "name": "gui", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}], "tools": [{"type": "function", **tool}]},
        "anthropic": {"model": "m", "max_tokens": 10, "system": "s", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                              {"type": "tool_use", "id": "t1", "name": "gui", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}],
            "tools": [{"name": "gui", "description": "d", "input_schema": tool["parameters"]},
                      {"name": "bash", "type": "bash_20250124"}]},
    }
    bad = {
        "openai-chat": [({"messages": good["openai-chat"]["messages"][:3]}, "must be followed by tool messages"),
                        ({"stream_options": {"include_usage": True}}, "only allowed when 'stream' is enabled"),
                        ({"temperature": 3}, "temperature"), ({"reasoning_effort": "huge"}, "reasoning_effort"),
                        ({"max_tokens_total": 5}, "Unrecognized request argument supplied: max_tokens_total"),
                        ({"tools": [{"type": "function", "function": {**tool, "parameters": {"type": "object",
                                                                                           "required": 3}}}]},
                         "invalid JSON schema")],
        "openai-responses": [({"max_output_tokens": 8}, "at least 16"),
                             ({"tools": [{"type": "function", "function": tool}]}, "not the Chat Completions form"),
                             ({"input": good["openai-responses"]["input"][:2]}, "No tool output found"),
                             ({"reasoning": {"effort": "loud"}}, "reasoning")],
        "anthropic": [({"temperature": 0.0}, "temperature: Extra inputs are not permitted"),
                      ({"tools": [{"name": "x", "type": "teleport_20991231"}]}, "unknown tool type"),
                      ({"messages": [{"role": "user", "content": [{"type": "hologram", "data": "x"}]}]},
                       "unknown block type 'hologram'"),
                      ({"max_tokens": None}, "max_tokens"),
                      ({"messages": good["anthropic"]["messages"][:2] + [{"role": "user", "content": "go on"}]},
                       "without `tool_result` blocks"),
                      ({"output_config": {"effort": "minimal"}}, "output_config")],
    }
    with ScriptedServer(lambda api, body: {"text": "fine"}) as srv, httpx2.Client() as http:
        for api in APIS:
            assert post(http, srv, api, good[api])[0] == 200, (api, srv.refused)
            for change, msg in bad[api]:
                body = {k: v for k, v in {**good[api], **change}.items() if v is not None}
                status, reply = post(http, srv, api, body)
                assert status == 400 and msg in reply["error"]["message"], (api, change, reply)
        assert len(srv.refused) == sum(len(v) for v in bad.values())
        # a beta parameter (Claude Code sends context_management) is the API's only with the
        # anthropic-beta header naming beta features, as the real API takes it
        beta = {**good["anthropic"], "context_management": {"edits": []}}
        status, reply = post(http, srv, "anthropic", beta)
        assert status == 400 and "context_management: Extra inputs" in reply["error"]["message"], reply
        assert post(http, srv, "anthropic", beta, {"anthropic-beta": "context-management-2025-06-27"})[0] == 200
        status, reply = post(http, srv, "anthropic", {**beta, "betas": ["x"]}, {"anthropic-beta": "x"})
        assert status == 400 and "betas: Extra inputs" in reply["error"]["message"], reply


# ---- only what the installed SDK takes; our own errors stop the run ---------------------------

def test_settings_are_read_against_the_installed_sdks_signatures():
    import inspect

    import anthropic
    takes = set(inspect.signature(anthropic.resources.messages.Messages.create).parameters)
    anth = ModelConfig(model="m", api="anthropic", temperature=0.2, reasoning_effort="low")
    assert unsupported_settings(anth) == ([] if "temperature" in takes else ["temperature"])
    assert unsupported_settings(ModelConfig(model="m", api="openai-chat", temperature=0.2, reasoning_effort="low")) == []
    r = CliRunner().invoke(cli_main, ["eval", "--model", "m", "--api", "anthropic", "--base-url", "http://127.0.0.1:9",
                                      "--api-key-env", "", "--agent", "general_e2e", "--temperature", "0.3",
                                      "--objective", "maze_paint/easy"])
    if "temperature" not in takes:
        assert r.exit_code == 2 and r.output.count("error:") == 1 and "--temperature" in r.output, r.output
    for opt, v in (("--max-reply-bytes", "0"), ("--request-timeout", "inf"), ("--request-timeout", "-1")):
        r = CliRunner().invoke(cli_main, ["eval", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                          "--api-key-env", "", opt, v, "--objective", "maze_paint/easy"])
        assert r.exit_code == 2 and r.output.count("error:") == 1 and f"error: {opt} must be" in r.output, r.output


def test_an_error_of_our_own_code_stops_the_run_with_one_error_line(tmp_path, monkeypatch):
    """A request the installed SDK refuses before sending it (here: a parameter the code
    adds that the SDK's create does not take) is our bug: never retried, never an unscored
    episode to rerun; eval stops with one error line, exit 1, and the episode unfinished."""
    orig = AnthropicClient._request

    def stale(self, *a):
        return {**orig(self, *a), "top_k": 5}            # not a parameter of the installed SDK
    monkeypatch.setattr(AnthropicClient, "_request", stale)
    with ScriptedServer(lambda api, body: {"text": "BENCHMARK COMPLETED"}) as srv:
        client = make_client(cfg(srv, "anthropic", max_retries=3))
        with pytest.raises(InternalError, match="top_k"):
            client.complete(HI)
        r = CliRunner().invoke(cli_main, ["eval", "--model", "m", "--api", "anthropic", "--base-url", srv.url,
                                          "--api-key-env", "", "--agent", "general_e2e", "--objective",
                                          "maze_paint/easy", "--infra-retries", "2", "--out", str(tmp_path / "r")])
        assert srv.requests == 0
    assert r.exit_code == 1 and r.output.count("error:") == 1 and "top_k" in r.output, r.output
    assert not list((tmp_path / "r").rglob("result.json"))          # unfinished: --resume runs it again
    assert not list((tmp_path / "r").rglob("*.attempt-*"))          # and it was not rerun
    # an exception inside the SDK before anything is sent is ours too (not an unreadable reply)
    monkeypatch.setattr(AnthropicClient, "_request", orig)
    monkeypatch.setattr(clients_mod, "sdk_parameters", lambda api: frozenset({"model", "messages", "max_tokens",
                                                                             "extra_body", "system", "bogus"}))
    monkeypatch.setattr(AnthropicClient, "_request", lambda self, *a: {**orig(self, *a), "bogus": 1})
    with ScriptedServer(lambda api, body: {"text": "x"}) as srv:
        with pytest.raises(InternalError, match="before sending it: TypeError"):
            make_client(cfg(srv, "anthropic", max_retries=3)).complete(HI)
        assert srv.requests == 0


def test_eval_exits_non_zero_when_episodes_stay_unscored(tmp_path):
    with ScriptedServer(lambda api, body: {"text": "x"}) as srv:
        srv.fail_next(503, count=10)
        r = CliRunner().invoke(cli_main, ["eval", "--model", "m", "--base-url", srv.url_v1, "--api-key-env", "",
                                          "--agent", "native", "--objective", "maze_paint/easy", "--max-retries", "0",
                                          "--infra-retries", "1", "--out", str(tmp_path / "r"), "--json"])
    assert r.exit_code == 1, r.output
    assert "error: 1 episode could not be scored" in r.output and "after 1 reruns" in r.output
    assert json.loads(r.output.splitlines()[0])["unscored"] == 1        # the metrics are still printed


# ---- every request has a deadline and a reply cap ------------------------------------------

@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_endless_slow_and_huge_replies_are_provider_errors_with_their_reason(api, stream):
    with ScriptedServer(lambda a, body: {"text": "x"}) as srv:
        srv.drip_seconds = 0.02
        for mode, kind, bounds in (("endless", "deadline", {"timeout": 0.25}),
                                   ("drip", "deadline", {"timeout": 0.25}),
                                   ("huge", "size", {"max_reply_bytes": 2 ** 20}),
                                   ("huge-chunked", "size", {"max_reply_bytes": 2 ** 20}),
                                   ("gzip", "size", {})):
            srv.misbehave = mode
            with pytest.raises(ProviderError) as ei:
                make_client(cfg(srv, api, stream=stream, max_retries=1, **bounds)).complete(HI)
            e = ei.value
            assert e.kind == kind, (mode, str(e))
            # a missed deadline is retried once (max_retries 1), an oversized reply never
            assert e.retries == (1 if kind == "deadline" else 0), (mode, str(e))
            assert ("deadline of 0.25 s" if kind == "deadline" else "compressed (gzip)" if mode == "gzip"
                    else "cap of 1048576 bytes") in str(e)
        srv.misbehave = None
        assert make_client(cfg(srv, api, stream=stream, timeout=5)).complete(HI).text == "x"


# ---- every protocol on every wire, streamed or not, with or without sampling settings ------

PROTOCOLS = MODEL_AGENTS            # every model protocol and tool configuration eval offers
SAMPLING = {"temperature": 0.3, "reasoning_effort": "low", "max_output_tokens": 300}
LIMIT_FIELD = {"chat": "max_completion_tokens", "responses": "max_output_tokens", "messages": "max_tokens"}
PNG = None


def sampling_for(api: str, on: bool) -> dict:
    """The sampling settings, less those the wire's installed SDK takes no parameter for
    (eval refuses those before a run)."""
    if not on:
        return {}
    kw = dict(SAMPLING)
    for k in unsupported_settings(ModelConfig(model="m", api=api, **kw)):
        kw.pop(k)
    return kw


def protocol_request(protocol: str):
    """The system prompt and tools of a protocol, and a short conversation in its form: the
    task with a screenshot, a reply (a tool call where the protocol calls tools) and its
    result with the next screenshot."""
    from longpuzzle.agents.models.clients import ToolCall
    from longpuzzle.agents.media.images import encode_png
    from longpuzzle.agents.models.protocols import PROTOCOLS as MODEL_PROTOCOLS, Context
    from longpuzzle.agents.vista.model import CONFIGS
    from longpuzzle.agents.vista.prompt import player_prompt
    from longpuzzle.agents.vista.tools import TOOLS

    global PNG
    if PNG is None:
        import numpy as np
        PNG = encode_png(np.full((96, 54, 3), 200, np.uint8))
    if protocol in CONFIGS:
        c = CONFIGS[protocol]
        system, tools = player_prompt(c.setting, c.tools, (540, 960)), [TOOLS[n].spec() for n in c.tools]
        call = {"name": "play", "arguments": {"action": "click", "x": 10, "y": 20}}
    else:
        p = MODEL_PROTOCOLS[protocol](Context("Complete all levels.", "maze_paint", "easy", (540, 960), None))
        system, tools = p.system_prompt(), (p.tools() if p.tool_mode else None)
        call = {"name": "gui", "arguments": {"action": "wait", "ms": 0}} if tools else None
    conv = [{"role": "system", "text": system},
            {"role": "user", "parts": [{"text": "Play."}, {"image": PNG, "ref": {"frame": 0}}]}]
    if call:
        conv += [{"role": "assistant", "text": "", "tool_calls": [ToolCall("c1", call["name"], call["arguments"])]},
                 {"role": "tool", "call_id": "c1", "name": call["name"],
                  "parts": [{"text": "done"}, {"image": PNG, "ref": {"frame": 1}}]}]
    else:
        conv += [{"role": "assistant", "text": "Thought: look.\nAction: wait"},
                 {"role": "user", "parts": [{"text": "Next."}, {"image": PNG, "ref": {"frame": 1}}]}]
    return conv, tools, call


@pytest.mark.parametrize("api", APIS)
def test_every_protocols_requests_are_accepted_on_every_wire_streamed_or_not(api):
    """Each protocol's system prompt, tools and conversation (images, a tool call and its
    result) sent on the wire, streamed and not, with and without sampling settings: the
    server accepts every request as the real API would, and the reply comes back whole."""
    seen = []

    def script(a, body):
        seen.append(body)
        tools = body.get("tools") or []
        if not tools:
            return {"text": "Thought: fine.\nAction: wait"}
        name = tools[0].get("name") or tools[0]["function"]["name"]
        return {"text": "calling", "tool_calls": [{"name": name, "arguments": {"k": [1, "v"]}}]}
    with ScriptedServer(script) as srv:
        clients = {(stream, on): make_client(cfg(srv, api, stream=stream, **sampling_for(api, on)))
                   for stream in (False, True) for on in (False, True)}
        for protocol in PROTOCOLS:
            conv, tools, call = protocol_request(protocol)
            for (stream, on), c in clients.items():
                if True:
                    n = len(seen)
                    r = c.complete(conv, tools)
                    assert srv.refused == [], (protocol, stream, on, srv.refused)
                    body = seen[n]
                    assert bool(body.get("stream")) == stream
                    assert body[LIMIT_FIELD[{"openai-chat": "chat", "openai-responses": "responses"}.get(api, "messages")]] \
                        == (300 if on else 16384)
                    if on and api != "anthropic":
                        assert body["temperature"] == 0.3
                    if tools:
                        assert [(t.name, t.arguments) for t in r.tool_calls] == [(call["name"] if protocol != "native"
                                                                                  else "gui", {"k": [1, "v"]})]
                    else:
                        assert r.text.startswith("Thought: fine.") and not r.tool_calls
                    assert r.usage.reported and r.usage.output == 40
    assert len(seen) == len(PROTOCOLS) * 4


_GESTURES: dict = {}
COMPLETIONS = [(p, api, (i + j) % 4) for i, p in enumerate(PROTOCOLS) for j, api in enumerate(APIS)]


@pytest.mark.parametrize("protocol,api,combo", COMPLETIONS, ids=[f"{p}-{a}-{k}" for p, a, k in COMPLETIONS])
def test_a_scripted_model_completes_the_objective_through_every_protocol_on_every_wire(tmp_path, protocol, api, combo):
    """The solver's gestures written in the protocol complete the objective through eval's
    runner on each wire; each protocol meets streamed and unstreamed replies and settings
    with and without sampling across the wires (combo: bit 0 stream, bit 1 sampling), and
    every request is one the real API accepts, with its output-token limit."""
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.testing.endpoints import ReplayScript, gesture_script, solver_gestures
    from longpuzzle.agents.runner import RunConfig, execute, start_run

    objective = "nut_and_bolt/easy"
    if objective not in _GESTURES:
        _GESTURES[objective] = solver_gestures(objective)
    stream, on = bool(combo & 1), bool(combo & 2)
    script = ReplayScript(gesture_script(protocol, _GESTURES[objective]),
                          by="sequence" if protocol == "vista-images" else "history")
    limits, temps, streams = [], [], []

    def watch(a, body):
        limits.append(body.get(LIMIT_FIELD[a]))
        temps.append(body.get("temperature"))
        streams.append(bool(body.get("stream")))
        return script(a, body)
    with ScriptedServer(watch) as srv:
        model = cfg(srv, api, stream=stream, **sampling_for(api, on))
        run = RunConfig(agent=protocol, objectives=[objective], settings=Settings(action_timeout=None).as_dict(),
                        model=model.public())
        start_run(tmp_path, run)
        s = execute(tmp_path, run, quiet=True)
    ep = s["episodes"][0]
    assert srv.refused == [] and ep["end"] == "completed" and s["metrics"]["OSR"] == 100.0, (srv.refused, ep.get("error"))
    assert s["usage"]["calls"] == srv.replies == len(limits)
    assert set(streams) == {stream}
    assert set(limits) == {300 if on else 1024 if protocol == "general_e2e" else 16384}
    # sampling as asked; general_e2e's temperature 0 is sent where the wire takes a temperature
    want = 0.3 if on and api != "anthropic" else 0.0 if protocol == "general_e2e" and api != "anthropic" else None
    assert set(temps) == {want}


def test_an_internal_error_stops_the_episodes_running_beside_it(tmp_path, monkeypatch):
    """With episodes on threads, the model agents running beside the one that met our bug
    stop at their next request (unfinished, for --resume), instead of playing on."""
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.models.clients import OpenAIChatClient
    from longpuzzle.agents.testing.endpoints import ReplayScript, gesture_script, solver_gestures
    from longpuzzle.agents.runner import RunConfig, execute, start_run

    orig, calls, raised = OpenAIChatClient._request, {}, []

    def buggy(self, *a):
        calls[id(self)] = calls.get(id(self), 0) + 1
        if calls[id(self)] == 3 and not raised:
            raised.append(id(self))
            raise ValueError("a bug of ours")
        return orig(self, *a)
    monkeypatch.setattr(OpenAIChatClient, "_request", buggy)
    replies = gesture_script("native", solver_gestures("nut_and_bolt/easy"))
    with ScriptedServer(ReplayScript(replies), delay=0.05) as srv:
        run = RunConfig(agent="native", objectives=["nut_and_bolt/easy"], episodes=2,
                        settings=Settings(action_timeout=None).as_dict(), model=cfg(srv, "openai-chat").public())
        start_run(tmp_path, run)
        with pytest.raises(InternalError, match="a bug of ours"):
            execute(tmp_path, run, workers=2, quiet=True)
        assert srv.requests < len(replies)          # the other episode stopped well before its end
    assert len(calls) == 2 and not list(tmp_path.rglob("result.json"))
