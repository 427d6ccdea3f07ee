"""``longpuzzle mcp``: one objective episode served to an MCP client.

Imports inside the commands are lazy on purpose: the command table and ``--help`` load none of
what a command runs (start-up)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import click

from longpuzzle.engine.catalog_store import catalog_option

# the pause-until-checkpoint rule for a client whose context the harness does not see: the
# estimated tokens of the calls and results since the last checkpoint that trigger it (a
# context of about 200,000 tokens, less room for the client's own prompt and thinking)
CHECKPOINT_TOKENS = 150_000


def write_summary(out: Path, folder: Path, identity: dict, settings: dict, catalog=None) -> Path:
    """summary.json of a one-episode run folder, as eval writes it (runner.summarise: report,
    leaderboard and replay read it the same way), with the client's identity."""
    from longpuzzle.agents.runner import RunConfig, summarise

    res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    res["folder"] = str(folder.relative_to(out))
    run = RunConfig(agent=identity["agent"], objectives=[res["objective"]], protocol="objective", settings=settings)
    summary = {**summarise(run, [res], catalog), **{k: v for k, v in identity.items() if k != "agent"}}
    tmp = out / "summary.json.tmp"
    from longpuzzle.agents.metrics import json_ready

    tmp.write_text(json.dumps(json_ready(summary), indent=1), encoding="utf-8")
    os.replace(tmp, out / "summary.json")
    return out / "summary.json"


def _refuse_a_run(out: Path) -> None:
    """An --out that already holds a run (an mcp or eval run folder) is refused, as eval
    refuses it: serving into it would overwrite a finished episode. An empty or unrelated
    folder is fine."""
    held = [p.name for p in (out / "summary.json", out / "run.json") if p.exists()]
    if out.is_dir():
        held += sorted(f"{d.name}/{e.name}" for d in out.iterdir() if d.is_dir()
                       for e in d.glob("episode_*") if (e / "events.jsonl").exists())
    if held:
        raise click.UsageError(f"{out} already holds a run ({held[0]}); a finished episode is never "
                               "overwritten: serve into a new --out")


def _hostport(v: str) -> tuple[str, int]:
    host, _, port = v.rpartition(":")
    try:
        p = int(port)
    except ValueError:
        raise click.BadParameter(f"--http takes PORT or HOST:PORT, not {v!r}") from None
    if not 0 <= p < 65536:
        raise click.BadParameter(f"port {p} is not between 0 and 65535")
    return host or "127.0.0.1", p


@click.command("mcp")
@click.option("--objective", required=True, metavar="GAME/DIFFICULTY", help="The objective of the episode.")
@click.option("--setting", type=click.Choice(["native", "vista", "code"]), default="vista", show_default=True,
              help="native: play and screenshot only; vista: the VISTA tools; code: play and run_python.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Run folder (summary.json and <objective>/episode_001) [default: results/mcp-<time>].")
@click.option("--http", "http", default=None, metavar="[HOST:]PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp (HOST default 127.0.0.1) instead of stdio.")
@click.option("--budget", default=3600.0, show_default=True, help="Charged seconds for the objective.")
@click.option("--action-timeout", default=0.0, show_default=True,
              help="End the episode (agent error) after this many seconds without a play (0: no limit; the "
              "budget still runs).")
@click.option("--charge-agent-time/--pause-while-thinking", "charge_agent_time", default=True, show_default=True,
              help="Whether the client's time between plays counts toward the budget (the paper: it does).")
@click.option("--action-latency", type=float, default=0.0, show_default=True,
              help="Seconds charged per executed action for browser synchronisation.")
@click.option("--frames-per-move", default=0, show_default=True,
              help="Intermediate animation frames archived per move (inspect can look at them).")
@click.option("--viewport", default=None, metavar="WxH", help="Draw the suite letterboxed into a W x H page.")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="The language of the screens' texts (zh: the original's Chinese interface; same layout).")
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--scale", default=1.0, show_default=True)
@click.option("--certify-budget", default=20_000, show_default=True,
              help="States the evaluator may search per move for a dead-end certificate (0: none).")
@click.option("--guide", "guide_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Start GUIDE.md from this file (vista setting).")
@click.option("--batch/--no-batch", "batch", default=None,
              help="Whether play takes a batch of actions [default: native and code yes (the paper's Native GUI "
              "Actions), vista no (VISTA: exactly one action)].")
