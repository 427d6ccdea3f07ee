"""Results people can read: trajectory analytics (known in advance for scripted episodes),
the report page (checked in a real headless Chromium), the leaderboard (never merging across
identities; reference rows from data files), and episode videos."""

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from longpuzzle.agents.report.analytics import analyze_episode, analyze_run
from longpuzzle.agents.report.data import load_run, run_metrics
from longpuzzle.agents.report.tables import group_runs
from longpuzzle.cli import cli

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))
from browser import Browser  # noqa: E402

SCRIPTED = str(HERE / "data" / "scripted_agent.py")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _eval(out, *args):
    r = run("eval", "--out", out, "--json", *args)
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {
        "scripted": _eval(root / "scripted", "--agent", SCRIPTED, "--trusted-agent", "--objective", "nut_and_bolt/medium",
                          "--objective", "maze_paint/easy"),
        # two runs of one identity (same agent and settings): pooled into one row
        "solver_a": _eval(root / "solver_a", "--agent", "solver", "--objective", "maze_paint/easy",
                          "--objective", "maze_paint/medium", "--objective", "bolt_unscrew/easy", "--max-actions", "30"),
        "solver_b": _eval(root / "solver_b", "--agent", "solver", "--objective", "color_connect/easy",
                          "--max-actions", "30"),
        # another harness configuration (the action cap): never pooled with the two above
        "solver_c": _eval(root / "solver_c", "--agent", "solver", "--objective", "maze_paint/easy",
                          "--max-actions", "12", "--no-frames"),
        "level": _eval(root / "level", "--agent", "solver", "--protocol", "level", "--objective", "maze_paint/easy",
                       "--max-actions", "9"),
    }


# ---- analytics ------------------------------------------------------------------------

def test_dead_ends_and_their_delay_in_a_scripted_nut_and_bolt_episode(runs):
    a = analyze_run(runs["scripted"])
    ep = next(e for e in a["episodes"] if e["objective"] == "nut_and_bolt/medium")
    first, second = ep["attempts"]
    assert first["level"] == second["level"] == "nut_and_bolt/medium/1"
    # ten transfers to the first unsolvable board, two more, three undos: recovered
    assert first["end"] == "restart" and first["transfers"] == 12 and first["undos"] == 3
    assert first["dead_end_transfer"] == 10 and first["dead_end_delay"] == 3 and first["dead_end_recovered"] is True
    assert first["dead_spells"][0]["end_step"] > first["dead_end_step"]
    # after the restart the same ten moves, then the final answer: never left
    assert (second["number"], second["end"], second["transfers"]) == (2, "end", 10)
    assert second["dead_end_delay"] == 1 and second["dead_end_recovered"] is False
    assert ep["dead_ends"] == {"attempts": 2, "dead_end_attempts": 2, "share": 100.0, "recovered": 1,
                               "mean_delay": 2.0, "max_delay": 3}
    # Figure 2c: the two transfers after the fatal one were played on a lost board (the undos
    # are no moves); the second attempt stopped at its dead end
    assert (first["lost_moves"], second["lost_moves"]) == (2, 0)
    assert first["lost_moves_no_free_hole"] is None and first["no_free_hole_step"] is None   # Bolt Unscrew only
    assert ep["dead_ends_by_game"] == [{"game": "nut_and_bolt", "attempts": 2, "no_free_hole": None, "exhaustive": {
        "dead_end_attempts": 2, "share": 100.0, "lost_moves": {"attempts": 2, "median": 1.0, "mean": 1.0, "max": 2,
                                                                "total": 2}}}]
    assert ep["lc_deficit"]["unreached_levels"] == 2 and ep["lc_deficit"]["reached_unsolved_levels"] == 1
    assert ep["lc_deficit"]["unreached"] == pytest.approx(200 / 3)
    assert [x for x, _ in ep["restarts"]] == [first["end_step"]]


def _bolt_records(script):
    """Private records of Bolt Unscrew level attempts from (effect, exhaustive certificate,
    usable holes, P) per action; a "restart" starts the next attempt."""
    lid = "bolt_unscrew/easy/1"
    recs = [{"level": lid, "P": 0.0, "effects": [], "certificate": "solvable", "diagnostics": {"usable_holes": 2}}]
    for eff, cert, holes, P in script:
        recs.append({"level": lid, "P": P, "effects": [{"effect": eff, "changed": True}] if eff else [],
                     "certificate": cert, "diagnostics": {"usable_holes": holes}, "win": P >= 1.0})
    return recs


