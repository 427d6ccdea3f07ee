"""Convert the reference benchmark's Maze Paint data into our level file.

    python puzzles/levels/convert_maze_paint.py ../shared/reference/longpuzzlebench/levels/maze_paint.json
"""
import json
import sys
from pathlib import Path

src = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
objectives: dict[str, list] = {}
for lv in src["levels"]:
    objectives.setdefault(lv["difficulty"], []).append({
        "name": lv["id"],
        "layout": lv["layout"],
        "optimal_moves": lv["optimal_move_count"],
    })
doc = {
    "format": "longpuzzle-levels/1",
    "game": "maze_paint",
    "source": "converted from LongPuzzleBench MazePaintLevelData (MAZE_PAINT_LEVELS)",
    "notes": "layout rows top to bottom: '#' wall or void, '.' floor, 'S' start (painted from the start)",
    "objectives": [{"difficulty": d, "levels": ls} for d, ls in objectives.items()],
}
out = Path(__file__).with_name("maze_paint.json")
text = json.dumps(doc, indent=1, ensure_ascii=False)
out.write_text(text + "\n", encoding="utf-8")
print(f"wrote {out}")
