"""diagnose takeover (RQ2, agents/diagnose/takeover.py) on the study runner (study.py), end to
end: the paper-like scripted agents (agents/paper_agents.py) reproduce the paper's pattern
(A: few timely restarts, B and C: many, controls: none) with exact paired counts, every
continuation replays, the intervals come again from the seed; a model agent through a real
HTTP endpoint on 127.0.0.1; bad input is one error line and writes nothing."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from longpuzzle.agents.agent_options import AgentOptions, build_agent
from longpuzzle.agents.base import InfrastructureError
from longpuzzle.agents.diagnose import study as sr
from longpuzzle.agents.diagnose import takeover as T
from longpuzzle.agents.diagnose.checkpoint_sources import build
from longpuzzle.agents.diagnose.checkpoints import board_digest, load_checkpoints
from longpuzzle.agents.diagnose.stats import paired_effect
from longpuzzle.agents.harness.replay import restore_step
from longpuzzle.agents.paper_agents import BLAME, MOVE, RESTART_TOLD, PaperFillerAgent
from longpuzzle.agents.testing.endpoints import ScriptedServer
from longpuzzle.cli import cli

DRAWS = 500
MAX = "40"               # actions per continuation: enough for a late restart (12 stuck) and a new dead end


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    """Two certified Bolt Unscrew Hard 1 dead ends (the greedy policy) and one solvable control
    of Easy 2 (along its verified solution), as checkpoints folders."""
    root = tmp_path_factory.mktemp("ckpts")
    build(root / "d", levels=["bolt_unscrew/hard/1"], policy="greedy", count=2, preset="fast")
    build(root / "n", levels=["bolt_unscrew/easy/2"], policy="solution", count=1, preset="fast")
    return root


@pytest.fixture(scope="module")
def filler_study(ckpts, tmp_path_factory):
    out = tmp_path_factory.mktemp("s") / "study"
    r = run("diagnose", "takeover", "--checkpoints", ckpts / "d", "--checkpoints", ckpts / "n", "--agent",
            "paper_filler", "--out", out, "--max-actions", MAX, "--draws", DRAWS)
    assert r.exit_code == 0, r.output
    return out, r.output


def _doc(out):
    return json.loads((out / "study.json").read_text())


def _table(doc, tid):
    return next(t for t in doc["tables"] if t["id"] == tid)


def _units(out):
    return [json.loads(x) for x in (out / "units.jsonl").read_text().splitlines()]


def test_a_continuation_stops_at_the_same_level_win(filler_study):
    # the won control's continuations end with the win (stop_when in their header), not
    # playing the next level up to the ceiling; every continuation names its level as its stop
    out, _ = filler_study
    sched = {u["unit"]: u for u in _doc(out)["schedule"]}
    won = 0
    for r in _units(out):
        head = json.loads((out / r["folder"] / "events.jsonl").open().readline())
        assert head["stop_when"] == {"won": [sched[r["unit"]]["level"]]}
        res = json.loads((out / r["folder"] / "result.json").read_text())
        if r["endpoints"]["win"]:
            won += 1
            assert res["end"] == "stop_condition" and res["actions"] < int(MAX)
    assert won == 2

def test_the_filler_reproduces_the_papers_pattern_with_exact_paired_counts(filler_study):
    out, printed = filler_study
    doc = _doc(out)
    rows = {(r[0], r[1]): r for r in _table(doc, "table13")["rows"]}
    # A: no timely restart (it blames the click, restarts late on its own); B and C: every one
    assert rows[("D", "A")][2:7] == [2, "0/2", "2/2", "0/2", "2/2"]
    assert rows[("D", "B")][2:7] == [2, "2/2", "2/2", "0/2", "0/2"]
    assert rows[("D", "C")][2:7] == [2, "2/2", "2/2", "0/2", "0/2"]
    assert rows[("N", "A")][3] == rows[("N", "B")][3] == "0/1"            # no control triggers a restart
    assert rows[("N", "A")][5] == rows[("N", "B")][5] == "1/1"            # the control is won
    # after a recovery the greedy play builds a new dead end (every recovered run here)
    assert rows[("D", "B")][7] == "2/2" and rows[("D", "A")][7] == "2/2"
    paired = {(r[0], r[1], r[2]): r for r in _table(doc, "paired")["rows"]}
    assert paired[("D", "A -> B", "timely restart")][3:7] == [2, "2/2", "0/2", "+1.00 [+1.00, +1.00]"]
    assert paired[("D", "A -> B", "blames the click")][4:6] == ["0/2", "2/2"]
    assert paired[("D", "B -> C", "timely restart")][4:6] == ["0/2", "0/2"]
    t15 = {r[1]: r[2:] for r in _table(doc, "table15")["rows"]}
    assert t15["D verified recovery"] == ["2/2 1.00 [1.00, 1.00]"] * 3
    assert t15["N restarts (any)"] == ["0/1 0.00 [0.00, 0.00]"] * 2 + ["-"]
    assert t15["D same-level win"] == ["0/2 0.00 [0.00, 0.00]"] * 3
    assert "Table 13" in printed and "Paired effects" in printed and "Table 15" in printed
    # the units: every assignment once, valid, in the interleaved order (rotated per unit)
    recs = _units(out)
    assert len(recs) == 2 * 3 + 2 and all(r["status"] == "valid" for r in recs)
    orders = {u["unit"]: u["order"] for u in doc["schedule"]}
    assert orders == {"c1D01": ["A", "B", "C"], "c1D02": ["B", "C", "A"], "c2N01": ["A", "B"]}
    assert [(r["unit"], r["condition"]) for r in recs] == [(u, c) for u, o in orders.items() for c in o]
    e = next(r["endpoints"] for r in recs if r["unit"] == "c1D01" and r["condition"] == "B")
    assert e["restart_action"] == 2 and e["timely_restart"] and e["names_state"] and not e["blames_click"]
    e = next(r["endpoints"] for r in recs if r["unit"] == "c1D01" and r["condition"] == "A")
    assert e["restart_action"] == 2 + PaperFillerAgent.patience and not e["timely_restart"] and e["blames_click"]


def test_the_condition_texts_enter_the_instruction_at_takeover(filler_study, ckpts):
    out, _ = filler_study
    head = {c: json.loads((out / "episodes" / f"c1D01-{c}" / "events.jsonl").open().readline())
            for c in ("A", "B", "C")}
    base = head["A"]["instruction"]
    assert head["B"]["instruction"] == base + "\n" + T.TEXTS[("dead_end", "B")]["en"]
    assert head["C"]["instruction"].endswith("\nRecovery information: Use the visible button labelled Restart to "
                                             "restart the current level.")
    assert head["B"]["continued_from"]["step"] == load_checkpoints(ckpts / "d")[0].step
    assert T.condition_text("dead_end", "C", "bolt_unscrew", "zh").endswith("“重开”的按钮重新开始当前关卡。")   # the game's own label


def test_every_continuation_replays_and_the_study_re_derives(filler_study):
    out, _ = filler_study
    r = run("diagnose", "takeover", "--check", out)
    assert r.exit_code == 0 and "ok: the study re-derives exactly" in r.output, r.output
    # a unit record that no longer matches its folder is found
    bad = out.parent / "tampered"
    shutil.copytree(out, bad)
    recs = _units(bad)
    recs[0]["endpoints"]["timely_restart"] = not recs[0]["endpoints"]["timely_restart"]
    (bad / "units.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    ok, problems = T.check_study(bad)
    assert not ok and any("endpoints differ" in p for p in problems) and any("tables" in p for p in problems)


def test_the_intervals_come_again_from_the_seed(filler_study):
    out, _ = filler_study
    doc = _doc(out)
    recs = _units(out)
    assert T.tables(doc["schedule"], recs, draws=DRAWS, seed=0, max_actions=int(MAX)) == doc["tables"]
    # a mixed sample: the paired effect is stats.paired_effect's, the same for the same seed
    for r in recs:
        if r["unit"] == "c1D02" and r["condition"] == "B":
            r["endpoints"]["timely_restart"] = False
    sched = [{**u, "source": u["unit"]} for u in doc["schedule"]]       # one source per checkpoint
    row = lambda t: next(x for x in _table({"tables": t}, "paired")["rows"]   # noqa: E731
                         if x[1] == "A -> B" and x[2] == "timely restart")
    one, two = T.tables(sched, recs, draws=DRAWS, seed=3), T.tables(sched, recs, draws=DRAWS, seed=3)
    assert row(one) == row(two)
    want = paired_effect({"c1D01": [(0, 1)], "c1D02": [(0, 0)]}, draws=DRAWS, seed=3)
    assert row(one)[3:] == [2, "1/2", "0/2", str(want)] and want.low < want.high


def test_the_rebuilder_restarts_when_told_and_rebuilds_the_same_dead_end(ckpts, tmp_path):
    cps = load_checkpoints(ckpts / "d")
    choice = build_agent(AgentOptions(agent="paper_rebuilder"))
    doc = T.run_study([ckpts / "d"], choice.make, tmp_path / "s", conditions=("A", "B"), max_actions=40,
                      draws=DRAWS)
    rows = {(r[0], r[1]): r for r in _table(doc, "table13")["rows"]}
    assert rows[("D", "A")][3:5] == ["0/2", "0/2"]          # untold: it blames the click and never restarts
    assert rows[("D", "B")][3:5] == ["2/2", "2/2"]
    for r in _units(tmp_path / "s"):
        e = r["endpoints"]
        if r["condition"] != "B":
            continue
        assert e["recurrence"]
        cp = next(c for c in cps if c.id == r["checkpoint"])
        # the dead end it builds again is the very board it took over
        again = restore_step(tmp_path / "s" / r["folder"], e["restart_action"] + e["recurrence_actions"])
        assert board_digest(again) == cp.state_sha256


def test_an_infrastructure_failure_is_replaced_under_the_same_assignment(ckpts, tmp_path):
    calls = []

    class Flaky(PaperFillerAgent):
        def act(self, obs):
            if len(calls) == 1 and obs.step == 3:
                raise InfrastructureError("the provider failed")
            return super().act(obs)

    def make(objective, folder, **kw):
        calls.append(folder)
        return Flaky(folder=folder, **kw)

    cps = load_checkpoints(ckpts / "d")
    one = tmp_path / "one"
    shutil.copytree(ckpts / "d", one)                         # a folder with one dead end
    recs = [json.loads(x) for x in (one / "checkpoints.jsonl").read_text().splitlines()][:1]
    (one / "checkpoints.jsonl").write_text(json.dumps(recs[0]) + "\n")
    doc = T.run_study([one], make, tmp_path / "s", conditions=("A",), max_actions=20, draws=DRAWS)
    got = _units(tmp_path / "s")
    assert [(r["unit"], r["condition"], r["attempt"], r["status"]) for r in got] == \
        [(cps[0].id, "A", 1, "replaced"), (cps[0].id, "A", 2, "valid")]
    assert got[0]["endpoints"]["end"] == sr.INFRASTRUCTURE and got[1]["folder"].endswith("-a2")
    assert _table(doc, "table13")["rows"][0][2] == 1         # the primary attempt only


def test_a_study_resumes_where_it_stopped(tmp_path):
    played = []
    sched = sr.interleaved([{"unit": "u1"}, {"unit": "u2"}], lambda u: ["A", "B"])

    def play(u, c, folder):
        played.append((u["unit"], c))
        folder.mkdir(parents=True)
        if (u["unit"], c) == ("u2", "A") and len(played) == 4:
            raise KeyboardInterrupt            # a kill in the middle of the fourth continuation

    ends = lambda u, c, f: {"end": "budget"}                  # noqa: E731
    with pytest.raises(KeyboardInterrupt):
        sr.run_units(tmp_path, sched, play, ends)
    with open(tmp_path / sr.UNITS, "a") as f:
        f.write('{"unit": "u2", "cond')                   # a line cut off by the kill
    recs = sr.run_units(tmp_path, sched, play, ends)
    assert played == [("u1", "A"), ("u1", "B"), ("u2", "B"), ("u2", "A"), ("u2", "A")]   # only the cut-off one again
    assert [(r["unit"], r["condition"]) for r in recs] == [("u1", "A"), ("u1", "B"), ("u2", "B"), ("u2", "A")]
    assert len(sr.read_units(tmp_path)) == 4


@pytest.mark.parametrize("args, message", [
    (["--conditions", "A,D"], "error: unknown condition 'D'"),
    (["--agent", "nobody"], "error: unknown agent 'nobody'"),
])
def test_bad_input_is_one_error_line_and_writes_nothing(ckpts, tmp_path, args, message):
    out = tmp_path / "s"
    r = run("diagnose", "takeover", "--checkpoints", ckpts / "d", "--out", out, *args)
    assert r.exit_code == 2 and r.output.startswith(message) and r.output.count("\n") == 1, r.output
    assert not out.exists()


def test_a_checkpoint_that_no_longer_replays_is_refused_before_anything_is_written(ckpts, tmp_path):
    broken = tmp_path / "ck"
    shutil.copytree(ckpts / "d", broken)
    ep = next((broken / "episodes").iterdir()) / "events.jsonl"
    ep.write_text(ep.read_text() + '{"stream":"public","step":999}\n')
    r = run("diagnose", "takeover", "--checkpoints", broken, "--out", tmp_path / "s")
    assert r.exit_code == 2 and r.output.startswith("error: ") and r.output.count("\n") == 1, r.output
    assert not (tmp_path / "s").exists()


def test_the_attribution_coding():
    blame = ["The click on the screw did not register", "I probably missed the click", "Let me click it again",
             "a misclick, retry the tap", "点击没有生效，重新点击"]
    state = ["The board is a dead end", "no free holes are left", "this puzzle state cannot be completed", "死局"]
    assert all(T.BLAMES_CLICK.search(s) for s in blame) and not any(T.BLAMES_CLICK.search(s) for s in state)
    assert all(T.NAMES_STATE.search(s) for s in state) and not any(T.NAMES_STATE.search(s) for s in blame)
    assert not T.BLAMES_CLICK.search(MOVE) and not T.NAMES_STATE.search(MOVE) and T.BLAMES_CLICK.search(BLAME)
    assert T.NAMES_STATE.search(RESTART_TOLD) and not T.BLAMES_CLICK.search(RESTART_TOLD)


def test_a_model_agent_takes_over_through_a_real_endpoint(ckpts, tmp_path):
    """A scripted model on 127.0.0.1 (the native protocol): told the board cannot be completed,
    it clicks the screen's restart button; untold, it blames the click. Its text is coded from
    its conversation.jsonl."""
    cp = load_checkpoints(ckpts / "d")[0]
    rx, ry = cp.restart["action"]["x"], cp.restart["action"]["y"]

    def script(api, body):
        said = json.dumps(body, ensure_ascii=False)
        if "image_url" not in said:                      # no screenshot yet: the opening wait
            return {"text": "", "tool_calls": [{"name": "gui", "arguments": {"action": "wait", "ms": 500}}]}
        if "cannot be completed" in said:
            return {"text": "The board cannot be completed; I restart the level.",
                    "tool_calls": [{"name": "gui", "arguments": {"action": "click", "x": rx, "y": ry}}]}
        return {"text": "The click did not register; I click the screw again.",
                "tool_calls": [{"name": "gui", "arguments": {"action": "click", "x": 270, "y": 407}}]}

    one = tmp_path / "one"
    shutil.copytree(ckpts / "d", one)
    (one / "checkpoints.jsonl").write_text((one / "checkpoints.jsonl").read_text().splitlines()[0] + "\n")
    with ScriptedServer(script) as srv:
        r = run("diagnose", "takeover", "--checkpoints", one, "--conditions", "A,B", "--model", "scripted-model",
                "--base-url", srv.url_v1, "--api", "openai-chat", "--api-key-env", "", "--out", tmp_path / "s",
                "--max-actions", 4, "--draws", DRAWS, "--json")
        assert srv.refused == []
    assert r.exit_code == 0, r.output
    doc = _doc(tmp_path / "s")
    assert json.loads(r.stdout) == doc["tables"] and doc["agent"]["agent"] == "native"
    ends = {x["condition"]: x["endpoints"] for x in _units(tmp_path / "s")}
    assert ends["B"]["timely_restart"] and ends["B"]["verified_recovery"] and not ends["B"]["blames_click"]
    assert not ends["A"]["timely_restart"] and ends["A"]["blames_click"] and ends["A"]["text"]
    for c in ("A", "B"):
        assert (tmp_path / "s" / "episodes" / f"{cp.id}-{c}" / "conversation.jsonl").is_file()
    assert T.check_study(tmp_path / "s")[0]


def test_under_the_d1_harness_each_action_is_charged_two_seconds(ckpts, tmp_path):
    choice = build_agent(AgentOptions(agent="paper_filler", harness="d1"))
    T.run_study([ckpts / "d"], choice.make, tmp_path / "s", conditions=("B",), max_actions=3, draws=DRAWS,
                harness="d1")
    for r in _units(tmp_path / "s"):
        e = r["endpoints"]
        assert e["restart_action"] == 2 and e["restart_seconds"] >= 2 * 2.0     # the wait, the restart
        head = json.loads((tmp_path / "s" / r["folder"] / "events.jsonl").open().readline())
        assert head["settings"]["action_latency"] == 2.0 and head["settings"]["viewport"] is None   # its screen


def test_a_paper_agent_reads_the_board_from_the_takeover_context_alone(ckpts, tmp_path):
    """Without the exact prefix, the harness's takeover context (its prefix text) is enough: the
    actions read back are the ones dispatched, and the rebuilder, told, rebuilds the very dead end."""
    from longpuzzle.agents.harness.replay import takeover_at
    from longpuzzle.agents.action_text import prefix_actions
    from longpuzzle.agents.paper_agents import PaperRebuilderAgent

    cp = load_checkpoints(ckpts / "d")[0]
    tk = takeover_at(cp.episode_dir, cp.step)
    assert prefix_actions(tk.prefix) == T.public_prefix(cp.episode_dir, cp.step)
    assert prefix_actions(["step 3: click(1, 2) -> refused: outside the frame"]) == []
    with pytest.raises(ValueError):
        prefix_actions(["step 1: teleport(1) -> screen_changed"])
    out = tmp_path / "c"
    cp.continue_with(PaperRebuilderAgent(folder=out), note=T.condition_text("dead_end", "B", "bolt_unscrew"),
                     out=out, settings=T.continuation_settings(cp, max_actions=30))
    e = T.endpoints(out, cp.level, cp.kind)
    assert e["timely_restart"] and e["recurrence"]
    assert board_digest(restore_step(out, e["restart_action"] + e["recurrence_actions"])) == cp.state_sha256


def test_the_reports_diagnostics_section_renders_the_takeover_study(filler_study, tmp_path):
    out, _ = filler_study
    r = run("report", "--study", out, "--out", tmp_path / "rep")
    assert r.exit_code == 0, r.output
    page = (tmp_path / "rep" / "report.html").read_text()
    for t in _doc(out)["tables"]:
        assert t["title"] in page
    assert "paper_filler" in page


def test_a_restart_to_the_levels_start_is_a_verified_recovery_when_the_certificate_is_unknown(tmp_path):
    """Past the certifier's budget (large Nut and Bolt boards) the evaluator says "unknown": the
    level's own start after a recovery action still counts (the catalogue's levels are solvable
    from their start); a dead end never does."""
    lvl = "nut_and_bolt/nightmare/1"

    def episode(cert_after_restart):
        lines = [{"type": "header", "format": "longpuzzle-episode/3", "protocol": "objective",
                  "settings": {"charge_agent_time": True}}]
        recs = [({"type": "wait", "ms": 0}, {"moves": 30, "certificate": "dead_end", "effects": []}),
                ({"type": "click", "x": 1, "y": 1}, {"moves": 0, "certificate": cert_after_restart,
                                                     "effects": [{"effect": "restart"}]})]
        for k, (a, rec) in enumerate(recs, 1):
            lines.append({"stream": "public", "step": k, "action": a, "t_agent": 0.1, "t_dispatch": 0.0,
                          "sim_ms": 250, "feedback": {"status": "screen_changed", "executed": True}})
            lines.append({"stream": "private", "step": k,
                          "record": {"screen": f"level:{lvl}", "level": lvl, "win": False, **rec}})
        folder = tmp_path / str(cert_after_restart)
        folder.mkdir()
        (folder / "events.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        return T.endpoints(folder, lvl, "dead_end")

    for cert in ("solvable", "unknown", None):
        e = episode(cert)
        assert e["restart_action"] == 2 and e["timely_restart"] and e["verified_recovery"], cert
        assert e["restart_seconds"] == pytest.approx(0.7)
    assert not episode("dead_end")["verified_recovery"]


TELLER = '''
from longpuzzle.agents.base import BaseAgent, FinalAnswer, first_action


class Teller(BaseAgent):
    """Stops at once, saying what the takeover context handed it (an agent file, run isolated)."""

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        tk = getattr(self, "takeover", None)
        if tk is None:
            return FinalAnswer("no takeover")
        return FinalAnswer(f"taken over at step {tk.step} after {len(tk.prefix)} actions, {len(tk.pairs)} pairs")
'''


def test_an_agent_file_takes_over_from_its_sandbox(ckpts, tmp_path):
    """The agent kinds eval accepts include an agent file: run isolated, it is handed the
    takeover context through its sandbox channel, and its stop is a valid end that replays."""
    one = tmp_path / "one"
    shutil.copytree(ckpts / "d", one)
    (one / "checkpoints.jsonl").write_text((one / "checkpoints.jsonl").read_text().splitlines()[0] + "\n")
    cp = load_checkpoints(one)[0]
    agent = tmp_path / "teller.py"
    agent.write_text(TELLER)
    r = run("diagnose", "takeover", "--checkpoints", one, "--conditions", "B", "--agent", agent,
            "--max-actions", 3, "--draws", DRAWS, "--out", tmp_path / "s")
    assert r.exit_code == 0, r.output
    (rec,) = _units(tmp_path / "s")
    assert rec["status"] == "valid" and not rec["endpoints"]["timely_restart"]
    events = [json.loads(x) for x in (tmp_path / "s" / rec["folder"] / "events.jsonl").read_text().splitlines()]
    assert [e["final_answer"] for e in events if "final_answer" in e] == [f"taken over at step {cp.step} after {cp.step} actions, 4 pairs"]
    assert T.check_study(tmp_path / "s")[0]


@pytest.mark.parametrize("protocol", ["general_e2e", "qwen", "uitars"])
def test_a_model_of_every_protocol_takes_over(ckpts, tmp_path, protocol):
    """Beyond native (above): a scripted model on 127.0.0.1 speaking each other protocol eval
    accepts, told the board is lost (B), clicks the screen's restart: a timely, verified
    restart, and the continuation replays."""
    from longpuzzle.agents.testing.endpoints import ReplayScript, gesture_script

    one = tmp_path / "one"
    shutil.copytree(ckpts / "d", one)
    (one / "checkpoints.jsonl").write_text((one / "checkpoints.jsonl").read_text().splitlines()[0] + "\n")
    cp = load_checkpoints(one)[0]
    with ScriptedServer(ReplayScript(gesture_script(protocol, [cp.restart["action"]]))) as srv:
        r = run("diagnose", "takeover", "--checkpoints", one, "--conditions", "B", "--agent", protocol,
                "--model", "scripted-model", "--base-url", srv.url_v1, "--api-key-env", "", "--max-actions", 3,
                "--draws", DRAWS, "--out", tmp_path / "s")
        assert srv.refused == []
    assert r.exit_code == 0, r.output
    (rec,) = _units(tmp_path / "s")
    assert rec["status"] == "valid" and rec["endpoints"]["timely_restart"] and rec["endpoints"]["verified_recovery"]
    assert _doc(tmp_path / "s")["agent"]["agent"] == protocol
    assert T.check_study(tmp_path / "s")[0]


@pytest.mark.parametrize("command", [["takeover", "--checkpoints", "CK"], ["retry", "--from", "CK/episodes"],
                                     ["branch", "run", "--from", "CK/episodes"]])
@pytest.mark.parametrize("tool", ["vista-images", "code-cua"])
def test_a_tool_agent_cannot_continue_a_state_one_error_line(ckpts, tmp_path, command, tool):
    """The VISTA / Code Execution tool agents drive their own episode through tools, so no
    continuation can ask them step by step: refused before any work (it failed three times on
    the infrastructure per assignment), as diagnose rules refuses them."""
    argv = ["diagnose", *(a.replace("CK", str(ckpts / "d")) for a in command), "--agent", tool,
            "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "", "--out", tmp_path / "s"]
    r = run(*argv)
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"error: --agent {tool} drives its own episode through tools")
    assert not (tmp_path / "s").exists()
