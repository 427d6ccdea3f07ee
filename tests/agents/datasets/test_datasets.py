"""Datasets of GUI trajectories (longpuzzle.agents.datasets): shards read back with the format's
own standard libraries (pyarrow, tarfile + json), frames against the recorded hashes,
actions against a replay of each episode, the model conventions against the model
protocols' own parsers, resume, reproducibility, and the CLI."""

from __future__ import annotations

import io
import json
import shutil
import tarfile

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from longpuzzle.agents.harness import frame_hash
from longpuzzle.agents.models.clients import Reply
from longpuzzle.agents.models.protocols import BuiltinProtocol, Context, QwenProtocol, UITarsProtocol
from longpuzzle.cli import cli
from longpuzzle.agents.datasets.build import DatasetConfig, build, read_manifest
from longpuzzle.agents.datasets.check import check_dataset, shard_differences
from longpuzzle.agents.datasets.conventions import Conventions
from longpuzzle.agents.datasets.schema import COLUMNS
from longpuzzle.agents.datasets.shards import DatasetError, read_rows
from longpuzzle.engine import gui

pq = pytest.importorskip("pyarrow.parquet", reason="the parquet format needs pyarrow (a base dependency)")


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@pytest.fixture(scope="module")
def parquet_ds(tmp_path_factory):
    """Maze Paint easy twice, with detours and restarts, styles and scales drawn, 2 jobs,
    small shards (so episodes cross shard borders)."""
    out = tmp_path_factory.mktemp("ds") / "mp"
    cfg = DatasetConfig(objectives=["maze_paint/easy"], episodes=2, detours=0.15, restarts=0.05,
                        styles=["2d", "3d"], scales=[0.5, 0.75], jobs=2, shard_size=40, seed=3)
    return out, build(out, cfg)


def test_parquet_shards_read_back_with_pyarrow_frames_match_their_hashes(parquet_ds):
    out, m = parquet_ds
    assert m["counts"]["shards"] == len(m["shards"]) > 2
    rows = []
    for s in m["shards"]:
        t = pq.read_table(out / s["file"])
        assert t.num_rows == s["rows"] and t.column_names == list(COLUMNS)
        rows += t.to_pylist()
    assert len(rows) == m["counts"]["rows"] == sum(e["rows"] for e in m["episodes"])
    assert len({r["key"] for r in rows}) == len(rows)
    for r in rows:
        px = _pixels(r["image"])
        assert px.shape == (r["height"], r["width"], 3)
        assert frame_hash(px) == r["frame_hash"]
    by_ep: dict[str, list] = {}
    for r in rows:
        by_ep.setdefault(r["episode"], []).append(r)
    for e in m["episodes"]:
        rs = by_ep[e["id"]]
        assert [r["index"] for r in rs] == list(range(e["rows"]))
        assert rs[-1]["last"] and not any(r["last"] for r in rs[:-1])
        for a, b in zip(rs, rs[1:]):                   # each row's next frame is the next row's frame
            assert a["next_frame_hash"] == b["frame_hash"]
        assert {r["style"] for r in rs} == {e["style"]} and (rs[0]["width"], rs[0]["height"]) == \
            (round(540 * e["scale"]), round(960 * e["scale"]))
        assert e["end"] == "completed" and rs[-1]["objective_complete"]
        assert sum(r["win"] for r in rs) == e["target_levels"] == 10
    # the variety asked for happened and is labelled; moves are labelled with their action ids
    assert m["counts"]["detours"] > 0 and m["counts"]["restarts"] > 0
    assert sum(r["variety"] == "detour" for r in rows) == m["counts"]["detours"]
    assert any(r["effect"] == "restart" for r in rows if r["variety"] == "restart")
    moved = [r for r in rows if r["moves"]]
    assert moved and all(len(r["moves"]) == len(r["move_ids"]) for r in moved)
    # the CPU time of the jobs (playing and writing in one thread), and of the writing in it
    t = m["timing"]
    assert 0 < t["writer_cpu_seconds"] < t["cpu_seconds"]
    # (from the CPU time before it was rounded to the ms the manifest shows)
    rows, cpu = m["counts"]["rows"], t["cpu_seconds"]
    assert rows / (cpu + 0.0005) - 1 <= t["rows_per_cpu_second"] <= rows / max(cpu - 0.0005, 1e-9) + 1, t


