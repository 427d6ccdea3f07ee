"""Convert the reference benchmark's Rush Hour data (rush_hour_2) into our level file.

    python puzzles/levels/convert_rush_hour.py ../shared/reference/longpuzzlebench/levels/rush_hour_2.json

Run once; the output (puzzles/levels/rush_hour.json) is the project's data from then on.
The reference solution is stored as move texts (``vehicle_id+N`` / ``vehicle_id-N``), the
same syntax the game accepts. Objectives keep the catalogue's slot order (easy, medium, hard).
"""
import json
import re
import sys
from pathlib import Path

VEHICLE_KEYS = ("id", "row", "col", "length", "orientation", "style", "color", "flip_visual", "target")

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    objectives.setdefault(lv["difficulty"], []).append({
        "name": lv["id"],
        "rows": lv["rows"],
        "cols": lv["cols"],
        "exit_row": lv["exit_row"],
        "exit_side": lv["exit_side"],
        "hint_count": lv["hint_count"],
        "vehicles": [{k: v[k] for k in VEHICLE_KEYS if k in v} for v in lv["vehicles"]],
        "blockers": [{"id": b["id"], "row": b["row"], "col": b["col"], "style": b.get("style", "bush")}
                     for b in lv["blockers"]],
        "reference_solution": [f"{m['vehicle_id']}{'+' if m['delta'] > 0 else '-'}{abs(m['delta'])}"
                               for m in lv["reference_solution"]],
        "optimal_moves": lv["optimal_moves"],
    })
doc = {
    "format": "longpuzzle-levels/1",
    "game": "rush_hour",
    "source": "converted from LongPuzzleBench TruckEscape2Data / TruckEscape2ReferenceSolutions (game rush_hour_2)",
    "notes": ("grid cells zero-based, row 0 at the top; a vehicle's row/col is its top-left cell; horizontal "
              "vehicles slide left/right, vertical ones up/down; the target leaves through the right edge of "
              "exit_row (won when col + length == cols); blockers are fixed one-cell bushes; "
              "reference_solution moves are vehicle_id+N (right/down) or vehicle_id-N (left/up); "
              "style / color / flip_visual are cosmetic"),
    "objectives": [{"difficulty": d, "levels": ls} for d, ls in objectives.items()],
}
out = Path(__file__).with_name("rush_hour.json")
text = json.dumps(doc, indent=1, ensure_ascii=False)


def one_line(m):
    return json.dumps(json.loads(m.group(0)), ensure_ascii=False)


# one vehicle / blocker per line, and the reference solution on one line
text = re.sub(r'\{\n\s+"id": [^{}\[\]]*?\n\s+\}', one_line, text)
text = re.sub(r'\[\n\s+("[\w]+[+-]\d+",?\n\s+)+\]', one_line, text)
out.write_text(text + "\n", encoding="utf-8")
print(f"wrote {out}")
