"""The MCP server through the official SDK's own client, over stdio and over streamable HTTP
on 127.0.0.1: the solver's gestures sent through play complete an objective with OSR 100,
a call with bad arguments gets a clear tool error and loses nothing, and the run folder is
the one eval writes (summary.json, result.json, replay)."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import subprocess
import sys

import anyio
import numpy as np
import pytest
from PIL import Image

from longpuzzle.agents.base import FinalAnswer, Observation, action_spec
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import instruction_for, replay_episode

pytest.importorskip("mcp")
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def _not_json(name):
    raise AssertionError(f"{name} in a JSON file (JSON has no NaN or Infinity; an undefined metric is null)")


def _server_cmd(out, *extra):
    return [sys.executable, "-m", "longpuzzle", "mcp", "--objective", "nut_and_bolt/easy", "--out", str(out), *extra]


async def _play_solver(client) -> dict:
    """The solver's gestures through play; returns what the session saw."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    got = {"tools": sorted(tools)}
    agent = SolverAgent()
    agent.reset(instruction_for("nut_and_bolt", "easy"), action_spec(540, 960, first_wait=True))
    # bad calls first: clear tool errors, nothing dispatched
    bad = [await client.call_tool("play", {"action": {"type": "click", "x": 5}}),
           await client.call_tool("play", {"action": {"type": "wait", "ms": 0}, "extra": 1}),
           await client.call_tool("inspect", {"views": [{"turn": 1}]}),
           await client.call_tool("teleport", {})]
    got["bad"] = [(r.is_error, r.content[0].text) for r in bad]
    obs = Observation(None, None, 0, None)
    last = None
    while True:
        a = agent.act(obs)
        if isinstance(a, FinalAnswer):
            break
        # VISTA: exactly one action per play, in the paper's form play(action, x, y)
        for x in a["actions"] if a["type"] == "batch" else [a]:
            r = await client.call_tool("play", {"action": x["type"], **{k: v for k, v in x.items() if k != "type"}})
            assert not r.is_error, r.content[0].text
            last = json.loads(r.content[0].text)
        img = r.content[1]
        assert img.type == "image" and img.mime_type == "image/png"
        obs = Observation(np.asarray(Image.open(io.BytesIO(base64.b64decode(img.data))).convert("RGB")), None, 0, None)
        if last.get("ended"):
            break
    got["last"], got["frame"] = last, obs.frame
    after = await client.call_tool("play", {"action": {"type": "wait", "ms": 0}})
    got["after"] = (after.is_error, after.content[0].text)
    return got


def _check(got, out):
    assert "play" in got["tools"] and "inspect" in got["tools"]
    assert all(err for err, _ in got["bad"])
    texts = [t for _, t in got["bad"]]
    assert "click needs field(s) 'y'" in texts[0] and "extra" in texts[1]
    assert "no turn 1" in texts[2] or "no turns yet" in texts[2]
    assert "unknown tool 'teleport'" in texts[3]
    assert got["last"]["ended"] == "completed" and got["frame"].shape == (960, 540, 3)
    assert got["last"]["available_actions"] == [] and got["last"]["n_frames"] >= 1
    assert got["after"][0] and "ended (completed)" in got["after"][1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["OSR"] == 100.0 and summary["setting"] == "vista"
    ep = out / "nut_and_bolt_easy" / "episode_001"
    res = json.loads((ep / "result.json").read_text(), parse_constant=_not_json)   # strict JSON: no NaN
    assert res["end"] == "completed" and res["success"] and res["tools"]["errors"] == 4
    # other: the opening wait, the two waits for Nut and Bolt's advance, 3 tool calls; native: the
    # other actions and the refused click
    assert res["other_steps"] == 3 + 3 and res["native_steps"] == res["actions"] - 3 + 1
    rep = replay_episode(ep)
    assert rep.ok and rep.complete
    from longpuzzle.agents.verify import check_run       # the run folder as a whole (no run.json)
    chk = check_run(out, use_record=False)
    assert chk.ok, chk.first[:300]


def test_mcp_over_stdio_plays_an_objective_to_osr_100(tmp_path):
    out = tmp_path / "run"
    cmd = _server_cmd(out)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))

    async def main():
        async with Client(params) as client:
            return await _play_solver(client)
    got = anyio.run(main)
    _check(got, out)
    # serving again into the same --out is refused (one error line), the finished episode kept
    res = out / "nut_and_bolt_easy" / "episode_001" / "result.json"
    before = res.read_bytes(), (out / "summary.json").read_bytes()
    for objective in ("nut_and_bolt/easy", "maze_paint/easy"):
        cmd = [sys.executable, "-m", "longpuzzle", "mcp", "--objective", objective, "--out", str(out)]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and p.stderr.startswith("error:") and "already holds a run" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
    assert (res.read_bytes(), (out / "summary.json").read_bytes()) == before


