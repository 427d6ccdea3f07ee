"""What the tool records of an episode folder say: tool use per level (for result.json and
the report), and a check that every image and pixel grid a tool returned is reproduced
from the folder's stored frames.

``tool_use`` is result.json's ``tools`` block::

    {"setting": "vista", "tools": ["play", ...],       the tools offered
     "calls": 57, "by_tool": {"play": 40, "inspect": 9, ...}, "errors": 2,
     "images": 51, "bytes": 1203456, "seconds": 0.42,   images and bytes sent back, time in tools
     "checkpoints": 1, "paused": 0, "working_cleared": 2,   checkpoints saved, calls refused by the pause
     "levels": [{"level": "maze_paint/easy/1", "calls": 31, "by_tool": {...}, "images": 28,
                 "bytes": 650000, "tokens": {"input": 120000, "output": 3000} | null}, ...]}

A call belongs to the level the evaluator recorded after the call's ``turn`` (the last
action before it; ``null`` before any level was on screen). ``tokens`` sums the model calls
of a model agent's ``conversation.jsonl`` made at that level (null for an MCP client, whose
model the harness does not see).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from longpuzzle.agents.harness import FrameStoreError, HarnessError, open_frames, read_events, step_frame_indices
from longpuzzle.agents.harness.frames import hasher, header_frame_hash
from longpuzzle.agents.vista.archive import crop_zoom, pixel_grid, pixel_samples, samples_hash
from longpuzzle.agents.vista.tools import result_json, text_hash

CONVERSATION = "conversation.jsonl"


def _levels_by_step(events: list[dict]) -> list[str | None]:
    """levels[s] = the level id the evaluator recorded after step s (None: not on a level)."""
    out: list[str | None] = [None]
    for r in events:
        if r.get("stream") == "private":
            s = r["step"]
            while len(out) <= s:
                out.append(out[-1])
            out[s] = (r.get("record") or {}).get("level")
    return out


def _level(levels: list, turn) -> str | None:
    if not isinstance(turn, int) or turn <= 0 or not levels:
        return None
    return levels[min(turn, len(levels) - 1)]


def tool_use(folder, setting: str | None = None, tools=None, events: list[dict] | None = None) -> dict:
    """The tool-use summary of an episode folder (module doc)."""
    events = read_events(folder) if events is None else events
    head = events[0] if events else {}
    levels = _levels_by_step(events)
    out = {"setting": setting or head.get("setting"), "tools": list(tools or head.get("tools") or []),
           "calls": 0, "by_tool": {}, "errors": 0, "images": 0, "bytes": 0, "seconds": 0.0,
           "checkpoints": 0, "paused": 0, "working_cleared": 0, "levels": []}
    rows: dict = {}

    def row(lid):
        if lid not in rows:
            rows[lid] = {"level": lid, "calls": 0, "by_tool": {}, "images": 0, "bytes": 0, "tokens": None}
        return rows[lid]

    for r in events:
        if r.get("stream") != "tools":
            continue
        if r.get("note") == "working_cleared":
            out["working_cleared"] += 1
            continue
        if "tool" not in r:
            continue
        res = r.get("result") or {}
        lv = row(_level(levels, r.get("turn")))
        for d in (out, lv):
            d["calls"] += 1
            d["by_tool"][r["tool"]] = d["by_tool"].get(r["tool"], 0) + 1
            d["images"] += res.get("images", 0)
            d["bytes"] += res.get("bytes", 0)
        out["errors"] += not r.get("ok", True)
        out["seconds"] += r.get("seconds", 0.0)
        out["checkpoints"] += "checkpoint" in r
        out["paused"] += bool(r.get("paused"))
    conv = Path(folder) / CONVERSATION if folder is not None else None
    if conv is not None and conv.is_file():
        for line in conv.read_text(encoding="utf-8").splitlines():
            try:
                c = json.loads(line)
            except json.JSONDecodeError:
                continue                       # a line cut off by a kill
            if c.get("type") != "call" or "turn" not in c:
                continue
            u = c.get("usage") or {}
            lv = row(_level(levels, c["turn"]))
            t = lv["tokens"] or {"input": 0, "output": 0}
            t["input"] += (u.get("input_uncached") or 0) + (u.get("input_cached") or 0)
            t["output"] += u.get("output") or 0
            lv["tokens"] = t
    out["seconds"] = round(out["seconds"], 6)
    out["levels"] = list(rows.values())
    return out


@dataclass
class ToolCheck:
    ok: bool
    checked: int = 0                      # images and grids reproduced
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def check_tool_records(folder) -> ToolCheck | None:
    """Reproduce every image and pixel grid the tools of an episode returned from the
    folder's stored frames (None: the episode has no tool records). A play or screenshot
    image is the stored frame of its turn (its recorded hash); an inspect image is the crop
    and zoom of that frame (hash of the pixels); a read_pixels view's samples are recomputed
    (hash of the sampled values)."""
    events = read_events(folder)
    recs = [r for r in events if r.get("stream") == "tools" and r.get("refs")]
    if not any(r.get("stream") == "tools" for r in events):
        return None
    by_step = step_frame_indices(events)
    public = {r["step"]: r for r in events if r.get("stream") == "public" and "frames" in r}
    rep = ToolCheck(True)
    try:
        frame_hash = hasher(header_frame_hash(events[0]))     # the crops' hash is the folder's frame hash
        fs = open_frames(folder)
    except (FrameStoreError, HarnessError) as e:
        return ToolCheck(False, 0, [f"no stored frames to check the tools against: {e}"])
    with fs:
        for r in recs:
            for ref in r["refs"]:
                where = f"call {r['call']} ({r['tool']})"
                i, turn, frame = ref["index"], ref.get("turn"), ref.get("frame", -1)
                idx = by_step.get(turn)
                if not idx or not -len(idx) <= frame < len(idx) or idx[frame] != i:
                    rep.problems.append(f"{where}: frame {i} is not turn {turn} frame {frame}")
                    continue
                try:
                    px = fs.read(i)
                except (FrameStoreError, IndexError) as e:
                    rep.problems.append(f"{where}: {e}")
                    continue
                if "samples" in ref:                 # read_pixels: one view's samples
                    good = samples_hash(pixel_samples(px, tuple(ref["region"]), ref["rows"], ref["cols"])[0]) \
                        == ref["samples"]
                elif "rows" in ref:                  # read_pixels of one view (folders written before the views)
                    grid = pixel_grid(px, tuple(ref["region"]), ref["rows"], ref["cols"])
                    good = text_hash(result_json({"turn": turn, "frame": frame, **grid})) == ref["hash"]
                elif "box" in ref:
                    good = frame_hash(crop_zoom(px, tuple(ref["box"]), ref["zoom"])) == ref["hash"]
                else:
                    good = fs.hash(i) == public[turn]["frames"][frame] and fs.verify(i)
                rep.checked += 1
                if not good:
                    rep.problems.append(f"{where}: the returned result differs from the one the folder reproduces")
    rep.ok = not rep.problems
    return rep
