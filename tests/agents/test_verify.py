"""Results that prove themselves (issue 35): a genuine run verifies; every single-field
tampering of it is refused by ``replay RUN_DIR``, ``report`` and ``leaderboard`` with one line
naming the first difference; a folder set aside by --resume is recognised; a verification
record is trusted only while it matches the files; a forged frame size or a huge events line
is refused before it costs memory."""

import json
import shutil
import tracemalloc

import pytest
from click.testing import CliRunner

from longpuzzle.agents.harness import HarnessError, ObjectiveEpisode, Settings, replay_episode
from longpuzzle.agents.harness.trajectory import read_header
from longpuzzle.agents.runner import RunConfig, SequentialBackend, execute, start_run
from longpuzzle.agents.verify import RECORD_FILE, check_run
from longpuzzle.cli import cli
from longpuzzle.agents.testing.fuzz.results import EPISODE, check_tampering, copy_as_other, make_runs, tamperings


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("genuine"))


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGPUZZLE_VERIFY_KEY", str(tmp_path / "verify.key"))     # this test's own key


def replay_peak(folder) -> tuple:
    """(the replay's report or the HarnessError it raised, the peak of memory it allocated)."""
    tracemalloc.start()
    try:
        rep = replay_episode(folder)
    except HarnessError as e:
        rep = e
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return rep, peak


def warm_peak(folder) -> int:
    """The peak of memory a replay of a genuine episode allocates, once everything a replay
    uses (kernels, caches) was loaded by a first replay."""
    replay_episode(folder)
    rep, peak = replay_peak(folder)
    assert rep.ok
    return peak


def test_a_genuine_run_verifies_and_gets_its_record(genuine, tmp_path):
    a = tmp_path / "a"
    shutil.copytree(genuine[0], a)
    r = run("replay", a)
    assert r.exit_code == 0, r.output
    assert "2 episodes replayed: 2 matched, 0 diverged" in r.output and "run VERIFIED: " in r.output
    assert (a / RECORD_FILE).is_file()
    chk = check_run(a)
    assert chk.ok and chk.source == "record"
    r = run("leaderboard", a)
    assert r.exit_code == 0 and f"{a}: verified by its verification record" in r.output
    # the record names every file it covers: an edited file makes it worthless (replayed again)
    summ = a / "summary.json"
    summ.write_text(summ.read_text().replace('"OSR": 0.0', '"OSR": 100.0', 1))
    chk = check_run(a)
    assert not chk.ok and chk.source == "replayed" and chk.first.startswith("summary.json.metrics.OSR differs")
    # a record written with another user's key (or by hand) is not trusted
    summ.write_text((genuine[0] / "summary.json").read_text())
    doc = json.loads((a / RECORD_FILE).read_text())
    doc["seal"] = "0" * 64
    (a / RECORD_FILE).write_text(json.dumps(doc))
    assert check_run(a).source == "replayed"


def test_every_single_field_tampering_of_a_genuine_run_is_refused(genuine, tmp_path):
    a, b = genuine
    assert check_run(a, use_record=False).ok
    items = list(tamperings(a, b))
    names = [n for n, _ in items]
    for part in ("header evaluator_start all won", "header start on a level", "public record frames changed",
                 "private record record.effects changed", "end record end changed", "result.json metrics.OSR changed",
                 "summary.json OSR, LC, FGP 100", "run.json agent renamed",
                 "a duplicated episode, run.json's count raised", "an episode copied from another run",
                 "the frame file claims 32768 x 32768", "events.jsonl truncated (result.json kept)",
                 "two actions swapped", "end changed to infrastructure_error, result.json made to match"):
        assert part in names, part
    assert len(items) > 250
    failures = [(n, why) for n, t in items if (why := check_tampering(a, tmp_path, n, t))]
    assert failures == []


@pytest.mark.parametrize("name", ["header evaluator_start all won", "summary.json OSR, LC, FGP 100",
                                  "end changed to infrastructure_error, result.json made to match",
                                  "a duplicated episode, run.json's count raised", "run.json agent renamed",
                                  "private record record.effects changed"])
