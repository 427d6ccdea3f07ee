"""RQ3 (agents/diagnose/retry.py): sources (a certified failure, then a verified native
restart), the four memories, and the endpoints of retries played by scripted agents that
rebuild the same dead end, solve the level, read the clue memory, restart or wait out 300 s."""

import pytest

from longpuzzle.agents.base import BaseAgent, FinalAnswer, first_action
from longpuzzle.agents.diagnose import retry
from longpuzzle.agents.diagnose.checkpoint_sources import PolicyAgent, plan
from longpuzzle.agents.harness import Settings, continue_episode, read_events, replay_episode, restore_step
from longpuzzle.engine.catalog import builtin_catalog, load_level

LEVEL = "bolt_unscrew/hard/1"
# the evaluator's exhaustive search is left out (the paper's Bolt certificate, no usable free
# hole, is what certifies these boards): seconds, not tens of seconds
FAST = Settings(action_timeout=None, certify_budget=0)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A greedy policy's two dead ends on Bolt Unscrew hard 1, each followed by a restart."""
    d = tmp_path_factory.mktemp("rq3")
    sources = retry.record_sources(LEVEL, d / "src", count=2, settings=FAST)
    segs = plan(load_level(LEVEL, builtin_catalog()), "greedy", 2, 0)
    return d, sources, [m for m, _ in segs]


def prefix_of(src):
    """The source's public actions up to the retry's start (what a scripted agent replays on
    its own model of the app to know the screen)."""
    return [r["action"] for r in read_events(src.episode) if r.get("stream") == "public" and "action" in r
            and r["step"] <= src.step]


class Synced(PolicyAgent):
    """The checkpoint policy's agent, its model of the app brought to the retry's screen by the
    source's public actions; ``avoid`` (M3's reader): it stops rather than play an action the
    clue memory names as the one that made the board unsolvable."""

    def __init__(self, segments, prefix, avoid=False):
        super().__init__(LEVEL, segments)
        self.prefix, self.avoid = prefix, avoid

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        for a in self.prefix:
            self.model.dispatch(a)

    def emit(self, action):
        from longpuzzle.agents.harness import action_text
        if self.avoid and f", {action_text(action)}, made the board unsolvable" in self.instruction:
            return FinalAnswer("the clue memory says this move loses the board")
        return super().emit(action)


def test_a_failure_then_a_verified_restart_is_a_source(made):
    d, sources, moves = made
    assert [s.step for s in sources] == [13, 19] and all(s.level == LEVEL for s in sources)
    first, second = sources
    # the retry starts on the level's start board, restored exactly
    start = restore_step(first.episode, first.step)
    assert tuple(int(v) for v in start.session.state) == tuple(int(v) for v in load_level(LEVEL).initial)
    assert len(first.failures) == 1 and len(second.failures) == 2 and second.failures[0] == first.failures[0]
    f = second.failures[1]
    assert (f.start_step, f.fatal_step, f.restart_step) == (13, 18, 19)
    assert (f.holes_before, f.holes_after) == (1, 0) and f.distance_before is not None and f.distance_before > 0
    pub = {r["step"]: r for r in read_events(first.episode) if r.get("stream") == "public"}
    assert f.fatal_action == retry.action_text(pub[18]["action"])
    assert first.lost != second.lost                       # two different certified dead ends


def test_the_four_memories(made, tmp_path):
    _, sources, _ = made
    src = sources[1]
    note0, t0 = retry.memory(src, "M0")
    assert note0 == "" and t0.prefix == () and t0.pairs == () and t0.frame is not None
    note1, t1 = retry.memory(src, "M1")
    assert note1.startswith("Restart summary: your attempt 2") and "step 19" in note1
    assert len(t1.prefix) == src.step and len(t1.pairs) == 4 and t1.note == note1
    assert "usable free holes" not in note1 and "unsolvable" not in note1       # public facts only
    note2, _ = retry.memory(src, "M2", account="Failure Experience: I misclicked.\nNext Attempt: click better.")
    assert "Failure Experience: I misclicked." in note2 and "Next Attempt: click better." in note2
    assert retry.structured_account("just text").endswith("Next Attempt:\n(none written)")
    note3, t3 = retry.memory(src, "M3")
    for f in src.failures:
        assert f"Attempt {f.attempt}: the action at step {f.fatal_step}, {f.fatal_action}, made the board " \
               "unsolvable" in note3
        assert f"cleared by the restart at step {f.restart_step}" in note3
    assert "usable free holes (1 -> 0)" in note3 and t3.note == note3
    with pytest.raises(retry.RetryError, match="unknown condition 'M9'"):
        retry.memory(src, "M9")


