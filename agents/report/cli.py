"""Commands: ``report``, ``analyze``, ``leaderboard`` and ``video``.

Imports inside the commands are lazy on purpose: the command table and ``--help`` load none of
what a command runs (start-up)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("report")
@click.argument("folders", nargs=-1, required=False, type=click.Path(file_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for report.html [default: the run folder; required for several runs].")
@click.option("--videos/--no-videos", default=False, show_default=True,
              help="Make (or reuse) each episode's video and link it (the slow part of a report: each episode "
              "a film, progress on stderr; without it the page names the `longpuzzle video` command of each).")
@click.option("--video-format", type=click.Choice(["mp4", "gif"]), default=None,
              help="[default: mp4 where imageio-ffmpeg is installed, else gif]")
@click.option("--reference", "references", multiple=True, type=click.Path(dir_okay=False),
              help="Reference rows for Table 2 (a JSON file; see `longpuzzle leaderboard --help`).")
@click.option("--merge-catalogs", is_flag=True,
              help="Pool runs made on different level catalogues (kept apart otherwise: their levels differ).")
@click.option("--mixed-presets", is_flag=True,
              help="Allow runs made under different evaluation presets on one page (refused otherwise; their "
              "rows stay apart and the page says so).")
@click.option("--unverified", is_flag=True,
              help="Show a run that does not verify (tampered, unfinished) anyway, marked UNVERIFIED.")
@click.option("--oracle", "with_oracle", is_flag=True,
              help="Annotate every recorded step with the exact oracle: this project's step metrics (optimal-move "
              "share, fatal-action rate, mean extra cost) in a table of their own, and each episode's d(s) "
              "timeline under its progress P curve.")
@click.option("--study", "studies", multiple=True, type=click.Path(file_okay=False),
              help="A study folder of the diagnostics lab (`longpuzzle diagnose ... --out`) for the Diagnostics "
              "section: its tables and figures (repeatable; with studies alone the page holds only that section).")
def report_cmd(folders, out_dir, videos, video_format, references, merge_catalogs, mixed_presets, unverified,
               with_oracle, studies):
    """Write report.html for eval output folders (or episode folders): the paper's tables and
    figures, trajectory analytics, and each episode's video. Only verified numbers are shown:
    each run by its verification record (``longpuzzle replay RUN_DIR`` writes it) or by
    replaying it now; a run that does not verify is refused, naming the first difference."""
    from longpuzzle.agents.report.leaderboard import load_reference
    from longpuzzle.agents.report.page import make_report

    if not folders and not studies:
        raise click.UsageError("give run folders, --study folders, or both")
    refs = [r for f in references for r in load_reference(f)]
    page = make_report(list(folders), out_dir, videos=videos, video_format=video_format, references=refs,
                       merge_catalogs=merge_catalogs, mixed_presets=mixed_presets, unverified=unverified,
                       oracle=with_oracle, studies=list(studies))
    click.echo(f"wrote {page}")


@click.command("analyze")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON document.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None, help="Write the JSON here.")
@click.option("--oracle", "with_oracle", is_flag=True,
              help="Annotate every recorded step with the oracle: d(s), the extra cost of each action, the first "
                   "fatal move, moves on a lost board, the share of optimal moves (this project's metrics).")
def analyze_cmd(folders, as_json, out_file, with_oracle):
    """Trajectory analytics of eval runs: level attempts and dead ends (the paper's Figure 2c
    per game), Bolt Unscrew free holes per transfer, Maze Paint moves by coverage, the LC
    deficit split (paper sections 5.1-5.3)."""
    from longpuzzle.agents.report.analytics import analyze_run
    from longpuzzle.agents.report.tables import fmt

    docs = [analyze_run(f) for f in folders]
    if with_oracle:
        _annotate_with_oracle(folders, docs)
    doc = docs[0] if len(docs) == 1 else {"runs": docs}
    if out_file:
        Path(out_file).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(doc))
        return
    for d in docs:
        click.echo(f"{d['run']}: {len(d['episodes'])} episodes, {d['attempts']} level attempts")
        for o, v in d["lc_deficit"].items():
            click.echo(f"  {o:<24} LC {fmt(v['LC']):>5}  deficit {fmt(v['deficit']):>5} = unreached "
                       f"{fmt(v['unreached']):>5} + reached unsolved {fmt(v['reached_unsolved']):>5}")
        split = d["lc_deficit_split"]
        for g, v in list(split["by_game"].items()) + [("all games", split["overall"])] * bool(split["overall"]):
            share = "-" if v["unreached_share"] is None else fmt(v["unreached_share"]) + "%"
            click.echo(f"  {g:<24} 100 - LC {fmt(v['deficit']):>5} = (100 - R) {fmt(v['unreached']):>5} + (R - LC) "
                       f"{fmt(v['reached_unsolved']):>5}; unreached {share} of the deficit (game-macro)")
        if "oracle" in d:
            x = d["oracle"]
            click.echo(f"  oracle (this project's step metrics): {x['judged_moves']} of {x['moves']} moves judged, "
                       f"optimal {fmt(x['optimal_share'])}%, mean extra cost {fmt(x['mean_extra_cost'])}, "
                       f"fatal actions {x['fatal_actions']} ({fmt(x['fatal_rate'])}%), "
                       f"moves on a lost board {x['lost_board_moves']}, known only by bounds {x['inexact_moves']}")
            for ep in d["episodes"]:
                f = ep["oracle"]["first_fatal"]
                if f is not None:
                    click.echo(f"    {ep['episode']}: first fatal move at action {f[0]} ({f[1]})")
        if "dead_ends" in d:
            x = d["dead_ends"]
            click.echo(f"  dead ends: {x['dead_end_attempts']} of {x['attempts']} attempts, {x['recovered']} recovered "
                       f"by undo, mean delay {fmt(x['mean_delay'])} transfers (max {fmt(x['max_delay'])})")
            click.echo("  dead ends by game (Figure 2c): attempts reaching a certified dead end, moves then played on "
                       "the lost board (median / mean)")
            for r in d["dead_ends_by_game"]:
                for cert in ("no_free_hole", "exhaustive"):
                    c = r[cert]
                    if c is None:
                        continue
                    lm = c["lost_moves"]
                    click.echo(f"    {r['game']:<13} {cert.replace('_', ' '):<13} {c['dead_end_attempts']:>4} of "
                               f"{r['attempts']:<4} ({fmt(c['share'])}%)  lost-board moves {fmt(lm['median'])} / "
                               f"{fmt(lm['mean'])}")
        if "bolt_unscrew" in d:
            b = d["bolt_unscrew"]
            click.echo("  bolt unscrew transfers: " + ", ".join(f"{k.replace('_', ' ')} {v}"
                                                                for k, v in b["by_kind"].items()))
        if "maze_paint" in d:
            click.echo("  maze paint by coverage:  moves  paint new %  return %")
            for r in d["maze_paint"]["all"]:
                lo, hi = r["coverage"]
                click.echo(f"    {100 * lo:3.0f}-{100 * hi:3.0f}%            {r['valid_moves']:>5}  "
                           f"{fmt(r['new_cells']):>11}  {fmt(r['revisits']):>8}")
    if out_file:
        click.echo(f"wrote {out_file}")


def _annotate_with_oracle(folders, docs) -> None:
    """Each episode's oracle annotation (agents/report/oracle_steps.py) into its analytics, and
    the run's step metrics beside them; one oracle per level for all runs."""
    from longpuzzle.agents.report.data import load_run
    from longpuzzle.agents.report.oracle_steps import annotate_run

    shared: dict = {}
    for f, d in zip(folders, docs):                        # analyze_run's episodes, in the same order
        annotate_run(d, [e["dir"] for e in load_run(f).episodes if e.get("dir") is not None], shared)


