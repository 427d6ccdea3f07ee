"""Determinism across process histories: what a process makes (a frame, a dataset shard) is
byte for byte what a fresh process makes, whatever this process drew, solved or wrote before
(the renderers, drawings, layer bases, frame pools and the solver agent's plans are shared by
everything in a process)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from longpuzzle.agents.datasets.build import DatasetConfig, build
from longpuzzle.agents.datasets.check import shard_differences
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer, renderer
from longpuzzle.solvers import solve

LEVEL = "nut_and_bolt/easy/1"


def _complete(rend, *, refused_tap: bool, direct: bool = True) -> tuple[Suite, np.ndarray]:
    """LEVEL played to its end by the solver's plan, the completion card drawn by ``rend``;
    with ``refused_tap``, an empty bolt is tapped just before the last move (a toast shows)."""
    s = Suite(LEVEL, direct=direct)
    plan = solve(s.level, state=s.level.initial.copy(), budget=20_000_000).actions
    for a in plan[:-1]:
        s.dispatch(s.gesture_for(a))
        rend.render(s)
    if refused_tap:
        u = s.game_ui()
        b = next(b for b in range(len(s.session.state)) if int(s.session.state[b]) == 0 and b < u.n)
        x, y = s.proj.to_px(*u.tap_point(b))
        s.dispatch({"type": "click", "x": int(round(x)), "y": int(round(y))})
        assert s.toast is not None and s.ui.get("selected") is None
    s.dispatch(s.gesture_for(plan[-1]))
    assert s.complete
    return s, rend.render(s)


def test_a_completion_card_is_the_frame_a_fresh_renderer_draws_whatever_was_drawn_before():
    shared = Renderer("2d", 1.0)
    plain_suite, plain = _complete(shared, refused_tap=False)
    toast_suite, toasted = _complete(shared, refused_tap=True)       # the same final state, a toast showing
    assert np.array_equal(plain_suite.session.state, toast_suite.session.state)
    assert toast_suite.toast is not None and toast_suite.toast["until"] > toast_suite.clock
    fresh = Renderer("2d", 1.0).render(toast_suite)
    assert not np.array_equal(fresh, plain)                            # the toast shows, dimmed, under the card
    assert np.array_equal(toasted, fresh)
    assert np.array_equal(shared.render(plain_suite), Renderer("2d", 1.0).render(plain_suite))


_FRESH = """
import json, sys
from longpuzzle.agents.datasets.build import DatasetConfig, build
m = build(sys.argv[1], DatasetConfig.from_dict(json.loads(sys.argv[2])))
print(json.dumps([s["sha256"] for s in m["shards"]]))
"""


def test_a_dataset_made_after_this_process_history_is_the_one_a_fresh_process_makes(tmp_path):
    """The shared renderer first draws LEVEL's completion card under a toast, for the final
    state the dataset's solver reaches too, and other datasets are made (other styles, scales,
    detours); then the dataset's shards are byte for byte those of a new process."""
    _complete(renderer("2d", 1.0), refused_tap=True, direct=False)
    build(tmp_path / "other", DatasetConfig(objectives=["rush_hour/easy"], styles=["3d"], scales=[0.5], detours=0.3,
                                            seed=4, format="webdataset", settings={"max_actions": 12}))
    cfg = DatasetConfig(objectives=["nut_and_bolt/easy"], episodes=2, jobs=2, detours=0.1, seed=2, format="webdataset",
                        settings={"max_actions": 18})
    here = build(tmp_path / "here", cfg)
    assert any(r["win"] for r in _rows(tmp_path / "here", here))      # a card was shown after a win
    out = subprocess.run([sys.executable, "-c", _FRESH, str(tmp_path / "fresh"), json.dumps(cfg.as_dict())],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    fresh = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(fresh) == len(here["shards"])
    for s, sha in zip(here["shards"], fresh):                          # say which row and field differ
        assert s["sha256"] == sha, (s["file"], shard_differences(tmp_path / "here" / s["file"],
                                                                 tmp_path / "fresh" / s["file"]))


def _rows(folder, manifest):
    from longpuzzle.agents.datasets.shards import read_rows
    return [r for s in manifest["shards"] for r in read_rows(folder / s["file"])]
