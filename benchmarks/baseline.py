"""Yesterday's code beside today's, in the same run: the pixel-path benchmarks time the same
workload with the code of commit BASELINE (main before the pixel path was rebuilt: PNG per
frame, SHA-1 hashes, whole-frame level screens), taken from this repository's own history
with ``git archive`` and run in a worker process of its own (its own imports, its own
compiled-kernel cache). A round is one request to the worker; the request's round trip
(a few hundred microseconds) is the only thing the two sides do differently.

The dataset benchmarks compare with DATASET_BASELINE, main before the dataset writer ran in
the episode's thread (a writer thread, every band of a changed box hashed, and so on; the
commit before that, 4981de7, was main before the PNG writer used the renderer's deltas).

The at-scale dataset jobs (every objective, ten episodes) compare with SCALE_BASELINE,
main before Bolt Unscrew kept its steps and the changes between its frames at rest, Nut and
Bolt put its columns from plans and Color Connect found the colours a move changed at once.

Writing a job's rows to a Parquet shard (the shard file alone) compares with
SHARD_FILE_BASELINE, main before pyarrow wrote that file itself (through a Python file object
that hashed the bytes as they went, each write copied into a bytes object first).

Dataset jobs over positions new to them (each round its own seeds) compare with
NEW_POSITIONS_BASELINE, main before the solver agent mended a detour no move undoes
exactly with the nearest undo.

The pixel-env benchmarks compare with PIXEL_ENVS_BASELINE, main before pixel envs stepped in
turn on one renderer hashed their frames from their own deltas.

Replaying a run folder compares with REPLAY_BASELINE, main before replay recomputed the
header, every record field, the end, result.json and summary.json (issue 35).

The images benchmarks (model screenshots, VISTA's inspect) compare with IMAGES_BASELINE,
main before they were sped up (Pillow's resize for every UI-TARS frame, every inspect view
cropped, zoomed and encoded); ``tree(commit)`` also serves an old MCP server.

The sandbox benchmarks (starting a sandboxed process, an isolated agent's call, a run_python
cell) compare with SANDBOX_BASELINE, main before its network and mount namespaces, its own
user, the wider seccomp filter and the pause between calls.

Nothing here is importable by the package: the old code exists only in a cache folder."""

from __future__ import annotations

import inspect
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

BASELINE = "48f8955"            # "Harness: unscored episodes", before the pixel path work
IMAGES_BASELINE = "4989532"     # "Isolation: an InfrastructureError raised by an isolated agent ...": main before the images work
DATASET_BASELINE = "b37ad4e"    # "README: ObjectiveEpisode's driver API ...": main before the dataset writer moved into the episode's thread
SCALE_BASELINE = "6eb83c4"      # "Review: the at-scale benchmark takes the catalogue's objective ids": main before the steps kept
SHARD_FILE_BASELINE = "ba17c91"  # "Review: the long-shard test ...": main before pyarrow wrote the Parquet shard file natively
NEW_POSITIONS_BASELINE = "762e808"  # "Review: the shard file benchmark's two sides share write_shard ...": main before the nearest undo mended detours
REPLAY_BASELINE = "61ad522"      # "VISTA: a test reads the README tools section's figures ...": main before replay recomputed everything (issue 35)
PIXEL_ENVS_BASELINE = "531ec2e"  # "Review: Frame._delta's one-box case ...": main before pixel envs hashed from their own frames' deltas
ENV_STEPS_BASELINE = "842c592"  # "README: leaderboard coverage and partial H50": main before the rules env's inlined step took masks off too and the vector env's step was trimmed (issue 41)
SANDBOX_BASELINE = "7092efb"    # "Scoring: a refused action is the agent's own failure ...": main before the sandbox had no network, its own view, user and pause
REPO = Path(__file__).resolve().parents[1]

