"""RQ1's analyses over recorded runs (agents/diagnose/rq1.py over agents/report/analytics.py):
small runs recorded here by scripted agents through the real harness."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from longpuzzle.cli import cli

from longpuzzle.agents.base import NO_VISIBLE_EFFECT
from longpuzzle.agents.diagnose.rq1 import REASONS, code_reasons, rq1_analysis, write_rq1_study
from longpuzzle.agents.diagnose.texts import step_texts
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.agents.report.analytics import analyze_episode, bolt_move_outcomes
from longpuzzle.agents.scripted import AppModelAgent, GreedyAgent


class UpDown(AppModelAgent):
    """Enters its objective as the scripted agents do, then swipes up and down for ever: the
    Maze Paint loop the paper describes (no new paint, exact earlier states again and again)."""
    name = "updown"

    def choose(self, obs):
        self.i = getattr(self, "i", 0) + 1
        return self.i % 2                    # Maze Paint's moves 0 and 1: up, down


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rq1")
    st = Settings(max_actions=60, action_timeout=None)
    run_objective(GreedyAgent(), "bolt_unscrew", "hard", settings=st, folder=root / "bolt")
    run_objective(GreedyAgent(), "maze_paint", "easy", settings=Settings(max_actions=40, action_timeout=None),
                  folder=root / "maze")
    return root


def test_a_bolt_move_is_coded_as_figure_4b_counts_it():
    m = {"changed": True, "P_before": 0.2, "P_after": 0.2, "holes_before": 1, "holes_after": 0, "did": "dead_end"}
    assert bolt_move_outcomes(m) == {"frees": False, "fills": True, "deadlocks": True, "fatal": True}
    # a board freed into the last hole: frees and deadlocks at once, never "fills"
    m = {"changed": True, "P_before": 0.2, "P_after": 0.4, "holes_before": 1, "holes_after": 0, "did": "freed_board"}
    assert bolt_move_outcomes(m) == {"frees": True, "fills": False, "deadlocks": True, "fatal": False}
    # the last board freed leaves no hole but a solved level: no deadlock
    m = {"changed": True, "P_before": 0.9, "P_after": 1.0, "holes_before": 1, "holes_after": 0}
    assert not bolt_move_outcomes(m)["deadlocks"]
    assert bolt_move_outcomes({**m, "changed": False}) is None
    assert bolt_move_outcomes({**m, "holes_after": None}) is None


def test_figure_4b_bins_every_bolt_transfer_and_its_deadlocks_are_the_certificates(runs):
    res = rq1_analysis([runs / "bolt"], draws=200)
    ep = analyze_episode(runs / "bolt")
    transfers = [m for a in ep["attempts"] for m in a["move_log"] if m.get("changed") and m.get("holes_before") is not None]
    t = next(t for t in res["tables"] if t["id"] == "figure4b")
    bins = [r for r in t["rows"] if isinstance(r[0], int)]
    assert sum(r[1] for r in bins) == len(transfers) > 20
    assert [r[0] for r in bins] == sorted((r[0] for r in bins), reverse=True)
    # a deadlocking move is exactly the move after which the paper's certificate first held
    dead = [m for m in res["data"]["bolt_moves"] if m["deadlocks"]]
    certified = [a["no_free_hole_step"] for a in ep["attempts"] if a["no_free_hole_step"] is not None]
    assert dead and sorted(m["step"] for m in dead) == sorted(certified)
    assert sum(r[4] for r in bins) == len(dead)
    by_h = {r[0]: r for r in bins}
    assert by_h[1][4] >= 1                      # greedy fills the last free hole
    assert all(m["holes_before"] == 1 for m in dead)


def test_maze_moves_by_coverage_fifths_solved_and_unsolved_and_a_looping_agent_revisits(runs, tmp_path):
    res = rq1_analysis([runs / "maze"], draws=200)
    mp = res["data"]["maze_paint"]
    for i in range(5):
        assert mp["all"][i]["valid_moves"] == mp["solved"][i]["valid_moves"] + mp["unsolved"][i]["valid_moves"]
    assert sum(r["valid_moves"] for r in mp["solved"]) > 10          # greedy solves the first levels
    # a looping agent: after its first swipe, every move returns to an exact earlier state
    run_objective(UpDown(), "maze_paint", "easy", settings=Settings(max_actions=12, action_timeout=None),
                  folder=tmp_path / "loop")
    loop = rq1_analysis([tmp_path / "loop"], draws=200)["data"]["maze_paint"]
    moves = sum(r["valid_moves"] for r in loop["unsolved"])
    assert moves >= 5 and sum(r["revisit_moves"] for r in loop["unsolved"]) >= moves - 2
    assert sum(r["new_cell_moves"] for r in loop["unsolved"]) <= 2


def test_the_lc_deficit_split_adds_up(runs):
    res = rq1_analysis([runs / "bolt", runs / "maze"], draws=200)
    t = next(t for t in res["tables"] if t["id"] == "lc_deficit")
    games = [r[0] for r in t["rows"]]
    assert games == ["bolt_unscrew", "maze_paint", "all games (game-macro)"]
    for r in t["rows"]:
        assert r[4] == pytest.approx(100 - r[2], abs=0.11) and r[4] == pytest.approx(r[5] + r[6], abs=0.11)
    # game-macro: the overall row is the mean of the games' rows
    assert t["rows"][2][2] == pytest.approx((t["rows"][0][2] + t["rows"][1][2]) / 2, abs=0.11)


def test_stated_reasons_are_coded_by_the_fixed_expressions():
    assert code_reasons("Moving this screw will release the red plank.")["release"]
    assert code_reasons("这一步会让木板掉落")["release"]
    assert code_reasons("Put it into the empty hole on the left")["capacity"]
    assert not any(code_reasons("Click the top-left screw.").values())
    assert code_reasons(None) == dict.fromkeys(REASONS, False)
    # "free" as an adjective of holes is capacity, not a release
    assert code_reasons("use the free hole") == {"release": False, "capacity": True}


def test_the_reason_of_a_deadlocking_move_is_read_from_the_agent_s_conversation(runs, tmp_path):
    import shutil

    ep = tmp_path / "bolt"
    shutil.copytree(runs / "bolt", ep)
    dead = [m for m in rq1_analysis([ep], draws=100)["data"]["bolt_moves"] if m["deadlocks"]]
    step = dead[0]["step"]
    # a model agent's log: the call made when the newest screenshot was of step - 1 chose step
    calls = [{"type": "header", "format": "longpuzzle-conversation/1"},
             {"type": "message", "message": {"role": "user", "parts": [{"text": "screen"},
                                                                      {"image": {"frame": 3, "step": step - 1}}]}},
             {"type": "call", "n": 1, "kind": "step", "images_sent": [3],
              "reply": {"text": "Moving this screw there will release the blue board.", "tool_calls": [],
                        "reasoning": None}},
             {"type": "message", "message": {"role": "tool", "parts": [{"image": {"frame": 4, "step": step}}]}},
             {"type": "call", "n": 2, "kind": "compaction", "images_sent": [4],
              "reply": {"text": "Summary: released boards.", "tool_calls": []}},
             {"type": "call", "n": 3, "kind": "step", "images_sent": [4],
              "reply": {"text": "", "tool_calls": [{"name": "click", "arguments": {"x": 3, "y": 4}}]}}]
    (ep / "conversation.jsonl").write_text("\n".join(json.dumps(c) for c in calls) + "\n{cut off", encoding="utf-8")
    texts = step_texts(ep)
    assert set(texts) == {step, step + 1} and "release" in texts[step] and '"x": 3' in texts[step + 1]
    t = next(t for t in rq1_analysis([ep], draws=100)["tables"] if t["id"] == "reasons")
    fatal = t["rows"][0]
    assert fatal[0] == "deadlocking moves" and fatal[2] == 1 and fatal[3].startswith("1/1")


def test_the_analyses_are_written_as_a_study_folder_and_bad_input_is_one_error_line(runs, tmp_path):
    doc = write_rq1_study([runs / "bolt"], tmp_path / "s", draws=100)
    disk = json.loads((tmp_path / "s" / "study.json").read_text())
    assert disk == json.loads(json.dumps(doc)) and disk["kind"] == "longpuzzle-study" and disk["experiment"] == "rq1"
    assert [f["id"] for f in disk["figures"]] == ["figure4b"]
    assert (tmp_path / "s" / "figures" / "figure4b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = CliRunner().invoke(cli, ["diagnose", "branch", "analyze", str(tmp_path / "missing")])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [f"error: {tmp_path / 'missing'} is not a folder"]
    (tmp_path / "x").mkdir()
    r = CliRunner().invoke(cli, ["diagnose", "branch", "analyze", str(tmp_path / "x"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.startswith("error: ") and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()                    # nothing half-written


def test_a_model_agent_s_own_text_is_read_step_by_step_from_its_conversation(tmp_path):
    """A model agent through a scripted HTTP endpoint on 127.0.0.1 (the native protocol, the
    paper preset): reply k (the solver's gesture with a numbered thought) chose step k + 1,
    and the reasons table codes the moves from exactly those texts."""
    from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, solver_gestures

    page = (1280, 900)
    replies = gesture_script("native", solver_gestures("bolt_unscrew/easy", page), page)[:14]
    for k, r in enumerate(replies):
        r["text"] = f"thought {k}: this screw should release the board" if k % 2 else f"thought {k}: next screw"
    with ScriptedServer(ReplayScript(replies)) as srv:
        models = tmp_path / "models.toml"
        models.write_text(f'[models.scripted]\napi = "openai-chat"\nbase_url = "{srv.url_v1}"\n'
                          f'api_key_env = ""\nagent = "native"\n')
        r = CliRunner().invoke(cli, ["eval", "--objective", "bolt_unscrew/easy", "--out", str(tmp_path / "run"),
                                     "--model", "scripted", "--models-file", str(models), "--max-actions", "14"])
    assert r.exit_code == 0, r.output
    ep = next((tmp_path / "run").rglob("conversation.jsonl")).parent
    texts = step_texts(ep)
    assert texts and all(t.startswith(f"thought {s - 1}:") for s, t in texts.items())
    assert sorted(texts) == list(range(1, 15))           # the model chose the opening wait too
    res = rq1_analysis([tmp_path / "run"], draws=100)
    moves = res["data"]["bolt_moves"]
    assert moves and all(m["text"] for m in moves)
    assert all(m["release"] == ((m["step"] - 1) % 2 == 1) for m in moves)


class FirstGreedy(GreedyAgent):
    """Greedy without a random tie-break (the first best move): every retry of a level plays
    the same path again."""
    name = "first-greedy"

    def choose(self, obs):
        s = self.model.session
        if obs.feedback is not None and obs.feedback.status == NO_VISIBLE_EFFECT and s.moves:
            return None
        p = s.puzzle
        legal = p.legal_moves(s.level, s.state)
        if not legal:
            return None
        scored = [(p.progress(s.level, p.apply(s.level, s.state, a)), a) for a in legal]
        return max(scored, key=lambda x: x[0])[1]


def test_retries_that_rebuild_the_same_dead_end_are_counted_with_the_boards_left(tmp_path):
    from longpuzzle.engine.catalog import load_level

    run_objective(FirstGreedy(), "bolt_unscrew", "hard", settings=Settings(max_actions=60, action_timeout=None),
                  folder=tmp_path / "same")
    rows = rq1_analysis([tmp_path / "same"], draws=100)["data"]["bolt_retries"]
    r = rows[0]
    assert r["level"] == "bolt_unscrew/hard/1" and r["dead_ends"] >= 3
    assert r["retries"] >= r["dead_ends"] - 1 and r["same_path"] == r["retries"]
    boards = len(load_level("bolt_unscrew/hard/1").extra["piece_ids"])
    assert len(r["attached"]) == r["dead_ends"] and len({tuple(x) for x in r["attached"]}) == 1
    assert 0 < r["attached"][0][0] < r["attached"][0][1] == boards
    # the greedy agent with its random tie-break takes other paths
    run_objective(GreedyAgent(seed=3), "bolt_unscrew", "hard", settings=Settings(max_actions=60, action_timeout=None),
                  folder=tmp_path / "other")
    g = rq1_analysis([tmp_path / "other"], draws=100)["data"]["bolt_retries"][0]
    assert g["level"] == r["level"] and g["retries"] == 1 and g["same_path"] == 0


def test_the_paper_like_agent_s_stated_reasons_are_coded_like_a_model_s(tmp_path):
    """The scripted paper-like agent leaves its text where a model agent does (its episode's
    conversation.jsonl): the deadlocking moves it plays are coded as predicting a release."""
    from longpuzzle.agents.paper_agents import PaperFillerAgent

    run_objective(PaperFillerAgent(folder=tmp_path / "pf"), "bolt_unscrew", "hard",
                  settings=Settings(max_actions=30, action_timeout=None), folder=tmp_path / "pf")
    res = rq1_analysis([tmp_path / "pf"], draws=100)
    dead = [m for m in res["data"]["bolt_moves"] if m["deadlocks"]]
    assert dead and all(m["text"] and m["release"] for m in dead)
    row = next(t for t in res["tables"] if t["id"] == "reasons")["rows"][0]
    assert row[0] == "deadlocking moves" and row[2] == len(dead) and row[3].startswith(f"{len(dead)}/{len(dead)}")


def test_a_run_of_another_catalogue_is_refused_and_nothing_is_written(runs, tmp_path):
    """Its levels would be read from this catalogue: one error line naming the episode, no study."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(runs / "maze", other)
    ev = other / "events.jsonl"
    lines = ev.read_text().splitlines()
    head = json.loads(lines[0])
    head["catalog"] = {**head["catalog"], "hash": "0" * 64}
    ev.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = CliRunner().invoke(cli, ["diagnose", "branch", "analyze", str(other), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"error: {other}: the episode ran on catalogue builtin with hash 0000")
    assert not (tmp_path / "o").exists()
