"""``longpuzzle diagnose retry`` (RQ3): the command over retry_study.py."""

from __future__ import annotations

import json
from pathlib import Path

import click

from longpuzzle.agents.agent_options import agent_options, build_agent
from longpuzzle.agents.diagnose import retry as rq
from longpuzzle.agents.diagnose import retry_study as rs
from longpuzzle.agents.diagnose import study as sr
from longpuzzle.agents.diagnose.stats import DRAWS, SEED
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.registry import SCRIPTED_AGENTS
from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.engine.errors import LongPuzzleError


@click.command("retry")
@click.option("--from", "runs", multiple=True, type=click.Path(), metavar="RUN_DIR",
              help="A recorded run (or episode) folder whose failures followed by a verified native restart are "
                   "the sources (repeatable).")
@click.option("--level", "levels", multiple=True, metavar="LEVEL",
              help="Make sources from scratch on this level (repeatable): a scripted policy plays it into certified "
                   "dead ends and restarts after each, recorded under STUDY/sources.")
@click.option("--count", type=click.IntRange(1, 50), default=2, show_default=True,
              help="Dead ends (so sources) per --level.")
@click.option("--policy", type=click.Choice(["greedy", "fatal"]), default="greedy", show_default=True,
              help="How --level sources are played: the move of most visible progress until the board is "
                   "certified (greedy), or a fatal move first (fatal).")
@click.option("--source-agent", default=None, metavar="NAME",
              help="Record the --level sources with this scripted agent instead of a policy: it plays the level's "
                   "objective from the home screen and its own failures followed by a restart are the sources "
                   "(e.g. paper_filler).")
@click.option("--certify-budget", type=click.IntRange(0), default=20_000, show_default=True,
              help="States the evaluator may search per move for a dead-end certificate in the --level sources "
                   "(and so their retries); 0: Bolt Unscrew's no-free-hole certificate alone.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="The study folder to write (a new or empty folder, or a study to resume).")
@click.option("--conditions", default=None, metavar="M0,M1,M2,M3", help="Only these memories [default: all].")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Retries per source and memory.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=rq.LIMIT_SECONDS, show_default=True,
              help="Charged seconds per retry (the 300 s endpoint).")
@click.option("--max-actions", type=click.IntRange(1), default=rq.CEILING, show_default=True,
              help="Actions per retry (the ceiling).")
@click.option("--draws", type=click.IntRange(1), default=DRAWS, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Bootstrap seed.")
@click.option("--check", "check_dir", type=click.Path(), default=None,
              help="Re-derive a retry study: every retry replays, endpoints and tables as recorded.")
@click.option("--json", "as_json", is_flag=True, help="Print study.json's tables as JSON.")
@agent_options(default_agent="paper_filler")
@catalog_option
def retry_cmd(runs, levels, count, policy, source_agent, certify_budget, out_dir, conditions, repeats, budget,
              max_actions, draws, seed, check_dir, as_json, agent_opts, catalog):
    """RQ3: matched retries after an agent-owned failure and a verified native restart, under
    four memories - M0 history cleared, M1 native history + restart summary, M2 the agent's own
    structured account, M3 clue memory (the certified cause of each failed attempt); the
    endpoints, best progress and the paired effects as a study folder."""
    if check_dir:
        ok, problems = rs.check_study(check_dir)
        for p in problems:
            click.echo(f"  {p}")
        click.echo("ok: the study re-derives exactly" if ok else "NOT OK")
        raise SystemExit(0 if ok else 1)
    if not out_dir or not (runs or levels):
        raise click.UsageError("give --from RUN_DIR and/or --level LEVEL, and --out STUDY (or --check STUDY)")
    conds = rs.parse_conditions(conditions)           # bad input: one error line, nothing written
    for lid in levels:
        try:
            catalog.level(lid)
        except LongPuzzleError as e:
            raise rq.RetryError(str(e)) from None
    if source_agent is not None and source_agent not in SCRIPTED_AGENTS:
        raise rq.RetryError(f"--source-agent is a scripted agent ({', '.join(SCRIPTED_AGENTS)}), not {source_agent!r}")
    sr.fresh_folder(out_dir)
    choice = build_agent(agent_opts, Settings(budget=budget, max_actions=max_actions), default="paper_filler")
    sr.require_step_agent(choice.agent)
    doc = rs.run_retry(Path(out_dir), choice.make, runs=list(runs), levels=list(levels), count=count,
                       policy=policy, conditions=conds, repeats=repeats, budget=budget, max_actions=max_actions,
                       harness=agent_opts.harness, agent=choice.public(),
                       source_settings=Settings(action_timeout=None, certify_budget=certify_budget),
                       source_agent=source_agent, draws=draws,
                       seed=seed, catalog=catalog, log=None if as_json else lambda m: click.echo(f"  {m}", err=True))
    if as_json:
        click.echo(json.dumps(doc["tables"], ensure_ascii=False))
        return
    sr.print_tables(doc["tables"], click.echo)
    click.echo(f"\nstudy written to {out_dir}")