def test_the_reported_forgeries_are_refused_by_replay_report_and_leaderboard(genuine, tmp_path, name):
    """The attacks of issue 35, through the commands: one line naming the first difference."""
    a, b = genuine
    tamper = dict(tamperings(a, b))[name]
    d = tmp_path / "t"
    shutil.copytree(a, d)
    tamper(d)
    r = run("replay", d)
    assert r.exit_code == 1 and r.output.strip().splitlines()[-1].startswith("run NOT VERIFIED: "), r.output
    for cmd in (["leaderboard", d], ["report", d, "--no-videos"]):
        r = run(*cmd)
        assert r.exit_code == 2 and r.output.startswith(f"error: {d}: not verified: ") \
            and len(r.output.strip().splitlines()) == 1, (cmd, r.output)
    r = run("leaderboard", d, "--unverified")
    assert r.exit_code == 0 and f"! {d}: UNVERIFIED: " in r.output
    if name == "summary.json OSR, LC, FGP 100":     # the page shows it, marked
        r = run("report", d, "--no-videos", "--unverified")
        assert r.exit_code == 0, r.output
        page = (d / "report.html").read_text()
        assert "UNVERIFIED" in page and "summary.json.metrics" in page


def test_a_folder_set_aside_by_resume_is_recognised(tmp_path):
    """An episode killed mid-way (no end, no result) is set aside by --resume as
    .interrupted-1 and run again; the finished run verifies, the prefix replayed as such."""
    out = tmp_path / "run"
    cfg = RunConfig(agent="solver", objectives=["maze_paint/easy"], episodes=1,
                    settings=Settings(max_actions=6, action_timeout=None).as_dict())
    start_run(out, cfg)
    ep = ObjectiveEpisode("maze_paint", "easy", settings=Settings(max_actions=6, action_timeout=None),
                          folder=out / EPISODE, agent_name="solver",
                          header={"planned": {"folder": EPISODE, "attempt": 0}})    # as run_episode writes it
    ep.submit({"type": "wait", "ms": 0}, 0.01)
    ep.submit({"type": "click", "x": 270, "y": 721}, 0.01)
    ep.run.traj.close()                                    # killed here: no end record, no result.json
    execute(out, cfg, backend=SequentialBackend(), quiet=True)
    aside = out / (EPISODE + ".interrupted-1")
    assert aside.is_dir() and not (aside / "result.json").exists()
    r = run("replay", out)
    assert r.exit_code == 0, r.output
    assert f"{EPISODE}.interrupted-1 (set aside by --resume: interrupted): 2 actions replayed; a valid prefix" \
        in r.output
    # a set-aside folder that does not replay fails the run
    ev = aside / "events.jsonl"
    ev.write_text(ev.read_text().replace('"x":270', '"x":20', 1))
    r = run("replay", out)
    assert r.exit_code == 1 and "interrupted-1 (set aside by --resume): " in r.output.splitlines()[-1]


def test_a_forged_frame_size_is_refused_before_any_frame_is_decoded(genuine, tmp_path):
    """A small frame file whose header (and record) claim a frame far larger than the screen
    (it compresses to almost nothing): refused before it is decoded."""
    import numpy as np
    from longpuzzle.agents.harness.frames import FRAME_HASH, FrameEncoder, hasher

    d = tmp_path / "ep"
    shutil.copytree(genuine[0] / EPISODE, d)
    big = np.zeros((6144, 6144, 3), np.uint8)
    enc = FrameEncoder(FRAME_HASH)
    (d / "frames.lpf").write_bytes(enc.file_header(big) + enc.records([(0, big, hasher(FRAME_HASH)(big))]))
    assert (d / "frames.lpf").stat().st_size < 200_000
    del big
    genuine_peak = warm_peak(genuine[0] / EPISODE)
    rep, peak = replay_peak(d)
    assert not rep.ok and "6144 x 6144" in rep.divergence and "540 x 960" in rep.divergence, rep.divergence
    assert peak < genuine_peak + 8 * 2 ** 20, (peak, genuine_peak)     # decoded, the frame is 113 MB
    # the report's videos read stored frames of that size only
    from longpuzzle.agents.report.data import stored_frames
    assert stored_frames(d) is None
    good = stored_frames(genuine[0] / EPISODE)
    assert good is not None and good.read(0).shape == (960, 540, 3)
    good.close()


