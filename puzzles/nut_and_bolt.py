"""Nut and Bolt (``nut_and_bolt``): sort coloured nuts so that every bolt is empty or full
of one colour. Rules: ../shared/reference/longpuzzlebench/RULES.md section 4.

Level vector ``lv`` (int32)::

    lv[0] = n      number of bolts
    lv[1] = cap    capacity (nuts per bolt)
    lv[2] = K      number of distinct colours in the level

State ``s`` (int8, length n + n*cap)::

    s[0 .. n-1]                 height of bolt b (number of nuts on it)
    s[n + b*cap + i]            colour of the i-th nut of bolt b counted from the BOTTOM
                                (i = 0 .. cap-1); colours are palette numbers 1..15, 0 = empty

    e.g. n=4, cap=4:  [h0 h1 h2 h3 | b0:i0 i1 i2 i3 | b1:i0 .. i3 | b2:.. | b3:..]

Action ``a = src * n + dst`` (bolts 0-based). Text ``"3>5"``: bolts numbered from 1 in
level-file order. A move takes as many nuts of the source's top same-colour run as fit.
"""

from __future__ import annotations

import re
import sys

import numpy as np
from numba import njit

from longpuzzle.engine.errors import LevelFormatError, MoveSyntaxError
from longpuzzle.engine.protocol import BAD_ACTION, NOOP, OK, Level, Puzzle, Rejection

SAME_BOLT, SOURCE_EMPTY, TARGET_FULL, COLOUR_MISMATCH = 3, 4, 5, 6

# palette number -> (name, letter, display colour); numbers are stable across levels
PALETTE = [
    ("red", "R", "#e53935"), ("yellow", "Y", "#fdd835"), ("blue", "B", "#1e88e5"),
    ("green", "G", "#43a047"), ("orange", "O", "#fb8c00"), ("purple", "P", "#8e24aa"),
    ("pink", "K", "#ec407a"), ("cyan", "C", "#00bcd4"), ("teal", "T", "#00897b"),
    ("lime", "L", "#c0ca33"), ("brown", "N", "#6d4c41"), ("indigo", "I", "#3949ab"),
    ("silver", "S", "#b0bec5"), ("peach", "H", "#ffab91"), ("charcoal", "D", "#455a64"),
]
COLOUR_ID = {name: i + 1 for i, (name, _, _) in enumerate(PALETTE)}
MAX_BOLTS = 40
MAX_COLOUR = len(PALETTE)


@njit(cache=True)
def _check(lv, s, f, t):
    """Rejection code of moving from bolt f to bolt t (OK if legal)."""
    n = lv[0]
    cap = lv[1]
    if f == t:
        return SAME_BOLT
    hf = int(s[f])
    if hf == 0:
        return SOURCE_EMPTY
    ht = int(s[t])
    if ht >= cap:
        return TARGET_FULL
    if ht > 0 and s[n + t * cap + ht - 1] != s[n + f * cap + hf - 1]:
        return COLOUR_MISMATCH
    return OK


@njit(cache=True)
def step_into(lv, src, dst, action):
    n = lv[0]
    cap = lv[1]
    for i in range(src.shape[0]):
        dst[i] = src[i]
    if action < 0 or action >= n * n:
        return BAD_ACTION
    f = action // n
    t = action % n
    code = _check(lv, src, f, t)
    if code != OK:
        return code
    hf = int(src[f])
    ht = int(src[t])
    base_f = n + f * cap
    base_t = n + t * cap
    c = src[base_f + hf - 1]
    run = 1
    while run < hf and src[base_f + hf - 1 - run] == c:
        run += 1
    k = min(run, cap - ht)
    for j in range(k):
        dst[base_t + ht + j] = c
        dst[base_f + hf - 1 - j] = 0
    dst[f] = hf - k
    dst[t] = ht + k
    return OK


@njit(cache=True)
def legal_into(lv, s, mask):
    n = lv[0]
    count = 0
    for f in range(n):
        for t in range(n):
            ok = _check(lv, s, f, t) == OK
            mask[f * n + t] = 1 if ok else 0
            if ok:
                count += 1
    return count


@njit(cache=True)
def _pure_colour(lv, s, b):
    """Colour of bolt b if it is non-empty and single-coloured, else 0."""
    n = lv[0]
    cap = lv[1]
    h = int(s[b])
    if h == 0:
        return 0
    c = s[n + b * cap]
    for i in range(1, h):
        if s[n + b * cap + i] != c:
            return 0
    return int(c)


@njit(cache=True)
def is_solved(lv, s):
    n = lv[0]
    cap = lv[1]
    for b in range(n):
        h = int(s[b])
        if h != 0 and (h != cap or _pure_colour(lv, s, b) == 0):
            return False
    return True