SERVER = r'''
import json, os, shutil, sys, time
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer
suites_of = {}
state = {}
IN_PROCESS = None


def in_process_chat():
    """A Chat Completions client answered from a script in-process (as benchmarks/
    test_bench_models.py's InProcessChat: the request built in its wire form)."""
    global IN_PROCESS
    if IN_PROCESS is None:
        from longpuzzle.agents.models.accounting import CallUsage
        from longpuzzle.agents.models.clients import OpenAIChatClient, Reply, ToolCall

        class InProcessChat(OpenAIChatClient):
            def __init__(self, cfg, replies):
                super().__init__(cfg)
                self.replies, self.k = replies, 0

            def sdk(self):
                return None

            def _send(self, sdk, system, messages, tools, max_tokens):
                body = {"model": self.cfg.model, "messages": self.wire_messages(system, messages)}
                if tools:
                    body["tools"] = [{"type": "function", "function": t} for t in tools]
                r = self.replies[self.k] if self.k < len(self.replies) else {"text": "BENCHMARK COMPLETED"}
                self.k += 1
                calls = [ToolCall(f"call_{self.k}_{i}", c["name"], c["arguments"], json.dumps(c["arguments"]))
                         for i, c in enumerate(r.get("tool_calls") or [])]
                return Reply(text=r.get("text", ""), tool_calls=calls, usage=CallUsage(1000, 600, 40, 8))
        IN_PROCESS = InProcessChat
    return IN_PROCESS


class Keep:
    """A dataset writer's stand-in: keeps the steps it is given (or nothing), to replay them
    into a real writer (``add`` takes the renderer's delta where the collector gives one)."""

    def __init__(self, keep=True):
        self.keep, self.steps, self.ends = keep, [], []

    def add(self, meta, frame, *delta):
        if self.keep:
            self.steps.append((meta, frame, delta))

    def end_episode(self, frame, h=None):
        if self.keep:
            self.ends.append((len(self.steps), frame, h))

    def replay(self, w):
        ends = {n: (f, h) for n, f, h in self.ends}
        for i, (meta, frame, delta) in enumerate(self.steps):
            w.add(meta, frame, *delta)
            if i + 1 in ends:
                w.end_episode(*ends[i + 1])


print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    cpu0 = time.process_time()
    if req["op"] == "episode":
        game, diff = req["objective"].split("/")
        st = Settings(action_timeout=None, save_frames=req["save_frames"])
        r = run_objective(SolverAgent(), game, diff, settings=st, folder=req["folder"])
        if req.get("remove"):
            shutil.rmtree(req["folder"], ignore_errors=True)
        out = {"actions": r.actions, "success": bool(r.outcome.success)}
    elif req["op"] == "level_screens":
        if req["objective"] not in suites_of:
            suites_of[req["objective"]] = [Suite(l) for l in builtin_catalog().objective(req["objective"]).level_ids]
        suites = suites_of[req["objective"]]
        for s in suites:
            Renderer().render(s)           # the first frame of each level on a fresh renderer
        out = {"levels": len(suites)}
    elif req["op"] == "model_episode":            # a model agent answered in-process, model excluded
        from longpuzzle.agents.models.agent import ModelAgent
        from longpuzzle.agents.models.config import ModelConfig
        from longpuzzle.agents.testing.endpoints import gesture_script, solver_gestures
        game, diff = req["objective"].split("/")
        key = ("gestures", req["objective"])
        if key not in state:
            state[key] = solver_gestures(req["objective"])
        cfg = ModelConfig(model="in-process")
        chat = in_process_chat()(cfg, gesture_script(req["agent"], state[key]))
        a = ModelAgent(req["agent"], cfg, client=chat, game=game, difficulty=diff, folder=req["folder"])
        r = run_objective(a, game, diff, settings=Settings(action_timeout=None), folder=req["folder"])
        a.close()
        if req.get("remove"):
            shutil.rmtree(req["folder"], ignore_errors=True)
        out = {"actions": r.actions, "success": bool(r.outcome.success)}
    elif req["op"] == "vista":                    # a VISTA controller after the given plays
        from longpuzzle.agents.vista import Controller
        game, diff = req["objective"].split("/")
        c = Controller(game, diff, setting="vista", settings=Settings(budget=100000), folder=req["folder"])
        for a in req["actions"]:
            r = c.call("play", {"action": a})
            assert not r.error, r.text
        state["vista", req.get("name", "")] = c
        out = {"turns": c.turn}
    elif req["op"] == "inspect":                  # inspect on it, nothing made before when "clear"
        c = state["vista", req.get("name", "")]
        if req.get("clear"):
            c._pngs.clear()
        r = c.call("inspect", {"views": req["views"]})
        out = {"images": len(r.images), "bytes": r.bytes, "error": r.text if r.error else ""}
    elif req["op"] == "dataset_run":              # dataset episodes played, written by one writer or not
        import tempfile
        from longpuzzle.agents.datasets.build import DatasetConfig
        from longpuzzle.agents.datasets.collect import play_episode
        from longpuzzle.agents.datasets.writer import StepWriter
        plan = DatasetConfig(objectives=[req["objective"]], episodes=req["episodes"], detours=req["detours"]).plan()
        d = tempfile.mkdtemp()
        w = StepWriter(d, req["format"], 0) if req["write"] else Keep(keep=False)
        rows = sum(play_episode(spec, {"budget": None}, w)["rows"] for spec in plan)
        if req["write"]:
            w.close()
        shutil.rmtree(d)
        out = {"rows": rows}
    elif req["op"] == "dataset_job":              # one dataset job as `longpuzzle dataset` runs it
        import tempfile
        from longpuzzle.agents.datasets.build import DatasetConfig, run_job
        cfg = DatasetConfig(objectives=[req["objective"]], episodes=req["episodes"], detours=req["detours"],
                            format=req["format"], seed=req.get("seed", 0))
        d = tempfile.mkdtemp()
        out = {"rows": run_job(cfg.as_dict(), 0, cfg.plan(), d)["rows"]}
        shutil.rmtree(d)
    elif req["op"] == "dataset_writer":           # the writer alone over captured steps
        import tempfile
        from longpuzzle.agents.datasets.build import DatasetConfig
        from longpuzzle.agents.datasets.collect import play_episode
        from longpuzzle.agents.datasets.writer import StepWriter
        key = ("captured", req["objective"], req["episodes"], req["detours"])
        if key not in state:
            state[key] = c = Keep()
            for spec in DatasetConfig(objectives=[req["objective"]], episodes=req["episodes"],
                                      detours=req["detours"]).plan():
                play_episode(spec, {"budget": None}, c)
            cpu0 = time.process_time()
        c = state[key]
        d = tempfile.mkdtemp()
        w = StepWriter(d, req["format"], 0, threaded=False)
        c.replay(w)
        w.close()
        shutil.rmtree(d)
        out = {"rows": len(c.steps)}
    elif req["op"] == "dataset_shard":            # a job's Parquet rows written to one shard file
        import tempfile
        key = ("shard rows", req["objective"], req["episodes"], req["detours"])
        if key not in state:
            state[key] = shard_rows(req["objective"], req["episodes"], req["detours"])
            cpu0 = time.process_time()
        d = tempfile.mkdtemp()
        out = {"rows": write_shard(state[key], os.path.join(d, "s.parquet"))["rows"]}
        shutil.rmtree(d)
    elif req["op"] == "env_steps":                # rules env steps: gym.make (masks on or off) or make_vec N = 1
        key = ("env steps", req["kind"], req["mask"])
        if key not in state:
            state[key] = env_stepper(req["kind"], req["mask"])
        out = {"steps": state[key](req["steps"])}
    elif req["op"] == "pixel_lockstep":           # pixel envs stepped in turn on one renderer
        import random
        import longpuzzle.agents.envs as lpe
        lids = builtin_catalog().level_ids(req["game"])
        envs = [lpe.PixelEnv(lids[i % 3], scale=1.0) for i in range(req["envs"])]
        for e in envs:
            e.reset(seed=0)
        rng, steps = random.Random(1), 0
        for _ in range(req["rounds"]):
            for e in envs:
                if e.suite.complete:
                    e.reset(seed=0)
                    continue
                e.step(e.suite.gesture_for(int(rng.choice(list(e.suite.session.legal_moves())))))
                steps += 1
        out = {"steps": steps}
    elif req["op"] == "replay_run":               # every episode of a run folder replayed, as `replay RUN_DIR` did
        from longpuzzle.agents.harness import replay_episode
        from longpuzzle.agents.report.data import episode_folders
        reps = [replay_episode(f) for f in episode_folders(req["folder"])]
        out = {"episodes": len(reps), "ok": all(r.ok for r in reps), "actions": sum(r.steps for r in reps)}
    elif req["op"] == "sandbox_start":            # sandboxed processes started, called once, closed
        from longpuzzle.agents.sandbox import Sandbox
        for _ in range(req["n"]):
            sb = Sandbox("def handle(call, arrays, ctx):\n    return {}\n")
            sb.start()
            sb.call({}, timeout=60)
            sb.close()
        out = {"n": req["n"]}
    elif req["op"] == "agent_calls":              # act() of an isolated agent file, a full frame each
        from longpuzzle.agents.base import Feedback, Observation, make_frame
        from longpuzzle.agents.harness import AgentFile
        from longpuzzle.render.frame import render
        key = ("agent", req["file"])
        if key not in state:
            caller = AgentFile(req["file"]).caller(30.0)
            caller.reset("go", {"frame": (540, 960)})
            obs = Observation(make_frame(render("maze_paint/easy/1")), Feedback("screen_changed", True, "", 1), 1, 60.0)
            state[key] = (caller, obs)
            cpu0 = time.process_time()
        caller, obs = state[key]
        for _ in range(req["n"]):
            caller.act(obs)
        out = {"n": req["n"]}
    elif req["op"] == "code_calls":               # run_python cells in one persistent process
        from longpuzzle.agents.vista import Controller
        if "code" not in state:
            state["code"] = c = Controller("maze_paint", "easy", setting="code", settings=Settings(budget=100000),
                                           folder=req["folder"])
            c.call("play", {"action": {"type": "wait", "ms": 0}})
            assert not c.call("run_python", {"code": "x = 0"}).error
            cpu0 = time.process_time()
        c = state["code"]
        for _ in range(req["n"]):
            r = c.call("run_python", {"code": "x += 1"})
        out = {"n": req["n"], "error": r.text if r.error else ""}
    else:
        out = {"error": "unknown op"}
    out["cpu"] = time.process_time() - cpu0         # every thread of the worker
    print(json.dumps(out), flush=True)
'''


