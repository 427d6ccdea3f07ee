"""``longpuzzle dataset`` (write a dataset of GUI trajectories) and ``dataset-check``.

Imports inside the commands are lazy on purpose: the command table and ``--help`` load none of
what a command runs (start-up)."""

from __future__ import annotations

import json
import sys

import click

from longpuzzle.agents.jobs.options import backend_for, backend_options
from longpuzzle.agents.registry import SCRIPTED_AGENTS
from longpuzzle.engine.catalog_store import catalog_option


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _list(values, conv, what):
    out = []
    for v in values:
        for part in str(v).split(","):
            part = part.strip()
            if part:
                try:
                    out.append(conv(part))
                except ValueError:
                    raise click.BadParameter(f"{what}: {part!r} is not valid") from None
    return out


@click.command("dataset")
@click.option("--objective", "objectives", multiple=True, metavar="G/D",
              help="Objective to play (repeatable), e.g. maze_paint/hard.")
@click.option("--all", "all_", is_flag=True, help="Every objective of the catalogue.")
@click.option("--episodes", default=1, show_default=True, help="Episodes per objective.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="Output folder (new).")
@click.option("--agent", "agent_spec", default="solver", show_default=True,
              help=f"{', '.join(SCRIPTED_AGENTS)} or an agent FILE.py.")
@click.option("--style", "styles", multiple=True, default=("2d",), show_default=True,
              help="Frame style; several (2d,3d) are drawn from per episode.")
@click.option("--scale", "scales", multiple=True, default=("1.0",), show_default=True,
              help="Frame scale; several (0.75,1,1.25) are drawn from per episode.")
@click.option("--detours", type=float, default=0.0, show_default=True,
              help="Probability per board step of a random legal move off the plan.")
@click.option("--restarts", type=float, default=0.0, show_default=True,
              help="Probability per board step of pressing the level's Restart.")
@click.option("--gestures", type=click.Choice(["runs", "moves"]), default="runs", show_default=True,
              help="runs: the agent's own gestures (a run of moves in one press where possible); moves: one "
              "gesture per move, which every model convention can express.")
@click.option("--format", "fmt", type=click.Choice(["parquet", "webdataset"]), default="parquet", show_default=True)
@click.option("--shard-size", default=2000, show_default=True, help="Rows (steps) per shard at most.")
@click.option("--png-level", type=int, default=None,
              help="The frames' PNG deflate level: 1 fastest ... 9 smallest (the same pixels either way) "
              "[default: 1].")
@click.option("--oracle", is_flag=True,
              help="Rows carry the exact oracle's columns too: d(s) of the board the frame shows, dead end, the "
              "best moves and the action's extra cost (costs each level's state graph, and the best moves of "
              "every row).")
@click.option("--jobs", type=int, default=None,
              help="Jobs the episodes are split into [default: 1; the workers with --backend processes; the Ray "
              "cluster's CPUs with --backend ray].")
@click.option("--seed", default=0, show_default=True)
@click.option("--budget", type=float, default=None,
              help="Charged seconds per episode, as eval's [default: none: an episode cut by the clock would "
              "depend on the machine's speed, and a dataset is reproducible].")
@click.option("--max-actions", type=int, default=None, help="Actions per episode at most.")
@click.option("--viewport", default=None, metavar="WxH", help="Frames of the suite letterboxed into a W x H page.")
@backend_options("Run the jobs one after another in this process, at once in worker processes of this machine "
                 "(one per core), or as Ray tasks.",
                 "Jobs run at once: worker processes with --backend processes [default: the CPUs this process may "
                 "use], Ray tasks with --backend ray [default: as many as the cluster schedules].")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False), default=None,
              help="Finish the dataset in this folder: complete jobs are kept, the others run again.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest's counts as JSON.")
