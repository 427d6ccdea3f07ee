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
    # from a worker thread the agent runs on a daemon thread of its own, abandoned at the deadline
    out = {}

    def episode():
        c = AgentCaller(Slow(30), timeout=0.05)
        try:
            c.act(1)
        except AgentError as e:
            out["kind"] = e.kind
    t = threading.Thread(target=episode)
    t.start()
    t.join(5)
    assert out.get("kind") == "timeout"
    workers = [t for t in threading.enumerate() if t.name == "agent" and t.is_alive()]
    assert workers and all(t.daemon for t in workers)


def test_on_the_main_thread_the_agent_is_called_directly_and_interrupted_at_the_deadline():
    import signal

    seen = []

    class Where(BaseAgent):
        def __init__(self, delay):
            self.delay = delay

        def act(self, obs):
            seen.append(threading.current_thread() is threading.main_thread())
            try:
                time.sleep(self.delay)
            except Exception:                        # an agent's own handler does not swallow it
                return {"type": "wait", "ms": -1}
            return {"type": "wait", "ms": obs}
    before = threading.active_count()
    c = AgentCaller(Where(0.0), timeout=5.0)
    assert c.act(3) == {"type": "wait", "ms": 3} and seen == [True]
    assert threading.active_count() == before       # no worker thread
    c.close()
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    c = AgentCaller(Where(30), timeout=0.1)
    t0 = time.perf_counter()
    with pytest.raises(AgentError) as e:
        c.act(1)
    assert e.value.kind == "timeout" and time.perf_counter() - t0 < 2.0 and threading.active_count() == before
    with pytest.raises(AgentError):                 # spent, as after any timeout
        c.act(1)
    c.close()
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL

    class Late(BaseAgent):                          # swallows the interruption: late is a timeout too
        def act(self, obs):
            t = time.perf_counter()
            while time.perf_counter() - t < 0.3:
                try:
                    time.sleep(0.3 - (time.perf_counter() - t))
                except BaseException:
                    pass
            return {"type": "wait", "ms": 0}
    c = AgentCaller(Late(), timeout=0.05)
    with pytest.raises(AgentError) as e:
        c.act(1)
    assert e.value.kind == "timeout"
    c.close()

    # someone else's SIGALRM handler is left alone: the worker thread is used instead
    prev = signal.signal(signal.SIGALRM, lambda *a: None)
    try:
        seen.clear()
        c = AgentCaller(Where(0.0), timeout=5.0)
        assert c.act(2) == {"type": "wait", "ms": 2} and seen == [False]
        c.close()
    finally:
        signal.signal(signal.SIGALRM, prev)
