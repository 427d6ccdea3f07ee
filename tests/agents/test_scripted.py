"""The scripted agents that keep a model of the app (agents/scripted.py AppModelAgent) continue
any recorded episode: at a takeover they rebuild their model from its public action prefix."""

import numpy as np
import pytest

from longpuzzle.agents.harness import Settings, continue_episode, read_events, restore_step, run_objective
from longpuzzle.agents.paper_agents import PaperFillerAgent
from longpuzzle.agents.scripted import GreedyAgent, SolverAgent

STEP = 7


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A Maze Paint easy episode of swipes (greedy, 10 actions)."""
    d = tmp_path_factory.mktemp("src") / "maze"
    run_objective(GreedyAgent(), "maze_paint", "easy", folder=d, settings=Settings(max_actions=10, action_timeout=None))
    return d


def _same(model, suite) -> bool:
    a, b = model.session, suite.session
    return model.screen == suite.screen and (a is None) == (b is None) and (
        a is None or (a.level.id == b.level.id and np.array_equal(a.state, b.state)))


@pytest.mark.parametrize("make", [GreedyAgent, SolverAgent, PaperFillerAgent], ids=lambda c: c.name)
def test_a_scripted_agent_continues_a_recorded_state_in_step_with_the_harness(source, tmp_path, make):
    assert any(r.get("action", {}).get("type") == "swipe" for r in read_events(source))
    agent = make()
    out = tmp_path / "c"
    continue_episode(source, STEP, agent, out=out, takeover=True, settings=Settings(max_actions=4, action_timeout=None))
    steps = [r["step"] for r in read_events(out) if r.get("stream") == "public" and "action" in r]
    # its model of the app is the harness's board after every action it took (it never lost it)
    assert len(steps) >= 2 and _same(agent.model, restore_step(out, steps[-1]))
    moves = [r for r in read_events(out) if r.get("stream") == "private" and r["record"].get("effects")]
    assert any(e.get("effect") == "move" for r in moves for e in r["record"]["effects"])   # it played the board
