"""The report's Diagnostics section: any study folder of the diagnostics lab (issue 39,
contract 3: ``study.json`` with tables and figure PNGs, ``units.jsonl``), rendered the same
way whatever the experiment (takeover, retry, rules, branch, judge, rq1, ...).

A study folder is data from elsewhere, so nothing in it is trusted: every string is escaped
(titles, column names, cells, notes), a cell that is not a plain value is shown as its JSON,
and a figure is embedded only when its path stays inside the study folder and the file is a
PNG of reasonable size (else the page says why it is left out). A folder that is not a study
is refused with one line (HarnessError) before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

from longpuzzle.agents.harness import HarnessError

STUDY_KIND = "longpuzzle-study"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_FIGURE_BYTES = 20 * 2 ** 20
MAX_STUDY_BYTES = 50 * 2 ** 20


def load_study(folder: str | Path) -> dict:
    """study.json of a study folder, checked for the form the section renders (HarnessError,
    one line, when it is not one), with ``units`` counted from units.jsonl: {"valid",
    "replaced", "other"} (lines that are not records are counted as "unreadable")."""
    folder = Path(folder)
    p = folder / "study.json"
    if not p.is_file():
        raise HarnessError(f"{folder} is not a study folder (no study.json)")
    if p.stat().st_size > MAX_STUDY_BYTES:
        raise HarnessError(f"{p} is larger than any study writes")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise HarnessError(f"{p} is not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("kind") != STUDY_KIND:
        raise HarnessError(f"{p} is not a study (kind is not {STUDY_KIND!r})")
    if doc.get("version") != 1:
        raise HarnessError(f"{p}: study version {str(doc.get('version'))[:20]!r} is not one this report reads (1)")
    for key in ("tables", "figures"):
        if not isinstance(doc.get(key, []), list):
            raise HarnessError(f"{p}: {key!r} is not a list")
    for t in doc.get("tables", []):
        if not isinstance(t, dict) or not isinstance(t.get("columns", []), list) \
                or not isinstance(t.get("rows", []), list) \
                or not all(isinstance(r, list) for r in t.get("rows", [])):
            raise HarnessError(f"{p}: a table is not {{'columns': [...], 'rows': [[...], ...]}}")
    counts = {"valid": 0, "replaced": 0, "other": 0, "unreadable": 0}
    u = folder / "units.jsonl"
    if u.is_file():
        with open(u, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    counts["unreadable"] += 1
                    continue
                status = rec.get("status") if isinstance(rec, dict) else None
                counts[status if status in ("valid", "replaced") else "other"] += 1
    doc["_units"] = counts
    doc["_folder"] = folder
    return doc


def figure_path(folder: Path, rel) -> tuple[Path | None, str]:
    """The figure file a study names, or None and why it is left out."""
    if not isinstance(rel, str) or not rel:
        return None, "no path"
    p = Path(rel)
    if p.is_absolute():
        return None, "an absolute path"
    root = folder.resolve()
    full = (folder / p).resolve()
    if not full.is_relative_to(root):
        return None, "a path outside the study folder"
    if not full.is_file():
        return None, "missing"
    if full.stat().st_size > MAX_FIGURE_BYTES:
        return None, "too large"
    with open(full, "rb") as f:
        if f.read(8) != PNG_MAGIC:
            return None, "not a PNG"
    return full, ""


def cell(v) -> str:
    """A table cell as text: plain values as they are, anything else as its JSON."""
    if v is None:
        return "-"
    if isinstance(v, (str, int, float, bool)):
        return str(v)
    return json.dumps(v, ensure_ascii=False, default=str)


def render(page, studies: list[dict], esc, png_uri) -> None:
    """The Diagnostics section on ``page`` (report/page._Page): per study its identity, unit
    counts, tables and figures. ``esc`` escapes text, ``png_uri`` embeds a PNG."""
    page.add("<h2 id='diagnostics'>Diagnostics</h2>"
             "<p class='note'>Studies of the diagnostics lab (<code>longpuzzle diagnose</code>): each on exact, "
             "restored states; counts are paired, intervals are bootstrap intervals over source levels as each "
             "table's note says.</p>")
    for doc in studies:
        folder = doc["_folder"]
        exp = cell(doc.get("experiment"))
        page.add(f"<h3>{esc(exp)}: <code>{esc(folder.name)}</code></h3>")
        u = doc["_units"]
        facts = [f"agent {cell(doc.get('agent')) or '-'}", f"seed {cell(doc.get('seed'))}",
                 f"{cell(doc.get('draws'))} bootstrap draws",
                 f"{u['valid']} valid continuation(s), {u['replaced']} replaced"]
        cat = doc.get("catalog")
        if isinstance(cat, dict) and cat.get("name"):
            facts.append(f"catalogue {cell(cat.get('name'))}")
        if u["unreadable"]:
            facts.append(f"{u['unreadable']} unreadable line(s) in units.jsonl")
        page.add(f"<p class='sub'>{esc('; '.join(facts))}</p>")
        for t in doc.get("tables", []):
            page.add(f"<h4>{esc(cell(t.get('title') or t.get('id') or 'table'))}</h4>")
            page.table([cell(c) for c in t.get("columns", [])], [[(cell(v),) for v in r] for r in t.get("rows", [])])
            if t.get("note"):
                page.add(f"<p class='note'>{esc(cell(t['note']))}</p>")
        for f in doc.get("figures", []):
            if not isinstance(f, dict):
                continue
            caption = cell(f.get("title") or f.get("id") or "figure")
            path, why = figure_path(folder, f.get("png"))
            if path is None:
                page.add(f"<p class='note'>{esc(caption)}: left out ({esc(why)}).</p>")
            else:
                page.images += 1
                page.add(f"<figure><img src='{png_uri(path)}' alt='{esc(caption)}'>"
                         f"<figcaption>{esc(caption)}</figcaption></figure>")