def test_every_episode_replays_to_the_recorded_frames_and_moves(parquet_ds):
    out, m = parquet_ds
    rep = check_dataset(out)
    assert rep["ok"], rep["problems"]
    assert rep["actions_replayed"] == rep["frames_checked"] == m["counts"]["rows"]


def test_the_check_catches_an_altered_shard_and_an_altered_action(parquet_ds, tmp_path):
    out, m = parquet_ds
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    f = bad / m["shards"][0]["file"]
    t = pq.read_table(f).to_pylist()
    i = next(k for k, r in enumerate(t) if json.loads(r["action"])["type"] != "wait")
    a = json.loads(t[i]["action"])
    t[i]["action"] = json.dumps({"type": "wait", "ms": 1})            # not what was played
    import pyarrow as pa
    from longpuzzle.agents.datasets.shards import arrow_schema
    pq.write_table(pa.Table.from_pylist(t, schema=arrow_schema()), f)
    rep = check_dataset(bad)
    assert not rep["ok"] and "content is not what the manifest recorded" in rep["problems"][0]
    # the same alteration with the manifest updated: only the replay can tell
    from longpuzzle.agents.datasets.shards import file_sha256
    man = json.loads((bad / "manifest.json").read_text())
    man["shards"][0].update(bytes=f.stat().st_size, sha256=file_sha256(f))
    (bad / "manifest.json").write_text(json.dumps(man))
    rep = check_dataset(bad)
    assert not rep["ok"] and any("replayed" in p for p in rep["problems"]), (a, rep["problems"])


def _conv_roundtrip(proto, text, cursor_calls=False):
    if cursor_calls:                                  # Qwen: the step's calls in order
        d = None
        for call in json.loads(text):
            d = proto.parse(Reply(text=f"<tool_call>{json.dumps(call)}</tool_call>"))
        return d.actions[0]
    return proto.parse(Reply(text=f"Thought: replaying.\nAction: {text}")).actions[0]


SIZE = (540, 960)
ACTIONS = [
    {"type": "click", "x": 17, "y": 940}, {"type": "double_click", "x": 539, "y": 0},
    {"type": "long_press", "x": 200, "y": 300, "ms": 1500}, {"type": "press", "x": 3, "y": 4},
    {"type": "release", "x": 100, "y": 120}, {"type": "release"},
    {"type": "drag", "x0": 10, "y0": 20, "x1": 400, "y1": 700}, {"type": "swipe", "direction": "left", "x": 300, "y": 500},
    {"type": "move", "x": 44, "y": 55}, {"type": "key", "name": "Enter"}, {"type": "typetext", "text": "ab 1"},
    {"type": "scroll", "x": 270, "y": 480, "direction": "down", "amount": 300}, {"type": "wait", "ms": 700},
]
_POINTS = {"click": ("x", "y"), "double_click": ("x", "y"), "long_press": ("x", "y"), "press": ("x", "y"),
           "release": ("x", "y"), "move": ("x", "y"), "scroll": ("x", "y"), "drag": ("x0", "y0", "x1", "y1"),
           "swipe": ("x0", "y0", "x1", "y1")}


@pytest.mark.parametrize("name", ["general_e2e", "qwen", "uitars"])
def test_conventions_read_back_by_the_model_protocols_to_the_same_action(name):
    """Each written convention is parsed by agents/models' own protocol back to the frame
    action (its type, its points to the pixel, its text and keys); what a convention cannot
    express is None."""
    conv = Conventions(SIZE)
    ctx = Context(instruction="", game=None, difficulty=None, frame_size=SIZE)
    expressed = 0
    for raw in ACTIONS:
        a = gui.validate(raw, SIZE)
        text = conv.all(a)[name]
        if text is None:
            continue
        proto = {"general_e2e": BuiltinProtocol, "qwen": QwenProtocol, "uitars": UITarsProtocol}[name](ctx)
        back = gui.validate(_conv_roundtrip(proto, text, cursor_calls=name == "qwen"), SIZE)
        t = {"swipe": "drag"}.get(a["type"], a["type"]) if name != "general_e2e" else a["type"]
        assert back["type"] == t, (raw, text, back)
        for k in _POINTS.get(a["type"], ()):
            if a.get(k) is not None:
                tol = 0 if name != "uitars" else 1      # UI-TARS: pixels of a smaller image
                assert abs(back[k] - round(a[k])) <= tol, (raw, text, back)
        for k in ("name", "text", "direction"):
            if k in a and a["type"] != "swipe":
                assert back[k] == a[k], (raw, text, back)
        expressed += 1
    assert expressed >= 8
    assert conv.all(gui.validate({"type": "drag", "x0": 1, "y0": 1, "via": [[50, 50]], "x1": 9, "y1": 9}, SIZE)) \
        == {"general_e2e": None, "qwen": None, "uitars": None}


