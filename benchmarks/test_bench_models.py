"""Model agents: the harness's own cost per model step, and throughput with many workers.

overhead    one model step without the model: build the prompt (the conversation and its
            Chat Completions wire form as JSON, base64 screenshots included), encode the
            screenshot as PNG, parse the reply, dispatch, render, evaluate, record. The model
            answers in-process from the solver's gestures (no network); Maze Paint easy, a
            whole objective at 540 x 960. ops = model steps; the summary's rate is steps/s
            (1000 / rate = ms per step). Side by side: the solver agent's own episode.
workers     32 episodes at once (threads) against a scripted server on 127.0.0.1 that
            delays every reply by 1 s: model steps per second over the whole run.
beside the  the overhead per model step of each protocol (uitars: UI-TARS's smart_resize,
baseline    every frame resized with Pillow's bicubic filter), today's code beside
            IMAGES_BASELINE's (baseline.py), rounds alternating; the summary prints the ratios.
"""

import json
import shutil
import time

import pytest

from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.agents.models.accounting import CallUsage
from longpuzzle.agents.models.agent import ModelAgent
from longpuzzle.agents.models.clients import OpenAIChatClient, Reply, ToolCall
from longpuzzle.agents.models.config import ModelConfig
from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, solver_gestures
from longpuzzle.agents.runner import RunConfig, execute, start_run

from baseline import IMAGES_BASELINE, Baseline, side_by_side

OBJECTIVE = "maze_paint/easy"
_GESTURES = {}


def _gestures(objective):
    if objective not in _GESTURES:
        _GESTURES[objective] = solver_gestures(objective)
    return _GESTURES[objective]


class InProcessChat(OpenAIChatClient):
    """A Chat Completions client whose 'network' is a script: the request is built in its
    wire form exactly as it would be sent (``serialise``: also turned into JSON text, the
    SDK's transport work), and the reply comes from the script (no network, so no bounds)."""

    def __init__(self, cfg, replies, serialise=False):
        super().__init__(cfg)
        self.replies, self.k, self.serialise = replies, 0, serialise

    def sdk(self):
        return None

    def _post(self, sdk, kw):                 # the request as built for the SDK (_request)
        body = {**{k: v for k, v in kw.items() if k != "extra_body"}, **kw["extra_body"]}
        if self.serialise:
            json.dumps(body)
        r = self.replies[self.k] if self.k < len(self.replies) else {"text": "BENCHMARK COMPLETED"}
        self.k += 1
        calls = [ToolCall(f"call_{self.k}_{i}", c["name"], c["arguments"], json.dumps(c["arguments"]))
                 for i, c in enumerate(r.get("tool_calls") or [])]
        return Reply(text=r.get("text", ""), tool_calls=calls, usage=CallUsage(1000, 600, 40, 8))


@pytest.mark.parametrize("agent", ["solver", "general_e2e", "native", "qwen", "uitars", "native+json"])
def test_model_step_overhead(benchmark, tmp_path, agent):
    """native+json: the native protocol with the request's JSON text made too (the SDK's
    transport work, which grows with the screenshots a full history re-sends)."""
    serialise = agent.endswith("+json")
    agent = agent.split("+")[0]
    game, diff = OBJECTIVE.split("/")
    st = Settings(action_timeout=None)
    cfg = ModelConfig(model="in-process")
    n = [0]

    def make():
        if agent == "solver":
            return SolverAgent()
        return ModelAgent(agent, cfg, client=InProcessChat(cfg, gesture_script(agent, _gestures(OBJECTIVE)), serialise),
                          game=game, difficulty=diff, folder=tmp_path / f"ep{n[0]}")

    def episode():
        n[0] += 1
        a = make()
        r = run_objective(a, game, diff, settings=st, folder=tmp_path / f"ep{n[0]}")
        if agent != "solver":
            a.close()
        assert r.outcome.success
        return r
    r = episode()                              # warm: kernels, plans, caches
    benchmark.group = "models"
    benchmark.extra_info.update(ops=r.actions, unit="model steps")
    benchmark.pedantic(episode, rounds=3, iterations=1)


@pytest.fixture(scope="module")
def images_baseline():
    b = Baseline(IMAGES_BASELINE)
    yield b
    b.close()


