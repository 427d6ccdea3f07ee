"""Input that used to crash or hang (issue 13): bounded GUI validation, settings that make no
sense, level records, checkpoints and snapshots, replaced levels, the two inexact restore
round trips, and replays that prove what they claim."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.agents.base import BaseAgent, first_action
from longpuzzle.agents.harness import HarnessError, Settings, read_events, replay_episode, run_objective
from longpuzzle.cli import cli
from longpuzzle.engine import gui
from longpuzzle.engine.catalog import parse_level_file
from longpuzzle.engine.errors import CheckpointError, LevelFormatError
from longpuzzle.engine.session import Session, replay
from longpuzzle.engine.suite import Suite
from longpuzzle.agents.testing.fuzz.gui import _HostileDict, _LyingList
from longpuzzle.agents.testing.fuzz.levels import level_records
from longpuzzle.render.frame import Renderer, renderer

SIZE = (540, 960)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# ---- GUI actions ----------------------------------------------------------------------------

def test_gui_validation_is_bounded_and_never_runs_the_objects_code():
    refused = {
        "a huge integer": {"type": "click", "x": 10 ** 400, "y": 5},
        "a lying list": {"type": "batch", "actions": _LyingList([{"type": "wait", "ms": 1}] * 500)},
        "200^4 nested waits": {"type": "batch", "actions": [{"type": "batch", "actions": [
            {"type": "batch", "actions": [{"type": "batch", "actions": [{"type": "wait", "ms": 1}] * 200}] * 200}] * 200}] * 200},
        "300 waits over two levels": {"type": "batch", "actions": [{"type": "batch", "actions": [
            {"type": "wait", "ms": 1}] * 150}] * 2},
        "a 10 MB type": {"type": "x" * 10_000_000},
        "NaN": {"type": "long_press", "x": float("nan"), "y": 1},
        "a huge wait": {"type": "wait", "ms": 10 ** 30},
    }
    for what, a in refused.items():
        with pytest.raises(gui.ActionError) as e:
            gui.validate(a, SIZE)
        assert len(str(e.value)) < 300, what
    s = Suite("maze_paint/easy/1")
    for a in refused.values():                     # dispatch refuses them the same way, changing nothing
        before = s.snapshot()
        with pytest.raises(gui.ActionError):
            s.dispatch(a)
        assert s.snapshot() == before
    # a hostile dict subclass is read through dict's own storage: its methods are never called
    assert gui.validate(_HostileDict(type="click", x=3, y=4), SIZE) == {"type": "click", "x": 3, "y": 4}
    assert type(gui.plain(_HostileDict(type="wait"))) is dict
    assert gui.validate({"type": "click", "x": np.int64(5), "y": np.float32(2.5)}, SIZE) == \
        {"type": "click", "x": 5, "y": 2.5}


class Flooder(BaseAgent):
    """In-process: returns a hostile dict, then an action too large to read, then a huge
    number, then quits."""

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        return [_HostileDict(type="wait", ms=5), {"type": "batch", "actions": [{"type": "wait", "ms": 1}] * 1_000_000},
                {"type": "click", "x": 10 ** 400, "y": 5}, {"type": "wait", "ms": 1}][min(obs.step - 1, 3)]


def test_refusals_are_counted_and_recorded_compactly(tmp_path):
    st = Settings(max_actions=4, invalid_action_policy="dispatch_failed", action_timeout=30)
    r = run_objective(Flooder(), "maze_paint", "easy", settings=st, folder=tmp_path)
    assert r.end == "max_actions" and r.invalid == 2
    pub = [e for e in read_events(tmp_path) if e.get("stream") == "public"]
    assert [p["feedback"]["executed"] for p in pub] == [True, True, False, False]
    assert all(len(json.dumps(p)) < 2000 for p in pub)
    assert "at most" in pub[2]["feedback"]["message"] and "digits" in pub[3]["feedback"]["message"]
    assert replay_episode(tmp_path).ok


def test_an_actions_file_with_a_401_digit_number_is_refused_and_the_run_goes_on(tmp_path):
    f = tmp_path / "a.json"
    f.write_text('[{"type": "click", "x": ' + "9" * 401 + ', "y": 5}, {"type": "wait", "ms": 5}]')
    r = run("play", "maze_paint/easy/1", "--headless", "--actions", f, "--save", tmp_path / "e.json")
    assert r.exit_code == 0 and "digits" in r.output and "saved" in r.output
    for text, says in [("9" * 5000, "cannot be read as JSON"), ("[" * 100_000, "nested too deeply")]:
        f.write_text(text)
        r = run("play", "maze_paint/easy/1", "--headless", "--actions", f, "--save", tmp_path / "e.json")
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output


# ---- refused actions are the agent's own failure (issue 35) --------------------------------

OFF_FRAME = {"type": "click", "x": 5000, "y": 5000}     # outside every frame: the GUI refuses it


class OffFrameClicker(BaseAgent):
    """Opens with the wait, then clicks outside the frame on purpose (an agent that cannot
    solve its objective and would rather not be scored), keeping what it was told."""

    def __init__(self):
        self.feedback = []

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        self.feedback.append(obs.feedback)
        return dict(OFF_FRAME)


OFF_FRAME_FILE = """
from longpuzzle.agents.api import BaseAgent, first_action

