"""``longpuzzle diagnose rules``: RQ4, the rule card (K) x workflow controller (P) study with
five isolated rule probes per session (rules.py, workflow.py, rules_study.py).

    diagnose rules --objective maze_paint/easy --agent greedy --out STUDY     the 2 x 2 study
    diagnose rules --check STUDY                                              re-derive its tables
    diagnose rules --card bolt_unscrew [--lang zh]                            print a game's card
"""

from __future__ import annotations

from pathlib import Path

import click

from longpuzzle.agents.diagnose.stats import DRAWS, SEED


def agent_factory(agent_name, model_name, *, models_file=None, base_url=None, api=None, api_key_env=None,
                  trusted=False, lang="en"):
    """(make_agent(repeat, folder), label) from the command's options: a model (``--model``,
    through the model protocol ``--agent`` names, default native; its conversation logged in the
    session's folder), or an agent eval accepts by name or file (a scripted one seeded by the
    repeat). Checked here, before any session: an unknown agent, a protocol that is not step
    by step, a missing key - one error line. (Until the lab's shared agent options land.)"""
    from longpuzzle.agents.registry import MODEL_AGENTS, SCRIPTED_AGENTS, TOOL_AGENTS, load_agent

    if model_name:
        from longpuzzle.agents.models.agent import ModelAgent      # lazy: model agents only
        from longpuzzle.agents.models.config import resolve_model
        cfg = resolve_model(model_name, models_file, base_url=base_url, api=api, api_key_env=api_key_env)
        protocol = agent_name or cfg.agent or "native"
        if protocol not in MODEL_AGENTS or protocol in TOOL_AGENTS:
            raise click.UsageError(f"--model plays through a model protocol the session drives step by step "
                                   f"({', '.join(a for a in MODEL_AGENTS if a not in TOOL_AGENTS)}), not {protocol!r}")
        cfg.api_key()                  # a missing key: one error line before anything runs (never stored)
        return (lambda repeat, folder: ModelAgent(protocol, cfg, folder=folder, prompt_lang=lang)), \
            f"{protocol}:{cfg.name or cfg.model}"
    if agent_name in MODEL_AGENTS:
        raise click.UsageError(f"--agent {agent_name} needs --model (a provider-file name or a model name)")
    first = load_agent(agent_name, trusted=trusted)             # an unknown agent: here, before any work
    if getattr(first, "trusted", True) is False:
        first.check()                  # an agent file that cannot load: one error line, nothing run
    scripted = agent_name in SCRIPTED_AGENTS
    return (lambda repeat, folder: load_agent(agent_name, trusted=trusted, **({"seed": repeat} if scripted else {}))), \
        agent_name


def _print_tables(tables: list[dict]) -> None:
    for t in tables:
        click.echo(f"\n{t['title']}")
        rows = [[str(c) for c in t["columns"]]] + [[str(c) for c in r] for r in t["rows"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


@click.command("rules")
@click.option("--objective", "objectives", multiple=True, metavar="GAME/DIFFICULTY",
              help="An objective of the study (repeatable); each is a source of the bootstrap.")
@click.option("--agent", "agent_name", default=None, metavar="NAME|FILE.py",
              help="The agent: a scripted agent, an agent file, or with --model a model protocol (default native).")
@click.option("--model", "model_name", default=None, help="A model (provider-file name or model name) as the agent.")
@click.option("--models-file", type=click.Path(), default=None, help="The provider file naming the models.")
@click.option("--base-url", default=None, help="The model endpoint's base URL.")
@click.option("--api", type=click.Choice(["openai-chat", "openai-responses", "anthropic"]), default=None,
              help="The model endpoint's wire.")
@click.option("--api-key-env", default=None, metavar="NAME", help="The environment variable holding the key.")
@click.option("--trusted-agent", is_flag=True, help="Import an agent file into this process (no sandbox).")
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
def rules_cmd(objectives, agent_name, model_name, models_file, base_url, api, api_key_env, trusted_agent,
              out_dir, repeats, max_actions, budget, lang, no_deadlock_restart, draws, seed,
              check_dir, card_game):
    """RQ4: the rule card (K0 / K1) x the workflow controller (P0 / P1) on objectives, five
    isolated rule probes per session graded against the game's numbered rules; Table 16,
    the five contrasts and Figure 5c, as a study folder."""
    from longpuzzle.agents.diagnose.rules import RuleCardError, rule_card
    from longpuzzle.agents.diagnose.rules_study import RulesStudyError, check_study, run_study
    from longpuzzle.agents.harness.settings import Settings
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.errors import LongPuzzleError

    try:
        if card_game:
            click.echo(rule_card(card_game).text(lang))
            return
        if check_dir:
            ok, problems = check_study(check_dir)
            for p in problems:
                click.echo(f"  {p}")
            click.echo("ok: the study re-derives exactly" if ok else "NOT OK")
            raise SystemExit(0 if ok else 1)
        if not objectives or not (agent_name or model_name) or not out_dir:
            raise click.UsageError("give --objective (one or more), --agent (or --model) and --out "
                                   "(or --check STUDY, --card GAME)")
        out = Path(out_dir)
        if out.exists() and (not out.is_dir() or any(out.iterdir())) and not (out / "units.jsonl").is_file():
            raise click.UsageError(f"{out} exists and is not a study folder (give a new or empty folder)")
        cat = builtin_catalog()
        for o in objectives:
            cat.objective(o)                         # an unknown objective fails here, before any work
            rule_card(o.split("/")[0])
        make_agent, label = agent_factory(agent_name, model_name, models_file=models_file, base_url=base_url,
                                          api=api, api_key_env=api_key_env, trusted=trusted_agent, lang=lang)
        st = Settings(budget=budget, max_actions=max_actions, lang=lang)
        doc = run_study(list(objectives), make_agent, out, repeats=repeats, settings=st,
                        agent_label=label, deadlock_restart=not no_deadlock_restart, draws=draws, seed=seed)
    except (RuleCardError, RulesStudyError, LongPuzzleError) as e:
        raise click.UsageError(str(e)) from None
    _print_tables(doc["tables"])
    click.echo(f"\nstudy written to {out}")
