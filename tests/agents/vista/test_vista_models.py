"""Built-in model agents on the tools (native function calling) against a scripted model
server on 127.0.0.1: the VISTA ablation ladder's configurations offer their tools and keep
their context as documented, the solver's gestures through play complete an objective,
compaction saves the notes first, invalid replies and provider failures end episodes as the
model agents' rules say, and the conversation log and the tool use per level are written."""

from __future__ import annotations

import json

import pytest

from longpuzzle.agents.harness import Settings, replay_episode
from longpuzzle.agents.models.config import ModelConfig
from longpuzzle.agents.testing.endpoints import ScriptedServer, solver_gestures
from longpuzzle.agents.vista.model import CONFIGS, ToolModelAgent, run_tool_agent

FAST = Settings(budget=600, action_timeout=None)
DONE = {"text": "BENCHMARK COMPLETED: the card says All complete!"}


def _play(a):
    """A play call in the paper's form: play(action, x, y, ...)."""
    return {"name": "play", "arguments": {"action": a["type"], **{k: v for k, v in a.items() if k != "type"}}}


def _plays(gestures):
    """One reply per action (VISTA's play takes exactly one: a batch becomes its actions)."""
    return [{"tool_calls": [_play(x)]} for a in gestures for x in (a["actions"] if a["type"] == "batch" else [a])]


