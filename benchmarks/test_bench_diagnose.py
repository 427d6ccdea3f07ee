"""What the diagnostics lab costs per continuation, against a plain eval step (issue 39).

A continuation of ``diagnose takeover`` pays, before its agent acts at all:

restore    the exact app at the checkpoint (restore_step: the episode's recorded snapshot
           at that step, rebuilt)
prefix     the takeover context (harness takeover_at: the public action prefix as text, the
           4 preceding screenshot-action pairs decoded from the stored frames, the current
           screenshot) and the public prefix the paper-like scripted agents replay
harness    one whole continuation as the study runs it (Checkpoint.continue_with: restore,
           the evaluator's knowledge replayed from the private records, the takeover
           context, the episode folder, then the agent's actions), per action

against a plain eval step: the same scripted agent's actions in an ordinary objective episode
(run_objective from the home screen), per action. The summary line of each prints the cost in
plain eval steps (the ratio), which is what a study of N continuations adds to N x its actions.
Run: python -m pytest benchmarks/test_bench_diagnose.py --benchmark-enable
"""

import shutil
import time

import pytest

from longpuzzle.agents.diagnose import takeover as T
from longpuzzle.agents.diagnose.checkpoint_sources import build
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.agents.harness.replay import takeover_at
from longpuzzle.agents.paper_agents import PaperFillerAgent

ACTIONS = 40             # per continuation and per plain episode
NOTE = T.condition_text("dead_end", "B", "bolt_unscrew")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("ck") / "d"
    cps, _ = build(out, levels=["bolt_unscrew/hard/1"], policy="greedy", count=1, preset="fast")
    return cps[0]


def _plain_step_seconds(tmp_path, rounds: int = 3) -> float:
    """The fastest round's seconds per action of a plain objective episode (same agent, same
    settings, same number of actions)."""
    best = float("inf")
    for i in range(rounds):
        t0 = time.perf_counter()
        r = run_objective(PaperFillerAgent(), "bolt_unscrew", "hard", settings=Settings(max_actions=ACTIONS,
                          action_timeout=None), folder=tmp_path / f"plain{i}")
        best = min(best, (time.perf_counter() - t0) / r.actions)
        shutil.rmtree(tmp_path / f"plain{i}")
    return best


def test_plain_eval_step(benchmark, tmp_path):
    n = [0]

    def one():
        n[0] += 1
        r = run_objective(PaperFillerAgent(), "bolt_unscrew", "hard",
                          settings=Settings(max_actions=ACTIONS, action_timeout=None), folder=tmp_path / f"e{n[0]}")
        assert r.actions == ACTIONS
    benchmark.group = "diagnose"
    benchmark.extra_info.update(unit="eval steps", ops=ACTIONS)
    benchmark.pedantic(one, rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("part", ["restore", "prefix"])
def test_continuation_overhead(benchmark, checkpoint, tmp_path, part):
    plain = _plain_step_seconds(tmp_path)
    if part == "restore":
        work = checkpoint.restore
    else:
        def work():
            takeover_at(checkpoint.episode_dir, checkpoint.step, note=NOTE)
            T.public_prefix(checkpoint.episode_dir, checkpoint.step)
    benchmark.group = "diagnose"
    benchmark.extra_info.update(unit=f"{part} per continuation", ops=1)
    benchmark.pedantic(work, rounds=7, iterations=1, warmup_rounds=1)
    benchmark.extra_info["plain_eval_steps"] = round(benchmark.stats.stats.min / plain, 2)
    print(f"\n{part}: {benchmark.stats.stats.min * 1000:.1f} ms = "
          f"{benchmark.extra_info['plain_eval_steps']} plain eval steps ({plain * 1000:.2f} ms each)")


def test_continuation_per_action(benchmark, checkpoint, tmp_path):
    plain = _plain_step_seconds(tmp_path)
    n = [0]

    def one():
        n[0] += 1
        folder = tmp_path / f"c{n[0]}"
        agent = PaperFillerAgent(folder=folder, prefix=T.public_prefix(checkpoint.episode_dir, checkpoint.step))
        r = checkpoint.continue_with(agent, note=NOTE, out=folder,
                                     settings=T.continuation_settings(checkpoint, max_actions=ACTIONS))
        assert r.actions == ACTIONS
    benchmark.group = "diagnose"
    benchmark.extra_info.update(unit="continuation actions", ops=ACTIONS)
    benchmark.pedantic(one, rounds=5, iterations=1, warmup_rounds=1)
    per_action = benchmark.stats.stats.min / ACTIONS
    benchmark.extra_info["plain_eval_steps"] = round(per_action / plain, 2)
    print(f"\ncontinuation: {per_action * 1000:.2f} ms per action (overhead included) = "
          f"{benchmark.extra_info['plain_eval_steps']}x a plain eval step ({plain * 1000:.2f} ms); one whole "
          f"continuation of {ACTIONS} actions = {benchmark.stats.stats.min / plain:.1f} plain eval steps")
