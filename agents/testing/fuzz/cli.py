"""Command of longpuzzle.agents.testing.fuzz: ``soak`` (added to the ``longpuzzle`` CLI).

Imports inside the commands are lazy on purpose: the command table and ``--help`` load none of
what a command runs (start-up)."""

from __future__ import annotations

import json
import sys
import time

import click


@click.command("soak")
@click.option("--game", "games", multiple=True, help="Game(s) to soak (repeatable) [default: every game].")
@click.option("--actions", default=1_000_000, show_default=True, help="GUI actions per game.")
@click.option("--seed", default=0, show_default=True)
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--malformed", default=0.3, show_default=True, help="Share of malformed actions among the random ones.")
@click.option("--levels", "level_mutations", default=0, show_default=True,
              help="Also check this many mutated level records per game (each in a worker process).")
@click.option("--snapshots", "snapshot_mutations", default=0, show_default=True,
              help="Also check this many tampered snapshots and checkpoints per game.")
@click.option("--agents", "hostile_agents", default=0, show_default=True,
              help="Also run this many episodes of randomised hostile agent files (isolated, checked).")
@click.option("--results", "tampered_results", default=0, show_default=True,
              help="Also check this many single-field tamperings of a genuine run (every one with -1): each "
              "must be refused by the run's verification.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def soak_cmd(games, actions, seed, style, malformed, level_mutations, snapshot_mutations, hostile_agents,
             tampered_results, as_json):
    """A long fuzz run: random GUI actions of every type, well-formed and malformed, on every
    screen, steered through each game's levels; reports actions tried, refusals and
    failures (any exception other than a refused action, or a broken invariant). Exit
    status 1 if anything failed."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.errors import LongPuzzleError
    from longpuzzle.agents.testing.fuzz.gui import soak

    if actions < 1 or not 0 <= malformed <= 1 or min(level_mutations, snapshot_mutations, hostile_agents) < 0 \
            or tampered_results < -1:
        raise LongPuzzleError("--actions must be at least 1, --malformed between 0 and 1, --levels, "
                              "--snapshots, --agents at least 0, --results at least -1")
    games = list(games) or builtin_catalog().games()
    for g in games:
        builtin_catalog().objectives(g)                 # an unknown game: one error line
    out = {"seed": seed, "games": [], "failures": 0}
    t0 = time.perf_counter()
    for g in games:
        def progress(rep, g=g):
            if not as_json and sys.stderr.isatty():
                click.echo(f"\r{g}: {rep['actions']:,} actions, {rep['refused']:,} refused, "
                           f"{rep['failures_total']} failures", nl=False, err=True)
        rep = soak(g, actions, seed, style=style, malformed=malformed, progress=progress)
        out["games"].append(rep)
        out["failures"] += rep["failures_total"]
        if not as_json:
            if sys.stderr.isatty():
                click.echo("", err=True)
            click.echo(f"{g:<14} {rep['actions']:>11,} actions  {rep['dispatched']:>11,} dispatched  "
                       f"{rep['refused']:>10,} refused  {rep['moves']:>10,} moves  {rep['levels_won']:>7,} levels won  "
                       f"{rep['failures_total']} failures  ({rep['seconds']:.0f} s; screens {', '.join(rep['screens'])})")
            for f in rep["failures"]:
                click.echo(f"   action {f['action']}: {f['what']}: {f['error']}")
    for what, n, mod in (("mutated level records", level_mutations, "levels"),
                         ("tampered snapshots and checkpoints", snapshot_mutations, "snapshots")):
        if n:
            import importlib
            r = importlib.import_module(f"longpuzzle.agents.testing.fuzz.{mod}").run_checks(games, n, seed)
            _take(out, mod, r, as_json, f"{what}: {r['checked']:,} checked, {r['refused']:,} refused, "
                  f"{r['ok']:,} work", lambda f: f"{f['game']}: {f['what']}: {f['error']}")
    if hostile_agents:
        from longpuzzle.agents.testing.fuzz.agents import run_checks
        r = run_checks(hostile_agents, seed)
        out["agents"] = r
        out["failures"] += len(r["failures"])
        if not as_json:
            ends = ", ".join(f"{k} {v}" for k, v in sorted(r["ends"].items()))
            click.echo(f"hostile agent episodes: {r['checked']:,} checked ({ends}), {len(r['failures'])} failures")
            for f in r["failures"][:20]:
                click.echo(f"   episode {f['episode']} ({f['plan']['objective']}, {f['plan']['agent']['fatal'] or 'no fatal act'}): "
                           f"{'; '.join(f['wrong'])}")
    if tampered_results:
        import tempfile

        from longpuzzle.agents.testing.fuzz.results import run_checks as result_checks
        with tempfile.TemporaryDirectory(prefix="longpuzzle-soak-") as tmp:
            r = result_checks(tmp, seed, None if tampered_results < 0 else tampered_results)
        _take(out, "results", r, as_json, f"tampered results: {r['checked']:,} checked, {r['refused']:,} refused",
              lambda f: f"{f['what']}: {f['error']}")
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if as_json:
        click.echo(json.dumps(out))
    else:
        total = sum(r["actions"] for r in out["games"])
        click.echo(f"total: {total:,} actions over {len(games)} games, {out['failures']} failures, "
                   f"{out['seconds']:.0f} s")
    if out["failures"]:
        sys.exit(1)


COMMANDS = [soak_cmd]


def _take(out: dict, key: str, r: dict, as_json: bool, summary: str, failure) -> None:
    """Files one check's report under ``key``, counts its failures, and (unless --json) prints
    its summary line with the failure count and its first 20 failures (``failure(f)``: one line)."""
    out[key] = r
    out["failures"] += len(r["failures"])
    if not as_json:
        click.echo(f"{summary}, {len(r['failures'])} failures")
        for f in r["failures"][:20]:
            click.echo(f"   {failure(f)}")
