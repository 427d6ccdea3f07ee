"""``longpuzzle report DIR...``: one self-contained HTML page over one or more eval runs.

The page (report.html; styles inline, every figure embedded as a PNG data URI, so the file
can be mailed or archived alone) shows, in order:

    what the metrics mean (one line each)
    the paper's Table 2 layout: one row per agent and setting (runs of one identity pooled;
        tables.py), OSR LC FGP LPR H50 LC_hard PER, NGAR and cost where recorded
    the runs: folder, agent, protocol, settings, scored and unscored episodes, score, SMR
    the paper's Table 18 layout: per agent and objective, solved, LC, FGP, premature exit,
        mismatch
    with ``oracle``: this project's step metrics from the exact oracle (optimal-move share,
        fatal-action rate, mean extra cost; oracle_steps.py), in a table of their own
    Figures 3a, 3b and 3c from the runs' own numbers (or why one cannot be drawn)
    trajectory analytics (analytics.py): the LC deficit split, Maze Paint coverage bins,
        Bolt Unscrew transfers by free holes, dead ends and their delay
    per episode: outcome, level attempts, progress P over actions with restarts and dead
        ends marked (with ``oracle``, d(s) under it: the oracle timeline), Bolt Unscrew free holes along
        each attempt (Figure 4a), and a link to the episode's video
    with ``studies`` (``--study DIR``): the Diagnostics section, every study folder of the
        diagnostics lab with its tables and figures, whatever the experiment (diagnostics.py);
        studies alone make a page of that section only

Beside the page: analytics.json (every figure the analytics computed) and videos/ (one
film per episode, video.py; MP4 with imageio-ffmpeg, else GIF). Missing values print "-".
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import sys
import tempfile
from pathlib import Path

from longpuzzle.agents.harness import HarnessError
from longpuzzle.agents.report import analytics as an
from longpuzzle.agents.report import figures
from longpuzzle.agents.report.data import RunData, catalog_label, load_verified_runs
from longpuzzle.agents.report.tables import (
    MISSING, TABLE18, TABLE18_TITLES, Row, easiest_tier_lc, fmt, group_runs, help_for, horizon_curve,
    solved_text, table2_columns,
)
from longpuzzle.engine.catalog import builtin_catalog

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:28px auto;
max-width:1180px;padding:0 18px;color:#1d1d1f;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h3{margin-top:1.4em}.sub{color:#666;margin-top:0}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.92em}
th,td{border:1px solid #d6d6d6;padding:4px 9px}th{background:#f2f4f7;text-align:center}
td{text-align:right;font-variant-numeric:tabular-nums}td.t{text-align:left}
tr:nth-child(even) td{background:#fafbfc}tr.ref td{color:#555;font-style:italic}
dl.metrics{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:.92em}
dl.metrics dt{font-weight:600}dl.metrics dd{margin:0}
figure{margin:.8em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}.note{color:#777;font-size:.9em}
details{margin:.6em 0;border:1px solid #e3e3e3;border-radius:6px;padding:.3em .8em}
summary{cursor:pointer;font-weight:600}code{background:#f4f4f4;padding:0 3px;border-radius:3px}
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _png_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


class _Page:
    def __init__(self, out: Path):
        self.out = out
        self.parts: list[str] = []
        self.images = 0
        self.videos_total = 0           # episode videos to make (--videos), and made so far
        self.videos_done = 0

    def add(self, s: str) -> None:
        self.parts.append(s)

    def figure(self, path: Path | None, caption: str, missing: str = "") -> None:
        if path is None:
            if missing:
                self.add(f"<p class='note'>{_e(caption)}: not drawn ({_e(missing)}).</p>")
            return
        self.images += 1
        self.add(f"<figure><img src='{_png_uri(path)}' alt='{_e(caption)}'>"
                 f"<figcaption>{_e(caption)}</figcaption></figure>")

    def table(self, head: list[str], rows: list[list], cls: list[str] | None = None, titles: list[str] | None = None):
        t = ["<table><tr>"]
        for i, h in enumerate(head):
            tip = f" title='{_e(titles[i])}'" if titles and titles[i] else ""
            t.append(f"<th{tip}>{_e(h)}</th>")
        t.append("</tr>")
        for k, r in enumerate(rows):
            t.append(f"<tr class='{cls[k]}'>" if cls and cls[k] else "<tr>")
            for v in r:
                if isinstance(v, tuple):          # (text, is_text_cell)
                    t.append(f"<td class='t'>{_e(v[0])}</td>")
                else:
                    t.append(f"<td>{_e(v)}</td>")
            t.append("</tr>")
        t.append("</table>")
        self.add("".join(t))


def merge_catalog_identities(runs: list) -> None:
    """Let runs that differ only in their catalogue pool into one row, labelled with every
    catalogue they ran on (``report --merge-catalogs``)."""
    labels = sorted({catalog_label(r.identity) for r in runs})
    if len(labels) > 1:
        merged = {"name": " + ".join(labels)}
        for r in runs:
            r.identity = {**r.identity, "catalog": merged}


def make_report(dirs, out: str | Path | None = None, *, videos: bool = False, video_format: str | None = None,
                references: list | None = None, fps: float = 4.0, merge_catalogs: bool = False,
                mixed_presets: bool = False, unverified: bool = False, oracle: bool = False,
                studies=()) -> Path:
    """Write report.html for eval output folders (or lone episode folders); returns its path.
    ``out``: the folder for the page (default: the run folder when there is one, else
    required). ``references``: leaderboard reference rows to show in Table 2. Runs on
    different level catalogues (their recorded name and content hash) are never pooled into
    one row unless ``merge_catalogs``. Each run must verify (data.load_verified_run);
    ``unverified``: show one that does not, marked. ``oracle``: annotate every recorded step
    with the exact oracle (oracle_steps.py) for the step metrics and the timelines.
    ``studies``: study folders of the diagnostics lab, shown in the Diagnostics section
    (diagnostics.py); with studies alone (no run) the page holds only that section."""
    from longpuzzle.agents.report.diagnostics import load_study

    if isinstance(dirs, (str, Path)):
        dirs = [dirs]
    docs = [load_study(s) for s in studies]          # a folder that is not a study: refused first
    runs = load_verified_runs(dirs, unverified) if dirs else []
    if not runs and not docs:
        raise HarnessError("no run folders given")
    if merge_catalogs:
        merge_catalog_identities(runs)
    presets = sorted({str(r.identity.get("preset")) for r in runs})
    if len(presets) > 1 and not mixed_presets:
        raise HarnessError(f"these runs were made under different presets ({', '.join(presets)}): their conditions "
                           "differ (page, language, budget, protocol). Report them apart, or give --mixed-presets to "
                           "put them on one page (rows stay apart; the page says so)")
    if out is None:
        if len(runs) > 1:
            raise HarnessError("several runs: say where the report goes (--out DIR)")
        if not runs:
            raise HarnessError("say where the report goes (--out DIR)")
        out = runs[0].folder
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # figures are drawn into a temporary folder: the page embeds them, so nothing else is left
    with tempfile.TemporaryDirectory(prefix="longpuzzle-report-") as tmp:
        return _write_report(runs, out, Path(tmp), presets, videos, video_format, references, fps, oracle, docs)


def _write_report(runs, out: Path, work: Path, presets, videos, video_format, references, fps,
                  oracle: bool = False, studies: list | None = None) -> Path:
    page = _Page(out)
    page.add("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>longpuzzle report</title><style>{CSS}</style></head><body>")
    page.add("<h1>longpuzzle evaluation report</h1>")
    if runs:
        _runs_part(page, runs, out, work, presets, videos, video_format, references, fps, oracle,
                   has_studies=bool(studies))
    else:
        page.add(f"<p class='sub'>{len(studies)} stud{'ies' if len(studies) != 1 else 'y'} &middot; made "
                 f"{_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}</p>")
    if studies:
        from longpuzzle.agents.report.diagnostics import render
        render(page, studies, _e, _png_uri)
    page.add("</body></html>")
    path = out / "report.html"
    tmp = out / "report.html.tmp"
    tmp.write_text("\n".join(page.parts), encoding="utf-8")
    tmp.replace(path)
    return path


def _runs_part(page: _Page, runs, out: Path, work: Path, presets, videos, video_format, references, fps, oracle,
               has_studies: bool) -> None:
    """Everything the page says about the runs, and analytics.json beside it."""
    rows = group_runs(runs)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    page.add(f"<p class='sub'>{len(runs)} run{'s' if len(runs) != 1 else ''}: "
             + ", ".join(f"<code>{_e(r.folder)}</code>" for r in runs) + f" &middot; made {stamp}"
             + (" &middot; <a href='#diagnostics'>Diagnostics</a>" if has_studies else "") + "</p>")
    if len(presets) > 1:
        page.add(f"<p class='note'><b>These runs were made under different presets ({_e(', '.join(presets))}).</b> "
                 "Each table row keeps one preset (the harness column names it); the figures pool the episodes "
                 "of every run shown.</p>")
    bad = [r for r in runs if not r.trusted]
    if bad:
        page.add("<p class='sub'><strong>UNVERIFIED</strong> (shown with --unverified): "
                 + "; ".join(f"<code>{_e(r.folder)}</code>: {_e(r.verified)}" for r in bad) + "</p>")
    analyses = [an.analyze_run(r) for r in runs]
    if oracle:
        from longpuzzle.agents.report.oracle_steps import annotate_run     # lazy: the solvers' kernels
        shared: dict = {}
        for r, a in zip(runs, analyses):
            annotate_run(a, [x["dir"] for x in r.episodes if x.get("dir") is not None], shared)
    if videos:          # the slow part (a film per episode): said as it goes, on stderr
        page.videos_total = sum(len(a.get("episodes") or []) for a in analyses)
    _metrics_legend(page, rows)
    _table2(page, rows + list(references or []))
    _runs_section(page, runs)
    _usage_section(page, runs)
    if oracle:
        _oracle_section(page, runs, analyses)
    _table18(page, rows)
    _paper_figures(page, rows, work)
    for run, a in zip(runs, analyses):
        _analytics_section(page, run, a, work, out, videos, video_format, fps, many=len(runs) > 1)
    (out / "analytics.json").write_text(json.dumps(analyses if len(analyses) > 1 else analyses[0], indent=1),
                                        encoding="utf-8")


# ---- sections ---------------------------------------------------------------------------

def _metrics_legend(page: _Page, rows: list[Row]) -> None:
    keys = ["OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR"] + \
           [k for k in ("NGAR", "cost") if any(r.value(k) is not None for r in rows)] + ["score", "unscored"]
    page.add("<h2>What the numbers mean</h2><dl class='metrics'>"
             + "".join(f"<dt>{_e(k)}</dt><dd>{_e(help_for(k))}</dd>" for k in keys) + "</dl>"
             "<p class='note'>OSR, LC, FGP, LPR and LC_hard are averaged over each game's objectives, then over "
             "games; PER and SMR pool the episodes of the scope. A dash means the value does not exist for "
             "these runs (for example LC_hard without a harder tier).</p>")


def _table2(page: _Page, rows: list[Row]) -> None:
    cols = table2_columns(rows)
    page.add("<h2>Main results (the paper's Table 2 layout)</h2>")
    head = ["agent", "setting", "protocol", "harness", "catalogue", "covers", "episodes"] + cols
    body, cls = [], []
    for r in rows:
        body.append([(r.label,), (r.setting,), (r.protocol,), (r.harness,), (r.catalog,), (r.coverage,),
                     fmt(r.value("episodes"))] + [r.cell(k) for k in cols])
        cls.append("ref" if r.is_reference else "")
    page.table(head, body, cls, titles=["", "", "", "settings digest (style, budget)", "",
                                        "the objectives the row's runs cover", help_for("episodes")]
               + [help_for(k) for k in cols])
    refs = [r for r in rows if r.is_reference]
    if refs:
        page.add("<p class='note'>Rows in italics are reference figures: "
                 + "; ".join(f"{_e(r.label)}: {_e(r.source)}" for r in refs) + ".</p>")
    unscored = sum(int(r.metrics.get("unscored") or 0) for r in rows if not r.is_reference)
    if unscored:
        page.add(f"<p class='note'>{unscored} unscored episode(s) (infrastructure failures) are left out.</p>")


def _runs_section(page: _Page, runs: list[RunData]) -> None:
    page.add("<h2>Runs</h2>")
    head = ["folder", "verified", "agent", "protocol", "catalogue", "objectives", "episodes", "unscored", "SMR",
            "score", "settings"]
    body = []
    for r in runs:
        s = r.summary
        m = s.get("metrics") or {}
        st = s.get("settings") or {}
        body.append([(r.folder.name,), (r.verified if r.trusted else f"NO: {r.verified}",), (r.label,),
                     (r.identity.get("protocol") or MISSING,),
                     (catalog_label(r.identity),),
                     fmt(len(s.get("objectives") or [])), fmt(len(r.episodes)), fmt(m.get("unscored")),
                     fmt(m.get("SMR")), fmt(m.get("score")),
                     (", ".join(f"{k} {v}" for k, v in st.items() if v is not None) or MISSING,)])
    page.table(head, body, titles=["", "", "", "", "", "", "", help_for("unscored"), help_for("SMR"), help_for("score"),
                                   ""])


USAGE_KEYS = ("calls", "input_uncached", "input_cached", "output", "reasoning", "latency", "retries",
              "parse_failures", "compactions", "cost")


def _usage_section(page: _Page, runs: list[RunData]) -> None:
    """Model runs: calls, tokens, latency, retries, parse failures, compactions and cost in USD,
    for each run and each of its objectives (summary.json "usage", "usage_by_objective")."""
    body = []
    for r in runs:
        u = r.summary.get("usage")
        if not u:
            continue
        scopes = [("all", u)] + sorted((r.summary.get("usage_by_objective") or {}).items())
        for scope, v in scopes:
            body.append([(r.label,), (scope,)] + [
                (MISSING if v.get(k) is None else f"${v[k]:.4f}") if k == "cost" else fmt(v.get(k))
                for k in USAGE_KEYS])
    if body:
        page.add("<h2>Model usage and cost</h2>")
        page.table(["model", "scope"] + list(USAGE_KEYS), body)
        page.add("<p class='note'>Input tokens uncached and cached, output tokens (reasoning tokens are part of "
                 "them, where reported), latency in seconds including retries; cost from the price table "
                 "(agents/models/prices.json) or the provider file, a dash where no price is known.</p>")


def _oracle_section(page: _Page, runs: list[RunData], analyses: list[dict]) -> None:
    """This project's step metrics (not the paper's: kept out of its tables)."""
    page.add("<h2>Step metrics from the oracle (this project's, not the paper's)</h2>"
             "<p class='note'>Every recorded action judged by the exact oracle: its extra cost = its moves + "
             "d(after) - d(before), d the fewest moves to win. Optimal: extra cost 0; fatal: it lost a "
             "solvable board. Shares among the judged moves (neither on a lost board nor known only by "
             "bounds). Not part of the paper's metrics above.</p>")
    body = []
    for r, a in zip(runs, analyses):
        x = a.get("oracle") or {}
        body.append([(r.label,), (r.folder.name,), fmt(x.get("moves")), fmt(x.get("judged_moves")),
                     fmt(x.get("optimal_share")), fmt(x.get("fatal_actions")), fmt(x.get("fatal_rate")),
                     (MISSING if x.get("mean_extra_cost") is None else f"{x['mean_extra_cost']:.2f}",),
                     fmt(x.get("lost_board_moves")), fmt(x.get("inexact_moves"))])
    page.table(["agent", "run", "moves", "judged", "optimal (%)", "fatal actions", "fatal rate (%)",
                "mean extra cost", "moves on a lost board", "bounds only"], body)


def _table18(page: _Page, rows: list[Row]) -> None:
    page.add("<h2>Per objective (the paper's Table 18 layout)</h2>")
    head = ["agent", "objective"] + [TABLE18_TITLES.get(k, k) for k in TABLE18]
    body = []
    for r in rows:
        for o in r.objectives:
            body.append([(r.label,), (o.get("objective"),)] + [
                solved_text(o) if k == "solved" else fmt(o.get(k), k) for k in TABLE18])
    if body:
        page.table(head, body, titles=["", ""] + [help_for(k) for k in TABLE18])
    else:
        page.add("<p class='note'>No scored episodes.</p>")


def _paper_figures(page: _Page, rows: list[Row], work: Path) -> None:
    page.add("<h2>Figures</h2>")
    runs = [r for r in rows if r.objectives]
    pts = [(r.label, easiest_tier_lc(r.objectives), r.metrics.get("LC_hard")) for r in runs]
    page.figure(figures.figure_3a(pts, work / "figure_3a.png"),
                "Figure 3a: easiest-tier LC against harder-tier LC (LC_hard), one point per agent",
                "needs a run with an easiest and a harder tier of the same games")
    cat = builtin_catalog()          # the paper's tiers: the built-in levels' optimal lengths
    series = []
    for r in runs:
        pts3 = []
        for o in r.objectives:
            if o.get("game") == "maze_paint" and o.get("LC") is not None:
                opt = [cat.level(l).data.get("optimal_moves") for l in cat.objective(o["objective"]).level_ids]
                opt = [v for v in opt if v is not None]
                if opt:
                    pts3.append((o["difficulty"], sum(opt) / len(opt), o["LC"]))
        series.append((r.label, pts3))
    page.figure(figures.figure_3b(series, work / "figure_3b.png"),
                "Figure 3b: Maze Paint LC per tier against the tier's mean optimal number of slides",
                "needs Maze Paint objectives")
    page.figure(figures.figure_3c([(r.label, horizon_curve(r.objectives)) for r in runs], work / "figure_3c.png"),
                "Figure 3c: share of episodes that clear the first k levels of the ten-level objectives",
                "needs a ten-level objective (Rush Hour, Maze Paint, Color Connect)")


def _analytics_section(page: _Page, run: RunData, a: dict, work: Path, out: Path, videos: bool,
                       video_format: str | None, fps: float, many: bool) -> None:
    title = f"Trajectory analytics: {run.label}" + (f" ({run.folder.name})" if many else "")
    page.add(f"<h2>{_e(title)}</h2>")
    if a["lc_deficit"]:
        page.add("<h3>Where level completion was lost (LC deficit)</h3>"
                 "<p class='note'>100 - LC split into target levels never reached and levels reached but not "
                 "solved, in percent of the objective's levels, averaged over its episodes.</p>")
        page.table(["objective", "LC", "deficit", "unreached", "reached, unsolved"],
                   [[(o,), fmt(d["LC"]), fmt(d["deficit"]), fmt(d["unreached"]), fmt(d["reached_unsolved"])]
                    for o, d in a["lc_deficit"].items()])
        sp = a["lc_deficit_split"]
        page.add("<p class='note'>The paper's split (section 5.1), game-macro weighted as LC: 100 - LC = "
                 "(100 - R) + (R - LC), R the share of target levels reached; each game the mean of its objectives, "
                 "all games the mean of the games.</p>")
        page.table(["game", "LC", "R", "100 - LC", "100 - R (unreached)", "R - LC (reached, unsolved)",
                    "unreached share of the deficit (%)"],
                   [[(g,), fmt(d["LC"]), fmt(d["R"]), fmt(d["deficit"]), fmt(d["unreached"]),
                     fmt(d["reached_unsolved"]), fmt(d["unreached_share"])]
                    for g, d in list(sp["by_game"].items()) + [("all games", sp["overall"])]])
    if "maze_paint" in a:
        mp = a["maze_paint"]
        page.add("<h3>Maze Paint: moves by board coverage</h3><p class='note'>Valid moves (the ball moved), "
                 "binned by the coverage P before the move: the share that painted new cells and the share "
                 "that returned the board to an exact earlier state of the same attempt.</p>")
        body = []
        for al, un in zip(mp["all"], mp["unsolved"]):
            lo, hi = al["coverage"]
            body.append([(f"{100 * lo:.0f}-{100 * hi:.0f}%",), fmt(al["valid_moves"]), fmt(al["new_cells"]),
                         fmt(al["revisits"]), fmt(un["valid_moves"]), fmt(un["new_cells"]), fmt(un["revisits"])])
        page.table(["coverage", "valid moves", "paint new (%)", "return (%)", "unsolved: moves",
                    "paint new (%)", "return (%)"], body)
    if "bolt_unscrew" in a:
        bu = a["bolt_unscrew"]
        page.add("<h3>Bolt Unscrew: transfers by usable free holes before them</h3>")
        kinds = ("freed_board", "filled_hole", "opened_hole", "dead_end", "other")
        page.table(["free holes before", "transfers"] + [k.replace("_", " ") for k in kinds],
                   [[fmt(r["holes_before"]), fmt(r["transfers"])] + [fmt(r.get(k, 0)) for k in kinds]
                    for r in bu["by_holes_before"]]
                   + [[("all",), fmt(bu["transfers"])] + [fmt(bu["by_kind"].get(k, 0)) for k in kinds]])
    if "dead_ends" in a:
        d = a["dead_ends"]
        page.add("<h3>Dead ends</h3><p class='note'>Attempts whose board the evaluator certified unsolvable, "
                 "and the dead-end delay: transfers from the first unsolvable board (the fatal one included) "
                 "until an undo restored a solvable board or the attempt ended.</p>")
        page.table(["attempts", "with a dead end", "share (%)", "recovered by undo", "mean delay", "max delay"],
                   [[fmt(d["attempts"]), fmt(d["dead_end_attempts"]), fmt(d["share"]), fmt(d["recovered"]),
                     fmt(d["mean_delay"]), fmt(d["max_delay"])]])
        page.add("<p class='note'>By game, as the paper's Figure 2c: the attempts that reached a certified dead end "
                 "and the moves (accepted or rejected) they then played on the already lost board. Bolt Unscrew "
                 "under the paper's certificate (no usable free hole) and the exhaustive search's.</p>")
        rows = []
        for r in a["dead_ends_by_game"]:
            for cert, label in (("no_free_hole", "no free hole (paper)"), ("exhaustive", "exhaustive")):
                c = r[cert]
                if c is not None:
                    lm = c["lost_moves"]
                    rows.append([(r["game"],), (label,), fmt(r["attempts"]), fmt(c["dead_end_attempts"]),
                                 fmt(c["share"]), fmt(lm["median"]), fmt(lm["mean"])])
        page.table(["game", "certificate", "attempts", "reached a dead end", "share (%)",
                    "moves on the lost board: median", "mean"], rows)
    page.add("<h3>Episodes</h3>")
    eps = a["episodes"]
    for _i, (e, entry) in enumerate(zip(eps, [x for x in run.episodes if x.get("dir") is not None])):
        _episode(page, run, e, entry, work, out, videos, video_format, fps, open_=len(eps) <= 3)


def _episode(page: _Page, run: RunData, e: dict, entry: dict, work: Path, out: Path, videos: bool,
             video_format: str | None, fps: float, open_: bool) -> None:
    name = e["episode"]
    slug = (run.folder.name + "_" + name).replace("/", "_").replace(" ", "_")
    d = e.get("lc_deficit") or {}
    solved = f"{entry.get('solved', MISSING)}/{entry.get('target_levels', MISSING)}"
    page.add(f"<details{' open' if open_ else ''}><summary>{_e(name)}: {_e(entry.get('objective', ''))}, "
             f"{_e(entry.get('end', MISSING))}, solved {_e(solved)}, {_e(e['actions'])} actions</summary>")
    facts = [f"scored: {fmt(entry.get('scored', True))}", f"actions: {e['actions']}",
             f"seconds: {fmt(entry.get('seconds'))}"]
    if d:
        facts.append(f"LC deficit {fmt(d['deficit'])}% = unreached {fmt(d['unreached'])}% + "
                     f"reached but unsolved {fmt(d['reached_unsolved'])}%")
    if entry.get("error"):
        facts.append(f"error: {entry['error']}")
    page.add("<p>" + " &middot; ".join(_e(f) for f in facts) + "</p>")
    if videos and entry.get("dir") is not None:
        page.videos_done += 1
        print(f"report: video {page.videos_done} of {page.videos_total}: {entry['dir']}", file=sys.stderr,
              flush=True)
        link = _video(Path(entry["dir"]), out, slug, video_format, fps)
        if link:
            page.add(f"<p>Video: <a href='{_e(link)}'>{_e(link)}</a></p>")
    elif entry.get("dir") is not None:     # videos on demand: the command that makes this one
        page.add(f"<p class='note'>Video: <code>longpuzzle video {_e(entry['dir'])} --out {_e(slug)}.mp4</code> "
                 "(or <code>report --videos</code>)</p>")
    _tool_use(page, entry.get("tools"))
    atts = e["attempts"]
    if atts:
        body = []
        for a in atts:
            de = MISSING if a["dead_end_step"] is None else f"step {a['dead_end_step']} (transfer {a['dead_end_transfer']})"
            body.append([(a["level"],), fmt(a["number"]), (a["end"],), fmt(a["actions"]), fmt(a["moves"]),
                         fmt(a["rejected"]), fmt(a["undos"]), f"{a['P_start']:.2f} -> {a['P_end']:.2f}",
                         fmt(a["P_max"]), (de,), fmt(a["dead_end_delay"]),
                         fmt(a["dead_end_recovered"]) if a["dead_end_step"] is not None else MISSING])
        page.table(["level", "attempt", "ended", "actions", "moves", "rejected", "undos", "P", "best P",
                    "dead end", "delay", "recovered"], body)
    cap = f"{name}: progress P per level over actions (triangles: restarts, crosses: certified dead ends)"
    if e.get("oracle"):
        o = e["oracle"]
        f = o["first_fatal"]
        cap += ("; under it the oracle timeline (this project's): d(s), the fewest moves left to win, after "
                "each action; grey squares: actions on a lost board, red crosses: fatal actions"
                + (f" (the first at action {f[0]})" if f else "") + f"; optimal moves {fmt(o['optimal_share'])}%")
    page.figure(figures.progress(e, work / f"{slug}_progress.png"), cap)
    page.figure(figures.figure_4a(e, work / f"{slug}_holes.png"),
                f"{name}: Figure 4a, Bolt Unscrew usable free holes before each transfer along each attempt "
                "(crosses: the transfer that made the board a dead end)")
    page.add("</details>")


def _tool_use(page: _Page, tools: dict | None) -> None:
    """An episode played through the VISTA / MCP tools: calls by tool, images and bytes sent
    and the model's tokens per level (result.json "tools", agents/vista/records.py)."""
    if not tools or not tools.get("levels"):
        return
    body = []
    for lv in tools["levels"] + [{"level": "all", **{k: tools[k] for k in ("calls", "by_tool", "images", "bytes")},
                                  "tokens": None}]:
        tok = lv.get("tokens")
        by = ", ".join(f"{k} {v}" for k, v in sorted(lv["by_tool"].items(), key=lambda kv: -kv[1]))
        body.append([(lv["level"] or "(menus)",), fmt(lv["calls"]), (by,), fmt(lv["images"]),
                     fmt(round(lv["bytes"] / 1024)), fmt(tok["input"]) if tok else MISSING,
                     fmt(tok["output"]) if tok else MISSING])
    page.add(f"<p>Tools ({_e(tools.get('setting') or MISSING)} setting): {fmt(tools['calls'])} calls, "
             f"{fmt(tools['errors'])} refused, {fmt(tools.get('checkpoints', 0))} checkpoints</p>")
    page.table(["level", "calls", "by tool", "images", "KiB sent", "input tokens", "output tokens"], body)


def _video(folder: Path, out: Path, slug: str, video_format: str | None, fps: float) -> str | None:
    from longpuzzle.agents.report.video import VideoError, mp4_available, write_video   # lazy: ffmpeg, for videos only

    fmt_ = video_format or ("mp4" if mp4_available() else "gif")
    path = out / "videos" / f"{slug}.{fmt_}"
    events = folder / "events.jsonl"
    newest = max((p.stat().st_mtime for p in [events, *folder.glob("level_*/events.jsonl")] if p.is_file()),
                 default=0.0)
    if not (path.is_file() and path.stat().st_mtime >= newest):
        try:        # a GIF holds every frame in memory while it is written: half size, a quarter of it
            write_video(folder, path, fps=fps, scale=0.5 if fmt_ == "gif" else 1.0)
        except VideoError:
            return None
    return str(path.relative_to(out))