def test_webdataset_shards_read_back_with_tarfile_and_per_move_gestures_fit_every_convention(tmp_path):
    out = tmp_path / "cc"
    m = build(out, DatasetConfig(objectives=["color_connect/easy"], episodes=1, format="webdataset",
                                 gestures="moves", settings={"max_actions": 40}))
    assert [s["file"] for s in m["shards"]] == ["shard-00000-0000.tar"]
    with tarfile.open(out / m["shards"][0]["file"]) as tar:
        names = tar.getnames()
        assert len(names) == 2 * m["counts"]["rows"]
        samples = {}
        for mem in tar:
            key, ext = mem.name.split(".", 1)
            samples.setdefault(key, {})[ext] = tar.extractfile(mem).read()
    assert all(set(v) == {"png", "json"} for v in samples.values())
    metas = [json.loads(v["json"]) for v in samples.values()]
    for v, meta in zip(samples.values(), metas):
        assert frame_hash(_pixels(v["png"])) == meta["frame_hash"] and meta["key"] in samples
        assert meta["action_general_e2e"] and meta["action_qwen"] and meta["action_uitars"]
    assert sum(bool(meta["moves"]) for meta in metas) > 5
    assert check_dataset(out)["ok"]


def test_resume_reruns_only_a_damaged_job_and_shards_are_reproducible(tmp_path):
    cfg = DatasetConfig(objectives=["rush_hour/easy"], episodes=2, jobs=2, format="webdataset", seed=1,
                        detours=0.2, settings={"max_actions": 25})
    out = tmp_path / "rh"
    m1 = build(out, cfg)
    first = {s["file"]: s["sha256"] for s in m1["shards"]}
    kept = out / "parts" / "job-00000.json"
    t_kept = kept.stat().st_mtime_ns
    saved = tmp_path / "first"
    saved.mkdir()
    for s in m1["shards"]:
        shutil.copy(out / s["file"], saved / s["file"])
    (out / m1["shards"][-1]["file"]).write_bytes(b"damaged")
    (out / "manifest.json").unlink()
    with pytest.raises(DatasetError, match="already holds a dataset"):
        build(out, cfg)
    m2 = build(out, resume=True)
    again = {s["file"]: s["sha256"] for s in m2["shards"]}
    for f in again:                                                     # say which row and field differ
        assert again[f] == first[f], (f, shard_differences(saved / f, out / f))
    assert again == first                                               # regenerated byte for byte
    assert kept.stat().st_mtime_ns == t_kept                              # the intact job was kept
    assert m2["counts"] == m1["counts"] and check_dataset(out)["ok"]


def test_cli_dataset_and_dataset_check(tmp_path):
    r = CliRunner()
    out = tmp_path / "d"
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--max-actions", "12", "--format",
                         "webdataset", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    counts = json.loads(res.output.strip().splitlines()[-1])
    assert counts["rows"] == read_manifest(out)["counts"]["rows"] > 0
    res = r.invoke(cli, ["dataset-check", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["ok"]
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--out", str(out)])
    assert res.exit_code == 2 and "already holds a dataset" in res.output
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--detours", "2", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and res.output.startswith("error:") and "probability" in res.output
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--agent", "random_anywhere", "--restarts",
                         "0.1", "--out", str(tmp_path / "y")])
    assert res.exit_code == 2 and "keeps a model of the app" in res.output
    res = r.invoke(cli, ["dataset-check", str(tmp_path)])
    assert res.exit_code == 2 and "no manifest.json" in res.output


