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
from longpuzzle.engine.jit import njit

from longpuzzle.engine.fields import Fields, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.geometry import Circle, Rect, Widget
from longpuzzle.engine.protocol import BAD_ACTION, OK, Level, Puzzle, Rejection
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import Deselect, Move, Refuse, Select, Shake, Toast

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
    dead_ends = True
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
        fail = level_fail(self.id, difficulty, number, where)

        f = Fields(record, fail)
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
                if type(name) is not str or name not in COLOUR_ID:
                    raise fail(f"unknown colour {name!r} (known: {', '.join(COLOUR_ID)})", f"{field}.nuts[{i}]")
                state[n + b * cap + i] = COLOUR_ID[name]
                counts[name] = counts.get(name, 0) + 1
            state[b] = len(nuts)
            for key, out in (("x", xs), ("base_y", ys)):
                # authoring pixels of a 430 x 932 frame: anywhere near it
                out.append(float(f.number(key, lo=-2000, hi=3000, default=0, source=bolt, field=f"{field}.{key}")))
        if not counts:
            raise fail("the level has no nuts", "bolts")
        for name, k in counts.items():
            if k % cap:
                raise fail(f"colour {name!r} appears {k} times, not a multiple of the capacity {cap}; "
                           "the level could never be solved", "bolts")
        lv = np.array([n, cap, len(counts)], np.int32)
        extra = {"x": xs, "base_y": ys, "nut_step": f.number("nut_step", default=24, lo=1, hi=200),
                 "cap_base_offset": f.number("cap_base_offset", default=45, lo=0, hi=400),
                 "visual_size": f.text("visual_size", default="regular", choices=NUT_WIDTH)}
        f.text("name", default="")
        return Level(self.id, difficulty, number, lv, state, n * n, record, extra, where, record.get("name", ""))

    def state_bounds(self, level):
        """Heights 0..capacity; nut slots 0 (empty) .. the largest palette number in the level."""
        n, cap = int(level.lv[0]), int(level.lv[1])
        init = level.initial
        low = np.zeros_like(init)
        high = np.empty_like(init)
        high[:n] = cap
        high[n:] = int(init[n:].max())
        return low, high

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


# ---- screen: board geometry (design px) and the tap state machine (RULES.md 4.1, 4.3) ------

AUTH_TO_DESIGN = (540 / 430, 960 / 932)      # authoring frame 430 x 932 -> design 540 x 960
NUT_WIDTH = {"large": 70.0, "regular": 60.0, "compact": 50.0}   # design px, by visual_size
TOAST_EMPTY = "This bolt is empty"
TOAST_FULL = "This bolt has no room"
TOAST_COLOUR = "Nuts only stack on the same colour"
TOAST_OTHER = "You can't move that there"
_TOASTS = {"target_full": TOAST_FULL, "colour_mismatch": TOAST_COLOUR}


