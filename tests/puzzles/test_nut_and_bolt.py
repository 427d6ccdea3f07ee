"""Nut and Bolt rules (RULES.md 4) as properties."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.errors import IllegalMoveError
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Session
from longpuzzle.puzzles.nut_and_bolt import PALETTE

P = get_puzzle("nut_and_bolt")
LEVELS = builtin_catalog().level_ids("nut_and_bolt")


def bolts_of(level, s):
    n, cap = int(level.lv[0]), int(level.lv[1])
    return [[int(c) for c in s[n + b * cap: n + b * cap + int(s[b])]] for b in range(n)]


def test_catalogue_counts():
    objs = {o.difficulty: len(o.level_ids) for o in builtin_catalog().objectives("nut_and_bolt")}
    assert objs == {"easy": 3, "medium": 3, "hard": 3, "extreme": 3, "nightmare": 1}


def test_level_matches_file_and_easy1_starts_at_zero():
    lvl = load_level("nut_and_bolt/easy/1")
    names = [[PALETTE[c - 1][0] for c in b] for b in bolts_of(lvl, lvl.initial)]
    assert names == [b["nuts"] for b in lvl.data["bolts"]]
    assert P.progress(lvl, lvl.initial) == 0.0  # the original's browser test


def reference_move(bolts, cap, f, t):
    """Plain-Python statement of the rule, written independently of the kernel."""
    if f == t or not bolts[f] or len(bolts[t]) >= cap or (bolts[t] and bolts[t][-1] != bolts[f][-1]):
        return None
    out = [list(b) for b in bolts]
    top = out[f][-1]
    while out[f] and out[f][-1] == top and len(out[t]) < cap:
        out[t].append(out[f].pop())
    return out


def reference_progress(bolts, cap, k):
    best = {}
    for b in bolts:
        if b and len(set(b)) == 1:
            best[b[0]] = max(best.get(b[0], 0), len(b))
    return sum(best.values()) / (cap * k)


walks = st.tuples(st.sampled_from(LEVELS), st.lists(st.integers(0, 10_000), min_size=1, max_size=60))


@settings(max_examples=60, deadline=None)
@given(walks)
def test_moves_follow_the_rule_and_conserve_nuts(case):
    lid, picks = case
    lvl = load_level(lid)
    n, cap, k = (int(v) for v in lvl.lv[:3])
    s = lvl.initial.copy()
    colours = Counter(c for b in bolts_of(lvl, s) for c in b)
    for pick in picks:
        f, t = divmod(pick % (n * n), n)
        nxt, code = P.step(lvl, s, f * n + t)
        expect = reference_move(bolts_of(lvl, s), cap, f, t)
        if expect is None:
            assert code >= 3 and np.array_equal(nxt, s)
        else:
            assert code == 0 and bolts_of(lvl, nxt) == expect
            s = nxt
        b = bolts_of(lvl, s)
        assert Counter(c for x in b for c in x) == colours          # nuts of each colour conserved
        assert all(len(x) <= cap for x in b)                         # capacity never exceeded
        assert all(v == 0 for i in range(n) for v in s[n + i * cap + int(s[i]): n + (i + 1) * cap])
        assert P.progress(lvl, s) == pytest.approx(reference_progress(b, cap, k))
        solved = all(not x or (len(x) == cap and len(set(x)) == 1) for x in b)
        assert P.is_solved(lvl, s) == solved


@settings(max_examples=40, deadline=None)
@given(walks)
def test_undo_is_an_exact_inverse(case):
    lid, picks = case
    lvl = load_level(lid)
    n = int(lvl.lv[0])
    sess = Session(lvl)
    history = [sess.state.copy()]
    for pick in picks:
        if sess.try_move(pick % (n * n))[-1].accepted:
            history.append(sess.state.copy())
    while len(history) > 1:
        history.pop()
        sess.undo()
        assert sess.state.tobytes() == history[-1].tobytes()
    assert sess.counters.undos == sess.counters.moves


def test_partial_run_and_rejection_messages():
    lvl = load_level("nut_and_bolt/easy/1")    # 1: R R R Y   2: Y R Y Y   3: -   4: -  (bottom -> top)
    R, Y = 1, 2
    s = Session(lvl)
    s.play("2>3")                              # the whole top run (two yellows) moves
    assert bolts_of(lvl, s.state)[1:3] == [[Y, R], [Y, Y]]
    s.play("1>3")
    assert bolts_of(lvl, s.state)[0::2] == [[R, R, R], [Y, Y, Y]]
    s.play("1>2")                              # a run of three reds, room for two: a partial run
    assert bolts_of(lvl, s.state)[:2] == [[R], [Y, R, R, R]]
    for move, reason in [("2>3", "colour_mismatch"), ("1>2", "target_full"), ("4>1", "source_empty"),
                         ("1>1", "same_bolt")]:
        before = s.state.copy()
        with pytest.raises(IllegalMoveError) as e:
            s.play(move)
        assert e.value.reason == reason and move in str(e.value)
        assert np.array_equal(s.state, before)
    assert s.counters.rejected == 4 and s.counters.moves == 3


def test_undo_allowed_after_completion():
    lvl = load_level("nut_and_bolt/easy/1")
    s = Session(lvl)
    # solve with a tiny BFS so the test does not depend on a hand-written solution
    from collections import deque
    start = lvl.initial.tobytes()
    prev = {start: None}
    q = deque([lvl.initial.copy()])
    goal = None
    while q:
        cur = q.popleft()
        if P.is_solved(lvl, cur):
            goal = cur
            break
        for a in P.legal_moves(lvl, cur):
            nxt = P.apply(lvl, cur, a)
            if nxt.tobytes() not in prev:
                prev[nxt.tobytes()] = (cur.tobytes(), a)
                q.append(nxt)
    assert goal is not None
    path, key = [], goal.tobytes()
    while prev[key] is not None:
        key, a = prev[key]
        path.append(a)
    for a in reversed(path):
        s.play(a)
    assert s.solved and s.progress == 1.0
    s.undo()
    assert not s.solved


@pytest.mark.parametrize("mutate, field", [
    (lambda r: r["bolts"][0]["nuts"].append("red") or r["bolts"][0]["nuts"].append("red"), "bolts[0].nuts"),
    (lambda r: r["bolts"][1]["nuts"].__setitem__(0, "mauve"), "bolts[1].nuts[0]"),
    (lambda r: r.__setitem__("capacity", 0), "capacity"),
    (lambda r: r.__setitem__("bolts", []), "bolts"),
    (lambda r: r["bolts"][2]["nuts"].append("red"), "bolts"),
])
def test_malformed_levels_are_refused_with_the_field_named(mutate, field):
    import copy
    from longpuzzle.engine.errors import LevelFormatError
    rec = copy.deepcopy(load_level("nut_and_bolt/easy/1").data)
    mutate(rec)
    with pytest.raises(LevelFormatError) as e:
        P.build_level(rec, difficulty="easy", number=1, where="my_levels.json")
    assert e.value.field == field and "my_levels.json" in str(e.value) and "nut_and_bolt/easy/1" in str(e.value)
