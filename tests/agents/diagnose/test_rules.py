"""RQ4 (agents/diagnose/rules.py, workflow.py, rules_study.py): the rule cards declared through
the GameSpec, the rule probes and their grader (right, wrong and evasive answers), the probe
hook of the agent API (in-process, isolated agent file, model agent through the scripted HTTP
endpoint on 127.0.0.1: its probe request separate from the acting conversation), the P1
controller, and the 2 x 2 study end to end with scripted agents."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longpuzzle.agents.api import BaseAgent, answer_from_told
from longpuzzle.agents.diagnose.rules import (
    RuleCardError, grade, make_question, parse_answer, probe_steps, rule_card,
)
from longpuzzle.agents.diagnose.rules_study import CELLS, check_study, run_session, run_study
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.registry import load_agent
from longpuzzle.engine.declaration import GameSpec, load_data
from longpuzzle.engine.registry import puzzles

ROOT = Path(__file__).resolve().parents[3]
GAMES = ("bolt_unscrew", "rush_hour", "nut_and_bolt", "truck_escape", "maze_paint", "color_connect")


def right_answer(q) -> str:
    return "\n".join(f"S{i}: {'true' if t else 'false'}" for i, t in enumerate(q.truths, 1))


# ---- the cards --------------------------------------------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_every_game_declares_a_card_of_rules_only(game):
    card = rule_card(game)
    assert len(card.rules) >= 5
    for lang in ("en", "zh"):
        text = card.text(lang)
        lines = text.splitlines()
        assert lines[0] == card.title[lang] and len(lines) == 1 + len(card.rules)
        assert [ln.split(".")[0] for ln in lines[1:]] == [str(k) for k in range(1, len(card.rules) + 1)]
        assert "{" not in text and "}" not in text                   # button labels filled in
        # nothing of a level: no coordinates, no level numbers, no move sequences
        assert not re.search(r"\d+\s*[,x]\s*\d+|level \d|第\s*\d+\s*关|\(\d", text, re.IGNORECASE)
    for r in card.rules:                                             # a false counterpart differs
        assert r.text["en"] != r.false["en"] and r.text["zh"] != r.false["zh"]
    # the zh card names the buttons as the game's own screen labels them
    if game == "bolt_unscrew":
        assert "重开" in card.text("zh") and "Restart" in card.text("en")


def test_a_card_is_one_optional_field_of_the_game_spec():
    entry = {"title": {"en": "Rules of X:"}, "rules": [{"en": "A.", "false": {"en": "B."}}]}
    assert GameSpec(id="x", rules="m:P", rule_card=entry).rule_card_data() == entry
    assert GameSpec(id="x", rules="m:P").rule_card_data() is None
    # Sokoban (examples/sokoban) brings its own, in the same format
    doc = json.loads((ROOT / "examples/sokoban/longpuzzle_sokoban/rule_card.json").read_text(encoding="utf-8"))
    sok = doc["games"]["sokoban"]
    assert len(sok["rules"]) == 5 and all({"en", "zh", "false"} <= set(r) for r in sok["rules"])
    decl = (ROOT / "examples/sokoban/longpuzzle_sokoban/declaration.py").read_text(encoding="utf-8")
    assert 'rule_card=f"{PACKAGE}:rule_card.json"' in decl
    assert load_data("longpuzzle.puzzles:rule_cards.json")["games"].keys() >= set(GAMES)


def test_a_game_without_a_card_is_one_clear_error(monkeypatch):
    from longpuzzle.agents.diagnose import rules as rules_mod

    monkeypatch.setattr(rules_mod, "spec", lambda g: GameSpec(id=g, rules="m:P"))
    with pytest.raises(RuleCardError, match="declares no rule card"):
        rules_mod.rule_card("maze_paint")
    monkeypatch.setattr(rules_mod, "spec", lambda g: GameSpec(id=g, rules="m:P", rule_card={"title": {"en": "t"}}))
    with pytest.raises(RuleCardError, match="malformed"):
        rules_mod.rule_card("maze_paint")


# ---- probes and the grader ----------------------------------------------------------------

def test_a_probe_asks_both_statements_of_every_rule_in_a_fixed_order():
    card = rule_card("maze_paint")
    q0, q0b, q1 = make_question(card, 0), make_question(card, 0), make_question(card, 1)
    assert q0 == q0b and q0.probe.statements != q1.probe.statements       # fixed per index, varies by index
    n = len(card.rules)
    assert sorted(q0.probe.rules) == sorted(list(range(1, n + 1)) * 2) and sum(q0.truths) == n
    for s, k, t in zip(q0.probe.statements, q0.probe.rules, q0.truths):
        assert s == card.rule(k, "en", t) and f"S{q0.probe.statements.index(s) + 1}: {s}" in q0.probe.text
    zh = make_question(card, 0, "zh")
    assert "迷宫涂色" in zh.probe.text and zh.probe.card_title == card.title["zh"]


def test_the_grader_on_right_wrong_and_evasive_answers():
    card = rule_card("nut_and_bolt")
    q = make_question(card, 2)
    n = len(card.rules)
    right = right_answer(q)
    g = grade(card, q, right)
    assert g.rules == (True,) * n and g.share == 1.0 and g.right == g.answered == 2 * n
    # wrong: every verdict flipped; a constant answer; one rule's false counterpart believed
    flipped = right.replace("true", "X").replace("false", "true").replace("X", "false")
    assert grade(card, q, flipped).share == 0.0
    assert grade(card, q, "\n".join(f"S{i}: true" for i in range(1, 2 * n + 1))).share == 0.0
    i_false = next(i for i, (k, t) in enumerate(zip(q.probe.rules, q.truths)) if k == 3 and not t)
    one_wrong = right.splitlines()
    one_wrong[i_false] = f"S{i_false + 1}: true"
    g = grade(card, q, "\n".join(one_wrong))
    assert g.rules == tuple(k != 3 for k in range(1, n + 1)) and g.share == pytest.approx((n - 1) / n)
    # evasive: nothing, prose, unknown, both verdicts, two lines that disagree
    for evasive in ("", "I would rather keep playing.", "\n".join(f"S{i}: unknown" for i in range(1, 2 * n + 1)),
                    "\n".join(f"S{i}: true or false" for i in range(1, 2 * n + 1))):
        g = grade(card, q, evasive)
        assert g.share == 0.0 and g.right == 0
    assert parse_answer("S1: true\nS1: false\nS2: yes", 2) == [None, True]
    # a wordy but clear answer, Chinese verdicts and markdown are read
    assert parse_answer("**S1**: False - tapping does nothing\n- S2：对\nS3) 错", 3) == [False, True, False]
    assert parse_answer("S9: true\nS0: true", 2) == [None, None]        # out of range: ignored


def test_the_probe_schedule_gives_five_probes():
    assert probe_steps(600) == (0, 150, 300, 450)
    assert probe_steps(8) == (0, 2, 4, 6)


def test_an_agent_answers_from_what_it_was_told():
    card = rule_card("bolt_unscrew")
    q = make_question(card, 0)
    a = BaseAgent()
    a.reset("Complete all levels of Bolt Unscrew at easy difficulty in the Game Suite", {})
    assert grade(card, q, a.probe(q.probe)).share == 0.0 and "unknown" in a.probe(q.probe)
    a.note(card.text("en"))                                          # told the card: knows every rule
    assert grade(card, q, a.probe(q.probe)).share == 1.0
    # a card whose rule 2 reads otherwise: rule 2 is then stated wrongly, the others right
    told = card.text("en").replace(card.rule(2), card.rule(2, truth=False))
    g = grade(card, q, answer_from_told(q.probe, told))
    assert g.rules == tuple(k != 2 for k in range(1, len(card.rules) + 1))


def test_an_isolated_agent_file_answers_a_probe_through_its_sandbox(tmp_path):
    from longpuzzle.agents.harness.isolated import AgentFile

    f = tmp_path / "agent.py"
    f.write_text("from longpuzzle.agents.base import BaseAgent\n"
                 "class A(BaseAgent):\n"
                 "    def act(self, obs):\n        return {'type': 'wait', 'ms': 0}\n"
                 "    def probe(self, probe):\n"
                 "        return '\\n'.join(f'S{i}: ' + ('true' if s.startswith('The level') else 'false')\n"
                 "                         for i, s in enumerate(probe.statements, 1))\n")
    card = rule_card("maze_paint")
    q = make_question(card, 0)
    c = AgentFile(f).caller(30)
    try:
        c.reset("x", {"frame": [540, 960]})
        answer = c.probe(q.probe)
    finally:
        c.close()
    assert len(answer.splitlines()) == len(q.truths)
    want = ["true" if s.startswith("The level") else "false" for s in q.probe.statements]
    assert [ln.split(": ")[1] for ln in answer.splitlines()] == want


# ---- sessions and the study ---------------------------------------------------------------------

def test_p1_leaves_every_puzzle_move_to_the_agent_and_the_session_replays(tmp_path):
    from longpuzzle.agents.harness.replay import replay_episode

    st = Settings(budget=600.0, max_actions=24)
    e = run_session(load_agent("greedy"), "maze_paint/easy", "K1P1", settings=st, folder=tmp_path / "s")
    assert replay_episode(tmp_path / "s").ok
    ctl = e["controller"]
    assert ctl["entry"] == 2 and ctl["advance"] >= 1 and e["LC"] > 0        # the game's card, the difficulty card
    assert e["agent_actions"] + e["controller_actions"] == 24
    events = [json.loads(x) for x in (tmp_path / "s/events.jsonl").read_text().splitlines()]
    acts = {r["step"]: r for r in events if r.get("stream") == "private"}
    wf = [json.loads(x) for x in (tmp_path / "s/workflow.jsonl").read_text().splitlines()]
    assert not any(w["error"] for w in wf) and e["controller_errors"] == 0
    for w in wf:
        # the controller acts only off the board: at entry, or on a level the evaluator saw won
        prev = acts.get(w["step"] - 1, {}).get("record", {})
        assert (w["kind"] == "entry" and prev.get("screen") != "level") or prev.get("win") or \
            prev.get("P") == 1.0, (w, prev)
    probes = [json.loads(x) for x in (tmp_path / "s/probes.jsonl").read_text().splitlines()]
    assert [p["index"] for p in probes] == [0, 1, 2, 3, 4] and [p["after_actions"] for p in probes][:1] == [0]
    assert all(p["grade"]["share"] == 1.0 for p in probes)                   # K1: the card was told


def test_the_bolt_controller_restarts_a_certified_dead_end(tmp_path):
    """An agent that plays Bolt Unscrew hard 1 into a no-free-hole dead end (the fatal policy of
    diagnose checkpoints) and then only waits: P1's controller restarts the level once the
    board is stable and certified, P0 leaves it lost."""
    from longpuzzle.agents.diagnose.checkpoint_sources import plan
    from longpuzzle.agents.scripted import AppModelAgent
    from longpuzzle.engine.catalog import load_level

    moves = plan(load_level("bolt_unscrew/hard/1"), "fatal", 1)[0][0]

    class Fatal(AppModelAgent):
        name = "fatal"

        def __init__(self):
            super().__init__()
            self.todo = list(moves)

        def gesture(self, obs):
            if self.todo:
                return self.model.gesture_for(self.todo.pop(0))
            return {"type": "wait", "ms": 500}

    st = Settings(budget=600.0, max_actions=len(moves) + 8)
    on = run_session(Fatal(), "bolt_unscrew/hard", "K0P1", settings=st, folder=tmp_path / "p1")
    off = run_session(Fatal(), "bolt_unscrew/hard", "K0P0", settings=st, folder=tmp_path / "p0")
    assert on["controller"]["deadlock_restarts"] == 1 and on["controller"]["entry"] == 2
    assert off["controller_actions"] == 0
    wf = [json.loads(x) for x in (tmp_path / "p1/workflow.jsonl").read_text().splitlines()]
    restart = next(w for w in wf if w["kind"] == "deadlock_restarts")
    events = [json.loads(x) for x in (tmp_path / "p1/events.jsonl").read_text().splitlines()]
    rec = {r["step"]: r["record"] for r in events if r.get("stream") == "private"}
    # the board before the restart carried the certificate (no usable hole), the one after it is the start
    assert rec[restart["step"] - 1]["diagnostics"]["usable_holes"] == 0
    assert rec[restart["step"]]["restarts"] == 1 and rec[restart["step"]]["diagnostics"]["usable_holes"] > 0
    p0 = [json.loads(x) for x in (tmp_path / "p0/events.jsonl").read_text().splitlines()]
    last = [r["record"] for r in p0 if r.get("stream") == "private"][-1]
    assert last["restarts"] == 0 and last["diagnostics"]["usable_holes"] == 0        # still lost


def test_the_study_end_to_end_with_scripted_agents(tmp_path):
    """The rulebook agent (greedy when told the card, half its gestures guessed without it): the
    card raises both the rules stated correctly and LC; the controller takes the menus."""
    st = Settings(budget=600.0, max_actions=24)
    doc = run_study(["maze_paint/easy"], lambda objective, folder, r: load_agent("rulebook", seed=r), tmp_path / "study", repeats=2,
                    settings=st, agent_label="rulebook", draws=300)
    out = tmp_path / "study"
    units = [json.loads(x) for x in (out / "units.jsonl").read_text().splitlines()]
    assert len(units) == 8 and {u["condition"] for u in units} == set(CELLS)
    assert [u["condition"] for u in units[:4]] == list(CELLS) and units[4]["condition"] == CELLS[1]   # rotated
    assert doc["kind"] == "longpuzzle-study" and doc["experiment"] == "rules" and (out / "figure5c.png").is_file()
    t16, tc, timing, curve = doc["tables"]
    rows = {r[0]: r for r in t16["rows"]}
    assert rows["K0P0"][5] == "0/60" and rows["K1P0"][5] == "60/60"           # 6 rules x 5 probes x 2 sessions
    assert rows["K0P0"][9] == "0.0" and float(rows["K0P1"][9]) > 0              # only P1 has controller actions
    assert [r[10] for r in t16["rows"]] == [0, 0, 0, 0]                         # every one of them took effect
    contrasts = {r[0]: r for r in tc["rows"]}
    assert list(contrasts) == ["dK|P0", "dK|P1", "dP|K0", "dP|K1", "dKxP"]
    assert contrasts["dK|P0"][4].startswith("+100.0") and contrasts["dKxP"][4].startswith("+0.0")
    assert float(contrasts["dK|P0"][3].split()[0]) > 0 and float(contrasts["dK|P1"][3].split()[0]) > 0
    assert [r[1] for r in curve["rows"]] == ["0.0", "0.0", "100.0", "100.0"]
    # K1: every rule of both sessions stated at the first probe already; K0: none ever
    assert [r[1:3] for r in timing["rows"]] == [[0, 0], [0, 0], [12, 0], [12, 0]]
    k1p0 = [u["endpoints"] for u in units if u["condition"] == "K1P0"]
    assert timing["rows"][2][3] == f"{sum(not e['completed'] for e in k1p0)}/2"
    ok, problems = check_study(out)
    assert ok, problems
    # a probe answer changed afterwards is found: the folder's endpoints no longer match
    p = out / units[2]["folder"] / "probes.jsonl"
    recs = [json.loads(x) for x in p.read_text().splitlines()]
    recs[0]["answer"] = ""
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ok, problems = check_study(out, replay=False)
    assert not ok and any("endpoints differ" in x for x in problems)


def test_the_command_line(tmp_path):
    from longpuzzle.cli import cli

    r = CliRunner().invoke(cli, ["diagnose", "rules", "--card", "color_connect", "--lang", "zh"])
    assert r.exit_code == 0 and r.output.startswith("颜色连线的规则：\n1. ")
    r = CliRunner().invoke(cli, ["diagnose", "rules", "--objective", "maze_paint/impossible", "--agent", "greedy",
                                 "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and r.output.startswith("error: unknown objective") and "Traceback" not in r.output
    assert not (tmp_path / "x").exists()
    r = CliRunner().invoke(cli, ["diagnose", "rules", "--check", str(tmp_path)])
    assert r.exit_code == 2 and "no readable study.json" in r.output


# ---- a model agent through the scripted HTTP endpoint -----------------------------------------

@pytest.mark.parametrize("api,memory", [("openai-chat", None), ("anthropic", None), ("openai-chat", "d1")])
def test_a_model_agent_answers_probes_in_separate_requests(tmp_path, api, memory):
    """Also under the D.1 harness's memory (--harness d1): the probe's copy is the windowed
    context the next acting request would hold."""
    from longpuzzle.agents.models.agent import ModelAgent
    from longpuzzle.agents.models.config import ModelConfig
    from longpuzzle.agents.testing.endpoints import (
        ReplayScript, ScriptedServer, gesture_script, solver_gestures,
    )

    acting = ReplayScript(gesture_script("native", solver_gestures("maze_paint/easy"), (540, 960)))
    card = rule_card("maze_paint")
    seen = {"probe": [], "acting": []}

    questions = [make_question(card, i) for i in range(5)]

    def script(api, body):
        last = json.dumps(body["messages"][-1], ensure_ascii=False)      # (Anthropic: tool results + the question)
        q = next((q for q in questions if json.dumps(q.probe.text, ensure_ascii=False)[1:-1] in last), None)
        if q is not None:
            seen["probe"].append(body)
            # the model "knows" the card when the request shows it: it answers from the card's lines
            know = f"1. {card.rule(1)}" in json.dumps(body, ensure_ascii=False)   # the card's line, not a statement
            return {"text": right_answer(q) if know else "\n".join(f"S{i}: unknown" for i in range(1, len(q.truths) + 1))}
        seen["acting"].append(body)
        return acting(api, body)

    with ScriptedServer(script) as srv:
        cfg = ModelConfig(model="scripted-model", api=api, base_url=srv.url if api == "anthropic" else srv.url_v1,
                          api_key_env="",
                          timeout=10.0, max_retries=0)
        agent = ModelAgent("native", cfg, folder=tmp_path / "s", **({"memory": memory} if memory else {}))
        e = run_session(agent, "maze_paint/easy", "K1P0", settings=Settings(budget=600.0, max_actions=12,
                                                                            action_timeout=None),
                        folder=tmp_path / "s")
        assert srv.refused == []                      # every request (probes included) as the real API takes it
    assert len(seen["probe"]) == 5 and e["rules_share"] == 1.0
    # no acting request ever carries a probe's question or its answer
    for body in seen["acting"]:
        dump = json.dumps(body, ensure_ascii=False)
        assert "A question about the rules" not in dump and "S1: true" not in dump and "S1: false" not in dump
    # a probe request is the acting context so far plus the question: a copy, then gone
    last_probe = seen["probe"][1]["messages"]
    later = next(b["messages"] for b in seen["acting"] if len(b["messages"]) >= len(last_probe) - 1)
    assert last_probe[-1]["role"] == "user" and later[:2] == last_probe[:2]
    assert "A question about the rules" in json.dumps(last_probe[-1])
    conv = [json.loads(x) for x in (tmp_path / "s/conversation.jsonl").read_text().splitlines()]
    kinds = [r.get("kind") for r in conv if r.get("type") == "call"]
    assert kinds.count("probe") == 5
    assert not any("A question about the rules" in json.dumps(r) for r in conv if r.get("type") == "message")


def test_titles_of_the_cards_name_the_games():
    titles = {p.id: p.title for p in puzzles()}
    for g in GAMES:
        assert titles[g] in rule_card(g).title["en"]


def test_the_zh_interface_gets_the_chinese_card_and_probes(tmp_path):
    st = Settings(budget=600.0, max_actions=8, lang="zh")
    e = run_session(load_agent("rulebook"), "maze_paint/easy", "K1P0", settings=st, folder=tmp_path / "s")
    head = json.loads((tmp_path / "s/events.jsonl").read_text().splitlines()[0])
    card = rule_card("maze_paint")
    assert head["instruction"].endswith("\n\n" + card.text("zh"))
    probes = [json.loads(x) for x in (tmp_path / "s/probes.jsonl").read_text().splitlines()]
    assert probes[0]["statements"][0] in {card.rule(k, "zh", t) for k in range(1, 7) for t in (True, False)}
    assert e["rules_share"] == 1.0                      # it read the Chinese card: every rule stated correctly


def test_the_rulebook_agent_knows_the_rules_once_told_the_card():
    a = load_agent("rulebook")
    a.reset("Complete all levels of Nut and Bolt at easy difficulty in the Game Suite", {"frame": [540, 960]})
    assert not a.knows
    a.note(rule_card("nut_and_bolt").text("zh"))
    assert a.knows


def test_the_command_runs_a_model_agent_through_the_scripted_endpoint(tmp_path):
    """`diagnose rules --model`: every session's conversation is logged in its own folder, its
    five probes are calls of their own, and K1's probe requests show the card, K0's do not."""
    from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, last_user_text
    from longpuzzle.cli import cli

    waits = ReplayScript(gesture_script("native", [{"type": "wait", "ms": 100}] * 40, (540, 960)))
    card = rule_card("maze_paint")
    probes = []

    def script(api, body):
        if last_user_text(api, body).startswith("A question about the rules"):
            probes.append(f"1. {card.rule(1)}" in json.dumps(body, ensure_ascii=False))     # the card's line
            return {"text": "S1: unknown"}
        return waits(api, body)

    with ScriptedServer(script) as srv:
        r = CliRunner().invoke(cli, ["diagnose", "rules", "--objective", "maze_paint/easy", "--model", "scripted-model",
                                     "--base-url", srv.url_v1, "--api", "openai-chat", "--api-key-env", "",
                                     "--max-actions", "6", "--draws", "100", "--out", str(tmp_path / "s")])
        assert srv.refused == []
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "s/study.json").read_text())
    assert doc["agent"] == "native:scripted-model" and len(probes) == 20
    units = [json.loads(x) for x in (tmp_path / "s/units.jsonl").read_text().splitlines()]
    for u in units:
        conv = [json.loads(x) for x in (tmp_path / "s" / u["folder"] / "conversation.jsonl").read_text().splitlines()]
        assert [c["kind"] for c in conv if c.get("type") == "call"].count("probe") == 5
    assert probes.count(True) == 10                     # the K1 sessions' probes saw the card
    ok, problems = check_study(tmp_path / "s")
    assert ok, problems


def test_the_tables_count_rules_learnt_during_play():
    """rules_tables on hand-made endpoints: a rule first right at probe 3 is learnt during play;
    one right at probe 1 only is ever stated but not later; the contrasts pair the cells."""
    from longpuzzle.agents.diagnose.rules_study import rules_tables

    def ends(lc, probes, completed=False):
        shares = [sum(p) / len(p) for p in probes]
        return {"end": "max_actions", "LC": lc, "completed": completed, "FGP": lc, "probes": probes,
                "rules_share": sum(shares) / len(shares), "first_probe": shares[0], "last_probe": shares[-1],
                "cell": None, "agent_actions": 10, "controller_actions": 0, "controller": {}}
    no, yes = [False, False], [True, True]
    cells = {"K0P0": ends(0.2, [no, no, [True, False], [True, False], [True, False]]),
             "K0P1": ends(0.4, [[True, False], no, no, no, no]),
             "K1P0": ends(0.5, [yes] * 5),
             "K1P1": ends(1.0, [yes] * 5, completed=True)}
    units = [{"unit": "b0", "source": "o/x", "condition": c, "order": i, "attempt": 1, "status": "valid",
              "folder": f"episodes/{c}", "endpoints": e} for i, (c, e) in enumerate(cells.items())]
    t16, tc, timing, curve = rules_tables(units, draws=50)
    assert [r[1:4] for r in timing["rows"]] == [[1, 1, "0/0"], [1, 0, "0/0"], [2, 0, "1/1"], [2, 0, "0/1"]]
    c = {r[0]: r[3].split()[0] for r in tc["rows"]}
    assert c == {"dK|P0": "+30.0", "dK|P1": "+60.0", "dP|K0": "+20.0", "dP|K1": "+50.0", "dKxP": "+30.0"}
    assert curve["rows"][0][1:] == ["0.0", "0.0", "50.0", "50.0", "50.0"]


def test_an_infrastructure_failure_is_replaced_and_a_stopped_study_resumes(tmp_path):
    """A session whose agent's infrastructure fails is replaced under the same assignment (the
    first valid attempt is primary); a study run again on its folder keeps what units.jsonl
    records, drops a line cut off by a kill and plays a session cut off before its end again."""
    from longpuzzle.agents.api import InfrastructureError

    made = []

    class Flaky(BaseAgent):
        def act(self, obs):
            raise InfrastructureError("the provider is down")

    def make_agent(objective, folder, repeat):
        made.append(folder.name)
        return Flaky() if len(made) == 2 else load_agent("greedy", seed=repeat)

    st = Settings(budget=600.0, max_actions=4)
    out = tmp_path / "study"
    run_study(["maze_paint/easy"], make_agent, out, settings=st, draws=50)
    units = [json.loads(x) for x in (out / "units.jsonl").read_text().splitlines()]
    assert [(u["condition"], u["attempt"], u["status"]) for u in units] == [
        ("K0P0", 1, "valid"), ("K0P1", 1, "replaced"), ("K0P1", 2, "valid"), ("K1P0", 1, "valid"),
        ("K1P1", 1, "valid")]
    assert made[1:3] == ["maze_paint-easy-r0-K0P1", "maze_paint-easy-r0-K0P1-a2"]
    doc = json.loads((out / "study.json").read_text())
    assert doc["tables"][0]["rows"][1][1] == 1                     # K0P1: its primary session only
    # stopped: the last session cut off (no result.json) and its log line cut mid-way
    lines = (out / "units.jsonl").read_text().splitlines()
    (out / "units.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    (out / units[-1]["folder"] / "result.json").unlink()
    made.clear()
    doc2 = run_study(["maze_paint/easy"], make_agent, out, settings=st, draws=50)
    assert made == ["maze_paint-easy-r0-K1P1"] and doc2["tables"] == doc["tables"]
    assert len((out / "units.jsonl").read_text().splitlines()) == 5
    ok, problems = check_study(out)
    assert ok, problems


def test_a_controller_action_that_changes_nothing_is_counted_as_its_error(tmp_path, monkeypatch):
    from longpuzzle.agents.diagnose import workflow

    real = workflow.Controller.action
    calls = []

    def action(self):
        calls.append(1)
        if len(calls) == 2:                       # after the agent's wait: a tap on the empty corner
            return "entry", {"type": "click", "x": 2, "y": 2}
        return real(self)

    monkeypatch.setattr(workflow.Controller, "action", action)
    e = run_session(load_agent("greedy"), "maze_paint/easy", "K0P1", settings=Settings(budget=600.0, max_actions=8),
                    folder=tmp_path / "s")
    wf = [json.loads(x) for x in (tmp_path / "s/workflow.jsonl").read_text().splitlines()]
    assert [w["error"] for w in wf][:3] == [True, False, False] and e["controller_errors"] == 1


def test_an_agent_file_plays_sessions_and_answers_the_probes_from_its_sandbox(tmp_path):
    """An agent file (isolated, as eval runs it) in a K0P0 and a K1P1 session: the controller
    enters for it under P1, its default probe answer comes through the sandbox from what it was
    told (every rule under K1, none under K0: five probes each), and both sessions replay."""
    from longpuzzle.agents.agent_options import AgentOptions, build_agent
    from longpuzzle.agents.harness import replay_episode

    path = tmp_path / "stopper.py"
    path.write_text("from longpuzzle.agents.base import BaseAgent, FinalAnswer, first_action\n"
                    "class Stopper(BaseAgent):\n"
                    "    def act(self, obs):\n"
                    "        return first_action(obs) if obs.frame is None else FinalAnswer('done')\n")
    choice = build_agent(AgentOptions(agent=str(path)))
    ends = {}
    for cell in ("K0P0", "K1P1"):
        folder = tmp_path / cell
        agent = choice.make("maze_paint/easy", folder)
        assert agent.trusted is False
        ends[cell] = run_session(agent, "maze_paint/easy", cell, folder=folder,
                                 settings=Settings(max_actions=4, action_timeout=None))
        assert ends[cell]["end"] == "final_answer" and len(ends[cell]["probes"]) == 5
        assert replay_episode(folder).ok
    assert ends["K0P0"]["rules_share"] == 0.0 and ends["K1P1"]["rules_share"] == 1.0
    assert ends["K0P0"]["controller_actions"] == 0 and ends["K1P1"]["controller"]["entry"] > 0


def test_json_prints_the_study_s_tables_as_takeover_and_retry_do(tmp_path):
    from longpuzzle.cli import cli

    out = tmp_path / "s"
    r = CliRunner().invoke(cli, ["diagnose", "rules", "--objective", "maze_paint/easy", "--max-actions", "4",
                                 "--draws", "50", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == json.loads((out / "study.json").read_text())["tables"]
