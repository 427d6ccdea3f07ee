"""The report's Diagnostics section (agents/report/diagnostics.py): any study folder of the
lab rendered generically (tables, figures), hostile study folders safely, in a real browser."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from longpuzzle.agents.diagnose.rq1 import write_rq1_study
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.agents.report.diagnostics import figure_path
from longpuzzle.agents.scripted import GreedyAgent
from longpuzzle.cli import cli

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))
from browser import Browser  # noqa: E402

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    root = tmp_path_factory.mktemp("studies")
    run_objective(GreedyAgent(), "bolt_unscrew", "hard", settings=Settings(max_actions=40, action_timeout=None),
                  folder=root / "bolt")
    write_rq1_study([root / "bolt"], root / "rq1", draws=200)
    # another experiment's study, as its own module writes it (the section knows no experiment)
    from longpuzzle.agents.diagnose.judge import judge_for, run_judge
    run_judge([root / "bolt"], judge_for("miscount"), root / "judge", draws=200)
    # a hostile study: markup in every string, figures that point outside, are not PNGs, or are fine
    h = root / "hostile"
    (h / "figs").mkdir(parents=True)
    png = (root / "rq1" / "figures" / "figure4b.png").read_bytes()
    (h / "figs" / "ok.png").write_bytes(png)
    (h / "figs" / "fake.png").write_text(HOSTILE)
    (root / "outside.png").write_bytes(png)
    doc = {"kind": "longpuzzle-study", "version": 1, "experiment": HOSTILE, "agent": HOSTILE, "seed": 0,
           "draws": 10, "catalog": {"name": HOSTILE}, "schedule": [],
           "tables": [{"id": "t", "title": HOSTILE, "columns": [HOSTILE, "n"], "rows": [[HOSTILE, 3], [{"a": HOSTILE}, None]],
                       "note": HOSTILE}],
           "figures": [{"id": "a", "title": "fine figure", "png": "figs/ok.png"},
                       {"id": "b", "title": "escaping figure", "png": "../outside.png"},
                       {"id": "c", "title": "absolute figure", "png": str(root / "outside.png")},
                       {"id": "d", "title": "fake figure", "png": "figs/fake.png"},
                       {"id": "e", "title": "missing figure", "png": "figs/none.png"}]}
    (h / "study.json").write_text(json.dumps(doc))
    (h / "units.jsonl").write_text(json.dumps({"unit": "u1", "status": "valid"}) + "\n"
                                   + json.dumps({"unit": "u1", "status": "replaced"}) + "\n{cut")
    return root


def test_figures_are_embedded_only_from_inside_the_study_and_only_as_png(studies):
    h = studies / "hostile"
    assert figure_path(h, "figs/ok.png")[0] is not None
    assert figure_path(h, "../outside.png") == (None, "a path outside the study folder")
    assert figure_path(h, str(studies / "outside.png")) == (None, "an absolute path")
    assert figure_path(h, "figs/fake.png") == (None, "not a PNG")
    assert figure_path(h, "figs/none.png") == (None, "missing")
    assert figure_path(h, 7) == (None, "no path")


def test_a_report_of_studies_alone_renders_every_table_and_figure_escaped(studies, tmp_path):
    r = run("report", "--study", studies / "rq1", "--study", studies / "hostile", "--study", studies / "judge",
            "--out", tmp_path)
    assert r.exit_code == 0, r.output
    page = (tmp_path / "report.html").read_text()
    judge = json.loads((studies / "judge" / "study.json").read_text())
    assert judge["tables"] and all(t["title"].replace("'", "&#x27;") in page for t in judge["tables"])
    assert "<h3>judge: <code>judge</code></h3>" in page
    assert "<script>document" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert page.count("&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;") >= 5
    rq1 = json.loads((studies / "rq1" / "study.json").read_text())
    for t in rq1["tables"]:                  # every table of the real study, with its title
        assert t["title"].replace("'", "&#x27;") in page
    assert page.count("<img src='data:image/png;base64,") == 2      # rq1's Figure 4b and the fine one
    for why in ("a path outside the study folder", "an absolute path", "not a PNG", "missing"):
        assert f"left out ({why})" in page
    assert "1 valid continuation(s), 1 replaced" in page and "1 unreadable line(s)" in page


def test_a_folder_that_is_not_a_study_is_one_error_line_and_no_page(studies, tmp_path):
    r = run("report", "--study", studies / "bolt", "--out", tmp_path / "o")
    assert r.exit_code == 2 and r.output.strip().splitlines() == [f"error: {studies / 'bolt'} is not a study folder "
                                                                  "(no study.json)"]
    assert not (tmp_path / "o").exists()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "study.json").write_text(json.dumps({"kind": "longpuzzle-study", "version": 1, "tables": [{"rows": 3}]}))
    r = run("report", "--study", bad, "--out", tmp_path / "o")
    assert r.exit_code == 2 and r.output.startswith("error: ") and "a table is not" in r.output
    r = run("report")
    assert r.exit_code == 2 and "give run folders, --study folders, or both" in r.output


def test_a_report_with_runs_and_studies_links_its_diagnostics_and_renders_in_chromium(studies, tmp_path):
    exe = Browser.find()
    r = run("report", studies / "bolt", "--study", studies / "rq1", "--study", studies / "hostile", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    html = (tmp_path / "report.html").read_text()
    assert "<a href='#diagnostics'>Diagnostics</a>" in html and html.index("Trajectory analytics") < html.index(
        "<h2 id='diagnostics'>Diagnostics</h2>")
    if exe is None:
        pytest.skip("no Chromium installed (Debian: apt-get install -y chromium, as .ci/run does)")
    with Browser(exe) as b:
        page = b.load((tmp_path / "report.html").as_uri())
    assert page.errors == [] and page.title == "longpuzzle report"          # no injected script ran
    assert all(w > 100 and h > 100 for _, w, h in page.images), page.images
    assert "Figure 4b" in page.text and "Diagnostics" in page.text
    assert HOSTILE in page.text                                            # shown as text, literally