def test_figure_2c_counts_both_bolt_unscrew_certificates_and_the_moves_on_a_lost_board():
    from longpuzzle.agents.report.analytics import _Walker, dead_ends_by_game
    S, D = "solvable", "dead_end"
    script = [
        # attempt 1: the exhaustive search says lost after step 2 while a hole is still free; the
        # last hole goes at step 3 (the paper's certificate); then two rejected clicks
        ("move", D, 1, 0.1), ("move", D, 0, 0.1), ("rejected", D, 0, 0.1), ("rejected", D, 0, 0.1),
        # attempt 2: lost at once (both certificates), then restarted
        ("restart", S, 2, 0.0), ("move", D, 0, 0.0),
        # attempt 3: lost with a hole left, nine moves on it, the last two with no hole left
        ("restart", S, 2, 0.0), ("move", D, 1, 0.0)] + [("move", D, 1, 0.0)] * 7 + [("move", D, 0, 0.0)] * 2 + [
        ("rejected", D, 0, 0.0),
        # attempt 4: won
        ("restart", S, 2, 0.0), ("move", S, 2, 0.5), ("move", None, 2, 1.0)]
    w = _Walker()
    for k, rec in enumerate(_bolt_records(script)):
        if rec["effects"] and rec["effects"][0]["effect"] == "restart":
            rec["effects"][0] = {"effect": "restart"}
        w.step(k, rec, None)
    w.finish()
    at = [a.as_dict() for a in w.attempts]
    assert [a["end"] for a in at] == ["restart", "restart", "restart", "won"]
    assert [a["dead_end_step"] for a in at] == [1, 6, 8, None]
    assert [a["no_free_hole_step"] for a in at] == [2, 6, 16, None]
    assert [a["lost_moves"] for a in at] == [3, 0, 10, 0]
    assert [a["lost_moves_no_free_hole"] for a in at] == [2, 0, 2, 0]
    (row,) = dead_ends_by_game(at)
    assert row["game"] == "bolt_unscrew" and row["attempts"] == 4
    ex, nfh = row["exhaustive"], row["no_free_hole"]
    assert (ex["dead_end_attempts"], ex["share"]) == (3, 75.0) and (nfh["dead_end_attempts"], nfh["share"]) == (3, 75.0)
    assert ex["lost_moves"] == {"attempts": 3, "median": 3.0, "mean": 13 / 3, "max": 10, "total": 13}
    assert nfh["lost_moves"] == {"attempts": 3, "median": 2.0, "mean": 4 / 3, "max": 2, "total": 4}


def test_the_lc_deficit_split_is_game_macro_weighted():
    from longpuzzle.agents.report.analytics import lc_deficit_split

    def obj(LC, R):
        return {"LC": LC, "R": R, "deficit": 100 - LC, "unreached": 100 - R, "reached_unsolved": R - LC}
    sp = lc_deficit_split({"maze_paint/easy": obj(40, 80), "maze_paint/hard": obj(0, 20),
                           "nut_and_bolt/easy": obj(0, 40)})
    mp = sp["by_game"]["maze_paint"]
    assert (mp["LC"], mp["R"], mp["unreached"], mp["reached_unsolved"], mp["objectives"]) == (20, 50, 50, 30, 2)
    o = sp["overall"]                       # the two games weigh the same, whatever their objectives
    assert (o["LC"], o["R"], o["deficit"], o["unreached"], o["reached_unsolved"]) == (10, 45, 90, 55, 35)
    assert o["deficit"] == o["unreached"] + o["reached_unsolved"] and o["unreached_share"] == pytest.approx(100 * 55 / 90)
    assert lc_deficit_split({"maze_paint/easy": obj(100, 100)})["overall"]["unreached_share"] is None


