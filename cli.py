"""The ``longpuzzle`` command line (also ``python -m longpuzzle``).

The core commands are here; each subpackage that offers commands has a ``cli.py`` with a
``COMMANDS`` list of click commands (see COMMAND_MODULES), so the engine never imports the
renderer and this file never grows per feature.

Every user mistake (unknown game or level, malformed move, rejected move, bad file) is
printed as one ``error: ...`` line with exit status 2; nothing is lost or half-written.
"""

from __future__ import annotations

import json
import sys

import click

from longpuzzle.engine import jit
from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.agents.jobs.options import backend_for, backend_options
from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.engine.errors import IllegalMoveError, LongPuzzleError
from longpuzzle.engine.session import Session

DEFAULT_LEVEL = "maze_paint/easy/1"


def _level_or_default(level_id: str | None) -> str:
    """LEVEL_ID, or the default level - said on stderr, never taken quietly."""
    if level_id is None:
        click.echo(f"(no LEVEL_ID given: {DEFAULT_LEVEL})", err=True)
        return DEFAULT_LEVEL
    return level_id
INTERRUPTED = 130          # exit status after Ctrl-C (128 + SIGINT), as shells and most tools give


class OneLineUsageError(click.UsageError):
    """A usage mistake shown as the one ``error: ...`` line every other mistake gets (click's
    own form is three lines: usage, a hint and the error); exit status 2 as click's."""

    def __init__(self, err: click.UsageError):
        where = err.ctx.command_path if err.ctx is not None else "longpuzzle"
        super().__init__(f"{err.format_message()} (see '{where} --help')", err.ctx)

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


class _Group(click.Group):
    """Turns library errors and usage mistakes into a one-line message and exit status 2;
    finds subpackage commands on first use (COMMAND_MODULES)."""

    def get_command(self, ctx, name):
        cmd = super().get_command(ctx, name)
        if cmd is None:
            owners = [m for m, names in COMMAND_MODULES.items() if name in names]
            for mod in owners or COMMAND_MODULES:
                _load_command_module(mod)
                cmd = super().get_command(ctx, name)
                if cmd is not None:
                    break
        return cmd

    def list_commands(self, ctx):
        _add_subpackage_commands()
        return super().list_commands(ctx)

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:          # an option of the group itself
            raise OneLineUsageError(e) from None
        except KeyboardInterrupt:              # Ctrl-C while the arguments are read (click says 1)
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as e:          # unknown command, bad option or argument of one
            raise OneLineUsageError(e) from None
        except LongPuzzleError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:              # Ctrl-C: the shell's convention, 128 + SIGINT (click says 1)
            click.echo("interrupted", err=True)
            ctx.exit(INTERRUPTED)
        except OSError as e:                   # a file or folder given that cannot be read or written
            if e.filename is None:
                raise
            what = f"{e.filename}" + (f" -> {e.filename2}" if e.filename2 else "")
            click.echo(f"error: {what}: {e.strerror or e}", err=True)
            ctx.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="longpuzzle")
def cli():
    """Headless engine for the LongPuzzleBench puzzles: levels, rules, replays, rollouts."""


def _split_moves(moves: str | None) -> list[str]:
    return moves.split() if moves else []