class OffFrame(BaseAgent):
    def act(self, obs):
        return first_action(obs) if obs.frame is None else {"type": "click", "x": 5000, "y": 5000}
"""


def _scored_refusal_end(res: dict) -> None:
    assert res["end"] == "invalid_action_limit" and res["scored"] is True, res
    assert res["invalid_actions"] == 3 and res["actions"] == 4 and "outside" in res["error"]


def _native_model_run(out: Path, script):
    """One maze_paint/easy episode of the native protocol, its model a ScriptedServer on
    127.0.0.1 answering with ``script`` (every request body kept): (the run's summary, the server)."""
    from longpuzzle.agents.models.config import ModelConfig
    from longpuzzle.agents.testing.endpoints import ScriptedServer
    from longpuzzle.agents.runner import RunConfig, execute, start_run
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 1
        cfg = ModelConfig(model="scripted-model", api="openai-chat", base_url=srv.url_v1, api_key_env="",
                          timeout=10.0, max_retries=0)
        rc = RunConfig(agent="native", objectives=["maze_paint/easy"], episodes=1,
                       settings=Settings(action_timeout=None).as_dict(), model=cfg.public())
        start_run(out, rc)
        return execute(out, rc), srv


def test_out_of_frame_clicks_on_purpose_end_the_episode_scored_for_every_kind_of_agent(tmp_path):
    from longpuzzle.agents.testing.endpoints import ReplayScript, gesture_script

    # a built-in (in-process) agent: each refusal is answered with feedback, the third in a row
    # ends the episode, scored, with the default settings
    a = OffFrameClicker()
    r = run_objective(a, "maze_paint", "easy", folder=tmp_path / "builtin")
    _scored_refusal_end(json.loads((tmp_path / "builtin" / "result.json").read_text()))
    assert [f.status for f in a.feedback] == ["wait_completed", "dispatch_failed", "dispatch_failed"]
    assert "outside" in a.feedback[-1].message and r.outcome.scored
    assert replay_episode(tmp_path / "builtin").ok
    # an agent file, run in its sandbox by eval: counted in the metrics, not unscored; --resume
    # keeps it (an unscored episode would be run again)
    f = tmp_path / "off_frame.py"
    f.write_text(OFF_FRAME_FILE)
    out = tmp_path / "file"
    r = run("eval", "--agent", f, "--objective", "maze_paint/easy", "--out", out, "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["unscored"] == 0 and summary["metrics"]["OSR"] == 0.0
    _scored_refusal_end(summary["episodes"][0])
    folder = out / summary["episodes"][0]["folder"]
    mtime = (folder / "result.json").stat().st_mtime_ns
    assert run("eval", "--resume", out).exit_code == 0 and (folder / "result.json").stat().st_mtime_ns == mtime
    assert run("replay", folder).exit_code == 0
    # a model's replies (the native protocol through a real HTTP server on 127.0.0.1): the
    # protocol refuses the call itself and tells the model why; three invalid replies in a row
    # end the episode as the agent's failure, scored as well
    script = ReplayScript(gesture_script("native", [OFF_FRAME] * 3))
    s, srv = _native_model_run(tmp_path / "model", script)
    ep = s["episodes"][0]
    assert ep["end"] == "agent_error" and ep["scored"] is True and "invalid_action_limit" in ep["error"]
    assert s["metrics"]["unscored"] == 0 and s["usage"]["parse_failures"] == 3
    told = [json.dumps(b["body"]["messages"][-1]) for b in srv.bodies]
    assert sum("not a valid call" in t and "5000" in t for t in told) == 2


def test_replay_derives_the_refusal_limit_ending_from_the_actions(tmp_path):
    # an episode ended by refused actions cannot be turned unscored (infrastructure_error) or
    # made to end otherwise, and an end the refusals did not make is refused too
    run_objective(OffFrameClicker(), "maze_paint", "easy", folder=tmp_path / "ep")
    lines = _lines(tmp_path / "ep")
    for end in ("infrastructure_error", "invalidated", "final_answer"):
        bad = tmp_path / end
        shutil.copytree(tmp_path / "ep", bad)
        end_rec = json.loads(lines[-1])
        end_rec["end"] = end_rec["result"]["end"] = end
        _write(bad, lines[:-1] + [json.dumps(end_rec)])
        res = json.loads((bad / "result.json").read_text())
        res.update(end=end, scored=end != "infrastructure_error")
        (bad / "result.json").write_text(json.dumps(res))
        rep = replay_episode(bad)
        assert not rep.ok and "refusal limit" in rep.divergence, (end, rep.divergence)
    # the watchdog policy: the first refusal is the limit
    run_objective(OffFrameClicker(), "maze_paint", "easy", folder=tmp_path / "w",
                  settings=Settings(invalid_action_policy="watchdog"))
    res = json.loads((tmp_path / "w" / "result.json").read_text())
    assert res["end"] == "invalid_action_limit" and res["scored"] and res["invalid_actions"] == 1
    assert replay_episode(tmp_path / "w").ok


SURROGATE_FILE = """
from longpuzzle.agents.api import BaseAgent, FinalAnswer, first_action

class Surrogates(BaseAgent):
    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        return {"type": "typetext", "text": "a\\ud800b"} if obs.step == 1 else FinalAnswer("done \\udfff")
"""


def test_a_lone_surrogate_is_a_malformed_action_not_a_crash(tmp_path):
    # an agent file: the typed text crosses the sandbox's channel and is refused by the GUI
    # as malformed (it used to end the episode as agent_error); its final answer arrives whole
    f = tmp_path / "surrogates.py"
    f.write_text(SURROGATE_FILE)
    out = tmp_path / "file"
    r = run("eval", "--agent", f, "--objective", "maze_paint/easy", "--out", out, "--json")
    assert r.exit_code == 0, r.output
    ep = json.loads((out / "summary.json").read_text())["episodes"][0]
    assert ep["end"] == "final_answer" and ep["invalid_actions"] == 1 and ep["scored"], ep
    folder = out / ep["folder"]
    pub = [e for e in read_events(folder) if e.get("stream") == "public"]
    assert pub[1]["action"]["text"] == "a\ud800b" and "\\ud800" in pub[1]["feedback"]["message"]
    assert pub[2]["final_answer"] == "done \udfff"
    assert replay_episode(folder).ok
    # a model's reply (JSON may hold "\\ud800"): the lone surrogate becomes U+FFFD, the typed
    # text is refused as malformed and the model told so; the next request is sent, nothing fails
    from longpuzzle.agents.testing.endpoints import ReplayScript
    replies = [{"tool_calls": [{"name": "gui", "arguments": {"action": "wait", "ms": 500}}]},
               {"text": "typing \ud800", "tool_calls": [{"name": "gui", "arguments": {"action": "typetext",
                                                                                     "text": "a\ud800"}}]},
               {"text": "BENCHMARK COMPLETED \udfff"}]
    s, srv = _native_model_run(tmp_path / "model", ReplayScript(replies))
    ep = s["episodes"][0]
    assert ep["end"] == "final_answer" and ep["scored"] and s["usage"]["parse_failures"] == 1, ep
    told = json.dumps(srv.bodies[-1]["body"]["messages"][-1], ensure_ascii=False)
    assert "not a valid call" in told and "a\ufffd" in told, told
    conv = (tmp_path / "model" / ep["folder"] / "conversation.jsonl").read_text(encoding="utf-8")
    assert all(json.loads(line) for line in conv.splitlines()) and "\\ud800" not in conv


# ---- settings ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["--max-actions", "-5"], "--max-actions"), (["--budget", "-1"], "--budget"), (["--budget", "nan"], "--budget"),
    (["--action-timeout", "-1"], "--action-timeout"), (["--action-timeout", "0"], "--action-timeout"),
    (["--frames-per-move", "-1"], "--frames-per-move"), (["--certify-budget", "-1"], "--certify-budget"),
    (["--scale", "5"], "up to 4"), (["--agent-memory", "0"], "--agent-memory"),
])
def test_settings_that_make_no_sense_are_one_error_line(tmp_path, args, says):
    r = run("eval", "--out", tmp_path / "out", *args)
    assert r.exit_code == 2 and r.output.startswith("error:") and says in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_unwritable_outputs_are_one_error_line(tmp_path):
    (tmp_path / "file").write_text("x")
    r = run("eval", "--out", tmp_path / "file" / "out", "--max-actions", "1")
    assert r.exit_code == 2 and r.output.startswith("error:")
    r = run("screenshot", "home", "--out", tmp_path / "missing" / "s.png")
    assert r.exit_code == 2 and r.output.startswith("error:") and "No such file" in r.output
    r = run("screenshot", "home", "--out", tmp_path / "s.png", "--scale", "5")
    assert r.exit_code == 2 and "up to 4" in r.output
    with pytest.raises(HarnessError):
        Settings(frames_per_move=100_000)


