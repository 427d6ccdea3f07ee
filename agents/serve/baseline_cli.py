"""The ``longpuzzle baseline`` command: the human baselines table (baselines.py) exported as
CSV or JSON, with the agents' efficiency scores against it for the runs given."""

from __future__ import annotations

import json

import click


@click.command("baseline")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--runs", "runs", multiple=True, type=click.Path(file_okay=False),
              help="An agent run folder to score against the human baselines (RHAE; repeatable).")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Write the table to this file (written whole, or not at all) [default: stdout].")
def baseline_cmd(folders, runs, fmt, out_file):
    """The human baselines of the human episodes under FOLDERS (recorded in the browser by
    `longpuzzle serve`; each replayed and only verified ones counted): per level and per
    objective presses, time, restarts and dead ends, the paper's Table 4 beside them, and
    with --runs each agent's RHAE-style efficiency score (formula: docs/guides/serve.md)."""
    from longpuzzle.agents.report.data import load_verified_run
    from longpuzzle.agents.serve.baselines import agent_scores, baseline_table, human_episodes, to_csv

    eps, skipped = human_episodes(folders)
    table = baseline_table(eps)
    scores = agent_scores([load_verified_run(r) for r in runs], table) if runs else []
    for folder, why in skipped:
        click.echo(f"left out {folder}: {why}", err=True)
    if fmt == "json":
        text = json.dumps({"kind": "longpuzzle-human-baselines", "version": 1, "human_episodes": len(eps),
                           "left_out": [{"folder": f, "why": w} for f, w in skipped], **table,
                           "agents": scores}, indent=1) + "\n"
    else:
        text = to_csv(table, scores)
    if out_file is None:
        click.echo(text, nl=False)
        return
    import os
    from pathlib import Path
    tmp = Path(out_file).with_name(Path(out_file).name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out_file)
    click.echo(f"wrote {out_file}: {len(table['levels'])} levels, {len(table['objectives'])} objectives from "
               f"{len(eps)} human episodes" + (f", {len(scores)} agent rows" if scores else ""), err=True)


COMMANDS = [baseline_cmd]
