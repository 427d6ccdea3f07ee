"""The takeover context (D.1; agents/api.py Takeover, harness/takeover.py) and its delivery:
built from a recorded episode's public records and stored frames, given to the continuing
agent once after reset (in process and through an agent file's sandbox)."""

import json

import numpy as np
import pytest

from longpuzzle.agents.base import BaseAgent, FinalAnswer, Takeover, first_action
from longpuzzle.agents.harness import (
    HarnessError, Settings, action_text, build_takeover, continue_episode, read_events, replay_episode, restore_step,
    run_objective, takeover_at,
)
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.render.frame.screens import renderer_for

STEP = 9


def drawn(folder, step):
    s = restore_step(folder, step)
    return renderer_for(s).render(s)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A Maze Paint easy episode of 12 greedy actions, with frames and without."""
    d = tmp_path_factory.mktemp("src")
    for name, save in (("framed", True), ("bare", False)):
        run_objective(GreedyAgent(), "maze_paint", "easy", folder=d / name,
                      settings=Settings(max_actions=12, action_timeout=None, save_frames=save))
    return d


def test_action_text_names_each_kind():
    assert action_text({"type": "click", "x": 412, "y": 300}) == "click(412, 300)"
    assert action_text({"type": "drag", "x0": 1, "y0": 2, "x1": 3.5, "y1": 4}) == "drag(1, 2, 3.5, 4)"
    assert action_text({"type": "key", "name": "Enter"}) == "key(Enter)"
    assert action_text({"type": "swipe", "direction": "left"}) == "swipe(left)"
    assert action_text({"type": "batch", "actions": [{"type": "wait", "ms": 2000}, {"type": "scroll"}]}) \
        == "batch[wait(2000 ms); scroll(down)]"


def test_the_context_is_the_public_prefix_the_last_four_pairs_and_the_screen(source):
    t = build_takeover(source / "framed", STEP, note="State information: x")
    public = [r for r in read_events(source / "framed") if r.get("stream") == "public" and r["step"] <= STEP]
    assert t.step == STEP and t.note == "State information: x"
    assert len(t.prefix) == STEP and t.prefix[0] == "step 1: wait(0 ms) -> wait_completed"
    assert [p.split(" -> ")[0] for p in t.prefix] == [f"step {r['step']}: {action_text(r['action'])}" for r in public]
    assert [a for _, a in t.pairs] == [action_text(r["action"]) for r in public[-4:]]
    # each pair's screenshot is the one its action was chosen on: the screen after the step before
    for (frame, _), r in zip(t.pairs, public[-4:]):
        assert np.array_equal(frame, drawn(source / "framed", r["step"] - 1))
    assert np.array_equal(t.frame, drawn(source / "framed", STEP))
    assert "Actions taken so far" in t.prefix_text() and t.prefix[-1] in t.prefix_text()


def test_without_stored_frames_the_screens_are_drawn_from_the_restored_states(source):
    a, b = build_takeover(source / "framed", STEP), takeover_at(source / "bare", STEP)
    assert not (source / "bare" / "frames.lpf").exists()
    with pytest.raises(HarnessError, match="stored no screenshot"):
        build_takeover(source / "bare", STEP)
    assert a.prefix == b.prefix and np.array_equal(a.frame, b.frame)
    assert all(np.array_equal(x, y) and s == u for (x, s), (y, u) in zip(a.pairs, b.pairs))


def test_early_steps_have_fewer_pairs_and_a_missing_step_is_refused(source):
    t = build_takeover(source / "framed", 2)
    assert len(t.prefix) == 2 and len(t.pairs) == 1      # the opening wait was chosen on no screenshot
    with pytest.raises(HarnessError, match="no recorded action at step 40"):
        build_takeover(source / "framed", 40)


class Recorder(BaseAgent):
    """Notes when it was given what, then stops."""
    name = "recorder"

    def __init__(self):
        self.calls = []

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.calls.append("reset")

    def take_over(self, takeover):
        super().take_over(takeover)
        self.calls.append("take_over")

    def act(self, obs):
        self.calls.append("act")
        return first_action(obs) or FinalAnswer("done")


def test_continue_episode_gives_the_context_after_reset_and_before_the_first_act(source, tmp_path):
    ag = Recorder()
    continue_episode(source / "framed", STEP, ag, note="Recovery information: restart.", out=tmp_path / "c",
                     takeover=True, settings=Settings(max_actions=5, action_timeout=None))
    assert ag.calls[:3] == ["reset", "take_over", "act"] and ag.calls.count("take_over") == 1
    assert ag.takeover.step == STEP and ag.takeover.note == "Recovery information: restart."
    assert np.array_equal(ag.takeover.frame, drawn(source / "framed", STEP))
    assert replay_episode(tmp_path / "c").ok
    ag = Recorder()                                   # no takeover asked: none given, as before
    continue_episode(source / "framed", STEP, ag, settings=Settings(max_actions=5, action_timeout=None))
    assert "take_over" not in ag.calls and not hasattr(ag, "takeover")
    given = Takeover(3, ("step 1: wait(0 ms) -> wait_completed",))
    ag = Recorder()
    continue_episode(source / "framed", STEP, ag, takeover=given, settings=Settings(max_actions=5, action_timeout=None))
    assert ag.takeover is given


AGENT_FILE = """
import hashlib
from longpuzzle.agents.base import BaseAgent, FinalAnswer, Takeover


