"""Claude Code and Codex CLI attached to ``longpuzzle mcp`` end to end, with the README's own
commands and configuration, each CLI driven by a scripted model on 127.0.0.1 instead of a
real one.

The script answers each main-loop request of a CLI with a call of the longpuzzle tools as
that CLI names them (the opening wait, then the solver's gestures for nut_and_bolt/easy
through ``play``, then an end text); every other request (title generation and the like)
gets a short harmless text. The CLI really calls the server's tools: the episode folder the
server wrote shows the tool calls, the levels won, result.json, and passes replay.

Network isolation: each CLI, the scripted model and (for HTTP) the MCP server run in a new
user and network namespace (``unshare -rn``, loopback only), so nothing can reach any
address but 127.0.0.1 however the CLIs phone home; without ``unshare -rn`` the tests skip,
saying why. The CLIs' own opt-outs of telemetry and updates are set too. The API keys are
dummies made per run and passed in the environment only; a test checks no file under the
throwaway HOME or the run folder holds one.

Where the CLIs are: ``$LONGPUZZLE_AGENT_CLIS`` (a directory holding ``claude`` and
``codex``, as .ci/run installs them: the npm packages @anthropic-ai/claude-code and
@openai/codex) or the PATH; a test skips when its CLI is not installed.

This file is also the driver run inside the namespace: ``python3 test_attach_runtimes.py
SPEC.json``.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

OBJECTIVE = "nut_and_bolt/easy"
PROMPT = "Use the longpuzzle tools. Follow the server's instructions and play until the objective is complete."
END_TEXT = "BENCHMARK COMPLETED: the screen shows the completion card."
CLI_TIMEOUT = 60.0                      # seconds one CLI session may take inside the namespace
OPT_OUTS = {                            # the CLIs' own switches for traffic besides the model's
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1",
}
CODEX_OPT_OUTS = "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n"


# ---- the driver (inside the namespace) ---------------------------------------------------

def _loopback_up() -> None:
    """Bring ``lo`` up (SIOCGIFFLAGS / SIOCSIFFLAGS with IFF_UP): a fresh network namespace
    has it down."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, req))[1]
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 0x1, b""))
    finally:
        s.close()


def _isolated() -> str:
    """Why this namespace cannot reach beyond loopback ("" when it can: then nothing runs)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(("192.0.2.1", 443))         # TEST-NET-1: only a namespace with a route could try
    except OSError as e:
        if e.errno == errno.ENETUNREACH:
            return "ENETUNREACH"
        return ""
    finally:
        s.close()
    return ""


def _tools(api: str, body: dict) -> list[tuple[str | None, str]]:
    """The tools a request offers, as (namespace, name): Codex groups an MCP server's tools
    in a Responses ``namespace`` tool (``mcp__longpuzzle``: ``play``, ...); Claude Code names
    each one ``mcp__longpuzzle__play``."""
    out = []
    for t in body.get("tools") or []:
        if api == "chat":
            t = t.get("function") or t
        if t.get("type") == "namespace":
            out += [(t.get("name"), sub.get("name") or "") for sub in t.get("tools") or []]
        else:
            out.append((None, t.get("name") or ""))
    return out


def _play_results(api: str, body: dict, play: tuple[str | None, str]) -> int:
    """How many results of the play tool the request's history holds."""
    ns, name = play
    if api == "messages":
        ids, n = set(), 0
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_use" and b.get("name") == name:
                    ids.add(b.get("id"))
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
                    n += 1
        return n
    if api == "responses":
        items = body.get("input") or []
        ids = {it.get("call_id") for it in items if it.get("type") == "function_call"
               and it.get("name") in (name, f"{ns}{name}", f"{ns}__{name}") and it.get("namespace", ns) == ns}
        return sum(1 for it in items if it.get("type") == "function_call_output" and it.get("call_id") in ids)
    ids, n = set(), 0
    for m in body.get("messages") or []:
        ids.update(c["id"] for c in m.get("tool_calls") or [] if c["function"]["name"] == name)
        n += m.get("role") == "tool" and m.get("tool_call_id") in ids
    return n


