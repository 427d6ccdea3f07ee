"""Hostile agents, randomised: agent files whose every step is drawn from a seeded mix of
playing (clicks, drags, swipes, waits anywhere on the page), malformed actions (overflowing
numbers, unknown types, deep or huge batches, long strings, wrong types), noise (printing
floods, short sleeps) and, at a step chosen per episode, one fatal act (exiting, crashing,
hanging, spinning, killing itself, exhausting memory, flooding the channel, answering with
something that is not an action, claiming an infrastructure failure).

Each episode runs in the agent's sandboxed process under the objective protocol with the
settings drawn too (invalid-action policy, action timeout, budget), and is checked:

- the episode ends, its result.json is written and says what run_objective returned;
- the end is what the plan makes it: ``agent_error`` naming the fatal act when the episode
  reached it, else an end of the protocol (``invalid_action_limit`` at the first malformed
  action under the watchdog policy or after three refusals in a row under dispatch_failed,
  scored either way; the budget, the action cap, the agent's final answer); the random play
  never wins;
- ``replay`` recomputes the result from the recorded actions and agrees with it;
- no sandboxed process is left behind.

    report = run_checks(12, seed=0)     # {"checked", "ends": {end: count}, "failures": [...]}
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from longpuzzle.engine.catalog import builtin_catalog

# (fatal act, words its agent_error message must contain)
FATAL = {
    "exit": "SystemExit",
    "_exit": "status 7",
    "raise": "KeyError",
    "hang": "timeout",
    "spin": "cpu_limit",
    "kill_self": "SIGKILL",
    "memory": "MemoryError",
    "flood": "garbage",
    "not_an_action": "garbage",
    "infra": "provider down",
}

AGENT_SOURCE = r'''
import os, random, sys, time
from longpuzzle.agents.base import BaseAgent, FinalAnswer, InfrastructureError


class Hostile(BaseAgent):
    name = "hostile"

    def __init__(self, seed=0, fatal_at=-1, fatal="", final_at=-1, p_bad=0.1):
        self.rng = random.Random(seed)
        self.fatal_at, self.fatal, self.final_at, self.p_bad = fatal_at, fatal, final_at, p_bad

    def _play(self, w, h):
        r = self.rng
        k = r.randrange(5)
        if k == 0:
            return {"type": "click", "x": r.randrange(w), "y": r.randrange(h)}
        if k == 1:
            return {"type": "drag", "x0": r.randrange(w), "y0": r.randrange(h), "x1": r.randrange(w),
                    "y1": r.randrange(h), "steps": r.randrange(1, 6), "ms": r.randrange(0, 300)}
        if k == 2:
            return {"type": "wait", "ms": r.randrange(0, 2000)}
        if k == 3:
            return {"type": r.choice(["doubleclick", "double_click"]), "x": r.randrange(w), "y": r.randrange(h)}
        return {"type": "batch", "actions": [{"type": "click", "x": r.randrange(w), "y": r.randrange(h)}
                                             for _ in range(r.randrange(1, 4))]}

    def _malformed(self, w, h):
        r = self.rng
        b = {"type": "wait", "ms": 1}
        for _ in range(r.randrange(2, 6)):
            b = {"type": "batch", "actions": [b] * r.randrange(2, 300)}
        return r.choice([
            {"type": "click", "x": 10 ** r.randrange(300, 500), "y": 5},
            {"type": "click", "x": float("nan"), "y": 3},
            {"type": "click", "x": -r.randrange(1, 10 ** 6), "y": r.randrange(h)},
            {"type": "x" * r.randrange(1, 5_000_000)},
            {"type": "wait", "ms": r.choice([-1, 10 ** 5000, "soon", None, [1]])},
            {"type": "typetext", "text": "a" * r.randrange(201, 100_000)},
            {"type": "drag", "waypoints": [[1, 2]] * r.randrange(101, 10_000)},
            {"type": "batch", "actions": "not a list"},
            {"type": "press_key"},
            {"x": 1, "y": 2},
            {},
            b,
        ])

    def act(self, obs):
        r = self.rng
        if obs.frame is None and obs.step == 0:
            return {"type": "wait", "ms": 0}
        h, w = (obs.frame.shape[:2] if obs.frame is not None else (960, 540))
        if obs.step == self.fatal_at:
            m = self.fatal
            if m == "exit":
                sys.exit(0)
            if m == "_exit":
                os._exit(7)
            if m == "raise":
                raise KeyError("no such thing")
            if m == "hang":
                time.sleep(120)
            if m == "spin":
                while True:
                    pass
            if m == "kill_self":
                os.kill(os.getpid(), 9)
            if m == "memory":
                return {"x": bytearray(1 << 36)}
            if m == "flood":
                for f in os.listdir("/proc/self/fd"):
                    if int(f) > 2:
                        try:
                            os.write(int(f), bytes(r.randrange(256) for _ in range(64)) * 100)
                        except OSError:
                            pass
                time.sleep(30)
            if m == "not_an_action":
                return r.choice([[1, 2], None, "click", 42, object()])
            if m == "infra":
                raise InfrastructureError("provider down")
        if obs.step == self.final_at:
            return FinalAnswer("done")
        x = r.random()
        if x < 0.05:
            print("noise " * r.randrange(1, 200_000), file=r.choice([sys.stdout, sys.stderr]))
        elif x < 0.08:
            time.sleep(r.random() * 0.02)
        if r.random() < self.p_bad:
            return self._malformed(w, h)
        return self._play(w, h)
'''


def episode_plan(seed: int, i: int) -> dict:
    """The i-th episode of a run: objective, settings and the agent's plan, from the seed alone."""

    rng = random.Random(f"hostile:{seed}:{i}")
    cat = builtin_catalog()
    obj = rng.choice(cat.objectives())
    fatal_at = rng.randrange(1, 25) if rng.random() < 0.6 else -1
    return {
        "objective": obj.id,
        "policy": rng.choice(["watchdog", "dispatch_failed"]),
        "max_actions": rng.randrange(5, 40),
        "viewport": rng.choice([None, (1280, 900)]),
        "agent": {"seed": rng.randrange(2 ** 31), "fatal_at": fatal_at,
                  "fatal": rng.choice(sorted(FATAL)) if fatal_at > 0 else "",
                  "final_at": rng.randrange(2, 40) if rng.random() < 0.3 else -1,
                  "p_bad": rng.choice([0.0, 0.05, 0.3])},
    }


