"""The runs page's index: a run read from its summary alone (its metrics, its episodes where
eval put them), and a folder of separate episodes (what serve --record fills) listed as it grows."""

from __future__ import annotations

import json
import shutil

EPISODE = "bolt_unscrew_hard/episode_001"           # (conftest.py: greedy_run)


def test_a_run_is_listed_from_its_summary(serve, greedy_run):
    s = serve([greedy_run])
    status, _, body = s.request("GET", "/api/runs/0")
    run = json.loads(body)
    summary = json.loads((greedy_run / "summary.json").read_text())
    assert status == 200 and run["agent"] == "greedy" and run["n_episodes"] == 2
    assert run["metrics"]["FGP"] == summary["metrics"]["FGP"]
    assert [e["path"] for e in run["episodes"]] == [EPISODE, "bolt_unscrew_hard/episode_002"]
    assert all((greedy_run / e["path"] / "events.jsonl").is_file() for e in run["episodes"])
    assert [e["actions"] for e in run["episodes"]] == [e["actions"] for e in summary["episodes"]]
    assert json.loads(s.request("GET", "/api/runs/0/verified")[2]) == {"ok": True, "how": "verification record", "why": ""}


def test_a_folder_of_episodes_is_listed_as_it_grows(serve, greedy_run, tmp_path):
    sessions = tmp_path / "sessions"
    shutil.copytree(greedy_run / EPISODE, sessions / "a")
    s = serve([sessions])
    run = json.loads(s.request("GET", "/api/runs/0")[2])
    assert run["kind"] == "collection" and run["agent"] == "greedy" and [e["path"] for e in run["episodes"]] == ["a"]
    shutil.copytree(greedy_run / EPISODE, sessions / "b")
    (sessions / "b" / "result.json").unlink()             # a session still being played
    run = json.loads(s.request("GET", "/api/runs/0")[2])
    assert [(e["path"], e["end"]) for e in run["episodes"]] == [("a", "max_actions"), ("b", "unfinished")]
    assert json.loads(s.request("GET", "/api/runs/0/verified")[2])["ok"] is None


def test_a_large_run_without_a_verification_record_is_not_replayed_by_a_page(serve, greedy_run, tmp_path, monkeypatch):
    from longpuzzle.agents.serve import runs

    copy = tmp_path / "copy"
    shutil.copytree(greedy_run, copy)
    (copy / "verified.json").unlink()
    s = serve([copy])
    monkeypatch.setattr(runs, "REPLAY_AT_MOST", 1)          # 2 episodes: "large"
    v = json.loads(s.request("GET", "/api/runs/0/verified")[2])
    assert v["ok"] is None and v["how"] == "no verification record" and "longpuzzle replay" in v["why"]
    monkeypatch.setattr(runs, "REPLAY_AT_MOST", 200)
    s2 = serve([copy])
    assert json.loads(s2.request("GET", "/api/runs/0/verified")[2]) == {"ok": True, "how": "replayed", "why": ""}