@click.command("leaderboard")
@click.argument("folders", nargs=-1, type=click.Path(file_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Also write leaderboard.csv, .json and .html there.")
@click.option("--reference", "references", multiple=True, type=click.Path(dir_okay=False),
              help="A JSON file of published reference rows (repeatable; format: docs/guides/reading-results.md).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.option("--unverified", is_flag=True,
              help="Show a run that does not verify (tampered, unfinished) anyway, marked '!'.")
def leaderboard_cmd(folders, out_dir, references, as_json, unverified):
    """Compare eval runs in one table. Runs are pooled only when model, provider, harness
    configuration, protocol, setting and catalogue all match. Only verified numbers are
    shown: each run by its verification record (``longpuzzle replay RUN_DIR`` writes it) or by
    replaying it now; a run that does not verify is refused, naming the first difference.

    Reference file: {"format": "longpuzzle-reference/1", "source": "...", "rows": [{"model":
    ..., "setting": ..., "OSR": ..., "LC": ..., ...}]}"""
    from longpuzzle.agents.report.leaderboard import as_records, leaderboard, text_table, write_all

    if not folders and not references:
        raise click.UsageError("give at least one run folder (or a --reference file)")
    rows = leaderboard(list(folders), references, unverified=unverified)
    if as_json:
        click.echo(json.dumps({"rows": as_records(rows)}))
    else:
        click.echo(text_table(rows))
    if out_dir:
        paths = write_all(rows, out_dir)
        if not as_json:
            click.echo("wrote " + ", ".join(str(p) for p in paths))


@click.command("video")
@click.argument("episode", type=click.Path(file_okay=False))
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="F.mp4 or F.gif")
@click.option("--fps", default=4.0, show_default=True, help="Video frames per second (one action each).")
@click.option("--scale", default=1.0, show_default=True, help="Resize the frames (e.g. 0.5 for a small GIF).")
def video_cmd(episode, out_file, fps, scale):
    """Render an episode folder as a video: every action drawn on the frame it was aimed at,
    with a caption (step, level, move, progress, what the action did)."""
    from longpuzzle.agents.report.video import write_video

    r = write_video(episode, out_file, fps=fps, scale=scale)
    held = "" if r["images"] == r["frames"] else \
        f" (the file holds {r['images']} images: a repeated frame is stored once and shown longer)"
    click.echo(f"wrote {r['path']}: {r['seconds']:.1f} s, {r['frames']} frames at {r['fps']:g} fps, "
               f"{r['size'][0]} x {r['size'][1]}{held}")


COMMANDS = [report_cmd, analyze_cmd, leaderboard_cmd, video_cmd]
