"""Lossless visual memory: every frame the episode returned, indexed by turn and frame number,
read back from the episode's own frame store; crops, zooms and pixel grids of them.

A turn is one dispatched action (one ``play`` call, or one ``gui()`` call of run_python):
turn t is the episode's step t, so turn 1 is the opening wait. Its frames are the ones the
action produced, intermediate animation frames first (``Settings.frames_per_move`` of them
per animation) and the final frame last; frame -1 is the final one. Frame 0 of the store
(the screen before the opening wait) is no turn's: the agent never saw it.

Frames come from ``open_frames(folder)`` - the same file ``replay`` checks - after the
episode's writer has handed them to the OS; the most recent ones are also kept decoded in
memory. Everything an ``inspect`` or ``read_pixels`` returns is a pure function of a stored
frame and the call's arguments (``crop_zoom``, ``pixel_grid``), so the episode folder
reproduces it (records.py).
"""

from __future__ import annotations

import numpy as np

from longpuzzle.agents.harness import FrameStore, Trajectory, frame_hash, open_frames
from longpuzzle.engine.lru import LRU

CACHE_FRAMES = 48        # decoded frames kept in memory (about 75 MB at 540 x 960)
SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/"   # read_pixels palette symbols


class ArchiveError(ValueError):
    """A view that does not exist (no such turn or frame, a box off the frame)."""


class FrameArchive:
    def __init__(self, folder, traj: Trajectory, frame_size: tuple[int, int]):
        self.folder = folder
        self.traj = traj
        self.size = frame_size                          # (W, H)
        self.turns: dict[int, tuple[int, int]] = {}     # turn -> (first store index, frame count)
        self._cache = LRU(CACHE_FRAMES)                   # store index -> frame, the latest in memory
        self._digests: dict[int, str] = {}               # store index -> frame_hash of its pixels
        self._store: FrameStore | None = None

    # ---- filling ------------------------------------------------------------------------
    def add_turn(self, turn: int, first: int, frames: list[np.ndarray]) -> None:
        self.turns[turn] = (first, len(frames))
        for k, f in enumerate(frames):
            self._keep(first + k, f)

    def _keep(self, i: int, f: np.ndarray) -> None:
        self._cache.put(i, f)

    # ---- reading --------------------------------------------------------------------------
    @property
    def last_turn(self) -> int:
        return max(self.turns) if self.turns else 0

    def resolve(self, turn, frame=-1) -> tuple[int, int, int]:
        """(turn, frame, store index) of a view, negative turn and frame counted from the
        last; ArchiveError if there is no such frame."""
        for v, what in ((turn, "turn"), (frame, "frame")):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ArchiveError(f"{what} must be an integer, not {v!r}")
        if turn < 0:
            turn = self.last_turn + 1 + turn
        if turn not in self.turns:
            have = f"turns 1 .. {self.last_turn}" if self.turns else "no turns yet"
            raise ArchiveError(f"there is no turn {turn} ({have}; a refused action makes no turn)")
        first, n = self.turns[turn]
        k = frame + n if frame < 0 else frame
        if not 0 <= k < n:
            raise ArchiveError(f"turn {turn} has {n} frame{'s' if n != 1 else ''} (0 .. {n - 1}, or -1 for the last); "
                               f"no frame {frame}")
        return turn, k, first + k

    def index(self, turn, frame=-1) -> int:
        """The store index of (turn, frame), or ArchiveError."""
        return self.resolve(turn, frame)[2]

    def count(self, turn) -> int:
        """How many frames turn ``turn`` produced."""
        return self.turns[self.resolve(turn, -1)[0]][1]

    def read(self, i: int) -> np.ndarray:
        """Stored frame i as a read-only (H, W, 3) uint8 array."""
        f = self._cache.get(i)
        if f is not None:
            return f
        if self._store is None or i >= len(self._store):
            self.traj.flush()
            if self._store is None:
                self._store = open_frames(self.folder)
            self._store.refresh()
        f = self._store.read(i)
        self._keep(i, f)
        return f

    def digest(self, i: int) -> str:
        """frame_hash of stored frame i (what its pixels are: equal frames, equal digests),
        computed once."""
        d = self._digests.get(i)
        if d is None:
            d = self._digests[i] = frame_hash(self.read(i))
        return d

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def check_box(box, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """A crop box [x0, y0, x1, y1] inside a frame of ``size`` = (W, H), or ArchiveError."""
    W, H = size
    if box is None:
        return 0, 0, W, H
    if not isinstance(box, (list, tuple)) or len(box) != 4 or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in box):
        raise ArchiveError(f"a box is [x0, y0, x1, y1] in integer pixels, not {box!r}")
    x0, y0, x1, y1 = box
    if not (0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H):
        raise ArchiveError(f"box {list(box)} is not inside the {W} x {H} frame (0 <= x0 < x1 <= {W}, "
                           f"0 <= y0 < y1 <= {H})")
    return x0, y0, x1, y1


