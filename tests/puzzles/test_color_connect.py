"""Color Connect: rules, move text, level files, reference solutions.

The rule tests compare the compiled kernels with a small independent model written here
from RULES.md section 7 (per colour a completed path or none, at most one active path)."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.engine.catalog import builtin_catalog, parse_level_file
from longpuzzle.engine.errors import IllegalMoveError, LevelFormatError, MoveSyntaxError
from longpuzzle.engine.protocol import BAD_ACTION, OK
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Session, replay
from longpuzzle.puzzles.color_connect import PALETTE

P = get_puzzle("color_connect")
LEVELS = builtin_catalog().levels("color_connect")
LEVEL_FILE = Path(__file__).resolve().parents[2] / "puzzles" / "levels" / "color_connect.json"


def make_level(rows, cols, pairs, **more):
    rec = {"rows": rows, "cols": cols,
           "pairs": [{"color": c, "endpoints": [list(a), list(b)]} for c, a, b in pairs], **more}
    return P.build_level(rec, difficulty="easy", number=1, where="<test>")


# A 3 x 4 board:   R . . B
#                  . G . .
#                  R . G B
SMALL = make_level(3, 4, [("coral", (0, 0), (2, 0)), ("blue", (0, 3), (2, 3)), ("green", (1, 1), (2, 2))])


# ---- independent model ------------------------------------------------------------------
class Model:
    def __init__(self, level):
        self.rows, self.cols, self.k = (int(v) for v in level.lv[:3])
        self.eps = [tuple(r * self.cols + c for r, c in pair) for pair in level.extra["endpoints"]]
        self.active = None            # (colour, [cells])
        self.done = {}                # colour -> cells from endpoint 0 to endpoint 1

    def copy(self):
        m = Model.__new__(Model)
        m.__dict__.update(self.__dict__)
        m.active = None if self.active is None else (self.active[0], list(self.active[1]))
        m.done = {k: list(v) for k, v in self.done.items()}
        return m

    def endpoint_colour(self, cell):
        for ci, pair in enumerate(self.eps):
            if cell in pair:
                return ci
        return None

    def step(self, a):
        """-> reason string ('' when accepted); mutates on success only."""
        n = self.rows * self.cols
        if a < n:
            if self.active is None:
                return "no_active_path"
            ci, cells = self.active
            tr, tc = divmod(cells[-1], self.cols)
            r, c = divmod(a, self.cols)
            if abs(tr - r) + abs(tc - c) != 1:
                return "not_adjacent"
            if len(cells) >= 2 and cells[-2] == a:
                cells.pop()
                return ""
            if a in cells:
                return "self_intersection"
            owner = self.endpoint_colour(a)
            if owner is not None and owner != ci:
                return "other_color_endpoint"
            if any(a in path for path in self.done.values()):
                return "completed_path"
            cells.append(a)
            if owner == ci:
                self.done[ci] = cells if cells[0] == self.eps[ci][0] else cells[::-1]
                self.active = None
            return ""
        if a == n:
            if self.active is None:
                return "no_active_path"
            self.active = None
            return ""
        if self.active is not None:
            return "active_path_exists"
        j = a - n - 1
        if j < 2 * self.k:
            if j // 2 in self.done:
                return "already_connected"
            self.active = (j // 2, [self.eps[j // 2][j % 2]])
            return ""
        if j - 2 * self.k not in self.done:
            return "not_connected"
        del self.done[j - 2 * self.k]
        return ""

    def encode(self):
        """The state array as documented in the module docstring."""
        n, k = self.rows * self.cols, self.k
        s = np.zeros(3 + k + 3 * n, np.int16)
        s[3 + k + n:] = -1
        s[2] = len(self.done)
        for ci, cells in self.done.items():
            s[3 + ci] = len(cells)
            for i, cell in enumerate(cells):
                s[3 + k + cell] = ci + 1
                s[3 + k + n + cell] = i
        if self.active is not None:
            s[0] = self.active[0] + 1
            s[1] = len(self.active[1])
            for i, cell in enumerate(self.active[1]):
                s[3 + k + 2 * n + i] = cell
        return s


def check_invariants(level, s):
    rows, cols, k = (int(v) for v in level.lv[:3])
    n = rows * cols
    paths = P.completed_paths(level, s)
    active = P.active_path(level, s)
    used = {}
    for name, cells in paths.items():
        ci = level.extra["colors"].index(name)
        assert cells[0] == level.extra["endpoints"][ci][0] and cells[-1] == level.extra["endpoints"][ci][1]
        for a, b in zip(cells, cells[1:]):
            assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1, f"{name} path is not 4-connected"
        for cell in cells:
            assert cell not in used, f"{cell} is on the paths of {used.get(cell)} and {name}"
            used[cell] = name
    if active:
        name, cells = active
        ci = level.extra["colors"].index(name)
        assert name not in paths
        assert cells[0] in level.extra["endpoints"][ci]
        assert len(set(cells)) == len(cells), "active path crosses itself"
        for a, b in zip(cells, cells[1:]):
            assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1
        eps = {e: j for j, pair in enumerate(level.extra["endpoints"]) for e in pair}
        for cell in cells:
            assert cell not in used, f"active path enters the completed path of {used.get(cell)}"
            assert eps.get(cell, ci) == ci, "active path enters another colour's endpoint"
    p = P.progress(level, s)
    assert 0.0 <= p <= 1.0
    assert p == len(paths) / k
    assert (p == 1.0) == P.is_solved(level, s) == (len(paths) == k)
    assert int(s[2]) == len(paths)
    assert s.shape == (3 + k + 3 * n,) and s.dtype == np.int16


# ---- levels and reference solutions -----------------------------------------------------
def test_catalogue_has_20_levels():
    assert [(o.difficulty, len(o.level_ids)) for o in builtin_catalog().objectives("color_connect")] == \
        [("easy", 10), ("hard", 10)]
    assert P.catalog_order == 6 and not P.undo_allowed


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_reference_paths_replay_to_a_win(level):
    routes = level.extra["solution"]
    assert len(routes) == int(level.lv[2])
    s = replay(level, routes)
    assert s.solved and s.progress == 1.0
    check_invariants(level, s.state)
    # drawn from the other end, the final state is identical (positions count from endpoint 0)
    rev = [name + ":" + "-".join(reversed(cells.split("-"))) for name, cells in (r.split(":") for r in routes)]
    assert np.array_equal(replay(level, rev[::-1]).state, s.state)
    # corner-only routes (straight segments walked by the game) expand to the same steps
    corners = []
    for r in routes:
        name, cells = r.split(":")
        pts = [tuple(map(int, c.split(","))) for c in cells.split("-")]
        keep = [pts[0]] + [b for a, b, c in zip(pts, pts[1:], pts[2:])
                           if (a[0] == b[0] == c[0]) is False and (a[1] == b[1] == c[1]) is False] + [pts[-1]]
        corners.append(f"{name}:" + "-".join(f"{x},{y}" for x, y in keep))
        assert P.actions(level, corners[-1]) == P.actions(level, r)
    assert np.array_equal(replay(level, corners).state, s.state)


def test_level_extra_keeps_renderer_data():
    lv = LEVELS[0]
    assert lv.extra["rows"] == 6 and lv.extra["cols"] == 6
    assert lv.extra["colors"][0] == "orange" and lv.extra["display_colors"][0] == "#ff8e00"
    assert lv.extra["endpoints"][0] == ((0, 0), (3, 2))
    ref_file = Path("/work/shared/reference/longpuzzlebench/levels/color_connect.json")
    if ref_file.exists():   # the converted file keeps the reference's sizes, colours and order
        ref = json.loads(ref_file.read_text(encoding="utf-8"))
        assert len(ref["levels"]) == len(LEVELS)
        for rec, level in zip(ref["levels"], LEVELS):
            assert (level.extra["rows"], level.extra["cols"]) == (rec["rows"], rec["cols"])
            assert level.extra["colors"] == [p["color"] for p in rec["pairs"]]
            assert level.extra["display_colors"] == [p["display_color"] for p in rec["pairs"]]
            assert level.name == rec["id"]


BASE = {"rows": 3, "cols": 3, "pairs": [{"color": "blue", "endpoints": [[0, 0], [2, 2]]},
                                        {"color": "green", "endpoints": [[0, 2], [2, 0]]}]}


def _broken(**change):
    rec = json.loads(json.dumps(BASE))
    for path, value in change.items():
        *head, last = path.split("__")
        obj = rec
        for h in head:
            obj = obj[int(h)] if h.isdigit() else obj[h]
        obj[int(last) if last.isdigit() else last] = value
    return rec


@pytest.mark.parametrize("rec, field", [
    (_broken(pairs__0__endpoints__1=[3, 0]), "pairs[0].endpoints[1]"),          # off the board
    (_broken(pairs__1__endpoints__0=[0, -1]), "pairs[1].endpoints[0]"),         # off the board
    (_broken(pairs__1__endpoints__1=[0, 0]), "pairs[1].endpoints[1]"),          # two endpoints on one cell
    (_broken(pairs__1__color="teal"), "pairs[1].color"),                        # unknown colour
    (_broken(pairs__0__endpoints=[[0, 0]]), "pairs[0].endpoints"),              # 1 endpoint
    (_broken(pairs__0__endpoints=[[0, 0], [1, 1], [2, 2]]), "pairs[0].endpoints"),  # 3 endpoints
    (_broken(pairs__1__color="blue"), "pairs[1].color"),                        # 4 endpoints of blue
    (_broken(rows=0), "rows"),
    (_broken(cols="3"), "cols"),
    (_broken(pairs=[]), "pairs"),
    (_broken(pairs__0__display_color="blue"), "pairs[0].display_color"),
    (_broken(solution=["red:0,0-0,1"]), "solution[0]"),
    (_broken(blocked_cells=[[1, 1]]), "blocked_cells"),
])
def test_level_format_errors_name_the_field(rec, field):
    with pytest.raises(LevelFormatError) as e:
        P.build_level(rec, difficulty="easy", number=1, where="x.json")
    assert e.value.field == field
    assert field in str(e.value)


def test_level_file_error_through_catalogue_parser():
    doc = json.loads(LEVEL_FILE.read_text(encoding="utf-8"))
    doc["objectives"][1]["levels"][2]["pairs"][0]["endpoints"][0] = [99, 0]
    with pytest.raises(LevelFormatError) as e:
        parse_level_file(json.dumps(doc), "cc.json")
    assert e.value.level == "color_connect/hard/3" and e.value.field == "pairs[0].endpoints[0]"
    assert parse_level_file(LEVEL_FILE.read_text(encoding="utf-8"))[0] == "color_connect"


# ---- move text --------------------------------------------------------------------------
@pytest.mark.parametrize("level", [SMALL, LEVELS[0], LEVELS[-1]], ids=lambda lv: lv.id)
def test_every_action_round_trips(level):
    texts = set()
    for a in range(level.n_actions):
        t = P.format_move(level, a)
        assert " " not in t and t not in texts
        texts.add(t)
        assert P.parse_move(level, t) == a
        assert P.parse_move(level, t.upper()) == a


def test_text_aliases_and_syntax_errors():
    n = 12
    assert P.parse_move(SMALL, "step:1,2") == P.parse_move(SMALL, "1,2") == 6
    assert P.parse_move(SMALL, "start:2,3") == P.parse_move(SMALL, "start:blue@2,3") == n + 1 + 3
    assert P.parse_move(SMALL, "remove:green") == n + 1 + 6 + 2
    assert P.parse_move(SMALL, "cancel") == n
    # a route: start, then the gap 0,0 -> 0,2 walked cell by cell, then a non-line jump kept as one step
    assert P.actions(SMALL, "coral:0,0-0,2-1,3") == [n + 1, 1, 2, 7]
    for bad in ["", "up", "3,0", "0,4", "start:green@0,0", "start:1,0", "remove:red", "purple:0,0-1,0",
                "coral:1,0-2,0", "start:coral@0,0 0,1", "coral:", "coral:0,0-", "step:0,0-0,1"]:
        with pytest.raises(MoveSyntaxError):
            P.actions(SMALL, bad)


# ---- rules ------------------------------------------------------------------------------
def reason(session, move):
    outs = session.try_move(move)
    return outs[-1].reason if not outs[-1].accepted else ""


def test_each_rejection_reason():
    s = Session(SMALL)
    assert reason(s, "0,1") == "no_active_path"
    assert reason(s, "cancel") == "no_active_path"
    assert reason(s, "remove:blue") == "not_connected"
    assert reason(s, "start:coral@0,0") == ""
    assert reason(s, "start:blue@0,3") == "active_path_exists"
    assert reason(s, "remove:blue") == "active_path_exists"
    assert reason(s, "1,1") == "not_adjacent"
    assert reason(s, "0,0") == "not_adjacent"          # the tip itself
    assert reason(s, "1,0") == ""
    assert reason(s, "1,1") == "other_color_endpoint"
    assert reason(s, "0,0") == ""                       # backtrack pops the tip
    assert P.active_path(SMALL, s.state) == ("coral", [(0, 0)])
    assert reason(s, "0,1") == ""
    assert reason(s, "1,1") == "other_color_endpoint"
    assert P.active_path(SMALL, s.state) == ("coral", [(0, 0), (0, 1)])
    assert reason(s, "cancel") == ""
    assert P.active_path(SMALL, s.state) is None
    s.play("blue:2,3-1,3-0,3")                          # drawn from endpoint 1
    assert P.completed_paths(SMALL, s.state) == {"blue": [(0, 3), (1, 3), (2, 3)]}
    assert s.state[0] == 0 and s.progress == pytest.approx(1 / 3)
    assert reason(s, "start:blue@0,3") == "already_connected"
    s.play("coral:0,0-0,1-0,2-1,2")
    assert reason(s, "1,3") == "completed_path"
    assert reason(s, "0,2") == ""
    assert reason(s, "0,3") == "other_color_endpoint"   # checked before completed_path
    for back in ["0,1", "0,0"]:
        assert reason(s, back) == ""                    # pops back to the start endpoint
    assert P.active_path(SMALL, s.state) == ("coral", [(0, 0)])
    s.play("cancel")
    s.play("remove:blue")
    assert P.completed_paths(SMALL, s.state) == {}
    s.play("blue:0,3-0,2-1,2-1,3")
    assert reason(s, "0,3") == "self_intersection"
    s.play("2,3")
    assert P.completed_paths(SMALL, s.state)["blue"] == [(0, 3), (0, 2), (1, 2), (1, 3), (2, 3)]
    # a whole route stops at its first rejected step; the cells before it stay
    outs = s.try_move("coral:0,0-0,2-1,2")
    assert [o.accepted for o in outs] == [True, True, False] and outs[-1].reason == "completed_path"
    assert P.active_path(SMALL, s.state) == ("coral", [(0, 0), (0, 1)])
    with pytest.raises(IllegalMoveError) as e:
        s.play("2,1")
    assert e.value.reason == "not_adjacent"
    assert s.counters.rejected == 15


def test_completing_needs_the_own_target_and_clears_the_active_path():
    s = Session(SMALL)
    s.play("green:1,1-2,1-2,2")
    assert P.completed_paths(SMALL, s.state) == {"green": [(1, 1), (2, 1), (2, 2)]}
    assert P.active_path(SMALL, s.state) is None
    assert not s.solved
    s.play("remove:green")
    s.play("green:2,2-1,2-1,1")
    assert P.completed_paths(SMALL, s.state) == {"green": [(1, 1), (1, 2), (2, 2)]}
    s.play("coral:0,0-1,0-2,0")
    s.play("blue:0,3-2,3")
    assert s.solved and s.progress == 1.0
    assert "connected 3/3" in s.show()


def test_render_text_marks_paths():
    s = Session(SMALL)
    s.play("green:1,1-2,1-2,2")
    s.play("coral:0,0-0,1-0,2")
    text = s.show()
    rows = text.splitlines()
    assert rows[0] == "R * @ B"
    assert rows[1] == ". G . ."
    assert rows[2] == "R g G B"
    assert "active coral" in text and "connected 1/3: green" in text


def test_bad_action_code_and_purity():
    src = SMALL.initial.copy()
    dst = np.empty_like(src)
    assert P.kernels.step_into(SMALL.lv, src, dst, np.int64(SMALL.n_actions)) == BAD_ACTION
    assert np.array_equal(dst, src)
    assert P.kernels.step_into(SMALL.lv, src, dst, np.int64(-1)) == BAD_ACTION


# ---- properties -------------------------------------------------------------------------
@st.composite
def random_levels(draw):
    rows = draw(st.integers(2, 5))
    cols = draw(st.integers(2, 5))
    k = draw(st.integers(1, min(5, rows * cols // 2)))
    cells = draw(st.lists(st.integers(0, rows * cols - 1), min_size=2 * k, max_size=2 * k, unique=True))
    names = list(PALETTE)[:k]
    pairs = [(names[i], divmod(cells[2 * i], cols), divmod(cells[2 * i + 1], cols)) for i in range(k)]
    return make_level(rows, cols, pairs)


levels_st = st.one_of(random_levels(), st.sampled_from([SMALL] + LEVELS[:3] + LEVELS[10:11]))


@settings(max_examples=120, deadline=None)
@given(level=levels_st, picks=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=80))
def test_kernels_match_the_model_and_keep_invariants(level, picks):
    model = Model(level)
    s = level.initial.copy()
    assert np.array_equal(s, model.encode())
    for x in picks:
        legal = P.legal_moves(level, s)
        if x % 4 and legal:
            a = legal[x % len(legal)]
        else:
            a = x % level.n_actions
        want = model.step(a)
        nxt, code = P.step(level, s, a)
        got = "" if code == OK else P.describe_code(code).reason
        assert got == want, (P.format_move(level, a), P.render_text(level, s))
        assert (a in legal) == (code == OK)
        if code != OK:
            assert np.array_equal(nxt, s)
        assert np.array_equal(nxt, model.encode())
        # completed paths only change through an explicit remove (or a new completion)
        was, now = P.completed_paths(level, s), P.completed_paths(level, nxt)
        removed = P.format_move(level, a)[len("remove:"):] if P.format_move(level, a).startswith("remove:") else None
        for name, cells in was.items():
            assert now.get(name) == cells or (name == removed and name not in now)
        assert len(set(now) - set(was)) <= 1
        s = nxt
        check_invariants(level, s)


@settings(max_examples=40, deadline=None)
@given(level=st.sampled_from(LEVELS), data=st.data())
def test_progress_counts_completed_pairs_only(level, data):
    """Replay a random subset of the reference routes, then leave a partial active path:
    P = completed / total, and partial paths give no credit."""
    routes = level.extra["solution"]
    chosen = data.draw(st.lists(st.sampled_from(routes), unique=True))
    s = Session(level)
    for r in chosen:
        s.play(r)
    k = int(level.lv[2])
    assert s.progress == pytest.approx(len(chosen) / k)
    rest = [r for r in routes if r not in chosen]
    if rest:
        name, cells = rest[0].split(":")
        cut = data.draw(st.integers(1, len(cells.split("-")) - 1))
        s.play(f"{name}:" + "-".join(cells.split("-")[:cut]))
        assert P.active_path(level, s.state)[0] == name
        assert s.progress == pytest.approx(len(chosen) / k)
        assert not s.solved
    else:
        assert s.solved and s.progress == 1.0