@njit(cache=True)
def progress(lv, s):
    """P = sum over colours of the largest single-colour bolt of that colour / (cap * K)."""
    n = lv[0]
    cap = lv[1]
    best = np.zeros(MAX_COLOUR + 1, np.int64)
    for b in range(n):
        c = _pure_colour(lv, s, b)
        if c > 0 and s[b] > best[c]:
            best[c] = s[b]
    total = 0
    for c in range(best.shape[0]):
        total += best[c]
    return total / (cap * lv[2])


_MOVE_RE = re.compile(r"^(\d+)\s*>\s*(\d+)$")


class NutAndBolt(Puzzle):
    id = "nut_and_bolt"
    title = "Nut and Bolt"
    difficulties = ("easy", "medium", "hard", "extreme", "nightmare")
    catalog_order = 3
    undo_allowed = True
    state_dtype = np.int8
    kernels = sys.modules[__name__]
    rejections = {
        SAME_BOLT: Rejection("same_bolt", "source and target are the same bolt"),
        SOURCE_EMPTY: Rejection("source_empty", "the source bolt is empty"),
        TARGET_FULL: Rejection("target_full", "the target bolt has no room"),
        COLOUR_MISMATCH: Rejection("colour_mismatch", "nuts can only go on top of the same colour"),
    }
    move_syntax = "SRC>DST with bolts numbered from 1, e.g. 3>5"

    def build_level(self, record, *, difficulty, number, where):
        lid = f"{self.id}/{difficulty}/{number}"

        def fail(msg, field=""):
            return LevelFormatError(msg, file=where, level=lid, field=field)

        cap = record.get("capacity")
        if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= 30:
            raise fail("must be an integer from 1 to 30", "capacity")
        bolts = record.get("bolts")
        if not isinstance(bolts, list) or not 1 <= len(bolts) <= MAX_BOLTS:
            raise fail(f"must be a list of 1..{MAX_BOLTS} bolts", "bolts")
        n = len(bolts)
        state = np.zeros(n + n * cap, np.int8)
        counts: dict[str, int] = {}
        xs, ys = [], []
        for b, bolt in enumerate(bolts):
            field = f"bolts[{b}]"
            if not isinstance(bolt, dict) or not isinstance(bolt.get("nuts"), list):
                raise fail("each bolt is an object with a \"nuts\" list (bottom to top)", field)
            nuts = bolt["nuts"]
            if len(nuts) > cap:
                raise fail(f"bolt {b + 1} holds {len(nuts)} nuts, over the capacity {cap}", field + ".nuts")
            for i, name in enumerate(nuts):
                if name not in COLOUR_ID:
                    raise fail(f"unknown colour {name!r} (known: {', '.join(COLOUR_ID)})", f"{field}.nuts[{i}]")
                state[n + b * cap + i] = COLOUR_ID[name]
                counts[name] = counts.get(name, 0) + 1
            state[b] = len(nuts)
            for key, out in (("x", xs), ("base_y", ys)):
                v = bolt.get(key, 0)
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise fail("must be a number (authoring pixels, 430 x 932 frame)", f"{field}.{key}")
                out.append(float(v))
        if not counts:
            raise fail("the level has no nuts", "bolts")
        for name, k in counts.items():
            if k % cap:
                raise fail(f"colour {name!r} appears {k} times, not a multiple of the capacity {cap}; "
                           "the level could never be solved", "bolts")
        lv = np.array([n, cap, len(counts)], np.int32)
        extra = {"x": xs, "base_y": ys, "nut_step": record.get("nut_step", 24),
                 "cap_base_offset": record.get("cap_base_offset", 45),
                 "visual_size": record.get("visual_size", "regular")}
        return Level(self.id, difficulty, number, lv, state, n * n, record, extra, where, record.get("name", ""))

    def format_move(self, level, action):
        n = int(level.lv[0])
        return f"{action // n + 1}>{action % n + 1}"

    def parse_move(self, level, text):
        m = _MOVE_RE.match(text)
        if not m:
            raise MoveSyntaxError(f"{text!r} is not a Nut and Bolt move; write {self.move_syntax}")
        n = int(level.lv[0])
        f, t = int(m.group(1)), int(m.group(2))
        for b in (f, t):
            if not 1 <= b <= n:
                raise MoveSyntaxError(f"{text!r}: there is no bolt {b} in {level.id} (bolts 1..{n})")
        return (f - 1) * n + (t - 1)

    def render_text(self, level, state):
        n, cap = int(level.lv[0]), int(level.lv[1])
        lines = []
        for b in range(n):
            h = int(state[b])
            cells = [PALETTE[int(state[n + b * cap + i]) - 1][1] for i in range(h)] + ["."] * (cap - h)
            lines.append(f"{b + 1:>2} |{' '.join(cells)}")
        used = sorted({int(c) for c in state[n:] if c})
        legend = ", ".join(f"{PALETTE[c - 1][1]}={PALETTE[c - 1][0]}" for c in used)
        return "\n".join(lines + [f"   (bottom -> top; {legend})"])


PUZZLE = NutAndBolt()
