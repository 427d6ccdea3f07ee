"""Truck Escape (``truck_escape``): tap trucks to drive them off the field; a truck can only
leave when no remaining truck stands anywhere ahead of it in its lane. RULES.md section 5.

Each truck covers two adjacent cells, its tail and its head (the head is one step from the
tail in the truck's direction: up, down, left or right). Trucks never move except to leave,
so whether truck j stands in truck i's lane is fixed by the layout and is precomputed.

Level vector ``lv`` (int32), field of R rows x C columns, N trucks, cells ``r * C + c``::

    lv[0] = R        lv[1] = C        lv[2] = N
    lv[3 + 3*i + 0]  tail cell of truck i
    lv[3 + 3*i + 1]  head cell of truck i
    lv[3 + 3*i + 2]  direction of truck i: 0 up, 1 down, 2 left, 3 right
    B = 3 + 3*N
    lv[B + i*N + j]  1 if truck j covers a cell ahead of truck i's head (in i's direction,
                     up to the field edge), i.e. j blocks i while j remains; else 0

State ``s`` (int8, length 1 + N)::

    s[0]     number of trucks still on the field
    s[1 + i] 1 if truck i is still on the field, 0 once it has driven away

Action ``a = i`` (tap truck i), text: the truck's id, e.g. ``t3``. A blocked truck does not
move (code ``blocked``); tapping a truck that has already left is ``gone``. No undo.
Progress P = trucks removed / total trucks (RULES.md 5.3).
"""

from __future__ import annotations

import sys

import numpy as np
from longpuzzle.engine.jit import njit

from longpuzzle.engine.fields import Fields, board_size, is_int, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.geometry import Rect, Widget
from longpuzzle.engine.protocol import BAD_ACTION, OK, Level, Puzzle, Rejection
from longpuzzle.engine.suite import GameUI
from longpuzzle.engine.suite.intents import Move, Refuse, Shake, Toast

BLOCKED, GONE = 3, 4
DIRECTIONS = ("up", "down", "left", "right")
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
ARROWS = "^v<>"
MAX_SIDE = 40
MAX_TRUCKS = 120


@njit(cache=True)
def _check(lv, s, i):
    n = lv[2]
    if s[1 + i] == 0:
        return GONE
    base = 3 + 3 * n + i * n
    for j in range(n):
        if lv[base + j] != 0 and s[1 + j] != 0:
            return BLOCKED
    return OK


@njit(cache=True)
def step_into(lv, src, dst, action):
    for k in range(src.shape[0]):
        dst[k] = src[k]
    n = lv[2]
    if action < 0 or action >= n:
        return BAD_ACTION
    code = _check(lv, src, action)
    if code != OK:
        return code
    dst[1 + action] = 0
    dst[0] = src[0] - 1
    return OK


@njit(cache=True)
def legal_into(lv, s, mask):
    n = lv[2]
    count = 0
    for i in range(n):
        ok = _check(lv, s, i) == OK
        mask[i] = 1 if ok else 0
        if ok:
            count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    return s[0] == 0


@njit(cache=True)
def progress(lv, s):
    n = lv[2]
    if n == 0:
        return 1.0
    return (n - int(s[0])) / n



