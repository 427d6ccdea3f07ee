"""diagnose judge (agents/diagnose/judge.py): a judge resumed at recorded states checks each
level's milestones; every verdict is compared with the exact truth. Scripted judges (perfect,
miscounting), a model judge through a real HTTP endpoint on 127.0.0.1, any agent through the
public API, the study folder and its check, bad input."""

from __future__ import annotations

import base64
import json
import shutil

import numpy as np
import pytest

from longpuzzle.agents.base import BaseAgent, FinalAnswer
from longpuzzle.agents.diagnose import judge as J
from longpuzzle.agents.harness.frames import hasher, header_frame_hash
from longpuzzle.agents.harness.objective import run_objective
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.agents.media.images import decode_png
from longpuzzle.agents.models.agent import ModelAgent
from longpuzzle.agents.models.config import ModelConfig
from longpuzzle.agents.scripted import GreedyAgent, SolverAgent
from longpuzzle.agents.testing.endpoints import ScriptedServer

TITLES = {"nut_and_bolt": "Nut and Bolt", "bolt_unscrew": "Bolt Unscrew", "maze_paint": "Maze Paint"}
DRAWS = 500          # the tables' intervals (the statistics are stats.py's, tested there)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three short recorded runs: the solver wins Nut and Bolt easy 1 and 2 and starts 3, the
    greedy agent dead-ends Bolt Unscrew hard 1, the solver paints part of Maze Paint easy 1."""
    root = tmp_path_factory.mktemp("runs")
    run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=Settings(max_actions=14), folder=root / "nut")
    run_objective(GreedyAgent(), "bolt_unscrew", "hard", settings=Settings(max_actions=12), folder=root / "bolt")
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=6), folder=root / "maze")
    return root


def _records(study):
    return [json.loads(x) for x in (study / "units.jsonl").read_text().splitlines()]


def _milestones(study):
    return [(r, m) for r in _records(study) if r["status"] == "valid" for m in r["endpoints"]["milestones"]]


def _table(doc, tid):
    return next(t for t in doc["tables"] if t["id"] == tid)


def test_units_are_each_levels_end_and_the_truth_is_the_evaluators(runs, tmp_path):
    units = [u for f in J.episode_folders([runs]) for u in J.episode_units(f)]
    assert [(u.episode.name, u.level, u.at) for u in units] == [
        ("bolt", "bolt_unscrew/hard/1", "end"), ("maze", "maze_paint/easy/1", "end"),
        ("nut", "nut_and_bolt/easy/1", "won"), ("nut", "nut_and_bolt/easy/2", "won"),
        ("nut", "nut_and_bolt/easy/3", "end")]
    for u in units:
        priv = {r["step"]: r["record"] for r in read_events(u.episode) if r.get("stream") == "private"}
        r = J.resume(u)
        won = next(holds for m, _, holds in r.milestones if m.kind == "level_won")
        assert won is bool(priv[u.step]["win"]) is (u.at == "won")     # the evaluator saw the win there
        counts = {m.kind: (have, m.n) for m, have, _ in r.milestones if m.counting}
        if u.level.startswith("nut_and_bolt") and u.at == "won":
            have, n = counts["stacks_sorted"]
            assert have == n >= 2                 # every colour sorted at the win
        if u.level.startswith("maze_paint"):    # P = (painted - 1) / (paintable - 1), as recorded
            have, n = counts["cells_painted"]
            assert (have - 1) / (n - 1) == pytest.approx(priv[u.step]["P"])
    finals = [u for f in J.episode_folders([runs]) for u in J.episode_units(f, "final")]
    assert [(u.level, u.at) for u in finals] == [("bolt_unscrew/hard/1", "final"), ("maze_paint/easy/1", "final"),
                                                 ("nut_and_bolt/easy/3", "final")]


def test_the_perfect_judge_agrees_everywhere_and_the_study_checks(runs, tmp_path):
    doc = J.run_judge([runs], "perfect", tmp_path / "s", draws=DRAWS)
    ms = _milestones(tmp_path / "s")
    assert ms and all(m["verdict"] is m["truth"] or (not m["asked"] and not m["truth"]) for _, m in ms)
    conf = _table(doc, "judge_confusion")["rows"]
    assert conf[0][2] == 0 and conf[1][1] == 0 and conf[0][1] + conf[1][2] == len(ms)
    for r in _records(tmp_path / "s"):
        assert r["endpoints"]["judge_score"] == r["endpoints"]["exact_score"]
    assert J.check_study(tmp_path / "s") == []
    study = json.loads((tmp_path / "s" / "study.json").read_text())
    assert study["kind"] == "longpuzzle-study" and study["experiment"] == "judge" and study["draws"] == DRAWS
    assert sorted(p.name for p in (tmp_path / "s" / "episodes").iterdir()) == ["bolt", "maze", "nut"]


@pytest.mark.parametrize("mode", J.MODES)
def test_the_miscounting_judge_errs_only_on_counts_one_short(runs, tmp_path, mode):
    doc = J.run_judge([runs], "miscount", tmp_path / mode, mode=mode, draws=DRAWS)
    ms = _milestones(tmp_path / mode)
    wrong = [m for _, m in ms if (m["verdict"] is True) != m["truth"]]
    # every disagreement: a multi-item milestone judged met with one item missing
    assert wrong and all(m["counting"] and m["verdict"] is True and m["have"] == m["k"] - 1 for m in wrong)
    expect = [m for _, m in ms if m["counting"] and m["have"] == m["k"] - 1 and m["asked"]]
    assert len(wrong) == len(expect)
    rows = {r[0]: r for r in _table(doc, "judge_agreement")["rows"]}
    assert rows["single"][7] == 0 and rows["single"][4] == f"{rows['single'][2]}/{rows['single'][2]}"
    assert rows["multi-item (counting)"][7] == len(wrong)          # FP
    assert rows["all"][2] == len(ms)
    if mode == "ordered":     # asked in order: nothing after the first milestone judged unmet
        for r in _records(tmp_path / mode):
            asked = [m["asked"] for m in r["endpoints"]["milestones"]]
            said = [m["verdict"] for m in r["endpoints"]["milestones"]]
            first_no = next((i for i, v in enumerate(said) if v is not True), len(said))
            assert asked == [i <= first_no for i in range(len(asked))]
    else:
        assert all(m["asked"] for _, m in ms)
    near = {r[0]: r for r in _table(doc, "judge_counting")["rows"]}
    assert near["-1"][2] == f"0/{near['-1'][1]}" and near["-1"][3] == near["-1"][1] > 0   # one short: all wrong
    assert all(r[2] == f"{r[1]}/{r[1]}" for d, r in near.items() if d != "-1")
    assert sum(r[1] for r in near.values()) == sum(1 for _, m in ms if m["counting"])
    score = {r[0]: r for r in _table(doc, "judge_score")["rows"]}["all"]
    assert score[4].startswith("+") and not score[4].startswith("+0.00 ")   # the judge over-scores


def test_check_finds_a_changed_verdict_and_a_changed_episode(runs, tmp_path):
    J.run_judge([runs], "miscount", tmp_path / "s", draws=DRAWS)
    assert J.check_study(tmp_path / "s") == []
    s2 = tmp_path / "s2"
    shutil.copytree(tmp_path / "s", s2)
    lines = (s2 / "units.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["endpoints"]["milestones"][0]["truth"] = not rec["endpoints"]["milestones"][0]["truth"]
    (s2 / "units.jsonl").write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
    diffs = J.check_study(s2)
    assert any("truth differs" in d for d in diffs) and any("tables differ" in d for d in diffs)
    # the command reports it as every diagnose command's --check does: the problems, NOT OK, exit 1
    r = _cli("--check", s2)
    assert r.exit_code == 1 and r.stdout.splitlines() == [f"  {d}" for d in diffs] + ["NOT OK"], r.output
    r = _cli("--check", tmp_path / "s")
    assert r.exit_code == 0 and r.stdout == "ok: the study re-derives exactly\n"
    s3 = tmp_path / "s3"
    shutil.copytree(tmp_path / "s", s3)
    ev = s3 / "episodes" / "maze" / "events.jsonl"
    ev.unlink()                                       # (hard-linked: write a new file, not through the link)
    ev.write_text((runs / "maze" / "events.jsonl").read_text() + "\n")
    assert J.check_study(s3) == ["episode maze: its events are missing or changed"]


def test_a_model_judge_through_a_real_endpoint_sees_the_recorded_screenshot(runs, tmp_path):
    seen = []

    def script(api, body):
        seen.append(body)
        q = body["messages"][1]["content"][0]["text"]
        # a model that reads Nut and Bolt well, claims every board out, and rambles on Maze Paint
        if "floor tiles" in q:
            return {"text": "I cannot tell from this picture."}
        return {"text": "No." if "solved" in q and "Nut and Bolt" not in q else "Yes, it does."}

    with ScriptedServer(script) as srv:
        cfg = ModelConfig(model="scripted-judge", api="openai-chat", base_url=srv.url_v1, api_key_env="", max_retries=0)
        agent = ModelAgent("native", cfg)
        doc = J.run_judge([runs], agent, tmp_path / "s", mode="all", draws=DRAWS)
        assert srv.refused == []                          # every request as the real API takes it
    ms = _milestones(tmp_path / "s")
    assert len(seen) == len(ms) == doc["usage"]["calls"]
    frames = {}
    for r in _records(tmp_path / "s"):
        ep = runs / r["folder"].split("/")[-1]
        lines = read_events(ep)
        frames[r["unit"]] = (hasher(header_frame_hash(lines[0])), J.recorded_frame(lines, r["endpoints"]["step"]))
    order = [(r, m) for r, m in ms]
    for body, (r, m) in zip(seen, order, strict=True):
        sys_msg, user = body["messages"]
        assert sys_msg == {"role": "system", "content": J.SYSTEM} and "tools" not in body
        text, image = user["content"]
        assert text["text"] == J.QUESTION.format(title=TITLES[r["source"].split("/")[0]], question=m["question"])
        png = base64.b64decode(image["image_url"]["url"].removeprefix("data:image/png;base64,"))
        h, want = frames[r["unit"]]
        assert h(decode_png(png)) == want                # exactly the screenshot the player was shown
    for r, m in ms:
        if m["kind"] == "cells_painted":
            assert m["verdict"] is None and m["reply"] == "I cannot tell from this picture."
        elif m["kind"] == "level_won" and not r["source"].startswith("nut_and_bolt"):
            assert m["verdict"] is False and m["reply"] == "No."
        else:
            assert m["verdict"] is True
    # it says yes to every count: wrong exactly on the counts not met (false positives)
    rows = {r[0]: r for r in _table(doc, "judge_agreement")["rows"]}
    for kind in ("stacks_sorted", "boards_out"):
        unmet = sum(1 for _, m in ms if m["kind"] == kind and not m["truth"])
        assert rows[kind][7] == unmet and rows[kind][6] == rows[kind][2] - unmet
    assert unmet > 0 and rows["cells_painted"][8] == sum(m["truth"] for _, m in ms if m["kind"] == "cells_painted")


def test_an_infrastructure_failure_is_replaced_under_the_same_assignment(runs, tmp_path):
    with ScriptedServer(lambda api, body: {"text": "yes"}) as srv:
        srv.fail_next(500, count=1)
        cfg = ModelConfig(model="m", api="openai-chat", base_url=srv.url_v1, api_key_env="", max_retries=0)
        J.run_judge([runs / "maze"], ModelAgent("native", cfg), tmp_path / "s", draws=DRAWS)
    recs = _records(tmp_path / "s")
    assert [(r["attempt"], r["status"]) for r in recs] == [(1, "replaced"), (2, "valid")]
    assert recs[0]["unit"] == recs[1]["unit"] and recs[0]["order"] == recs[1]["order"]
    assert J.check_study(tmp_path / "s") == []


class _Teller(BaseAgent):
    """An agent file's kind of agent: answers from its instruction, or acts."""
    name = "teller"

    def act(self, observation):
        assert observation.frame is not None and observation.frame.flags.writeable is False
        if "floor tiles" in self.instruction:
            return {"type": "click", "x": 1, "y": 1}
        return FinalAnswer("yes" if "Is this level solved" in self.instruction else "no")