def test_a_dataset_records_and_replays_on_its_catalogue(tmp_path):
    from longpuzzle.engine.catalog import Catalog, builtin_catalog
    doc = builtin_catalog().level_file("maze_paint")
    doc["objectives"] = [dict(o, levels=o["levels"][:2]) for o in doc["objectives"] if o["difficulty"] == "easy"]
    cat = Catalog(sources={"maze_paint": (json.dumps(doc), "two.json")}, name="two-levels")
    m = build(tmp_path / "two", DatasetConfig(objectives=["maze_paint/easy"], format="webdataset", catalog=cat))
    assert check_dataset(tmp_path / "two", catalog=cat)["ok"]
    # replayed on another catalogue's levels of the same ids, it is not the dataset
    assert "not available here" in str(pytest.raises(Exception, check_dataset, tmp_path / "two").value)
    assert m["catalogue"]["name"] == "two-levels" and m["catalogue"]["hash"] == cat.content_hash
    assert sorted(m["catalogue"]["levels"]) == ["maze_paint/easy/1", "maze_paint/easy/2"]
    assert m["episodes"][0]["target_levels"] == 2 and m["episodes"][0]["end"] == "completed"


def test_resuming_a_dataset_uses_the_catalogue_its_plan_records(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGPUZZLE_CATALOG_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("LONGPUZZLE_CATALOG", raising=False)
    from longpuzzle.agents.harness import HarnessError
    from longpuzzle.engine.catalog import Catalog, builtin_catalog
    from longpuzzle.engine.catalog_store import snapshot

    doc = builtin_catalog().level_file("maze_paint")
    doc["objectives"] = [dict(o, levels=o["levels"][:2]) for o in doc["objectives"] if o["difficulty"] == "easy"]
    (tmp_path / "two.json").write_text(json.dumps(doc))
    two = Catalog(sources={"maze_paint": (json.dumps(doc), "two.json")}, name="two")
    m1 = build(tmp_path / "d", DatasetConfig(objectives=["maze_paint/easy"], format="webdataset", jobs=1, catalog=two))
    (tmp_path / "d" / m1["shards"][0]["file"]).write_bytes(b"damaged")
    (tmp_path / "d" / "manifest.json").unlink()
    with pytest.raises(HarnessError, match="not available here"):      # not given, not stored: refused
        build(tmp_path / "d", resume=True)
    m2 = build(tmp_path / "d", resume=True, catalog=two)                # given: resumed on it
    assert [s["sha256"] for s in m2["shards"]] == [s["sha256"] for s in m1["shards"]]
    (tmp_path / "d" / m1["shards"][0]["file"]).write_bytes(b"damaged")
    (tmp_path / "d" / "manifest.json").unlink()
    snapshot("two", [str(tmp_path / "two.json")])                      # stored under its name: found
    m3 = build(tmp_path / "d", resume=True)
    assert [s["sha256"] for s in m3["shards"]] == [s["sha256"] for s in m1["shards"]]
    assert m3["catalogue"]["hash"] == two.content_hash != builtin_catalog().content_hash


def test_the_png_level_and_deflate_are_recorded_and_only_the_bytes_differ(tmp_path, monkeypatch):
    """--png-level 9 makes smaller shards of the same pixels; the manifest records the level
    (settings) and the deflate that made the PNGs (library, version, level, jobs), as the
    standard library's zlib with a note when zlib-ng cannot be imported; dataset-check
    shows it and finds a recorded level other than the settings' a problem."""
    from longpuzzle.agents.media import deflate as deflate_mod
    base = {"objectives": ["rush_hour/easy"], "format": "webdataset", "settings": {"max_actions": 6}}
    made = {}
    for name, level in (("fast", 1), ("small", 9)):
        made[name] = build(tmp_path / name, DatasetConfig(png_level=level, **base))
    with monkeypatch.context() as mp:
        mp.setattr(deflate_mod, "_zng", None)
        made["zlib"] = build(tmp_path / "zlib", DatasetConfig(**base))
    fast, small, plain = made["fast"], made["small"], made["zlib"]
    assert fast["png_deflate"] == [{"library": "zlib-ng", "version": deflate_mod._zng.ZLIBNG_VERSION, "level": 1,
                                    "jobs": [0]}]
    assert small["settings"]["png_level"] == 9 and small["png_deflate"][0]["level"] == 9
    assert plain["png_deflate"][0]["library"] == "zlib" and "could not be imported" in plain["png_deflate"][0]["note"]
    rows = {k: list(read_rows(tmp_path / k / m["shards"][0]["file"])) for k, m in made.items()}
    assert [r["frame_hash"] for r in rows["fast"]] == [r["frame_hash"] for r in rows["small"]] \
        == [r["frame_hash"] for r in rows["zlib"]]
    for k in made:                                        # the same pixels, other bytes
        assert frame_hash(_pixels(rows[k][-1]["image"])) == rows[k][-1]["frame_hash"]
    assert rows["fast"][-1]["image"] != rows["small"][-1]["image"] != rows["zlib"][-1]["image"]
    assert small["counts"]["bytes"] < fast["counts"]["bytes"]
    rep = check_dataset(tmp_path / "small", replay=False)
    assert rep["ok"] and rep["png_deflate"] == small["png_deflate"]
    res = CliRunner().invoke(cli, ["dataset-check", str(tmp_path / "zlib"), "--no-replay"])
    assert res.exit_code == 0 and "PNG deflate: zlib 1." in res.output and "could not be imported" in res.output
    man = json.loads((tmp_path / "small" / "manifest.json").read_text())
    man["png_deflate"][0]["level"] = 4
    (tmp_path / "small" / "manifest.json").write_text(json.dumps(man))
    rep = check_dataset(tmp_path / "small", replay=False)
    assert not rep["ok"] and rep["problems"] == ["png_deflate: jobs [0] were deflated at level 4, the settings say 9"]
    del man["png_deflate"]                                 # a manifest from before it was recorded
    (tmp_path / "small" / "manifest.json").write_text(json.dumps(man))
    assert check_dataset(tmp_path / "small", replay=False)["ok"]


def test_cli_png_level(tmp_path):
    r = CliRunner()
    out = tmp_path / "d"
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--max-actions", "4", "--png-level", "6",
                         "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "PNG deflate: zlib-ng 2." in res.output and "level 6" in res.output
    assert read_manifest(out)["settings"]["png_level"] == 6
    for bad in ("0", "10", "-1"):
        res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--png-level", bad, "--out", str(tmp_path / bad)])
        assert res.exit_code == 2 and res.output.startswith("error: --png-level:") and len(res.output.splitlines()) == 1
        assert not (tmp_path / bad).exists()
    res = r.invoke(cli, ["dataset", "--objective", "rush_hour/easy", "--png-level", "fast", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and res.output.startswith("error:") and "fast" in res.output
    res = r.invoke(cli, ["dataset", "--resume", str(out), "--png-level", "2"])
    assert res.exit_code == 2 and res.output.startswith("error: --png-level is the plan's")


def test_jobs_deflated_differently_are_each_recorded():
    """A resumed dataset, or one written by a cluster, may hold jobs deflated by another
    zlib-ng (or by zlib, or by code from before the deflate was recorded): each deflate is
    listed once with its jobs, and dataset-check's line names them."""
    from longpuzzle.agents.datasets.build import png_deflates
    from longpuzzle.agents.datasets.check import describe_deflates
    ng = {"library": "zlib-ng", "version": "2.3.3", "level": 1}
    parts = [{"job": 0, "png_deflate": ng}, {"job": 1, "png_deflate": {**ng, "version": "2.4.0"}},
             {"job": 2, "png_deflate": dict(ng)}, {"job": 3}]
    got = png_deflates(parts)
    assert got == [{**ng, "jobs": [0, 2]}, {**ng, "version": "2.4.0", "jobs": [1]}, {"library": "unrecorded", "jobs": [3]}]
    assert describe_deflates(got) == ("zlib-ng 2.3.3 level 1 (jobs 0, 2); zlib-ng 2.4.0 level 1 (jobs 1); "
                                      "unrecorded (jobs 3)")
    assert describe_deflates([]) == "not recorded"