# ---- level records ----------------------------------------------------------------------------

def _file(game: str, mutate) -> str:
    from importlib import resources
    doc = json.loads((resources.files("longpuzzle.puzzles") / "levels" / f"{game}.json").read_text())
    mutate(doc["objectives"][0]["levels"][0])
    return json.dumps(doc)


@pytest.mark.parametrize("game, mutate, field", [
    ("nut_and_bolt", lambda r: r.update(nut_step=None), "nut_step"),
    ("nut_and_bolt", lambda r: r.update(nut_step=""), "nut_step"),
    ("nut_and_bolt", lambda r: r.update(nut_step=2 ** 31), "nut_step"),
    ("nut_and_bolt", lambda r: r["bolts"][0].update(x=float("nan")), "bolts[0].x"),
    ("nut_and_bolt", lambda r: r["bolts"][1]["nuts"].__setitem__(0, []), "bolts[1].nuts[0]"),
    ("nut_and_bolt", lambda r: r.update(visual_size=[0, 0]), "visual_size"),
    ("rush_hour", lambda r: r["vehicles"][0].update(color=[]), "vehicles[0].color"),
    ("truck_escape", lambda r: r.update(truck_width=1e30), "truck_width"),
    ("truck_escape", lambda r: r["trucks"][0].update(center_screen=[float("inf"), 1]), "trucks[0].center_screen"),
    ("bolt_unscrew", lambda r: r["boards"][0].update(render_order=2 ** 63), "boards[0].render_order"),
    ("bolt_unscrew", lambda r: r["boards"][0].update(texture_index="red"), "boards[0].texture_index"),
    ("bolt_unscrew", lambda r: r["boards"][0]["attached_anchors"].__setitem__(0, {"a": 1}), "attached_anchors[0]"),
])
def test_level_records_that_would_crash_later_are_refused_naming_file_level_and_field(game, mutate, field):
    with pytest.raises(LevelFormatError) as e:
        parse_level_file(_file(game, mutate), f"{game}.json")
    assert e.value.file == f"{game}.json" and e.value.level.startswith(game) and field in e.value.field, str(e.value)