def test_maze_paint_moves_that_paint_and_that_return_to_an_earlier_state(runs):
    a = analyze_run(runs["scripted"])
    ep = next(e for e in a["episodes"] if e["objective"] == "maze_paint/easy")
    (att,) = ep["attempts"]
    log = [(m["move"], m["new_cells"], m["revisit"]) for m in att["move_log"]]
    # R paints the bottom row; L goes back over it; R again: the exact state after the first R
    assert log == [("R", True, False), ("L", False, False), ("R", False, True), ("U", True, False)]
    bins = ep["maze_paint"]["all"]
    assert bins[0]["valid_moves"] == 1 and bins[0]["new_cells"] == 100.0 and bins[0]["revisits"] == 0.0
    assert bins[1]["valid_moves"] == 3 and bins[1]["new_cells"] == pytest.approx(100 / 3)
    assert bins[1]["revisits"] == pytest.approx(100 / 3)
    assert all(b["valid_moves"] == 0 and b["new_cells"] is None for b in bins[2:])
    assert ep["maze_paint"]["unsolved"] == bins                  # the one attempt was not solved
    assert ep["lc_deficit"]["unreached"] == 90.0 and ep["lc_deficit"]["reached_unsolved"] == 10.0


def test_bolt_unscrew_free_holes_before_each_transfer_and_what_it_did(runs):
    a = analyze_run(runs["solver_a"])
    ep = next(e for e in a["episodes"] if e["objective"] == "bolt_unscrew/easy")
    transfers = 0
    for att in ep["attempts"]:
        ms = [m for m in att["move_log"] if m["changed"]]
        assert all(m["holes_before"] is not None for m in ms)
        for prev, m in zip(ms, ms[1:]):
            assert m["holes_before"] == prev["holes_after"]
        for m in ms:
            rose = m["P_after"] > m["P_before"]
            assert (m["did"] == "freed_board") == (rose and m["did"] != "dead_end")
            if m["did"] == "filled_hole":
                assert m["holes_after"] < m["holes_before"]
        transfers += len(ms)
    s = ep["bolt_unscrew"]
    assert transfers > 5 and s["transfers"] == transfers == sum(s["by_kind"].values())
    assert sum(r["transfers"] for r in s["by_holes_before"]) == transfers
    assert s["by_kind"]["freed_board"] >= sum(a["end"] == "won" for a in ep["attempts"])


def test_level_protocol_episodes_are_read_level_by_level(runs):
    a = analyze_run(runs["level"])
    (ep,) = a["episodes"]
    levels = [x["level"] for x in ep["attempts"]]
    assert levels[0] == "maze_paint/easy/1" and levels == sorted(set(levels), key=levels.index)
    starts = [x["start_step"] for x in ep["attempts"]]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)     # one action axis over the chain
    res = json.loads((Path(runs["level"]) / "maze_paint_easy" / "episode_001" / "result.json").read_text())
    won = [l["level"] for l in res["levels"] if l.get("success")]
    assert [x["level"] for x in ep["attempts"] if x["end"] == "won"] == won


def test_analyze_command_text_and_json(runs, tmp_path):
    r = run("analyze", runs["scripted"], "--json")
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["attempts"] == 3 and doc["dead_ends"]["recovered"] == 1
    sp = doc["lc_deficit_split"]["overall"]                   # nut_and_bolt/medium, maze_paint/easy: one each
    assert sp["unreached"] == pytest.approx((200 / 3 + 90) / 2) and sp["deficit"] == 100.0
    r = run("analyze", runs["scripted"], "--out", tmp_path / "a.json")
    assert r.exit_code == 0 and "dead ends: 2 of 2 attempts, 1 recovered by undo" in r.output
    assert re.search(r"nut_and_bolt +exhaustive +2 of 2 +\(100\.0%\) +lost-board moves 1\.0 / 1\.0", r.output), r.output
    assert "all games" in r.output and "(R - LC)" in r.output
    assert json.loads((tmp_path / "a.json").read_text())["lc_deficit"] == doc["lc_deficit"]
    r = run("analyze", tmp_path)
    assert r.exit_code == 2 and r.output.startswith("error:")


def test_episode_analytics_of_a_lone_episode_folder(runs):
    d = Path(runs["scripted"]) / "nut_and_bolt_medium" / "episode_001"
    e = analyze_episode(d)
    assert e["objective"] == "nut_and_bolt/medium" and len(e["attempts"]) == 2


