"""``longpuzzle diagnose branch``: RQ1 (branch.py, the same-state action intervention; rq1.py,
the analyses over recorded runs).

    diagnose branch run --from RUN_DIR... --agent A --out STUDY     states the agent was seen at
    diagnose branch run --level maze_paint/easy/1 --agent A --out STUDY     states from scratch
    diagnose branch run --check STUDY                               re-derive a study's tables
    diagnose branch analyze RUN_DIR... --out STUDY                  the RQ1 analyses
"""

from __future__ import annotations

import json

from pathlib import Path

import click

from longpuzzle.agents.agent_options import agent_options
from longpuzzle.agents.diagnose.stats import DRAWS, SEED


def _print_tables(tables: list[dict]) -> None:
    from longpuzzle.agents.diagnose.study import print_tables

    print_tables(tables, echo=click.echo)


def _empty_or_new(out: Path) -> None:
    """A study is written into a new or empty folder, or resumed in its own (StudyError)."""
    from longpuzzle.agents.diagnose.study import fresh_folder

    fresh_folder(out)


@click.group("branch")
def branch_cmd():
    """RQ1: the same-state action intervention (run) and the analyses of recorded runs (analyze)."""


@branch_cmd.command("run")
@click.option("--from", "from_dirs", multiple=True, type=click.Path(), metavar="RUN_DIR",
              help="Recorded runs (or episode folders): states where the agent played a costly move.")
@click.option("--level", default=None, help="From scratch: states along the solver's verified solution of this level "
                                            "(or, with --from, only states of this level).")
@agent_options(default_agent="paper_filler")
@click.option("--preset", type=click.Choice(("paper", "fast")), default="paper", show_default=True,
              help="From scratch: the screen the source episode is recorded on (paper: 1280 x 900, Chinese), "
              "which the continuations keep (from recorded runs: the runs' own).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="The study folder to write.")
@click.option("--states", type=click.IntRange(1, 1000), default=3, show_default=True, help="States to branch from.")
@click.option("--repeats", type=click.IntRange(1, 100), default=3, show_default=True, help="Repeats per state.")
@click.option("--max-actions", type=click.IntRange(1), default=600, show_default=True,
              help="Actions per continuation (the paper's ceiling).")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              help="Charged seconds per continuation.")
@click.option("--draws", type=click.IntRange(1), default=DRAWS, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Bootstrap seed.")
@click.option("--check", "check_dir", type=click.Path(), default=None,
              help="Re-derive a branch study: every folder replays, endpoints and tables are the recorded ones.")
@click.option("--json", "as_json", is_flag=True, help="Print study.json's tables as JSON.")
def run_cmd(agent_opts, from_dirs, level, preset, out_dir, states, repeats, max_actions, budget, draws, seed,
            check_dir, as_json):
    """Same-state action intervention: from each state, a costly branch move (e(s, a) > 0)
    and a shortest-path one, both successors verified solvable; then the agent continues."""
    from longpuzzle.agents.agent_options import build_agent
    from longpuzzle.agents.diagnose.branch import BranchError, find_states, generate_states, run_study
    from longpuzzle.agents.diagnose.study import require_step_agent
    from longpuzzle.agents.harness.presets import PRESETS, harness_settings
    from longpuzzle.agents.harness.settings import Settings
    from longpuzzle.engine.catalog import load_level

    if check_dir:
        from longpuzzle.agents.diagnose.branch import check_study

        ok, problems = check_study(check_dir)
        for p in problems:
            click.echo(f"  {p}")
        click.echo("ok: the study re-derives exactly" if ok else "NOT OK")
        raise SystemExit(0 if ok else 1)
    if not from_dirs and not level:
        raise click.UsageError("give --from RUN_DIR... (recorded runs) or --level LEVEL (from scratch)")
    if not out_dir:
        raise click.UsageError("give --out (the study folder)")
    out = Path(out_dir)
    _empty_or_new(out)
    screen = harness_settings(agent_opts.harness, Settings(**PRESETS[preset]["settings"], preset=preset))
    screen.action_timeout = None
    choice = build_agent(agent_opts, screen, default="paper_filler")   # a bad agent or level: one line, before any work
    require_step_agent(choice.agent)
    if level:
        load_level(level)
    if from_dirs:
        found = find_states(from_dirs, limit=states, level=level)
    else:
        found = generate_states(level, out / "sources" / level.replace("/", "_"), limit=states, settings=screen)
    if not found:
        raise BranchError("no state qualifies (no costly, non-fatal move with a shortest-path alternative was found)")
    doc = run_study(found, lambda objective, folder: choice.make(objective, folder), out, repeats=repeats,
                    budget=budget, max_actions=max_actions, agent=choice.public(), harness=agent_opts.harness,
                    draws=draws, seed=seed)
    if as_json:                                  # as takeover and retry print them
        click.echo(json.dumps(doc["tables"], ensure_ascii=False))
        return
    _print_tables(doc["tables"])
    click.echo(f"\nstudy written to {out}")


@branch_cmd.command("analyze")
@click.argument("folders", nargs=-1, required=True, type=click.Path())
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write the analyses as a study folder (study.json, figures/figure4b.png, rq1.json).")
@click.option("--draws", type=click.IntRange(1), default=DRAWS, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Bootstrap seed.")
def analyze_cmd(folders, out_dir, draws, seed):
    """The RQ1 analyses of recorded runs: the LC-deficit split, Bolt moves by free holes
    (Figure 4b), Maze Paint moves by coverage fifths, stated reasons."""
    from longpuzzle.agents.diagnose.rq1 import rq1_analysis, write_rq1_study
    from longpuzzle.agents.harness.settings import HarnessError

    for f in folders:
        if not Path(f).is_dir():
            raise HarnessError(f"{f} is not a folder")
    if out_dir:
        _empty_or_new(Path(out_dir))
        doc = write_rq1_study(folders, out_dir, draws=draws, seed=seed)
    else:
        doc = rq1_analysis(folders, draws=draws, seed=seed)
    if not doc["tables"]:
        click.echo("nothing to analyse: no level was reached in these runs")
    _print_tables(doc["tables"])
    if out_dir:
        click.echo(f"\nstudy written to {out_dir}")
