"""Convert the reference benchmark's Truck Escape data into our level file.

    python puzzles/levels/convert_truck_escape.py ../shared/reference/longpuzzlebench/levels/truck_escape.json

Run once; the output (puzzles/levels/truck_escape.json) is the project's data from then on.
The reference data is a re-run of the original seeded generator; its placement order
(t0, t1, ...) is a valid clearing order and is stored as ``clearing_order``.
"""
import json
import re
import sys
from pathlib import Path

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    trucks = sorted(lv["trucks"], key=lambda t: t["placement_index"])
    objectives.setdefault(lv["difficulty"], []).append({
        "name": f"truck_escape_{lv['level']}",
        "title": lv["title"],
        "instruction": lv["instruction"],
        "rows": lv["rows"],
        "cols": lv["cols"],
        "cell_size": lv["cell_size"],
        "truck_length": lv["truck_length"],
        "truck_width": lv["truck_width"],
        "design_target_count": lv["design_target_count"],
        "generator_seed": lv["generator_seed"],
        "generator_attempt_used": lv["generator_attempt_used"],
        "screen_scale": lv["screen_scale"],
        "screen_field_origin": [lv["screen_field_origin_540x960"]["x"], lv["screen_field_origin_540x960"]["y"]],
        "screen_cell_size": lv["screen_cell_size"],
        "trucks": [{
            "id": t["id"],
            "tail": [t["tail"]["row"], t["tail"]["col"]],
            "head": [t["head"]["row"], t["head"]["col"]],
            "direction": t["direction"],
            "color": t["color"],
            "center_field": [t["center_field"]["x"], t["center_field"]["y"]],
            "center_screen": [t["center_screen_540x960"]["x"], t["center_screen_540x960"]["y"]],
        } for t in trucks],
        "clearing_order": [t["id"] for t in trucks],
    })
doc = {
    "format": "longpuzzle-levels/1",
    "game": "truck_escape",
    "source": ("converted from LongPuzzleBench truck_escape.json (a re-run of the seeded generator in "
               "TruckLevelDefinitions.ts); levels 3-5 hold the generator's partial layouts (22, 24, 28 trucks)"),
    "notes": ("grid cells zero-based [row, col], row 0 at the top; a truck covers its tail cell and its head "
              "cell = tail + one step in its direction (up, down, left, right); tapping a truck drives it off "
              "if no remaining truck stands anywhere ahead of its head up to the field edge; center_field is in "
              "field units (cell_size per cell, x right, y down); center_screen / screen_field_origin are "
              "design px of the 540 x 960 frame (screen = origin + field * screen_scale)"),
    "objectives": [{"difficulty": d, "levels": ls} for d, ls in objectives.items()],
}
out = Path(__file__).with_name("truck_escape.json")
text = json.dumps(doc, indent=1, ensure_ascii=False)


def one_line(m):
    return json.dumps(json.loads(m.group(0)), ensure_ascii=False)


# one truck per line; short number pairs and the clearing order on one line
text = re.sub(r'\[\n\s+(-?[\d.]+),\n\s+(-?[\d.]+)\n\s+\]', r'[\1, \2]', text)
text = re.sub(r'\{\n\s+"id": [^{}]*?\n\s+\}', one_line, text)
text = re.sub(r'\[\n\s+("t\d+",?\n\s+)+\]', one_line, text)
out.write_text(text + "\n", encoding="utf-8")
print(f"wrote {out}")