class Script:
    """The scripted model: the main loop (a request offering the longpuzzle play tool) gets
    the next play call (by the play results in its history), then the end text; any other
    request a harmless text."""

    def __init__(self, gestures: list[dict]):
        self.calls = [{"type": "wait", "ms": 500}] + gestures
        self.log: list[dict] = []               # one line per request: what it was, what it got

    def __call__(self, api: str, body: dict) -> dict:
        tools = _tools(api, body)
        ours = [(ns, n) for ns, n in tools if "longpuzzle" in (ns or n)]
        play = next((t for t in ours if t[1].endswith("play")), None)
        if play is None and (None, "WaitForMcpServers") in tools:
            # Claude Code's first request may come before the server connected: wait for it
            self.log.append({"api": api, "main": True, "play": None, "wait_for_servers": True})
            return {"text": "", "tool_calls": [{"name": "WaitForMcpServers", "arguments": {"servers": ["longpuzzle"]}}]}
        if play is None:
            self.log.append({"api": api, "main": False, "tools": len(tools)})
            return {"text": "OK."}
        k = _play_results(api, body, play)
        self.log.append({"api": api, "main": True, "k": k, "play": play[1] if play[0] is None else list(play),
                         "tools": sorted(n if ns is None else f"{ns}:{n}" for ns, n in ours)})
        if k < len(self.calls):
            call = {"name": play[1], "arguments": {"action": self.calls[k]}}
            if play[0] is not None:
                call["namespace"] = play[0]
            return {"text": "", "tool_calls": [call]}
        return {"text": END_TEXT}


def _mcp_args(spec: dict) -> list[str]:
    return ["mcp", "--objective", spec["objective"], "--setting", spec["setting"], "--out", spec["out"],
            "--agent", spec["agent"]]


