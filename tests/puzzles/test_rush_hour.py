"""Rush Hour: level data, reference solutions, rules properties, progress (RULES.md 3)."""

from __future__ import annotations

import copy
import json
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from longpuzzle.engine.catalog import builtin_catalog, parse_level_file
from longpuzzle.engine.errors import IllegalMoveError, LevelFormatError, MoveSyntaxError
from longpuzzle.engine.protocol import OK
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Session

P = get_puzzle("rush_hour")
LEVELS = builtin_catalog().levels("rush_hour")
REFERENCE = Path("/work/shared/reference/longpuzzlebench/levels/rush_hour_2.json")


# ---------------------------------------------------------------- independent model
def cells_of(level, state):
    """{vehicle id: set of (row, col)} computed from the level record (not from lv)."""
    out = {}
    for v, veh in enumerate(level.data["vehicles"]):
        pos = int(state[v])
        if veh["orientation"] == "horizontal":
            out[veh["id"]] = {(veh["row"], pos + k) for k in range(veh["length"])}
        else:
            out[veh["id"]] = {(pos + k, veh["col"]) for k in range(veh["length"])}
    return out


def positions(level, state):
    """(row, col) anchor of every vehicle, in data order (the reference's state key)."""
    out = []
    for v, veh in enumerate(level.data["vehicles"]):
        if veh["orientation"] == "horizontal":
            out.append((veh["row"], int(state[v])))
        else:
            out.append((int(state[v]), veh["col"]))
    return tuple(out)


def check_board(level, state):
    rows, cols = level.data["rows"], level.data["cols"]
    seen = {(b["row"], b["col"]) for b in level.data["blockers"]}
    for vid, cells in cells_of(level, state).items():
        for r, c in cells:
            assert 0 <= r < rows and 0 <= c < cols, f"{vid} left the board at {(r, c)}"
            assert (r, c) not in seen, f"{vid} overlaps something at {(r, c)}"
            seen.add((r, c))


def solved_by_rules(level, state):
    t = next(v for v, veh in enumerate(level.data["vehicles"]) if veh.get("target"))
    return int(state[t]) + level.data["vehicles"][t]["length"] == level.data["cols"]


def reference_progress(level, state):
    """RULES.md 3.3 computed the way the description reads, on (row, col) keys."""
    if solved_by_rules(level, state):
        return 1.0
    vehicles = level.data["vehicles"]
    t = next(v for v, veh in enumerate(vehicles) if veh.get("target"))
    tgt = vehicles[t]
    cols = level.data["cols"]

    def goal(pos):
        first = pos[t][1] + tgt["length"]
        ids = set()
        for v, veh in enumerate(vehicles):
            if v == t:
                continue
            for k in range(veh["length"]):
                r = pos[v][0] + (k if veh["orientation"] == "vertical" else 0)
                c = pos[v][1] + (k if veh["orientation"] == "horizontal" else 0)
                if r == pos[t][0] and first <= c < cols:
                    ids.add(veh["id"])
        for b in level.data["blockers"]:
            if b["row"] == pos[t][0] and first <= b["col"] < cols:
                ids.add(b["id"])
        adv = min(1.0, max(0.0, (pos[t][1] - tgt["col"]) / max(1, cols - tgt["length"] - tgt["col"])))
        return adv, len(ids)

    path = [positions(level, level.initial)]
    s = level.initial
    for text in level.data["reference_solution"]:
        s = P.apply(level, s, text)
        path.append(positions(level, s))
    k = len(path) - 1
    here = positions(level, state)
    if here in path:
        return min(0.99, path.index(here) / k)
    adv, blockers = goal(here)
    _, b0 = goal(path[0])
    best = min(sum(a != b for a, b in zip(here, p)) + k - i for i, p in enumerate(path))
    est = max(1 + blockers, best)
    distance = min(1.0, max(0.0, (k - est) / k))
    clear = min(1.0, max(0.0, (b0 - blockers) / b0)) if b0 > 0 else adv
    return min(0.99, min(1.0, max(0.0, 0.8 * distance + 0.2 * (0.7 * clear + 0.3 * adv))))


def bfs_distance(level):
    start = level.initial
    seen = {start.tobytes()}
    queue = deque([(start, 0)])
    while queue:
        s, d = queue.popleft()
        if P.is_solved(level, s):
            return d
        for a in P.legal_moves(level, s):
            nxt, _ = P.step(level, s, a)
            key = nxt.tobytes()
            if key not in seen:
                seen.add(key)
                queue.append((nxt, d + 1))
    return None


