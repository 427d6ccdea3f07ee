"""The episode folder: written incrementally while an episode runs, read back for replay.

    events.jsonl   a header line, then per action one "public" record (the action as
                   dispatched, timings, public feedback, frame hashes) and one "private"
                   record (the evaluator's, with the exact suite state: snapshots.py), then
                   an end line
    frames.lpf     every frame, lossless (frames.py: format, hashes and the reading API);
                   frame 0 is the first observation
    result.json    the outcome and metrics, written last

Crash safety: one writer thread owns both files and writes in the order things happened,
frames before the event line that names them; lines and frame records go to the OS whole,
in order (a run of them in one write), each write only after the previous one completed.
So after a kill at any point events.jsonl is a run of complete lines (plus at most one
cut-off last line, which readers drop), every frame a line names is complete in frames.lpf,
and result.json (written through a temporary file and a rename, after the writer has
finished) exists only for a finished episode.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import threading
import weakref
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness.frames import FRAME_HASH, FRAMES_FILE, FrameEncoder, FrameHasher, hasher
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.engine.gui import MAX_BATCH
from longpuzzle.agents.metrics import json_ready

# 2: suite states as deltas between full snapshots (snapshots.py); 3: deltas leave out the
# settings that did not change and an animation's "before" that is the previous state
EVENTS_FORMAT = "longpuzzle-episode/3"
EVENTS_FORMATS = ("longpuzzle-episode/1", "longpuzzle-episode/2", EVENTS_FORMAT)   # what read_episode reads
QUEUE_BATCHES = 4         # batches waiting for the writer (bounds the memory held)
BATCH_ITEMS = 256         # the episode hands a batch over at this many lines and frames
BATCH_FRAMES = 8          # or this many frames; the writer collects a batch left this long:
BATCH_SECONDS = 0.05      # what was recorded is on disk within about this time


# json.dumps(rec, separators=(",", ":")) to the byte, without building an encoder per line
# (records are trees of plain data: no cycles to look for)
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class Trajectory:
    """Writes an episode folder incrementally, off the main thread (see the module doc).

    Frames are hashed with FRAME_HASH by a FrameHasher (``hasher``: its ``digests`` are the
    band digests of the frame recorded last), from the bands a frame's delta says changed;
    ``frame_hash`` another name ("xxh3-128", the whole-frame hash of older folders) writes
    a folder as they were written, every frame hashed in full."""

    def __init__(self, folder: Path | None, save_frames: bool = True, frame_hash: str = FRAME_HASH):
        self.folder = Path(folder) if folder else None
        self.save_frames = save_frames and self.folder is not None
        self.frame_hash = frame_hash
        self.hasher = FrameHasher()
        self._hash = self.hasher.hash if frame_hash == FRAME_HASH else _full(hasher(frame_hash))
        self.n_frames = 0
        self._last_frame: np.ndarray | None = None
        self._sink = _Writer(self.folder, self.save_frames, frame_hash) if self.folder is not None else None

    @property
    def recording(self) -> bool:
        """Whether records are written (an episode without a folder writes none: a caller
        may leave out the work of making them)."""
        return self._sink is not None

    def write(self, rec: dict) -> None:
        if self._sink is not None:
            self._sink.add(_encode(rec) + "\n", 0)

    def frame(self, frame: np.ndarray, delta: tuple | None = None) -> str:
        """Record a frame (the array must not be changed afterwards); returns its hash.
        ``delta``: (an earlier frame, the px box outside which it has this frame's pixels),
        as Renderer.render_delta gives it; when that frame is the one recorded last, only
        the box is stored."""
        h = self._hash(frame, delta)
        if self.save_frames:
            box = delta[1] if delta is not None and delta[0] is self._last_frame else None
            self._sink.add((self.n_frames, frame, h, box), 1)
            self._last_frame = frame          # (held, so never drawn over while it may be compared)
        self.n_frames += 1
        return h

    def flush(self) -> None:
        """Wait until everything recorded so far was handed to the OS (a reader of the
        folder, e.g. open_frames(folder).refresh(), then sees it)."""
        if self._sink is not None:
            self._sink.flush()

    def result(self, res: dict) -> None:
        """Finish the folder: everything recorded is written, then result.json atomically."""
        self.close()
        if self.folder is not None:
            write_result(self.folder, res)

    def close(self) -> None:
        if self._sink is not None:
            sink, self._sink = self._sink, None
            sink.close()


def _full(fn):
    return lambda frame, delta=None: fn(frame)


def write_result(folder: Path, res: dict) -> None:
    """result.json, whole or not at all: a temporary file made durable, then renamed. A
    metric that is not defined (NaN) is written as null: the file is strict JSON."""

    tmp = Path(folder) / "result.json.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(json_ready(res), indent=1, allow_nan=False))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, Path(folder) / "result.json")


_OPEN: weakref.WeakSet[_Writer] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:          # an episode abandoned by an exception still gets its lines
    for w in list(_OPEN):
        w.close(raise_error=False)


class _Writer:
    """The writer thread of one episode folder: events lines and frame records, in order.

    The episode's thread appends to a batch and hands it over when it is big; the writer
    takes a batch that waited BATCH_SECONDS itself (waking a thread for every line would
    cost more than writing the line)."""

    def __init__(self, folder: Path, save_frames: bool, frame_hash: str = FRAME_HASH):
        folder.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
        self._events = os.open(folder / "events.jsonl", flags, 0o644)
        self._frames = os.open(folder / FRAMES_FILE, flags, 0o644) if save_frames else None
        self._enc = FrameEncoder(frame_hash) if save_frames else None
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._room = threading.Semaphore(QUEUE_BATCHES)     # the episode waits when the writer is behind
        self._lock = threading.Lock()                       # guards the batch being filled
        self._batch: list = []
        self._batch_frames = 0
        self.error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"episode-writer:{folder.name}", daemon=True)
        self._thread.start()
        _OPEN.add(self)

    def add(self, item, is_frame: int) -> None:
        if self.error is not None:
            self._fail()
        with self._lock:
            self._batch.append(item)
            self._batch_frames += is_frame
            full = self._batch_frames >= BATCH_FRAMES or len(self._batch) >= BATCH_ITEMS
        if full:
            self._room.acquire()
            self._hand_over()

    def _hand_over(self) -> None:
        with self._lock:
            batch, self._batch, self._batch_frames = self._batch, [], 0
        if batch:
            self._q.put(batch)
        else:
            self._room.release()

    def flush(self) -> None:
        """Hand the batch being filled over and wait until the writer has written it."""
        if self.error is not None:
            self._fail()
        self._room.acquire()
        self._hand_over()
        done = threading.Event()
        self._q.put(done)                     # not a batch: takes no room
        done.wait()
        if self.error is not None:
            self._fail()

    def _fail(self):
        raise HarnessError(f"could not write the episode folder: {type(self.error).__name__}: {self.error}") \
            from self.error

    def _run(self) -> None:
        q = self._q
        while True:
            try:
                item = q.get(timeout=BATCH_SECONDS)
            except queue.Empty:
                if self._batch and self._room.acquire(blocking=False):
                    self._hand_over()         # a batch left waiting (the agent is thinking)
                continue
            if item is None:
                break
            if isinstance(item, threading.Event):   # flush(): every batch before it is written
                item.set()
                continue
            self._room.release()
            if self.error is not None:        # keep draining so the episode never blocks
                continue
            try:
                self._write(item)
            except BaseException as e:        # noqa: BLE001 - reported to the episode's thread
                self.error = e
        for fd in (self._events, self._frames):
            if fd is not None:
                os.close(fd)

    def _write(self, batch: list) -> None:
        # runs of lines and runs of frames, in order: the lines before a frame reach the
        # OS before it, a frame before the line that names it; a run of frames is encoded
        # at once and written in one call (a cut-off write leaves whole records before the cut)
        lines, frames = [], []
        for it in batch:
            if isinstance(it, str):
                if frames:
                    self._write_frames(frames)
                    frames = []
                lines.append(it)
                continue
            if lines:
                _write_all(self._events, "".join(lines).encode("utf-8"))
                lines = []
            frames.append(it)
        if frames:
            self._write_frames(frames)
        if lines:
            _write_all(self._events, "".join(lines).encode("utf-8"))

    def _write_frames(self, frames: list) -> None:
        head = self._enc.file_header(frames[0][1]) if frames[0][0] == 0 else b""
        _write_all(self._frames, head + self._enc.records(frames))

    def close(self, raise_error: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self._room.acquire()
            self._hand_over()
            self._q.put(None)
            self._thread.join()
            _OPEN.discard(self)
        if raise_error and self.error is not None:
            self._fail()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# The longest line a genuine episode can write (issue 35: a replay refuses a longer one
# before reading it whole). A line holds at most one action (the GUI bounds it: at most
# gui.MAX_VALUES values, texts of at most gui.MAX_PLAIN_TEXT characters; a refused one is
# cut to agent_call.MAX_RECORDED_ACTION), its effects and one suite state; a suite state
# grows with the level's move texts and log, by at most one entry per action of a batch.
# So line k may hold LINE_BASE bytes plus LINE_PER_ACTION per action recorded before it.
LINE_BASE = 1 << 20
LINE_PER_ACTION = 512 * MAX_BATCH     # 512 bytes per entry, a batch's actions


def line_limit(actions: int) -> int:
    """The longest line a genuine episode writes after ``actions`` recorded actions."""
    return LINE_BASE + actions * LINE_PER_ACTION


def read_episode(folder: str | Path) -> tuple[list[dict], bool]:
    """(records, cut_off) of an episode's events.jsonl. A last line without its newline that
    does not parse was cut off by a kill: it is dropped and ``cut_off`` is True. Any other
    line that is not JSON is corruption, and a line longer than a genuine episode writes
    there (line_limit) is refused before it is read whole: both raise HarnessError."""
    recs = EpisodeRecords(folder)
    out = list(recs)
    return out, recs.cut_off


class EpisodeRecords:
    """An episode's events.jsonl as a stream of records, for a reader that must not hold the
    file (a replay): each pass reads the file again, one line at a time, each line bounded
    as read_episode bounds it, so what is held is one record, whatever the file's size.
    ``head``: the header (checked at once); after a whole pass, ``count`` is the number of
    records and ``cut_off`` whether a last line cut off by a kill was dropped."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / "events.jsonl"
        if not self.path.is_file():
            raise HarnessError(f"{folder} is not an episode folder (no events.jsonl)")
        self.head = read_header(folder)
        self.count: int | None = None
        self.cut_off = False

    def __iter__(self):
        p, actions, n = self.path, 0, 0
        self.cut_off = False
        with open(p, "rb") as f:
            i = 0
            while True:
                limit = line_limit(actions)
                line = f.readline(limit + 2)
                if not line:
                    break
                i += 1
                if len(line) > limit + 1:
                    raise HarnessError(f"{p}: line {i} is longer than any genuine episode writes there "
                                       f"({limit:,} bytes after {actions} actions)")
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError, UnicodeDecodeError):     # JSONDecodeError is a ValueError
                    if not line.endswith(b"\n"):
                        self.cut_off = True
                        break
                    raise HarnessError(f"{p}: line {i} is not valid JSON (corrupt episode)") from None
                if type(rec) is not dict:
                    raise HarnessError(f"{p}: line {i} is not a JSON object (corrupt episode)")
                if rec.get("stream") == "public" and "action" in rec:
                    actions += 1
                n += 1
                yield rec
        self.count = n


def read_header(folder: str | Path) -> dict:
    """The header of an episode's events.jsonl alone (its first line, bounded as
    read_episode bounds it); HarnessError when it is missing or unknown."""
    p = Path(folder) / "events.jsonl"
    try:
        with open(p, "rb") as f:
            line = f.readline(LINE_BASE + 2)
    except OSError:
        raise HarnessError(f"{folder} is not an episode folder (no events.jsonl)") from None
    try:
        rec = json.loads(line) if len(line) <= LINE_BASE + 1 else None
    except (ValueError, RecursionError, UnicodeDecodeError):
        rec = None
    if type(rec) is not dict or rec.get("type") != "header" or rec.get("format") not in EVENTS_FORMATS:
        raise HarnessError(f"{p}: missing or unknown header")
    return rec


def read_events(folder: str | Path) -> list[dict]:
    """The records of an episode's events.jsonl (a line cut off by a kill is dropped)."""
    return read_episode(folder)[0]