# ---- tables ---------------------------------------------------------------------------

def test_the_docs_explain_every_metric_as_the_code_does():
    """The metrics table of the guide "Reading results" says what METRIC_HELP says."""
    from longpuzzle.agents.metrics import METRIC_HELP

    text = (HERE.parent / "docs" / "guides" / "reading-results.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\w+) \| (.+?) \|$", text, re.M))
    for k in ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR", "NGAR", "score", "unscored"):
        assert rows.get(k) == METRIC_HELP[k], k


def test_rows_pool_one_identity_and_recompute_the_metrics_as_eval_does(runs):
    a, b, c = (load_run(runs[k]) for k in ("solver_a", "solver_b", "solver_c"))
    for r in (a, b, c):                       # recomputing one run gives exactly its own summary
        m, objs = run_metrics(r.episodes)
        mine = dict(r.summary["metrics"].items())
        assert {k: m[k] for k in ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR")} == \
               {k: mine[k] for k in ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR")}
        assert m["score"] == pytest.approx(mine["score"])
        assert objs == r.summary["objectives"]
    rows = group_runs([a, b, c, a])          # the same folder twice counts once
    assert len(rows) == 2
    pooled = rows[0]
    assert [x.folder.name for x in pooled.runs] == ["solver_a", "solver_b"]
    assert pooled.value("episodes") == 4 and len(pooled.objectives) == 4
    m, _ = run_metrics(a.episodes + b.episodes)
    assert pooled.metrics["LC"] == m["LC"] and pooled.metrics["LC"] != a.summary["metrics"]["LC"]
    assert rows[1].runs == [c] and rows[1].harness != pooled.harness


# ---- the report page, in a real browser ---------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    exe = Browser.find()
    if exe is None:
        reason = "no Chromium installed (Debian: apt-get install -y chromium, as .ci/run does)"
        print(f"SKIPPED browser checks: {reason}", file=sys.stderr)
        pytest.skip(reason)
    with Browser(exe) as b:
        yield b


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    ref = out / "ref.json"
    ref.write_text(json.dumps({"format": "longpuzzle-reference/1", "source": "a test's made-up figures",
                               "rows": [{"model": "Made-Up-1", "setting": "native", "protocol": "objective",
                                         "OSR": 10.0, "LC": 20.0, "H50": "10+"}]}))
    r = run("report", runs["scripted"], runs["solver_a"], runs["solver_b"], "--out", out, "--reference", ref,
            "--videos")
    assert r.exit_code == 0, r.output
    # the slow part says how far it is: one line per episode video, on stderr
    assert [re.match(r"report: video (\d+ of \d+): ", l).group(1) for l in r.stderr.splitlines()
            if l.startswith("report: video")] == [f"{k} of 6" for k in range(1, 7)]
    return out


def test_the_report_page_renders_in_chromium_without_errors(report, browser):
    page = browser.load((report / "report.html").as_uri())
    assert page.errors == []
    assert page.title == "longpuzzle report"
    # Figures 3a, 3b, 3c; per episode a progress plot; Figure 4a for the Bolt Unscrew episode
    episodes = 2 + 3 + 1
    assert len(page.images) == 3 + episodes + 1
    assert all(w > 200 and h > 150 for _, w, h in page.images), page.images
    text = page.text
    assert "Main results (the paper's Table 2 layout)" in text and "Table 18 layout" in text
    assert "level completion: share of the objective's target levels won" in text
    assert "Made-Up-1" in text and "a test's made-up figures" in text
    assert "Figure 3a" in text and "Figure 3c" in text and "Figure 4a" in text
    assert "None" not in text and "nan" not in text.lower().split()
    assert re.search(r"\bsolver\b.*\b4\b", text)             # the pooled row: 4 episodes


def test_the_browser_check_catches_a_broken_page(tmp_path, browser):
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><title>bad</title><img src='missing.png'><script>nosuch.call()</script>")
    page = browser.load(bad.as_uri())
    assert any("exception" in e for e in page.errors) and any("load failed" in e for e in page.errors)
    assert page.images and page.images[0][1] == 0


