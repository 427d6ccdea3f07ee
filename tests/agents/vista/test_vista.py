"""The VISTA controller: one per episode, every tool call checked, run and logged; lossless
frame memory, inspection, pixel grids, history and attempts from public information, notes;
NGAR classes; the records reproduce every tool result from the episode folder."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from longpuzzle.agents.base import FinalAnswer, Observation
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import HarnessError, Settings, open_frames, read_events, replay_episode
from longpuzzle.agents.vista import SETTINGS, TOOLS, Controller, step_kind
from longpuzzle.agents.vista.archive import SYMBOLS
from longpuzzle.agents.vista.records import check_tool_records, tool_use

FAST = Settings(budget=600, action_timeout=None)
WAIT = {"action": {"type": "wait", "ms": 0}}


def _solve(c: Controller, on_turn=None) -> int:
    """Play the solver agent's gestures through play until the episode ends: each in the
    paper's form play(action, x, y, ...), a batch as one play per action where the episode
    takes no batches (VISTA: exactly one action per play). Returns the plays made."""
    agent = SolverAgent()
    agent.reset(c.instruction, c.action_spec)
    obs = Observation(None, None, 0, None)
    n = 0
    while not c.done:
        a = agent.act(obs)
        if isinstance(a, FinalAnswer):
            c.call("final_answer", {"text": "BENCHMARK COMPLETED"})
            break
        for x in a["actions"] if a["type"] == "batch" and not c.batch else [a]:
            r = c.call("play", {"action": x["type"], **{k: v for k, v in x.items() if k != "type"}})
            assert not r.error, r.text
            n += 1
            if on_turn is not None:
                on_turn(c, n)
        obs = Observation(np.zeros((1, 1, 3), np.uint8), None, n, None)
    return n


def _png_pixels(data: bytes) -> np.ndarray:
    import io

    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_the_solver_completes_an_objective_through_play_and_every_call_is_logged(tmp_path):
    seen = {}

    def probe(c, n):
        if n == 4:                                      # a few other tools on the way, and bad calls
            seen["inspect"] = c.call("inspect", {"question": "q", "views": [
                {"label": "all", "turn": 2},
                {"label": "corner", "turn": 3, "region": {"x": 10, "y": 20, "w": 50, "h": 30}}]})
            seen["pixels"] = c.call("read_pixels", {"question": "q", "views": [
                {"label": "whole", "turn": -1, "rows": 8, "cols": 4},
                {"label": "top", "turn": -1, "region": {"x": 0, "y": 0, "w": 540, "h": 100}, "rows": 2, "cols": 3}]})
            seen["shot"] = c.call("screenshot", {})
            seen["hist"] = c.call("history", {"view": "events", "start_turn": 2, "end_turn": 4})
            turn = c.turn
            for bad in ({"action": {"type": "click"}}, {"action": {"type": "click", "x": 9999, "y": 1}}, {},
                        {"action": "wait", "extra": 1}, "not an object"):
                assert c.call("play", bad).error
            assert c.call("nope", {}).error and c.call("inspect", {"views": [{"turn": 99}]}).error
            assert c.turn == turn and not c.done       # nothing dispatched, nothing lost

    c = Controller("nut_and_bolt", "easy", setting="vista", settings=FAST, folder=tmp_path)
    assert c.call("screenshot").error                   # no frame before the opening wait
    assert c.call("play", {"action": {"type": "click", "x": 5, "y": 5}}).error   # the first action must be a wait
    n = _solve(c, probe)
    r = c.result
    assert r.end == "completed" and r.outcome.success and r.actions == n
    assert c.call("play", WAIT).error                   # the episode has ended
    # NGAR steps. Native: the n - 3 gestures, both screenshots, the refused first click and
    # the four refused plays that attempted input. Other: the opening wait, the two waits for
    # Nut and Bolt's advance to the next level, inspect, read_pixels, history, the refused
    # play of a wait, the unknown tool, the bad inspect
    d = json.loads((tmp_path / "result.json").read_text())
    assert (d["native_steps"], d["other_steps"]) == ((n - 3) + 2 + 1 + 4, 3 + 3 + 1 + 2)
    t = d["tools"]
    assert t["by_tool"]["play"] == 1 + n + 5 and t["by_tool"]["inspect"] == 2 and t["errors"] == 9
    assert sum(l["calls"] for l in t["levels"]) == t["calls"] == len(
        [e for e in read_events(tmp_path) if e.get("stream") == "tools" and "tool" in e])
    assert [l["level"] for l in t["levels"]] == [None, "nut_and_bolt/easy/1", "nut_and_bolt/easy/2", "nut_and_bolt/easy/3"]
    assert t["images"] == n + 2 + 1 and t == tool_use(tmp_path)
    # every returned image and grid is reproduced from the folder; replay checks frames as before
    chk = check_tool_records(tmp_path)
    assert chk.ok and chk.checked == n + 2 + 1 + 2
    assert replay_episode(tmp_path).ok
    with open_frames(tmp_path) as fs:
        rec = next(e for e in read_events(tmp_path) if e.get("tool") == "inspect")
        crop = fs.read(rec["refs"][1]["index"], box=(10, 20, 60, 50))
    # the region enlarged by the largest factor that keeps it within the 540 x 960 frame: 10
    got = _png_pixels(seen["inspect"].images[1].png)
    assert got.shape == (300, 500, 3) and np.array_equal(got, np.repeat(np.repeat(crop, 10, 0), 10, 1))
    views = json.loads(seen["inspect"].text)["views"]
    assert [(v["label"], v["zoom"], v["region"]) for v in views] == [
        ("all", 1, {"x": 0, "y": 0, "w": 540, "h": 960}), ("corner", 10, {"x": 10, "y": 20, "w": 50, "h": 30})]
    out = json.loads(seen["pixels"].text)                      # one palette, one grid per view
    shot = _png_pixels(seen["shot"].images[0].png)
    assert [g["label"] for g in out["samples"]] == ["whole", "top"]
    for grid in out["samples"]:
        for i, y in enumerate(grid["y"]):
            for j, x in enumerate(grid["x"]):
                assert out["palette"][SYMBOLS.index(grid["grid"][i][j])] == "#{:02x}{:02x}{:02x}".format(*tuple(shot[y, x]))
    assert out["samples"][0]["y"][0] == 60 and out["samples"][0]["x"][0] == 67          # cell centres
    assert len(out["palette"]) == len(set(out["palette"]))
    h = json.loads(seen["hist"].text)                          # turns [2, 4)
    assert [e["turn"] for e in h["events"]] == [2, 3] and h["events"][-1]["feedback"] == "screen_changed"


def test_a_play_before_the_previous_result_is_refused(tmp_path):
    c = Controller("maze_paint", "easy", setting="native", settings=FAST, folder=tmp_path)
    assert [t.name for t in c.tools] == list(SETTINGS["native"])
    out = {}
    with c._lock:                                       # the first play is still running
        th = threading.Thread(target=lambda: out.setdefault("first", c.call("play", WAIT)))
        th.start()
        for _ in range(200):
            if c._playing:
                break
            time.sleep(0.005)
        second = c.call("play", WAIT)
    th.join()
    assert second.error and "previous play" in second.text
    assert not out["first"].error and c.turn == 1
    c.close()
    recs = [e for e in read_events(tmp_path) if e.get("tool") == "play"]
    assert [r.get("concurrent", False) for r in recs] == [True, False] and {r["call"] for r in recs} == {1, 2}
    assert (c.result.outcome.native_steps, c.result.outcome.other_steps) == (0, 2)
    assert c.result.end == "agent_stop" and c.result.outcome.scored


def test_history_attempts_follow_restarts_and_wins_from_the_screen(tmp_path):
    c = Controller("nut_and_bolt", "easy", setting="vista", settings=FAST, folder=tmp_path, batch=True)
    agent = SolverAgent()
    agent.reset(c.instruction, c.action_spec)
    obs = Observation(None, None, 0, None)
    restarted = False
    while not c.done:
        a = agent.act(obs)
        if isinstance(a, FinalAnswer):
            break
        c.call("play", {"action": a})
        obs = Observation(np.zeros((1, 1, 3), np.uint8), None, 0, None)
        s = c.ep.suite                                   # (the test finds the Restart button on the engine)
        if not restarted and s.screen["name"] == "level" and s.session.moves:
            w = next(w for w in s.layout().widgets if w.id == "restart")
            x, y = s.proj.to_px(*w.shape.center)
            c.call("play", {"action": {"type": "click", "x": int(x), "y": int(y)}})
            agent.model.dispatch({"type": "click", "x": int(x), "y": int(y)})
            agent.plan = []
            restarted = True
            at = json.loads(c.call("history", {"view": "attempts"}).text)
            assert at["level"] == {"game": "Nut and Bolt", "difficulty": "Easy", "level": 1}
            assert [(a["attempt"], a["started_by"], a["ended_by"]) for a in at["attempts"]] == \
                [(1, "entry", "restart"), (2, "restart", "ongoing")]
            second = at["attempts"][1]["start_turn"]              # attempts that started in [start, end)
            for lo, hi, want in ((second, None, [2]), (None, second, [1]), (None, second + 1, [1, 2])):
                q = {"view": "attempts", **({"start_turn": lo} if lo else {}), **({"end_turn": hi} if hi else {})}
                assert [a["attempt"] for a in json.loads(c.call("history", q).text)["attempts"]] == want
    assert c.done and c.call("history", {"view": "attempts"}).error      # no tool after the end
    lvl, at = c.history.view_attempts(None, None, 10)
    assert lvl["level"] == 3 and [a["ended_by"] for a in at] == ["win"]
    ev = c.history.attempts
    assert [(a.level[2], a.ended_by) for a in ev] == [(1, "restart"), (1, "win"), (2, "win"), (3, "win")]
    assert all("P" not in json.dumps(e) and "certificate" not in json.dumps(e) for e in c.history.events)
    c.close()


def test_notes_are_capped_kept_and_working_is_cleared_on_another_level(tmp_path):
    c = Controller("nut_and_bolt", "easy", setting="vista", settings=FAST, folder=tmp_path, guide="seed guide")
    assert json.loads(c.call("read_guide").text)["content"] == "seed guide"
    cleared = []

    def on_turn(c, n):
        lvl = c.history.level
        if lvl and lvl[2] == 1 and not cleared:
            assert not c.call("write_working", {"content": "level 1 plan"}).error
            big = c.call("write_guide", {"content": "x" * 20_000})
            assert big.error and json.loads(c.call("read_guide").text)["content"] == "seed guide"
            cleared.append(1)
        if lvl and lvl[2] == 2 and len(cleared) == 1:
            assert json.loads(c.call("read_working").text)["content"] == ""      # cleared: another level
            r = c.call("save_compact_checkpoint", {"guide": "g2", "working_memory": "w2"})
            assert not r.error and json.loads(r.text)["checkpoint"] == 1
            cleared.append(2)
    _solve(c, on_turn)
    assert cleared == [1, 2]
    assert (tmp_path / "notes" / "GUIDE.md").read_text() == "g2"
    assert (tmp_path / "notes" / "WORKING.md").read_text() == ""     # level 3 shown after it
    t = json.loads((tmp_path / "result.json").read_text())["tools"]
    assert t["checkpoints"] == 1 and t["working_cleared"] == 2


def test_inspect_views_archive_every_intermediate_frame_and_bounds_are_checked(tmp_path):
    c = Controller("maze_paint", "easy", setting="vista", settings=Settings(budget=600, frames_per_move=3),
                   folder=tmp_path)
    _solve(c, lambda c, n: None if n != 6 else _check_inspect(c))
    assert c.result.outcome.success


def _check_inspect(c):
    counts = {t: n for t, (_, n) in c.archive.turns.items()}
    moved = next(t for t, n in counts.items() if n > 1)          # a slide: its animation frames
    r = c.call("inspect", {"views": [{"turn": moved, "frame": k} for k in range(counts[moved])]})
    assert not r.error and len(r.images) == counts[moved] == 4
    frames = [_png_pixels(i.png) for i in r.images]
    assert not all(np.array_equal(frames[0], f) for f in frames[1:])       # the ball moves
    for k, f in enumerate(frames):          # exact, though the bands these frames share are compressed once
        assert np.array_equal(f, c.archive.read(c.archive.resolve(moved, k)[2]))
    assert c.call("inspect", {"views": [{"turn": 1}] * 17}).error
    assert c.call("inspect", {"views": [{"turn": 1, "box": [0, 0, 600, 10]}]}).error
    assert c.call("inspect", {"views": [{"turn": 1, "zoom": 99}]}).error
    assert c.call("inspect", {"views": [{"turn": 1, "frame": 5}]}).error
    assert c.call("read_pixels", {"views": [{"turn": 1}], "rows": 100, "cols": 100}).error     # over the cap
    assert c.call("read_pixels", {"views": [{"turn": 1}] * 5}).error      # 5 x 32 x 32 cells: over the cap
    # frames older than the in-memory cache come back from the episode's frame store
    c.archive._cache.clear()
    again = c.call("inspect", {"views": [{"turn": moved, "frame": 1}]})
    assert np.array_equal(_png_pixels(again.images[0].png), frames[1])


def test_ngar_classes_of_the_tools():
    assert step_kind("play", {"action": {"type": "click", "x": 1, "y": 1}}) == "native"
    assert step_kind("play", {"action": {"type": "wait", "ms": 5}}) == "other"
    assert step_kind("play", {"action": {"type": "batch", "actions": [{"type": "wait"}, {"type": "key", "name": "a"}]}}) \
        == "native"
    assert step_kind("screenshot", {}) == "native"
    for t in ("inspect", "read_pixels", "history", "read_guide", "write_guide", "read_working", "write_working",
              "save_compact_checkpoint", "run_python", "final_answer", "unknown"):
        assert step_kind(t, {}) == "other"
    assert set(SETTINGS["vista"]) | set(SETTINGS["code"]) == set(TOOLS)


def test_the_watchdog_ends_the_episode_at_the_deadline_while_the_agent_thinks(tmp_path):
    c = Controller("maze_paint", "easy", setting="native", settings=Settings(budget=1.0, action_timeout=None),
                   folder=tmp_path)
    assert not c.call("play", WAIT).error
    for _ in range(300):
        if c.done:
            break
        time.sleep(0.01)
    assert c.done and c.result.end == "budget"
    assert (tmp_path / "result.json").is_file()
    assert c.call("play", WAIT).error
    t = c.result.time
    assert t["charged"] >= 1.0 and t["agent"] > 0.5


def _wait_until(cond, seconds=10.0):
    t = time.perf_counter() + seconds
    while not cond() and time.perf_counter() < t:
        time.sleep(0.005)
    return cond()


def test_the_watchdog_sleeps_until_the_deadline_and_a_play_that_brings_it_closer_rearms_it(tmp_path):
    """No polling: the watchdog's wake-up is the deadline itself, moved by every play that
    charges simulated time, so the episode ends at the deadline however long it was."""
    ends = []
    c = Controller("maze_paint", "easy", setting="native", settings=Settings(budget=600, action_timeout=None),
                   folder=tmp_path, on_finish=lambda r: ends.append(time.perf_counter()))
    assert _wait_until(lambda: c._wake_at is None)               # no deadline before the clock starts
    assert not c.call("play", WAIT).error

    def deadline():
        return time.perf_counter() + c.ep.clock.left()           # constant while the agent thinks
    assert _wait_until(lambda: c._wake_at is not None and abs(c._wake_at - deadline()) < 0.01)
    assert c._wake_at > time.perf_counter() + 500                # asleep until the far deadline
    assert not c.call("play", {"action": {"type": "wait", "ms": 599_000}}).error   # ~0.7 s left
    due = deadline()
    assert due - time.perf_counter() < 1.0
    assert _wait_until(lambda: c.done)                           # ended by the watchdog, not a call
    assert c.result.end == "budget" and ends
    assert ends[0] >= due - 0.005                                # not before the deadline
    assert c.result.time["charged"] >= 600
    c.close()


def test_the_watchdog_ends_an_episode_after_the_action_timeout_without_a_play(tmp_path):
    c = Controller("maze_paint", "easy", setting="native", settings=Settings(budget=600, action_timeout=None),
                   folder=tmp_path, action_timeout=0.3)
    t0 = time.perf_counter()            # before the play: the watchdog's 0.3 s start during it
    assert not c.call("play", WAIT).error
    assert _wait_until(lambda: c.done)
    assert time.perf_counter() - t0 >= 0.3
    assert c.result.end == "agent_error" and "no play within 0.3 s" in c.result.error
    c.close()


def test_settings_that_cannot_serve_a_setting_are_refused():
    with pytest.raises(HarnessError):
        Controller("maze_paint", "easy", setting="nope")
    with pytest.raises(HarnessError):
        Controller("maze_paint", "easy", setting="vista", settings=Settings(save_frames=False))
    with pytest.raises(HarnessError):
        Controller("maze_paint", "easy", tools=("play", "teleport"))


def test_replay_reproduces_every_tool_result_and_catches_a_changed_one(tmp_path):
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, folder=tmp_path)
    c.call("play", WAIT)
    c.call("inspect", {"views": [{"turn": 1, "box": [0, 0, 40, 40], "zoom": 2}]})
    c.call("read_pixels", {"views": [{"turn": 1, "rows": 3, "cols": 3}, {"turn": 1, "region": {"x": 5, "y": 5, "w": 50,
                                                                                             "h": 9}}]})
    c.call("final_answer", {"text": "x"})
    r = CliRunner().invoke(cli, ["replay", str(tmp_path)])
    assert r.exit_code == 0 and "4 tool results reproduced" in r.output
    ev = (tmp_path / "events.jsonl").read_text().splitlines()
    k = next(i for i, l in enumerate(ev) if '"tool":"inspect"' in l)
    rec = json.loads(ev[k])
    rec["refs"][0]["box"] = [0, 0, 40, 41]                      # not what was sent
    ev[k] = json.dumps(rec)
    k = next(i for i, l in enumerate(ev) if '"tool":"read_pixels"' in l)
    rec = json.loads(ev[k])
    rec["refs"][1]["region"] = [0, 0, 540, 960]                 # the whole frame, not the strip sent
    ev[k] = json.dumps(rec)
    (tmp_path / "events.jsonl").write_text("\n".join(ev) + "\n")
    chk = check_tool_records(tmp_path)
    assert not chk.ok and "call 2 (inspect)" in chk.problems[0] and "call 3 (read_pixels)" in chk.problems[1]
    r = CliRunner().invoke(cli, ["replay", str(tmp_path)])
    assert r.exit_code == 1 and "DIVERGED" in r.output


def test_zoom_is_the_same_compiled_or_not(monkeypatch):
    import numba  # noqa: F401  (the compiled zoom is used where numba is loaded)

    from longpuzzle.agents.vista import archive
    f = np.random.default_rng(3).integers(0, 256, (60, 40, 3), dtype=np.uint8)
    cases = [((0, 0, 40, 60), 2), ((3, 5, 17, 9), 3), ((39, 59, 40, 60), 16), ((1, 2, 30, 50), 1)]
    assert archive._zoom_kernel() is not None
    fast = [archive.crop_zoom(f, box, z) for box, z in cases]
    monkeypatch.setattr(archive, "_zoom_kernel", lambda: None)
    for (box, z), a in zip(cases, fast):
        x0, y0, x1, y1 = box
        want = f[y0:y1, x0:x1].repeat(z, axis=0).repeat(z, axis=1)
        assert a.shape == want.shape and np.array_equal(a, want) and np.array_equal(archive.crop_zoom(f, box, z), want)


def test_a_picture_is_made_once_whatever_turn_shows_it(tmp_path):
    """Views of equal frames of different turns share one PNG (and the hash of its pixels)."""
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, folder=tmp_path)
    c.call("play", WAIT)
    for _ in range(3):
        assert not c.call("play", {"action": {"type": "wait", "ms": 10}}).error   # the same screen again
    c._pngs.clear()
    r = c.call("inspect", {"views": [{"turn": t, "box": [0, 0, 100, 80], "zoom": 2} for t in (1, 2, 3, 4)]
                           + [{"turn": t} for t in (1, 4)]})
    assert not r.error and len(r.images) == 6
    assert len({id(i.png) for i in r.images[:4]}) == 1 and len({i.ref["hash"] for i in r.images[:4]}) == 1
    assert r.images[4].png is r.images[5].png
    assert r.images[4].ref["hash"] == c.archive.digest(c.archive.index(1))
    assert len(c._pngs) == 2
    assert np.array_equal(_png_pixels(r.images[0].png), c.archive.read(c.archive.index(2))[:80, :100]
                          .repeat(2, axis=0).repeat(2, axis=1))
    c.close()


def test_play_takes_exactly_one_action_and_returns_the_available_actions(tmp_path):
    """VISTA's play(action, x, y): one action, named, its result with n_frames and the actions
    play accepts now; a batch only where the episode takes them (native, code, or batch=True)."""
    c = Controller("nut_and_bolt", "easy", setting="vista", settings=FAST, folder=tmp_path)
    assert not c.batch and c.available_actions() == ["wait"]
    schema = next(t for t in c.tools if t.name == "play").schema
    assert "batch" not in schema["properties"]["action"]["anyOf"][0]["enum"]
    r = json.loads(c.call("play", {"action": "wait", "ms": 0}).text)
    assert r["turn"] == 1 and r["n_frames"] == 1 and r["available_actions"] == list(TOOLS["play"].schema[
        "properties"]["action"]["anyOf"][0]["enum"]) and "batch" not in r["available_actions"]
    two = [{"type": "click", "x": 270, "y": 615}, {"type": "click", "x": 270, "y": 260}]
    for batch in ({"action": "batch", "actions": two}, {"action": {"type": "batch", "actions": two}}):
        bad = c.call("play", batch)
        assert bad.error and "exactly one action" in bad.text and c.turn == 1     # nothing dispatched
    assert c.call("play", {"action": "click", "x": 270}).error                   # no y
    assert c.call("play", {"action": "click", "x": 270, "y": 615, "z": 1}).error
    r = json.loads(c.call("play", {"action": "click", "x": 270, "y": 615}).text)
    assert r["turn"] == 2 and r["feedback"] == "screen_changed"
    assert json.loads(c.call("play", {"action": {"type": "click", "x": 270, "y": 260}}).text)["turn"] == 3
    c.call("final_answer", {"text": "stop"})
    assert c.available_actions() == []
    for setting, batch in (("native", None), ("code", None), ("vista", True)):
        d = Controller("nut_and_bolt", "easy", setting=setting, settings=FAST, folder=tmp_path / setting, batch=batch)
        assert d.batch and "batch" in next(t for t in d.tools if t.name == "play").schema["properties"]["action"][
            "anyOf"][0]["enum"]
        d.call("play", WAIT)
        r = json.loads(d.call("play", {"action": "batch", "actions": two}).text)
        assert r["turn"] == 2 and "batch" in r["available_actions"]
        d.close()


def test_history_defaults_to_64_records_of_turns_start_to_before_end(tmp_path):
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, folder=tmp_path)
    for _ in range(70):
        c.call("play", {"action": "wait", "ms": 1})
    ev = json.loads(c.call("history", {"view": "events"}).text)["events"]
    assert [e["turn"] for e in ev] == list(range(7, 71)) and ev[0]["n_frames"] == 1
    ev = json.loads(c.call("history", {"view": "events", "start_turn": 5, "end_turn": 9, "limit": 3}).text)["events"]
    assert [e["turn"] for e in ev] == [6, 7, 8]                      # [5, 9), the latest 3
    assert c.call("history", {"view": "events", "start": 5}).error    # the paper's names
    c.close()


def test_a_checkpoint_with_guide_none_keeps_the_guide_and_the_pause_holds_until_one_is_saved(tmp_path):
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, folder=tmp_path, guide="seed")
    c.call("play", WAIT)
    r = c.call("save_compact_checkpoint", {"working_memory": "w1"})                    # guide left out
    assert not r.error and json.loads(r.text)["guide"] == "unchanged"
    assert not c.call("save_compact_checkpoint", {"guide": None, "working_memory": "w2"}).error   # guide null
    notes = tmp_path / "notes"
    assert (notes / "GUIDE.md").read_text() == "seed" and (notes / "WORKING.md").read_text() == "w2"
    assert c.call("save_compact_checkpoint", {"guide": "g"}).error                     # working_memory is needed
    # the pause: the agent's context is nearly full
    assert c.request_checkpoint()
    turn = c.turn
    for name, args in (("play", WAIT), ("screenshot", {}), ("inspect", {"views": [{"turn": 1}]}),
                       ("write_working", {"content": "x"})):
        r = c.call(name, args)
        assert r.error and "paused" in r.text and "save_compact_checkpoint" in r.text, name
    assert c.turn == turn
    assert json.loads(c.call("read_guide").text)["content"] == "seed"                   # reading still answers
    assert not c.call("save_compact_checkpoint", {"guide": "g3", "working_memory": "w3"}).error
    assert not c.call("play", WAIT).error and not c.checkpoint_due
    c.close()
    paused = [e for e in read_events(tmp_path) if e.get("paused")]
    assert [e["tool"] for e in paused] == ["play", "screenshot", "inspect", "write_working"]
    t = json.loads((tmp_path / "result.json").read_text())["tools"]
    assert (t["paused"], t["checkpoints"]) == (4, 3)
    # without the notes tools there is no pause
    n = Controller("maze_paint", "easy", setting="native", settings=FAST, folder=tmp_path / "n")
    assert not n.request_checkpoint() and not n.call("play", WAIT).error
    n.close()


def test_the_pause_comes_by_itself_once_the_estimated_context_is_full(tmp_path):
    """For a client whose context the harness does not see (MCP): the estimated tokens sent
    since the last checkpoint (an image of 540 x 960 about 691) reach checkpoint_tokens."""
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, folder=tmp_path, checkpoint_tokens=2000)
    c.call("play", WAIT)
    shots = 0
    while not c.call("screenshot").error:
        shots += 1
        assert shots < 10
    assert shots == 2 and c.checkpoint_due                       # 3 images of ~700 tokens, and the texts
    assert not c.call("save_compact_checkpoint", {"working_memory": "w"}).error and c.context_estimate < 100
    assert not c.call("screenshot").error
    c.close()


def test_the_docs_figures_of_the_tools_are_the_codes():
    """Every bound the tools guide (docs/guides/tools.md) states, read back and compared with the code."""
    import re
    from pathlib import Path

    from longpuzzle.agents.vista import controller, tools
    from longpuzzle.agents.vista.cli import CHECKPOINT_TOKENS
    from longpuzzle.agents.vista.code import OUTPUT_CAP
    text = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "tools.md").read_text(encoding="utf-8")
    text = " ".join(text[text.index("# Tools: the VISTA harness"):].split())

    def num(pattern):
        m = re.search(pattern, text)
        assert m, pattern
        return [int(g.replace(",", "")) for g in m.groups()]
    assert num(r"up to (\d+) views `\{label, turn") == [tools.MAX_VIEWS]
    assert num(r"largest whole factor \(1-(\d+)\)") == [tools.MAX_ZOOM]
    assert num(r"\((\d+) x (\d+) cells by default") == [tools.PIXEL_GRID] * 2
    assert num(r"at most (\d+) cells per call, (\d+) a side") == [tools.MAX_SAMPLES, tools.MAX_SIDE]
    assert num(r"limit=(\d+)\)") == [tools.HISTORY_LIMIT]
    assert num(r"durable notes for the whole episode \(([\d,]+) characters") == [tools.NOTES_CAP]
    assert num(r"w x h / (\d+) tokens \(at most ([\d,]+)\)") == [controller.IMAGE_TOKEN_PIXELS,
                                                                controller.IMAGE_TOKENS_CAP]
    assert num(r"`--checkpoint-tokens` \(default ([\d,]+);") == [CHECKPOINT_TOKENS]
    assert num(r"capped at ([\d,]+) characters") == [OUTPUT_CAP]
    # the estimate's image tokens: w x h / 750, as the tools guide says
    c = Controller("maze_paint", "easy", setting="vista", settings=FAST, checkpoint_tokens=10 ** 9)
    c.call("play", WAIT)
    before = c.context_estimate
    r = c.call("screenshot")
    assert c.context_estimate - before == (len('{}') + len(r.text)) // 4 + 540 * 960 // controller.IMAGE_TOKEN_PIXELS
    c.close()


def test_a_play_validates_its_action_once(tmp_path, monkeypatch):
    """Validate once (issue 37): the controller checks a play's action and the episode runs
    that checked action; it is not validated again (one call of the engine's validation per
    action; a bad action is validated once too, and refused)."""
    from longpuzzle.engine import gui
    calls = []
    real = gui.validate

    def spy(action, size):
        calls.append(action)
        return real(action, size)

    monkeypatch.setattr(gui, "validate", spy)
    c = Controller("nut_and_bolt", "easy", setting="vista", settings=FAST, folder=tmp_path)
    for args, error in ((WAIT, False), ({"action": "click", "x": 270, "y": 615}, False),
                        ({"action": "click", "x": 270}, True)):
        calls.clear()
        assert c.call("play", args).error is error
        assert len(calls) == 1
    c.close()
