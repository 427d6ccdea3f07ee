"""Convert the reference benchmark's Bolt Unscrew data into our level file.

    python puzzles/levels/convert_bolt_unscrew.py ../shared/reference/longpuzzlebench/levels/bolt_unscrew.json

Run once; the output (puzzles/levels/bolt_unscrew.json) is the project's data from then on.
Coordinates stay design pixels (540 x 960, top-left origin, y down). Pads written in the
short form (hole_offsets null) get their single centre hole written out.
"""
import json
import re
import sys
from pathlib import Path

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    boards = []
    for b in lv["boards"]:
        boards.append({
            "id": b["id"], "x": b["x"], "y": b["y"], "rotation_degrees": b["rotation_degrees"],
            "collision_width": b["collision_width"], "collision_height": b["collision_height"],
            "render_order": b["render_order"], "texture_index": b["texture_index"],
            "linear_damp": b["linear_damp"], "angular_damp": b["angular_damp"],
            "hole_offsets": [[h["x"], h["y"]] for h in b["hole_offsets"]],
            "attached_anchors": b["attached_anchors"],
        })
    pads = []
    for p in lv["anchor_pads"]:
        holes = p["hole_offsets"] if p["hole_offsets"] is not None else [{"x": 0.0, "y": 0.0}]
        pads.append({
            "id": p["id"], "x": p["x"], "y": p["y"], "radius": p["radius"],
            "render_order": p["render_order"],
            "hole_offsets": [[h["x"], h["y"]] for h in holes],
            "attached_anchors": p["attached_anchors"],
        })
    objectives.setdefault(lv["difficulty"], []).append({
        "name": f"{lv['difficulty']}_{lv['level']}",
        "title": lv["title"],
        "instruction": lv["instruction"],
        "anchors": [{"id": a["id"], "x": a["x"], "y": a["y"], "occupied": a["occupied"]} for a in lv["anchors"]],
        "boards": boards,
        "anchor_pads": pads,
    })
doc = {
    "format": "longpuzzle-levels/1",
    "game": "bolt_unscrew",
    "source": "converted from LongPuzzleBench levels/bolt_unscrew.json (LevelDefinitions.ts, commit 16170895)",
    "notes": ("design px of the 540 x 960 frame, origin top-left, y down. hole_offsets are [x, y] in the "
              "piece's local frame with y UP: world = (x + hx cos r + hy sin r, y + hx sin r - hy cos r), "
              "r = rotation_degrees; attached_anchors pair 1:1 with hole_offsets. Pieces = boards then pads."),
    "objectives": [{"difficulty": d, "levels": ls} for d, ls in objectives.items()],
}
text = json.dumps(doc, indent=1, ensure_ascii=False)


# one anchor / board / pad per line so that a person can read and edit the file
def _one_line(m):
    return m.group(1) + json.dumps(json.loads(m.group(2)), ensure_ascii=False)


text = re.sub(r'(\n\s+)(\{\n\s+"id": [^{}]*?\n\s+\})', _one_line, text)
out = Path(__file__).with_name("bolt_unscrew.json")
out.write_text(text + "\n", encoding="utf-8")
print(f"wrote {out}")