def test_report_html_links_every_episode_video_and_writes_analytics(report):
    html = (report / "report.html").read_text()
    links = re.findall(r"href='(videos/[^']+)'", html)
    assert len(links) == 6 and all((report / l).is_file() and (report / l).stat().st_size > 1000 for l in links)
    assert "<link" not in html and "<script" not in html and " src='data:image/png;base64," in html
    a = json.loads((report / "analytics.json").read_text())
    assert len(a) == 3 and a[0]["dead_ends"]["recovered"] == 1
    # the LC-deficit split (section 5.1) and Figure 2c by game, Bolt Unscrew under both certificates
    assert "<td class='t'>all games</td>" in html and "R - LC (reached, unsolved)" in html and "Figure 2c" in html
    assert "<td class='t'>bolt_unscrew</td><td class='t'>no free hole (paper)</td>" in html
    assert ("<td class='t'>nut_and_bolt</td><td class='t'>exhaustive</td><td>2</td><td>2</td><td>100.0</td>"
            "<td>1.0</td><td>1.0</td>") in html
    assert "<td>-</td>" in html                               # missing values are a dash


def test_report_of_one_run_goes_into_the_run_folder_and_missing_runs_are_errors(runs, tmp_path):
    dst = tmp_path / "one"
    shutil.copytree(runs["solver_c"], dst)
    before = {p.name for p in dst.iterdir()}
    r = run("report", dst)                          # videos on demand: none by default
    assert r.exit_code == 0 and (dst / "report.html").is_file() and not (dst / "videos").exists()
    # the page and its analytics, nothing else (its figures are embedded: no report_files/)
    assert {p.name for p in dst.iterdir()} - before == {"report.html", "analytics.json"}
    html = (dst / "report.html").read_text()
    assert "<code>longpuzzle video " in html and "report: video" not in r.stderr
    assert "Figure 3a: easiest-tier LC against harder-tier LC (LC_hard), one point per agent: not drawn" in html
    r = run("report", runs["solver_a"], runs["solver_b"])
    assert r.exit_code == 2 and "--out" in r.output
    r = run("report", tmp_path / "nothing")
    assert r.exit_code == 2 and "error:" in r.output


# ---- leaderboard ----------------------------------------------------------------------------

def test_leaderboard_pools_only_identical_identities(runs, tmp_path):
    # a copy of run b that names another provider: an identity of its own
    other = tmp_path / "other_provider"
    shutil.copytree(runs["solver_b"], other)
    s = json.loads((other / "summary.json").read_text())
    s["provider"] = "another-provider"
    (other / "summary.json").write_text(json.dumps(s))
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps({"format": "longpuzzle-reference/1", "source": "made up for this test",
                               "rows": [{"model": "Paper-Model", "setting": "code", "OSR": 99.0, "LC": 99.5,
                                         "NGAR": 40.0, "cost": 12.5}]}))
    out = tmp_path / "lb"
    args = ["leaderboard", runs["solver_a"], runs["solver_b"], runs["solver_c"], runs["scripted"], other,
            "--reference", ref, "--out", out]
    r = run(*args)                      # the edited summary does not verify: refused in one line
    assert r.exit_code == 2 and r.output.startswith(f"error: {other}: not verified: summary.json.provider ") \
        and len(r.output.strip().splitlines()) == 1, r.output
    r = run(*args, "--unverified")      # shown anyway, marked
    assert r.exit_code == 0, r.output
    assert "solver (another-provider) !" in r.output and f"! {other}: UNVERIFIED: summary.json.provider" in r.output
    assert f"{runs['solver_a']}: verified by replaying it" in r.output
    lines = r.output.splitlines()
    assert lines[0].split()[:3] == ["#", "agent", "setting"] and "NGAR" in lines[0] and "cost" in lines[0]
    assert "Paper-Model *" in lines[2]                        # ranked first by OSR, marked a reference
    assert "* reference: Paper-Model: made up for this test" in r.output
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert len(rows) == 5
    by = {(x["label"], x["harness_label"]): x for x in rows}
    solver = [x for x in rows if x["label"] == "solver"]
    assert sorted(int(x["episodes"]) for x in solver) == [1, 4]
    assert any(x["label"] == "solver (another-provider)" and x["episodes"] == "1" for x in rows)
    doc = json.loads((out / "leaderboard.json").read_text())
    # every row covers other objectives: none is ranked against another; the reference (the
    # whole benchmark) comes first
    assert [x["rank"] for x in doc["rows"]] == [1, 1, 1, 1, 1]
    assert doc["rows"][0]["covers"] == "all 16 objectives" and len({x["covers"] for x in doc["rows"]}) == 5
    assert doc["rows"][0]["reference"] is True and doc["rows"][0]["source"] == "made up for this test"
    # NGAR is the code setting's (the paper's B.3): the solver runs count their steps, but show none
    assert doc["rows"][0]["NGAR"] == 40.0 and all(x["NGAR"] is None for x in doc["rows"][1:]), doc["rows"]
    assert all(e.get("NGAR") is not None for e in json.loads((runs["solver_a"] / "summary.json").read_text())["episodes"])
    assert doc["identity_keys"] == ["agent", "model", "provider", "harness", "protocol", "setting", "catalog", "preset"]
    assert len(by) == 5
    assert "<table>" in (out / "leaderboard.html").read_text()


