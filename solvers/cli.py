"""Solver commands: ``longpuzzle solve LEVEL_ID`` and ``longpuzzle verify``."""

from __future__ import annotations

import json
import sys
import time

import click

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.solvers.core import DEFAULT_BUDGET, solve
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.verify import verify_level


@click.command("solve")
@click.argument("level_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option("--budget", type=click.IntRange(min=1), default=DEFAULT_BUDGET, show_default=True,
              help="Most states to store.")
@click.option("--quick", is_flag=True,
              help="A solution soon, not necessarily the shortest (Bolt Unscrew and Nut and Bolt skip the "
                   "search for a shorter one; the other games' searches are unchanged).")
@catalog_option
def solve_cmd(level_id, as_json, budget, quick, catalog):
    """Print the shortest solution of a level (or the best found and a proven lower bound)."""
    level = load_level(level_id, catalog)
    r = solve(level, budget=budget, shortest=not quick)
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
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Most states per level (default: per game).")
@click.option("--profile", "with_profile", is_flag=True,
              help="Certified difficulty figures per level (optimal length, reachable states, dead-end density, "
                   "optimal first moves) and each tier's ranges.")
@click.option("--tiers-out", type=click.Path(dir_okay=False), default=None,
              help="With --profile: write the tier data the generators read (solvers/generators/tiers.json).")
@catalog_option
def verify_cmd(game, as_json, budget, with_profile, tiers_out, catalog):
    """Solve every catalogue level, replay each solution, and compare with the recorded optima.
    Exit status 1 if any level is not verified.

    --profile: instead, the certified figures of every level (solvers/profile.py), then the
    range of each figure per tier."""
    cat = catalog
    ids = cat.level_ids(game)
    if tiers_out and not with_profile:
        raise click.BadParameter("--tiers-out needs --profile")
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(ids), unit="level", file=sys.stderr)
    if with_profile:
        _profile_all(cat, ids, as_json, budget, tiers_out, bar)
        return
    per_game: dict[str, float] = {}
    bad = 0
    for lid in ids:
        t0 = time.perf_counter()
        d = verify_level(cat.level(lid), budget=budget)
        g = lid.split("/")[0]
        per_game[g] = per_game.get(g, 0.0) + time.perf_counter() - t0
        bad += not d["ok"]
        if as_json:
            _line(json.dumps(d), bar)
        else:
            lb = d.get("lower_bound")
            opt = "optimal" if d["optimal"] else (f"lb {lb}" if lb is not None else "not proven optimal")
            mark = "ok " if d["ok"] else "BAD"
            _line(f"{mark} {lid:<28} {d['status']:<10} {d['length']!s:>4} moves ({opt}) "
                  f"{d['states']:>10,} states {d['seconds']:8.3f} s", bar)
        if bar is not None:
            bar.set_postfix_str(lid)
            bar.update(1)
    if bar is not None:
        bar.close()
    summary = ", ".join(f"{g} {t:.2f} s" for g, t in per_game.items())
    click.echo(f"{len(ids) - bad}/{len(ids)} levels verified; time per game: {summary}", err=True)
    if bad:
        sys.exit(1)


def _line(text: str, bar) -> None:
    """One result line; with a progress bar on the terminal, the bar is cleared first and drawn
    again below it (a line written over the bar would start with its remains)."""
    if bar is None:
        click.echo(text)
    else:
        bar.write(text, file=sys.stdout)


def _fig(v, exact=True) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return f"{v:,}" if exact else f">={v:,}"


def _profile_all(cat, ids, as_json, budget, tiers_out, bar) -> None:
    from longpuzzle.solvers.profile import DEFAULT_PROFILE_BUDGET, profile

    profs = {}
    bad = 0
    if not as_json:
        _line(f"{'level':<28} {'status':<10} {'optimal':>9} {'states':>14} {'dead ends':>9} "
              f"{'opt 1st':>7} {'1st':>4} {'seconds':>8}", bar)
    for lid in ids:
        lvl = cat.level(lid)
        p = profile(lvl, budget=budget or knowledge(lvl.game).verify_budget or DEFAULT_PROFILE_BUDGET)
        d = p.as_dict()
        d["catalog"] = cat.label
        profs[lid] = d
        bad += p.status != "solvable"
        if as_json:
            _line(json.dumps(d), bar)
        else:
            opt = str(p.optimal) if p.optimal is not None else f"{p.lower_bound}..{p.upper_bound}"
            _line(f"{lid:<28} {p.status:<10} {opt:>9} {_fig(p.states, p.states_exact):>14} "
                  f"{_fig(p.dead_end_density):>9} {_fig(p.optimal_first_moves):>7} {p.first_moves:>4} "
                  f"{p.seconds:8.3f}", bar)
        if bar is not None:
            bar.set_postfix_str(lid)
            bar.update(1)
    if bar is not None:
        bar.close()
    from longpuzzle.solvers.generators.tiers import build, tier_table

    rows = tier_table(profs, cat)
    if as_json:
        click.echo(json.dumps({"tiers": rows, "catalog": cat.identity()}))
    else:
        click.echo("")
        click.echo(f"tiers of catalogue {cat.label} (min-max over each objective's levels; * = defining figure)")
        for r in rows:
            cells = []
            for fig, (lo, hi) in r["figures"].items():
                if fig in ("lower_bound", "upper_bound"):
                    continue
                mark = "*" if fig in r["defining"] else ""
                cells.append(f"{mark}{fig} {_fig(lo)}-{_fig(hi)}")
            click.echo(f"  {r['objective']:<24} {r['levels']:>3} levels  " + "; ".join(cells))
    if tiers_out:
        from pathlib import Path
        Path(tiers_out).write_text(json.dumps(build(profs, cat), indent=1) + "\n", encoding="utf-8")
        click.echo(f"wrote {tiers_out}", err=True)
    click.echo(f"{len(ids) - bad}/{len(ids)} levels certified solvable", err=True)
    if bad:
        sys.exit(1)