def _is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class TruckEscape(Puzzle):
    id = "truck_escape"
    title = "Truck Escape"
    difficulties = ("default",)
    catalog_order = 4
    undo_allowed = False
    state_dtype = np.int8
    kernels = sys.modules[__name__]
    rejections = {
        BLOCKED: Rejection("blocked", "another truck stands ahead of it in its lane"),
        GONE: Rejection("gone", "that truck has already driven away"),
    }
    move_syntax = "the id of a truck to tap, e.g. t3"

    def build_level(self, record, *, difficulty, number, where):
        fail = level_fail(self.id, difficulty, number, where)

        rows, cols = board_size(record, fail, 1, MAX_SIDE)
        trucks = record.get("trucks")
        if not isinstance(trucks, list) or not 1 <= len(trucks) <= MAX_TRUCKS:
            raise fail(f"must be a list of 1..{MAX_TRUCKS} trucks", "trucks")
        n = len(trucks)

        def cell_of(value, field):
            if (not isinstance(value, list) or len(value) != 2 or not all(is_int(x) for x in value)):
                raise fail("must be [row, col]", field)
            r, c = value
            if not (0 <= r < rows and 0 <= c < cols):
                raise fail(f"cell [{r}, {c}] is outside the {rows} x {cols} field", field)
            return r, c

        geo = np.zeros(3 * n, np.int32)
        owner: dict[tuple[int, int], str] = {}
        ids: list[str] = []
        info = []
        for i, t in enumerate(trucks):
            field = f"trucks[{i}]"
            if not isinstance(t, dict):
                raise fail("a truck is an object with id, tail and direction", field)
            tid = t.get("id")
            if not isinstance(tid, str) or not tid or any(ch.isspace() for ch in tid):
                raise fail("must be a non-empty name without spaces", f"{field}.id")
            if tid.lower() in ("undo", "restart"):
                raise fail(f"{tid!r} is a reserved session command, not usable as a truck id", f"{field}.id")
            if tid in ids:
                raise fail(f"truck id {tid!r} is used twice", f"{field}.id")
            ids.append(tid)
            d = t.get("direction")
            if d not in DIRECTIONS:
                raise fail(f"unknown direction {d!r} (use up, down, left or right)", f"{field}.direction")
            di = DIRECTIONS.index(d)
            tr, tc = cell_of(t.get("tail"), f"{field}.tail")
            hr, hc = tr + STEPS[di][0], tc + STEPS[di][1]
            if "head" in t:
                given = t["head"]
                if given != [hr, hc]:
                    raise fail(f"the head must be one step {d} of the tail, i.e. [{hr}, {hc}], not {given!r}",
                               f"{field}.head")
            if not (0 <= hr < rows and 0 <= hc < cols):
                raise fail(f"the head [{hr}, {hc}] is outside the {rows} x {cols} field", f"{field}.direction")
            for cell in ((tr, tc), (hr, hc)):
                if cell in owner:
                    raise fail(f"truck {tid!r} overlaps truck {owner[cell]!r} on cell {list(cell)}", field)
                owner[cell] = tid
            geo[3 * i:3 * i + 3] = (tr * cols + tc, hr * cols + hc, di)
            ft = Fields(t, fail, f"{field}.")
            extra_t = {"id": tid, "tail": [tr, tc], "head": [hr, hc], "direction": d,
                       "color": ft.text("color", default="yellow", max_len=40)}
            for key in ("center_field", "center_screen"):
                if key in t:
                    extra_t[key] = [float(v) for v in ft.point(key)]
            info.append(extra_t)

        # blocking matrix: j blocks i iff j covers a cell ahead of i's head
        block = np.zeros(n * n, np.int32)
        cell_owner = {cell: ids.index(tid) for cell, tid in owner.items()}
        for i, t in enumerate(info):
            dr, dc = STEPS[DIRECTIONS.index(t["direction"])]
            r, c = t["head"][0] + dr, t["head"][1] + dc
            while 0 <= r < rows and 0 <= c < cols:
                j = cell_owner.get((r, c))
                if j is not None:
                    block[i * n + j] = 1
                r, c = r + dr, c + dc
        lv = np.concatenate([np.array([rows, cols, n], np.int32), geo, block]).astype(np.int32)
        state = np.ones(1 + n, np.int8)
        state[0] = n

        order = record.get("clearing_order")
        order_actions = None
        if order is not None:
            if not isinstance(order, list) or not all(isinstance(x, str) for x in order):
                raise fail("must be a list of truck ids", "clearing_order")
            order_actions = []
            cur = state.copy()
            for k, tid in enumerate(order):
                if tid not in ids:
                    raise fail(f"there is no truck {tid!r}", f"clearing_order[{k}]")
                a = ids.index(tid)
                nxt = np.empty_like(cur)
                code = int(step_into(lv, cur, nxt, np.int64(a)))
                if code != OK:
                    raise fail(f"truck {tid!r} cannot leave at that point ({self.describe_code(code).reason})",
                               f"clearing_order[{k}]")
                cur = nxt
                order_actions.append(a)
            if not is_solved(lv, cur):
                raise fail(f"leaves {int(cur[0])} trucks on the field", "clearing_order")

        screen = {}
        fr = Fields(record, fail)
        for key, hi in (("cell_size", 500), ("truck_length", 2000), ("truck_width", 2000), ("screen_scale", 20),
                        ("screen_cell_size", 500)):
            if key in record:
                screen[key] = fr.number(key, lo=0, hi=hi, positive=True)
        if "screen_field_origin" in record:
            screen["screen_field_origin"] = [float(v) for v in fr.point("screen_field_origin")]
        extra = {"rows": rows, "cols": cols, "ids": ids, "trucks": info,
                 "cell_size": screen.get("cell_size", 60), "truck_length": screen.get("truck_length", 120),
                 "truck_width": screen.get("truck_width", 51), "screen_scale": screen.get("screen_scale"),
                 "screen_field_origin": screen.get("screen_field_origin"),
                 "screen_cell_size": screen.get("screen_cell_size"),
                 "title": fr.text("title", default="", max_len=500),
                 "instruction": fr.text("instruction", default="", max_len=2000),
                 "clearing_actions": order_actions}
        return Level(self.id, difficulty, number, lv, state, n, record, extra, where, fr.text("name", default=""))

    def state_bounds(self, level):
        """Trucks left: 0 .. the initial count; a truck's flag only ever goes from 1 to 0."""
        return np.zeros_like(level.initial), level.initial.copy()

    def format_move(self, level, action):
        return level.extra["ids"][int(action)]

    def parse_move(self, level, text):
        t = text.strip() if isinstance(text, str) else text
        ids = level.extra["ids"]
        if t in ids:
            return ids.index(t)
        low = [x.lower() for x in ids]
        if isinstance(t, str) and t.lower() in low:
            return low.index(t.lower())
        raise MoveSyntaxError(f"{text!r} is not a truck of {level.id}; write {self.move_syntax} "
                              f"(trucks: {ids[0]}..{ids[-1]})")

    def render_text(self, level, state):
        rows, cols = int(level.lv[0]), int(level.lv[1])
        ids = level.extra["ids"]
        width = max(len(x) for x in ids) + 1
        grid = [[".".center(width) for _ in range(cols)] for _ in range(rows)]
        for i, t in enumerate(level.extra["trucks"]):
            if not state[1 + i]:
                continue
            label = ids[i] + ARROWS[DIRECTIONS.index(t["direction"])]
            for r, c in (t["tail"], t["head"]):
                grid[r][c] = label.rjust(width)
        lines = [" ".join(row) for row in grid]
        n = int(level.lv[2])
        lines.append(f"(each truck is shown on both its cells with the arrow of its direction; "
                     f"{n - int(state[0])}/{n} trucks gone)")
        return "\n".join(lines)