def test_any_agent_judges_through_the_public_api(runs, tmp_path):
    J.run_judge([runs / "maze"], _Teller(), tmp_path / "s", mode="all", draws=DRAWS)
    ms = _milestones(tmp_path / "s")
    assert [(m["kind"], m["verdict"]) for _, m in ms] == [("cells_painted", None)] * 4 + [("level_won", True)]
    assert json.loads(ms[0][1]["reply"]) == {"type": "click", "x": 1, "y": 1}


def test_parse_verdict():
    assert J.parse_verdict("Yes.") is True and J.parse_verdict("no, the board still hangs") is False
    assert J.parse_verdict("The answer is YES") is True and J.parse_verdict("是的") is True
    assert J.parse_verdict("不是") is False and J.parse_verdict("maybe") is None and J.parse_verdict("") is None
    assert J.parse_verdict("nothing") is None and J.parse_verdict("yesterday") is None


def _cli(*args):
    """The command as the console runs it (the root group's error handling), in this process."""
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    return CliRunner().invoke(cli, ["diagnose", "judge", *map(str, args)])


def test_the_command_writes_and_checks_a_study_and_bad_input_is_one_error_line(runs, tmp_path):
    r = _cli(runs / "nut", "--judge", "miscount", "--out", tmp_path / "s", "--draws", DRAWS)
    assert r.exit_code == 0, r.output
    assert "| stacks_sorted | counting |" in r.stdout and "study written to" in r.stdout
    assert _cli("--check", tmp_path / "s").exit_code == 0
    other = tmp_path / "other"
    shutil.copytree(runs / "maze", other / "maze")
    ev = other / "maze" / "events.jsonl"
    lines = ev.read_text().splitlines()
    head = json.loads(lines[0])
    head["catalog"] = {**head["catalog"], "hash": "0" * 64}          # a run of another catalogue
    ev.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    bad = [(("nope", "--judge", "perfect", "--out", tmp_path / "x"), "no such episode or run folder"),
           ((runs, "--judge", "perfect", "--out", tmp_path / "s"), "is not empty"),
           ((runs, "--out", tmp_path / "x"), "give one judge"),
           ((runs, "--judge", "perfect", "--agent", "solver", "--out", tmp_path / "x"), "give one judge"),
           ((other, "--judge", "perfect", "--out", tmp_path / "x"), "catalogue"),
           ((runs, "--agent", "native", "--out", tmp_path / "x"), "needs --model"),
           (("--check", tmp_path / "nothing"), "not a judge study folder")]
    for args, why in bad:
        r = _cli(*args)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error:"), (args, r.stderr)
        assert why in r.stderr, (args, r.stderr)
    assert not (tmp_path / "x").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_frames_are_never_changed_by_judging(runs, tmp_path):
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    J.run_judge([runs], "perfect", tmp_path / "s", draws=DRAWS)
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == before
    assert np.array_equal(J.resume(J.episode_units(runs / "maze")[0]).frame,
                          J.resume(J.episode_units(tmp_path / "s" / "episodes" / "maze")[0]).frame)