def test_a_stdio_client_that_leaves_mid_reply_is_one_log_line(tmp_path):
    # a client that stops reading and leaves while a reply is on its way (the server then
    # writes into a broken pipe): one line in the server's log, no traceback; the agent stopped
    out = tmp_path / "run"
    p = subprocess.Popen(_server_cmd(out), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "leaver", "version": "1"}}})
    assert b'"id":1' in p.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    p.stdout.close()                      # the client stops reading, then asks for a reply
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "play", "arguments": {"action": {"type": "wait", "ms": 0}}}})
    # the server's reading thread notices the broken pipe at its next line: pings until it ends
    for n in range(3, 100_000):
        if p.poll() is not None:
            break
        try:
            send({"jsonrpc": "2.0", "id": n, "method": "ping"})
        except BrokenPipeError:
            break
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "ExceptionGroup" not in err, err
    assert sum("disconnected" in line for line in err.splitlines()) == 1, err
    res = json.loads((out / "nut_and_bolt_easy" / "episode_001" / "result.json").read_text())
    assert res["end"] == "agent_stop" and res["scored"]


def test_mcp_over_streamable_http_on_localhost(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(_server_cmd(out, "--http", "127.0.0.1:0"), stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    try:
        url = None
        for line in proc.stderr:
            m = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                url = m.group(1)
                break
        assert url, "the server did not say where it listens"

        async def main():
            async with Client(url) as client:
                return await _play_solver(client)
        got = anyio.run(main)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0, rest
    _check(got, out)


def test_mcp_command_errors_are_one_line():
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    r = CliRunner().invoke(cli, ["mcp", "--objective", "chess/easy"])
    assert r.exit_code == 2 and r.output.startswith("error:") and len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(cli, ["mcp", "--objective", "maze_paint/easy", "--http", "x:y"])
    assert r.exit_code == 2 and r.output.startswith("error:") and "--http" in r.output
    r = CliRunner().invoke(cli, ["mcp", "--objective", "maze_paint/easy", "--setting", "psychic"])
    assert r.exit_code == 2 and r.output.startswith("error:")


def test_the_vista_tools_have_the_papers_signatures_through_the_sdk_client(tmp_path):
    """VISTA (PAPERS.md section 6) through the SDK's own client: play takes exactly one action
    (named, with x and y) and returns n_frames and the available actions; inspect and
    read_pixels take lists of labelled views with regions {x, y, w, h}; history's turns are
    [start, end) with 64 records by default; save_compact_checkpoint(guide=None) keeps
    GUIDE.md; and the pause-until-checkpoint rule holds for an MCP client too."""
    out = tmp_path / "run"
    guide = tmp_path / "guide.md"
    guide.write_text("seeded guide", encoding="utf-8")
    cmd = _server_cmd(out, "--guide", str(guide), "--checkpoint-tokens", "6000")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))

    async def main():
        got = {}
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            got["schemas"] = {n: t.input_schema for n, t in tools.items()}

            async def call(name, args):
                r = await client.call_tool(name, args)
                return r.is_error, r.content[0].text, list(r.content[1:])
            got["first"] = await call("play", {"action": "wait", "ms": 0})
            got["batch"] = await call("play", {"action": "batch", "actions": [{"type": "wait"}]})
            for k in range(3):
                got[f"click{k}"] = await call("play", {"action": "click", "x": 270, "y": 615 + k})
            got["inspect"] = await call("inspect", {"question": "the board", "views": [
                {"label": "menu", "turn": 1}, {"label": "corner", "turn": -1, "frame": -1,
                                                "region": {"x": 0, "y": 0, "w": 54, "h": 96}}]})
            got["pixels"] = await call("read_pixels", {"question": "colours", "views": [
                {"label": "a", "turn": 1, "rows": 2, "cols": 2}, {"label": "b", "turn": 2, "rows": 1, "cols": 3}]})
            got["events"] = await call("history", {"view": "events", "start_turn": 2, "end_turn": 4})
            got["all"] = await call("history", {"view": "events"})
            got["keep"] = await call("save_compact_checkpoint", {"guide": None, "working_memory": "plan A"})
            shots = 0
            while shots < 30:                    # screenshots fill the estimated context: then a pause
                r = await call("screenshot", {})
                if r[0]:
                    break
                shots += 1
            got["shots"], got["paused"] = shots, r
            got["paused_play"] = await call("play", {"action": "wait", "ms": 0})
            got["guide_read"] = await call("read_guide", {})
            got["save"] = await call("save_compact_checkpoint", {"working_memory": "plan B"})
            got["resumed"] = await call("play", {"action": "wait", "ms": 0})
            got["end"] = await call("final_answer", {"text": "stop"})
        return got
    got = anyio.run(main)
    play = got["schemas"]["play"]
    assert play["required"] == ["action"] and "x" in play["properties"] and "y" in play["properties"]
    names = play["properties"]["action"]["anyOf"][0]["enum"]
    assert "click" in names and "batch" not in names and "actions" not in play["properties"]
    view = got["schemas"]["inspect"]["properties"]["views"]["items"]["properties"]
    assert {"label", "turn", "frame", "region"} <= set(view) and view["region"]["required"] == ["x", "y", "w", "h"]
    assert "views" in got["schemas"]["read_pixels"]["required"]
    assert set(got["schemas"]["history"]["properties"]) == {"view", "start_turn", "end_turn", "limit"}
    first = json.loads(got["first"][1])
    assert not got["first"][0] and first["turn"] == 1 and first["n_frames"] >= 1
    assert "click" in first["available_actions"]
    assert "batch" not in first["available_actions"]
    assert got["batch"][0] and "exactly one action" in got["batch"][1]
    assert all(not got[f"click{k}"][0] for k in range(3))
    err, text, images = got["inspect"]
    views = json.loads(text)["views"]
    assert not err and [v["label"] for v in views] == ["menu", "corner"] and len(images) == 2
    assert views[1]["zoom"] == 10 and views[1]["size"] == [540, 960]         # enlarged to the frame's size
    err, text, _ = got["pixels"]
    px = json.loads(text)
    assert not err
    assert [(s["label"], len(s["grid"]), len(s["grid"][0])) for s in px["samples"]] == [("a", 2, 2), ("b", 1, 3)]
    assert all(c.startswith("#") for c in px["palette"])
    assert [e["turn"] for e in json.loads(got["events"][1])["events"]] == [2, 3]
    assert [e["turn"] for e in json.loads(got["all"][1])["events"]] == [1, 2, 3, 4]
    assert not got["keep"][0] and json.loads(got["keep"][1])["guide"] == "unchanged"
    assert got["shots"] >= 1 and got["paused"][0] and "save_compact_checkpoint" in got["paused"][1]
    assert got["paused_play"][0] and "paused" in got["paused_play"][1]
    assert not got["guide_read"][0] and json.loads(got["guide_read"][1])["content"] == "seeded guide"
    assert not got["save"][0] and not got["resumed"][0]
    assert not got["end"][0]
    notes = out / "nut_and_bolt_easy" / "episode_001" / "notes"
    assert (notes / "GUIDE.md").read_text() == "seeded guide" and (notes / "WORKING.md").read_text() == "plan B"
    res = json.loads((out / "nut_and_bolt_easy" / "episode_001" / "result.json").read_text())
    assert res["tools"]["checkpoints"] == 2
    assert replay_episode(out / "nut_and_bolt_easy" / "episode_001").ok
