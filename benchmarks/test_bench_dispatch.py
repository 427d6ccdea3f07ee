"""GUI actions per second through ``Suite.dispatch`` (the one input path every player takes:
people through ``play``, agents through the harness), per game: a level's solution played as
the gestures a person makes (GameUI.gesture_run: clicks, drags, swipes, batches of clicks),
then the same with every action first validated by ``gui.validate`` (what the harness does:
the engine's one validation, then the dispatch of the validated action). A round replays the
whole solution on a fresh suite of the level; the ratio to gymnasium's FrozenLake step loop
(test_bench_steps.py's reference, in the same run) is printed by the summary."""

import pytest

from longpuzzle.engine import gui
from longpuzzle.engine.suite import Suite
from longpuzzle.solvers.core import solve

LEVELS = ["maze_paint/hard/10", "nut_and_bolt/hard/2", "rush_hour/hard/2", "color_connect/easy/3",
          "bolt_unscrew/easy/2", "truck_escape/default/3"]


def _gestures(lid: str) -> list[dict]:
    """The solution of ``lid`` as the GUI actions a person makes, each checked to play on."""
    moves = list(solve(lid).actions)
    s = Suite(lid)
    out = []
    while moves:
        g, k = s.gesture_run(moves)
        s.dispatch(g)
        out.append(g)
        moves = moves[k:]
    assert s.complete, lid
    return out


@pytest.mark.parametrize("lid", LEVELS)
@pytest.mark.parametrize("validated", [False, True], ids=["dispatch", "validate+dispatch"])
def test_dispatch(benchmark, lid, validated):
    acts = _gestures(lid)
    size = Suite(lid).frame_size

    def loop():
        s = Suite(lid)
        for a in acts:
            s.dispatch(gui.validate(a, size) if validated else a)
        assert s.complete
    benchmark.group = "dispatch"
    benchmark.extra_info.update(ops=len(acts), unit="GUI actions")
    benchmark(loop)