@catalog_option
def dataset_cmd(objectives, all_, episodes, out_dir, agent_spec, styles, scales, detours, restarts, gestures, fmt,
                shard_size, png_level, oracle, jobs, seed, budget, max_actions, viewport, backend_name, workers, address, ship_code,
                resume_dir, as_json, catalog):
    """Play objectives through the GUI and write every step as training data: the frame (a
    lossless PNG), the action in frame pixels and in the model conventions (general_e2e,
    Qwen-VL, UI-TARS), the moves it made, P and the solved state, in Parquet or WebDataset
    shards with a manifest (manifest.json). E.g.

        longpuzzle dataset --objective maze_paint/hard --episodes 20 --detours 0.05 --out data/mp"""
    from pathlib import Path

    from longpuzzle.agents.datasets.build import DatasetConfig, build
    from longpuzzle.agents.datasets.check import describe_deflates
    from longpuzzle.agents.media.deflate import DEFAULT_LEVEL
    from longpuzzle.engine.geometry import parse_viewport

    backend = backend_for(backend_name, workers, address=address, ship_code=ship_code)
    if resume_dir:
        if png_level is not None:
            raise click.UsageError("--png-level is the plan's when resuming (it is not given again)")
        if oracle:
            raise click.UsageError("--oracle is the plan's when resuming (it is not given again)")
        out = Path(resume_dir)
        cfg = None
    else:
        if not out_dir:
            raise click.UsageError("--out DIR is required (a new folder), or --resume DIR")
        if all_ and objectives:
            raise click.UsageError("--all takes every objective; give --all or --objective, not both")
        objs = [o.id for o in catalog.objectives()] if all_ else list(objectives)
        if not objs:
            raise click.UsageError("name an objective (--objective G/D) or --all")
        settings = {"budget": budget, "max_actions": max_actions}
        if viewport:
            settings["viewport"] = list(parse_viewport(viewport))
        if jobs is None:
            jobs = backend.default_jobs() if backend is not None else 1
        cfg = DatasetConfig(objectives=objs, episodes=episodes, agent=agent_spec,
                            styles=_list(styles, str, "--style"), scales=_list(scales, float, "--scale"),
                            detours=detours, restarts=restarts, gestures=gestures, seed=seed, format=fmt,
                            shard_size=shard_size, png_level=DEFAULT_LEVEL if png_level is None else png_level, jobs=jobs,
                            settings=settings,
                            catalog=catalog, oracle=oracle)
        from longpuzzle.agents.datasets.agents import make_agent
        make_agent(agent_spec, detours=detours, restarts=restarts, gestures=gestures)   # bad agent: now
        out = Path(out_dir)

    def on_job(part):
        if not as_json:
            click.echo(f"job {part['job']}: {_n(len(part['episodes']), 'episode')}, {_n(part['rows'], 'row')}, "
                       f"{_n(len(part['shards']), 'shard')} ({part['seconds']:.1f} s)", err=True)
    m = build(out, cfg, backend=backend, resume=bool(resume_dir), on_job=on_job, catalog=catalog)
    c = m["counts"]
    if as_json:
        click.echo(json.dumps({"out": str(out), **c, "timing": m["timing"]}))
        return
    click.echo(f"{_n(c['rows'], 'step')} from {_n(c['episodes'], 'episode')} in {c['shards']} {m['shard_format']} "
               f"shard{'s' if c['shards'] != 1 else ''} ({c['bytes'] / 1e6:.1f} MB), {_n(c['detours'], 'detour')}, "
               f"{_n(c['restarts'], 'restart')}")
    for o, d in c["objectives"].items():
        click.echo(f"  {o:<24} {_n(d['episodes'], 'episode'):>12} {_n(d['rows'], 'step'):>12}  levels solved "
                   f"{d['solved_levels']}/{d['target_levels']}")
    click.echo(f"PNG deflate: {describe_deflates(m['png_deflate'])}")
    click.echo(f"manifest: {out / 'manifest.json'}")


@click.command("dataset-check")
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
@click.option("--no-replay", is_flag=True, help="Check shards and frames only, without replaying the episodes.")
@click.option("--json", "as_json", is_flag=True)
def dataset_check_cmd(folder, no_replay, as_json):
    """Check a dataset: every shard against the manifest's SHA-256, every frame against its
    recorded hash, and every episode replayed action by action (frames before and after,
    moves, P, solved). Exit status 1 if anything differs."""
    from longpuzzle.agents.datasets.check import check_dataset, describe_deflates

    rep = check_dataset(folder, replay=not no_replay)
    if as_json:
        click.echo(json.dumps(rep))
    else:
        click.echo(f"{folder}: {_n(rep['shards'], 'shard')}, {_n(rep['rows'], 'row')}, "
                   f"{_n(rep['episodes'], 'episode')}; {_n(rep['frames_checked'], 'frame')} checked, "
                   f"{_n(rep['actions_replayed'], 'action')} replayed: "
                   + ("everything matches" if rep["ok"] else _n(len(rep["problems"]), "problem")))
        click.echo(f"  PNG deflate: {describe_deflates(rep['png_deflate'])}")
        for p in rep["problems"]:
            click.echo(f"  {p}")
    if not rep["ok"]:
        sys.exit(1)


COMMANDS = [dataset_cmd, dataset_check_cmd]