class Told(BaseAgent):
    def take_over(self, takeover):
        assert isinstance(takeover, Takeover)
        self.told = takeover

    def act(self, obs):
        if obs.frame is None:
            return {"type": "wait", "ms": 0}
        t = self.told
        return FinalAnswer(repr((t.step, len(t.prefix), t.prefix[-1], [a for _, a in t.pairs],
                                 [hashlib.sha256(f.tobytes()).hexdigest() for f, _ in t.pairs],
                                 hashlib.sha256(t.frame.tobytes()).hexdigest(), t.note)))
"""


def test_an_agent_file_gets_the_context_through_its_sandbox(source, tmp_path):
    import ast
    import hashlib

    from longpuzzle.agents.harness.isolated import AgentFile

    f = tmp_path / "told.py"
    f.write_text(AGENT_FILE)
    continue_episode(source / "framed", STEP, AgentFile(f), note="n", out=tmp_path / "c", takeover=True,
                     settings=Settings(max_actions=5, action_timeout=60))
    fin = [r for r in read_events(tmp_path / "c") if "final_answer" in r]
    assert fin, json.loads((tmp_path / "c" / "result.json").read_text()).get("error")
    step, n, last, acts, pair_digests, digest, note = ast.literal_eval(fin[0]["final_answer"])
    want = build_takeover(source / "framed", STEP, note="n")
    assert (step, n, last, acts, note) == (STEP, STEP, want.prefix[-1], [a for _, a in want.pairs], "n")
    assert pair_digests == [hashlib.sha256(np.ascontiguousarray(p).tobytes()).hexdigest() for p, _ in want.pairs]
    assert digest == hashlib.sha256(np.ascontiguousarray(want.frame).tobytes()).hexdigest()


def test_a_continuation_of_a_continuation_is_taken_over_with_the_whole_chain(source, tmp_path):
    # a continuation (continued_from) is taken over with its source's history before its own:
    # the source's prefix up to the step it was continued from, then its own actions numbered
    # on from there, the last four pairs across both; followed only while the digests hold
    one, two = tmp_path / "one", tmp_path / "two"
    continue_episode(source / "bare", STEP, GreedyAgent(), out=one, takeover=True,
                     settings=Settings(max_actions=3, action_timeout=None))
    src = takeover_at(source / "bare", STEP)
    tk = takeover_at(one, 3, note="n")
    own = [r for r in read_events(one) if r.get("stream") == "public" and "action" in r]
    assert tk.step == STEP + 3 and tk.note == "n" and len(tk.prefix) == STEP + 3
    assert tk.prefix[:STEP] == src.prefix
    assert tk.prefix[STEP:] == tuple(f"step {STEP + r['step']}: {action_text(r['action'])} -> "
                                     f"{r['feedback']['status']}" for r in own)
    assert [a for _, a in tk.pairs] == [a for _, a in src.pairs][-2:] + [action_text(r["action"]) for r in own[1:]]
    assert np.array_equal(tk.pairs[0][0], src.pairs[-2][0]) and np.array_equal(tk.frame, drawn(one, 3))
    # continued again: the agent taking over the second is told all three episodes' history
    ag = Recorder()
    continue_episode(one, 3, ag, out=two, takeover=True, settings=Settings(max_actions=2, action_timeout=None))
    assert ag.takeover.prefix == tk.prefix and replay_episode(two).ok
    assert takeover_at(two, 1).prefix[:-1] == tk.prefix and takeover_at(two, 1).step == STEP + 4
    # the source changed since: not followed
    ev = source / "bare" / "events.jsonl"
    keep = ev.read_bytes()
    try:
        ev.write_bytes(keep + b"\n")
        with pytest.raises(HarnessError, match="whose events have changed since"):
            takeover_at(one, 3)
    finally:
        ev.write_bytes(keep)