def test_a_level_replaced_under_the_same_id_is_drawn_afresh():
    diff, rec = level_records("maze_paint")[0]
    p = Suite("maze_paint/easy/1").puzzle
    a = p.build_level(rec, difficulty=diff, number=1, where="a.json")
    rec2 = dict(rec, layout=[row[::-1] for row in rec["layout"]] + [rec["layout"][0]])
    b = p.build_level(rec2, difficulty=diff, number=1, where="b.json")
    assert a.id == b.id and a.sha256 != b.sha256
    shared = renderer("2d", 1.0)
    for lvl in (a, b, a):
        s = Suite("home")
        s.open_level(lvl)
        got = shared.render(s)
        assert np.array_equal(got, Renderer("2d", 1.0).render(s))     # as a fresh renderer draws it
    s = Suite("home")                                  # one suite: its layout follows the level too
    s.open_level(a)
    s.open_level(b)
    assert s.game_ui().level is b


# ---- checkpoints and snapshots ----------------------------------------------------------------

def _rechecksum(text: str, **change) -> str:
    from longpuzzle.agents.testing.fuzz.snapshots import _rechecksum as rc
    body = json.loads(text)
    body.update(change)
    return json.dumps(rc(body))


def test_checkpoints_and_snapshots_refuse_bad_input_with_a_clear_message(tmp_path):
    s = Suite("nut_and_bolt/easy/1")
    s.dispatch(s.gesture_for(s.session.legal_moves()[0]))
    s.dispatch({"type": "press", "x": 100, "y": 500})                  # a pointer held down
    snap = s.snapshot()
    cp = s.session.checkpoint()
    state = json.loads(cp)["state"]
    bad_snapshots = {
        "nested": "[" * 100_000 + "]" * 100_000, "binary": "\x00\xff", "not json": "{",
        "ui type": _rechecksum(snap, ui={"selected": "two"}), "ui range": _rechecksum(snap, ui={"selected": 99}),
        "ui keys": _rechecksum(snap, ui={"selected": None, "extra": 1}),
        "pointer type": _rechecksum(snap, pointer={"down": True, "x": "a", "y": 1}),
        "pointer keys": _rechecksum(snap, pointer={"down": "yes"}),
        "clock": _rechecksum(snap, clock=10 ** 30), "scale": _rechecksum(snap, scale=-1),
        "anims": _rechecksum(snap, anims=[{"kind": "move", "t0": 0, "t1": 1, "action": 10 ** 9, "code": 0,
                                           "before": state}]),
        "screen": _rechecksum(snap, screen={"name": "difficulty", "game": "chess"}),
        "complete": _rechecksum(snap, complete=True),
        "toast": _rechecksum(snap, toast={"text": 5, "t0": 0, "until": 1}),
    }
    for _what, text in bad_snapshots.items():
        with pytest.raises(CheckpointError):
            Suite.restore(text)
    bad_checkpoints = {
        "too big": _rechecksum(cp, state=[10 ** 30] * len(state)), "short": _rechecksum(cp, state=state[:-1]),
        "floats": _rechecksum(cp, state=[0.5] * len(state)), "log": _rechecksum(cp, log=["#"]),
        "counters": _rechecksum(cp, counters={"moves": -1}), "utf-16": cp.encode("utf-16"),
        "nested": "[" * 100_000,
    }
    for _what, text in bad_checkpoints.items():
        with pytest.raises(CheckpointError):
            Session.from_checkpoint(text)
    t = Suite.restore(snap)                           # the untouched ones still work
    t.dispatch({"type": "release", "x": 100, "y": 500})
    assert Session.from_checkpoint(cp).checkpoint() == cp
    (tmp_path / "cp.json").write_bytes(cp.encode("utf-16"))
    r = run("replay", tmp_path / "cp.json")
    assert r.exit_code == 2 and "UTF-16" in r.output