def tree(commit: str = BASELINE) -> Path:
    """A folder holding the package as it was at ``commit`` (extracted once into the cache):
    PYTHONPATH=tree(commit) imports that code as ``longpuzzle``."""
    cache = Path(os.environ.get("LONGPUZZLE_CACHE_DIR") or Path.home() / ".cache" / "longpuzzle")
    root = cache / f"bench-baseline-{commit}"
    pkg = root / "longpuzzle"
    if not (pkg / "__init__.py").is_file():
        try:
            data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit],
                                  check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            pytest.skip(f"baseline {commit} not available from git: {e}")
        pkg.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            t.extractall(pkg, filter="data")
    return root


def env_for(root: Path) -> dict:
    """The environment that runs the code under ``root`` (tree()) with its own caches."""
    return dict(os.environ, PYTHONPATH=str(root), LONGPUZZLE_CACHE_DIR=str(root / "cache"), SDL_VIDEODRIVER="dummy")


def shard_rows(objective, episodes, detours):
    """The rows a dataset job adds to its Parquet shards, as they were added (the writer's
    own row dicts, each row's PNG the same bytes object as in the job). The baseline's
    worker runs this function's source too (WORKER_FUNCTIONS), its own code as ``longpuzzle``."""
    import shutil
    import tempfile
    from longpuzzle.agents.datasets import shards
    from longpuzzle.agents.datasets.build import DatasetConfig, run_job
    rows, add = [], shards.ParquetShard.add

    def kept(self, row):
        rows.append(dict(row))
        add(self, row)
    shards.ParquetShard.add = kept
    try:
        cfg = DatasetConfig(objectives=[objective], episodes=episodes, detours=detours)
        d = tempfile.mkdtemp()
        run_job(cfg.as_dict(), 0, cfg.plan(), d)
        shutil.rmtree(d)
    finally:
        shards.ParquetShard.add = add
    return rows