# ---------------------------------------------------------------- catalogue and data
def test_catalogue_holds_30_levels_in_slot_order():
    objs = builtin_catalog().objectives("rush_hour")
    assert [o.difficulty for o in objs] == ["easy", "medium", "hard"]
    assert [len(o.level_ids) for o in objs] == [10, 10, 10]
    names = [lv.name for lv in LEVELS]
    assert names == [f"truck_escape_2_{d}_{i}" for d in ("easy", "medium", "hard") for i in range(1, 11)]


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference data not available")
def test_converted_file_matches_reference_data():
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))["levels"]
    assert len(ref) == len(LEVELS)
    for r, level in zip(ref, LEVELS):
        assert level.name == r["id"] and level.difficulty == r["difficulty"]
        assert [(v["id"], v["row"], v["col"], v["length"], v["orientation"]) for v in r["vehicles"]] == \
            [(v["id"], v["row"], v["col"], v["length"], v["orientation"]) for v in level.data["vehicles"]]
        assert [(b["row"], b["col"]) for b in r["blockers"]] == [(b["row"], b["col"]) for b in level.data["blockers"]]
        moves = [P.parse_move(level, t) for t in level.data["reference_solution"]]
        assert [(level.extra["ids"][int(a) // (2 * int(level.lv[5]))]) for a in moves] == \
            [m["vehicle_id"] for m in r["reference_solution"]]
        assert level.data["optimal_moves"] == r["optimal_moves"]


@pytest.mark.parametrize("level", LEVELS, ids=[lv.id for lv in LEVELS])
def test_reference_solution_wins_in_exactly_optimal_moves(level):
    s = Session(level)
    opt = level.data["optimal_moves"]
    texts = level.data["reference_solution"]
    assert len(texts) == opt
    for i, text in enumerate(texts):
        assert not s.solved, f"already solved after {i} moves"
        assert s.progress == pytest.approx(min(0.99, i / opt))
        before = s.state.copy()
        s.play(text)
        assert not np.array_equal(before, s.state)
        check_board(level, s.state)
    assert s.solved and solved_by_rules(level, s.state)
    assert s.counters.moves == opt
    assert s.progress == 1.0


@pytest.mark.parametrize("lid", ["rush_hour/easy/1", "rush_hour/medium/3", "rush_hour/hard/7"])
def test_reference_solution_is_shortest(lid):
    level = builtin_catalog().level(lid)
    assert bfs_distance(level) == level.data["optimal_moves"]


# ---------------------------------------------------------------- rules
def test_blocked_and_off_board_rejections():
    level = builtin_catalog().level("rush_hour/easy/1")
    s = Session(level)
    # red_target (row 2, cols 1-2) is blocked on the right by blue_sedan
    with pytest.raises(IllegalMoveError) as e:
        s.play("red_target+1")
    assert e.value.reason == "blocked"
    # sand_semi (row 0, cols 1-3) can go 1 left, never 2
    with pytest.raises(IllegalMoveError) as e:
        s.play("sand_semi-2")
    assert e.value.reason == "off_board"
    assert np.array_equal(s.state, level.initial)
    s.play("sand_semi-1")
    assert s.state[0] == 0 and s.counters.moves == 1


def test_long_slide_is_one_move_and_passes_nothing():
    level = builtin_catalog().level("rush_hour/easy/1")
    s = Session(level)
    s.play_all(["cream_coupe-2"])
    assert s.counters.moves == 1 and s.state[1] == 0
    # cream coupe is now at cols 0-1 of row 1; it cannot jump over anything to come back 3
    with pytest.raises(IllegalMoveError):
        s.play("cream_coupe+4")


def test_move_text_round_trip_and_syntax_errors():
    for level in LEVELS[:3] + LEVELS[-3:]:
        for a in range(level.n_actions):
            text = P.format_move(level, a)
            assert P.parse_move(level, text) == a
    level = LEVELS[0]
    assert P.parse_move(level, " RED_TARGET + 2 ") == P.parse_move(level, "red_target+2")
    for bad in ["red_target", "red_target+0", "red_target+9", "nobody+1", "+1", "red_target*2", ""]:
        with pytest.raises(MoveSyntaxError):
            P.actions(level, bad)


def test_render_text_shows_board():
    level = LEVELS[0]
    text = P.render_text(level, level.initial)
    lines = text.splitlines()
    assert len(lines) == level.data["rows"] + 1
    assert lines[2].endswith(">") and "X" in lines[2]
    moved = P.apply(level, level.initial, "sand_semi-1")
    assert P.render_text(level, moved) != text


# ---------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(LEVELS) - 1), st.lists(st.integers(0, 10_000), min_size=1, max_size=40),
       st.booleans())
def test_random_play_keeps_board_valid(li, picks, legal_only):
    level = LEVELS[li]
    s = level.initial.copy()
    for pick in picks:
        mask = P.legal_mask(level, s)
        legal = np.flatnonzero(mask)
        a = int(legal[pick % len(legal)]) if legal_only else pick % level.n_actions
        nxt, code = P.step(level, s, a)
        assert (code == OK) == bool(mask[a])
        if code != OK:
            assert np.array_equal(nxt, s)
            continue
        # exactly one vehicle moved, along its own axis, and the board stays valid
        changed = np.flatnonzero(nxt != s)
        assert len(changed) == 1
        check_board(level, nxt)
        s = nxt
        p = P.progress(level, s)
        assert 0.0 <= p <= 1.0
        assert (p == 1.0) == P.is_solved(level, s) == solved_by_rules(level, s)
        assert p == pytest.approx(reference_progress(level, s))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, len(LEVELS) - 1), st.lists(st.integers(0, 10_000), max_size=12), st.integers(0, 10_000))
