"""Truck Escape: level data, clearing orders, lane blocking, progress (RULES.md 5)."""

from __future__ import annotations

import copy
import json
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

P = get_puzzle("truck_escape")
LEVELS = builtin_catalog().levels("truck_escape")
REFERENCE = Path("/work/shared/reference/longpuzzlebench/levels/truck_escape.json")
STEP = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def free_to_leave(level, present, i):
    """Independent lane test on the record: every cell ahead of the head, up to the field
    edge, is free of the trucks still present."""
    trucks = level.data["trucks"]
    occupied = set()
    for j, t in enumerate(trucks):
        if present[j] and j != i:
            occupied.add(tuple(t["tail"]))
            occupied.add(tuple(t["head"]))
    dr, dc = STEP[trucks[i]["direction"]]
    r, c = trucks[i]["head"]
    r, c = r + dr, c + dc
    while 0 <= r < level.data["rows"] and 0 <= c < level.data["cols"]:
        if (r, c) in occupied:
            return False
        r, c = r + dr, c + dc
    return True


# ---------------------------------------------------------------- catalogue and data
def test_five_levels_with_the_generator_counts():
    objs = builtin_catalog().objectives("truck_escape")
    assert [o.difficulty for o in objs] == ["default"]
    assert [len(lv.data["trucks"]) for lv in LEVELS] == [10, 20, 22, 24, 28]
    assert [lv.n_actions for lv in LEVELS] == [10, 20, 22, 24, 28]


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference data not available")
def test_converted_file_matches_reference_data():
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))["levels"]
    for r, level in zip(ref, LEVELS):
        assert (level.data["rows"], level.data["cols"]) == (r["rows"], r["cols"])
        want = {t["id"]: ([t["tail"]["row"], t["tail"]["col"]], [t["head"]["row"], t["head"]["col"]],
                          t["direction"], t["center_screen_540x960"]["x"]) for t in r["trucks"]}
        got = {t["id"]: (t["tail"], t["head"], t["direction"], t["center_screen"][0]) for t in level.extra["trucks"]}
        assert got == want


@pytest.mark.parametrize("level", LEVELS, ids=[lv.id for lv in LEVELS])
def test_clearing_order_replays_to_a_win(level):
    s = Session(level)
    order = level.data["clearing_order"]
    n = len(level.data["trucks"])
    assert sorted(order) == sorted(t["id"] for t in level.data["trucks"])
    for k, tid in enumerate(order):
        assert not s.solved
        assert s.progress == pytest.approx(k / n)
        s.play(tid)
    assert s.solved and s.progress == 1.0 and s.counters.moves == n
    assert int(s.state[0]) == 0 and not s.state[1:].any()


# ---------------------------------------------------------------- rules
def test_blocked_truck_does_not_move_until_the_lane_is_clear():
    level = builtin_catalog().level("truck_escape/default/1")
    s = Session(level)
    # t4 (tail (1,1), head (2,1), facing down) has t3's cell (4,1) ahead of it
    assert not free_to_leave(level, [1] * 10, 4)
    with pytest.raises(IllegalMoveError) as e:
        s.play("t4")
    assert e.value.reason == "blocked"
    assert np.array_equal(s.state, level.initial)
    # t3 is itself blocked by t2, t2 by t1: clear the chain first
    for tid in ("t0", "t1", "t2", "t3"):
        s.play(tid)
    s.play("t4")
    assert s.counters.moves == 5 and s.progress == pytest.approx(0.5)
    with pytest.raises(IllegalMoveError) as e:
        s.play("t4")
    assert e.value.reason == "gone"


def test_touching_truck_blocks():
    rec = {"rows": 3, "cols": 4, "trucks": [
        {"id": "a", "tail": [1, 0], "direction": "right"},      # head (1,1)
        {"id": "b", "tail": [1, 2], "direction": "down"},       # head (2,2), touches a's nose
    ]}
    level = P.build_level(rec, difficulty="default", number=1, where="t")
    assert P.legal_moves(level, level.initial) == [1]
    s = P.apply(level, level.initial, "b")
    assert P.legal_moves(level, s) == [0]
    s = P.apply(level, s, "a")
    assert P.is_solved(level, s) and P.progress(level, s) == 1.0


def test_move_text_round_trip_and_syntax_errors():
    for level in LEVELS:
        for a in range(level.n_actions):
            assert P.parse_move(level, P.format_move(level, a)) == a
    level = LEVELS[0]
    assert P.parse_move(level, " T3 ") == 3
    for bad in ["t10", "3", "truck", "", "t1 t2"]:
        with pytest.raises(MoveSyntaxError):
            P.actions(level, bad)


def test_render_text_shows_remaining_trucks():
    level = LEVELS[0]
    text = P.render_text(level, level.initial)
    assert len(text.splitlines()) == level.data["rows"] + 1
    assert text.count("t0>") == 2
    after = P.apply(level, level.initial, "t0")
    assert "t0>" not in P.render_text(level, after)


