"""Commands: ``generate`` (seeded, certified levels) and ``catalog`` (named catalogue snapshots)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click


@click.command("generate")
@click.argument("game")
@click.option("--tier", required=True, help="A catalogue difficulty of the game, or 'beyond'.")
@click.option("--count", default=10, show_default=True, help="Number of levels.")
@click.option("--seed", default=0, show_default=True, help="Seed: the same (game, tier, seed) gives the same levels.")
@click.option("--start", default=0, show_default=True, help="Index of the first level (levels are numbered from 0).")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Level file to write [default: <game>-<tier>-s<seed>.json].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per level (its figures).")
def generate_cmd(game, tier, count, seed, start, out, as_json):
    """Generate COUNT certified levels of GAME at TIER into a level file (puzzles/levels/FORMAT.md).

    Every level is solvable (certified by the exhaustive solvers), carries its figures
    (optimal length, reachable states, dead-end density, optimal first moves) and its recipe
    (generator, version, tier, seed, index), and lies inside the tier's ranges."""
    from longpuzzle.solvers.generators import generate, generator, level_file

    if count < 1:
        raise click.BadParameter("--count must be at least 1")
    if start < 0:
        raise click.BadParameter("--start must be 0 or more")
    gen = generator(game)
    gen.tier_spec(tier)
    path = Path(out or f"{game}-{tier}-s{seed}.json")
    made = []
    bar = None
    if sys.stderr.isatty() and not as_json:
        from tqdm import tqdm
        bar = tqdm(total=count, unit="level", file=sys.stderr)
    t0 = time.perf_counter()
    for g in generate(game, tier, seed=seed, count=count, start=start):
        made.append(g)
        if as_json:
            click.echo(json.dumps({"level": g.level.id, "name": g.record["name"], "attempts": g.attempts,
                                   "seconds": round(g.seconds, 4), **g.record["profile"]}))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    dt = time.perf_counter() - t0
    doc = level_file(made, command=f"longpuzzle generate {game} --tier {tier} --count {count} --seed {seed}"
                                    + (f" --start {start}" if start else "")
                                    + f" (generator version {gen.version})")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    opt = [g.profile.optimal for g in made if g.profile.optimal is not None]
    span = f"optimal {min(opt)}-{max(opt)} moves, " if opt else ""
    click.echo(f"wrote {len(made)} {game} {tier} levels to {path} ({span}{dt:.2f} s, "
               f"{len(made) / dt if dt > 0 else float('inf'):.1f} levels/s)", err=as_json)


@click.group("catalog")
def catalog_group():
    """Named, versioned catalogue snapshots (levels of your own or generated ones, next to the
    built-in catalogue). Use one with --catalog NAME on levels, verify, play and eval."""


@catalog_group.command("snapshot")
@click.argument("name")
@click.option("--from", "files", multiple=True, required=True, type=click.Path(dir_okay=False, exists=False),
              help="A level file (repeatable); files of one game are merged by difficulty.")
@click.option("--with-builtin", is_flag=True, help="Take the built-in levels of every game no file gives.")
@click.option("--json", "as_json", is_flag=True)
def snapshot_cmd(name, files, with_builtin, as_json):
    """Save a catalogue NAME (a new version when its content changed) from level files."""
    from longpuzzle.engine.catalog_store import snapshot

    info = snapshot(name, files, with_builtin=with_builtin)
    if as_json:
        click.echo(json.dumps(info))
        return
    what = "unchanged, still" if not info["created"] else "saved"
    click.echo(f"{what} {info['name']}@{info['version']}: {info['levels']} levels in {info['objectives']} objectives, "
               f"hash {info['hash'][:16]}  ({info['path']})")


@catalog_group.command("list")
@click.option("--json", "as_json", is_flag=True)
def list_cmd(as_json):
    """The stored catalogues and their versions."""
    from longpuzzle.engine.catalog_store import list_catalogs, store_dir

    rows = list_catalogs()
    if as_json:
        click.echo(json.dumps(rows))
        return
    if not rows:
        click.echo(f"no catalogues in {store_dir()} (make one with `longpuzzle catalog snapshot NAME --from FILE`)")
    for r in rows:
        click.echo(f"{r['name']}@{r['version']:<4} {r['levels']:>4} levels {r['objectives']:>3} objectives  "
                   f"hash {r['hash'][:16]}  {r['created']}")


@catalog_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def show_cmd(name, as_json):
    """A catalogue's identity, objectives and generator versions (NAME, NAME@VERSION, a
    snapshot file, or 'builtin')."""
    from longpuzzle.engine.catalog_store import open_catalog

    cat = open_catalog(name)
    info = {"name": cat.name, "version": cat.version, "hash": cat.content_hash, "generators": cat.generators,
            "objectives": [{"objective": o.id, "levels": len(o.level_ids)} for o in cat.objectives()]}
    if as_json:
        click.echo(json.dumps(info))
        return
    click.echo(f"{cat.label}  hash {cat.content_hash}")
    for o in info["objectives"]:
        click.echo(f"  {o['objective']:<28} {o['levels']:>3} levels")
    for g, v in sorted(cat.generators.items()):
        click.echo(f"  generator {g}: version {v}")


COMMANDS = [generate_cmd, catalog_group]