class Script:
    """Replies in order; records what each request carried."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []

    def __call__(self, api, body):
        msgs = body.get("messages") or []
        images = sum(1 for m in msgs for p in (m.get("content") if isinstance(m.get("content"), list) else [])
                     if isinstance(p, dict) and p.get("type") == "image_url")
        text = json.dumps(msgs[-1]) if msgs else ""
        self.seen.append({"messages": len(msgs), "images": images, "tools": [t["function"]["name"] for t in
                                                                               body.get("tools") or []],
                          "last": text, "texts": " ".join(
                              p["text"] if isinstance(p, dict) and "text" in p else "" for m in msgs
                              for p in (m["content"] if isinstance(m.get("content"), list) else [{"text": m.get("content") or ""}]))})
        if "conversation is about to be shortened" in text:
            return {"text": "Summary: on level 1, the plan continues."}
        if "save_compact_checkpoint now" in text:
            return {"tool_calls": [{"name": "save_compact_checkpoint",
                                    "arguments": {"guide": "G: swipe", "working_memory": "W: left"}}]}
        return self.replies.pop(0) if self.replies else DONE


def _agent(config, srv, folder, **kw):
    cfg = ModelConfig(model="scripted", api="openai-chat", base_url=srv.url_v1, api_key_env="", max_retries=0, **kw)
    return ToolModelAgent(config, cfg, folder=folder)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_each_configuration_offers_its_tools_and_keeps_its_context(config, tmp_path):
    g = solver_gestures("maze_paint/easy")[:3]
    probe = {"name": "inspect", "arguments": {"views": [{"turn": 1}]}}
    script = Script([{"tool_calls": [_play({"type": "wait", "ms": 0})]}] + [{"tool_calls": [_play(a)]} for a in g]
                    + [{"tool_calls": [probe]}, DONE])
    with ScriptedServer(script) as srv:
        res = run_tool_agent(_agent(config, srv, tmp_path), "maze_paint", "easy", settings=FAST, folder=tmp_path)
    c = CONFIGS[config]
    assert res.end == "final_answer" and res.actions == 4
    assert all(s["tools"] == list(c.tools) for s in script.seen)
    if c.conversation:
        assert [s["messages"] for s in script.seen] == sorted(s["messages"] for s in script.seen)
        assert script.seen[-1]["images"] == 4 + ("inspect" in c.tools)      # every screenshot kept
    else:
        assert {s["messages"] for s in script.seen} == {2} and max(s["images"] for s in script.seen) == 1
    d = json.loads((tmp_path / "result.json").read_text())
    assert d["tools"]["by_tool"]["inspect"] == 1 and d["tools"]["errors"] == ("inspect" not in c.tools)
    assert d["tools"]["setting"] == c.setting
    # NGAR: the opening wait, the probe and the final answer are other; the 3 gestures native
    assert (d["native_steps"], d["other_steps"]) == (3, 3)


def test_the_full_harness_completes_an_objective_and_logs_the_conversation(tmp_path):
    g = solver_gestures("nut_and_bolt/easy")
    tools = [{"tool_calls": [{"name": "write_working", "arguments": {"content": "plan: sort the nuts"}},
                             {"name": "history", "arguments": {"view": "attempts"}}]},
             {"tool_calls": [{"name": "read_pixels", "arguments": {"views": [{"turn": -1, "rows": 4, "cols": 4}]}},
                             {"name": "inspect", "arguments": {"views": [{"label": "corner", "turn": 2, "region": {
                                 "x": 0, "y": 0, "w": 100, "h": 100}, "zoom": 2}]}}]}]
    replies = [{"tool_calls": [_play({"type": "wait", "ms": 0})]}] + _plays(g[:4]) + tools + _plays(g[4:])
    script = Script(replies)
    with ScriptedServer(script) as srv:
        agent = _agent("vista-full", srv, tmp_path)
        res = run_tool_agent(agent, "nut_and_bolt", "easy", settings=FAST, folder=tmp_path)
    assert res.end == "completed" and res.outcome.success
    assert replay_episode(tmp_path).ok
    log = [json.loads(l) for l in (tmp_path / "conversation.jsonl").read_text().splitlines()]
    assert log[0]["type"] == "header" and log[0]["protocol"] == "vista-full" and log[-1]["type"] == "end"
    calls = [r for r in log if r["type"] == "call"]
    assert len(calls) == len(replies) and all("turn" in r for r in calls)
    assert any(p.get("image", {}).get("box") == [0, 0, 100, 100] for r in log if r["type"] == "message"
               for p in r["message"].get("parts", ()))                          # an inspect view, by reference
    t = json.loads((tmp_path / "result.json").read_text())["tools"]
    tokens = [l["tokens"] for l in t["levels"] if l["level"]]
    assert all(tok and tok["input"] > 0 for tok in tokens) and len(tokens) == 3
    assert agent.report()["usage"]["calls"] == len(replies)


def test_compaction_saves_the_notes_first_and_shows_them_again(tmp_path):
    g = solver_gestures("maze_paint/easy")[:4]
    replies = [{"tool_calls": [_play({"type": "wait", "ms": 0})]}, {"tool_calls": [_play(g[0])]},
               {"tool_calls": [_play(g[1])]}, DONE]
    script = Script(replies)
    with ScriptedServer(script) as srv:
        agent = _agent("vista-notes", srv, tmp_path, context_tokens=1000)     # each call reports 1000 + 40
        res = run_tool_agent(agent, "maze_paint", "easy", settings=FAST, folder=tmp_path)
    assert res.end == "final_answer"
    asks = [i for i, s in enumerate(script.seen) if "save_compact_checkpoint now" in s["last"]]
    shortened = [i for i, s in enumerate(script.seen) if "about to be shortened" in s["last"]]
    assert asks and shortened and asks[0] + 1 == shortened[0]
    after = script.seen[shortened[0] + 1]
    assert after["messages"] <= 4                                        # the history was replaced
    log = (tmp_path / "conversation.jsonl").read_text()
    assert '"type":"compaction"' in log and "G: swipe" in log.split('"type":"compaction"')[1]
    t = json.loads((tmp_path / "result.json").read_text())["tools"]
    assert t["checkpoints"] == len(asks) == len(shortened) and (tmp_path / "notes" / "GUIDE.md").read_text() == "G: swipe"
    assert "GUIDE.md:\nG: swipe" in after["texts"] and "WORKING.md:\nW: left" in after["texts"]


class SkipsFirstCheckpoint(Script):
    """A model that answers the first request for a checkpoint with a play instead."""

    def __call__(self, api, body):
        msgs = body.get("messages") or []
        if msgs and "save_compact_checkpoint now" in json.dumps(msgs[-1]) and not getattr(self, "skipped", False):
            self.skipped = True
            self.seen.append({"last": json.dumps(msgs[-1]), "messages": len(msgs), "images": 0, "tools": [],
                              "texts": ""})
            return {"tool_calls": [_play({"type": "swipe", "direction": "up"})]}
        return super().__call__(api, body)


def test_a_model_that_skips_the_checkpoint_is_paused_until_it_saves_one(tmp_path):
    """The pause is the controller's: every tool but the checkpoint (and reading the notes,
    final_answer) is refused from the request on until save_compact_checkpoint is called."""
    g = solver_gestures("maze_paint/easy")[:2]
    script = SkipsFirstCheckpoint([{"tool_calls": [_play({"type": "wait", "ms": 0})]}, {"tool_calls": [_play(g[0])]},
                                   {"tool_calls": [_play(g[1])]}, DONE])
    with ScriptedServer(script) as srv:
        agent = _agent("vista-notes", srv, tmp_path, context_tokens=1000)     # each call reports 1000 + 40
        res = run_tool_agent(agent, "maze_paint", "easy", settings=FAST, folder=tmp_path)
    assert res.end == "final_answer"
    from longpuzzle.agents.harness import read_events
    calls = [e for e in read_events(tmp_path) if e.get("stream") == "tools" and "tool" in e]
    paused = [e for e in calls if e.get("paused")]
    # the play sent instead of the checkpoint, and the next step's play: refused, nothing dispatched
    assert [(e["tool"], e["args"]["action"]) for e in paused] == [("play", "swipe"), ("play", g[0]["type"])]
    saved = next(i for i, e in enumerate(calls) if e["tool"] == "save_compact_checkpoint")
    assert calls.index(paused[-1]) < saved and not any(e.get("paused") for e in calls[saved:])
    assert res.actions == 2                                  # the wait, and g[1] after the checkpoint


def test_invalid_replies_end_the_episode_and_provider_failures_are_unscored(tmp_path):
    script = Script([{"text": "I think I will click."}, {"tool_calls": [{"name": "play", "arguments": {}}]},
                     {"text": "hmm"}])
    with ScriptedServer(script) as srv:
        agent = ToolModelAgent("vista-full", ModelConfig(model="scripted", api="openai-chat", base_url=srv.url_v1,
                                                         api_key_env="", max_retries=0),
                               folder=tmp_path / "a", text_reply="reprompt")
        res = run_tool_agent(agent, "maze_paint", "easy", settings=FAST, folder=tmp_path / "a")
    assert res.end == "agent_error" and "3 invalid replies" in res.error and res.outcome.scored
    # by default (the paper's rule) a reply without a tool call is the final response: scored
    script = Script([{"tool_calls": [_play({"type": "wait", "ms": 0})]}, {"text": "I give up."}])
    with ScriptedServer(script) as srv:
        res = run_tool_agent(_agent("code-cua", srv, tmp_path / "c"), "maze_paint", "easy", settings=FAST,
                             folder=tmp_path / "c")
    assert res.end == "final_answer" and res.outcome.scored and not res.outcome.success and len(script.seen) == 2
    with ScriptedServer(Script([])) as srv:
        srv.fail_next(503, count=5)
        res = run_tool_agent(_agent("vista-full", srv, tmp_path / "b"), "maze_paint", "easy", settings=FAST,
                             folder=tmp_path / "b")
    assert res.end == "infrastructure_error" and not res.outcome.scored


def test_eval_runs_a_tool_agent_with_a_model(tmp_path):
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    replies = [{"tool_calls": [_play({"type": "wait", "ms": 0})]}] + _plays(solver_gestures("nut_and_bolt/easy"))
    with ScriptedServer(Script(replies)) as srv:
        # --preset fast: the solver's gestures are for the 540 x 960 game (paper: a 1280 x 900 page)
        r = CliRunner().invoke(cli, ["eval", "--preset", "fast", "--agent", "vista-memory", "--model", "scripted",
                                     "--api", "openai-chat",
                                     "--base-url", srv.url_v1, "--api-key-env", "", "--objective", "nut_and_bolt/easy",
                                     "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    # standalone waits are not native steps (the opening one, and those for Nut and Bolt's advance)
    waits = sum(r["tool_calls"][0]["arguments"]["action"] == "wait" for r in replies)
    assert waits == 3
    assert out["OSR"] == 100.0 and out["NGAR"] == pytest.approx(100 * (len(replies) - waits) / len(replies))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["setting"] == "vista" and summary["agent"] == "vista-memory" and summary["usage"]["calls"] > 0
    ep = json.loads((tmp_path / "nut_and_bolt_easy" / "episode_001" / "result.json").read_text())
    assert ep["tools"]["by_tool"]["play"] == len(replies) and ep["model"]["protocol"] == "vista-memory"
    from longpuzzle.agents.report import make_report
    page = make_report(tmp_path, videos=False).read_text()
    assert "Tools (vista setting)" in page and "input tokens" in page and "nut_and_bolt/easy/3" in page
