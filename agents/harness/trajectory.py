"""The episode folder: written incrementally while an episode runs, read back for replay.

    events.jsonl   a header line, then per action one "public" record (the action as
                   dispatched, timings, public feedback, frame hashes) and one "private"
                   record (the evaluator's, with an exact suite snapshot), then an end line
    frames/        every frame as lossless PNG (000000.png is the first observation)
    result.json    the outcome and metrics
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness.settings import HarnessError

EVENTS_FORMAT = "longpuzzle-episode/1"


def frame_hash(frame: np.ndarray) -> str:
    """Content hash of a frame's pixels (SHA-1: hardware-accelerated, used for identity only)."""
    return hashlib.sha1(memoryview(np.ascontiguousarray(frame)).cast("B")).hexdigest()


class Trajectory:
    """Writes an episode folder incrementally (every line flushed as it happens)."""

    def __init__(self, folder: Path | None, save_frames: bool = True):
        self.folder = Path(folder) if folder else None
        self.save_frames = save_frames and self.folder is not None
        self.n_frames = 0
        self._f = None
        # PNG encoding runs on a writer thread (zlib releases the GIL); close() waits for it
        self._png = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="png") if self.save_frames else None
        self._pending: list[cf.Future] = []
        if self.folder is not None:
            (self.folder / "frames").mkdir(parents=True, exist_ok=True)
            self._f = open(self.folder / "events.jsonl", "w", encoding="utf-8")

    def write(self, rec: dict) -> None:
        if self._f is not None:
            self._f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            self._f.flush()

    def frame(self, frame: np.ndarray) -> str:
        h = frame_hash(frame)
        if self._png is not None:
            path = self.folder / "frames" / f"{self.n_frames:06d}.png"
            self._pending = [f for f in self._pending if not f.done()]
            if len(self._pending) > 64:          # bound the memory held by queued frames
                self._pending[0].result()
            self._pending.append(self._png.submit(_write_png, frame, path))
        self.n_frames += 1
        return h

    def result(self, res: dict) -> None:
        if self.folder is not None:
            tmp = self.folder / "result.json.tmp"
            tmp.write_text(json.dumps(res, indent=1), encoding="utf-8")
            os.replace(tmp, self.folder / "result.json")

    def close(self) -> None:
        if self._png is not None:
            self._png.shutdown(wait=True)
            for f in self._pending:
                f.result()                        # surface a write error
            self._png = None
        if self._f is not None:
            self._f.close()
            self._f = None


def _write_png(frame: np.ndarray, path: Path) -> None:
    from PIL import Image
    Image.fromarray(frame).save(path, compress_level=1)


def read_events(folder: str | Path) -> list[dict]:
    p = Path(folder) / "events.jsonl"
    if not p.is_file():
        raise HarnessError(f"{folder} is not an episode folder (no events.jsonl)")
    out = []
    with open(p, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise HarnessError(f"{p}: line {i + 1} is not valid JSON (truncated episode?)") from None
    if not out or out[0].get("type") != "header" or out[0].get("format") != EVENTS_FORMAT:
        raise HarnessError(f"{p}: missing or unknown header")
    return out