@click.option("--checkpoint-tokens", type=click.IntRange(min=0), default=CHECKPOINT_TOKENS, show_default=True,
              help="vista: pause the tools until save_compact_checkpoint once the client was sent about this many "
              "tokens (estimated) since the last checkpoint (0: never).")
@click.option("--agent", "agent_name", default="mcp", show_default=True,
              help="The agent's name in the results (e.g. claude-code).")
@click.option("--model", "model_name", default=None, help="The model behind the client, recorded in the results.")
@catalog_option
def mcp_cmd(objective, setting, out_dir, http, budget, action_timeout, charge_agent_time, action_latency,
            frames_per_move, viewport, lang, style, scale, certify_budget, guide_file, batch, checkpoint_tokens,
            agent_name, model_name, catalog):
    """Serve one objective episode to an MCP client (Claude Code, Codex CLI, any MCP client)
    over stdio, or streamable HTTP with --http. The episode runs under the same protocol,
    budget clock and private evaluator as eval and writes the same run folder."""
    import anyio

    from longpuzzle.agents.cli import new_results_folder
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.vista.controller import Controller
    from longpuzzle.agents.vista.mcp_server import serve_http, serve_stdio
    from longpuzzle.engine.geometry import parse_viewport

    obj = catalog.objective(objective)
    where = _hostport(http) if http else None
    if out_dir:
        out = Path(out_dir)
        _refuse_a_run(out)
        out.mkdir(parents=True, exist_ok=True)
    else:
        out = new_results_folder(prefix="mcp")
    st = Settings(style=style, scale=scale, frames_per_move=frames_per_move, budget=budget, action_timeout=None,
                  certify_budget=certify_budget, charge_agent_time=charge_agent_time, action_latency=action_latency,
                  viewport=None if viewport is None else parse_viewport(viewport), lang=lang)
    guide = Path(guide_file).read_text(encoding="utf-8") if guide_file else ""
    folder = out / obj.id.replace("/", "_") / "episode_001"
    identity = {"agent": agent_name, "model": model_name, "setting": setting, "harness": f"mcp:{setting}"}

    def say(msg: str) -> None:
        click.echo(f"longpuzzle mcp: {msg}", err=True)

    def finished(res) -> None:
        write_summary(out, folder, identity, st.resolved("objective").as_dict(), catalog)
        o = res.outcome
        say(f"episode ended ({res.end}): {o.solved_count}/{len(o.levels)} levels won; results in {folder}")

    c = Controller(obj.game, obj.difficulty, setting=setting, settings=st, folder=folder, agent_name=agent_name,
                   guide=guide, action_timeout=action_timeout or None, on_finish=finished, batch=batch,
                   checkpoint_tokens=checkpoint_tokens or None,
                   header={"model": model_name} if model_name else None, catalog=catalog)

    def stop_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop_signal)
    end, why = "agent_stop", "the MCP client disconnected before the episode ended (no final answer)"
    try:
        if where:
            anyio.run(serve_http, c, where[0], where[1],
                      lambda url: say(f"serving {obj.id} ({setting}) at {url}; episode folder {folder}"))
            end, why = "infrastructure_error", "stopped externally: the MCP server was stopped before the episode ended"
        else:
            say(f"serving {obj.id} ({setting}) over stdio; episode folder {folder}")
            anyio.run(serve_stdio, c)
    except BaseException as e:
        if _client_gone(e):                  # the stdio client left while a reply was on its way: one line
            say(f"the MCP client disconnected ({_leaf(e)})")
        elif not _interrupted(e):
            raise
        else:
            end, why = "infrastructure_error", "stopped externally: the MCP server was stopped before the episode ended"
    finally:
        c.close(end, why)
    sys.exit(0)


def _client_gone(e: BaseException) -> bool:
    """The client's end of the connection is gone (a closed pipe or stream), alone or in
    exception groups: the client disconnected, which is no failure of the server."""
    import anyio

    if isinstance(e, BaseExceptionGroup):
        return all(_client_gone(x) for x in e.exceptions)
    return isinstance(e, (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError,
                          anyio.ClosedResourceError))


def _leaf(e: BaseException) -> str:
    """The first exception inside ``e``'s groups, as 'Type: message'."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _interrupted(e: BaseException) -> bool:
    """A KeyboardInterrupt (SIGINT, or SIGTERM turned into one), alone or in exception groups."""
    if isinstance(e, KeyboardInterrupt):
        return True
    if isinstance(e, BaseExceptionGroup):
        return all(_interrupted(x) for x in e.exceptions)
    return False


COMMANDS = [mcp_cmd]