# ---- restore round trips ----------------------------------------------------------------------

def test_a_batch_that_moves_and_leaves_the_level_restores_exactly():
    s = Suite("home")
    s.open_level("nut_and_bolt/medium/1")
    move = s.gesture_for(s.session.legal_moves()[0])
    menu = next(w for w in s.layout().widgets if w.id == "menu")
    mx, my = s.proj.to_px(*menu.shape.center)
    s.dispatch({"type": "batch", "actions": [move, {"type": "click", "x": int(mx), "y": int(my)}]})
    assert s.screen["name"] != "level" and s.anims == []
    snap = s.snapshot()
    assert Suite.restore(snap).snapshot() == snap


def test_rush_hour_rejected_drags_replay_from_the_episode_text():
    s = Suite("rush_hour/easy/1")
    ui = s.game_ui()
    for v in range(3):
        x, y = s.proj.to_px(*ui.vehicle_center(v, int(s.session.state[v])))
        s.dispatch({"type": "drag", "x0": x, "y0": y, "x1": x + 4, "y1": y + 4, "steps": 3, "ms": 90})   # < half a cell
    s.dispatch(s.gesture_for(s.session.legal_moves()[0]))
    sess = s.session
    assert sess.counters.rejected == 3
    again = replay(sess.episode_text())
    assert again.counters == sess.counters and np.array_equal(again.state, sess.state)
    assert Session.from_checkpoint(sess.checkpoint()).counters == sess.counters


# ---- replays ---------------------------------------------------------------------------------------

def _lines(folder) -> list[str]:
    return (Path(folder) / "events.jsonl").read_text().splitlines()


def _write(folder, lines) -> None:
    (Path(folder) / "events.jsonl").write_text("\n".join(lines) + "\n")


