"""The viewer's reading of an episode (no browser): which model call belongs to which step,
the VISTA notes as they evolved, and a frame served on demand equal to the stored one."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from longpuzzle.agents.harness import read_events
from longpuzzle.agents.harness.frames import hasher, header_frame_hash
from longpuzzle.agents.serve.viewer import episode_doc, model_steps

sys.path.insert(0, str(Path(__file__).parent))
from waits import HANG

EPISODE = "bolt_unscrew_hard/episode_001"           # (conftest.py: greedy_run)
OTHER = "bolt_unscrew_hard/episode_002"


def _call(kind, text, cost=0.01, tools=(), **kw):
    return {"type": "call", "kind": kind, "cost": cost, **kw,
            "reply": {"text": text, "reasoning": "", "tool_calls": list(tools)}}


def test_model_calls_go_to_the_step_they_decided(tmp_path):
    lines = [{"type": "header", "format": "longpuzzle-conversation/1"}, {"type": "opening_wait"},
             _call("step", "click the screw", tools=[{"name": "write_guide", "arguments": {"text": "v1"}}]),
             _call("follow-up", "sorry: click (10, 20)"),
             _call("summary", "a summary is no step's"),
             _call("step", "drag it", tools=[{"name": "write_working", "arguments": {"text": "w1"}}]),
             _call("step", "from a tool agent", turn=4,
                   tools=[{"name": "write_guide", "arguments": {"text": "v2"}}])]
    (tmp_path / "conversation.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    got = model_steps(tmp_path, [1, 2, 3, 4, 5, None])
    assert set(got) == {"2", "3", "5"}                 # step 1 is the harness's opening wait
    assert got["2"]["text"] == "click the screw\n\nsorry: click (10, 20)" and got["2"]["calls"] == 2
    assert got["2"]["cost"] == 0.02
    assert got["3"]["text"] == "drag it"
    assert got["2"]["notes"] == {"GUIDE.md": "v1"}
    assert got["3"]["notes"] == {"GUIDE.md": "v1", "WORKING.md": "w1"}
    assert got["5"]["notes"] == {"GUIDE.md": "v2", "WORKING.md": "w1"}


def test_the_frame_served_at_a_position_is_its_stored_frame(serve, greedy_run):
    folder = greedy_run / EPISODE
    doc = episode_doc(folder)
    ev = read_events(folder)
    hashes = [ev[0]["frame"]] + [h for r in ev[1:] if r.get("stream") == "public" for h in r.get("frames", [])]
    hash_of = hasher(header_frame_hash(ev[0]))
    s = serve([greedy_run])
    pos = doc["positions"][6]
    for query, same in (("", True), (f"?step={pos['step']}", False)):     # the action drawn: other pixels
        status, h, body = s.request("GET", f"/frame/0/{pos['frame']}/{EPISODE}{query}")
        assert status == 200 and h["content-type"] == "image/png"
        shown = np.asarray(Image.open(io.BytesIO(body)).convert("RGB"))
        assert (hash_of(shown) == hashes[pos["frame"]]) is same
    assert s.request("GET", f"/frame/0/{len(hashes)}/{EPISODE}")[0] == 404
    assert s.request("GET", f"/frame/0/1/{EPISODE}?step=x")[0] == 400
    # the events of the episode: greedy's dead end on hard 1, then its restart
    events = {e for p in doc["positions"] for e in p["events"]}
    assert {"dead_end", "restart"} <= events


def test_a_level_protocol_episode_lists_its_level_folders(serve, greedy_run, tmp_path):
    import shutil

    run = tmp_path / "levels_run"
    shutil.copytree(greedy_run / EPISODE, run / "ep" / "level_01")
    (run / "ep" / "level_02").mkdir()                  # no events.jsonl: not a level folder
    s = serve([run])
    status, _, body = s.request("GET", "/episode/0/ep")
    assert status == 200
    assert b"/episode/0/ep/level_01" in body and b"level_02" not in body
    assert s.request("GET", "/episode/0/ep/level_01")[0] == 200
    assert s.request("GET", "/episode/0/nothing")[0] == 404


def test_an_episode_without_stored_frames_is_drawn_again_from_its_snapshots(serve, tmp_path):
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.runner import RunConfig, execute, start_run

    out = tmp_path / "no_frames"
    run = RunConfig(agent="greedy", objectives=["bolt_unscrew/hard"], episodes=1,
                    settings=Settings(budget=None, max_actions=5, save_frames=False).as_dict())
    start_run(out, run)
    execute(out, run, quiet=True)
    folder = out / EPISODE
    assert not (folder / "frames.lpf").exists()
    ev = read_events(folder)
    hashes = [ev[0]["frame"]] + [h for r in ev[1:] if r.get("stream") == "public" for h in r.get("frames", [])]
    hash_of = hasher(header_frame_hash(ev[0]))
    s = serve([out])
    for pos in episode_doc(folder)["positions"]:          # every position's frame, as recorded
        status, _, body = s.request("GET", f"/frame/0/{pos['frame']}/{EPISODE}")
        assert status == 200
        assert hash_of(np.asarray(Image.open(io.BytesIO(body)).convert("RGB"))) == hashes[pos["frame"]]


def test_a_model_runs_calls_are_given_to_the_steps_they_made(tmp_path):
    """A native model agent through the scripted endpoint on 127.0.0.1: each step's call in
    the viewer is the call whose tool call became that step's action."""
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.models.config import ModelConfig
    from longpuzzle.agents.runner import RunConfig, execute, start_run
    from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, solver_gestures

    script = ReplayScript(gesture_script("native", solver_gestures("maze_paint/easy")), by="history")
    with ScriptedServer(script) as srv:
        model = ModelConfig(model="scripted-model", api="openai-chat", base_url=srv.url_v1, api_key_env="", max_retries=0)
        run = RunConfig(agent="native", objectives=["maze_paint/easy"], model=model.public(),
                        settings=Settings(action_timeout=None, max_actions=6).as_dict())
        start_run(tmp_path, run)
        execute(tmp_path, run, quiet=True)
    doc = episode_doc(tmp_path / "maze_paint_easy" / "episode_001")
    acted = [p for p in doc["positions"] if p["step"] is not None]
    assert len(acted) == 6 and set(doc["model"]) == {str(p["step"]) for p in acted}
    for p in acted:
        (call,) = doc["model"][str(p["step"])]["tool_calls"]
        args = call["arguments"]
        assert args["action"] == p["action"]["type"], p["step"]
        assert all(args[k] == p["action"][k] for k in ("x", "y", "x0", "y0", "x1", "y1", "ms") if k in args), p["step"]


