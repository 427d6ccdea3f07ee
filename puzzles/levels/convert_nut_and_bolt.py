"""Convert the reference benchmark's Nut and Bolt data into our level file.

    python puzzles/levels/convert_nut_and_bolt.py ../shared/reference/longpuzzlebench/levels/nut_and_bolt.json

Run once; the output (puzzles/levels/nut_and_bolt.json) is the project's data from then on.
"""
import re
import json
import sys
from pathlib import Path

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    objectives.setdefault(lv["difficulty"], []).append({
        "name": lv["id"],
        "capacity": lv["capacity"],
        "visual_size": lv["visual_size"],
        "nut_step": lv["nut_step"],
        "cap_base_offset": lv["cap_base_offset"],
        "bolts": [{"x": b["screen_x"], "base_y": b["base_bottom_y"], "nuts": b["nuts"]} for b in lv["bolts"]],
    })
doc = {
    "format": "longpuzzle-levels/1",
    "game": "nut_and_bolt",
    "source": "converted from LongPuzzleBench NutsBoltsLevelData (NUTS_BOLTS_LEVELS)",
    "notes": "nuts are listed bottom -> top; x / base_y are authoring pixels of a 430 x 932 frame",
    "objectives": [{"difficulty": d, "levels": ls} for d, ls in objectives.items()],
}
out = Path(__file__).with_name("nut_and_bolt.json")
text = json.dumps(doc, indent=1, ensure_ascii=False)
# keep each bolt on one line so that a person can read and edit the file
text = re.sub(r'\{\n\s+"x": ([^,]+),\n\s+"base_y": ([^,]+),\n\s+"nuts": \[([^\]]*)\]\n\s+\}',
              lambda m: '{{"x": {}, "base_y": {}, "nuts": [{}]}}'.format(
                  m.group(1), m.group(2), ", ".join(x.strip() for x in m.group(3).split(",") if x.strip())),
              text)
out.write_text(text + "\n", encoding="utf-8")
print(f"wrote {out}")