def write_shard(rows, path):
    """``rows`` (shard_rows') written to a Parquet shard at ``path``; its manifest entry."""
    from longpuzzle.agents.datasets.shards import ParquetShard
    sh = ParquetShard(path)
    for r in rows:
        sh.add(r)
    return sh.close()


# what the worker defines before SERVER runs, as this module does: both sides capture and
# write rows alike
def env_stepper(kind: str, mask: bool):
    """A function running N steps of a Maze Paint rules env (the same random actions each call):
    ``kind`` "make" (gymnasium.make, masks on or off) or "vec1" (gymnasium.make_vec with one
    env). Both sides of a benchmark use it (WORKER_FUNCTIONS)."""
    import gymnasium as gym
    import numpy as np

    import longpuzzle.agents.envs  # noqa: F401  (registers the ids, in old code too)
    lid = "maze_paint/hard/10"
    if kind == "vec1":
        env = gym.make_vec("longpuzzle/MazePaint-v0", 1, level=lid, action_mask=mask, max_episode_steps=200)
    else:
        env = gym.make("longpuzzle/MazePaint-v0", level=lid, action_mask=mask, max_episode_steps=200)
    env.reset(seed=0)
    acts = np.random.default_rng(2).integers(0, 4, (100_000, 1))
    flat = acts[:, 0].tolist()

    def run(n):
        if kind == "vec1":
            for i in range(n):
                env.step(acts[i])
        else:
            for a in flat[:n]:
                _, _, term, trunc, _ = env.step(a)
                if term or trunc:
                    env.reset()
        return n
    return run


