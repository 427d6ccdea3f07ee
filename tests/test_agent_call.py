"""The agent caller's interface (reset / act / note / close with per-call timeouts), which
every caller (in-process or isolated) implements."""

import threading
import time

import pytest

from longpuzzle.agents.base import AgentError, BaseAgent, FinalAnswer, InfrastructureError
from longpuzzle.agents.harness import AgentCaller


class Slow(BaseAgent):
    def __init__(self, delay):
        self.delay = delay
        self.notes = []

    def act(self, obs):
        time.sleep(self.delay)
        return {"type": "wait", "ms": obs}

    def note(self, text):
        self.notes.append(text)


@pytest.mark.parametrize("default", [None, 5.0])
def test_calls_pass_results_notes_and_failures_through(default):
    a = Slow(0.0)
    c = AgentCaller(a, default)
    c.reset("go", {"frame": (540, 960)})
    assert a.instruction == "go"
    assert c.act(7) == {"type": "wait", "ms": 7}
    c.note("careful")
    assert a.notes == ["careful"]

    class Bad(BaseAgent):
        def act(self, obs):
            if obs == "infra":
                raise InfrastructureError("endpoint down")
            if obs == "junk":
                return 42
            if obs == "end":
                return FinalAnswer("done")
            raise KeyError("boom")
    c = AgentCaller(Bad(), default)
    with pytest.raises(AgentError) as e:
        c.act("raise")
    assert e.value.kind == "raised" and "boom" in str(e.value)
    with pytest.raises(InfrastructureError):
        c.act("infra")
    with pytest.raises(AgentError) as e:
        c.act("junk")
    assert e.value.kind == "garbage"
    assert c.act("end") == FinalAnswer("done")
    c.close()


def test_a_timeout_per_call_overrides_the_default_and_spends_the_caller():
    c = AgentCaller(Slow(0.3), timeout=10.0)
    t0 = time.perf_counter()
    with pytest.raises(AgentError) as e:
        c.act(1, timeout=0.05)
    assert e.value.kind == "timeout" and time.perf_counter() - t0 < 0.25
    with pytest.raises(AgentError) as e:            # the agent may still be running: spent
        c.act(1)
    assert e.value.kind == "timeout"
    c.close()
    with pytest.raises(AgentError) as e:            # no time left: the agent is not called
        AgentCaller(Slow(0.0), None).act(1, timeout=0)
    assert e.value.kind == "timeout"
    assert AgentCaller(Slow(0.01), 0.05).act(3, timeout=2.0) == {"type": "wait", "ms": 3}


def test_a_hung_agent_does_not_keep_a_thread_that_blocks_exit():
    c = AgentCaller(Slow(30), timeout=0.05)
    with pytest.raises(AgentError):
        c.act(1)
    workers = [t for t in threading.enumerate() if t.name == "agent" and t.is_alive()]
    assert workers and all(t.daemon for t in workers)
