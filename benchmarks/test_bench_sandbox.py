"""The cost of the sandbox's protections (issue 35), side by side with SANDBOX_BASELINE (main
before them: no network or mount namespace, no user of its own, a seccomp filter for
processes only, no pause between calls), in the same run (benchmarks/baseline.py):

    start       a sandboxed process started, called once and closed (an agent's or
                run_python's start: namespaces, the view of the filesystem, the user switch)
    agent call  one act() of an isolated agent file with a full frame (540 x 960) and its
                feedback: the pause between calls (SIGCONT before, SIGSTOP and the wait for
                it after) is the new part
    code call   one run_python cell (``x += 1``) in the persistent process of the code setting

Compare each row's seconds with its baseline_min / baseline_median (extra info)."""

import pytest

from longpuzzle.agents.base import Feedback, Observation, make_frame
from longpuzzle.agents.harness import AgentFile, Settings
from longpuzzle.render.frame import render
from longpuzzle.agents.sandbox import Sandbox

from baseline import SANDBOX_BASELINE, Baseline, side_by_side

STARTS, CALLS, CELLS = 3, 200, 50

AGENT = '''
from longpuzzle.agents.base import BaseAgent

class Clicker(BaseAgent):
    def act(self, obs):
        return {"type": "click", "x": 10, "y": 20}
'''


@pytest.fixture(scope="module")
def base():
    b = Baseline(SANDBOX_BASELINE)
    yield b
    b.close()


@pytest.fixture(scope="module")
def agent_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("agent") / "clicker.py"
    p.write_text(AGENT)
    return p


def test_start(benchmark, base):
    def new():
        for _ in range(STARTS):
            sb = Sandbox("def handle(call, arrays, ctx):\n    return {}\n")
            sb.start()
            sb.call({}, timeout=60)
            sb.close()
    benchmark.group = "sandbox start"
    side_by_side(benchmark, new, lambda: base(op="sandbox_start", n=STARTS), rounds=5, ops=STARTS,
                 old_ops=STARTS, unit="starts")


def test_agent_call(benchmark, base, agent_file):
    caller = AgentFile(agent_file).caller(30.0)
    caller.reset("go", {"frame": (540, 960)})
    obs = Observation(make_frame(render("maze_paint/easy/1")), Feedback("screen_changed", True, "", 1), 1, 60.0)

    def new():
        for _ in range(CALLS):
            caller.act(obs)
    benchmark.group = "sandbox agent call"
    try:
        side_by_side(benchmark, new, lambda: base(op="agent_calls", n=CALLS, file=str(agent_file)), rounds=7,
                     ops=CALLS, old_ops=CALLS, unit="calls")
    finally:
        caller.close()


def test_code_call(benchmark, base, tmp_path):
    from longpuzzle.agents.vista import Controller
    c = Controller("maze_paint", "easy", setting="code", settings=Settings(budget=100000), folder=tmp_path / "new")
    c.call("play", {"action": {"type": "wait", "ms": 0}})
    assert not c.call("run_python", {"code": "x = 0"}).error

    def new():
        for _ in range(CELLS):
            c.call("run_python", {"code": "x += 1"})

    def old():
        r = base(op="code_calls", n=CELLS, folder=str(tmp_path / "old"))
        assert not r.get("error"), r
        return r
    benchmark.group = "sandbox code call"
    try:
        side_by_side(benchmark, new, old, rounds=7, ops=CELLS, old_ops=CELLS, unit="cells")
    finally:
        c.close()