def _start_http_server(spec: dict, env: dict) -> tuple[subprocess.Popen, str]:
    """``longpuzzle mcp ... --http`` on a free port of this namespace's loopback."""
    p = subprocess.Popen(["longpuzzle", *_mcp_args(spec), "--http", "127.0.0.1:0"], env=env,
                         stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        m = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
        if m:
            return p, m.group(1)
    raise RuntimeError(f"the MCP server did not say where it listens (exit {p.wait()})")


def _claude(spec: dict, env: dict, url: str | None) -> list[list[str]]:
    """The README's commands for Claude Code."""
    add = (["claude", "mcp", "add", "longpuzzle", "--", "longpuzzle", *_mcp_args(spec)] if url is None
           else ["claude", "mcp", "add", "--transport", "http", "longpuzzle", url])
    return [add, ["claude", "-p", PROMPT, "--allowedTools", "mcp__longpuzzle"]]


def _codex(spec: dict, env: dict, url: str | None) -> list[list[str]]:
    """The README's configuration for Codex CLI (plus the scripted model as its provider and
    Codex's switches for update checks, analytics and the plugin sync), then ``codex exec``."""
    home = Path(env["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    server = (f'command = "longpuzzle"\nargs = {json.dumps(_mcp_args(spec))}\nenv_vars = ["LONGPUZZLE_CACHE_DIR"]\n'
              if url is None else f'url = "{url}"\n')
    (home / "config.toml").write_text(
        f'model = "scripted"\nmodel_provider = "scripted"\n\n'
        f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{spec["model_url"]}"\n'
        f'wire_api = "responses"\nenv_key = "LONGPUZZLE_SCRIPTED_KEY"\n\n'
        f'[mcp_servers.longpuzzle]\n{server}required = true\ndefault_tools_approval_mode = "approve"\ntool_timeout_sec = 120\n'
        f'\n{CODEX_OPT_OUTS}', encoding="utf-8")
    return [["codex", "exec", "--skip-git-repo-check", PROMPT]]


def drive(spec: dict) -> dict:
    """Run one CLI session against the scripted model (inside the namespace)."""
    from longpuzzle.agents.testing.endpoints import ScriptedServer

    _loopback_up()
    report: dict = {"isolated": _isolated()}
    if not report["isolated"]:
        return report
    script = Script(spec["gestures"])
    key = os.environ["LONGPUZZLE_ATTACH_KEY"]
    env = {k: v for k, v in os.environ.items() if not re.search(r"KEY|TOKEN|SECRET", k)}
    env.update(OPT_OUTS, HOME=spec["home"], PATH=spec["path"], CODEX_HOME=str(Path(spec["home"]) / ".codex"))
    with ScriptedServer(script) as srv:
        # the CLIs' own requests are not checked against the installed SDKs' request types
        # (wire_schema): these pinned CLIs are newer than the SDKs and send what the real APIs
        # take but the SDKs do not know yet (Claude Code a 'system' message among the
        # messages, Codex 'client_metadata'); what is under test here is the MCP attachment
        srv.check = False
        if spec["cli"] == "claude":
            env.update(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY=key)
        else:
            spec["model_url"] = srv.url_v1
            env["LONGPUZZLE_SCRIPTED_KEY"] = key
        server, url = _start_http_server(spec, env) if spec["transport"] == "http" else (None, None)
        try:
            cmds = (_claude if spec["cli"] == "claude" else _codex)(spec, env, url)
            report["runs"] = []
            deadline = time.monotonic() + CLI_TIMEOUT
            for cmd in cmds:
                try:
                    r = subprocess.run(cmd, env=env, cwd=spec["home"], capture_output=True, text=True,
                                       stdin=subprocess.DEVNULL, timeout=max(1.0, deadline - time.monotonic()))
                    report["runs"].append({"cmd": cmd[:4], "rc": r.returncode, "stdout": r.stdout[-4000:],
                                           "stderr": r.stderr[-4000:]})
                except subprocess.TimeoutExpired as e:
                    report["runs"].append({"cmd": cmd[:4], "rc": "timeout", "stdout": str(e.stdout)[-4000:],
                                           "stderr": str(e.stderr)[-4000:]})
                    break
        finally:
            if server is not None:
                server.send_signal(signal.SIGTERM)
                try:
                    report["server_stderr"] = server.communicate(timeout=30)[1][-4000:]
                except subprocess.TimeoutExpired:
                    server.kill()
                report["server_rc"] = server.returncode
        report["requests"] = srv.requests
        report["script"] = script.log
    return report


if __name__ == "__main__":
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    Path(spec["report"]).write_text(json.dumps(drive(spec), indent=1), encoding="utf-8")
    sys.exit(0)


# ---- the tests ---------------------------------------------------------------------------

import pytest  # noqa: E402

from longpuzzle.agents.harness import replay_episode  # noqa: E402

pytestmark = pytest.mark.slow

# name: (CLI, transport, the README's --setting for it, how the CLI names the play tool)
SESSIONS = {
    "claude-stdio": ("claude", "stdio", "vista", "mcp__longpuzzle__play"),
    "claude-http": ("claude", "http", "vista", "mcp__longpuzzle__play"),
    "codex-stdio": ("codex", "stdio", "code", ["mcp__longpuzzle", "play"]),
    "codex-http": ("codex", "http", "code", ["mcp__longpuzzle", "play"]),
}


def _cli(name: str) -> str | None:
    where = os.environ.get("LONGPUZZLE_AGENT_CLIS")
    return shutil.which(name, path=where) if where else shutil.which(name)


def _unshare_problem() -> str:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    try:
        r = subprocess.run(["unshare", "-rn", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return f"unshare -rn failed: {e}"
    return "" if r.returncode == 0 else f"unshare -rn failed: {r.stderr.strip() or r.returncode}"


def _bin_dir(tmp: Path, cli: str) -> str:
    """A PATH for the session: the CLI's directory, and ``longpuzzle`` as an installed entry
    point runs it: this interpreter and the checkout under test (its PYTHONPATH, which Codex
    would not pass on)."""
    b = tmp / "bin"
    b.mkdir(exist_ok=True)
    lp = b / "longpuzzle"
    keep = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    sets = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in keep.items())
    lp.write_text(f'#!/bin/sh\n{sets}exec {shlex.quote(sys.executable)} -m longpuzzle "$@"\n', encoding="utf-8")
    lp.chmod(0o755)
    node = shutil.which("node")
    dirs = [str(b), str(Path(cli).parent)] + ([str(Path(node).parent)] if node else []) + ["/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(dirs))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """Every session at once, each in its own namespace (they overlap: the CLIs mostly wait
    on each other's start-up); name -> the session, or why it was skipped."""
    from longpuzzle.agents.testing.endpoints import solver_gestures
    from longpuzzle.engine.cache import cache_dir

    why = _unshare_problem()
    runs, got = {}, {}
    gestures = None
    for name, (cli, transport, setting, _) in SESSIONS.items():
        exe = _cli(cli)
        if exe is None:
            got[name] = (f"{cli} is not installed (set LONGPUZZLE_AGENT_CLIS to the folder holding it; .ci/run "
                         "installs it with npm)")
            continue
        if why:
            got[name] = f"no network isolation, so the {cli} CLI is not run: {why}"
            continue
        gestures = gestures or solver_gestures(OBJECTIVE)
        tmp = tmp_path_factory.mktemp(name)
        home, out = tmp / "home", tmp / "run"
        home.mkdir()
        key = ("sk-ant-dummy-" if cli == "claude" else "sk-dummy-") + secrets.token_hex(12)
        # VISTA's play takes exactly one action: there, each action of a batch is a play of its own
        plays = gestures if setting != "vista" else [x for a in gestures
                                                     for x in (a["actions"] if a["type"] == "batch" else [a])]
        spec = {"cli": cli, "transport": transport, "setting": setting, "objective": OBJECTIVE, "out": str(out),
                "agent": "claude-code" if cli == "claude" else "codex", "home": str(home),
                "path": _bin_dir(tmp, exe), "gestures": plays, "report": str(tmp / "report.json")}
        (tmp / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        # the dummy key: in the environment only; the compiled kernels: the suite's cache, not
        # one in the throwaway HOME
        env = dict(os.environ, LONGPUZZLE_ATTACH_KEY=key, LONGPUZZLE_CACHE_DIR=str(cache_dir()))
        proc = subprocess.Popen(["unshare", "-rn", sys.executable, __file__, str(tmp / "spec.json")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        runs[name] = (proc, tmp, home, out, key)
    for name, (proc, tmp, home, out, key) in runs.items():
        try:
            _, stderr = proc.communicate(timeout=CLI_TIMEOUT + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
        report = (json.loads((tmp / "report.json").read_text(encoding="utf-8"))
                  if (tmp / "report.json").exists() else None)
        got[name] = {"rc": proc.returncode, "stderr": stderr, "report": report, "tmp": tmp, "home": home,
                     "out": out, "key": key, "plays": len(json.loads((tmp / "spec.json").read_text())["gestures"])}
    return got


def _session(sessions, name: str) -> dict:
    s = sessions[name]
    if isinstance(s, str):
        pytest.skip(s)
    assert s["rc"] == 0 and s["report"] is not None, s["stderr"][-3000:]
    return s


def _check(s: dict, name: str) -> None:
    cli, transport, setting, play = SESSIONS[name]
    rep = s["report"]
    assert rep["isolated"] == "ENETUNREACH", rep            # nothing but loopback in its namespace
    runs = rep["runs"]
    assert all(r["rc"] == 0 for r in runs), runs
    assert END_TEXT in runs[-1]["stdout"], runs[-1]
    assert rep["requests"] == len(rep["script"]) > 0                 # every model request was answered
    # the CLI offered the server's tools under its own names, and called play for each step
    main = [x for x in rep["script"] if x.get("main") and x.get("k") is not None]
    n_calls = 1 + s["plays"]                                  # the opening wait, the solver's gestures
    assert s["plays"] == (19 if setting != "vista" else 34)
    assert [x["k"] for x in main] == list(range(n_calls + 1)), [x["k"] for x in main]
    assert all(x["play"] == play for x in main)
    names = {"play", "screenshot", "final_answer"} | ({"inspect", "read_pixels", "history"} if setting == "vista"
                                                          else {"run_python"})
    prefix = "mcp__longpuzzle__" if cli == "claude" else "mcp__longpuzzle:"
    assert {prefix + n for n in names} <= set(main[0]["tools"]), main[0]["tools"]
    # the episode folder the server wrote
    out = s["out"]
    ep = out / "nut_and_bolt_easy" / "episode_001"
    res = json.loads((ep / "result.json").read_text(encoding="utf-8"))
    assert res["end"] == "completed" and res["success"] and res["solved"] == res["target_levels"] == 3, res["end"]
    assert res["agent"] == ("claude-code" if cli == "claude" else "codex") and res["tools"]["setting"] == setting
    assert res["tools"]["by_tool"] == {"play": n_calls} and res["tools"]["errors"] == 0
    calls = [json.loads(line) for line in (ep / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    calls = [e for e in calls if e.get("stream") == "tools"]
    kinds = [a.get("type") if isinstance(a := e["args"].get("action"), dict) else a for e in calls]
    waits = kinds.count("wait")
    assert waits == 3               # the opening wait, and the hub's 1.35 s before each next Nut and Bolt level
    assert res["actions"] == n_calls and res["native_steps"] == n_calls - waits and res["other_steps"] == waits
    assert [e["tool"] for e in calls] == ["play"] * n_calls
    assert calls[0]["args"] == {"action": {"type": "wait", "ms": 500}} and calls[1]["args"]["action"]["type"] == "click"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["OSR"] == 100.0 and summary["setting"] == setting
    assert replay_episode(ep).ok
    from click.testing import CliRunner

    from longpuzzle.cli import cli as lp
    r = CliRunner().invoke(lp, ["replay", str(ep)])
    assert r.exit_code == 0, r.output
    if transport == "http":
        assert rep["server_rc"] == 0 and "episode ended (completed): 3/3 levels won" in rep["server_stderr"], rep
    # the server found the kernels in the cache it was given (Codex: through env_vars)
    assert not (s["home"] / ".cache" / "longpuzzle").exists()
    # the dummy key reached no file the CLI or the server wrote, nor any log
    key = s["key"].encode()
    for f in list(s["home"].rglob("*")) + list(out.rglob("*")) + [s["tmp"] / "report.json"]:
        if f.is_file() and not f.is_symlink():
            assert key not in f.read_bytes(), f"the API key was written to {f}"


def test_claude_code_over_stdio(sessions):
    """README: `claude mcp add longpuzzle -- longpuzzle mcp ...`, then `claude -p PROMPT
    --allowedTools mcp__longpuzzle`."""
    _check(_session(sessions, "claude-stdio"), "claude-stdio")


def test_claude_code_over_streamable_http(sessions):
    """README: `claude mcp add --transport http longpuzzle URL` to a `longpuzzle mcp --http` server."""
    _check(_session(sessions, "claude-http"), "claude-http")


def test_codex_over_stdio(sessions):
    """README: `[mcp_servers.longpuzzle]` with command and args in config.toml, `codex exec`."""
    _check(_session(sessions, "codex-stdio"), "codex-stdio")


def test_codex_over_streamable_http(sessions):
    """README: `[mcp_servers.longpuzzle]` with `url` to a `longpuzzle mcp --http` server."""
    _check(_session(sessions, "codex-http"), "codex-http")