@cli.command("levels")
@click.option("--game", help="Only this game (e.g. maze_paint).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@catalog_option
def levels_cmd(game, as_json, catalog):
    """List the objectives (game x difficulty) and their levels."""
    cat = catalog
    objs = cat.objectives(game)
    if as_json:
        out = [{"objective": o.id, "game": o.game, "difficulty": o.difficulty,
                "levels": [{"id": lid, "name": cat.level(lid).name} for lid in o.level_ids]} for o in objs]
        click.echo(json.dumps({"catalog": cat.identity(), "objectives": out,
                               "level_count": sum(len(o.level_ids) for o in objs)}, indent=1))
        return
    for o in objs:
        ids = o.level_ids
        span = ids[0] if len(ids) == 1 else f"{ids[0]} .. {ids[-1]}"
        click.echo(f"{o.id:<28} {_n(len(ids), 'level'):>9}   {span}")
    where = "" if cat is builtin_catalog() else f" (catalogue {cat.label}, hash {cat.content_hash[:16]})"
    click.echo(f"{_n(len(objs), 'objective')}, {_n(sum(len(o.level_ids) for o in objs), 'level')}{where}")


@cli.command("show")
@click.argument("level_id", required=False)
@click.option("--moves", help="Moves to apply first, separated by spaces.")
@catalog_option
def show_cmd(level_id, moves, catalog):
    """Print a level's board as text (after MOVES, if given) [LEVEL_ID default: maze_paint/easy/1]."""
    level_id = _level_or_default(level_id)
    with jit.one_shot():                     # a few rule calls: no numba unless it pays
        _show(level_id, moves, catalog)


def _show(level_id, moves, catalog):
    s = Session(level_id, catalog)
    s.play_all(_split_moves(moves))
    p = s.puzzle
    click.echo(f"{s.level.id} ({p.title}{', ' + s.level.name if s.level.name else ''})")
    click.echo(s.show())
    click.echo(f"moves: {p.move_syntax}")
    click.echo(f"legal now: {' '.join(p.format_moves(s.level, s.legal_moves())) or '(none)'}")
    click.echo(f"solved: {s.solved}   progress P = {s.progress:.4f}")


@cli.command("check")
@click.argument("level_id")
@click.option("--moves", required=True, help='Moves separated by spaces, e.g. "1>3 2>4".')
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@catalog_option
def check_cmd(level_id, moves, as_json, catalog):
    """Apply moves to a level and report how far they got.

    Moves are numbered from 1, in the text and in the JSON alike: ``rejected_at`` is the
    number of the first move the rules refused (null if none was) and ``unchanged`` lists
    the moves that were accepted but changed nothing (a Maze Paint swipe into a wall).
    Stops at the first rejected move (reported, not an error); text that is not a move at
    all is an error."""
    with jit.one_shot():
        _check(level_id, moves, as_json, catalog)


def _check(level_id, moves, as_json, catalog):
    s = Session(level_id, catalog)
    tokens = _split_moves(moves)
    rejected_at, reason, unchanged = None, None, []
    for i, tok in enumerate(tokens, 1):
        try:
            outs = s.try_move(tok)
        except IllegalMoveError as e:          # undo where there is nothing to undo, or no undo
            rejected_at, reason = i, str(e)
            break
        if outs and not outs[-1].accepted:
            rejected_at, reason = i, outs[-1].message or outs[-1].reason
            break
        if outs and not any(o.changed for o in outs):
            unchanged.append(i)
    applied = len(tokens) if rejected_at is None else rejected_at - 1
    result = {"level": s.level.id, "moves": len(tokens), "applied": applied, "rejected_at": rejected_at,
              "unchanged": unchanged, "solved": s.solved, "progress": s.progress}
    if as_json:
        if reason:
            result["reason"] = reason
        click.echo(json.dumps(result))
        return
    click.echo(s.show())
    line = f"applied {applied} of {_n(len(tokens), 'move')}"
    if unchanged:
        line += (f", {len(unchanged)} of them changed nothing ("
                 + ", ".join(f"move {i}: {tokens[i - 1]}" for i in unchanged) + ")")
    click.echo(f"{line}; solved: {s.solved}; progress P = {s.progress:.4f}")
    if reason:
        click.echo(f"rejected move {rejected_at} ({tokens[rejected_at - 1]}): {reason}")


def _n(k: int, noun: str) -> str:
    """``1 level``, ``2 levels``."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


@cli.command("replay")
@click.argument("episode")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--prefix", "prefix_ok", is_flag=True,
              help="Accept an interrupted episode folder (killed: no end record) as a valid prefix (exit 0).")
@catalog_option
def replay_cmd(episode, as_json, prefix_ok, catalog):
    """Replay an episode: an episode text '<level id>: <move> <move> ...', a checkpoint file,
    an eval episode folder (re-runs its recorded actions, checks every frame hash, feedback,
    private record and snapshot, recomputes result.json and compares it; reports the first
    divergence and says what was and was not checked), or an eval output folder (replays
    every episode in it and sums up). Exit status 1 if any episode diverged or is
    incomplete (killed; accepted with --prefix); 2 for a folder that is not a well-formed
    episode (records missing or out of order, a deleted private record, bad settings).
    Episode folders replay on the catalogue they recorded: --catalog's when it is that one,
    else the stored snapshot of the recorded name and version."""
    from pathlib import Path
    from longpuzzle.engine.session import replay

    if not episode.strip():              # (Path("") is the current folder: never replay that unasked)
        raise click.BadParameter("give an episode text, a checkpoint file or a folder, not an empty string",
                                 param_hint="EPISODE")
    path = Path(episode)
    if path.is_dir():
        _replay_folder(path, as_json, prefix_ok, catalog)
        return
    if ":" not in episode and not path.exists():   # every episode text has '<level id>: ...'
        raise click.BadParameter(f"{episode}: no such file or folder (nor an episode text "
                                 "'<level id>: <move> ...')", param_hint="EPISODE")
    with jit.one_shot():
        if path.is_file():
            from longpuzzle.engine.errors import CheckpointError
            from longpuzzle.engine.textio import read_text
            s = Session.from_checkpoint(read_text(path, CheckpointError, f"checkpoint file {path}"), catalog=catalog)
        else:
            s = replay(episode, catalog=catalog)
        _replay_text_out(s, as_json)


def _replay_text_out(s, as_json: bool) -> None:
    c = s.counters
    out = {"level": s.level.id, "moves": len(s.moves), "solved": s.solved, "progress": s.progress,
           "counters": c.as_dict()}
    if as_json:
        click.echo(json.dumps(out))
        return
    click.echo(s.show())
    done = [_n(k, w) for k, w in ((c.undos, "undo"), (c.restarts, "restart"), (c.rejected, "rejected move")) if k]
    click.echo(f"{s.level.id}: {_n(len(s.moves), 'move')} on the board ({c.moves} played"
               + "".join(f", {d}" for d in done) + f"); solved: {'yes' if s.solved else 'no'}; "
               f"progress P = {s.progress:.4f}")


def _replay_folder(path, as_json: bool, prefix_ok: bool = False, catalog=None) -> None:
    """One episode folder, or every episode folder below an eval output folder. An episode is
    VERIFIED when it replays exactly and its recomputed result.json matches; an interrupted
    one (killed: no end record) is at most a valid prefix, which passes only with --prefix;
    a folder that is not a well-formed episode is refused with one line."""
    from longpuzzle.agents.harness import HarnessError, replay_episode
    from longpuzzle.agents.report.data import episode_folders
    from longpuzzle.agents.verify import check_episode, check_tools, is_run_folder

    if (path / "events.jsonl").is_file():
        rep = replay_episode(path, catalog)
        tools = check_tools(path) if rep.ok else None
        if tools is not None and not tools["ok"]:
            rep.ok, rep.divergence = False, tools["problems"][0]
        if as_json:
            click.echo(json.dumps({**rep.as_dict(), **({"tools": tools} if tools else {})}))
        else:
            tline = f"; {_n(tools['checked'], 'tool result')} reproduced" if tools and rep.ok else ""
            click.echo(f"{path}: {rep.steps} actions replayed; {_verdict(rep)}{tline}")
            if rep.ok:
                click.echo(f"  checked: {'; '.join(rep.checked)}")
                click.echo(f"  not checked: {'; '.join(rep.not_checked)}")
        if not rep.ok or (not rep.complete and not prefix_ok):
            sys.exit(1)
        return
    if is_run_folder(path):
        _replay_run(path, as_json)
        return
    folders = episode_folders(path)
    if not folders:
        raise HarnessError(f"{path} is neither an episode folder nor an eval output folder (no events.jsonl in it or below it)")
    reports = []
    for f in folders:
        rel = str(f.relative_to(path))
        d = check_episode(f, catalog)
        line = _verdict_of(d)
        reports.append({"episode": rel, **d})
        if not as_json:
            click.echo(f"{rel}: {d['steps']} actions replayed; {line}")
    bad = sum(not r["ok"] for r in reports)
    part = sum(r["ok"] and not r.get("complete", True) for r in reports)
    good = len(reports) - bad - part
    if as_json:
        click.echo(json.dumps({"folder": str(path), "episodes": reports, "matched": good, "diverged": bad,
                               "incomplete": part}))
    else:
        click.echo(f"{_n(len(reports), 'episode')} replayed: {good} matched, {bad} diverged"
                   + (f", {part} incomplete (valid prefixes)" if part else ""))
    if bad or (part and not prefix_ok):
        sys.exit(1)


def _replay_run(path, as_json: bool) -> None:
    """A run folder: every episode replayed (and each folder --resume set aside), run.json
    checked, summary.json recomputed; a verified run gets its verification record
    (verified.json, which report and leaderboard accept). Exit status 1 unless verified."""
    from longpuzzle.agents.verify import RECORD_FILE, check_run

    chk = check_run(path, use_record=False, write_record=True)
    main = [d for d in chk.episodes if not d.get("superseded")]
    bad = sum(not d["ok"] for d in main)
    part = sum(d["ok"] and not d.get("complete", True) for d in main)
    if as_json:
        click.echo(json.dumps({**chk.as_dict(), "matched": len(main) - bad - part, "diverged": bad,
                               "incomplete": part}))
    else:
        for d in chk.episodes:
            aside = f" (set aside by --resume: {d['superseded']})" if d.get("superseded") else ""
            click.echo(f"{d['episode']}{aside}: {d['steps']} actions replayed; {_verdict_of(d, bool(aside))}")
        click.echo(f"{_n(len(main), 'episode')} replayed: {len(main) - bad - part} matched, {bad} diverged"
                   + (f", {part} incomplete" if part else "")
                   + (f" (and {_n(len(chk.episodes) - len(main), 'folder')} set aside by --resume)"
                      if len(chk.episodes) > len(main) else ""))
        if chk.ok:
            click.echo(f"run VERIFIED: {'; '.join(chk.checked)}; wrote {path / RECORD_FILE}")
        else:
            click.echo(f"run NOT VERIFIED: {chk.first}")
    if not chk.ok:
        sys.exit(1)


def _verdict_of(d: dict, superseded: bool = False) -> str:
    """An episode's verdict from its replay (ReplayReport.as_dict, or a refusal)."""
    if str(d.get("divergence", "")).startswith("refused: "):
        return "REFUSED: " + d["divergence"][len("refused: "):]
    if not d["ok"]:
        return f"DIVERGED: {d['divergence']}"
    what = "every frame (and every stored frame)" if d.get("stored_frames") else "every frame"
    if not d.get("complete", True):
        return (f"a valid prefix, {what} matches ({d.get('note', '')})" if superseded else
                f"INCOMPLETE, not verified: a valid prefix, {what} matches ({d.get('note', '')})")
    tools = f"; {_n(d['tools']['checked'], 'tool result')} reproduced" if d.get("tools") else ""
    return f"{what} and result matches (result.json recomputed){tools}"


def _verdict(rep) -> str:
    what = "every frame (and every stored frame)" if rep.stored_frames else "every frame"
    if not rep.ok:
        return f"DIVERGED: {rep.divergence}"
    if not rep.complete:
        return f"INCOMPLETE, not verified: a valid prefix, {what} matches ({rep.note})"
    return f"{what} and result matches (result.json recomputed)"


@cli.command("rollout")
@click.argument("level_id", required=False)
@click.option("--walks", default=10000, show_default=True, help="Number of random walks.")
@click.option("--steps", default=200, show_default=True, help="Maximum moves per walk.")
@click.option("--seed", default=0, show_default=True)
@click.option("--env", "env_mode", type=click.Choice(["rules", "pixels"]), default=None,
              help="Play --episodes episodes of the level's Gymnasium env in this mode (random legal actions) "
              "instead of compiled walks.")
@click.option("--episodes", default=100, show_default=True, help="Env episodes (with --env).")
@backend_options("Run the walks or episodes in this process, in worker processes of this machine (one per core), "
                 "or as Ray tasks.",
                 "Jobs run at once: worker processes with --backend processes [default: the CPUs this process may "
                 "use], Ray tasks with --backend ray.")
@click.option("--chunks", type=int, default=None,
              help="Jobs the work is split into [default: 1 locally, the workers with --backend processes, the "
              "cluster's CPUs with Ray].")
@click.option("--json", "as_json", is_flag=True)
def rollout_cmd(level_id, walks, steps, seed, env_mode, episodes, backend_name, workers, address, ship_code, chunks,
                as_json):
    """Run random legal-move walks on a level in compiled code and report how many solve it
    and the throughput (the headless rollout job); with --env, episodes of the level's
    Gymnasium environment. --backend processes spreads the work over this machine's cores,
    --backend ray over a Ray cluster (job 0 keeps --seed, so one chunk is exactly the local
    run)."""
    from longpuzzle.agents.jobs.rollouts import env_episodes, random_walks

    level_id = _level_or_default(level_id)
    if walks < 1 or steps < 1 or episodes < 1:
        raise click.BadParameter("--walks, --steps and --episodes must be at least 1")
    if chunks is not None and chunks < 1:
        raise click.BadParameter("--chunks must be at least 1")
    backend = backend_for(backend_name, workers, address=address, ship_code=ship_code)
    level = load_level(level_id)
    if env_mode:
        from longpuzzle.agents.envs.registration import env_id
        res = env_episodes({"id": env_id(level.game), "level": level.id, "mode": env_mode}, episodes, seed,
                           backend=backend, chunks=chunks)
        res.pop("records")
        if as_json:
            click.echo(json.dumps(res))
            return
        click.echo(f"{level.id}: {_n(episodes, 'episode')} of {res['config']['id']} ({env_mode}, random legal "
                   f"actions, seed {seed}) in {_n(res['jobs'], 'job')}")
        click.echo(f"  solved {res['solved']} ({100 * res['solved_rate']:.1f}%), mean return {res['mean_return']:.3f}, "
                   f"{res['steps']} steps in {res['wall_seconds']:.2f} s ({res['steps_per_second']:,} steps/s)")
        return
    res = random_walks(level.id, walks, steps, seed, backend=backend, chunks=chunks)
    if as_json:
        click.echo(json.dumps(res))
    else:
        jobs = "" if res["jobs"] == 1 else f" in {res['jobs']} jobs"
        click.echo(f"{level.id}: {walks} random walks of at most {steps} moves (seed {seed}){jobs}")
        click.echo(f"  solved {res['solved']} ({100 * res['solved_rate']:.1f}%), mean final P {res['mean_final_progress']:.3f}")
        click.echo(f"  {res['moves']} moves in {res['seconds']:.3f} s ({res['moves_per_second']:,} moves/s; "
                   f"{res['warmup_seconds']:.2f} s to compile or load the kernels first)")
        if res["jobs"] > 1:
            click.echo(f"  {res['wall_seconds']:.2f} s in all ({res['moves_per_wall_second']:,} moves/s with "
                       "start-up and scheduling)")


# subpackages contributing commands, each a module with a COMMANDS list, and the names of its
# commands (a test checks them against COMMANDS). A module is imported only when one of its
# commands is asked for (all of them for --help or an unknown name), so ``longpuzzle show``
# imports no solver, renderer or env, and ``longpuzzle dataset`` not the report pages, the
# MCP server or the fuzzers.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "longpuzzle.solvers.cli": ("solve", "verify", "hint"),
    "longpuzzle.render.cli": ("screenshot", "play"),
    "longpuzzle.agents.cli": ("eval", "frames"),
    "longpuzzle.agents.envs.cli": ("envs",),
    "longpuzzle.agents.report.cli": ("report", "analyze", "leaderboard", "video"),
    "longpuzzle.agents.vista.cli": ("mcp",),
    "longpuzzle.agents.testing.fuzz.cli": ("soak",),
    "longpuzzle.solvers.generators.cli": ("generate", "catalog"),
    "longpuzzle.agents.datasets.cli": ("dataset", "dataset-check"),
    "longpuzzle.agents.diagnose.cli": ("diagnose",),
    "longpuzzle.agents.serve.cli": ("serve",),
    "longpuzzle.agents.serve.baseline_cli": ("baseline",),
}
_loaded: list[str] = []