def test_the_command_judges_with_a_model_through_a_real_endpoint(runs, tmp_path):
    asked = []

    def script(api, body):
        asked.append(body["model"])
        return {"text": "yes"}

    with ScriptedServer(script) as srv:
        r = _cli(runs / "maze", "--model", "scripted-judge", "--base-url", srv.url_v1, "--api", "openai-chat",
                 "--api-key-env", "", "--mode", "all", "--out", tmp_path / "s", "--draws", DRAWS, "--json")
        assert srv.refused == []
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    study = json.loads((tmp_path / "s" / "study.json").read_text())
    assert out["tables"] == study["tables"] and study["agent"] == "judge:native:scripted-judge"
    ms = _milestones(tmp_path / "s")
    assert asked == ["scripted-judge"] * len(ms) == ["scripted-judge"] * study["usage"]["calls"]
    assert all(m["verdict"] is True for _, m in ms)
    assert _table(study, "judge_confusion")["rows"][1][1] == sum(not m["truth"] for _, m in ms) > 0


def test_at_the_final_state_the_objectives_levels_won_are_milestones_with_the_evaluators_truth(runs, tmp_path):
    J.run_judge([runs], "perfect", tmp_path / "s", at="final", draws=DRAWS)
    for r in _records(tmp_path / "s"):
        ep = runs / r["folder"].split("/")[-1]
        outcome = json.loads((ep / "result.json").read_text())["levels_outcome"]
        ms = r["endpoints"]["milestones"]
        objective = [m for m in ms if m["kind"] == "objective_level_won"]
        here = next(m for m in ms if m["kind"] == "level_won")
        assert len(objective) == len(outcome) - 1              # every target level but the one on screen
        current = int(r["endpoints"]["level"].rsplit("/", 1)[1])
        assert [m["k"] for m in objective] == [k for k in range(1, len(outcome) + 1) if k != current]
        for m in objective:                                     # the level's win, as result.json scores it
            assert m["truth"] is outcome[m["k"] - 1]["won"] and m["n"] == len(outcome)
        assert here["truth"] is outcome[current - 1]["won"]
        assert [m["id"] for m in ms[:current - 1]] == [f"objective_level_won#{k}/{len(outcome)}"
                                                       for k in range(1, current)]
    nut = next(r for r in _records(tmp_path / "s") if r["source"].startswith("nut_and_bolt"))
    assert [m["truth"] for m in nut["endpoints"]["milestones"] if m["kind"] == "objective_level_won"] == [True, True]
    assert J.check_study(tmp_path / "s") == []


