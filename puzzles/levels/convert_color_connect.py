"""Convert the reference benchmark's Color Connect data into our level file.

    python puzzles/levels/convert_color_connect.py ../shared/reference/longpuzzlebench/levels/color_connect.json

Each record keeps the grid size, one pair per line ({"color", "display_color", "endpoints":
[[row, col], [row, col]]}, 0-based, row 0 at the top) and the reference paths as route texts
"color:r,c-r,c-..." (one per line), which replay to a win in `longpuzzle check`.
"""
import json
import sys
from pathlib import Path

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    assert not lv["blocked_cells"] and lv["require_full_coverage"] is False, lv["id"]
    pairs = [{"color": p["color"], "display_color": p["display_color"],
              "endpoints": [[p["start"]["row"], p["start"]["col"]], [p["end"]["row"], p["end"]["col"]]]}
             for p in lv["pairs"]]
    sol = lv["reference_solution"]
    routes = [f"{p['color']}:" + "-".join(f"{r},{c}" for r, c in sol[p["color"]]) for p in lv["pairs"]]
    objectives.setdefault(lv["difficulty"], []).append({
        "name": lv["id"],
        "source_title": lv["source_title"],
        "rows": lv["rows"],
        "cols": lv["cols"],
        "pairs": pairs,
        "solution": routes,
    })


def dump(v):
    return json.dumps(v, ensure_ascii=False)


# Written by hand so that a person can read it: one pair and one route per line.
out_lines = [
    "{",
    ' "format": "longpuzzle-levels/1",',
    ' "game": "color_connect",',
    ' "source": "converted from LongPuzzleBench ColorConnectLevelData (COLOR_CONNECT_LEVELS)",',
    ' "notes": ' + dump("cells are [row, col], 0-based, row 0 at the top; every board is a full rectangle; "
                       "the level is won when every pair is connected (filling the board is not required); "
                       "solution = the reference paths as route texts 'color:r,c-r,c-...'; source_title = "
                       "the title in the source screenshot (hard 7-10 differ from their slot number)") + ",",
    ' "objectives": [',
]
objs = list(objectives.items())
for oi, (diff, levels) in enumerate(objs):
    out_lines += ["  {", f'   "difficulty": {dump(diff)},', '   "levels": [']
    for li, rec in enumerate(levels):
        out_lines.append("    {")
        out_lines.append(f'     "name": {dump(rec["name"])}, "source_title": {dump(rec["source_title"])},')
        out_lines.append(f'     "rows": {rec["rows"]}, "cols": {rec["cols"]},')
        out_lines.append('     "pairs": [')
        for pi, p in enumerate(rec["pairs"]):
            out_lines.append("      " + dump(p) + ("," if pi < len(rec["pairs"]) - 1 else ""))
        out_lines.append("     ],")
        out_lines.append('     "solution": [')
        for ri, r in enumerate(rec["solution"]):
            out_lines.append("      " + dump(r) + ("," if ri < len(rec["solution"]) - 1 else ""))
        out_lines.append("     ]")
        out_lines.append("    }" + ("," if li < len(levels) - 1 else ""))
    out_lines += ["   ]", "  }" + ("," if oi < len(objs) - 1 else "")]
out_lines += [" ]", "}"]
text = "\n".join(out_lines) + "\n"
doc = json.loads(text)   # the hand-written layout must be valid JSON with the same content
assert doc["objectives"] == [{"difficulty": d, "levels": ls} for d, ls in objs]
out = Path(__file__).with_name("color_connect.json")
out.write_text(text, encoding="utf-8")
print(f"wrote {out}")