def test_leaderboard_html_renders_in_chromium(runs, tmp_path, browser):
    r = run("leaderboard", runs["solver_a"], "--out", tmp_path)
    assert r.exit_code == 0
    page = browser.load((tmp_path / "leaderboard.html").as_uri())
    assert page.errors == [] and "solver" in page.text


@pytest.mark.parametrize("doc, words", [
    ({"format": "nope"}, "not a reference file"),
    ({"format": "longpuzzle-reference/1", "rows": []}, "non-empty list"),
    ({"format": "longpuzzle-reference/1", "rows": [{"model": "m", "LC": 5}]}, "no source"),
    ({"format": "longpuzzle-reference/1", "source": "s", "rows": [{"model": "m", "LC": "high"}]}, "'LC' must be a number"),
    ({"format": "longpuzzle-reference/1", "source": "s", "rows": [{"model": "m", "LCC": 1}]}, "unknown field(s) LCC"),
    ({"format": "longpuzzle-reference/1", "source": "s", "rows": [{"LC": 1}]}, "needs a \"model\""),
])
def test_bad_reference_files_are_one_clear_error(tmp_path, doc, words):
    f = tmp_path / "ref.json"
    f.write_text(json.dumps(doc))
    r = run("leaderboard", "--reference", f)
    assert r.exit_code == 2 and r.output.startswith("error:") and words in r.output, r.output


# ---- video ------------------------------------------------------------------------------------

