"""The suite state of private records (agents/harness/snapshots.py): deltas between full
snapshots restore every step exactly, a replay checks them, format 1 folders still read."""

from __future__ import annotations

import json
import random

import pytest

from longpuzzle.agents.scripted import GreedyAgent, SolverAgent
from longpuzzle.agents.harness import Settings, read_events, replay_episode, restore_step, run_objective
from longpuzzle.agents.harness import snapshots
from longpuzzle.agents.harness.run import Run
from longpuzzle.engine.suite import Suite


class Mixed(SolverAgent):
    """The solver with detours: undo, restart and a refused action now and then, so that move
    lists shrink, logs grow and sessions change."""

    def __init__(self, seed):
        super().__init__()
        self.r = random.Random(seed)

    def act(self, obs):
        m = self.model
        if obs.frame is not None and m.screen["name"] == "level" and not m.complete:
            k = self.r.random()
            ids = [w.id for w in m.layout().widgets]
            if k < 0.12 and "undo" in ids:
                self.plan = []
                return self.emit(self._click_widget("undo"))
            if k < 0.2:
                self.plan = []
                return self.emit(self._click_widget("restart"))
            if k < 0.24:
                return {"type": "teleport"}          # refused: no state in its private record
        return super().act(obs)


@pytest.fixture
def live(monkeypatch):
    """step -> the app's exact snapshot after it, as the episode ran."""
    out, dispatch = {}, Run.dispatch

    def spy(self, *a, **k):
        res = dispatch(self, *a, **k)
        out[self.step] = self.suite.snapshot()
        return res
    monkeypatch.setattr(Run, "dispatch", spy)
    monkeypatch.setattr(snapshots, "FULL_EVERY", 7)            # full snapshots among the deltas
    return out


@pytest.mark.parametrize("game,diff,seed", [("nut_and_bolt", "easy", 1), ("maze_paint", "easy", 2)])
def test_every_step_restores_exactly_and_replays(tmp_path, live, game, diff, seed):
    st = Settings(action_timeout=None, save_frames=False, invalid_action_policy="dispatch_failed", max_actions=90)
    run_objective(Mixed(seed), game, diff, settings=st, folder=tmp_path)
    ev = read_events(tmp_path)
    prv = [e for e in ev if e.get("stream") == "private"]
    kinds = {k for e in prv for k in ("snapshot", "suite") if k in e}
    assert kinds == {"snapshot", "suite"} and any("snapshot" not in e and "suite" not in e for e in prv)
    assert max(e["record"]["restarts"] for e in prv) > 0             # move lists were cut back
    assert len({e["record"]["level"] for e in prv}) > 1                # and sessions replaced
    assert max(len(json.dumps(e)) for e in prv if "suite" in e) < 4000     # no history in a delta
    for k in sorted(live):
        assert restore_step(tmp_path, k).snapshot() == live[k], k
    assert replay_episode(tmp_path).ok


def test_replay_catches_a_changed_state_and_restore_refuses_a_malformed_one(tmp_path):
    run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=Settings(action_timeout=None, save_frames=False),
                  folder=tmp_path)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    i = next(i for i, l in enumerate(lines) if '"stream":"private"' in l and '"suite"' in l
             and json.loads(l)["suite"]["session"] and json.loads(l)["suite"]["session"]["moves"][1])
    rec = json.loads(lines[i])
    good = lines[i]
    rec["suite"]["session"]["moves"][1] = ["9>9"]
    lines[i] = json.dumps(rec)
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    rep = replay_episode(tmp_path)
    assert not rep.ok and "suite state differs" in rep.divergence
    rec = json.loads(good)
    rec["suite"]["session"]["moves"] = [10 ** 6, []]
    lines[i] = json.dumps(rec)
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception) as e:
        restore_step(tmp_path, rec["step"])
    assert "malformed" in str(e.value)


def test_a_format_1_folder_replays_and_restores(tmp_path, monkeypatch):
    """Folders written before the deltas: a full snapshot in every private record."""
    from longpuzzle.agents.harness import trajectory
    monkeypatch.setattr(snapshots.SuiteStates, "record", lambda self, suite: {"snapshot": suite.snapshot()})
    monkeypatch.setattr("longpuzzle.agents.harness.run.EVENTS_FORMAT", "longpuzzle-episode/1")
    run_objective(GreedyAgent(), "maze_paint", "easy", settings=Settings(action_timeout=None, max_actions=12),
                  folder=tmp_path)
    monkeypatch.undo()
    ev = read_events(tmp_path)
    assert ev[0]["format"] == "longpuzzle-episode/1" != trajectory.EVENTS_FORMAT
    prv = [e for e in ev if e.get("stream") == "private"]
    assert all("snapshot" in e for e in prv)
    assert replay_episode(tmp_path).ok
    assert restore_step(tmp_path, 5).snapshot() == prv[4]["snapshot"]
    assert Suite.restore(prv[4]["snapshot"]).snapshot() == prv[4]["snapshot"]


def test_a_format_2_folder_replays_and_restores(tmp_path, monkeypatch):
    """Folders written before format 3: every delta carries every setting, the level digest
    and each animation's state before it."""
    from longpuzzle.agents.harness import trajectory
    init = snapshots.SuiteStates.__init__
    monkeypatch.setattr(snapshots.SuiteStates, "__init__", lambda self, suite: init(self, suite, elide=False))
    monkeypatch.setattr("longpuzzle.agents.harness.run.EVENTS_FORMAT", "longpuzzle-episode/2")
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(action_timeout=None, max_actions=12,
                                                                        save_frames=False), folder=tmp_path)
    monkeypatch.undo()
    ev = read_events(tmp_path)
    assert ev[0]["format"] == "longpuzzle-episode/2" != trajectory.EVENTS_FORMAT
    prv = [e for e in ev if "suite" in e]
    assert prv and all("style" in e["suite"]["fields"] for e in prv)
    assert any(a["before"] is not None for e in prv for a in e["suite"]["fields"]["anims"])
    assert replay_episode(tmp_path).ok
    live = Suite.restore(ev[0]["start"])
    assert restore_step(tmp_path, 3).snapshot() != live.snapshot()


def test_deltas_leave_out_what_did_not_change():
    """Format 3: settings written when they change, the level digest when the level does, an
    animation's state before it when it is not the previous record's state."""
    s = Suite("maze_paint/easy/1")
    st = snapshots.SuiteStates(s)
    s.dispatch(s.gesture_for(int(s.session.legal_moves()[0])))
    d = st.record(s)["suite"]
    assert not set(snapshots.CONSTANT) & set(d["fields"]) and "level_sha256" not in d["session"]
    assert d["fields"]["anims"] and all(a["before"] is None for a in d["fields"]["anims"])
    rb = snapshots.StateRebuilder(Suite("maze_paint/easy/1").snapshot())
    rb.apply({"suite": d})
    assert rb.snapshot() == s.snapshot()