def test_m1_adds_the_agents_own_latest_summary_before_the_restart(made, tmp_path):
    import dataclasses
    import json
    import shutil

    _, sources, _ = made
    src = sources[1]                                                   # its restart: step 19
    ep = tmp_path / "ep"
    shutil.copytree(src.episode, ep)
    recs = [{"type": "message", "message": {"role": "user", "parts": [{"image": {"frame": 3, "step": 6}}]}},
            {"type": "summary", "text": "I was filling holes on the left."},
            {"type": "message", "message": {"role": "user", "parts": [{"image": {"frame": 9, "step": 17}}]}},
            {"type": "compaction", "summary": "Lost board; I should restart."},
            {"type": "message", "message": {"role": "user", "parts": [{"image": {"frame": 12, "step": 20}}]}},
            {"type": "summary", "text": "After the restart I play again."}]           # after it: not this one
    (ep / "conversation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    note = retry.restart_summary(dataclasses.replace(src, episode=str(ep)))
    assert note.endswith("Your own latest summary before the restart:\nLost board; I should restart.")
    assert "own latest summary" not in retry.restart_summary(src)      # none logged: the public facts alone


class Accountant(BaseAgent):
    """Answers the account request from what it was given at takeover."""

    def take_over(self, takeover):
        self.seen = takeover

    def act(self, obs):
        return first_action(obs) or FinalAnswer("")

    def probe(self, probe):
        assert probe.statements == () and "Failure Experience" in probe.text
        return f"Failure Experience: {len(self.seen.prefix)} actions before.\nNext Attempt: another plan."


def test_m2_asks_the_agent_itself_aside_from_play(made):
    _, sources, _ = made
    text = retry.ask_account(Accountant, sources[0])
    assert text == f"Failure Experience: {sources[0].step} actions before.\nNext Attempt: another plan."


def play(src, agent, folder, cond="M3", limit=None):
    note, tk = retry.memory(src, cond)
    st = Settings(action_timeout=None, certify_budget=0, budget=retry.LIMIT_SECONDS, max_actions=limit or retry.CEILING)
    continue_episode(src.episode, src.step, agent, note=note, out=folder, takeover=tk, settings=st)
    return retry.endpoints(folder, src.as_dict())


def test_endpoints_of_retries(made, tmp_path):
    d, sources, moves = made
    src = sources[0]
    pre = prefix_of(src)
    # the same moves again: the source's exact dead end
    e = play(src, Synced([moves[0]], pre), tmp_path / "same")
    assert e["outcome"] == "recurrence" and e["step"] == 1 + len(moves[0])   # (the retry's own steps: 1 is its opening wait)
    assert replay_episode(tmp_path / "same").ok
    # the other dead end the policy found: a certified failure, but not the source's
    e = play(src, Synced([moves[1]], pre), tmp_path / "other")
    assert e["outcome"] == "other_failure"
    # the clue memory names the fatal action: its reader stops before it (an explicit stop)
    e = play(src, Synced([moves[0]], pre, avoid=True), tmp_path / "reader")
    assert e["outcome"] == "stop" and e["step"] == 1 + len(moves[0])   # instead of the fatal move
    e = play(src, Synced([moves[0]], pre, avoid=True), tmp_path / "untold", cond="M0")
    assert e["outcome"] == "recurrence"                    # not told: the same dead end
    # the verified solution: completion, with best progress 1
    from longpuzzle.solvers.core import solve
    sol = [int(a) for a in solve(load_level(LEVEL)).actions]
    e = play(src, Synced([sol], pre), tmp_path / "win", limit=len(sol) + 2)     # (not the levels after it)
    assert e["outcome"] == "completion" and e["best_progress"] == 1.0
    # a restart before anything else; 300 s of waiting
    e = play(src, Synced([moves[0][:2], []], pre), tmp_path / "restart")
    assert e["outcome"] == "restart" and 0 < e["best_progress"] < 1

    class Waiter(BaseAgent):
        def act(self, obs):
            return first_action(obs) or {"type": "wait", "ms": 200_000}
    e = play(src, Waiter(), tmp_path / "wait")
    assert e["outcome"] == "timeout" and e["end"] == "budget"


# ---- the study ----------------------------------------------------------------------------------

def test_a_retry_study_end_to_end_with_a_clue_reader(made, tmp_path):
    import json

    from longpuzzle.agents.diagnose import retry_study as rs

    d, sources, moves = made
    made_agents = []

    def make_agent(objective, folder, prefix=()):
        made_agents.append(folder)
        return Synced([moves[0]], list(prefix), avoid=True)

    out = tmp_path / "study"
    doc = rs.run_retry(out, make_agent, runs=[d / "src"], budget=retry.LIMIT_SECONDS, max_actions=40)
    units = [json.loads(x) for x in (out / "units.jsonl").read_text().splitlines()]
    assert [u["checkpoint"] for u in doc["schedule"]] == ["S01", "S02"]
    assert doc["schedule"][0]["order"] == ["M0", "M1", "M2", "M3"] and doc["schedule"][1]["order"] == \
        ["M1", "M2", "M3", "M0"]                                  # interleaved: rotated per unit
    out_of = {(u["unit"], u["condition"]): u["endpoints"]["outcome"] for u in units}
    # S01's failure is the policy's first dead end (which the agent rebuilds); S02's the second
    assert [out_of[("S01", c)] for c in retry.CONDITIONS] == ["recurrence", "recurrence", "recurrence", "stop"]
    assert [out_of[("S02", c)] for c in retry.CONDITIONS] == ["other_failure"] * 3 + ["stop"]
    table = {r[0]: r for r in doc["tables"][0]["rows"]}
    cols = doc["tables"][0]["columns"]
    assert table["M1"][cols.index("Recurrence (source's dead end)")] == "1/2"
    assert table["M3"][cols.index("Explicit stop")] == "2/2" and table["M3"][cols.index("Completion")] == "0/2"
    effects = {r[0]: r for r in doc["tables"][1]["rows"]}
    assert effects["M1 -> M3"][1] == 2 and effects["M1 -> M3"][2].startswith("-0.50")
    # the memories are in each retry's instruction, the M2 account was asked of a fresh agent
    head = json.loads((out / "episodes" / "S02-M3" / "events.jsonl").read_text().splitlines()[0])
    assert "Attempt 2: the action at step 18" in head["instruction"]
    assert head["stop_when"] == {"won": [LEVEL]}              # completion decides: no play after the win
    assert doc["memories"]["S02"]["M3"] in head["instruction"]
    assert any("accounts" in str(f) for f in made_agents)
    ok, problems = rs.check_study(out)
    assert ok, problems
    # a forged outcome is caught by the re-derivation
    text = (out / "units.jsonl").read_text().replace('"outcome": "stop"', '"outcome": "completion"', 1)
    (out / "units.jsonl").write_text(text)
    assert not rs.check_study(out)[0]


def test_the_command_with_a_paper_like_agent_and_bad_input(tmp_path):
    import json

    from click.testing import CliRunner

    from longpuzzle.cli import cli

    out = tmp_path / "s"
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--level", LEVEL, "--count", "1", "--certify-budget", "0",
                                 "--agent", "paper_rebuilder", "--conditions", "M0,M3", "--max-actions", "30",
                                 "--draws", "200", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "study.json").read_text())
    assert doc["experiment"] == "retry" and doc["conditions"] == ["M0", "M3"] and doc["draws"] == 200
    assert (out / "sources").is_dir() and len(list((out / "episodes").iterdir())) == 2
    assert "RQ3: matched retries" in r.output
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--check", str(out)])
    assert r.exit_code == 0 and "re-derives exactly" in r.output
    for args, msg in ((["--conditions", "M0,M9"], "unknown condition 'M9'"),
                      (["--level", "bolt_unscrew/hard/99"], "99")):
        bad = tmp_path / "bad"
        argv = ["diagnose", "retry", "--level", LEVEL, "--out", str(bad)] + args
        if args[0] == "--level":
            argv = ["diagnose", "retry", "--out", str(bad)] + args
        r = CliRunner().invoke(cli, argv)
        assert r.exit_code != 0 and r.output.startswith("error:") and msg in r.output, r.output
        assert "Traceback" not in r.output and not bad.exists()


