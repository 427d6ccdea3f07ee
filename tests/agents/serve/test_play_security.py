"""The play and branch endpoints change state (a session started, an action played, an episode
recorded): each needs the page's token and the app's own origin; a refused request writes
nothing. Hostile strings from a run folder are escaped on the branch page."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent))
from play_app import play_app

from longpuzzle.agents.serve.live import SessionPool


@pytest.fixture
def app(tmp_path):
    src = tmp_path / "src"
    pool = SessionPool(src, idle=60)
    s = pool.new("maze_paint/easy")
    s.start()
    s.submit({"type": "click", "x": 270, "y": 721})
    s.leave()
    a = play_app([src], tmp_path / "humans")
    yield a, tmp_path / "humans", s.folder
    from longpuzzle.agents.serve.play import close_sessions
    close_sessions(a.app.state.ctx)


def _client(a):
    return TestClient(a, base_url="http://127.0.0.1:8765")


def test_state_changing_play_requests_need_the_token_and_the_same_origin(app):
    a, record, src = app
    token = a.page_token
    c = _client(a)
    body = json.dumps({"target": "maze_paint/easy"})
    assert c.post("/play/new", content=body).status_code == 403                       # no token
    assert c.post("/play/new", content=body, headers={"X-LP-Token": "wrong"}).status_code == 403
    for hostile in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}):
        r = c.post("/play/new", content=body, headers={"X-LP-Token": token, **hostile})
        assert r.status_code == 403, hostile
    for path in ("/branch/0/" + src.name + "/play", "/branch/0/" + src.name + "/agent"):
        assert c.post(path, content=json.dumps({"step": 1})).status_code == 403
    assert list(record.iterdir()) == []                                                 # nothing recorded
    ok = c.post("/play/new", content=body, headers={"X-LP-Token": token, "Origin": "http://127.0.0.1:8765",
                                                    "Sec-Fetch-Site": "same-origin"})
    assert ok.status_code == 200 and ok.json()["url"].startswith("/play/s/")
    base = ok.json()["url"]
    assert c.post(base + "/act", content=json.dumps({"action": {"type": "wait", "ms": 0}})).status_code == 403
    assert c.post(base + "/leave").status_code == 403
    r = c.post(base + "/act", content=json.dumps({"action": {"type": "wait", "ms": 0}}), headers={"X-LP-Token": token})
    assert r.status_code == 200 and len(r.content) == 540 * 960 * 3
    assert json.loads(r.headers["X-Play-State"])["step"] == 2
    r = c.post(base + "/act", content="not json", headers={"X-LP-Token": token})
    assert r.status_code == 400 and "JSON" in r.json()["error"]
    r = c.post(base + "/leave", headers={"X-LP-Token": token})
    assert json.loads(r.headers["X-Play-State"])["ended"] == "final_answer"
    r = c.post(base + "/act", content=json.dumps({"action": {"type": "wait"}}), headers={"X-LP-Token": token})
    assert r.status_code == 409 and "ended" in r.json()["error"]


def test_bad_requests_are_one_clear_error(app):
    a, record, src = app
    c = _client(a)
    h = {"X-LP-Token": a.page_token}
    r = c.post("/play/new", content=json.dumps({"target": "maze_paint/nope"}), headers=h)
    assert r.status_code == 400 and "unknown objective" in r.json()["error"]
    r = c.post("/play/new", content=json.dumps({"target": "maze_paint/easy", "style": "4d"}), headers=h)
    assert r.status_code == 400 and "style" in r.json()["error"]
    r = c.post(f"/branch/0/{src.name}/play", content=json.dumps({"step": 99}), headers=h)
    assert r.status_code == 400 and "step" in r.json()["error"]
    r = c.post("/branch/0/../../etc/play", content=json.dumps({"step": 1}), headers=h)
    assert r.status_code in (400, 404)
    assert c.get("/play/s/nosuch/frame").status_code == 404
    assert list(record.iterdir()) == []


def test_hostile_strings_of_a_run_folder_are_escaped_on_the_branch_page(app, tmp_path):
    a, record, src = app
    evil = "<script>alert(1)</script>"
    lines = (src / "events.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    head["agent"] = evil
    bad = src.parent / "evil"
    shutil.copytree(src, bad)
    (bad / "events.jsonl").write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    page = _client(a).get("/branch/0/evil?step=1").text
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_hand_to_an_agent_continues_the_episode_through_the_harness(app, monkeypatch):
    from longpuzzle.agents.harness import read_events, replay_episode
    from longpuzzle.agents.serve import play

    a, record, src = app
    monkeypatch.setattr(play, "HAND_OFF_MAX_ACTIONS", 12)
    r = _client(a).post(f"/branch/0/{src.name}/agent", content=json.dumps({"step": 2, "agent": "random"}),
                        headers={"X-LP-Token": a.page_token})
    assert r.status_code == 200 and r.json()["url"].startswith("/episode/1/")
    (folder,) = list(record.iterdir())
    head = read_events(folder)[0]
    assert head["agent"] == "random" and head["continued_from"]["step"] == 2
    rep = replay_episode(folder)
    assert rep.ok and rep.complete and rep.steps == 12, rep.divergence
    r = _client(a).post(f"/branch/0/{src.name}/agent", content=json.dumps({"step": 2, "agent": "gpt"}),
                        headers={"X-LP-Token": a.page_token})
    assert r.status_code == 400 and "hand to one of" in r.json()["error"]


def test_stopping_the_server_ends_the_live_sessions_with_their_folders_finished(tmp_path):
    from longpuzzle.agents.harness import replay_episode

    a = play_app([], tmp_path / "humans")
    with TestClient(a, base_url="http://127.0.0.1:8765") as c:      # the app's lifespan: startup .. shutdown
        r = c.post("/play/new", content=json.dumps({"target": "maze_paint/easy", "screen": "1280x900"}),
                   headers={"X-LP-Token": a.page_token})
        assert r.status_code == 200
        frame = c.get(r.json()["url"] + "/frame")
        assert frame.headers["X-Frame-Size"] == "1280,900"            # the paper's page
    (folder,) = list((tmp_path / "humans").iterdir())
    rep = replay_episode(folder)
    assert rep.ok and rep.complete
