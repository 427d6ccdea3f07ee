"""The diagnostics' harness (D.1) for model agents, through the scripted HTTP endpoint on
127.0.0.1: what each request holds after a takeover (the public prefix, the screenshot-action
pairs, the current screenshot), then at most 12 action turns and 4 screenshots with the
model's own summary every 8 turns; and the harness's settings (1280 x 900, 2 s charged)."""

import json

import pytest

from longpuzzle.agents.harness import Settings, continue_episode, replay_episode, run_objective
from longpuzzle.agents.models import d1
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, last_user_text

PAGE = (1280, 900)
STEP = 9
ACTIONS = 18
TURNS, IMAGES, EVERY = 12, 4, 8     # the paper's D.1: turns and screenshots kept, turns between summaries
SUMMARY = "My summary: I painted the left corridor; next I try the right side."


def images(body) -> tuple[int, int]:
    """(screenshots sent with pixels, placeholders) anywhere in a request body."""
    shown = omitted = 0

    def walk(v):
        nonlocal shown, omitted
        if isinstance(v, dict):
            if v.get("type") in ("image_url", "image", "input_image"):
                shown += 1
            elif v.get("type") in ("text", "input_text") and "omitted" in str(v.get("text", "")).lower():
                omitted += 1
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(body.get("messages"))
    return shown, omitted


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("d1") / "src"
    run_objective(GreedyAgent(), "maze_paint", "easy", folder=d,
                  settings=Settings(max_actions=12, action_timeout=None, viewport=PAGE))
    return d


def drags(n):
    """n drags across the page, alternately right and down (Maze Paint swipes)."""
    return [{"type": "drag", "x0": 640, "y0": 450, "x1": 760, "y1": 450} if i % 2 == 0 else
            {"type": "drag", "x0": 640, "y0": 450, "x1": 640, "y1": 570} for i in range(n)]


@pytest.mark.parametrize("protocol,api", [("native", "openai-chat"), ("native", "anthropic"),
                                          ("general_e2e", "openai-chat")])
def test_a_takeover_then_a_window_of_12_turns_and_4_images_with_a_summary_every_8(source, tmp_path, protocol, api):
    from longpuzzle.agents.models.agent import ModelAgent
    from longpuzzle.agents.models.config import ModelConfig

    acting = ReplayScript(gesture_script(protocol, drags(ACTIONS), PAGE), by="sequence")
    steps, summaries = [], []

    def script(api_, body):
        if "Write a short summary of the play so far" in last_user_text(api_, body):
            summaries.append(body)
            return {"text": SUMMARY}
        steps.append(body)
        return acting(api_, body)

    with ScriptedServer(script) as srv:
        cfg = ModelConfig(model="scripted-model", api=api, base_url=srv.url if api == "anthropic" else srv.url_v1,
                          api_key_env="", timeout=10.0, max_retries=0)
        agent = ModelAgent(protocol, cfg, folder=tmp_path / "c", memory="d1", language="en")
        r = continue_episode(source, STEP, agent, out=tmp_path / "c", takeover=True,
                             settings=Settings(max_actions=ACTIONS, action_timeout=None, viewport=PAGE))
        assert srv.refused == []                     # every request as the real API takes it
    assert r.actions == ACTIONS and replay_episode(tmp_path / "c").ok
    prefix_line = f"step {STEP}: "
    first = json.dumps(steps[0], ensure_ascii=False)
    # at takeover: the public prefix as text, the 4 pairs and the current screenshot
    assert d1.TAKEOVER_INTRO in first and prefix_line in first and "step 1: wait(0 ms)" in first
    assert images(steps[0])[0] == 5 and first.count("the action taken on it: swipe(") == 4
    # afterwards: at most 12 action turns and 4 screenshots in every request; the prefix text stays
    for body in steps[1:]:
        assert images(body)[0] <= IMAGES
        n_turns = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        assert n_turns <= TURNS
        assert prefix_line in json.dumps(body, ensure_ascii=False)
    assert max(images(b)[0] for b in steps[1:]) == IMAGES
    assert max(sum(1 for m in b["messages"] if m.get("role") == "assistant") for b in steps) == TURNS
    # a summary every 8 turns, kept in every later request (and not before)
    model_turns = len(steps)
    assert len(summaries) == (model_turns - 1) // EVERY >= 2
    after = [SUMMARY in json.dumps(b, ensure_ascii=False) for b in steps]
    assert after.index(True) == EVERY and all(after[EVERY:])
    log = [json.loads(x) for x in (tmp_path / "c" / "conversation.jsonl").read_text().splitlines()]
    assert [x["text"] for x in log if x.get("type") == "summary"] == [SUMMARY] * len(summaries)
    assert sum(1 for x in log if x.get("type") == "call" and x["kind"] == "summary") == len(summaries)


def test_the_full_memory_is_unchanged_and_shows_no_takeover(source, tmp_path):
    from longpuzzle.agents.models.agent import ModelAgent
    from longpuzzle.agents.models.config import ModelConfig

    acting = ReplayScript(gesture_script("native", drags(14), PAGE), by="sequence")
    seen = []

    def script(api_, body):
        seen.append(body)
        return acting(api_, body)

    with ScriptedServer(script) as srv:
        cfg = ModelConfig(model="scripted-model", api="openai-chat", base_url=srv.url_v1, api_key_env="",
                          timeout=10.0, max_retries=0)
        continue_episode(source, STEP, ModelAgent("native", cfg, language="en"), takeover=True,
                         settings=Settings(max_actions=14, action_timeout=None, viewport=PAGE))
    assert d1.TAKEOVER_INTRO not in json.dumps(seen)
    assert sum(1 for m in seen[-1]["messages"] if m.get("role") == "assistant") == len(seen) - 1 > TURNS


def test_an_unknown_memory_is_refused():
    from longpuzzle.agents.models.agent import ModelAgent
    from longpuzzle.agents.models.config import ModelConfig

    with pytest.raises(ValueError, match="memory 'd2'"):
        ModelAgent("native", ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=""), memory="d2")


def test_the_harness_option_sets_the_screen_the_charged_wait_and_the_model_memory(tmp_path):
    from click.testing import CliRunner

    from longpuzzle.agents.agent_options import AgentOptions, build_agent
    from longpuzzle.cli import cli

    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["eval", "--agent", "greedy", "--objective", "maze_paint/easy", "--harness", "d1",
                                 "--max-actions", "6", "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads(next(out.rglob("result.json")).read_text())
    assert res["rules"]["viewport"] == list(PAGE) and res["rules"]["action_latency"] == 2.0
    assert res["time"]["latency"] == pytest.approx(2.0 * res["actions"])        # 2 s charged per action
    assert "harness" in res["rules"]["preset"]
    choice = build_agent(AgentOptions(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="", harness="d1"))
    assert choice.agent_options["memory"] == "d1"
    assert "memory" not in build_agent(AgentOptions(model="m", base_url="http://127.0.0.1:9/v1",
                                                    api_key_env="")).agent_options
