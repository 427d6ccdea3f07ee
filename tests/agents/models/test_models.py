"""Model agents end to end through a real HTTP server on 127.0.0.1 (no other address).

The server (agents/testing/endpoints.py) speaks the Chat Completions, Responses and Messages
wire formats; its model is scripted with the solver agent's gestures for an objective,
written in the protocol under test (coordinates in that protocol's convention)."""

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.agents.harness import Settings, open_frames, replay_episode
from longpuzzle.agents.models.accounting import Prices, Usage, price_table
from longpuzzle.agents.models.clients import ProviderError, make_client
from longpuzzle.agents.models.config import ModelConfig, ModelConfigError, load_provider_file, resolve_model
from longpuzzle.agents.media.images import (
    View, decode_png, encode_png, frame_to_grid, grid_to_frame, make_view, smart_resize,
)
from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, solver_gestures
from longpuzzle.agents.runner import RunConfig, execute, start_run
from longpuzzle.cli import cli as cli_main

FRAME = (540, 960)
_GESTURES: dict = {}


def gestures(objective):
    if objective not in _GESTURES:
        _GESTURES[objective] = solver_gestures(objective, FRAME)
    return _GESTURES[objective]


def cfg_for(srv, api="openai-chat", **kw):
    base = srv.url if api == "anthropic" else srv.url_v1
    kw = {"price": {"input": 2.0, "cached_input": 0.2, "output": 10.0}, "timeout": 10.0, "max_retries": 3,
          "backoff_base": 0.001, **kw}
    return ModelConfig(model="scripted-model", api=api, base_url=base, api_key_env="", **kw)


def run_config(srv, protocol, objectives, api="openai-chat", episodes=1, settings=None, **model_kw):
    st = Settings(action_timeout=None, **(settings or {}))
    return RunConfig(agent=protocol, objectives=list(objectives), episodes=episodes, settings=st.as_dict(),
                     model=cfg_for(srv, api, **model_kw).public())


def images_in(api, body):
    """The PNG images (decoded) of a request, in order."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            for k in ("url", "image_url", "data"):
                s = v.get(k)
                if isinstance(s, str) and (s.startswith("data:image/png;base64,") or (k == "data" and v.get("media_type"))):
                    out.append(_Lazy(s.split(",", 1)[-1]))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(body.get("messages") or body.get("input"))
    return out


class _Lazy:
    """A request's image, decoded only when compared."""

    def __init__(self, b64):
        self.b64 = b64

    def __array__(self, dtype=None, copy=None):
        return decode_png(base64.b64decode(self.b64))


def conversation(folder):
    return [json.loads(l) for l in (Path(folder) / "conversation.jsonl").read_text().splitlines()]


# ---- images and coordinates ---------------------------------------------------------------

