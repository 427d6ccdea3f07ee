"""Maze Paint rules (RULES.md 6) as properties, plus the recorded optimal move counts."""

import copy
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.errors import LevelFormatError, MoveSyntaxError, UndoNotAllowedError
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Session

P = get_puzzle("maze_paint")
LEVELS = builtin_catalog().level_ids("maze_paint")


def test_catalogue_counts():
    assert {o.difficulty: len(o.level_ids) for o in builtin_catalog().objectives("maze_paint")} == \
        {"easy": 10, "medium": 10, "hard": 10}


def slide(layout, pos, d):
    """Independent statement of the slide rule on the layout strings."""
    dr, dc = [(-1, 0), (1, 0), (0, -1), (0, 1)][d]
    r, c = pos
    path = []
    while 0 <= r + dr < len(layout) and 0 <= c + dc < len(layout[0]) and layout[r + dr][c + dc] != "#":
        r, c = r + dr, c + dc
        path.append((r, c))
    return (r, c), path


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(LEVELS), st.lists(st.integers(0, 3), min_size=1, max_size=80))
def test_slides_paint_monotonically_and_stay_on_floor(lid, dirs):
    lvl = load_level(lid)
    layout = lvl.data["layout"]
    cols = len(layout[0])
    s = lvl.initial.copy()
    pos = divmod(int(s[0]), cols)
    painted = {pos}
    for d in dirs:
        nxt, code = P.step(lvl, s, d)
        (r, c), path = slide(layout, pos, d)
        assert code == (0 if path else 1)           # a bump is an accepted no-op move
        before = s[2:].copy()
        s, pos = nxt, (r, c)
        painted.update(path)
        assert divmod(int(s[0]), cols) == pos and layout[r][c] != "#"   # the ball is always on floor
        assert np.all(s[2:] >= before)                                   # painted cells only grow
        assert {divmod(i, cols) for i in np.flatnonzero(s[2:])} == painted
        assert int(s[1]) == len(painted)
        total = sum(ch != "#" for row in layout for ch in row)
        assert P.progress(lvl, s) == pytest.approx((len(painted) - 1) / (total - 1))
        assert P.is_solved(lvl, s) == (len(painted) == total)


def bfs_length(lvl):
    """Shortest number of swipes that paints every floor cell (plain Python BFS)."""
    start = lvl.initial.tobytes()
    dist = {start: 0}
    q = deque([lvl.initial.copy()])
    while q:
        cur = q.popleft()
        if P.is_solved(lvl, cur):
            return dist[cur.tobytes()]
        for a in P.legal_moves(lvl, cur):
            nxt = P.apply(lvl, cur, a)
            k = nxt.tobytes()
            if k not in dist:
                dist[k] = dist[cur.tobytes()] + 1
                q.append(nxt)
    return None


@pytest.mark.parametrize("lid", LEVELS[::3] + ["maze_paint/hard/10"])
def test_recorded_optimal_move_counts(lid):
    lvl = load_level(lid)
    assert bfs_length(lvl) == lvl.data["optimal_moves"]


def test_bump_is_recorded_but_changes_nothing_and_no_undo():
    s = Session("maze_paint/easy/1")       # ball at bottom-left
    before = s.state.copy()
    out = s.play("L")                       # wall (board edge) to the left
    assert out[0].accepted and not out[0].changed
    assert np.array_equal(s.state, before) and s.counters.moves == 1 and s.counters.noop_moves == 1
    s.play("r")                             # lower case is accepted
    with pytest.raises(UndoNotAllowedError):
        s.undo()
    with pytest.raises(MoveSyntaxError):
        s.play("UP")


@pytest.mark.parametrize("mutate, field, words", [
    (lambda r: r.__setitem__("layout", ["##..", "##..", "....", "...."]), "layout", "no start"),
    (lambda r: r.__setitem__("layout", ["##..", "##..", "....", "S.x."]), "layout[3]", "unknown character"),
    (lambda r: r.__setitem__("layout", ["##..", "##.", "....", "S..."]), "layout", "same"),
    (lambda r: r.__setitem__("layout", ["S#..", "##..", "....", "S..."]), "layout", "more than one"),
    (lambda r: (r.__setitem__("layout", ["##..", "##..", "....", "...."]), r.__setitem__("start", [0, 0])),
     "start", "on a wall"),
    (lambda r: r.__setitem__("optimal_moves", -3), "optimal_moves", "non-negative"),
])
def test_malformed_levels_are_refused_with_the_field_named(mutate, field, words):
    rec = copy.deepcopy(load_level("maze_paint/easy/1").data)
    mutate(rec)
    with pytest.raises(LevelFormatError) as e:
        P.build_level(rec, difficulty="easy", number=1, where="mine.json")
    assert e.value.field == field and words in str(e.value) and "mine.json" in str(e.value)