def test_a_huge_events_line_is_refused_before_it_is_read_whole(genuine, tmp_path):
    d = tmp_path / "ep"
    shutil.copytree(genuine[0] / EPISODE, d)
    lines = (d / "events.jsonl").read_text().splitlines()
    with open(d / "events.jsonl", "w") as f:
        f.write(lines[0] + "\n")
        f.write('{"stream":"tools","note":"' + "x" * 30_000_000 + '"}\n')
        f.write("\n".join(lines[1:]) + "\n")
    genuine_peak = warm_peak(genuine[0] / EPISODE)
    err, peak = replay_peak(d)
    assert isinstance(err, HarnessError) and "line 2 is longer than any genuine episode writes there" in str(err)
    assert peak < genuine_peak + 4 * 2 ** 20, (peak, genuine_peak)       # the line is 30 MB


def test_a_continued_episode_replays_from_the_verified_step_it_continues(genuine, tmp_path):
    from longpuzzle.agents.scripted import SolverAgent
    from longpuzzle.agents.harness import continue_episode, read_events

    src = tmp_path / "src"
    shutil.copytree(genuine[0] / EPISODE, src)
    continue_episode(src, 4, SolverAgent(), note="carry on", settings=Settings(max_actions=3, action_timeout=None),
                     out=tmp_path / "cont")
    assert replay_episode(tmp_path / "cont").ok
    head = read_events(tmp_path / "cont")[0]
    assert head["continued_from"]["step"] == 4
    # the episode it continues changed since: its start cannot be derived
    ev = src / "events.jsonl"
    ev.write_text(ev.read_text() + "\n")
    with pytest.raises(HarnessError, match="whose events have changed since"):
        replay_episode(tmp_path / "cont")


def test_a_level_protocol_run_verifies_and_its_chain_result_is_recomputed(tmp_path):
    """A level-protocol episode's result.json is what its (replayed) levels make, field by
    field, even when summary.json was recomputed to match a forged one."""
    from longpuzzle.agents.runner import load_run, summarise

    out = tmp_path / "run"
    cfg = RunConfig(agent="solver", objectives=["maze_paint/easy"], protocol="level", mode="all_levels",
                    settings=Settings(max_actions=3, action_timeout=None).as_dict())
    start_run(out, cfg)
    execute(out, cfg, backend=SequentialBackend(), quiet=True)
    assert check_run(out, use_record=False).ok
    for field, value in (("levels_outcome", None), ("solved", 10), ("time", None), ("rules", None),
                         ("catalog", {"name": "x"}), ("end", "completed"), ("cell_score", 100.0)):
        d = tmp_path / field
        shutil.copytree(out, d)
        p = d / EPISODE / "result.json"
        res = json.loads(p.read_text())
        if value is None:                      # the first part of it changed
            v = res[field]
            value = [{**v[0], "won": not v[0]["won"]}] + v[1:] if isinstance(v, list) else \
                {**v, sorted(v)[0]: "forged"}
        res[field] = value
        p.write_text(json.dumps(res))
        run_cfg = load_run(d)                  # summary.json made to match, as a forger would
        (d / "summary.json").write_text(json.dumps(summarise(run_cfg, [res])))
        chk = check_run(d, use_record=False)
        assert not chk.ok and chk.first.startswith(f"{EPISODE}: result.json.{field}"), (field, chk.first)


def test_replay_holds_one_record_at_a_time_not_the_file(genuine, tmp_path):
    """events.jsonl is read as a stream: 20 MB of a driver's lines in it (2,000 tool notes,
    which a replay passes over) cost a replay no more memory than the genuine file."""
    d = tmp_path / "ep"
    shutil.copytree(genuine[0] / EPISODE, d)
    lines = (d / "events.jsonl").read_text().splitlines()
    note = json.dumps({"stream": "tools", "note": "x" * 10_000})
    (d / "events.jsonl").write_text("\n".join(lines[:1] + [note] * 2000 + lines[1:]) + "\n")
    genuine_peak = warm_peak(genuine[0] / EPISODE)
    rep, peak = replay_peak(d)
    assert rep.ok and rep.complete, rep.divergence
    assert peak < genuine_peak + 4 * 2 ** 20, (peak, genuine_peak)       # the file is 20 MB


AGENT_FILE = '''
from longpuzzle.agents.base import BaseAgent, InfrastructureError, first_action


class FlakyProvider(BaseAgent):
    """Every episode: a wait, then its 'provider' fails (an infrastructure failure)."""

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        raise InfrastructureError("the provider went away")
'''