def test_video_mp4_and_gif_with_each_action_drawn(runs, tmp_path):
    import imageio_ffmpeg
    from PIL import Image

    ep = Path(runs["scripted"]) / "maze_paint_easy" / "episode_001"
    events = [json.loads(l) for l in (ep / "events.jsonl").read_text().splitlines()]
    actions = sum(1 for e in events if e.get("stream") == "public")
    r = run("video", ep, "--out", tmp_path / "v.mp4", "--fps", "5")
    assert r.exit_code == 0, r.output
    m = re.search(r"(\d+) frames at 5 fps, (\d+) x (\d+)", r.output)
    n, w, h = map(int, m.groups())
    assert n == actions + 5                                   # one per action, the end held a second
    reader = imageio_ffmpeg.read_frames(str(tmp_path / "v.mp4"))
    meta = reader.__next__()
    frames = [np.frombuffer(f, np.uint8).reshape(meta["size"][1], meta["size"][0], 3) for f in reader]
    assert len(frames) == n and tuple(meta["size"]) == (w, h) and meta["fps"] == 5
    r = run("video", ep, "--out", tmp_path / "v.gif", "--scale", "0.5")
    assert r.exit_code == 0, r.output
    with Image.open(tmp_path / "v.gif") as g:       # (Pillow merges the held end into one frame)
        assert g.size == (w // 2 // 2 * 2, h // 2 // 2 * 2)
        total = 0
        for i in range(g.n_frames):
            g.seek(i)
            total += g.info["duration"]
        assert total == (actions + 4) * 250
        images = g.n_frames
    # what the command says is what the file holds: its length, and its images where fewer
    assert f"{(actions + 4) / 4:.1f} s, {actions + 4} frames at 4 fps" in r.output
    assert images < actions + 4 and f"the file holds {images} images" in r.output


def test_video_draws_the_actions_and_redraws_episodes_stored_without_frames(runs, tmp_path):
    from longpuzzle.agents.harness import open_frames
    from longpuzzle.agents.report.video import ACTION_COLOUR, film

    stored = Path(runs["solver_a"]) / "maze_paint_easy" / "episode_001"
    redrawn = Path(runs["solver_c"]) / "maze_paint_easy" / "episode_001"       # --no-frames, 12 actions
    a = list(film(stored))
    b = list(film(redrawn))
    assert len(b) == 12 + 4
    with open_frames(stored) as fs:
        gh = fs.read(0).shape[0]                     # the game, above the caption band
    for x, y in zip(a[:12], b[:12]):                 # the same agent and start: the same pictures
        assert np.array_equal(x[:gh], y[:gh])
    magenta = np.all(a[1] == ACTION_COLOUR, axis=-1)     # the second action (a click) is drawn
    assert magenta.sum() > 20
    assert not np.all(a[0][:, :, :] == a[1][:, :, :])


def test_video_errors(runs, tmp_path):
    ep = Path(runs["scripted"]) / "maze_paint_easy" / "episode_001"
    r = run("video", ep, "--out", tmp_path / "v.avi")
    assert r.exit_code == 2 and "must end in .mp4 or .gif" in r.output
    r = run("video", tmp_path, "--out", tmp_path / "v.gif")
    assert r.exit_code == 2 and "not an episode folder" in r.output
    r = run("video", ep, "--out", tmp_path / "v.gif", "--fps", "0")
    assert r.exit_code == 2 and "--fps" in r.output


def test_leaderboard_ranks_only_rows_of_the_same_coverage_and_marks_a_partial_h50(runs, tmp_path):
    """Rows that cover different objectives are ranked apart (each coverage from 1, the widest
    first) and say what they cover; H50 over fewer than the eight ten-level objectives is
    marked partial, in every output."""
    r = run("leaderboard", runs["solver_c"], runs["level"], runs["scripted"], "--out", tmp_path / "lb")
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())
    got = [(x["rank"], x["covers"], x["H50_partial"]) for x in doc["rows"]]
    # scripted covers two objectives; solver_c and the level-protocol run one each (the same one)
    assert got[0] == (1, "maze_paint/easy, nut_and_bolt/medium", True)
    assert sorted(got[1:]) == [(1, "maze_paint/easy", True), (2, "maze_paint/easy", True)]
    assert "covers" in r.output.splitlines()[0] and "(partial: 1 of 8)" in r.output
    html = (tmp_path / "lb" / "leaderboard.html").read_text()
    assert "(partial: 1 of 8)" in html and "ranked only against rows that cover the same objectives" in html


def test_the_games_with_dead_ends_are_those_whose_rules_say_so():
    """The dead-end summaries cover the games whose rules declare dead ends (Puzzle.dead_ends),
    in the benchmark's order, a game of another package too; no list of game names."""
    from longpuzzle.agents.report.analytics import dead_end_games, dead_ends_by_game
    from longpuzzle.engine import registry
    from longpuzzle.puzzles.maze_paint import MazePaint

    class Cornered(MazePaint):          # an outside game whose boards can be lost
        id = "cornered"
        dead_ends = True
        catalog_order = 9

    def att(level, dead):
        return {"level": level, "dead_end_step": 3 if dead else None, "lost_moves": 2 if dead else None}

    attempts = [att("maze_paint/easy/1", False), att("nut_and_bolt/easy/1", True), att("bolt_unscrew/easy/1", False),
                att("cornered/easy/1", True), att("cornered/easy/2", False)]
    assert dead_end_games(attempts) == ["bolt_unscrew", "nut_and_bolt"]     # not yet installed: left out
    registry.register(Cornered())
    try:
        assert dead_end_games(attempts) == ["bolt_unscrew", "nut_and_bolt", "cornered"]
        rows = dead_ends_by_game(attempts)
        assert [(r["game"], r["attempts"], r["exhaustive"]["dead_end_attempts"]) for r in rows] == [
            ("bolt_unscrew", 1, 0), ("nut_and_bolt", 1, 1), ("cornered", 2, 1)]
    finally:
        registry.unregister("cornered")