def test_a_model_agent_retries_through_the_d1_harness_and_writes_its_own_account(tmp_path):
    """diagnose retry --model through the scripted endpoint on 127.0.0.1: M2's account is the
    model's reply to a request of its own (given the takeover context), and enters M2's retry."""
    import json

    from click.testing import CliRunner

    from longpuzzle.agents.testing.endpoints import ScriptedServer, last_user_text
    from longpuzzle.cli import cli

    account = "Failure Experience: I filled the last free hole.\nNext Attempt: keep a hole free."
    asked, acting = [], []

    def script(api, body):
        if "Failure Experience" in last_user_text(api, body):
            asked.append(body)
            return {"text": account}
        acting.append(body)
        first = not any(m.get("role") == "assistant" for m in body["messages"])
        args = {"action": "wait", "ms": 500} if first else {"action": "click", "x": 270, "y": 480}
        return {"tool_calls": [{"name": "gui", "arguments": args}]}

    out = tmp_path / "s"
    with ScriptedServer(script) as srv:
        r = CliRunner().invoke(cli, ["diagnose", "retry", "--level", LEVEL, "--count", "1", "--certify-budget", "0",
                                     "--model", "scripted-model", "--base-url", srv.url_v1, "--api", "openai-chat",
                                     "--api-key-env", "", "--harness", "d1", "--conditions", "M1,M2",
                                     "--max-actions", "5", "--draws", "100", "--out", str(out)])
        assert srv.refused == []
    assert r.exit_code == 0, r.output
    assert len(asked) == 1
    dump = json.dumps(asked[0])
    assert "You are taking over this game" in dump and "step 1: wait(0 ms)" in dump     # the M1 context
    head = json.loads((out / "episodes" / "S01-M2" / "events.jsonl").read_text().splitlines()[0])
    assert head["instruction"].endswith(account) and head["settings"]["action_latency"] == 2.0
    m1 = json.loads((out / "episodes" / "S01-M1" / "events.jsonl").read_text().splitlines()[0])
    assert "Restart summary" in m1["instruction"] and account not in m1["instruction"]
    assert any(account.splitlines()[1] in json.dumps(b) for b in acting)     # in the acting requests of M2
    assert (out / "accounts" / "S01" / "conversation.jsonl").is_file()
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--check", str(out)])
    assert r.exit_code == 0, r.output


