"""``longpuzzle diagnose rules``: RQ4, the rule card (K) x workflow controller (P) study with
five isolated rule probes per session (rules.py, workflow.py, rules_study.py).

    diagnose rules --objective maze_paint/easy --agent rulebook --out STUDY   the 2 x 2 study
    diagnose rules --objective maze_paint/easy --model M --out STUDY         ... with a model agent
    diagnose rules --check STUDY                                              re-derive its tables
    diagnose rules --card bolt_unscrew [--lang zh]                            print a game's card
"""

from __future__ import annotations

import json

import click

from longpuzzle.agents.agent_options import agent_options
from longpuzzle.agents.diagnose.stats import DRAWS, SEED


@click.command("rules")
@agent_options(default_agent="rulebook")
@click.option("--objective", "objectives", multiple=True, metavar="GAME/DIFFICULTY",
              help="An objective of the study (repeatable); each is a source of the bootstrap.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="The study folder to write.")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Blocks (of the four cells) per objective.")
@click.option("--max-actions", type=click.IntRange(4), default=600, show_default=True,
              help="Actions per session (the probes are spread over it).")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              help="Charged seconds per session (the paper's objective budget).")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="The screens' language; the card and the probes follow it.")
@click.option("--no-deadlock-restart", is_flag=True, help="P1 without the Bolt Unscrew controller's restart "
                                                           "after a certified dead end.")
@click.option("--draws", type=click.IntRange(1), default=DRAWS, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Bootstrap seed.")
@click.option("--check", "check_dir", type=click.Path(), default=None,
              help="Re-derive a rules study: every session replays, endpoints and tables are the recorded ones.")
@click.option("--card", "card_game", default=None, metavar="GAME", help="Print GAME's rule card and exit.")
@click.option("--json", "as_json", is_flag=True, help="Print study.json's tables as JSON.")
def rules_cmd(agent_opts, objectives, out_dir, repeats, max_actions, budget, lang, no_deadlock_restart, draws, seed,
              check_dir, card_game, as_json):
    """RQ4: the rule card (K0 / K1) x the workflow controller (P0 / P1) on objectives, five
    isolated rule probes per session graded against the game's numbered rules; Table 16,
    the five contrasts and Figure 5c, as a study folder."""
    from longpuzzle.agents.agent_options import build_agent
    from longpuzzle.agents.diagnose import study
    from longpuzzle.agents.diagnose.rules import rule_card
    from longpuzzle.agents.diagnose.rules_study import check_study, run_study
    from longpuzzle.agents.harness.settings import Settings
    from longpuzzle.agents.registry import TOOL_AGENTS
    from longpuzzle.engine.catalog import builtin_catalog

    # a LongPuzzleError (an unknown objective, a game without a card, a model without its key, a
    # study that cannot go on) is the top level's one error line, as in every diagnose command
    if card_game:
        click.echo(rule_card(card_game).text(lang))
        return
    if check_dir:
        ok, problems = check_study(check_dir)
        for p in problems:
            click.echo(f"  {p}")
        click.echo("ok: the study re-derives exactly" if ok else "NOT OK")
        raise SystemExit(0 if ok else 1)
    if not objectives or not out_dir:
        raise click.UsageError("give --objective (one or more) and --out (or --check STUDY, --card GAME)")
    out = study.fresh_folder(out_dir)           # new, empty, or a rules study to resume
    cat = builtin_catalog()
    for o in objectives:
        cat.objective(o)                         # an unknown objective fails here, before any work
        rule_card(o.split("/")[0])
    st = Settings(budget=budget, max_actions=max_actions, lang=lang)
    choice = build_agent(agent_opts, st, default="rulebook")      # a bad agent: one line, before any work
    if choice.agent in TOOL_AGENTS:
        raise click.UsageError(f"--agent {choice.agent} drives its own episode through tools; a rules session "
                               "asks its agent step by step (use a model protocol: native, general_e2e, ...)")

    def make_agent(objective, folder, repeat):      # a fresh agent per session (scripted: seeded by the repeat)
        return choice.make(objective, folder, episode=repeat)
    doc = run_study(list(objectives), make_agent, out, repeats=repeats, settings=st,
                    agent_label=choice.label, deadlock_restart=not no_deadlock_restart, draws=draws, seed=seed)
    if as_json:                                  # as takeover and retry print them
        click.echo(json.dumps(doc["tables"], ensure_ascii=False))
        return
    study.print_tables(doc["tables"], click.echo)
    click.echo(f"\nstudy written to {out}")