def _load_command_module(name: str) -> None:
    import importlib

    if name in _loaded:
        return
    _loaded.append(name)
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:   # that subpackage offers no commands (yet)
            return
        raise
    for cmd in getattr(mod, "COMMANDS", ()):
        cli.add_command(cmd)


def _add_subpackage_commands() -> None:
    for name in COMMAND_MODULES:
        _load_command_module(name)


def _skip_final_collection() -> None:
    """Run at exit (the last atexit handler: after every other one, e.g. temporary folders
    removed, progress bars closed): collect what is garbage now (so anything unreachable is
    finalised as before, e.g. a file left open is flushed), then move every object still alive
    to the garbage collector's permanent generation, so that the interpreter's collections
    while it shuts down do not walk them again. Once numba has loaded kernels those walks cost
    about 0.2 s of CPU time at the end of every command (its type and compiler objects are a
    large graph of cycles), for nothing: the process is ending. Objects are still freed by
    reference counting as modules are torn down; the cycles among them are left to the
    operating system (Python never promised to finalise those at exit)."""
    import gc

    gc.collect()
    gc.freeze()


def main(argv: list[str] | None = None) -> None:
    import atexit

    atexit.unregister(_skip_final_collection)       # (once, also when main runs again in a process)
    atexit.register(_skip_final_collection)
    try:
        cli.main(args=argv, prog_name="longpuzzle")
    except KeyboardInterrupt:                  # before a command runs (imports, parsing)
        click.echo("interrupted", err=True)
        sys.exit(INTERRUPTED)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