def test_sources_from_scratch_by_a_paper_like_agent_a_resumed_study_and_no_half_written_folder(tmp_path):
    import json

    from click.testing import CliRunner

    from longpuzzle.cli import cli

    out = tmp_path / "s"
    argv = ["diagnose", "retry", "--level", LEVEL, "--count", "2", "--source-agent", "paper_filler",
            "--certify-budget", "0", "--agent", "paper_filler", "--conditions", "M0,M3", "--max-actions", "25",
            "--draws", "100", "--out", str(out)]
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "study.json").read_text())
    assert doc["made_with"]["source_agent"] == "paper_filler" and len(doc["sources"]) == 2
    # the paper-like agent rebuilds the same dead end after its restart: both failures are one board
    assert doc["sources"][0]["lost"] == doc["sources"][1]["lost"]
    assert len(doc["sources"][1]["failures"]) == 2
    units = (out / "units.jsonl").read_text()
    # run again on the folder: it resumes (the sources as fixed, every retry kept), the same tables
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 0, r.output
    assert (out / "units.jsonl").read_text() == units
    assert json.loads((out / "study.json").read_text())["tables"] == doc["tables"]
    # a level where the policy reaches no certified dead end: one error line, no folder left
    bad = tmp_path / "bad"
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--level", "maze_paint/easy/1", "--certify-budget", "0",
                                 "--out", str(bad)])
    assert r.exit_code != 0 and r.output.startswith("error:") and "maze_paint/easy/1" in r.output, r.output
    assert not bad.exists()
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--level", LEVEL, "--source-agent", "native", "--out", str(bad)])
    assert r.exit_code != 0 and "--source-agent is a scripted agent" in r.output and not bad.exists()


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
        return FinalAnswer(f"{len(tk.prefix)} actions, {len(tk.pairs)} pairs")
