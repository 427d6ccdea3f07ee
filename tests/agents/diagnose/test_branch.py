"""RQ1's same-state action intervention (agents/diagnose/branch.py): states from scratch and
from a recorded run, branch moves verified by the oracle, the balanced schedule, replaced
infrastructure failures, a study folder that re-derives."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
from click.testing import CliRunner

from longpuzzle.agents.base import BaseAgent, InfrastructureError, first_action
from longpuzzle.agents.diagnose.branch import (
    BranchError, check_study, find_states, generate_states, play_branch, run_study, schedule,
)
from longpuzzle.agents.harness import Settings, read_events, replay_episode, restore_step, run_objective
from longpuzzle.agents.report.data import load_trajectory
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.cli import cli
from longpuzzle.solvers.oracle import Oracle

LEVEL = "maze_paint/easy/1"
LIMIT = Settings(budget=300.0, max_actions=12, action_timeout=None)
LIMITS = {"budget": 300.0, "max_actions": 12}


class Swiper(BaseAgent):
    """Swipes right, down, left, up in turn: it needs no model of the app, so it plays on from
    any state it is handed (and it detours: its moves have a cost)."""
    name = "swiper"

    def __init__(self):
        self.i = 0

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        self.i += 1
        return {"type": "swipe", "direction": ("right", "down", "left", "up")[self.i % 4]}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("branch")
    states = generate_states(LEVEL, root / "study" / "sources" / "src", limit=2)
    doc = run_study(states, lambda o, f: Swiper(), root / "study", repeats=2, **LIMITS, agent="swiper", draws=500)
    return root / "study", states, doc


def test_states_from_scratch_have_a_costly_and_a_shortest_move_by_the_oracle(study):
    folder, states, _ = study
    assert len(states) == 2 and len({s.step for s in states}) == 2
    o = Oracle(LEVEL)
    for s in states:
        suite = restore_step(s.episode, s.step)
        assert suite.level.id == LEVEL
        st = suite.session.state
        assert o.at(st).distance == s.distance >= 2
        assert o.cost(st, s.costly["move"]).cost == s.costly["cost"] > 0
        assert o.cost(st, s.shortest["move"]).cost == 0 and not s.costly["seen"]


def test_each_branch_episode_plays_exactly_its_move_and_replays(study):
    folder, states, doc = study
    o = Oracle(LEVEL)
    for s in states:
        before = restore_step(s.episode, s.step).session.state
        for arm in ("costly", "shortest"):
            b = doc["branches"][f"{s.id}-{arm}"]
            assert replay_episode(folder / b["folder"]).ok
            after = restore_step(folder / b["folder"], b["step"]).session.state
            assert (after == o.after(before, getattr(s, arm)["move"])[0]).all()
            assert b["distance_after"] == s.distance - 1 + getattr(s, arm)["cost"]


def test_the_schedule_balances_the_branch_order_and_every_unit_has_both_arms(study):
    folder, states, doc = study
    sched = doc["schedule"]
    assert len(sched) == 4 and sched == schedule(states, 2)
    firsts = [u["order"][0] for u in sched]
    assert firsts.count("costly") == firsts.count("shortest") == 2
    units = [json.loads(x) for x in (folder / "units.jsonl").read_text().splitlines()]
    assert len(units) == 8 and all(u["status"] == "valid" for u in units)
    for u in units:           # a continuation stops at the same-level win (its outcome): nothing after it
        assert read_events(folder / u["folder"])[0]["stop_when"] == {"won": [LEVEL]}
    for u in units:           # units.jsonl follows the schedule: order 0 is the arm played first
        s = next(x for x in sched if x["unit"] == u["unit"])
        assert s["order"][u["order"]] == u["condition"]
        assert replay_episode(folder / u["folder"]).ok


def test_the_tables_are_the_paired_counts_of_the_continuations(study):
    folder, states, doc = study
    units = [json.loads(x) for x in (folder / "units.jsonl").read_text().splitlines()]
    won = {arm: sum(u["endpoints"]["completed"] for u in units if u["condition"] == arm) for arm in ("costly", "shortest")}
    t = doc["tables"][0]
    assert t["rows"][-1][-2:] == [f"{won['costly']}/4", f"{won['shortest']}/4"]
    assert doc["tables"][1]["rows"][0][0] == 4
    # the figure draws the same rates (the effect table's), one bar per arm
    assert doc["figures"] == [{"id": "branch", "title": doc["figures"][0]["title"], "png": "figures/branch.png"}]
    assert (folder / "figures" / "branch.png").read_bytes()[:4] == b"\x89PNG"
    ok, problems = check_study(folder)
    assert ok, problems


def test_check_finds_a_tampered_study(study, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(study[0], folder, symlinks=True)
    lines = (folder / "units.jsonl").read_text().splitlines()
    u = json.loads(lines[0])
    u["endpoints"]["completed"] = not u["endpoints"]["completed"]
    (folder / "units.jsonl").write_text("\n".join([json.dumps(u)] + lines[1:]) + "\n")
    ok, problems = check_study(folder)
    assert not ok and any("endpoints differ" in p for p in problems) and any("tables" in p for p in problems)


def test_a_branch_whose_successor_is_not_what_the_oracle_says_is_refused(study, tmp_path):
    s = study[1][0]
    wrong = replace(s, costly={**s.costly, "cost": s.costly["cost"] + 1})
    with pytest.raises(BranchError, match="not solvable at distance"):
        play_branch(wrong, "costly", tmp_path / "b")


def test_states_the_agent_was_seen_in_come_from_a_recorded_run(tmp_path):
    src = generate_states(LEVEL, tmp_path / "src", limit=1)[0]
    from longpuzzle.agents.harness import continue_episode

    continue_episode(src.episode, src.step, Swiper(), settings=LIMIT, out=tmp_path / "seen")
    (tmp_path / "elsewhere").mkdir()
    assert find_states([tmp_path / "elsewhere"]) == []            # no episode: no state
    found = find_states([tmp_path / "seen"], limit=2)
    assert found and all(s.costly["seen"] for s in found)
    o = Oracle(LEVEL)
    steps = {st.step: st for st in load_trajectory(tmp_path / "seen").steps}
    for s in found:           # the costly move is the move the agent played right after s
        played = [e["move"] for e in steps[s.step + 1].record["effects"] if e["effect"] == "move"]
        assert played == [s.costly["move"]]
        assert o.cost(restore_step(s.episode, s.step).session.state, s.costly["move"]).cost == s.costly["cost"] > 0


def test_an_infrastructure_failure_is_replaced_under_the_same_assignment(study, tmp_path):
    calls = []

    class Flaky(Swiper):
        def act(self, obs):
            if obs.frame is not None and not calls:
                calls.append(1)
                raise InfrastructureError("the endpoint went away")
            return super().act(obs)
    s = study[1][0]
    doc = run_study([s], lambda o, f: Flaky(), tmp_path / "s", repeats=1, **LIMITS, draws=100)
    units = [json.loads(x) for x in (tmp_path / "s" / "units.jsonl").read_text().splitlines()]
    assert [u["status"] for u in units] == ["replaced", "valid", "valid"]
    assert units[0]["condition"] == units[1]["condition"] and units[1]["attempt"] == 2
    assert doc["tables"][1]["rows"][0][0] == 1               # one paired unit, counted once


def test_the_command_refuses_bad_input_with_one_error_line(tmp_path):
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--agent", "greedy", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [
        "error: give --from RUN_DIR... (recorded runs) or --level LEVEL (from scratch) "
        "(see 'cli diagnose branch run --help')"]
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--level", LEVEL, "--agent", "nobody",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.startswith("error: unknown agent 'nobody'")
    assert not (tmp_path / "o").exists()
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--check", str(tmp_path)])
    assert r.exit_code == 2 and r.output.startswith("error: ") and "study.json" in r.output


def test_a_study_resumes_where_it_stopped(study, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(study[0], folder, symlinks=True)
    lines = (folder / "units.jsonl").read_text().splitlines()
    # killed after three continuations, the fourth cut off mid-way (no result.json), half a line
    (folder / "units.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    cut = folder / json.loads(lines[3])["folder"]
    (cut / "result.json").unlink()
    for x in lines[4:]:
        shutil.rmtree(folder / json.loads(x)["folder"])
    played = []

    class Counting(Swiper):
        def reset(self, instruction, spec):
            played.append(1)
            super().reset(instruction, spec)
    doc = run_study(study[1], lambda o, f: Counting(), folder, repeats=2, **LIMITS, agent="swiper", draws=500)
    assert len(played) == 5                        # the cut-off one and the four never started
    again = [json.loads(x) for x in (folder / "units.jsonl").read_text().splitlines()[:3]]
    assert again == [json.loads(x) for x in lines[:3]]
    assert doc["tables"] == study[2]["tables"] and check_study(folder)[0]


class OneClick(GreedyAgent):
    """Greedy whose two-click gestures (Bolt Unscrew: the screw, then the hole) are sent one
    click per action, as many models do: a selection is pending between the two."""
    name = "oneclick"

    def act(self, obs):
        q = getattr(self, "queue", [])
        if q:
            return q.pop(0)
        a = super().act(obs)
        if isinstance(a, dict) and a.get("type") == "batch":
            self.queue = list(a["actions"][1:])
            return a["actions"][0]
        return a


def test_a_move_made_of_two_clicks_branches_from_the_idle_step_before_its_selection(tmp_path):
    run_objective(OneClick(seed=0), "bolt_unscrew", "easy", settings=Settings(max_actions=60, action_timeout=None),
                  folder=tmp_path / "run")
    found = find_states([tmp_path / "run"], limit=3)
    assert found
    steps = {st.step: st for st in load_trajectory(tmp_path / "run").steps}
    two = 0
    for s in found:
        first = [e["effect"] for e in steps[s.step + 1].record["effects"]]
        k = s.step + 2 if first == ["select"] else s.step + 1
        two += k == s.step + 2
        # the move the agent played, after its selection where it made one: the state is the
        # idle step before the selection
        assert [e["move"] for e in steps[k].record["effects"] if e["effect"] == "move"] == [s.costly["move"]]
        assert restore_step(tmp_path / "run", s.step).ui.get("selected") is None
    assert two >= 1
    for arm in ("costly", "shortest"):
        b = play_branch(found[0], arm, tmp_path / arm)
        assert b["distance_after"] == found[0].distance - 1 + getattr(found[0], arm)["cost"]


def test_a_model_agent_continues_the_branches_through_the_shared_agent_options(tmp_path):
    """The command with --model (a scripted model on a real HTTP server on 127.0.0.1): the
    source recorded on the paper's screen, every continuation a model agent's episode there,
    its conversation logged in the continuation's folder, the study re-derived."""
    from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script

    page = (1280, 900)
    steps = {"right": (120, 0), "down": (0, 120), "left": (-120, 0), "up": (0, -120)}
    swipes = [{"type": "swipe", "x0": 640, "y0": 450, "x1": 640 + dx, "y1": 450 + dy}       # drags on the board
              for dx, dy in (steps[d] for d in ("right", "down", "left", "up") * 3)]
    with ScriptedServer(ReplayScript(gesture_script("native", swipes, page))) as srv:
        models = tmp_path / "models.toml"
        models.write_text(f'[models.scripted]\napi = "openai-chat"\nbase_url = "{srv.url_v1}"\n'
                          f'api_key_env = ""\nagent = "native"\n')
        r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--level", LEVEL, "--model", "scripted",
                                     "--models-file", str(models), "--states", "1", "--repeats", "1",
                                     "--max-actions", "6", "--draws", "100", "--harness", "d1",
                                     "--out", str(tmp_path / "st")])
        assert r.exit_code == 0, r.output
        assert srv.refused == [] and srv.replies >= 8
    doc = json.loads((tmp_path / "st" / "study.json").read_text())
    assert doc["agent"]["agent"] == "native" and doc["agent"]["model"]["model"] == "scripted"
    assert "api_key" not in json.dumps(doc["agent"]).replace("api_key_env", "")
    units = [json.loads(x) for x in (tmp_path / "st" / "units.jsonl").read_text().splitlines()]
    assert len(units) == 2 and all(u["status"] == "valid" and u["endpoints"]["actions"] == 6 for u in units)
    for u in units:
        folder = tmp_path / "st" / u["folder"]
        head = json.loads((folder / "events.jsonl").open().readline())
        assert tuple(head["settings"]["viewport"]) == page and head["settings"]["lang"] == "zh"
        assert head["settings"]["action_latency"] == 2.0                 # the D.1 harness's charged wait
        conv = [json.loads(x) for x in (folder / "conversation.jsonl").read_text().splitlines()]
        assert conv[0]["history_images"] == 4                            # D.1: 4 screenshots per request
        # the takeover context: the source's whole public prefix, then the branch episode's
        # opening wait and branch move
        n = doc["states"][0]["step"] + 2
        assert any(f"Actions taken so far by the previous player ({n}, oldest first)" in json.dumps(c, ensure_ascii=False)
                   for c in conv)
    assert doc["limits"]["harness"] == "d1"
    assert check_study(tmp_path / "st") == (True, [])