# ---------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(LEVELS) - 1), st.lists(st.integers(0, 10_000), min_size=1, max_size=60),
       st.booleans())
def test_random_taps(li, picks, legal_only):
    level = LEVELS[li]
    n = level.n_actions
    s = level.initial.copy()
    for pick in picks:
        mask = P.legal_mask(level, s)
        for i in range(n):
            assert bool(mask[i]) == (bool(s[1 + i]) and free_to_leave(level, s[1:], i))
        legal = np.flatnonzero(mask)
        if legal_only and len(legal) == 0:
            break
        a = int(legal[pick % len(legal)]) if legal_only else pick % n
        nxt, code = P.step(level, s, a)
        assert (code == OK) == bool(mask[a])
        if code != OK:
            assert np.array_equal(nxt, s)
            continue
        # trucks only leave: exactly the tapped one disappears, nobody comes back
        assert nxt[1 + a] == 0 and s[1 + a] == 1
        assert np.all(nxt[1:] <= s[1:]) and int((s[1:] != nxt[1:]).sum()) == 1
        assert int(nxt[0]) == int(nxt[1:].sum())
        s = nxt
        p = P.progress(level, s)
        assert 0.0 <= p <= 1.0
        assert p == pytest.approx((n - int(s[1:].sum())) / n)
        assert (p == 1.0) == P.is_solved(level, s) == (not s[1:].any())


# ---------------------------------------------------------------- level validation
def record():
    return copy.deepcopy(builtin_catalog().level("truck_escape/default/1").data)


def build(rec):
    return P.build_level(rec, difficulty="default", number=1, where="test.json")


def mutate(fn):
    rec = record()
    fn(rec)
    return rec


BAD_RECORDS = [
    ("rows", lambda r: r.update(rows=0)),
    ("cols", lambda r: r.update(cols=2.5)),
    ("trucks", lambda r: r.update(trucks=[])),
    ("trucks[1]", lambda r: r["trucks"][1].update(tail=r["trucks"][0]["tail"], head=r["trucks"][0]["head"],
                                                   direction=r["trucks"][0]["direction"])),
    ("trucks[2].direction", lambda r: r["trucks"][2].update(direction="north")),
    ("trucks[2].tail", lambda r: r["trucks"][2].update(tail=[9, 0])),
    ("trucks[2].tail", lambda r: r["trucks"][2].update(tail="3,3")),
    ("trucks[8].direction", lambda r: (r["trucks"][8].update(tail=[0, 0], direction="up"),
                                       r["trucks"][8].pop("head"))),        # head off the field
    ("trucks[2].head", lambda r: r["trucks"][2].update(head=[0, 0])),
    ("trucks[3].id", lambda r: r["trucks"][3].update(id="t0")),
    ("trucks[3].id", lambda r: r["trucks"][3].update(id="")),
    ("trucks[3].id", lambda r: r["trucks"][3].update(id="Restart")),
    ("trucks[3].center_screen", lambda r: r["trucks"][3].update(center_screen=[1])),
    ("clearing_order[0]", lambda r: r["clearing_order"].__setitem__(0, "t99")),
    ("clearing_order[0]", lambda r: r["clearing_order"].insert(0, "t4")),    # t4 is blocked at first
    ("clearing_order", lambda r: r["clearing_order"].pop()),
    ("screen_scale", lambda r: r.update(screen_scale=-1)),
]


@pytest.mark.parametrize("field,fn", BAD_RECORDS, ids=[f"{i}-{f}" for i, (f, _) in enumerate(BAD_RECORDS)])
def test_bad_records_are_refused_naming_the_field(field, fn):
    with pytest.raises(LevelFormatError) as e:
        build(mutate(fn))
    assert e.value.field == field
    assert e.value.level == "truck_escape/default/1"


def test_overlap_message_names_both_trucks():
    rec = mutate(lambda r: r["trucks"][5].update(tail=[2, 3], direction="down", head=[3, 3]))
    with pytest.raises(LevelFormatError) as e:
        build(rec)
    assert e.value.field == "trucks[5]" and "'t0'" in str(e.value)


def test_level_file_error_names_the_level():
    text = json.dumps({"format": "longpuzzle-levels/1", "game": "truck_escape",
                       "objectives": [{"difficulty": "default", "levels": [
                           record(), mutate(lambda r: r["trucks"][0].update(direction="sideways"))]}]})
    with pytest.raises(LevelFormatError) as e:
        parse_level_file(text, "x.json")
    assert e.value.level == "truck_escape/default/2" and e.value.field == "trucks[0].direction"


def test_extra_keeps_renderer_data():
    level = LEVELS[2]
    assert level.extra["screen_scale"] == pytest.approx(0.888889)
    assert level.extra["screen_field_origin"] == [30.0, 213.333]
    t = level.extra["trucks"][0]
    assert set(t) >= {"id", "tail", "head", "direction", "color", "center_field", "center_screen"}