'''


def test_an_agent_file_retries_from_its_sandbox(made, tmp_path):
    """An agent file (isolated, as eval runs it) retries under M0 and M1: its sandbox hands it
    each memory's takeover context (M0 cleared, M1 the native history); its stop is the
    explicit-stop endpoint, and the study re-derives."""
    import json

    from longpuzzle.agents.agent_options import AgentOptions, build_agent
    from longpuzzle.agents.diagnose import retry_study

    d, sources, _ = made
    path = tmp_path / "teller.py"
    path.write_text(TELLER)
    choice = build_agent(AgentOptions(agent=str(path)))
    retry_study.run_retry(tmp_path / "s", choice.make, runs=[sources[0].episode], conditions=("M0", "M1"),
                          max_actions=3, draws=100, source_settings=FAST)
    units = [json.loads(x) for x in (tmp_path / "s" / "units.jsonl").read_text().splitlines()]
    steps = {s["id"]: s["step"] for s in json.loads((tmp_path / "s" / "study.json").read_text())["sources"]}
    assert sorted((u["unit"], u["condition"]) for u in units) == [(s, m) for s in sorted(steps) for m in ("M0", "M1")]
    for u in units:
        assert u["status"] == "valid" and u["endpoints"]["outcome"] == "stop"
        events = [json.loads(x) for x in (tmp_path / "s" / u["folder"] / "events.jsonl").read_text().splitlines()]
        said = [e["final_answer"] for e in events if "final_answer" in e]
        # M0: history cleared; M1: the source's public prefix (one line per recorded action) and 4 pairs
        assert said == (["0 actions, 0 pairs"] if u["condition"] == "M0" else [f"{steps[u['unit']]} actions, 4 pairs"])
    assert retry_study.check_study(tmp_path / "s")[0]


def test_a_run_of_another_catalogue_is_refused_and_nothing_is_written(made, tmp_path):
    import json
    import shutil

    from click.testing import CliRunner

    from longpuzzle.cli import cli

    _, sources, _ = made
    other = tmp_path / "other"
    shutil.copytree(sources[0].episode, other)
    ev = other / "events.jsonl"
    lines = ev.read_text().splitlines()
    head = json.loads(lines[0])
    head["catalog"] = {**head["catalog"], "hash": "0" * 64}
    ev.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--from", str(other), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and r.output.startswith("error: "), r.output
    assert "another catalogue" in r.output and not (tmp_path / "s").exists()


def test_a_source_episode_that_does_not_replay_is_refused_and_nothing_is_written(made, tmp_path):
    """Its retries would continue an episode that does not replay (and fail --check): one error
    line naming it and its divergence, no study folder."""
    import json
    import shutil

    from click.testing import CliRunner

    from longpuzzle.cli import cli

    _, sources, _ = made
    forged = tmp_path / "forged"
    shutil.copytree(sources[0].episode, forged)
    ev = forged / "events.jsonl"
    lines = [json.loads(x) for x in ev.read_text().splitlines()]
    i = next(i for i, x in enumerate(lines) if x.get("stream") == "public" and x.get("step") == 4)
    lines[i]["frames"] = ["0" * 32]                               # a frame the replay will not draw
    ev.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = CliRunner().invoke(cli, ["diagnose", "retry", "--from", str(forged), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"error: {forged}: does not replay (step 4: frames differ)")
    assert not (tmp_path / "s").exists()
