"""Yesterday's code beside today's, in the same run: the pixel-path benchmarks time the same
workload with the code of commit BASELINE (main before the pixel path was rebuilt: PNG per
frame, SHA-1 hashes, whole-frame level screens), taken from this repository's own history
with ``git archive`` and run in a worker process of its own (its own imports, its own
compiled-kernel cache). A round is one request to the worker; the request's round trip
(a few hundred microseconds) is the only thing the two sides do differently.

Nothing here is importable by the package: the old code exists only in a cache folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import io
from pathlib import Path

import pytest

BASELINE = "48f8955"            # "Harness: unscored episodes", before the pixel path work
REPO = Path(__file__).resolve().parents[1]

SERVER = r'''
import json, os, shutil, sys, time
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
from longpuzzle.agents.builtin import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer
suites_of = {}
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    cpu0 = time.process_time()
    if req["op"] == "episode":
        game, diff = req["objective"].split("/")
        st = Settings(action_timeout=None, save_frames=req["save_frames"])
        r = run_objective(SolverAgent(), game, diff, settings=st, folder=req["folder"])
        if req.get("remove"):
            shutil.rmtree(req["folder"], ignore_errors=True)
        out = {"actions": r.actions, "success": bool(r.outcome.success)}
    elif req["op"] == "level_screens":
        if req["objective"] not in suites_of:
            suites_of[req["objective"]] = [Suite(l) for l in catalog().objective(req["objective"]).level_ids]
        suites = suites_of[req["objective"]]
        for s in suites:
            Renderer().render(s)           # the first frame of each level on a fresh renderer
        out = {"levels": len(suites)}
    else:
        out = {"error": "unknown op"}
    out["cpu"] = time.process_time() - cpu0         # every thread of the worker
    print(json.dumps(out), flush=True)
'''


def _tree() -> Path:
    """The baseline's source as a package folder (extracted once into the cache)."""
    cache = Path(os.environ.get("LONGPUZZLE_CACHE_DIR") or Path.home() / ".cache" / "longpuzzle")
    root = cache / f"bench-baseline-{BASELINE}"
    pkg = root / "longpuzzle"
    if not (pkg / "__init__.py").is_file():
        try:
            data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", BASELINE],
                                  check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            pytest.skip(f"baseline {BASELINE} not available from git: {e}")
        pkg.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            t.extractall(pkg, filter="data")
    return root


class Baseline:
    """A worker process running the baseline's code."""

    def __init__(self):
        root = _tree()
        env = dict(os.environ, PYTHONPATH=str(root), LONGPUZZLE_CACHE_DIR=str(root / "cache"),
                   SDL_VIDEODRIVER="dummy")
        self.p = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=env, text=True, cwd=str(root))
        if not json.loads(self.p.stdout.readline()).get("ready"):
            raise RuntimeError("baseline worker did not start")

    def __call__(self, **req) -> dict:
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("baseline worker died")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)
