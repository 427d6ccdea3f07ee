"""``longpuzzle report DIR``: a readable summary of an eval output folder.

Writes into DIR: report.html (metrics tables, per-objective and per-episode results, plots)
and plots/*.png: progress P over actions per episode (one line per level), and where the game
reports usable holes (Bolt Unscrew's diagnostics), the free holes after each move with the
certified dead ends marked. Plots are drawn with Pillow (no plotting library needed).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from PIL import Image, ImageDraw

from longpuzzle.agents.harness import HarnessError, read_events

W, H, PAD = 720, 320, 46
COLOURS = [(30, 136, 229), (229, 57, 53), (67, 160, 71), (251, 140, 0), (142, 36, 170), (0, 151, 167),
           (109, 76, 65), (57, 73, 171), (192, 202, 51), (236, 64, 122)]


def _plot(series: dict[str, list[tuple[float, float]]], title: str, ymax: float, marks=(), path: Path = None):
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    xmax = max([x for pts in series.values() for x, _ in pts] + [1])
    ymax = ymax or 1.0

    def P(x, y):
        return PAD + (W - 2 * PAD) * x / xmax, H - PAD - (H - 2 * PAD) * y / ymax
    d.rectangle([PAD, PAD, W - PAD, H - PAD], outline=(180, 180, 180))
    for i in range(5):
        y = ymax * i / 4
        _, py = P(0, y)
        d.line([PAD, py, W - PAD, py], fill=(235, 235, 235))
        d.text((6, py - 6), f"{y:g}", fill=(90, 90, 90))
    d.text((PAD, 12), title, fill=(20, 20, 20))
    d.text((W - PAD - 60, H - PAD + 14), f"actions ({xmax:g})", fill=(90, 90, 90))
    for i, (name, pts) in enumerate(series.items()):
        c = COLOURS[i % len(COLOURS)]
        if len(pts) > 1:
            d.line([P(x, y) for x, y in pts], fill=c, width=2)
        for x, y in pts[-1:]:
            px, py = P(x, y)
            d.ellipse([px - 3, py - 3, px + 3, py + 3], fill=c)
        d.text((W - PAD + 4 - 100, PAD + 4 + 12 * i), name[-18:], fill=c)
    for x, y in marks:
        px, py = P(x, y)
        d.line([px - 5, py - 5, px + 5, py + 5], fill=(200, 0, 0), width=2)
        d.line([px - 5, py + 5, px + 5, py - 5], fill=(200, 0, 0), width=2)
    img.save(path)


def episode_folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("events.jsonl"))


def make_report(root: str | Path) -> Path:
    root = Path(root)
    if not root.is_dir():
        raise HarnessError(f"{root} is not a folder")
    folders = episode_folders(root)
    if not folders:
        raise HarnessError(f"{root} holds no episodes (no events.jsonl below it)")
    plots = root / "plots"
    plots.mkdir(exist_ok=True)
    summary = json.loads((root / "summary.json").read_text()) if (root / "summary.json").is_file() else None
    rows = []
    for k, folder in enumerate(folders):
        ev = read_events(folder)
        series: dict[str, list] = {}
        holes: dict[str, list] = {}
        dead = []
        for rec in ev:
            if rec.get("stream") != "private":
                continue
            r = rec["record"]
            if r.get("level") and r.get("P") is not None:
                series.setdefault(r["level"], []).append((rec["step"], r["P"]))
            dg = r.get("diagnostics") or {}
            if "usable_holes" in dg:
                holes.setdefault(r["level"], []).append((rec["step"], dg["usable_holes"]))
                if r.get("certificate") == "dead_end":
                    dead.append((rec["step"], dg["usable_holes"]))
        name = str(folder.relative_to(root)).replace("/", "_") or "episode"
        p1 = plots / f"{name}_progress.png"
        _plot(series, f"{folder.relative_to(root)}: progress P per level", 1.0, path=p1)
        imgs = [p1]
        if holes:
            p2 = plots / f"{name}_holes.png"
            ym = max(v for pts in holes.values() for _, v in pts) or 1
            _plot(holes, "usable free holes after each move (x = certified dead end)", ym, dead, p2)
            imgs.append(p2)
        res = json.loads((folder / "result.json").read_text()) if (folder / "result.json").is_file() else {}
        rows.append((folder.relative_to(root), res, imgs))
    out = root / "report.html"
    parts = ["<!doctype html><meta charset='utf-8'><title>longpuzzle report</title>",
             "<style>body{font-family:sans-serif;margin:24px}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f3f3f3}</style>",
             f"<h1>longpuzzle evaluation report</h1><p>{html.escape(str(root))}</p>"]
    if summary:
        m = summary.get("metrics", {})
        parts.append("<h2>Metrics</h2><table><tr>" + "".join(f"<th>{k}</th>" for k in m) + "</tr><tr>"
                     + "".join(f"<td>{_fmt(v)}</td>" for v in m.values()) + "</tr></table>")
        objs = summary.get("objectives", [])
        if objs:
            keys = ["objective", "episodes", "OSR", "LC", "FGP", "LPR", "PER", "SMR"]
            parts.append("<h2>Objectives</h2><table><tr>" + "".join(f"<th>{k}</th>" for k in keys) + "</tr>")
            for o in objs:
                parts.append("<tr>" + "".join(f"<td>{html.escape(_fmt(o.get(k)))}</td>" for k in keys) + "</tr>")
            parts.append("</table>")
    parts.append("<h2>Episodes</h2>")
    for rel, res, imgs in rows:
        parts.append(f"<h3>{html.escape(str(rel))}</h3><p>end: {html.escape(str(res.get('end', res.get('termination', '?'))))}"
                     f", solved {res.get('solved', '?')} of {res.get('target_levels', '?')}, actions {res.get('actions', res.get('steps', '?'))}</p>")
        for im in imgs:
            parts.append(f"<img src='{im.relative_to(root)}' width='{W}'>")
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return "n/a" if v != v else f"{v:.1f}"
    return str(v)
