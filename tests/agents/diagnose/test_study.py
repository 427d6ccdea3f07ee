"""The study runner (agents/diagnose/study.py) every experiment plays its schedule on: an
assignment whose every attempt fails on the infrastructure stops the study with one error
line (its tables would silently leave it out), and the folder stays resumable."""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from longpuzzle.agents.diagnose import study as sr
from longpuzzle.cli import cli


def test_an_assignment_without_a_valid_attempt_stops_the_study(tmp_path):
    def play(u, cond, folder):
        folder.mkdir(parents=True)
        raise ConnectionError("the endpoint refused")

    sched = [{"unit": "u1", "order": ["A", "B"]}]
    with pytest.raises(sr.StudyError, match=r"u1 A: all 3 attempts failed on the infrastructure "
                                            r"\(the last: ConnectionError: the endpoint refused\)"):
        sr.run_units(tmp_path, sched, play, lambda u, c, f: {"end": "done"})
    recs = sr.read_units(tmp_path)
    assert [(r["condition"], r["attempt"], r["status"]) for r in recs] == [("A", a, "replaced") for a in (1, 2, 3)]
    assert not (tmp_path / sr.STUDY).exists()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed): a model endpoint that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_model_that_cannot_be_reached_is_one_error_line_and_no_study(tmp_path):
    out = tmp_path / "s"
    r = CliRunner().invoke(cli, ["diagnose", "rules", "--objective", "maze_paint/easy", "--model", "m",
                                 "--base-url", f"http://127.0.0.1:{closed_port()}/v1", "--api-key-env", "",
                                 "--max-retries", "0", "--max-actions", "5", "--out", str(out)])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith("error: ") and "all 3 attempts failed on the infrastructure" in r.output
    assert "--help" not in r.output                  # not a usage error: no usage hint, as in every command
    assert not (out / "study.json").exists()
    assert [x["status"] for x in map(json.loads, (out / "units.jsonl").read_text().splitlines())] == ["replaced"] * 3
