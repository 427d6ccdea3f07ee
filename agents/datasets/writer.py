"""The shard writer of one dataset job: rows in, shard files out.

``StepWriter.add(meta, frame, delta)`` queues one step (its metadata and the frame array the
agent saw, which must not change afterwards: the harness hands out frames that nothing writes
to again; ``delta`` optionally the frame's Renderer.render_delta, the box it changed in since
the frame before); the writer encodes the frame as a lossless PNG (png.py: bands of rows
already compressed for a recent frame are not compressed again, and with a delta relative to
the frame written before, the bands outside its box are not even hashed; a frame written
before, known by its hash, is not encoded again) - or takes the PNG made when the frame was
``shown`` (with the harness's band digests of it: its bands are not hashed again) - takes its pixel hash from ``meta["frame_hash"]`` (the
harness hashed every frame already; computed with frames.frame_hash when absent), writes the action in the
model conventions (conventions.py) and appends the row to the current shard, starting a
new shard every ``shard_size`` rows. ``end_episode(final_frame)`` completes the episode's
last row (its ``next_frame_hash``). ``close()`` waits for everything and returns the shard
entries of the manifest. ``cpu_seconds``: the CPU time the writing took (what dataset
writing costs per core, whatever else runs beside it).

The writing is done in the caller's thread unless ``threaded=True`` (then a writer thread
does it): both threads are mostly Python, so the thread shares one interpreter lock with
the episode, and every hand-over of that lock (around each deflate, copy and blit that
releases it) costs more than the overlap gains - measured on a job, a writer thread made it
about 20% slower in CPU time and wall time alike. Jobs run in parallel as processes (or
Ray tasks), one per core.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness import frame_hash
from longpuzzle.agents.harness.frames import BAND_ROWS
from longpuzzle.agents.datasets.conventions import Conventions
from longpuzzle.agents.media.deflate import DEFAULT_LEVEL, reproducible_deflate
from longpuzzle.agents.media.png import PngStream
from longpuzzle.agents.datasets.schema import COLUMNS, sample_key
from longpuzzle.agents.datasets.shards import EXTENSIONS, DatasetError, compact_json, open_shard
from longpuzzle.engine.lru import LRU

DEFAULT_SHARD_SIZE = 2000
PNG_BAND_ROWS = BAND_ROWS     # 32: the frame hash's bands, so the harness's band digests are the PNG bands' keys
RECENT_ACTIONS = 4096
_END, _STOP, _SHOWN = "end", "stop", "shown"


def shard_name(job: int, k: int, fmt: str) -> str:
    return f"shard-{job:05d}-{k:04d}{EXTENSIONS[fmt]}"


class StepWriter:
    def __init__(self, out: str | Path, fmt: str, job: int, shard_size: int = DEFAULT_SHARD_SIZE,
                 threaded: bool = False, queue_size: int = 64, png_level: int = DEFAULT_LEVEL,
                 columns: dict | None = None):
        if shard_size < 1:
            raise DatasetError("the shard size must be at least 1 row")
        try:
            deflate = reproducible_deflate(png_level)
        except ValueError as e:
            raise DatasetError(str(e)) from None
        self.out, self.fmt, self.job, self.shard_size = Path(out), fmt, job, shard_size
        self.columns = columns or COLUMNS             # the rows' columns (schema.columns: the oracle's too?)
        self.shards: list[dict] = []
        self.rows = 0
        self.cpu_seconds = 0.0
        self._shard = None
        self._pending: dict | None = None         # the episode's last row, waiting for its next frame
        self._conv: dict[tuple, Conventions] = {}
        self._names = LRU(RECENT_ACTIONS)      # (W, H, action JSON) -> the action in every convention
        # zlib-ng's deflate, whose bytes repeat (deflate.py: ISA-L's may not), in bands of 32 rows
        # (smaller bands compress fewer unchanged rows again); ``deflate``: which library, its
        # version and the level, for the manifest
        self._png = PngStream(band_rows=PNG_BAND_ROWS, deflate=deflate)
        self.deflate = deflate.record()
        self._ahead = False                           # frames are shown before their rows
        self._error: BaseException | None = None
        self._q: queue.Queue | None = None
        if threaded:
            self._q = queue.Queue(queue_size)
            self._thread = threading.Thread(target=self._loop, name=f"dataset-writer-{job}", daemon=True)
            self._thread.start()

    # ---- the episode's side -------------------------------------------------------------
    def add(self, meta: dict, frame: np.ndarray, delta: tuple | None = None) -> None:
        self._put(("step", meta, frame, delta))

    def shown(self, frame: np.ndarray, h: str | None = None, delta: tuple | None = None,
              digests: list | None = None) -> None:
        """A frame the episode just showed, which the next row added will hold (``h`` its
        pixel hash, ``delta`` its render_delta, ``digests`` its 32-row bands' digests as the
        harness hashed them, FrameHasher.digests_for: the PNG stream's band keys, not hashed
        again): its PNG is made now, while its pixels are still in the CPU's caches (about 7%
        of a job's CPU time), and that row finds it by the hash. Optional: a row's frame
        never shown is encoded when added."""
        self._put((_SHOWN, h, frame, (delta, digests)))

    def end_episode(self, final_frame: np.ndarray | None, final_hash: str | None = None) -> None:
        self._put((_END, final_hash, final_frame, None))

    def close(self) -> list[dict]:
        """Write everything queued, close the last shard; returns the shard entries."""
        if self._q is not None:
            self._put((_STOP, None, None, None))
            self._thread.join()
            self._q = None
        self._raise()
        t = time.thread_time()
        if self._pending is not None:                    # an episode never ended: its last row as is
            self._write(self._pending)
            self._pending = None
        if self._shard is not None:
            self.shards.append(self._shard.close())
            self._shard = None
        self.cpu_seconds += time.thread_time() - t
        return self.shards

    def _put(self, item) -> None:
        self._raise()
        if self._q is None:
            t = time.thread_time()
            self._handle(item)
            self.cpu_seconds += time.thread_time() - t
            return
        while True:
            try:
                self._q.put(item, timeout=0.5)
                return
            except queue.Full:
                self._raise()
                if not self._thread.is_alive():
                    raise DatasetError("the dataset writer thread stopped") from None

    def _raise(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise e

    # ---- the writer thread -----------------------------------------------------------------
    def _loop(self) -> None:
        t0 = time.thread_time()           # (once: reading a thread's CPU clock can cost a system call)
        try:
            while True:
                item = self._q.get()
                if item[0] == _STOP:
                    return
                if self._error is not None:
                    continue                              # drain; the error is raised on the other side
                try:
                    self._handle(item)
                except BaseException as e:  # noqa: BLE001 - handed to the episode's thread
                    self._error = e
        finally:
            self.cpu_seconds = time.thread_time() - t0

    def _handle(self, item) -> None:
        kind, meta, frame, delta = item
        if kind == _SHOWN:
            delta, digests = delta
            self._png.encode(frame, delta, key=meta or frame_hash(frame), digests=digests)
            self._ahead = True
            return
        if kind == _END:
            row = self._pending
            self._pending = None
            if row is not None:
                if not row["next_frame_hash"]:
                    row["next_frame_hash"] = meta or (frame_hash(frame) if frame is not None else "")
                row["last"] = True
                self._write(row)
            return
        h = meta.get("frame_hash") or frame_hash(frame)        # the harness's, when the caller has it
        prev = self._pending
        if prev is not None:
            if prev["episode"] == meta["episode"] and not prev["next_frame_hash"]:
                prev["next_frame_hash"] = h
            self._write(prev)
        action = meta["action"]
        height, width = frame.shape[:2]
        text = compact_json(action)
        names = self._names.get((width, height, text))      # a solver repeats its gestures
        if names is None:
            conv = self._conv.get((width, height))
            if conv is None:
                conv = self._conv[(width, height)] = Conventions((width, height))
            names = self._names.put((width, height, text), conv.all(action))
        row = dict(meta)
        row.update(key=sample_key(meta["episode"], meta["step"]), width=width, height=height,
                   image=self._row_image(frame, h, delta), frame_hash=h, action=text,
                   action_general_e2e=names["general_e2e"], action_qwen=names["qwen"],
                   action_uitars=names["uitars"], next_frame_hash=meta.get("next_frame_hash") or "", last=False)
        self._pending = row

    def _row_image(self, frame: np.ndarray, h: str, delta: tuple | None) -> bytes:
        """A row's PNG: made when its frame was shown (frames are shown ahead of their rows,
        so the PNG stream has moved on: it is not told about this frame again), else now,
        from the band encoder: again the same bytes, without looking at the pixels, for a
        frame written before (an action that left the screen as it was, the same position
        in another episode of the objective)."""
        if self._ahead:
            png = self._png.recall(h)
            if png is not None:
                return png
        return self._png.encode(frame, delta, key=h)

    def _write(self, row: dict) -> None:
        if self._shard is None:
            self._shard = open_shard(self.fmt, self.out / shard_name(self.job, len(self.shards), self.fmt),
                                     self.columns)
        self._shard.add(row)
        self.rows += 1
        if self._shard.rows >= self.shard_size:
            self.shards.append(self._shard.close())
            self._shard = None