def check_episode(plan: dict, folder: Path, agent_file: Path) -> list[str]:
    """Run one planned episode into ``folder``; the list of what was wrong (empty: all held)."""
    from longpuzzle.agents.registry import load_agent
    from longpuzzle.agents.harness import Settings, replay_episode, run_objective
    from longpuzzle.agents.metrics import UNSCORED_ENDS
    from longpuzzle.agents.sandbox import Limits

    a = plan["agent"]
    spin = a["fatal"] == "spin"
    agent = load_agent(str(agent_file), limits=Limits(memory_mb=1024, call_cpu_seconds=0.3 if spin else None), **a)
    hang = a["fatal"] == "hang"
    st = Settings(budget=3600, max_actions=plan["max_actions"], action_timeout=0.5 if hang else 20,
                  invalid_action_policy=plan["policy"], viewport=plan["viewport"])
    game, diff = plan["objective"].split("/")
    wrong = []
    t0 = time.monotonic()
    r = run_objective(agent, game, diff, settings=st, folder=folder)
    if time.monotonic() - t0 > 60:
        wrong.append(f"took {time.monotonic() - t0:.0f} s")
    res = json.loads((folder / "result.json").read_text())
    if (res["end"], res["success"]) != (r.end, r.outcome.success):
        wrong.append(f"result.json says {res['end']}/{res['success']}, run_objective {r.end}/{r.outcome.success}")
    if res["scored"] != (r.end not in UNSCORED_ENDS):
        wrong.append(f"scored {res['scored']} for end {r.end}")
    if r.outcome.success:
        wrong.append("a hostile random agent was scored a success")
    steps = r.actions
    if r.end == "agent_error":
        if not a["fatal"] or a["fatal_at"] > steps:
            wrong.append(f"agent_error with no fatal act reached: {r.error}")
        elif FATAL[a["fatal"]] not in r.error:
            wrong.append(f"{a['fatal']} ended with {r.error!r}")
    elif a["fatal"] and a["fatal_at"] < steps:
        wrong.append(f"{a['fatal']} at step {a['fatal_at']} went unnoticed: end {r.end} after {steps} actions")
    elif r.end not in ("invalid_action_limit", "max_actions", "final_answer", "budget"):
        wrong.append(f"unexpected end {r.end}: {r.error}")
    if r.end == "invalid_action_limit":
        want = 1 if plan["policy"] == "watchdog" else 3          # refused actions in a row that end it
        if r.invalid < want:
            wrong.append(f"invalid_action_limit after {r.invalid} refused actions under {plan['policy']}")
    if r.end == "final_answer" and a["final_at"] < 0:
        wrong.append("a final answer the agent never gave")
    rep = replay_episode(folder)
    if not (rep.ok and rep.complete):
        wrong.append(f"replay: {rep}")
    from longpuzzle.agents.sandbox import live_sandboxes

    left = live_sandboxes()
    if left:
        wrong.append(f"sandboxed processes left: {left}")
    return wrong


def run_checks(n: int, seed: int = 0, folder: Path | None = None) -> dict:
    """Run ``n`` planned hostile episodes (in ``folder``, else a temporary one) and check each.
    Returns {"checked", "ends": {end: count}, "failures": [{"episode", "plan", "wrong"}]}."""
    with tempfile.TemporaryDirectory(prefix="lp-hostile-") as tmp:
        root = Path(folder) if folder is not None else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        agent_file = root / "hostile_agent.py"
        agent_file.write_text(AGENT_SOURCE)
        ends: dict[str, int] = {}
        failures = []
        for i in range(n):
            plan = episode_plan(seed, i)
            ep = root / f"episode_{i:03d}"
            try:
                wrong = check_episode(plan, ep, agent_file)
            except Exception as e:  # noqa: BLE001 - anything escaping the harness is the finding
                wrong = [f"{type(e).__name__}: {e}"]
            try:
                end = json.loads((ep / "result.json").read_text())["end"]
            except (OSError, ValueError, KeyError):
                end = "no result"
            ends[end] = ends.get(end, 0) + 1
            if wrong:
                failures.append({"episode": i, "plan": plan, "wrong": wrong})
        return {"checked": n, "ends": ends, "failures": failures}