HINT_BOUNDED_SHOWN = 10      # moves listed by `hint` where only bounds are known (--all: every one)


@click.command("hint")
@click.argument("level_id")
@click.option("--moves", help='Moves played first, separated by spaces (as for show and check).')
@click.option("--all", "show_all", is_flag=True, help="List every legal move with its cost, not only the best.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object.")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Most states of the level's whole graph (default 2,000,000; Bolt Unscrew and Truck Escape "
                   "5,000); past it, searches per state.")
@catalog_option
def hint_cmd(level_id, moves, show_all, as_json, budget, catalog):
    """The best next moves of a position with their extra costs, its exact distance to a win (or
    certified bounds), and whether it is lost (no sequence of moves wins any more)."""
    from longpuzzle.engine.session import Session
    from longpuzzle.solvers.oracle import Oracle

    s = Session(level_id, catalog)
    o = Oracle(s.level, graph_budget=budget)
    tokens = moves.split() if moves else []
    lost_at = None
    for i, tok in enumerate(tokens, 1):
        s.play(tok)                                  # a malformed or refused move: one error line
        if not o.at(s.state).dead_end:
            lost_at = None                           # (an undo may bring back a solvable board)
        elif lost_at is None:
            lost_at = i                              # the move that lost the board now on screen
    a = o.at(s.state)
    ms = o.moves(s.state)
    best = o.best(s.state)
    if as_json:
        click.echo(json.dumps({"level": s.level.id, "moves": len(tokens), "answer": a.as_dict(),
                               "lost_at": lost_at, "best": [m.move for m in best],
                               "costs": [m.as_dict() for m in ms]}))
        return
    where = f"{s.level.id} after {len(tokens)} move{'s' if len(tokens) != 1 else ''}"
    if a.status == "solved":
        click.echo(f"{where}: solved")
        return
    if a.dead_end:
        since = f"; lost by move {lost_at} ({tokens[lost_at - 1]})" if lost_at else " from the start"
        click.echo(f"{where}: LOST, no sequence of moves wins from here (certified, {a.method}){since}")
        click.echo("undo or restart to play on")
        return
    if a.exact:
        click.echo(f"{where}: {a.distance} moves to win (exact)")
    else:
        up = "?" if a.upper is None else str(a.upper)
        click.echo(f"{where}: between {a.lower} and {up} moves to win (bounds: the searches ran out of budget)")
    if a.exact:
        per = {m.presses for m in best}
        press = f" ({per.pop()} pointer presses each, as the paper counts a person's)" \
            if len(per) == 1 and best[0].presses not in (None, 1) else ""
        click.echo("best next moves: " + " ".join(m.move for m in best) + press)
        shown = ms if show_all else [m for m in ms if m.fatal or m in best]
    else:
        # bounds say little about which move is best: no claim, the moves' cost bounds instead
        click.echo("best next moves: not proven (only bounds are known); each move's cost as lower..upper")
        shown = ms if show_all else ms[:HINT_BOUNDED_SHOWN]
    click.echo("extra cost of a move: 0 = on a shortest path, k = a detour of k moves, inf = it loses the level")
    for m in shown:
        if m.cost is not None:
            c = "inf (loses)" if m.fatal else str(int(m.cost))
        else:
            c = f"{int(m.lower)}..{'?' if m.upper in (None, float('inf')) else int(m.upper)}"
        click.echo(f"  {m.move:<24} {c}")
    if len(shown) < len(ms) and not a.exact:
        click.echo(f"  ... {len(ms) - len(shown)} more (--all)")


COMMANDS = [solve_cmd, verify_cmd, hint_cmd]