def test_the_agent_taking_over_a_branch_is_told_the_source_s_prefix_then_the_branch_move(study):
    # the continuation's context is the harness's own (build_takeover follows the branch
    # episode's continued_from): the source's prefix up to s, then the branch episode's
    # actions (its opening wait, the branch move) numbered on from s
    from longpuzzle.agents.harness.replay import takeover_at

    folder, states, doc = study
    s = states[0]
    for arm in ("costly", "shortest"):
        b = doc["branches"][f"{s.id}-{arm}"]
        tk = takeover_at(folder / b["folder"], b["step"])
        src = takeover_at(s.episode, s.step)
        assert tk.prefix[:-2] == src.prefix and len(tk.prefix) == s.step + 2 and tk.step == s.step + 2
        assert tk.prefix[-2].startswith(f"step {s.step + 1}: wait(")
        assert tk.prefix[-1].startswith(f"step {s.step + 2}: swipe(") and tk.pairs[-1][1] in tk.prefix[-1]
        # the last four pairs across both: the source's last ones, then the branch move's
        k = min(4, len(src.pairs) + 1) - 1
        assert src.pairs and len(tk.pairs) == k + 1
        assert [t for _, t in tk.pairs[:-1]] == [t for _, t in src.pairs[-k:]]
        assert all((a == b).all() for (a, _), (b, _) in zip(tk.pairs[:-1], src.pairs[-k:]))
        assert (tk.pairs[-1][0] == src.frame).all()            # the branch move was chosen on s
        after = takeover_at(folder / b["folder"], 2).frame
        assert (tk.frame == after).all() and not (tk.frame == src.frame).all()   # the successor's screen