def test_progress_off_the_reference_path(li, prefix_picks, k):
    """Leave the canonical path part way and compare P with the RULES.md 3.3 formula."""
    level = LEVELS[li]
    s = level.initial
    for text in level.data["reference_solution"][: k % level.data["optimal_moves"]]:
        s = P.apply(level, s, text)
    for pick in prefix_picks:
        legal = P.legal_moves(level, s)
        s = P.apply(level, s, legal[pick % len(legal)])
        assert P.progress(level, s) == pytest.approx(reference_progress(level, s))


# ---------------------------------------------------------------- level validation
def record():
    return copy.deepcopy(builtin_catalog().level("rush_hour/easy/3").data)   # has one bush


def build(rec):
    return P.build_level(rec, difficulty="easy", number=1, where="test.json")


def test_valid_record_builds():
    level = build(record())
    assert level.n_actions > 0 and level.extra["blockers"][0]["style"] == "bush"
    assert level.extra["vehicles"][3]["target"] and level.extra["vehicles"][3]["color"] == "red"


def mutate(fn):
    rec = record()
    fn(rec)
    return rec


BAD_RECORDS = [
    ("rows", lambda r: r.update(rows=0)),
    ("cols", lambda r: r.update(cols="6")),
    ("exit_row", lambda r: r.update(exit_row=9)),
    ("exit_side", lambda r: r.update(exit_side="left")),
    ("vehicles", lambda r: r.update(vehicles=[])),
    ("vehicles[1]", lambda r: r["vehicles"][1].update(row=r["vehicles"][0]["row"], col=r["vehicles"][0]["col"])),
    ("vehicles[1]", lambda r: r["vehicles"][1].update(col=r["cols"] - 1)),       # off the board
    ("vehicles[0]", lambda r: r["vehicles"][0].update(row=-1)),
    ("vehicles[2].length", lambda r: r["vehicles"][2].update(length=4)),
    ("vehicles[2].orientation", lambda r: r["vehicles"][2].update(orientation="diagonal")),
    ("vehicles[2].id", lambda r: r["vehicles"][2].update(id=r["vehicles"][1]["id"])),
    ("vehicles[2].id", lambda r: r["vehicles"][2].update(id="has space")),
    ("vehicles[3].row", lambda r: r["vehicles"][3].update(row=5)),               # target off the exit row
    ("vehicles[3].orientation", lambda r: r["vehicles"][3].update(orientation="vertical")),
    ("vehicles", lambda r: r["vehicles"][3].pop("target")),
    ("vehicles", lambda r: r["vehicles"][0].update(target=True)),
    # a bush under a vehicle: reported at the vehicle (bushes are placed first), naming both
    ("vehicles[0]", lambda r: r["blockers"][0].update(row=r["vehicles"][0]["row"], col=r["vehicles"][0]["col"])),
    ("blockers[1]", lambda r: r["blockers"].append(dict(r["blockers"][0], id="second_bush"))),
    ("blockers[0]", lambda r: r["blockers"][0].update(col=99)),
    ("blockers[0].row", lambda r: r["blockers"][0].update(row=None)),
    ("reference_solution[0]", lambda r: r["reference_solution"].__setitem__(0, "ghost+1")),
    ("reference_solution[0]", lambda r: r["reference_solution"].insert(0, r["vehicles"][3]["id"] + "+3")),
    ("reference_solution", lambda r: r["reference_solution"].pop()),
    ("optimal_moves", lambda r: r.update(optimal_moves=r["optimal_moves"] + 1)),
]


@pytest.mark.parametrize("field,fn", BAD_RECORDS, ids=[f"{i}-{f}" for i, (f, _) in enumerate(BAD_RECORDS)])
def test_bad_records_are_refused_naming_the_field(field, fn):
    with pytest.raises(LevelFormatError) as e:
        build(mutate(fn))
    assert e.value.field == field
    assert e.value.file == "test.json" and e.value.level == "rush_hour/easy/1"


def test_level_file_error_names_the_level():
    rec = mutate(lambda r: r["vehicles"][1].update(col=r["cols"] - 1))
    text = json.dumps({"format": "longpuzzle-levels/1", "game": "rush_hour",
                       "objectives": [{"difficulty": "hard", "levels": [record(), rec]}]})
    with pytest.raises(LevelFormatError) as e:
        parse_level_file(text, "x.json")
    assert e.value.level == "rush_hour/hard/2" and e.value.field == "vehicles[1]"


def test_level_without_reference_solution_uses_structural_progress():
    rec = record()
    del rec["reference_solution"], rec["optimal_moves"]
    level = build(rec)
    assert level.lv[6] == -1
    assert P.progress(level, level.initial) == 0.0
    s = level.initial
    for text in record()["reference_solution"]:
        s = P.apply(level, s, text)
        assert 0.0 <= P.progress(level, s) <= 1.0
    assert P.progress(level, s) == 1.0
