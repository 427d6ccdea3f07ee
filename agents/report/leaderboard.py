"""``longpuzzle leaderboard RUN_DIR... [--out DIR]``: runs compared in one table.

Runs of the same identity (model or agent, provider, harness configuration, protocol,
action setting, level catalogue; data.IDENTITY_KEYS) are pooled into one row, their scored
episodes together (tables.group_runs); runs that differ in any of these are never merged.
Rows covering the same objectives are ranked together (by OSR, then LC, then FGP), each
coverage on its own (the widest first): runs of different objectives are not comparable.
Output: a table on the terminal, and with
``--out DIR`` also leaderboard.csv, leaderboard.json and leaderboard.html (self-contained).

Reference rows (``--reference FILE``, repeatable) are published figures kept as data with
their source, shown beside the runs and marked as such, never merged with them. A reference
file is JSON::

    {"format": "longpuzzle-reference/1",
     "source": "where the figures come from (paper, table, version)",
     "rows": [{"model": "Some-Model", "provider": "Some provider", "setting": "native",
               "protocol": "objective", "episodes": 24,
               "OSR": 12.5, "LC": 40.0, "FGP": 55.1, "LPR": 60.2, "H50": 3, "LC_hard": 20.0,
               "PER": 4.2, "SMR": 0.0, "NGAR": null, "cost": 12.3}, ...]}

Every metric is optional (null or absent prints "-"); a row may carry its own ``source``.
The repository ships no reference file: the paper's published Table 2 figures are not part
of the project's reference material, so none are invented here.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from pathlib import Path

from longpuzzle.agents.harness import HarnessError
from longpuzzle.agents.metrics import METRIC_HELP
from longpuzzle.agents.report.data import IDENTITY_KEYS, load_verified_runs, read_json
from longpuzzle.agents.report.tables import (
    OPTIONAL, MISSING, Row, all_objectives, comparable_ranks, fmt, group_runs,
)

REFERENCE_FORMAT = "longpuzzle-reference/1"
METRICS = ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR", "NGAR", "cost", "score")
REFERENCE_FIELDS = ("model", "agent", "provider", "setting", "protocol", "harness", "catalog", "preset", "episodes",
                    "source", "unscored") + METRICS


class ReferenceError(HarnessError):
    """A reference file that cannot be used (names the file, row and field)."""


def load_reference(path: str | Path) -> list[Row]:
    """Reference rows from a JSON file of the format above."""
    path = Path(path)
    if not path.is_file():
        raise ReferenceError(f"{path}: no such reference file")
    doc = read_json(path, "reference file")
    if not isinstance(doc, dict) or doc.get("format") != REFERENCE_FORMAT:
        raise ReferenceError(f"{path}: not a reference file (\"format\" must be {REFERENCE_FORMAT!r})")
    source = doc.get("source")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ReferenceError(f"{path}: \"rows\" must be a non-empty list")
    out = []
    for i, r in enumerate(rows, 1):
        where = f"{path}: row {i}"
        if not isinstance(r, dict):
            raise ReferenceError(f"{where} is not a JSON object")
        bad = sorted(set(r) - set(REFERENCE_FIELDS))
        if bad:
            raise ReferenceError(f"{where}: unknown field(s) {', '.join(bad)} (known: {', '.join(REFERENCE_FIELDS)})")
        if not (r.get("model") or r.get("agent")):
            raise ReferenceError(f"{where}: needs a \"model\" (or \"agent\") name")
        src = r.get("source") or source
        if not src or not isinstance(src, str):
            raise ReferenceError(f"{where}: no source (give \"source\" for the file or the row)")
        metrics = {}
        for k in METRICS + ("episodes", "unscored"):
            v = r.get(k)
            if v is None:
                continue
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if k == "H50" and isinstance(v, str) and v.endswith("+") and v[:-1].isdigit():
                ok = True
            if not ok:
                raise ReferenceError(f"{where}: field {k!r} must be a number (or null), not {v!r}")
            metrics[k] = v
        identity = {k: r.get(k) for k in IDENTITY_KEYS}
        if identity.get("harness") is None:
            identity["harness"] = "published"
        out.append(Row(identity, metrics=metrics, source=src))
    return out


def _rank_key(r: Row):
    """Rows covering the same objectives together (the widest coverage first), each group
    ranked by OSR, then LC, then FGP: runs of different objectives are not comparable."""
    def v(k):
        x = r.value(k)
        return -x if isinstance(x, (int, float)) and not (isinstance(x, float) and math.isnan(x)) else math.inf
    c = r.covers
    return (-(len(all_objectives()) if c is None else len(c)), r.coverage, v("OSR"), v("LC"), v("FGP"))


def leaderboard(dirs, references=(), unverified: bool = False) -> list[Row]:
    """Rows for the run folders (pooled by identity) and the reference files, ranked. Each
    run must verify (data.load_verified_run); ``unverified``: show one that does not, marked."""
    runs = load_verified_runs(dirs, unverified)
    rows = group_runs(runs)
    for f in references:
        rows.extend(load_reference(f))
    return sorted(rows, key=_rank_key)


def columns(rows: list[Row]) -> list[str]:
    return [k for k in METRICS if k not in OPTIONAL or any(r.value(k) is not None for r in rows)]


def as_records(rows: list[Row]) -> list[dict]:
    """Plain rows for CSV and JSON: rank, identity, metrics, where they come from."""
    out = []
    for i, r in zip(comparable_ranks(rows), rows):
        rec = {"rank": i, "label": r.label, **{k: r.identity.get(k) for k in IDENTITY_KEYS},
               "covers": r.coverage, "objectives": list(r.covers) if r.covers is not None else None,
               "harness_label": r.harness, "catalog_label": r.catalog,
               "runs": [str(x.folder) for x in r.runs], "verified": [x.verified for x in r.runs],
               "episodes": r.value("episodes"),
               "unscored": r.metrics.get("unscored"),
               **{k: r.value(k) for k in METRICS}, "H50_partial": r.cell("H50").endswith(")"),
               "reference": r.is_reference, "source": r.source or None}
        out.append(rec)
    return out


def text_table(rows: list[Row]) -> str:
    cols = columns(rows)
    head = ["#", "agent", "setting", "protocol", "harness", "catalogue", "covers", "eps"] + cols
    body = []
    for i, r in zip(comparable_ranks(rows), rows):
        mark = " *" if r.is_reference else " !" if any(not x.trusted for x in r.runs) else ""
        body.append([str(i), r.label + mark, r.setting, r.protocol, r.harness, r.catalog, r.coverage,
                     fmt(r.value("episodes"))] + [r.cell(k) for k in cols])
    widths = [max(len(h), *(len(b[j]) for b in body)) if body else len(h) for j, h in enumerate(head)]
    left = {1, 2, 3, 4, 5, 6}

    def line(cells):
        return "  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths)))
    lines = [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]
    refs = [r for r in rows if r.is_reference]
    if refs:
        lines.append("")
        lines += [f"* reference: {r.label}: {r.source}" for r in refs]
    runs = [x for r in rows for x in r.runs]
    if runs:                                  # how each run's numbers were verified
        lines.append("")
        lines += [f"{'! ' if not x.trusted else ''}{x.folder}: {x.verified}" for x in runs]
    return "\n".join(lines)


def write_csv(rows: list[Row], path: Path) -> None:
    recs = as_records(rows)
    buf = io.StringIO()
    fields = list(recs[0]) if recs else ["rank"]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for rec in recs:
        w.writerow({k: (json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else
                        "" if v is None else v) for k, v in rec.items()})
    path.write_text(buf.getvalue(), encoding="utf-8")


def write_json(rows: list[Row], path: Path) -> None:
    path.write_text(json.dumps({"format": "longpuzzle-leaderboard/1", "identity_keys": list(IDENTITY_KEYS),
                                "rows": as_records(rows)}, indent=1), encoding="utf-8")


def write_html(rows: list[Row], path: Path) -> None:
    e = html.escape
    cols = columns(rows)
    head = ["#", "agent", "setting", "protocol", "harness", "catalogue", "covers", "episodes"] + cols
    h = ["<!doctype html><html lang='en'><head><meta charset='utf-8'><title>longpuzzle leaderboard</title><style>",
         "body{font-family:system-ui,sans-serif;margin:28px;color:#1d1d1f}table{border-collapse:collapse}"
         "th,td{border:1px solid #d6d6d6;padding:4px 9px}th{background:#f2f4f7}td{text-align:right;"
         "font-variant-numeric:tabular-nums}td.t{text-align:left}tr.ref td{font-style:italic;color:#555}"
         "dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:.9em}dt{font-weight:600}"
         "dd{margin:0}.note{color:#777;font-size:.9em}",
         "</style></head><body><h1>longpuzzle leaderboard</h1><table><tr>"]
    h += [f"<th title='{e(METRIC_HELP.get(c, ''), quote=True)}'>{e(c)}</th>" for c in head]
    h.append("</tr>")
    for i, r in zip(comparable_ranks(rows), rows):
        cells = [(str(i), False), (r.label, True), (r.setting, True), (r.protocol, True), (r.harness, True),
                 (r.catalog, True), (r.coverage, True), (fmt(r.value("episodes")), False)] \
            + [(r.cell(k), False) for k in cols]
        if any(not x.trusted for x in r.runs):
            cells[1] = (r.label + " (UNVERIFIED)", True)
        h.append(f"<tr{' class=ref' if r.is_reference else ''}>"
                 + "".join(f"<td{' class=t' if t else ''}>{e(c)}</td>" for c, t in cells) + "</tr>")
    h.append("</table>")
    refs = [r for r in rows if r.is_reference]
    if refs:
        h.append("<p class='note'>Italic rows are published reference figures: "
                 + "; ".join(f"{e(r.label)}: {e(r.source)}" for r in refs) + ".</p>")
    runs = [x for r in rows for x in r.runs]
    if runs:
        h.append("<p class='note'>How each run's numbers were verified: "
                 + "; ".join(f"{e(str(x.folder))}: {e(x.verified)}" for x in runs) + ".</p>")
    h.append("<p class='note'>Rows are ranked only against rows that cover the same objectives (the rank "
             "restarts for each coverage); an H50 marked partial reads fewer than the benchmark's eight ten-level "
             "objectives.</p>")
    h.append("<p class='note'>Runs are pooled only when model, provider, harness configuration, protocol, "
             f"setting, catalogue and preset all match (the harness column names the preset); {MISSING} marks a value "
             "that does not exist.</p><dl>")
    h += [f"<dt>{e(k)}</dt><dd>{e(METRIC_HELP[k])}</dd>" for k in cols if k in METRIC_HELP]
    h.append("</dl></body></html>")
    path.write_text("\n".join(h), encoding="utf-8")


def write_all(rows: list[Row], out: str | Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "leaderboard.csv", out / "leaderboard.json", out / "leaderboard.html"]
    write_csv(rows, paths[0])
    write_json(rows, paths[1])
    write_html(rows, paths[2])
    return paths