def test_replay_recomputes_the_result_and_refuses_tampered_folders(tmp_path):
    ep = tmp_path / "run"
    r = run("eval", "--objective", "maze_paint/easy", "--max-actions", "12", "--out", ep, "--json")
    assert r.exit_code == 0
    ep = ep / "maze_paint_easy" / "episode_001"
    rep = replay_episode(ep)
    assert rep.ok and rep.complete and any("result.json recomputed" in c for c in rep.checked)
    assert any("real time" in n or "real-time" in n for n in rep.not_checked)
    r = run("replay", ep)
    assert r.exit_code == 0 and "checked:" in r.output and "not checked:" in r.output

    def variant(name, change):
        d = tmp_path / name
        shutil.copytree(ep, d)
        change(d)
        return d

    def forge(d, **kv):
        res = json.loads((d / "result.json").read_text())
        for k, v in kv.items():
            res[k] = v
        (d / "result.json").write_text(json.dumps(res))

    diverged = {
        "forged success": lambda d: forge(d, success=True),
        "forged solved": lambda d: forge(d, solved=10),
        "forged metric": lambda d: forge(d, metrics={**json.loads((d / "result.json").read_text())["metrics"],
                                                     "OSR": 100.0}),
        "forged score": lambda d: forge(d, levels=[{**json.loads((d / "result.json").read_text())["levels"][0],
                                                    "score": 100.0}] + json.loads((d / "result.json").read_text())["levels"][1:]),
        "end missing": lambda d: _write(d, _lines(d)[:-1]),
    }
    for name, change in diverged.items():
        d = variant(name.replace(" ", "_"), change)
        assert not replay_episode(d).ok, name
        assert run("replay", d).exit_code == 1, name

    def drop(pred):
        return lambda d: _write(d, [l for l in _lines(d) if not pred(json.loads(l))])

    def edit_public(d):
        lines = _lines(d)
        rec = json.loads(lines[3])
        rec.pop("feedback")
        lines[3] = json.dumps(rec)
        _write(d, lines)

    def fpm(d):
        lines = _lines(d)
        head = json.loads(lines[0])
        head["settings"]["frames_per_move"] = 100_000
        lines[0] = json.dumps(head)
        _write(d, lines)

    refused = {
        "private deleted": drop(lambda r: r.get("stream") == "private" and r.get("step") == 4),
        "step deleted": drop(lambda r: r.get("step") == 5),
        "header only": lambda d: (_write(d, _lines(d)[:1]), (d / "result.json").unlink()),
        "missing key": edit_public,
        "non-UTF-8": lambda d: (d / "events.jsonl").write_bytes((d / "events.jsonl").read_bytes().replace(
            b'"stream"', b'"str\xffeam"', 1)),
        "absurd settings": fpm,
        "records after the end": lambda d: _write(d, _lines(d) + [_lines(d)[1]]),
    }
    for name, change in refused.items():
        d = variant(name.replace(" ", "_").replace("-", "_"), change)
        with pytest.raises(HarnessError):
            replay_episode(d)
        r = run("replay", d)
        assert r.exit_code == 2 and r.output.startswith("error:") and len(r.output.strip().splitlines()) == 1, name

    killed = variant("killed", lambda d: (_write(d, _lines(d)[:-1]), (d / "result.json").unlink()))
    rep = replay_episode(killed)
    assert rep.ok and not rep.complete
    assert run("replay", killed).exit_code == 1 and run("replay", killed, "--prefix").exit_code == 0


class Exits(BaseAgent):
    def act(self, obs):
        raise SystemExit(3)


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_sys_exit_in_a_trusted_agent_is_an_agent_error_with_the_result_written(tmp_path, timeout):
    r = run_objective(Exits(), "maze_paint", "easy", settings=Settings(action_timeout=timeout), folder=tmp_path)
    assert r.end == "agent_error" and "SystemExit" in r.error
    assert json.loads((tmp_path / "result.json").read_text())["end"] == "agent_error"


@pytest.mark.parametrize("scale", [3, 4])
def test_the_largest_scales_draw_every_screen(scale):
    """(The soak found it: at scale 3 a level screen's supersampled base broke the new bound.)"""
    s = Suite("rush_hour/easy/1", scale=scale)
    rend = Renderer("2d", scale)
    assert rend.render(s).shape == (960 * scale, 540 * scale, 3)
    s.dispatch(s.gesture_for(s.session.legal_moves()[0]))
    rend.render(s)
    assert Renderer("3d", scale).render(Suite("home", style="3d", scale=scale)).shape[0] == 960 * scale