class NutAndBoltUI(GameUI):
    """Bolts laid out from the level's authoring coordinates; each bolt's tap box is anchored
    at its base bottom-centre, ``max(base, nut) * 1.256 + 18`` wide, reaching from the base to
    the cap top plus 0.85 nut height plus the selection lift (clipped so that boxes of bolts
    standing above one another never overlap). UI state: ``{"selected": bolt or None}``.

    Taps act on release inside the bolt that was pressed. No selection: an empty bolt shakes
    with a toast, a non-empty one is selected (its top run lifts). The selected bolt again:
    deselect. Another bolt: try the move - success clears the selection, failure shakes that
    bolt, shows a toast and KEEPS the selection (there is no switching by tapping)."""
    pointer_up_only = True        # on_pointer acts on the release alone

    exit_to = "difficulty"
    instructions = "Tap a bolt to lift its top nuts, then tap another bolt to move them there."
    complete_title = "Complete!"
    complete_text = "Every bolt is sorted"
    # on the hub a solved level goes on to the next 1.35 s later with no Next button
    # (RULES.md 1.3; the card of an objective's last level keeps its buttons)
    auto_advance_ms = 1350
    header_y = 84.5
    MOVE_MS = 380

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        ex = level.extra
        sx, sy = AUTH_TO_DESIGN
        self.n, self.cap = int(level.lv[0]), int(level.lv[1])
        self.step = float(ex["nut_step"]) * sy
        self.nut_w = NUT_WIDTH.get(ex.get("visual_size"), NUT_WIDTH["regular"])
        self.nut_h = self.step * 0.9
        self.base_w = self.nut_w
        self.base_h = max(8.0, (float(ex["cap_base_offset"]) - 1.5 * float(ex["nut_step"])) * sy)
        self.rod_w = max(8.0, self.nut_w * 0.2)
        self.lift = 1.4 * self.step
        self.cap_h = max(7.0, self.step * 0.42)
        self.cx = [x * sx for x in ex["x"]]
        self.base = [y * sy for y in ex["base_y"]]
        cap_off = (float(ex["cap_base_offset"]) + (self.cap - 1) * float(ex["nut_step"])) * sy
        self.cap_y = [b - cap_off for b in self.base]
        w = max(self.base_w, self.nut_w) * 1.256 + 18
        boxes = []
        for b in range(self.n):
            top = self.cap_y[b] - self.cap_h / 2 - 0.85 * self.nut_h - self.lift
            boxes.append([self.cx[b] - w / 2, top, self.cx[b] + w / 2, self.base[b]])
        for b, bx in enumerate(boxes):          # no two tap boxes overlap:
            for o, ob in enumerate(boxes):
                if o == b or not (ob[0] < bx[2] and bx[0] < ob[2] and ob[1] < bx[3] and bx[1] < ob[3]):
                    continue
                if ob[3] < bx[3] - 1e-6:          # a bolt standing above: stop below its base
                    bx[1] = max(bx[1], ob[3])
                elif abs(ob[3] - bx[3]) <= 1e-6:  # neighbours in a row: split the overlap midway
                    mid = (self.cx[b] + self.cx[o]) / 2
                    if self.cx[o] > self.cx[b]:
                        bx[2] = min(bx[2], mid)
                    else:
                        bx[0] = max(bx[0], mid)
        self.boxes = [Rect(*bx) for bx in boxes]
        self._targets = [Widget(f"bolt:{b}", self.boxes[b], "target", str(b + 1), (b,)) for b in range(self.n)]

    # geometry used by the renderer too
    def nut_y(self, b: int, i: int) -> float:
        """Design y of the centre of the i-th nut (from the bottom) resting on bolt b."""
        return self.base[b] - self.base_h - (i + 0.5) * self.step

    def top_run(self, state, b: int) -> int:
        n, cap = self.n, self.cap
        h = int(state[b])
        if h == 0:
            return 0
        c = state[n + b * cap + h - 1]
        k = 1
        while k < h and state[n + b * cap + h - 1 - k] == c:
            k += 1
        return k

    def buttons(self, direct):
        ws = [Widget("restart", Circle(489.8, 84.5, 31), "round_button", "Restart"),
              Widget("undo", Circle(68.4, 877.9, 36), "round_button", "Undo")]
        if not direct:
            ws.append(Widget("menu", Circle(48.3, 84.5, 24), "round_button", "Back"))
        return ws

    def targets(self):
        return self._targets

    def initial_state(self):
        return {"selected": None}

    def check_ui(self, ui):
        why = super().check_ui(ui)
        sel = ui.get("selected") if not why else None
        if not why and sel is not None and not (type(sel) is int and 0 <= sel < self.n):
            why = f"selected must be a bolt index 0..{self.n - 1} or null"
        return why

    def on_pointer(self, board, kind, x, y, t):
        if kind != "up":
            return []
        w = board.hit(x, y)
        if w is None or w.kind != "target" or w.id != board.pointer.get("target"):
            return []
        return self.tap(board, w.data[0])

    def tap(self, board, b: int):
        """A tap on bolt ``b`` (intents.py: a generator of intents)."""
        ui = board.ui
        sel = ui.get("selected")
        if sel is None:
            if board.at(b) == 0:
                yield Shake(f"bolt:{b}")
                yield Toast(TOAST_EMPTY)
                yield Refuse("source_empty", TOAST_EMPTY, f"bolt:{b}")
                return
            ui["selected"] = b
            yield Select(f"bolt:{b}")
            return
        if sel == b:
            ui["selected"] = None
            yield Deselect(f"bolt:{b}")
            return
        o = yield Move(sel * self.n + b)
        if o.accepted:
            ui["selected"] = None
            return
        yield Shake(f"bolt:{b}")
        yield Toast(_TOASTS.get(o.reason, TOAST_OTHER))

    def animation_ms(self, before, after, action, code):
        return self.MOVE_MS

    def tap_point(self, b: int) -> tuple[float, float]:
        """A design point well inside bolt b's tap box (on its rod, below the cap)."""
        r = self.boxes[b]
        return self.cx[b], (max(r.y0, self.cap_y[b]) + r.y1) / 2

    def gesture_for(self, action, proj, suite=None):
        f, t = divmod(int(action), self.n)
        pts = [proj.to_px(*self.tap_point(b)) for b in (f, t)]
        return {"type": "batch", "actions": [{"type": "click", "x": round(px), "y": round(py)} for px, py in pts]}


NutAndBolt.ui = NutAndBoltUI


PUZZLE = NutAndBolt()
