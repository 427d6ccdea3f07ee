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
from longpuzzle.agents.builtin import SolverAgent
from longpuzzle.agents.harness import instruction_for, replay_episode

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


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
        r = await client.call_tool("play", {"action": a})
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
    assert got["after"][0] and "ended (completed)" in got["after"][1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["OSR"] == 100.0 and summary["setting"] == "vista"
    ep = out / "nut_and_bolt_easy" / "episode_001"
    res = json.loads((ep / "result.json").read_text(), parse_constant=_not_json)   # strict JSON: no NaN
    assert res["end"] == "completed" and res["success"] and res["tools"]["errors"] == 4
    assert res["other_steps"] == 1 + 3 and res["native_steps"] == res["actions"] - 1 + 1   # + the refused click
    rep = replay_episode(ep)
    assert rep.ok and rep.complete


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