WORKER_FUNCTIONS = (shard_rows, write_shard, env_stepper)


class Baseline:
    """A worker process running the code of ``commit`` (BASELINE unless given)."""

    def __init__(self, commit: str = BASELINE):
        root = tree(commit)
        env = env_for(root)
        code = "".join(inspect.getsource(f) + "\n\n" for f in WORKER_FUNCTIONS) + SERVER
        self.p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=env, text=True, cwd=str(root))
        if not json.loads(self.p.stdout.readline()).get("ready"):
            raise RuntimeError("baseline worker did not start")

    def __call__(self, **req) -> dict:
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("baseline worker died")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def side_by_side(benchmark, new, old, rounds, ops, old_ops, **info):
    """Time ``new`` with pytest-benchmark and ``old`` (the baseline's side; it may return a
    dict with its worker's CPU seconds as "cpu") in the set-up of each of its rounds: the two
    alternate, so both sample the same load of a shared machine. CPU seconds of this process
    (every thread) are recorded for ``new``, the worker's for ``old`` when it reports them."""
    old_times, old_cpu, new_cpu = [], [], []

    def setup():
        t = time.perf_counter()
        r = old()
        old_times.append(time.perf_counter() - t)
        if isinstance(r, dict) and "cpu" in r:
            old_cpu.append(r["cpu"])

    def timed():
        c = time.process_time()
        new()
        new_cpu.append(time.process_time() - c)
    benchmark.extra_info.update(ops=ops, **info)
    benchmark.pedantic(timed, setup=setup, rounds=rounds, iterations=1)
    benchmark.extra_info.update(baseline_ops=old_ops, baseline_min=min(old_times),
                                baseline_median=statistics.median(old_times), cpu_min=min(new_cpu))
    if old_cpu:
        benchmark.extra_info["baseline_cpu_min"] = min(old_cpu)
