"""Shipping the package to Ray workers (``--ship-code``): a local Ray in a process of its own
(this file's tests must not share test_cluster.py's ``ray.init``), whose workers import
longpuzzle from the package Ray's runtime_env uploaded, not from this checkout, and play
an episode with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'longpuzzle[ray]')")
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent

SCRIPT = r'''
import json, os, sys
from longpuzzle.cluster.ray_backend import connect
from longpuzzle.cli import cli

ray = connect(ship_code=True, num_cpus=1)

@ray.remote
def where():
    import longpuzzle
    root = os.path.dirname(longpuzzle.__file__)
    return {"file": longpuzzle.__file__, "listing": sorted(os.listdir(root))}

print("WHERE " + json.dumps(ray.get(where.remote())))
sys.argv = ["longpuzzle", "eval", "--objective", "rush_hour/easy", "--backend", "ray", "--ship-code",
            "--max-actions", "12", "--out", sys.argv[1], "--json"]
cli(standalone_mode=False)
'''


def test_ship_code_runs_jobs_on_the_uploaded_package(tmp_path):
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", PYTHONPATH=str(HERE.parent.parent))
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    where = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("WHERE "))[6:])
    here = str(HERE.parent)
    assert not where["file"].startswith(here) and "runtime_resources" in where["file"], where["file"]
    assert "engine" in where["listing"] and ".git" not in where["listing"] and "results" not in where["listing"]
    res = json.loads(next((out / "rush_hour_easy").glob("episode_*/result.json")).read_text())
    assert res["actions"] == 12 and res["end"] == "max_actions"
    from longpuzzle.agents.harness import replay_episode
    assert replay_episode(next((out / "rush_hour_easy").glob("episode_*"))).ok


def test_ship_code_without_ray_is_a_usage_error():
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    r = CliRunner().invoke(cli, ["eval", "--objective", "rush_hour/easy", "--ship-code", "--max-actions", "1"])
    assert r.exit_code == 2 and "--ship-code are for --backend ray" in r.output, r.output
