"""Checkpoints (agents/diagnose/checkpoints.py): the folder format, validation as the paper does
it, the loader's re-validation, restore and continuation."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from longpuzzle.agents.diagnose import checkpoints as ck
from longpuzzle.agents.harness.objective import run_objective
from longpuzzle.agents.harness.replay import replay_episode
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.engine.catalog import builtin_catalog

# the greedy agent on Bolt Unscrew hard: enters level 1 at step 3 and fills the last free hole
# at step 12 (no usable hole left: the paper's certificate); steps 4..11 are solvable boards
DEAD, SOLVABLE = 12, 6


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run") / "greedy"
    run_objective(GreedyAgent(), "bolt_unscrew", "hard", settings=Settings(max_actions=DEAD), folder=folder)
    return folder


@pytest.fixture(scope="module")
def made(episode, tmp_path_factory):
    """A checkpoints folder: the dead end and two controls of the greedy episode."""
    cat = builtin_catalog()
    out = tmp_path_factory.mktemp("ck") / "ckpts"
    tmp = ck.staging(out)
    ep = ck.copy_episode(episode, tmp / "episodes" / "greedy")
    cps = [ck.make_checkpoint(tmp, ep, DEAD, "dead_end", catalog=cat),
           ck.make_checkpoint(tmp, ep, SOLVABLE, "control", catalog=cat),
           ck.make_checkpoint(tmp, ep, 4, "control", catalog=cat)]
    ck.write_folder(tmp, out, cps, cat, [{"from": str(episode)}])
    return out


def _copy(made, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(made, dst)
    return dst


def test_the_folder_holds_the_contract_fields(made):
    man = json.loads((made / "manifest.json").read_text())
    assert man["kind"] == "longpuzzle-checkpoints" and man["version"] == 1
    assert man["catalog"] == builtin_catalog().content_hash and man["count"] == 3
    recs = [json.loads(l) for l in (made / "checkpoints.jsonl").read_text().splitlines()]
    assert [r["id"] for r in recs] == ["D01", "N01", "N02"]
    d = recs[0]
    assert d["kind"] == "dead_end" and d["level"] == "bolt_unscrew/hard/1" and d["source"] == d["level"]
    assert d["objective"] == "bolt_unscrew/hard" and d["step"] == DEAD and d["episode"] == "episodes/greedy"
    assert d["certificate"]["kind"] == "no_free_hole" and d["distance"] is None
    assert d["restart"]["playable"] is True
    assert recs[1]["certificate"] is None and recs[1]["distance"] < 1 + 11   # d(start) of hard/1 is 11
    # nothing is left of the staging folder
    assert [p.name for p in made.parent.iterdir()] == ["ckpts"]


def test_load_restores_the_exact_state_and_screenshot(made, episode):
    cps = ck.load_checkpoints(made)
    d = cps[0]
    suite = d.restore()
    assert ck.board_digest(suite) == d.state_sha256
    assert ck.pixels_digest(ck.screenshot(suite)) == d.frame_sha256 == ck.pixels_digest(d.screenshot())
    p = suite.puzzle
    assert p.diagnostics(suite.level, suite.session.state)["usable_holes"] == 0
    # the recorded evaluator said the same of that step
    priv = next(r for r in read_events(episode) if r.get("stream") == "private" and r["step"] == DEAD)
    assert priv["record"]["certificate"] == "dead_end"


def test_a_native_restart_gives_the_level_start(made):
    d = ck.load_checkpoints(made)[0]
    suite = d.restore()
    got = ck.native_restart(suite)
    c = suite.clone()
    c.dispatch(got["action"])
    assert np.array_equal(c.session.state, c.level.initial)
    assert got["state_sha256"] == ck.board_digest(c) != d.state_sha256


def test_states_that_do_not_qualify_are_refused(episode, tmp_path):
    cat = builtin_catalog()
    with pytest.raises(ck.CheckpointError, match="usable free hole"):
        ck.make_checkpoint(tmp_path, episode, SOLVABLE, "dead_end", catalog=cat)
    with pytest.raises(ck.CheckpointError, match="not a control"):
        ck.make_checkpoint(tmp_path, episode, DEAD, "control", catalog=cat)
    with pytest.raises(ck.CheckpointError, match="no level"):
        ck.make_checkpoint(tmp_path, episode, 1, "control", catalog=cat)      # the home screen


def test_continuing_a_checkpoint_replays_with_continued_from(made, tmp_path):
    d = ck.load_checkpoints(made)[0]
    out = tmp_path / "cont"
    res = d.continue_with(GreedyAgent(), note="State information: test.", out=out,
                          settings=Settings(max_actions=3))
    assert res is not None
    head = read_events(out)[0]
    assert head["continued_from"]["step"] == DEAD
    assert head["continued_from"]["events"] == d.events_sha256
    assert head["instruction"].endswith("State information: test.")
    rep = replay_episode(out)
    assert rep.ok, rep.divergence


def test_a_changed_episode_is_refused(made, tmp_path):
    dst = _copy(made, tmp_path)
    ev = dst / "episodes" / "greedy" / "events.jsonl"
    ev.write_bytes(ev.read_bytes() + b"\n")
    with pytest.raises(ck.CheckpointError, match=r"D01.*changed since"):
        ck.load_checkpoints(dst)


def test_an_episode_that_no_longer_replays_is_refused(made, tmp_path):
    dst = _copy(made, tmp_path)
    ev = dst / "episodes" / "greedy" / "events.jsonl"
    lines = ev.read_text().splitlines()
    i = next(i for i, l in enumerate(lines) if '"stream":"public","step":5,' in l.replace(" ", ""))
    lines[i] = lines[i].replace('"x":', '"x":1', 1)      # another click: the replay diverges
    ev.write_text("\n".join(lines) + "\n")
    recs = [json.loads(l) for l in (dst / "checkpoints.jsonl").read_text().splitlines()]
    for r in recs:                                          # even with its digest updated
        r["events_sha256"] = ck.file_sha256(ev)
    (dst / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ck.CheckpointError, match="does not replay"):
        ck.load_checkpoints(dst)


def test_a_state_no_longer_certified_is_refused(made, monkeypatch):
    from longpuzzle.engine.registry import get_puzzle

    p = get_puzzle("bolt_unscrew")
    monkeypatch.setattr(type(p), "diagnostics", lambda self, level, state: {"usable_holes": 1})
    with pytest.raises(ck.CheckpointError, match=r"D01.*no longer validates.*free hole"):
        ck.load_checkpoints(made)


def test_a_control_whose_distance_changed_is_refused(made, tmp_path):
    dst = _copy(made, tmp_path)
    recs = [json.loads(l) for l in (dst / "checkpoints.jsonl").read_text().splitlines()]
    recs[1]["distance"] += 1
    (dst / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ck.CheckpointError, match=r"N01.*d\(s\)"):
        ck.load_checkpoints(dst)


def test_another_catalogue_is_refused(made, tmp_path):
    dst = _copy(made, tmp_path)
    man = json.loads((dst / "manifest.json").read_text())
    man["catalog"] = "0" * 64
    man["catalog_ident"] = {"name": "elsewhere", "version": 1, "hash": "0" * 64}
    (dst / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(ck.CheckpointError, match="another catalogue"):
        ck.load_checkpoints(dst)


@pytest.mark.parametrize("damage, match", [
    (lambda d: (d / "manifest.json").write_text("{"), "not valid JSON"),
    (lambda d: (d / "manifest.json").unlink(), "no manifest.json"),
    (lambda d: (d / "checkpoints.jsonl").write_text("[1]\n"), "not a JSON object"),
    (lambda d: (d / "checkpoints.jsonl").write_text('{"id": "D01"}\n'), "no valid 'kind'"),
    (lambda d: (d / "checkpoints.jsonl").write_text(
        (d / "checkpoints.jsonl").read_text().replace('"episodes/greedy"', '"../x"', 1)), "inside"),
])
def test_malformed_folders_get_one_line(made, tmp_path, damage, match):
    dst = _copy(made, tmp_path)
    damage(dst)
    with pytest.raises(ck.CheckpointError, match=match) as e:
        ck.load_checkpoints(dst)
    assert "\n" not in str(e.value)


def test_a_folder_is_never_overwritten(made):
    with pytest.raises(ck.CheckpointError, match="already exists"):
        ck.staging(made)


def test_a_field_a_later_version_adds_is_ignored(made, tmp_path):
    dst = _copy(made, tmp_path)
    recs = [json.loads(l) for l in (dst / "checkpoints.jsonl").read_text().splitlines()]
    recs[0]["added_later"] = {"x": 1}
    (dst / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert [c.id for c in ck.load_checkpoints(dst)] == ["D01", "N01", "N02"]


def test_a_screen_drawn_differently_is_refused(made, monkeypatch):
    real = ck.screenshot

    def other(suite):                        # the renderer changed one pixel since
        f = real(suite).copy()
        f[0, 0] ^= 1
        return f
    monkeypatch.setattr(ck, "screenshot", other)
    with pytest.raises(ck.CheckpointError, match="does not draw the recorded screenshot"):
        ck.load_checkpoints(made)


def test_a_recorded_digest_that_differs_is_refused(made, tmp_path):
    dst = _copy(made, tmp_path)
    recs = [json.loads(l) for l in (dst / "checkpoints.jsonl").read_text().splitlines()]
    recs[2]["state_sha256"] = "0" * 64
    (dst / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ck.CheckpointError, match=r"N02.*state_sha256 differs"):
        ck.load_checkpoints(dst)


class _Told(GreedyAgent):
    """The greedy agent, keeping the takeover context it is given."""
    given: list = []

    def take_over(self, takeover):
        super().take_over(takeover)
        self.given.append(takeover)


def test_continue_with_gives_the_agent_the_takeover_context(made, tmp_path):
    d = ck.load_checkpoints(made)[0]
    agent = _Told()
    agent.given = []
    d.continue_with(agent, note="State information: lost.", out=tmp_path / "c1", settings=Settings(max_actions=1))
    (t,) = agent.given
    assert t.step == DEAD and t.note == "State information: lost." and len(t.prefix) == DEAD
    assert 1 <= len(t.pairs) <= 4
    assert ck.pixels_digest(t.frame) == d.frame_sha256            # the checkpoint's own screen
    agent.given = []
    d.continue_with(agent, out=tmp_path / "c2", settings=Settings(max_actions=1), takeover=False)
    assert agent.given == []
