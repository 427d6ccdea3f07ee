"""A move's press cost (Oracle.presses, issue 38): where the paper counts a person's pointer
presses (one per click, drag or swipe), a Nut and Bolt or Bolt Unscrew move takes two (the
selection press, then the target's) and the other games' one. Checked against the suite itself
at random reachable boards: the gesture that makes the move there, its presses, and that it
makes exactly that move."""

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.cli import cli
from longpuzzle.engine import gui
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Suite
from longpuzzle.solvers.oracle import Oracle

LEVELS = {"nut_and_bolt/easy/3": 2, "bolt_unscrew/easy/3": 2, "rush_hour/easy/2": 1, "color_connect/easy/4": 1,
          "maze_paint/medium/9": 1, "truck_escape/default/1": 1}


@pytest.mark.parametrize("lid", list(LEVELS))
def test_a_moves_press_cost_is_its_gestures_presses_on_every_board(lid):
    level = load_level(lid)
    p = get_puzzle(level.game)
    o = Oracle(level)
    assert o.presses_per_move == LEVELS[lid]
    rng = np.random.default_rng(0)
    suite = Suite("home", direct=True)
    suite.open_level(level)
    checked = 0
    for _ in range(12):                                  # a random walk; every legal move on its boards
        s = suite.session.state
        if p.is_solved(level, s):
            break
        legal = p.legal_moves(level, s)
        if not legal:
            break
        for a in legal:
            g = suite.gesture_for(a)
            assert suite.interpret(g) == [a]
            assert gui.presses(g) == o.presses(a) == LEVELS[lid]
            checked += 1
        suite.session.apply_action(int(legal[int(rng.integers(len(legal)))]))
    assert checked > 5
    ms = o.moves()
    assert ms and all(m.presses == LEVELS[lid] and m.as_dict()["presses"] == LEVELS[lid] for m in ms)


def test_hint_gives_the_press_cost_where_a_move_takes_two():
    r = CliRunner().invoke(cli, ["hint", "nut_and_bolt/easy/3"])
    assert r.exit_code == 0 and "(2 pointer presses each, as the paper counts a person's)" in r.output, r.output
    r = CliRunner().invoke(cli, ["hint", "rush_hour/easy/2"])
    assert r.exit_code == 0 and "pointer presses" not in r.output