def test_check_reports_a_continuation_or_branch_that_does_not_replay(study, tmp_path):
    # the shared re-derivation (study.check_replays) names the folder and its divergence,
    # for the units and for the branch episodes alike
    folder = tmp_path / "copy"
    shutil.copytree(study[0], folder, symlinks=True)
    units = [json.loads(x) for x in (folder / "units.jsonl").read_text().splitlines()]
    name, b = next(iter(study[2]["branches"].items()))
    # the unit: a public feedback changed (a divergence); the branch: a field the harness
    # never writes (an unreadable folder)
    for rel, forge in ((units[0]["folder"], "public"), (b["folder"], "end")):
        ev = folder / rel / "events.jsonl"
        lines = [json.loads(x) for x in ev.read_text().splitlines()]
        rec = next(r for r in reversed(lines) if r.get("stream", r.get("type")) == forge)
        if forge == "public":
            rec["feedback"]["status"] = "forged"
        else:
            rec["forged"] = True
        ev.write_text("".join(json.dumps(r) + "\n" for r in lines))
    ok, problems = check_study(folder)
    assert not ok
    assert any(p.startswith(f"{units[0]['folder']}: does not replay (") for p in problems), problems
    assert any(p.startswith(f"branch {name}: {b['folder']}: does not replay (") for p in problems), problems


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
        return FinalAnswer(f"taken over at step {tk.step} after {len(tk.prefix)} actions")
