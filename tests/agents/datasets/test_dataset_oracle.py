"""The oracle's dataset columns (``DatasetConfig(oracle=True)`` / ``dataset --oracle``; schema.
ORACLE_COLUMNS, issue 38): each row's d(s), dead end, best moves and extra cost agree with the
oracle on the board rebuilt from the rows' own recorded moves by the rules alone, the manifest
documents them, check_dataset re-verifies them (and catches an altered one), and a dataset
built without them has none."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from click.testing import CliRunner

from longpuzzle.agents.datasets.build import DatasetConfig, build, read_manifest
from longpuzzle.agents.datasets.check import check_dataset
from longpuzzle.agents.datasets.schema import COLUMNS, ORACLE_COLUMNS
from longpuzzle.agents.datasets.shards import read_rows
from longpuzzle.cli import cli
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.oracle import Oracle

pq = pytest.importorskip("pyarrow.parquet", reason="the parquet format needs pyarrow (a base dependency)")


@pytest.fixture(scope="module")
def oracle_ds(tmp_path_factory):
    """Nut and Bolt easy (it can dead-end) with detours and restarts, the oracle's columns on."""
    out = tmp_path_factory.mktemp("ds") / "nb"
    cfg = DatasetConfig(objectives=["nut_and_bolt/easy"], episodes=2, detours=0.3, restarts=0.05, seed=5,
                        scales=[0.5], shard_size=50, oracle=True, settings={"max_actions": 120})
    return out, build(out, cfg)


def _rows(out, m):
    return [r for s in m["shards"] for r in read_rows(out / s["file"])]


def test_the_oracle_columns_agree_with_the_oracle_on_the_boards_the_moves_rebuild(oracle_ds):
    out, m = oracle_ds
    assert m["settings"]["oracle"] is True
    names = [c["name"] for c in m["schema"]]
    assert names == list(COLUMNS) + list(ORACLE_COLUMNS)
    assert all(c["description"] for c in m["schema"] if c["name"] in ORACLE_COLUMNS)
    assert pq.read_schema(out / m["shards"][0]["file"]).names == list(COLUMNS) + list(ORACLE_COLUMNS)
    oracles, boards = {}, {}
    seen = {"costed": 0, "detour": 0, "best": 0, "off": 0}
    prev = None
    for row in _rows(out, m):
        lid = row["level"]
        if lid is None:
            assert row["oracle_d"] is None and row["oracle_best"] == [] and row["oracle_cost"] is None
            assert row["oracle_dead_end"] is False
            seen["off"] += 1
            prev = None
            continue
        level = load_level(lid)
        p = get_puzzle(level.game)
        o = oracles.setdefault(lid, Oracle(level))
        if prev is None or prev["episode"] != row["episode"] or prev["level"] != lid:
            boards[lid] = [level.initial]                 # entered the level: its start
        stack = boards[lid]
        s = stack[-1]
        a = o.at(s)
        assert row["oracle_dead_end"] == a.dead_end
        assert row["oracle_d"] == (math.inf if a.dead_end else a.distance), row["key"]
        want = sorted(m.action for m in o.moves(s) if m.cost == 0)
        assert sorted(row["oracle_best_ids"]) == want
        assert row["oracle_best"] == [p.format_move(level, x) for x in row["oracle_best_ids"]]
        seen["best"] += bool(want)
        # the move's board after, by the rules, and its cost
        t = s
        for x in row["move_ids"]:
            t, code = p.step(level, t, x)
            assert code <= 1
        if row["effect"] == "restart":
            stack[:] = [level.initial]
        elif row["effect"] == "undo":
            if len(stack) > 1:
                stack.pop()
        elif row["move_ids"]:
            stack.append(t)
            if not a.dead_end:
                b = o.at(t)
                cost = math.inf if b.dead_end else len(row["move_ids"]) + b.distance - a.distance
                assert row["oracle_cost"] == cost, row["key"]
                seen["costed"] += 1
                seen["detour"] += cost > 0
        if row["effect"] != "move" or a.dead_end:
            assert row["oracle_cost"] is None
        prev = row
    assert seen["costed"] > 10 and seen["detour"] > 0 and seen["best"] > 10 and seen["off"] > 0, seen


def test_check_dataset_reverifies_the_oracle_columns(oracle_ds, tmp_path):
    out, m = oracle_ds
    rep = check_dataset(out)
    assert rep["ok"], rep["problems"]
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    f = bad / m["shards"][0]["file"]
    t = pq.read_table(f)
    rows = t.to_pylist()
    i = next(k for k, r in enumerate(rows) if r["oracle_d"] is not None)
    rows[i]["oracle_d"] += 1                          # a wrong label, the manifest made to agree
    import pyarrow as pa
    from longpuzzle.agents.datasets.shards import file_sha256
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), f)
    man = json.loads((bad / "manifest.json").read_text())
    man["shards"][0].update(bytes=f.stat().st_size, sha256=file_sha256(f))
    (bad / "manifest.json").write_text(json.dumps(man))
    rep = check_dataset(bad)
    assert not rep["ok"] and any("oracle_d" in p for p in rep["problems"]), rep["problems"]


def test_cli_dataset_oracle_in_webdataset_and_none_without_it(tmp_path):
    r = CliRunner()
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--max-actions", "10", "--format", "webdataset",
                         "--oracle", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    m = read_manifest(tmp_path / "o")
    rows = _rows(tmp_path / "o", m)
    on_level = [x for x in rows if x["level"]]
    assert on_level and all(set(ORACLE_COLUMNS) <= set(x) for x in rows)
    assert all(x["oracle_d"] == Oracle(x["level"]).at().distance for x in on_level[:1])
    res = r.invoke(cli, ["dataset-check", str(tmp_path / "o"), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["ok"]
    res = r.invoke(cli, ["dataset", "--resume", str(tmp_path / "o"), "--oracle"])
    assert res.exit_code == 2 and "--oracle is the plan's" in res.output
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--max-actions", "4", "--format", "webdataset",
                         "--out", str(tmp_path / "n")])
    assert res.exit_code == 0, res.output
    m = read_manifest(tmp_path / "n")
    assert not m["settings"]["oracle"] and not any(c["name"] in ORACLE_COLUMNS for c in m["schema"])
    assert not any(k in ORACLE_COLUMNS for x in _rows(tmp_path / "n", m) for k in x)