def test_png_is_lossless_and_views_round_trip_exactly():
    rng = np.random.default_rng(1)
    f = rng.integers(0, 256, (37, 23, 3), dtype=np.uint8)
    assert np.array_equal(decode_png(encode_png(f)), f)
    assert smart_resize(960, 540) == (952, 532)
    h, w = smart_resize(4000, 3000, 28, 78400, 1_000_000)
    assert h % 28 == 0 and w % 28 == 0 and h * w <= 1_000_000
    h, w = smart_resize(50, 40, 28, 78400)
    assert h * w >= 78400 and h % 28 == 0
    from PIL import Image
    W, H = FRAME
    xs, ys = np.arange(W), np.arange(H)
    fx = np.zeros((H, W, 3), np.uint8)
    fx[:, :, 0], fx[:, :, 1] = xs % 256, xs // 256            # each pixel's colour names its column
    fy = np.zeros((H, W, 3), np.uint8)
    fy[:, :, 0], fy[:, :, 1] = (ys % 256)[:, None], (ys // 256)[:, None]
    for rule in ("smart_resize", "longest:512", "longest:1600", None):
        v = make_view(FRAME, rule)
        w, h = v.size
        # the conversion agrees exactly with the resampler's geometry: the frame pixel an
        # image pixel maps back to is the one a nearest-neighbour resize shows there
        ix = np.asarray(Image.fromarray(fx).resize(v.size, Image.NEAREST)).astype(int)
        iy = np.asarray(Image.fromarray(fy).resize(v.size, Image.NEAREST)).astype(int)
        # (a centre exactly on the border of two frame pixels may go to either: Pillow's
        # floating-point steps decide; ours takes the lower one)
        for x in range(w):
            tie = (2 * x + 1) * W % (2 * w) == 0
            assert abs(v.to_frame(x, 0)[0] - (ix[0, x, 0] + 256 * ix[0, x, 1])) <= tie
        for y in range(h):
            tie = (2 * y + 1) * H % (2 * h) == 0
            assert abs(v.to_frame(0, y)[1] - (iy[y, 0, 0] + 256 * iy[y, 0, 1])) <= tie
        # round trips: exact through the coarser of the two sides, within one pixel otherwise
        for x in range(max(w, W)):
            if w <= W:
                assert x >= w or v.to_image(v.to_frame(x, 0)[0], 0)[0] == x
            else:
                assert x >= W or v.to_frame(v.to_image(x, 0)[0], 0)[0] == x
        for y in range(max(h, H)):
            if h <= H:
                assert y >= h or v.to_image(0, v.to_frame(0, y)[1])[1] == y
            else:
                assert y >= H or v.to_frame(0, v.to_image(0, y)[1])[1] == y
        assert v.to_frame(w - 1, h - 1) == (W - 1, H - 1) and v.to_image(W - 1, H - 1) == (w - 1, h - 1)
        assert v.image(fx).shape == (h, w, 3)
    for side in (540, 960, 1080):
        for p in range(side):
            g = frame_to_grid(p, side, 1000)
            assert 0 <= g <= 1000
            if side <= 1000:
                assert grid_to_frame(g, side, 1000) == p
    assert grid_to_frame(1000, 540, 1000) == 539


# ---- config, prices, accounting -----------------------------------------------------------

def test_provider_file_names_endpoints_and_models(tmp_path, monkeypatch):
    f = tmp_path / "models.toml"
    f.write_text('[endpoints.local]\napi = "openai-responses"\nbase_url = "http://127.0.0.1:9/v1"\n'
                 'api_key_env = "LP_TEST_KEY"\n\n[models.tiny]\nendpoint = "local"\nmodel = "org/Tiny-VL"\n'
                 'agent = "qwen"\ntemperature = 0.5\nprice = { input = 1.0, output = 2.0 }\n'
                 '[models.luna]\nendpoint = "local"\nmodel = "gpt-6-luna"\nreasoning_effort = "max"\n')
    t = load_provider_file(f)
    assert t["tiny"].api == "openai-responses" and t["tiny"].model == "org/Tiny-VL" and t["tiny"].agent == "qwen"
    assert t["tiny"].prices() == Prices(1.0, 2.0, None)
    assert t["luna"].prices() == price_table()["gpt-6-luna"]
    monkeypatch.setenv("LP_TEST_KEY", "sk-secret-123")
    assert t["tiny"].api_key() == "sk-secret-123"
    assert "sk-secret-123" not in json.dumps(t["tiny"].public())
    assert resolve_model("tiny", f, temperature=0.1).temperature == 0.1
    assert resolve_model("raw-model", None, base_url="http://127.0.0.1:1/v1").model == "raw-model"
    for bad, msg in (('[models.x]\nmodel = "m"\nbogus = 1\n', "unknown setting"),
                     ('[models.x]\nendpoint = "nope"\n', "not defined"),
                     ('[models.x]\nmodel = "m"\napi = "grpc"\n', "unknown api"),
                     ('[models.x]\nmodel = "m"\napi_key = "sk"\n', "environment variable"),
                     ('[models.x\n', "not valid TOML")):
        f.write_text(bad)
        with pytest.raises(ModelConfigError, match=msg):
            load_provider_file(f)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        ModelConfig(model="m", base_url="https://api.example.invalid/v1").api_key()
    u = Usage()
    p = Prices(2.0, 10.0, 0.2)
    u.add_call(type("U", (), {"input_uncached": 1000, "input_cached": 4000, "output": 500, "reasoning": 100,
                              "latency": 0.5, "retries": 1, "reported": True})(), p)
    assert u.cost == pytest.approx((1000 * 2 + 4000 * 0.2 + 500 * 10) / 1e6)
    assert Usage.from_dict(u.as_dict()).merge(Usage.from_dict(u.as_dict())).input_cached == 8000


# ---- every protocol completes both objectives through HTTP -------------------------------

E2E = [("general_e2e", "maze_paint/easy", "openai-chat"), ("general_e2e", "nut_and_bolt/easy", "openai-responses"),
       ("native", "maze_paint/easy", "openai-chat"), ("native", "nut_and_bolt/easy", "openai-responses"),
       ("native", "nut_and_bolt/easy", "anthropic"), ("qwen", "maze_paint/easy", "openai-chat"),
       ("qwen", "nut_and_bolt/easy", "openai-chat"), ("uitars", "maze_paint/easy", "openai-chat"),
       ("uitars", "nut_and_bolt/easy", "anthropic")]


@pytest.mark.parametrize("protocol,objective,api", E2E, ids=[f"{p}-{o.split('/')[0]}-{a}" for p, o, a in E2E])
def test_every_protocol_completes_the_objective_through_http(tmp_path, protocol, objective, api):
    script = ReplayScript(gesture_script(protocol, gestures(objective), FRAME))
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 9
        run = run_config(srv, protocol, [objective], api)
        start_run(tmp_path, run)
        summary = execute(tmp_path, run)
    assert summary["metrics"]["OSR"] == 100.0, summary["episodes"][0].get("error")
    ep = summary["episodes"][0]
    folder = tmp_path / ep["folder"]
    assert ep["end"] == "completed" and ep["scored"]
    u = summary["usage"]
    # token totals equal what the server reported; the cost follows from the price table
    assert u["calls"] == srv.replies
    assert u["input_uncached"] + u["input_cached"] == srv.reported["input"]
    assert u["input_cached"] == srv.reported["cached"] and u["output"] == srv.reported["output"]
    if api != "anthropic":
        assert u["reasoning"] == srv.reported["reasoning"]
    assert u["cost"] == pytest.approx((u["input_uncached"] * 2.0 + u["input_cached"] * 0.2 + u["output"] * 10.0) / 1e6)
    assert summary["objectives"][0]["usage"]["calls"] == u["calls"]
    assert u["parse_failures"] == 0 and u["retries"] == 0
    # the episode replays without any model, frame for frame
    assert replay_episode(folder).ok
    # the conversation references the stored frames; what the model saw is those frames
    conv = conversation(folder)
    assert conv[0]["type"] == "header" and conv[0]["protocol"] == protocol and conv[-1]["type"] == "end"
    calls = [r for r in conv if r["type"] == "call"]
    assert len(calls) == u["calls"]
    cap = conv[0]["history_images"]          # general_e2e 1, qwen / uitars 2, native all
    assert cap == {"general_e2e": 1, "qwen": 2, "uitars": 2, "native": None}[protocol]
    assert all(len(c["images_sent"]) <= (cap or 10 ** 6) for c in calls)
    assert max(len(c["images_sent"]) for c in calls) == (cap or len(calls) - 1)
    view = View(FRAME, tuple(conv[0]["view"]))
    with open_frames(folder) as fs:
        for req in srv.bodies:
            rec = calls[req["n"]]
            imgs = images_in(req["api"], req["body"])
            assert len(imgs) == len(rec["images_sent"])
            for idx, img in list(zip(rec["images_sent"], imgs))[-2:]:
                assert np.array_equal(np.asarray(img), view.image(fs.read(idx)))
    assert "BENCHMARK COMPLETED" in conv[0]["system"] or protocol != "native"
    res = json.loads((folder / "result.json").read_text())
    assert res["model"]["usage"]["calls"] == u["calls"] and res["model"]["protocol"] == protocol


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
def test_native_function_calls_are_answered_by_their_results(tmp_path, api):
    """Every tool call of the model is answered, in the next request, by a tool result with
    its id (the screenshot in the last one), as real endpoints require (they refuse a
    request with an unanswered call)."""
    objective = "maze_paint/easy"
    script = ReplayScript(gesture_script("native", gestures(objective), FRAME))
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 1
        run = run_config(srv, "native", [objective], api, settings={"max_actions": 5})
        start_run(tmp_path, run)
        execute(tmp_path, run)
    bodies = [b["body"] for b in srv.bodies]
    assert len(bodies) >= 4
    last = bodies[-1]
    if api == "anthropic":
        calls = [p["id"] for m in last["messages"] if m["role"] == "assistant"
                 for p in m["content"] if isinstance(p, dict) and p.get("type") == "tool_use"]
        answered = [p["tool_use_id"] for m in last["messages"] if m["role"] == "user"
                    for p in (m["content"] if isinstance(m["content"], list) else [])
                    if isinstance(p, dict) and p.get("type") == "tool_result"]
    elif api == "openai-responses":
        items = last["input"]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        answered = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    else:
        msgs = last["messages"]
        calls = [c["id"] for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        answered = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
        for k, m in enumerate(msgs):                # each call's results right after it
            ids = [c["id"] for c in m.get("tool_calls") or []]
            if ids:
                assert [x.get("tool_call_id") for x in msgs[k + 1:k + 1 + len(ids)]] == ids
    assert len(calls) >= 3 and answered == calls


# ---- malformed replies, claims, retries, failures -----------------------------------------

def test_malformed_replies_are_parse_failures_with_a_corrective_message(tmp_path):
    replies = gesture_script("general_e2e", gestures("nut_and_bolt/easy"), FRAME)
    bad = [{"text": "I will click the bolt."}, {"text": 'Thought: x\nAction: {"action_type": "teleport"}'}]
    script = ReplayScript(replies[:3] + bad + replies[3:])
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 1
        run = run_config(srv, "general_e2e", ["nut_and_bolt/easy"])
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
    assert s["metrics"]["OSR"] == 100.0 and s["usage"]["parse_failures"] == 2
    texts = [json.dumps(b["body"]["messages"][-1]) for b in srv.bodies]
    assert sum("could not be executed" in t and "no 'Action:' line" in t for t in texts) == 1
    assert sum("unsupported action_type 'teleport'" in t for t in texts) == 1
    conv = conversation(tmp_path / s["episodes"][0]["folder"])
    assert [r["error"] for r in conv if r["type"] == "parse_failure"] == [
        "the reply has no 'Action:' line",
        "unsupported action_type 'teleport'; use click, double_tap, long_press, press, release, drag, swipe or wait"]
    # three in a row end the episode as an agent failure, which stays scored
    script = ReplayScript(replies[:2] + [{"text": "hmm"}] * 3 + replies[2:])
    with ScriptedServer(script) as srv:
        run = run_config(srv, "general_e2e", ["nut_and_bolt/easy"])
        start_run(tmp_path / "b", run)
        s = execute(tmp_path / "b", run)
    ep = s["episodes"][0]
    assert ep["end"] == "agent_error" and ep["scored"] and "invalid_action_limit" in ep["error"]
    assert s["metrics"]["OSR"] == 0.0 and s["metrics"]["unscored"] == 0


def test_a_completion_claim_gets_one_continuation_and_a_second_ends_the_episode(tmp_path):
    claim = {"text": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'}
    replies = gesture_script("qwen", gestures("nut_and_bolt/easy"), FRAME)
    with ScriptedServer(ReplayScript(replies[:4] + [claim] + replies[4:])) as srv:
        srv.keep_bodies = 1
        run = run_config(srv, "qwen", ["nut_and_bolt/easy"])
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
    assert s["metrics"]["OSR"] == 100.0 and s["usage"]["claims"] == 1
    assert any("has not observed the whole objective" in json.dumps(b["body"]["messages"][-1]) for b in srv.bodies)
    with ScriptedServer(ReplayScript(replies[:4] + [claim, claim])) as srv:
        run = run_config(srv, "qwen", ["nut_and_bolt/easy"])
        start_run(tmp_path / "b", run)
        s = execute(tmp_path / "b", run)
    ep = s["episodes"][0]
    assert ep["end"] == "final_answer" and s["usage"]["claims"] == 2 and s["metrics"]["PER"] == 100.0


@pytest.mark.parametrize("text_reply", ["final", "reprompt"])
def test_a_reply_without_a_tool_call_is_the_final_response(tmp_path, text_reply):
    """As in the paper, a function-calling reply without a tool call ends the episode as the
    agent's final response: scored, and counted by PER when unsolved with budget left.
    ``text_reply="reprompt"`` answers it with a corrective message instead."""
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    quit_ = {"text": "These puzzles are too hard for me; I stop here."}
    with ScriptedServer(ReplayScript(replies[:4] + [quit_] + replies[4:])) as srv:
        run = run_config(srv, "native", ["nut_and_bolt/easy"])
        run.agent_options = {"text_reply": text_reply}
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
    ep = s["episodes"][0]
    if text_reply == "final":
        assert ep["end"] == "final_answer" and ep["scored"] and not ep["success"]
        assert s["metrics"]["PER"] == 100.0 and s["metrics"]["unscored"] == 0
        assert s["usage"]["calls"] == 5 and s["usage"]["parse_failures"] == 0
    else:
        assert ep["end"] == "completed" and s["usage"]["parse_failures"] == 1


def _native(size=FRAME, scale_factor=None):
    from longpuzzle.agents.models.protocols import PROTOCOLS, Context
    return PROTOCOLS["native"](Context("t", "maze_paint", "easy", size, None), scale_factor=scale_factor)


def _boundary_values(schema: dict) -> tuple[list, list]:
    """Values a field's schema allows at its edges (every enum member, the bounds, the
    shortest and longest texts) and values just outside them."""
    if "enum" in schema:
        return list(schema["enum"]), ["", "nope"]
    if schema["type"] == "integer":
        lo, hi = schema["minimum"], schema["maximum"]
        return [lo, lo + 1, (lo + hi) // 2, hi - 1, hi], [lo - 1, hi + 1, 1.5, True, "3"]
    lo, hi = schema["minLength"], schema["maxLength"]
    return ["a" * lo, "Ab 1" * (hi // 4), "z" * hi], ["", "a" * (hi + 1), "é"]


@pytest.mark.parametrize("scale_factor", [None, 1000])
def test_the_native_tool_schema_and_its_parser_agree_on_every_value(scale_factor):
    """The `gui` tool's schema is generated from the definition the parser checks with:
    every value the schema allows for an action's field is accepted (e.g. wait ms 0, as the
    engine and MCP play accept it), and every value it refuses is refused by the parser."""
    from jsonschema import Draft202012Validator

    from longpuzzle.agents.models.protocols.base import ParseError
    from longpuzzle.agents.models.protocols.native import ACTION_FIELDS

    p = _native(scale_factor=scale_factor)
    schema = p.tools()[0]["parameters"]
    check = Draft202012Validator(schema)
    Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    base = {"x": 3, "y": 4, "x0": 1, "y0": 2, "x1": 5, "y1": 6, "key": "Enter", "text": "go", "direction": "up",
            "ms": 10}
    tried = 0
    for action, (required, optional) in ACTION_FIELDS.items():
        if action == "batch":
            continue
        for f in required + optional:
            ok, bad = _boundary_values(props[f])
            for v in ok:
                args = {"action": action, **{k: base[k] for k in required + optional}, f: v}
                assert check.is_valid(args), (action, f, v)
                assert p.convert(args, top=True), (action, f, v)
                batch = {"action": "batch", "actions": [args, {"action": "wait", "ms": 0}]}
                assert check.is_valid(batch) and len(p.convert(batch, top=True)) == 2
                tried += 1
            for v in bad:
                args = {"action": action, **{k: base[k] for k in required + optional}, f: v}
                assert not check.is_valid(args), (action, f, v)
                with pytest.raises(ParseError):
                    p.convert(args, top=True)
                tried += 1
    assert p.convert({"action": "wait", "ms": 0}, top=True) == [{"type": "wait", "ms": 0}]
    assert p.convert({"action": "wait"}, top=True) == [{"type": "wait", "ms": 1000}]
    top = props["actions"]["maxItems"]
    many = {"action": "batch", "actions": [{"action": "wait", "ms": 1}] * top}
    assert check.is_valid(many) and len(p.convert(many, top=True)) == top
    too_many = {"action": "batch", "actions": [{"action": "wait", "ms": 1}] * (top + 1)}
    assert not check.is_valid(too_many)
    with pytest.raises(ParseError):
        p.convert(too_many, top=True)
    assert tried > 60


def test_429_and_500_are_retried_and_counted_other_4xx_are_not(tmp_path):
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    with ScriptedServer(ReplayScript(replies)) as srv:
        srv.fail_next(429, 2, retry_after=0.01)
        srv.fail_next(500, 1)
        run = run_config(srv, "native", ["nut_and_bolt/easy"])
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
        assert s["metrics"]["OSR"] == 100.0
        assert s["usage"]["retries"] == 3 and srv.statuses[429] == 2 and srv.statuses[500] == 1
        conv = conversation(tmp_path / s["episodes"][0]["folder"])
        assert next(r["retries"] for r in conv if r["type"] == "call") == 3
        # a 400 is refused at once: one request, no retry, an infrastructure failure
        client = make_client(cfg_for(srv))
        n = srv.requests
        srv.fail_next(400, 5)
        with pytest.raises(ProviderError, match="HTTP 400") as ei:
            client.complete([{"role": "user", "parts": [{"text": "hi"}]}])
        assert srv.requests == n + 1 and ei.value.retries == 0
        srv.faults.clear()
        # Retry-After is honoured exactly; without it, full jitter under the exponential cap
        assert client.backoff(0, 2.5) == 2.5 and all(0 <= client.backoff(k) <= 0.001 * 2 ** k for k in range(8))


def test_a_dead_endpoint_is_an_infrastructure_failure_that_resume_reruns(tmp_path):
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    with ScriptedServer(ReplayScript(replies)) as srv:
        srv.hang.set()
        run = run_config(srv, "native", ["nut_and_bolt/easy"], timeout=0.3, max_retries=1)
        run.infra_retries = 0
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
        ep = s["episodes"][0]
        assert ep["end"] == "infrastructure_error" and not ep["scored"] and "after 1 retries" in ep["error"]
        assert s["metrics"]["unscored"] == 1 and s["objectives"] == []
        srv.hang.clear()
        run.infra_retries = 1               # resume: the unscored episode runs again, once
        s = execute(tmp_path, run)
    assert s["episodes"][0]["end"] == "completed" and s["metrics"]["OSR"] == 100.0
    assert (tmp_path / "nut_and_bolt_easy" / "episode_001.attempt-1" / "result.json").is_file()


def test_an_unfinished_run_resumes_keeping_finished_episodes(tmp_path):
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    with ScriptedServer(ReplayScript(replies)) as srv:
        run = run_config(srv, "native", ["nut_and_bolt/easy"], episodes=2)
        start_run(tmp_path, run)
        execute(tmp_path, run)
        first = (tmp_path / "nut_and_bolt_easy/episode_001/result.json").read_text()
        # the second episode was interrupted: no result yet
        (tmp_path / "nut_and_bolt_easy/episode_002/result.json").unlink()
        n = srv.requests
        r = CliRunner().invoke(cli_main, ["eval", "--resume", str(tmp_path), "--json"])
        assert r.exit_code == 0, r.output
        assert srv.requests - n == len(replies)        # only the unfinished episode ran
    assert (tmp_path / "nut_and_bolt_easy/episode_001/result.json").read_text() == first
    assert (tmp_path / "nut_and_bolt_easy/episode_002.interrupted-1").is_dir()
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["OSR"] == 100.0 and out["usage"]["calls"] == 2 * len(replies)


def test_compaction_replaces_earlier_turns_with_a_summary(tmp_path):
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    script = ReplayScript(replies, by="sequence")
    grow = iter(range(1, 10_000))

    def growing(api, body):                 # the reported context grows with every call
        r = script(api, body)
        return {**r, "usage": {"input": 400 * next(grow), "cached": 0, "output": 10, "reasoning": 0}}
    with ScriptedServer(growing) as srv:
        run = run_config(srv, "native", ["nut_and_bolt/easy"], context_tokens=3000)
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
    assert s["metrics"]["OSR"] == 100.0
    assert s["usage"]["compactions"] == script.compactions >= 2
    conv = conversation(tmp_path / s["episodes"][0]["folder"])
    comp = [r for r in conv if r["type"] == "compaction"]
    assert len(comp) == s["usage"]["compactions"] and all(c["summary"].startswith("Summary:") for c in comp)
    assert [r["kind"] for r in conv if r["type"] == "call"].count("compaction") == len(comp)


def test_the_api_key_is_sent_but_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("LP_SECRET_KEY", "sk-do-not-write-7f3a")
    seen = []
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    script = ReplayScript(replies)
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 1
        models = tmp_path / "models.toml"
        models.write_text(f'[models.scripted]\napi = "openai-chat"\nbase_url = "{srv.url_v1}"\n'
                          f'api_key_env = "LP_SECRET_KEY"\nagent = "native"\n')
        r = CliRunner().invoke(cli_main, ["eval", "--model", "scripted", "--models-file", str(models),
                                          "--objective", "nut_and_bolt/easy", "--out", str(tmp_path / "run")])
        seen = srv.bodies
    assert r.exit_code == 0, r.output
    assert "OSR" in r.output and "cost" in r.output and seen
    r = CliRunner().invoke(cli_main, ["report", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "Model usage and cost" in (tmp_path / "run" / "report.html").read_text()
    for p in (tmp_path / "run").rglob("*"):
        if p.is_file():
            assert b"sk-do-not-write-7f3a" not in p.read_bytes(), p


# ---- many episodes at once ----------------------------------------------------------------

def test_sixteen_concurrent_episodes_equal_a_sequential_run(tmp_path):
    objs = ["nut_and_bolt/easy", "maze_paint/easy"]
    scripts = {o: gesture_script("native", gestures(o), FRAME) for o in objs}
    titles = {"nut_and_bolt/easy": "Nut and Bolt", "maze_paint/easy": "Maze Paint"}

    def by_objective(api, body):            # one server for both objectives, stateless
        first = json.dumps(body["messages"][1])
        o = next(o for o in objs if titles[o] in first)
        return ReplayScript(scripts[o])(api, body)
    core = ("objective", "end", "actions", "success", "solved", "levels_outcome")
    results = {}
    for name, delay, workers in (("sequential", 0.0, 1), ("concurrent", 1.0, 16)):
        with ScriptedServer(by_objective, delay=delay) as srv:
            run = run_config(srv, "native", objs, episodes=8, settings={"max_actions": 5})
            start_run(tmp_path / name, run)
            s = execute(tmp_path / name, run, workers=workers)
            results[name] = [{k: e[k] for k in core} for e in s["episodes"]]
            if name == "concurrent":
                assert srv.max_in_flight == 16
            else:
                assert srv.max_in_flight == 1
    assert results["concurrent"] == results["sequential"]
    assert len(results["sequential"]) == 16 and {e["end"] for e in results["sequential"]} == {"max_actions"}
    levels = [l for e in results["sequential"] for l in e["levels_outcome"]]
    assert all(e["levels_outcome"][0]["reached"] for e in results["sequential"])
    assert any(l["max_P"] > 0 for l in levels)


def test_the_level_protocol_runs_a_conversation_per_level(tmp_path):
    """The original repository's protocol: each level launched directly, a fresh conversation
    per level (its own conversation.jsonl), general_e2e as the original's built-in agent."""
    from longpuzzle.agents.base import Observation, action_spec
    from longpuzzle.agents.scripted import SolverAgent
    from longpuzzle.agents.harness import instruction_for
    from longpuzzle.engine.catalog import builtin_catalog

    levels = builtin_catalog().objective("nut_and_bolt/easy").level_ids
    per_level = {}
    for n in range(1, len(levels) + 1):
        a = SolverAgent()
        a.reset(instruction_for("nut_and_bolt", "easy") + f" (level {n})", action_spec(*FRAME))
        acts, seen = [], Observation(np.zeros((1, 1, 3), np.uint8), None, 0, None)
        while not a.model.complete:            # (the harness ends the level at its win)
            acts.append(a.act(seen))
        per_level[n] = ReplayScript(gesture_script("general_e2e", acts, FRAME))

    def by_level(api, body):
        n = int(re.search(r"\(level (\d+)\)", json.dumps(body["messages"][1])).group(1))
        return per_level[n](api, body)
    with ScriptedServer(by_level) as srv:
        run = run_config(srv, "general_e2e", ["nut_and_bolt/easy"])
        run.protocol = "level"
        start_run(tmp_path, run)
        s = execute(tmp_path, run)
    ep = s["episodes"][0]
    assert s["metrics"]["OSR"] == 100.0 and ep["success"], ep
    for n in range(1, len(levels) + 1):
        conv = conversation(tmp_path / ep["folder"] / f"level_{n:02d}")
        assert conv[0]["type"] == "header" and f"(level {n})" in json.dumps(conv[1])
    assert s["usage"]["calls"] == srv.replies


def test_a_request_refused_as_too_long_is_compacted_and_sent_again(tmp_path):
    replies = gesture_script("native", gestures("nut_and_bolt/easy"), FRAME)
    script = ReplayScript(replies, by="sequence")
    with ScriptedServer(script) as srv:
        run = run_config(srv, "native", ["nut_and_bolt/easy"])
        start_run(tmp_path, run)
        orig = srv.script

        def overflow_once(api, body, _n=[0]):
            _n[0] += 1
            if _n[0] == 6:                    # the 7th request is refused as too long
                srv.fail_next(400, message="This model's maximum context length is 8192 tokens.")
            return orig(api, body)
        srv.script = overflow_once
        s = execute(tmp_path, run)
    assert s["metrics"]["OSR"] == 100.0 and s["usage"]["compactions"] == 1 and script.compactions == 1
    conv = conversation(tmp_path / s["episodes"][0]["folder"])
    assert [r["type"] for r in conv].count("context_overflow") == 1
    comp = next(r for r in conv if r["type"] == "compaction")
    assert "too long" in comp["reason"]


def test_yaml_provider_files_and_cli_mistakes_are_one_error_line(tmp_path, monkeypatch):
    pytest.importorskip("yaml")
    f = tmp_path / "models.yaml"
    f.write_text("endpoints:\n  local: {api: anthropic, base_url: 'http://127.0.0.1:9'}\n"
                 "models:\n  claude-local: {endpoint: local, model: some-claude, agent: native, max_retries: 0}\n")
    t = load_provider_file(f)
    assert t["claude-local"].api == "anthropic" and t["claude-local"].max_retries == 0
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for args, msg in ((["--model", "m", "--base-url", "https://api.example.invalid/v1"], "OPENAI_API_KEY"),
                      (["--agent", "native"], "needs --model"),
                      (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--resize", "huge"], "resize rule"),
                      (["--resume", str(tmp_path / "none")], "not a run folder"),
                      (["--model", "nope", "--models-file", str(f)], "names no model 'nope'")):
        r = CliRunner().invoke(cli_main, ["eval", "--objective", "nut_and_bolt/easy", "--out", str(tmp_path / "o")] + args)
        assert r.exit_code == 2 and msg in r.output, (args, r.output)
        assert not (tmp_path / "o").exists()


def test_streamed_replies_are_what_the_official_sdks_assemble():
    """A request with "stream": true gets server-sent events that the SDKs' own stream
    readers assemble into the same text and tool calls (Claude Code and Codex CLI stream)."""
    import anthropic
    import openai

    call = {"name": "play", "arguments": {"action": {"type": "click", "x": 3, "y": 4}}}
    with ScriptedServer(lambda api, body: {"text": f"hello {api}", "tool_calls": [call]}) as srv:
        oa = openai.OpenAI(base_url=srv.url_v1, api_key="dummy", max_retries=0)
        text, args, name, finish, usage = "", "", None, None, None
        for ch in oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True):
            usage = ch.usage or usage
            if not ch.choices:
                continue
            d = ch.choices[0].delta
            text += d.content or ""
            for tc in d.tool_calls or []:
                name = tc.function.name or name
                args += tc.function.arguments or ""
            finish = ch.choices[0].finish_reason or finish
        assert (text, name, json.loads(args), finish) == ("hello chat", "play", call["arguments"], "tool_calls")
        assert usage.prompt_tokens == 1000
        with oa.responses.stream(model="m", input="hi") as s:
            kinds = [e.type for e in s]
            r = s.get_final_response()
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert r.output_text == "hello responses"
        fc = [o for o in r.output if o.type == "function_call"]
        assert [(f.name, json.loads(f.arguments)) for f in fc] == [("play", call["arguments"])]
        an = anthropic.Anthropic(base_url=srv.url, api_key="dummy", max_retries=0)
        with an.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
            m = s.get_final_message()
        assert [b.type for b in m.content] == ["text", "tool_use"] and m.content[0].text == "hello messages"
        assert m.content[1].name == "play" and m.content[1].input == call["arguments"]
        assert m.stop_reason == "tool_use" and m.usage.output_tokens == 40
        assert srv.replies == 3 and srv.statuses == {200: 3}