def test_a_copy_filed_as_another_episode_is_refused_by_its_identity(genuine, tmp_path):
    """Episode 1 copied over episode 2, result.json's folder edited and a real-time value
    changed (no byte copy): the header's planned identity still names episode 1."""
    d = tmp_path / "a"
    shutil.copytree(genuine[0], d)
    copy_as_other(d)
    chk = check_run(d, use_record=False)
    assert not chk.ok and chk.first == ("maze_paint_easy/episode_002: the header's planned identity is "
                                        "'maze_paint_easy/episode_001': a copy filed as "
                                        "'maze_paint_easy/episode_002'"), chk.first


def test_an_episode_written_before_identities_replays_its_run_is_refused(genuine, tmp_path):
    """Headers without a planned identity (written before it was recorded): each episode
    still replays on its own; the run's verification refuses them with a clear line."""
    d = tmp_path / "a"
    shutil.copytree(genuine[0], d)
    for ep in ("episode_001", "episode_002"):
        p = d / "maze_paint_easy" / ep / "events.jsonl"
        recs = p.read_text(encoding="utf-8").splitlines(keepends=True)
        head = json.loads(recs[0])
        del head["planned"]
        p.write_text(json.dumps(head, separators=(",", ":")) + "\n" + "".join(recs[1:]), encoding="utf-8")
        assert replay_episode(p.parent).ok
    chk = check_run(d, use_record=False)
    assert not chk.ok and "the header records no planned identity" in chk.first, chk.first


def test_attempts_set_aside_for_an_unscored_episode_are_recognised(tmp_path):
    """An episode that ends unscored (infrastructure_error) is run again up to the run's
    retries, each failed attempt kept as .attempt-N: the run verifies with them; without one
    of them the unscored end is refused (the run would have run it again)."""
    agent = tmp_path / "flaky.py"
    agent.write_text(AGENT_FILE)
    out = tmp_path / "run"
    cfg = RunConfig(agent=str(agent), objectives=["maze_paint/easy"], infra_retries=2, agent_file={"trusted": True},
                    settings=Settings(max_actions=5, action_timeout=None).as_dict())
    start_run(out, cfg)
    s = execute(out, cfg, backend=SequentialBackend(), quiet=True)
    assert s["episodes"][0]["end"] == "infrastructure_error"
    assert sorted(p.name for p in (out / "maze_paint_easy").iterdir()) == [
        "episode_001", "episode_001.attempt-1", "episode_001.attempt-2"]
    chk = check_run(out, use_record=False)
    assert chk.ok, chk.first
    assert [e.get("superseded") for e in chk.episodes] == [None, "attempt", "attempt"]
    heads = [read_header(out / "maze_paint_easy" / n) for n in ("episode_001.attempt-1", "episode_001.attempt-2",
                                                                 "episode_001")]
    assert [h["planned"] for h in heads] == [{"folder": "maze_paint_easy/episode_001", "attempt": n} for n in (0, 1, 2)]
    # a deterministic agent's attempts differ only in real time: with timings that round
    # alike (here: the first attempt's files, its header's attempt number 1) the run verifies
    same = tmp_path / "same_timings"
    shutil.copytree(out, same)
    a1, a2 = same / "maze_paint_easy" / "episode_001.attempt-1", same / "maze_paint_easy" / "episode_001.attempt-2"
    shutil.rmtree(a2)
    shutil.copytree(a1, a2)
    chk = check_run(same, use_record=False)        # a byte copy: its header says attempt 0
    assert not chk.ok and "attempt-2: the header's planned identity is attempt 0" in chk.first, chk.first
    recs = (a2 / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    head = json.loads(recs[0])
    head["planned"]["attempt"] = 1
    (a2 / "events.jsonl").write_text(json.dumps(head, separators=(",", ":")) + "\n" + "".join(recs[1:]),
                                      encoding="utf-8")
    chk = check_run(same, use_record=False)
    assert chk.ok, chk.first
    d = tmp_path / "one_less"
    shutil.copytree(out, d)
    shutil.rmtree(d / "maze_paint_easy" / "episode_001.attempt-2")
    chk = check_run(d, use_record=False)
    assert not chk.ok and "'infrastructure_error' with 1 attempts set aside" in chk.first, chk.first