def view_box(view: dict, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The box [x0, y0, x1, y1) of a view: its ``region`` {x, y, w, h} (VISTA's form), or its
    ``box`` [x0, y0, x1, y1] (the option), or the whole frame; ArchiveError if it is not
    inside the frame or gives both."""
    region, box = view.get("region"), view.get("box")
    if region is not None and box is not None:
        raise ArchiveError("give 'region' {x, y, w, h} or 'box' [x0, y0, x1, y1], not both")
    if region is None:
        return check_box(box, size)
    if not isinstance(region, dict) or set(region) != {"x", "y", "w", "h"} or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in region.values()):
        raise ArchiveError(f"a region is {{\"x\", \"y\", \"w\", \"h\"}} in integer pixels, not {region!r}")
    x, y, w, h = region["x"], region["y"], region["w"], region["h"]
    W, H = size
    if not (x >= 0 and y >= 0 and w >= 1 and h >= 1 and x + w <= W and y + h <= H):
        raise ArchiveError(f"region {region} is not inside the {W} x {H} frame (x >= 0, y >= 0, w >= 1, h >= 1, "
                           f"x + w <= {W}, y + h <= {H})")
    return x, y, x + w, y + h


def region_of(box) -> dict:
    """{x, y, w, h} of a box [x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    return {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}


def fit_zoom(box, size: tuple[int, int], most: int) -> int:
    """inspect's enlargement when the view gives none: the largest whole factor (1 .. most)
    that keeps the enlarged region within the frame's size (so the whole frame stays 1x)."""
    w, h = box[2] - box[0], box[3] - box[1]
    return max(1, min(most, size[0] // w, size[1] // h))


def crop_zoom(frame: np.ndarray, box: tuple[int, int, int, int], zoom: int) -> np.ndarray:
    """The box of the frame, each pixel repeated zoom x zoom times (nearest neighbour)."""
    x0, y0, x1, y1 = box
    c = frame[y0:y1, x0:x1]
    if zoom == 1:
        return np.ascontiguousarray(c)
    k = _zoom_kernel()
    if k is None:
        # each pixel repeated along its row, then each row repeated (a broadcast copy of
        # (h, zoom, w, zoom, 3) moves 3 bytes at a time: about 4x slower)
        return np.repeat(np.repeat(c, zoom, axis=1), zoom, axis=0)
    out = np.empty(((y1 - y0) * zoom, (x1 - x0) * zoom, 3), np.uint8)
    k(c, zoom, out)                                      # read in place from the frame (no copy of the box)
    return out


_ZOOM = []


def _zoom_kernel():
    """The compiled zoom (about half the time of np.repeat), when this process has numba
    loaded already (an episode's process has: its rules are compiled); else None, and
    numpy does it (a replay need not load numba for it). Same pixels either way."""
    if not _ZOOM:
        import sys
        if "numba" not in sys.modules:
            return None
        from numba import njit

        @njit(cache=True, nogil=True)
        def zoom_into(c, z, out):
            # c: (h, w, 3) box of a frame, any strides (a view); out: (h*z, w*z, 3), C order
            h, w = c.shape[0], c.shape[1]
            for y in range(h):
                row = out[y * z].ravel()
                j = 0
                for x in range(w):
                    p0, p1, p2 = c[y, x, 0], c[y, x, 1], c[y, x, 2]
                    for _ in range(z):
                        row[j], row[j + 1], row[j + 2] = p0, p1, p2
                        j += 3
                for k in range(1, z):
                    dst = out[y * z + k].ravel()
                    for i in range(row.size):
                        dst[i] = row[i]
        _ZOOM.append(zoom_into)
    return _ZOOM[0]


def pixel_samples(frame: np.ndarray, box: tuple[int, int, int, int], rows: int, cols: int):
    """(the pixel at the centre of each of the box's rows x cols cells as (rows, cols) packed
    0xRRGGBB values, the cells' x centres, their y centres)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    ys = y0 + ((2 * np.arange(rows) + 1) * h) // (2 * rows)
    xs = x0 + ((2 * np.arange(cols) + 1) * w) // (2 * cols)
    cells = frame[ys[:, None], xs[None, :]]                     # (rows, cols, 3)
    packed = (cells[..., 0].astype(np.uint32) << 16) | (cells[..., 1].astype(np.uint32) << 8) | cells[..., 2]
    return packed, xs, ys


def samples_hash(packed: np.ndarray) -> str:
    """The hash of one view's samples (records.py recomputes it from the stored frame)."""
    import xxhash
    a = np.ascontiguousarray(packed, dtype="<u4")
    return xxhash.xxh3_128_hexdigest(np.array(a.shape, "<u4").tobytes() + a.tobytes())


def pixel_views(grids: list) -> tuple[list[str], list]:
    """One palette for several views' samples (hex colours in order of first appearance,
    view by view) and each view's grid: one string per row of palette symbols (``SYMBOLS``;
    with more colours than symbols, each row is a list of palette indices)."""
    flat = np.concatenate([g.ravel() for g in grids])
    uniq, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[inv]
    palette = [f"#{int(v):06x}" for v in uniq[order]]
    out, at = [], 0
    sym = np.array(list(SYMBOLS))
    for g in grids:
        c = codes[at:at + g.size].reshape(g.shape)
        at += g.size
        out.append(["".join(r) for r in sym[c]] if len(palette) <= len(SYMBOLS) else [[int(v) for v in r] for r in c])
    return palette, out


def pixel_grid(frame: np.ndarray, box: tuple[int, int, int, int], rows: int, cols: int) -> dict:
    """The box split into rows x cols cells and the pixel at each cell's centre: a palette
    (hex colours, in order of first appearance) and one string per row of palette symbols
    (``SYMBOLS``; with more colours than symbols, each row is a list of palette indices)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    packed, xs, ys = pixel_samples(frame, box, rows, cols)
    palette, (grid,) = pixel_views([packed])
    return {"region": [x0, y0, x1, y1], "rows": rows, "cols": cols,
            "cell": [w / cols, h / rows], "x": [int(v) for v in xs], "y": [int(v) for v in ys],
            "palette": palette, "grid": grid}
