"""The oracle on the report page (``report --oracle``, issue 38): this project's step metrics in
a table of their own (the paper's tables unchanged), and each episode's d(s) timeline drawn
under its progress P curve, with the fatal action named; the run-level mean extra cost."""

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from longpuzzle.cli import cli

SCRIPTED = str(Path(__file__).resolve().parents[2] / "data" / "scripted_agent.py")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory):
    """The scripted Nut and Bolt episode of test_oracle: a fatal transfer, two moves on the lost
    board, undos, a restart and the same transfers again."""
    out = tmp_path_factory.mktemp("run") / "run"
    r = run("eval", "--out", out, "--json", "--agent", SCRIPTED, "--trusted-agent", "--objective", "nut_and_bolt/medium")
    assert r.exit_code == 0, r.output
    return out


def _section(page: str, title: str) -> str:
    i = page.index(title)
    j = page.find("<h2>", i + len(title))
    return page[i:j if j >= 0 else None]


def _figure_size(page: str, caption_part: str) -> tuple[int, int]:
    """(width, height) of the PNG embedded just before the caption holding ``caption_part``."""
    k = page.index(caption_part)
    uri = page.rfind("data:image/png;base64,", 0, k)
    data = page[uri + len("data:image/png;base64,"):page.index("'", uri)]
    return Image.open(io.BytesIO(base64.b64decode(data))).size


def test_the_report_shows_the_oracle_step_metrics_apart_and_the_timeline_under_p(scripted_run, tmp_path):
    r = run("analyze", scripted_run, "--oracle", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    x = doc["oracle"]
    (ep,) = doc["episodes"]
    o = ep["oracle"]
    # the run's mean extra cost: the finite extra costs over the moves they cover
    assert x["mean_extra_cost"] == pytest.approx(o["extra_cost"] / o["costed_moves"], abs=1e-4)
    assert o["costed_moves"] == o["judged_moves"] - len(o["fatal"])
    r = run("analyze", scripted_run, "--oracle")
    assert f"mean extra cost {x['mean_extra_cost']:.1f}" in r.output and "fatal actions 2 (" in r.output

    plain, orc = tmp_path / "plain", tmp_path / "oracle"
    assert run("report", scripted_run, "--out", plain).exit_code == 0
    r = run("report", scripted_run, "--out", orc, "--oracle")
    assert r.exit_code == 0, r.output
    p0 = (plain / "report.html").read_text()
    p1 = (orc / "report.html").read_text()
    title = "Step metrics from the oracle (this project's, not the paper's)"
    assert title not in p0 and title in p1
    # the paper's tables are the same with or without the oracle
    for t in ("Main results (the paper's Table 2 layout)", "Per objective (the paper's Table 18 layout)"):
        assert _section(p0, t) == _section(p1, t)
    sec = _section(p1, title)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", sec)
    assert cells[2:10] == [str(x["moves"]), str(x["judged_moves"]), f"{x['optimal_share']:.1f}",
                           str(x["fatal_actions"]), f"{x['fatal_rate']:.1f}", f"{x['mean_extra_cost']:.2f}",
                           str(x["lost_board_moves"]), str(x["inexact_moves"])], cells
    # the timeline: a second panel under P (a taller figure), its caption naming the first fatal action
    cap = f"the first at action {o['first_fatal'][0]}"
    assert "oracle timeline" in p1 and cap in p1 and "oracle timeline" not in p0
    w1, h1 = _figure_size(p1, cap)
    w0, h0 = _figure_size(p0, "progress P per level over actions")
    assert h1 > 1.4 * h0
    assert json.loads((orc / "analytics.json").read_text())["episodes"][0]["oracle"]["fatal"] == o["fatal"]


def test_the_oracle_panel_draws_d_and_marks_the_lost_board(tmp_path):
    """figures.progress with an annotation: the lower panel's lines are d(s), a gap where only
    bounds are known, the lost board and the fatal action marked at the top."""
    from longpuzzle.agents.report import figures

    e = {"progress": [[1, "a/b/1", 0.2], [2, "a/b/1", 0.4], [3, "a/b/1", 0.4], [4, "a/b/1", 0.4]],
         "oracle": {"steps": [[1, "a/b/1", 5, "solvable", True, 0], [2, "a/b/1", 4, "solvable", True, 0],
                              [3, "a/b/1", None, "dead_end", True, "inf"], [4, "a/b/1", None, "dead_end", True, None]],
                    "fatal": [[3, "a/b/1"]], "first_fatal": [3, "a/b/1"]}}
    path = figures.progress(e, tmp_path / "t.png")
    img = np.asarray(Image.open(path).convert("RGB"))
    red = (img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)
    assert red.any()                                           # the fatal action's cross
    e2 = {"progress": e["progress"]}
    img2 = np.asarray(Image.open(figures.progress(e2, tmp_path / "p.png")).convert("RGB"))
    assert img.shape[0] > 1.4 * img2.shape[0]
    assert not ((img2[..., 0] > 180) & (img2[..., 1] < 80) & (img2[..., 2] < 80)).any()
