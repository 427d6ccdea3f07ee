"""Human baselines (agents/serve/baselines.py) and ``longpuzzle baseline``: recorded human
episodes, replayed, aggregated per level and objective; agents scored against them."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from play_actions import solver_actions

from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.serve.baselines import (
    PAPER_HUMAN_PRESSES, baseline_table, efficiency, human_episodes, level_score, upper_median,
)
from longpuzzle.agents.serve.live import SessionPool
from longpuzzle.cli import cli


@pytest.fixture(scope="module")
def humans(tmp_path_factory):
    """Three human sessions of Maze Paint easy: two win level 1 (one after a restart),
    one leaves at once; and a solver run of the same objective."""
    root = tmp_path_factory.mktemp("b")
    pool = SessionPool(root / "humans", idle=60)
    win = solver_actions("maze_paint", "easy")
    enter, moves = win[:2], win[2:]
    for plan in (win, enter + moves[:1] + [_restart_click(enter)] + moves, enter):
        s = pool.new("maze_paint/easy")
        s.start()
        for a in plan:
            s.submit(a)
        s.leave()
    agent = run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=len(win) + 1),
                          folder=root / "agent" / "ep")
    return root, agent


def _restart_click(enter):
    """A click on the level's Restart button (where the screen after ``enter`` draws it)."""
    from longpuzzle.engine.suite import Suite
    m = Suite("home")
    for a in enter:
        m.dispatch(a)
    w = next(w for w in m.layout().widgets if w.id == "restart")
    x, y = m.proj.to_px(*w.shape.center)
    return {"type": "click", "x": int(x), "y": int(y)}


def test_upper_median_and_level_score():
    assert upper_median([5, 1, 4, 3]) == 4 and upper_median([3, 1, 2, 5, 4]) == 3 and upper_median([]) is None
    assert level_score(10, 20, True) == 0.25 and level_score(10, 10, True) == 1.0 and level_score(10, 5, True) == 1.0
    assert level_score(10, 50, True) == pytest.approx(0.04) and level_score(10, 51, True) == 0.0   # the 5x cut-off
    assert level_score(10, 10, False) == 0.0 and level_score(None, 10, True) is None


def test_human_episodes_are_replayed_and_aggregated(humans):
    root, _ = humans
    eps, skipped = human_episodes([root])
    assert len(eps) == 3 and skipped == []                  # the agent's episode is not a human one
    t = baseline_table(eps)
    row = next(r for r in t["levels"] if r["level"] == "maze_paint/easy/1")
    presses = sorted(e.levels["maze_paint/easy/1"]["presses"] for e in eps if "maze_paint/easy/1" in e.levels)
    assert row["won"] == 2 and row["baseline_presses"] == presses[-1] and presses[-1] > presses[0]
    assert row["restarts"] == 1                       # the second person restarted level 1 once
    obj = next(r for r in t["objectives"] if r["objective"] == "maze_paint/easy")
    assert obj["episodes"] == 3 and obj["completed"] == 0 and obj["paper_presses"] == 128
    assert {r["objective"] for r in t["objectives"]} >= set(PAPER_HUMAN_PRESSES)


def test_a_tampered_human_episode_is_left_out_with_its_reason(humans, tmp_path):
    import shutil
    root, _ = humans
    src = sorted((root / "humans").iterdir())[0]
    bad = tmp_path / "bad"
    shutil.copytree(src, bad)
    res = json.loads((bad / "result.json").read_text())
    res["presses"] = 1
    (bad / "result.json").write_text(json.dumps(res))
    eps, skipped = human_episodes([tmp_path])
    assert eps == [] and skipped and "presses" in skipped[0][1]


def test_agents_are_scored_against_the_human_baseline(humans):
    root, agent = humans
    eps, _ = human_episodes([root / "humans"])
    t = baseline_table(eps)
    res = json.loads((root / "agent" / "ep" / "result.json").read_text())
    e = efficiency(res, t)
    b = next(r for r in t["levels"] if r["level"] == "maze_paint/easy/1")["baseline_presses"]
    m = res["levels"][0]["presses"]
    assert e["levels_scored"] == 1 and e["rhae"] == round(min(1.0, (b / m) ** 2), 4)
    assert e["rhae_paper"] == 0.0                  # the objective was not completed


def test_the_baseline_command_exports_csv_and_json(humans, tmp_path):
    root, _ = humans
    r = CliRunner().invoke(cli, ["baseline", str(root / "humans"), "--runs", str(root / "agent" / "ep"),
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["human_episodes"] == 3 and doc["agents"][0]["agent"] == "solver"
    out = tmp_path / "b.csv"
    r = CliRunner().invoke(cli, ["baseline", str(root / "humans"), "--out", str(out)])
    assert r.exit_code == 0 and out.read_text().startswith("scope,objective,level")
    assert "level,maze_paint/easy,maze_paint/easy/1,3,2," in out.read_text()
    r = CliRunner().invoke(cli, ["baseline", str(tmp_path / "nope")])
    assert r.exit_code == 2 and r.output.startswith("error:")
