"""Shipping the package to Ray workers (``--ship-code``): a local Ray in a process of its own
(this file's tests must not share test_cluster.py's ``ray.init``), whose workers import
longpuzzle from the package Ray's runtime_env uploaded, not from this checkout, and play
an episode with it. The checkout is copied first into a folder named ``main``, as CI clones it
(``import longpuzzle`` then resolves through a finder, as an editable install's does): Ray
names an uploaded module after its folder, so a shipped ``main/`` would be no ``longpuzzle``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'longpuzzle[ray]')")
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import json, os, sys
from longpuzzle.agents.jobs.ray_backend import connect
from longpuzzle.cli import cli

import longpuzzle
print("DRIVER " + longpuzzle.__file__)
ray = connect(ship_code=True, num_cpus=1)
from longpuzzle.agents.jobs import ray_backend
print("LINKS " + json.dumps(ray_backend._SHIP_LINKS), flush=True)

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


# an editable install's finder for a checkout whose folder is not named longpuzzle: ahead of
# the installed one, but (as setuptools' own, which comes after sys.path) it yields to a
# ``longpuzzle`` folder on sys.path, which is where Ray puts the shipped package
FINDER = r'''
import importlib.machinery, importlib.util, os, sys

ROOT = os.environ["LONGPUZZLE_TEST_CHECKOUT"]

class CheckoutFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "longpuzzle":
            return None
        return importlib.machinery.PathFinder.find_spec(name) or importlib.util.spec_from_file_location(
            name, os.path.join(ROOT, "__init__.py"), submodule_search_locations=[ROOT])

sys.meta_path.insert(0, CheckoutFinder)
'''


def checkout_named_main(tmp_path: Path) -> Path:
    """This checkout's files, copied into ``tmp_path/main``."""
    root = HERE.parent
    skip = shutil.ignore_patterns(".git", "__pycache__", "*.nbi", "*.nbc", "*.egg-info", "results", "out",
                                  ".benchmarks", ".hypothesis", ".pytest_cache", ".ruff_cache", ".cache")
    return Path(shutil.copytree(root, tmp_path / "main", ignore=skip))


def test_ship_code_runs_jobs_on_the_uploaded_package(tmp_path):
    main = checkout_named_main(tmp_path)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(FINDER)
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", PYTHONPATH=str(shim),
               LONGPUZZLE_TEST_CHECKOUT=str(main))
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.splitlines()
    driver = next(l for l in lines if l.startswith("DRIVER "))[7:]
    assert driver == str(main / "__init__.py"), driver       # the driver ran the copy named main
    where = json.loads(next(l for l in lines if l.startswith("WHERE "))[6:])
    assert not where["file"].startswith((str(main), str(HERE.parent))), where["file"]
    assert "runtime_resources" in where["file"] and Path(where["file"]).parent.name == "longpuzzle", where["file"]
    assert "engine" in where["listing"] and ".git" not in where["listing"] and "results" not in where["listing"]
    res = json.loads(next((out / "rush_hour_easy").glob("episode_*/result.json")).read_text())
    assert res["actions"] == 12 and res["end"] == "max_actions"
    from longpuzzle.agents.harness import replay_episode
    assert replay_episode(next((out / "rush_hour_easy").glob("episode_*"))).ok
    # the link's folder is gone with the driver, and removing it left the checkout alone
    holders = json.loads(next(l for l in lines if l.startswith("LINKS "))[6:])
    assert len(holders) == 1 and not Path(holders[0]).exists(), holders
    assert (main / "engine").is_dir() and (main / "__init__.py").is_file()


def test_shipped_path_is_named_longpuzzle_and_leads_to_the_package():
    from longpuzzle.agents.jobs import ray_backend

    shipped = Path(ray_backend.shipped_package_path())
    assert shipped.name == "longpuzzle"
    assert shipped.resolve() == Path(ray_backend.__file__).resolve().parents[2]


def test_ship_code_without_ray_is_a_usage_error():
    from click.testing import CliRunner

    from longpuzzle.cli import cli
    r = CliRunner().invoke(cli, ["eval", "--objective", "rush_hour/easy", "--ship-code", "--max-actions", "1"])
    assert r.exit_code == 2 and "--ship-code are for --backend ray" in r.output, r.output
