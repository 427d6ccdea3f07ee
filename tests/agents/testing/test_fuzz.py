"""The fuzz suite (bounded, seeded): GUI actions of every type, well-formed and malformed, on
every game and screen; mutated level records of every game; tampered suite snapshots and
checkpoints; tampered episode folders; randomised hostile agent files. Nothing may crash or
hang: every input is refused with the library's own error or works. (Each hostile act on its
own: tests/agents/sandbox/test_isolation.py. The long run of 10^6 actions per game: ``longpuzzle soak``.)"""

import json
import random
import shutil
from pathlib import Path

import pytest

from longpuzzle.agents.harness import HarnessError, replay_episode
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.agents.testing.fuzz import agents, levels, snapshots
from longpuzzle.agents.testing.fuzz.gui import soak

GAMES = builtin_catalog().games()


@pytest.mark.parametrize("game", GAMES)
def test_gui_actions_of_every_type_on_every_screen(game):
    rep = soak(game, 2500, seed=11, render_every=97, restore_every=499)
    assert rep["failures"] == [], rep["failures"]
    assert rep["refused"] > 200 and rep["dispatched"] > 1500 and rep["moves"] > 100
    assert {"home", "level", "level:complete"} <= set(rep["screens"])


def test_mutated_level_records_are_refused_or_work():
    r = levels.run_checks(GAMES, 25, seed=5, timeout=120, actions=4)
    assert r["failures"] == [], r["failures"]
    assert r["checked"] == 25 * len(GAMES) and r["refused"] > 0 and r["ok"] > 0


def test_tampered_snapshots_and_checkpoints_are_refused_or_work():
    r = snapshots.run_checks(GAMES, 20, seed=5, timeout=120)
    assert r["failures"] == [], r["failures"]
    assert r["checked"] == 2 * 20 * len(GAMES) and r["refused"] > 0 and r["ok"] > 0


def _tamper(rng: random.Random, folder: Path) -> str:
    ev = folder / "events.jsonl"
    lines = ev.read_text().splitlines()
    k = rng.randrange(7)
    i = rng.randrange(len(lines))
    if k == 0:
        del lines[i]
        what = f"line {i + 1} deleted"
    elif k == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
        what = f"a line duplicated at {i + 1}"
    elif k == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        what = f"lines {i + 1} and {j + 1} swapped"
    elif k == 3:
        rec = json.loads(lines[i])
        key = rng.choice(sorted(rec))
        rec[key] = rng.choice((None, 0, -1, "x", [], {}, 10 ** 30, True))
        lines[i] = json.dumps(rec)
        what = f"line {i + 1}: {key} replaced"
    elif k == 4:
        ev.write_bytes(ev.read_bytes()[:rng.randrange(ev.stat().st_size)])
        return "cut short"
    elif k == 5:
        data = bytearray(ev.read_bytes())
        data[rng.randrange(len(data))] = rng.randrange(256)
        ev.write_bytes(bytes(data))
        return "one byte changed"
    else:
        res = json.loads((folder / "result.json").read_text())
        key = rng.choice(sorted(res))
        res[key] = rng.choice((True, False, 0, 10, None, "completed", [], {}))
        (folder / "result.json").write_text(json.dumps(res))
        return f"result.json: {key} replaced"
    ev.write_text("\n".join(lines) + "\n")
    return what


def test_tampered_episode_folders_are_refused_or_diverge_never_crash(tmp_path):
    from click.testing import CliRunner
    from longpuzzle.cli import cli

    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["eval", "--objective", "nut_and_bolt/easy", "--agent", "random", "--max-actions",
                                 "10", "--invalid-actions", "dispatch_failed", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    ep = out / "nut_and_bolt_easy" / "episode_001"
    assert replay_episode(ep).ok
    rng = random.Random(3)
    outcomes = {"refused": 0, "diverged": 0, "passed": 0}
    for n in range(40):
        d = tmp_path / f"t{n}"
        shutil.copytree(ep, d)
        what = _tamper(rng, d)
        try:
            rep = replay_episode(d)
        except HarnessError:
            outcomes["refused"] += 1
            continue
        if not rep.ok:
            outcomes["diverged"] += 1
            continue
        # a replay that passes must describe the same episode: nothing it checks was changed
        outcomes["passed"] += 1
        assert not rep.complete or json.loads((d / "result.json").read_text())["success"] == \
            json.loads((ep / "result.json").read_text())["success"], what
    assert outcomes["refused"] + outcomes["diverged"] > 25, outcomes


def test_randomised_hostile_agents_end_as_planned_and_replay(tmp_path):
    r = agents.run_checks(14, seed=0, folder=tmp_path)
    assert r["failures"] == [], r["failures"]
    assert r["checked"] == 14 and len(r["ends"]) >= 4 and r["ends"].get("agent_error", 0) >= 3, r["ends"]


def test_the_hostile_agent_check_notices_a_wrong_end(tmp_path, monkeypatch):
    plan = dict(agents.episode_plan(0, 0), objective="rush_hour/easy", max_actions=10)
    plan["agent"] = {"seed": 5, "fatal_at": 4, "fatal": "raise", "final_at": -1, "p_bad": 0.0}
    (tmp_path / "a.py").write_text(agents.AGENT_SOURCE)
    assert agents.check_episode(plan, tmp_path / "ok", tmp_path / "a.py") == []
    monkeypatch.setitem(agents.FATAL, "raise", "ZeroDivisionError")     # an expectation the end cannot meet
    wrong = agents.check_episode(plan, tmp_path / "bad", tmp_path / "a.py")
    assert wrong and "raise ended with" in wrong[0], wrong
    no_fatal = dict(plan, agent=dict(plan["agent"], fatal="", fatal_at=-1))
    monkeypatch.setattr(agents, "FATAL", {})
    assert agents.check_episode(no_fatal, tmp_path / "calm", tmp_path / "a.py") == []


def test_soak_checks_tampered_results_and_notices_one_accepted(tmp_path, monkeypatch):
    """``soak --results N``: N single-field tamperings of a genuine run, each refused; a
    verification that accepted one would be reported as a failure (exit 1)."""
    import longpuzzle.agents.testing.fuzz.results as fr
    from click.testing import CliRunner
    from longpuzzle.cli import cli

    monkeypatch.setenv("LONGPUZZLE_VERIFY_KEY", str(tmp_path / "verify.key"))
    r = CliRunner().invoke(cli, ["soak", "--game", "maze_paint", "--actions", "20", "--results", "12", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["results"]
    assert rep["checked"] == 12 and rep["refused"] == 12 and rep["failures"] == []
    monkeypatch.setattr(fr, "tamperings", lambda a, b: iter([("nothing changed", lambda d: None)]))
    r = CliRunner().invoke(cli, ["soak", "--game", "maze_paint", "--actions", "20", "--results", "1", "--json"])
    assert r.exit_code == 1 and json.loads(r.output)["results"]["failures"] == [
        {"what": "nothing changed", "error": "accepted"}]