JUDGE_FILE = """
from longpuzzle.agents.base import BaseAgent, FinalAnswer


class FileJudge(BaseAgent):
    def act(self, observation):
        h, w = observation.frame.shape[:2]
        return FinalAnswer(("yes" if "Is this level solved" in self.instruction else "no") + f" ({w}x{h})")
"""


def test_an_agent_file_judges_from_its_sandbox(runs, tmp_path):
    from longpuzzle.agents.registry import load_agent

    path = tmp_path / "file_judge.py"
    path.write_text(JUDGE_FILE)
    agent = load_agent(str(path))
    assert agent.trusted is False                      # run isolated, as eval runs it
    J.run_judge([runs / "maze"], agent, tmp_path / "s", mode="all", draws=DRAWS)
    ms = _milestones(tmp_path / "s")
    assert [(m["kind"], m["verdict"]) for _, m in ms] == [("cells_painted", False)] * 4 + [("level_won", True)]
    assert all(m["reply"].endswith("(540x960)") for _, m in ms)        # it was shown the screenshot


def test_the_command_takes_the_shared_agent_options(runs, tmp_path):
    path = tmp_path / "file_judge.py"
    path.write_text(JUDGE_FILE)
    r = _cli(runs / "maze", "--agent", path, "--trusted-agent", "--mode", "all", "--out", tmp_path / "s",
             "--draws", DRAWS)
    assert r.exit_code == 0, r.output
    ms = _milestones(tmp_path / "s")
    assert [(m["kind"], m["verdict"]) for _, m in ms] == [("cells_painted", False)] * 4 + [("level_won", True)]
    assert json.loads((tmp_path / "s" / "study.json").read_text())["agent"] == "judge:agent"
    before = sorted(p.name for p in (runs / "maze").iterdir())
    r = _cli(runs / "maze", "--agent", "no_such_agent", "--out", tmp_path / "t")
    assert r.exit_code == 2 and r.stderr.startswith("error: unknown agent") and not (tmp_path / "t").exists()
    assert sorted(p.name for p in (runs / "maze").iterdir()) == before


@pytest.mark.parametrize("command", [["judge", "RUNS", "--judge", "perfect"], ["takeover", "--checkpoints", "RUNS"],
                                     ["retry", "--from", "RUNS"], ["rules", "--objective", "maze_paint/easy"],
                                     ["branch", "run", "--from", "RUNS"]])
def test_the_shared_options_are_checked_alike_by_every_command(runs, tmp_path, command):
    """--draws 0 and a file for --out: the same click error line in every diagnose command."""
    from click.testing import CliRunner

    from longpuzzle.cli import cli

    argv = ["diagnose", *(str(runs) if a == "RUNS" else a for a in command)]
    (tmp_path / "file").write_text("")
    for bad, why in ((["--draws", "0", "--out", str(tmp_path / "o")], "Invalid value for '--draws'"),
                     (["--out", str(tmp_path / "file")], "Invalid value for '--out'")):
        r = CliRunner().invoke(cli, argv + bad)
        assert r.exit_code == 2 and r.output.startswith(f"error: {why}"), (command, r.output)
    assert not (tmp_path / "o").exists()