# ---- screen: field geometry (design px) and taps (RULES.md 5.1, 5.2) -------------------------

FIELD_MAX_W, FIELD_MAX_H = 480.0, 560.0     # the field is scaled to fit this box ...
FIELD_CX, FIELD_CY = 270.0, 480.0           # ... centred here (design px)
LEAVE_MS = 550                              # a free truck drives away in 0.55 s
BLOCKED_TEXT = "Blocked - move the trucks in front first"
ITEMS = (("remove", "Remove", 140.0), ("shuffle", "Shuffle", 270.0), ("flip", "Flip", 400.0))
ITEM_Y, ITEM_SIZE = 870.0, 96.0
PROGRESS_BAR = Rect.centred(270, 110, 320, 28)


class TruckEscapeUI(GameUI):
    """Field of ``cols x rows`` cells of ``cell_size`` (60) field units, shown at ``scale =
    min(480 / field_width, 560 / field_height)`` and centred at design (270, 480). A truck's
    tap area is its oriented rectangle (``truck_length`` 120 x ``truck_width`` 51 field units
    around its centre, long side along its direction), axis-aligned here since trucks face
    up / down / left / right; trucks never overlap, so the layout holds one static target per
    truck and a truck that has left is ignored.

    A tap acts on release (TOUCH_END) at the release point: on a remaining truck it tries
    that truck - a free truck drives away (0.55 s) and is removed; a blocked one shakes and
    the title flashes BLOCKED_TEXT for 1.4 s (the suite's toast, drawn at the title). The
    item buttons Remove / Shuffle / Flip only flash "<name> is not available yet". No UI
    state."""
    pointer_up_only = True        # on_pointer acts on the release alone

    exit_to = "home"
    instructions = "Tap a truck with a clear road ahead to drive it away. Clear every truck!"
    complete_title = "Level complete!"
    complete_text = "Every truck has left the yard"
    header_y = 60
    toast_y = 60                 # the message flashes in the title line

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        ex = level.extra
        self.rows, self.cols, self.n = int(level.lv[0]), int(level.lv[1]), int(level.lv[2])
        self.unit = float(ex.get("cell_size") or 60)
        fw, fh = self.cols * self.unit, self.rows * self.unit
        self.scale = min(FIELD_MAX_W / fw, FIELD_MAX_H / fh)
        self.ox = FIELD_CX - fw * self.scale / 2
        self.oy = FIELD_CY - fh * self.scale / 2
        self.cell = self.unit * self.scale
        self.field = Rect(self.ox, self.oy, self.ox + fw * self.scale, self.oy + fh * self.scale)
        self.length = float(ex.get("truck_length") or 120) * self.scale
        self.width = float(ex.get("truck_width") or 51) * self.scale
        self.dirs = [DIRECTIONS.index(t["direction"]) for t in ex["trucks"]]
        self.centers = []
        self.rects = []
        for i, t in enumerate(ex["trucks"]):
            (tr, tc), (hr, hc) = t["tail"], t["head"]
            cx = self.ox + ((tc + hc) / 2 + 0.5) * self.cell
            cy = self.oy + ((tr + hr) / 2 + 0.5) * self.cell
            self.centers.append((cx, cy))
            vertical = self.dirs[i] < 2
            w, h = (self.width, self.length) if vertical else (self.length, self.width)
            self.rects.append(Rect.centred(cx, cy, w, h))
        self._targets = [Widget(f"truck:{i}", self.rects[i], "target", ex["ids"][i], (i,)) for i in range(self.n)]
        self._buttons = [Widget(f"item:{k}", Rect.centred(x, ITEM_Y, ITEM_SIZE, ITEM_SIZE), "item", name)
                         for k, name, x in ITEMS]

    def buttons(self, direct):
        ws = [Widget("restart", Rect.centred(475, 60, 95, 38), "pill_button", "Restart")]
        if not direct:
            ws.append(Widget("menu", Rect.centred(65, 60, 95, 38), "pill_button", "Menu"))
        return ws + self._buttons

    def targets(self):
        return self._targets

    def hud_lines(self, session):
        return []

    def on_pointer(self, board, kind, x, y, t):
        if kind != "up":
            return []
        w = board.hit(x, y)
        if w is None or w.kind != "target":
            return []
        i = w.data[0]
        if not board.at(1 + i):
            return []                  # that truck has left: nothing is there any more
        return self.tap(w)

    def tap(self, w):
        """A tap on truck widget ``w`` (intents.py: a generator of intents)."""
        o = yield Move(w.data[0])
        if not o.accepted:
            yield Shake(w.id)
            yield Toast(BLOCKED_TEXT)

    def on_button(self, board, wid, t):
        for k, name, _ in ITEMS:
            if wid == f"item:{k}":
                text = f"{name} is not available yet"
                return [Toast(text), Refuse("item_unavailable", text)]
        return []

    def animation_ms(self, before, after, action, code):
        return LEAVE_MS

    def gesture_for(self, action, proj, suite=None):
        px, py = proj.to_px(*self.centers[int(action)])
        return {"type": "click", "x": round(px), "y": round(py)}


TruckEscape.ui = TruckEscapeUI


PUZZLE = TruckEscape()