@pytest.mark.parametrize("agent", ["general_e2e", "native", "qwen", "uitars"])
def test_model_step_overhead_beside_the_baseline(benchmark, tmp_path, images_baseline, agent):
    game, diff = OBJECTIVE.split("/")
    st = Settings(action_timeout=None)
    cfg = ModelConfig(model="in-process")
    n = [0]

    def new():
        n[0] += 1
        folder = tmp_path / f"ep{n[0]}"
        a = ModelAgent(agent, cfg, client=InProcessChat(cfg, gesture_script(agent, _gestures(OBJECTIVE))),
                       game=game, difficulty=diff, folder=folder)
        r = run_objective(a, game, diff, settings=st, folder=folder)
        a.close()
        assert r.outcome.success
        shutil.rmtree(folder)
        return r

    def old():
        r = images_baseline(op="model_episode", agent=agent, objective=OBJECTIVE, folder=str(tmp_path / "old"),
                            remove=True)
        assert r["success"]
        return r
    warm, old_warm = new(), old()                # kernels, plans, caches on both sides
    benchmark.group = "models"
    side_by_side(benchmark, new, old, 5, warm.actions, old_warm["actions"], unit="model steps",
                 pair=f"{agent} overhead per step")


def test_32_workers_against_a_1s_server(benchmark, tmp_path):
    objective = "nut_and_bolt/easy"
    replies = gesture_script("native", _gestures(objective))
    with ScriptedServer(ReplayScript(replies), delay=1.0) as srv:
        cfg = ModelConfig(model="scripted", base_url=srv.url_v1, api_key_env="", timeout=30.0)
        n = [0]
        steps = [0]

        def run():
            n[0] += 1
            out = tmp_path / f"run{n[0]}"
            rc = RunConfig(agent="native", objectives=[objective], episodes=32, model=cfg.public(),
                           settings=Settings(action_timeout=None, max_actions=12).as_dict())
            start_run(out, rc)
            t = time.perf_counter()
            s = execute(out, rc, workers=32, quiet=True)
            dt = time.perf_counter() - t
            steps[0] = s["usage"]["calls"]
            benchmark.extra_info["steps_per_second"] = round(s["usage"]["calls"] / dt, 2)
            assert srv.max_in_flight == 32
        run()
        benchmark.group = "models"
        benchmark.extra_info.update(ops=steps[0], unit="model steps (1 s each), 32 workers")
        benchmark.pedantic(run, rounds=2, iterations=1)


class _PlainTransportChat(OpenAIChatClient):
    """The Chat client on the SDK's own transport: no deadline, no reply cap (the cost of
    the bounds, side by side)."""

    def _make_sdk(self, key):
        import openai
        return openai.OpenAI(api_key=key, base_url=self.cfg.base_url, timeout=self.cfg.timeout, max_retries=0)


@pytest.mark.parametrize("transport", ["bounded", "plain", "bounded+stream"])
def test_request_through_the_bounded_transport(benchmark, transport):
    """One native request (system prompt, tools, a screenshot) to the scripted server on
    127.0.0.1: the clients' transport (a total deadline, a reply cap, counted bytes; also
    streamed) beside the SDK's own. ops = requests."""
    from longpuzzle.agents.media.images import encode_png
    from longpuzzle.agents.models.protocols import PROTOCOLS, Context
    import numpy as np

    p = PROTOCOLS["native"](Context("Play.", "maze_paint", "easy", (540, 960), None))
    png = encode_png(np.random.default_rng(0).integers(0, 255, (960, 540, 3), np.uint8))
    conv = [{"role": "system", "text": p.system_prompt()},
            {"role": "user", "parts": [{"text": "Play."}, {"image": png, "ref": {"frame": 0}}]}]
    call = {"tool_calls": [{"name": "gui", "arguments": {"action": "wait", "ms": 0}}]}
    with ScriptedServer(lambda api, body: call) as srv:
        cfg = ModelConfig(model="scripted", base_url=srv.url_v1, api_key_env="", stream=transport.endswith("stream"))
        c = (OpenAIChatClient if transport.startswith("bounded") else _PlainTransportChat)(cfg)
        n = 20

        def run():
            for _ in range(n):
                assert c.complete(conv, p.tools()).tool_calls
        run()
        benchmark.group = "model requests"
        benchmark.extra_info.update(ops=n, unit="requests")
        benchmark.pedantic(run, rounds=5, iterations=1)
