"""The cost of agent isolation, side by side: one agent call with a full observation (a
540 x 960 frame and feedback) through the in-process caller (direct, and with a timeout on
its worker thread) and through the isolated caller (a sandboxed process; the frame crosses a
shared buffer, the rest a pipe); and a whole objective episode (100 actions, rendering and recording included) with
the same random agent in-process and as an agent file. Compare the actions per second of
each pair (the summary prints them; the in-process rows are the reference)."""

import pytest

from longpuzzle.agents.base import BaseAgent, Feedback, Observation, make_frame
from longpuzzle.agents.harness import AgentCaller, AgentFile, Settings, run_objective
from longpuzzle.render.frame import render

CALLS = 200

AGENT = '''
import random
from longpuzzle.agents.base import BaseAgent, first_action

class Clicker(BaseAgent):
    def __init__(self, seed=0):
        self.rng = random.Random(seed)

    def act(self, obs):
        w, h = self.action_spec["frame"]
        return first_action(obs) or {"type": "click", "x": self.rng.randrange(w), "y": self.rng.randrange(h)}
'''


class Clicker(BaseAgent):
    def act(self, obs):
        return {"type": "click", "x": 10, "y": 20}


def _in_process(seed):
    """The agent file's own class, made in this process (the same code both ways)."""
    ns = {}
    exec(compile(AGENT, "clicker.py", "exec"), ns)
    return ns["Clicker"](seed)


@pytest.fixture(scope="module")
def agent_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("agent") / "clicker.py"
    p.write_text(AGENT)
    return p


@pytest.mark.parametrize("how", ["in-process", "in-process, timeout", "isolated"])
def test_agent_call(benchmark, agent_file, how):
    obs = Observation(make_frame(render("maze_paint/easy/1")), Feedback("screen_changed", True, "", 1), 1, 60.0)
    if how == "isolated":
        caller = AgentFile(agent_file).caller(30.0)
    else:
        caller = AgentCaller(Clicker(), 30.0 if how.endswith("timeout") else None)
    caller.reset("go", {"frame": (540, 960)})

    def calls():
        for _ in range(CALLS):
            caller.act(obs)
    benchmark.group = "agent call"
    benchmark.extra_info.update(ops=CALLS, unit="calls")
    benchmark.pedantic(calls, rounds=5, iterations=1, warmup_rounds=1)
    caller.close()


@pytest.mark.parametrize("how", ["in-process", "isolated"])
def test_episode(benchmark, tmp_path, agent_file, how):
    st = Settings(max_actions=100, budget=None, save_frames=False, invalid_action_policy="dispatch_failed")
    n = [0]

    def episode():
        n[0] += 1
        agent = _in_process(1) if how == "in-process" else AgentFile(agent_file, kwargs={"seed": 1})
        r = run_objective(agent, "maze_paint", "easy", settings=st, folder=tmp_path / f"ep{n[0]}")
        assert r.actions == 100
    episode()
    benchmark.group = "agent episode"
    benchmark.extra_info.update(ops=100, unit="actions")
    benchmark.pedantic(episode, rounds=3, iterations=1)