def test_the_viewer_keeps_a_bounded_number_of_documents_annotations_and_graph_states(greedy_run):
    from longpuzzle.agents.serve.viewer import Episodes
    from longpuzzle.solvers.oracle import Oracle

    eps = Episodes(docs=1, annotations=1, graph_states=50)
    a, b = greedy_run / EPISODE, greedy_run / OTHER
    assert eps.doc(a)["positions"] and eps.doc(b)["positions"]
    assert len(eps.docs) == 1 and eps.docs.keys() == [b]          # the least recently used went first
    for folder in (a, b):
        assert eps.oracle_doc(folder) is None                    # queued on the worker
        fut = eps.pending.get(folder)
        if fut is not None:
            fut.result(HANG)
    assert len(eps.oracle) == 1 and eps.oracle.get(b)["first_fatal"] is not None
    for lid in ("bolt_unscrew/easy/1", "maze_paint/easy/1"):      # 2 and 79 graph states
        o = Oracle(lid)
        o.at()
        eps.oracles[(0, lid)] = o
    eps._trim_graphs()                                             # over 50 states: the oldest go
    assert list(eps.oracles) == [(0, "maze_paint/easy/1")]
    eps.close()


def test_the_oracle_is_computed_off_the_request_path_one_at_a_time(serve, greedy_run):
    from longpuzzle.agents.report.oracle_steps import oracle_steps

    s = serve([greedy_run])
    eps = s.app.app.state.ctx.cache["episodes"]
    running, most = [0], [0]
    annotate = eps._annotate

    def counted(folder):                       # the real job, its concurrency counted
        running[0] += 1
        most[0] = max(most[0], running[0])
        try:
            return annotate(folder)
        finally:
            running[0] -= 1

    eps._annotate = counted
    for ep in (EPISODE, OTHER):                # the request answers at once: 'computing'
        status, h, body = s.request("GET", f"/api/oracle/0/{ep}")
        assert status == 202 and json.loads(body) == {"computing": True}
    graphs = {}                                # the truth's graphs, shared by the two episodes
    for ep in (EPISODE, OTHER):
        fut = eps.pending.get(greedy_run / ep)
        if fut is not None:
            fut.result(HANG)
        status, _, body = s.request("GET", f"/api/oracle/0/{ep}")
        truth = json.loads(json.dumps(oracle_steps(greedy_run / ep, graphs)["first_fatal"]))
        assert status == 200 and json.loads(body)["first_fatal"] == truth
    assert most[0] == 1


def test_the_app_uses_no_private_name_of_another_module():
    """agents/serve takes what it shares with the report (video.py's frame source and label
    font) by their public names: no ``from longpuzzle... import _name``."""
    import ast

    root = Path(__file__).resolve().parents[3] / "agents" / "serve"
    private = [(f.name, a.name) for f in sorted(root.glob("*.py"))
               for node in ast.walk(ast.parse(f.read_text())) if isinstance(node, ast.ImportFrom)
               and (node.module or "").startswith("longpuzzle") for a in node.names if a.name.startswith("_")]
    assert private == []
