"""Solver commands: ``longpuzzle solve LEVEL_ID`` and ``longpuzzle verify``."""

from __future__ import annotations

import json
import sys
import time

import click

from longpuzzle.engine.catalog import catalog, load_level
from longpuzzle.solvers.core import DEFAULT_BUDGET, solve
from longpuzzle.solvers.verify import verify_level


@click.command("solve")
@click.argument("level_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option("--budget", default=DEFAULT_BUDGET, show_default=True, help="Most states to store.")
def solve_cmd(level_id, as_json, budget):
    """Print the shortest solution of a level (or the best found and a proven lower bound)."""
    level = load_level(level_id)
    r = solve(level, budget=budget)
    d = r.as_dict()
    routes = getattr(r, "routes", None)
    if routes:
        d["routes"] = routes
    if as_json:
        click.echo(json.dumps(d))
        return
    if r.status == "solvable":
        opt = "optimal" if r.optimal else (f"lower bound {r.lower_bound}" if r.lower_bound is not None
                                           else "not proven optimal")
        click.echo(f"{level.id}: solvable in {r.length} moves ({opt}); {r.states:,} states, {r.seconds:.3f} s")
        click.echo(" ".join(routes or r.moves))
    elif r.status == "unsolvable":
        click.echo(f"{level.id}: unsolvable (all {r.states:,} reachable states searched)")
    else:
        why = r.note or f"budget of {budget:,} states reached"
        click.echo(f"{level.id}: unknown ({why}; {r.states:,} states searched)")


@click.command("verify")
@click.option("--game", help="Only this game.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per level.")
@click.option("--budget", type=int, default=None, help="Most states per level (default: per game).")
def verify_cmd(game, as_json, budget):
    """Solve every catalogue level, replay each solution, and compare with the recorded optima.
    Exit status 1 if any level is not verified."""
    ids = catalog().level_ids(game)
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(ids), unit="level", file=sys.stderr)
    per_game: dict[str, float] = {}
    bad = 0
    for lid in ids:
        t0 = time.perf_counter()
        d = verify_level(lid, budget=budget)
        g = lid.split("/")[0]
        per_game[g] = per_game.get(g, 0.0) + time.perf_counter() - t0
        bad += not d["ok"]
        if as_json:
            click.echo(json.dumps(d))
        else:
            lb = d.get("lower_bound")
            opt = "optimal" if d["optimal"] else (f"lb {lb}" if lb is not None else "not proven optimal")
            mark = "ok " if d["ok"] else "BAD"
            click.echo(f"{mark} {lid:<28} {d['status']:<10} {str(d['length']):>4} moves ({opt}) "
                       f"{d['states']:>10,} states {d['seconds']:8.3f} s")
        if bar is not None:
            bar.set_postfix_str(lid)
            bar.update(1)
    if bar is not None:
        bar.close()
    summary = ", ".join(f"{g} {t:.2f} s" for g, t in per_game.items())
    click.echo(f"{len(ids) - bad}/{len(ids)} levels verified; time per game: {summary}", err=True)
    if bad:
        sys.exit(1)


COMMANDS = [solve_cmd, verify_cmd]