'''


def test_an_agent_file_continues_a_branch_from_its_sandbox(study, tmp_path):
    """An agent file (isolated, as eval runs it) continues both arms: its sandbox hands it the
    branch's takeover context (the source's prefix, then the branch episode's), and the study replays."""
    from longpuzzle.agents.agent_options import AgentOptions, build_agent

    path = tmp_path / "teller.py"
    path.write_text(TELLER)
    choice = build_agent(AgentOptions(agent=str(path)))
    state = study[1][0]
    run_study([state], choice.make, tmp_path / "s", repeats=1, **LIMITS, agent="teller", draws=100)
    units = [json.loads(x) for x in (tmp_path / "s" / "units.jsonl").read_text().splitlines()]
    assert sorted(u["condition"] for u in units) == ["costly", "shortest"]
    n = state.step + 2                    # the source's prefix up to s, then the branch episode's wait and move
    for u in units:
        assert u["status"] == "valid" and not u["endpoints"]["completed"]
        events = [json.loads(x) for x in (tmp_path / "s" / u["folder"] / "events.jsonl").read_text().splitlines()]
        assert [e["final_answer"] for e in events if "final_answer" in e] == [f"taken over at step {n} after {n} actions"]
    assert check_study(tmp_path / "s") == (True, [])


def test_a_run_of_another_catalogue_is_refused_and_nothing_is_written(study, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(study[1][0].episode, other)
    ev = other / "events.jsonl"
    lines = ev.read_text().splitlines()
    head = json.loads(lines[0])
    head["catalog"] = {**head["catalog"], "hash": "0" * 64}
    ev.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--from", str(other), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and r.output.startswith("error: "), r.output
    assert "catalogue" in r.output and not (tmp_path / "s").exists()


def test_json_prints_the_study_s_tables_as_takeover_and_retry_do(tmp_path):
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--level", LEVEL, "--preset", "fast", "--states", "1",
                                 "--repeats", "1", "--max-actions", "2", "--draws", "50", "--out", str(tmp_path / "s"),
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == json.loads((tmp_path / "s" / "study.json").read_text())["tables"]


def test_a_recorded_run_that_does_not_replay_is_refused_and_nothing_is_written(tmp_path):
    """Its branches would continue an episode that does not replay (and fail --check): one
    error line naming it and its divergence, before any state is branched."""
    from longpuzzle.agents.harness import continue_episode

    src = generate_states(LEVEL, tmp_path / "src", limit=1)[0]
    continue_episode(src.episode, src.step, Swiper(), settings=LIMIT, out=tmp_path / "seen")
    assert find_states([tmp_path / "seen"], limit=1)
    ev = tmp_path / "seen" / "events.jsonl"
    lines = [json.loads(x) for x in ev.read_text().splitlines()]
    last = max(i for i, x in enumerate(lines) if x.get("stream") == "public" and x.get("frames"))
    lines[last]["frames"] = ["0" * 32]                            # a frame the replay will not draw
    ev.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = CliRunner().invoke(cli, ["diagnose", "branch", "run", "--from", str(tmp_path / "seen"),
                                 "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith("error: ") and "does not replay" in r.output and "frames differ" in r.output
    assert not (tmp_path / "s").exists()
