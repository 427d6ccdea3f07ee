"""Named catalogue snapshots and --catalog: versions, hashes, corrupt files, the catalogue as a
value passed explicitly (to a child process on its command line, to other processes as level
data checked by hash; nothing switched process-wide), the commands, result files recording the
catalogue, replay on the recorded catalogue and report refusing to merge catalogues."""

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from longpuzzle.cli import main
from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
from longpuzzle.engine.registry import puzzle_ids
from longpuzzle.engine.catalog_store import CatalogError, list_catalogs, open_catalog, snapshot
from longpuzzle.solvers.generators import generate, level_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGPUZZLE_CATALOG_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("LONGPUZZLE_CATALOG", raising=False)
    yield tmp_path
    assert "LONGPUZZLE_CATALOG" not in os.environ           # nothing sets it for others to inherit


def _file(tmp_path, game, tier, count, seed=0, name=None):
    path = tmp_path / (name or f"{game}-{tier}-{seed}.json")
    path.write_text(json.dumps(level_file(list(generate(game, tier, seed=seed, count=count)))), encoding="utf-8")
    return path


def run(args, capsys):
    """One command, as its own process would run it."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code or 0, out.out, out.err


def test_snapshot_versions_hash_and_merge(store):
    a = _file(store, "maze_paint", "easy", 2)
    b = _file(store, "maze_paint", "medium", 1)
    t = _file(store, "truck_escape", "default", 1)
    v1 = snapshot("mix", [b, a, t])
    assert v1["version"] == 1 and v1["created"] and v1["levels"] == 4 and v1["objectives"] == 3
    cat = open_catalog("mix")
    assert [o.id for o in cat.objectives()] == ["truck_escape/default", "maze_paint/easy", "maze_paint/medium"]
    assert cat.label == "mix@1" and cat.content_hash == v1["hash"]
    assert cat.generators == {"maze_paint": 1, "truck_escape": 1}
    again = snapshot("mix", [a, b, t])                 # same levels: no new version
    assert again["version"] == 1 and not again["created"]
    v2 = snapshot("mix", [a])
    assert v2["version"] == 2 and v2["hash"] != v1["hash"]
    assert open_catalog("mix").version == 2 and open_catalog("mix@1").content_hash == v1["hash"]
    assert [(r["name"], r["version"], r["latest"]) for r in list_catalogs()] == [("mix", 1, False), ("mix", 2, True)]
    with pytest.raises(CatalogError, match="comes from both"):
        snapshot("dup", [a, a])
    with_builtin = open_catalog(snapshot("full", [a], with_builtin=True)["path"])
    assert len(with_builtin.level_ids()) == len(builtin_catalog().level_ids()) - 30 + 2


def test_bad_names_unknown_versions_and_corrupt_files(store):
    a = _file(store, "truck_escape", "default", 1)
    for bad in ("builtin", "../x", "", "a b"):
        with pytest.raises(CatalogError, match="not a usable catalogue name"):
            snapshot(bad, [a])
    with pytest.raises(CatalogError, match="no catalogue 'ghost'"):
        open_catalog("ghost")
    info = snapshot("c", [a])
    with pytest.raises(CatalogError, match="no version '7'"):
        open_catalog("c@7")
    path = Path(info["path"])
    body = json.loads(path.read_text())
    body["games"]["truck_escape"]["objectives"][0]["levels"][0]["trucks"].pop()
    path.write_text(json.dumps(body))
    with pytest.raises(CatalogError, match="do not match its recorded hash"):
        open_catalog("c")
    path.write_text("{not json")
    with pytest.raises(CatalogError, match="not valid JSON"):
        open_catalog("c")


def test_unreadable_catalogue_and_level_files_are_one_error_line(store, capsys):
    # invalid UTF-8, UTF-16 and deep nesting, given to --catalog, to catalog snapshot --from,
    # or found in the store: one error line (exit 2), never a traceback
    bad = {"utf8": b'{"format": "longpuzzle-catalog/1", "name": "\xff"}', "utf16": "{}".encode("utf-16"),
           "deep": b'{"format": "longpuzzle-catalog/1", "games": ' + b"[" * 100_000}
    says = {"utf8": "not UTF-8 text", "utf16": "UTF-16", "deep": "nested too deeply"}
    for what, data in bad.items():
        f = store / f"{what}.json"
        f.write_bytes(data)
        for args in (["levels", "--catalog", str(f)], ["catalog", "snapshot", "x", "--from", str(f)]):
            code, out, err = run(args, capsys)
            assert code == 2 and err.startswith("error:") and says[what] in err, (args, err)
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in out + err
    path = Path(snapshot("c", [_file(store, "truck_escape", "default", 1)])["path"])
    path.write_bytes(bad["deep"])                      # a stored version corrupted
    code, out, err = run(["levels", "--catalog", "c"], capsys)
    assert code == 2 and "nested too deeply" in err and len(err.strip().splitlines()) == 1
    assert [r.get("corrupt") for r in list_catalogs()] == [True]


def test_the_catalogue_is_passed_to_what_needs_it_and_to_child_processes(store):
    a = _file(store, "maze_paint", "easy", 1)
    snapshot("mine", [a])
    cat = open_catalog("mine")
    # a value: lookups go to the catalogue given, the built-in one where none is
    assert load_level("maze_paint/easy/1", cat).data["name"].startswith("gen:")
    assert load_level("maze_paint/easy/1") is builtin_catalog().level("maze_paint/easy/1")
    assert not load_level("maze_paint/easy/1").data["name"].startswith("gen:")
    # a child process gets it explicitly on its command line (--catalog), or from the user's
    # $LONGPUZZLE_CATALOG, read once when the command line is parsed as --catalog's default
    env = {k: v for k, v in os.environ.items() if k != "LONGPUZZLE_CATALOG"}
    env["PYTHONPATH"] = str(ROOT.parent)

    def child(args, **extra):
        out = subprocess.run([sys.executable, "-m", "longpuzzle", "levels", "--json", *args], env={**env, **extra},
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["catalog"]
    assert child(["--catalog", cat.spec]) == cat.identity() and cat.spec == "mine@1"
    assert child([], LONGPUZZLE_CATALOG="mine") == cat.identity()
    assert child(["--catalog", "builtin"], LONGPUZZLE_CATALOG="mine") == builtin_catalog().identity()
    assert child([]) == builtin_catalog().identity()
    # to other processes (jobs, workers, Ray tasks) it travels as its level data, rebuilt once
    # per process and checked by its content hash; the built-in one as a reference
    assert pickle.loads(pickle.dumps(builtin_catalog())) is builtin_catalog()
    custom = Catalog([a])
    assert custom.name == "custom" and len(custom.level_ids()) == len(builtin_catalog().level_ids()) - 30 + 1
    from longpuzzle.engine import catalog as model
    model._RECEIVED.clear()
    got = pickle.loads(pickle.dumps(custom))
    assert got is not custom and got.identity() == custom.identity() and pickle.loads(pickle.dumps(custom)) is got
    assert got.level("maze_paint/easy/1").data == custom.level("maze_paint/easy/1").data
    assert pickle.loads(pickle.dumps(cat)).spec == "mine@1"
    doc = custom.to_doc()
    doc["hash"] = "0" * 64                       # level data that is not the catalogue it claims to be
    with pytest.raises(Exception, match="content hash differs"):
        model._catalog_from_doc(doc)
    # the model imports nothing of the storage (the storage imports the model)
    import ast
    tree = ast.parse((ROOT / "engine" / "catalog.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "longpuzzle.engine.catalog_store" not in imported and "longpuzzle.engine" in {
        m.rsplit(".", 1)[0] for m in imported if m}


def test_level_commands_take_the_catalogue_of_their_command_line(store, capsys):
    """show, check, solve, hint and replay (an episode text) look the id up in --catalog's
    catalogue (default: $LONGPUZZLE_CATALOG, else the built-in one)."""
    made = list(generate("maze_paint", "easy", seed=4, count=1))
    path = store / "m.json"
    path.write_text(json.dumps(level_file(made)), encoding="utf-8")
    snapshot("mine", [path])
    name = load_level("maze_paint/easy/1", open_catalog("mine")).name
    assert name.startswith("gen:") and name != load_level("maze_paint/easy/1").name
    code, out, err = run(["show", "maze_paint/easy/1", "--catalog", "mine"], capsys)
    assert code == 0 and name in out.splitlines()[0]
    code, out, err = run(["show", "maze_paint/easy/1"], capsys)
    assert code == 0 and name not in out
    sol = made[0].profile.solution
    moves = " ".join(sol)
    for args in (["check", "maze_paint/easy/1", "--moves", moves, "--json"],
                 ["replay", f"maze_paint/easy/1: {moves}", "--json"]):
        code, out, err = run([*args, "--catalog", "mine"], capsys)
        assert code == 0 and json.loads(out)["solved"] is True, (args, out, err)
    code, out, err = run(["solve", "maze_paint/easy/1", "--json", "--catalog", "mine"], capsys)
    assert code == 0 and json.loads(out)["length"] == len(sol)
    code, out, err = run(["hint", "maze_paint/easy/1", "--json", "--catalog", "mine"], capsys)
    assert code == 0 and json.loads(out)["answer"]["distance"] == len(sol), out


def test_one_suite_keeps_levels_of_the_same_id_from_two_catalogues_apart(store, monkeypatch):
    """Level ids repeat across catalogues: a suite that opens maze_paint/easy/1 of one
    catalogue, then of another, then of the first again gets each level's own screen (its
    GameUI and targets), and the first one's UI back without rebuilding it; a suite over
    each catalogue looks its ids up there and its menus list that catalogue's levels."""
    from longpuzzle.engine.suite import screens as suite_screens     # (where _shared reads SHARED_KEPT)
    from longpuzzle.engine.suite import Suite
    cats = []
    for seed, n in ((1, 1), (2, 3)):
        path = store / f"m{seed}.json"
        made = list(generate("maze_paint", "easy", seed=seed, count=n)) + list(generate("maze_paint", "medium", count=1))
        path.write_text(json.dumps(level_file(made)), encoding="utf-8")
        cats.append(Catalog([path]))
    s = Suite("home")
    seen = []
    for cat in (cats[0], cats[1], cats[0]):
        lvl = load_level("maze_paint/easy/1", cat)
        s.open_level(lvl)
        u = s.game_ui()
        assert u.level is lvl and s.level is lvl
        assert list(s.layout().widgets[:len(u.targets())]) == list(u.targets())
        seen.append((lvl.sha256, u))
        s.go_home()
        own = Suite("maze_paint/easy/1", catalog=cat)             # the id looked up in the suite's catalogue
        assert own.level is lvl and own.catalog is cat and own.clone().catalog is cat
        own.go_home()
        own.dispatch({"type": "click", "x": 270, "y": dict(own.home_games())["maze_paint"]})
        cards = {w.id: w.data for w in own.layout().widgets if w.id.startswith("difficulty:")}
        assert cards["difficulty:easy"] == (len(cat.objective("maze_paint/easy").level_ids),)
        assert Suite.restore(own.snapshot(), cat).catalog is cat
    assert seen[0][0] != seen[1][0] and seen[0][1] is not seen[1][1] and seen[2][1] is seen[0][1]
    # an endless stream of generated levels keeps a bounded number of screens
    monkeypatch.setattr(suite_screens, "SHARED_KEPT", 8)
    for g in generate("truck_escape", "default", seed=3, count=12):
        s.game_ui(g.level)
    assert len(s.widgets.uis) <= 8


def test_commands_generate_snapshot_levels_verify(store, capsys):
    out_file = store / "rh.json"
    code, out, err = run(["generate", "rush_hour", "--tier", "easy", "--count", "2", "--seed", "5",
                          "--out", str(out_file)], capsys)
    assert code == 0 and "wrote 2 rush_hour easy levels" in out
    doc = json.loads(out_file.read_text())
    assert doc["generator"]["name"] == "longpuzzle.solvers.generators.rush_hour"
    assert all(r["reference_solution"] and r["profile"]["states_exact"] for r in doc["objectives"][0]["levels"])
    code, out, err = run(["generate", "rush_hour", "--tier", "mythic", "--count", "1"], capsys)
    assert code == 2 and err.startswith("error: rush_hour has no tier 'mythic'") and len(err.splitlines()) == 1
    code, out, err = run(["catalog", "snapshot", "rh", "--from", str(out_file)], capsys)
    assert code == 0 and "saved rh@1" in out
    code, out, err = run(["catalog", "show", "rh", "--json"], capsys)
    assert json.loads(out)["objectives"] == [{"objective": "rush_hour/easy", "levels": 2}]
    code, out, err = run(["levels", "--catalog", "rh"], capsys)
    assert "1 objective, 2 levels (catalogue rh@1" in out
    code, out, err = run(["verify", "--catalog", "rh", "--profile", "--json"], capsys)
    lines = [json.loads(x) for x in out.splitlines()]
    assert [d["level"] for d in lines[:2]] == ["rush_hour/easy/1", "rush_hour/easy/2"]
    assert all(d["catalog"] == "rh@1" and d["status"] == "solvable" for d in lines[:2])
    assert lines[2]["tiers"][0]["objective"] == "rush_hour/easy" and lines[2]["catalog"]["name"] == "rh"
    code, out, err = run(["levels", "--catalog", "nothing-here"], capsys)
    assert code == 2 and "error: no catalogue 'nothing-here'" in err
    code, out, err = run(["verify", "--game", "maze_paint", "--profile", "--tiers-out", str(store / "t.json")],
                         capsys)
    assert code == 0 and json.loads((store / "t.json").read_text())["games"]["maze_paint"]["tiers"]["hard"]["accept"] \
        == {"optimal": [18, 25], "states": [547, 107243]}


def test_results_record_the_catalogue_replay_uses_it_and_report_keeps_catalogues_apart(store, capsys):
    a = _file(store, "maze_paint", "easy", 1, seed=3)
    snapshot("one", [a])
    out = store / "ev"
    code, o, e = run(["eval", "--catalog", "one", "--objective", "maze_paint/easy", "--out", str(out / "mine"),
                      "--no-frames", "--budget", "120", "--max-actions", "40"], capsys)
    assert code == 0
    res = json.loads((out / "mine" / "maze_paint_easy" / "episode_001" / "result.json").read_text())
    assert res["catalog"]["name"] == "one" and res["catalog"]["version"] == 1 and res["success"]
    summary = json.loads((out / "mine" / "summary.json").read_text())
    assert summary["catalog"] == res["catalog"]
    # replayed on the catalogue it recorded, though the built-in one is in use here
    code, o, e = run(["replay", str(out / "mine" / "maze_paint_easy" / "episode_001")], capsys)
    assert code == 0 and "every frame and result matches" in o
    # the report reads the episode's levels in the catalogue it recorded: the solver's moves
    # are all optimal there (on the built-in level of that id they would not even be states)
    from longpuzzle.agents.report.oracle_steps import oracle_steps
    steps = oracle_steps(out / "mine" / "maze_paint_easy" / "episode_001")
    assert steps["moves"] > 0 and steps["optimal_moves"] == steps["judged_moves"] == steps["moves"]
    code, o, e = run(["eval", "--objective", "maze_paint/easy", "--out", str(out / "builtin"), "--no-frames",
                      "--budget", "120", "--max-actions", "40"], capsys)
    assert code == 0
    # runs on different catalogues are never pooled into one row, unless asked
    from longpuzzle.agents.report.data import load_run
    from longpuzzle.agents.report.page import merge_catalog_identities
    from longpuzzle.agents.report.tables import group_runs
    runs = [load_run(out / "mine"), load_run(out / "builtin")]
    assert [r.identity["catalog"]["name"] for r in runs] == ["one", "builtin"]
    assert len(group_runs(runs)) == 2
    merge_catalog_identities(runs)
    assert len(group_runs(runs)) == 1
    code, o, e = run(["report", str(out / "mine"), str(out / "builtin"), "--out", str(out / "r"), "--no-videos"],
                     capsys)
    assert code == 0, e
    page = (out / "r" / "report.html").read_text()
    assert "one #" in page and "builtin #" in page
    code, o, e = run(["report", str(out / "mine"), str(out / "builtin"), "--out", str(out / "m"), "--no-videos",
                      "--merge-catalogs"], capsys)
    assert code == 0 and "builtin #" in (out / "m" / "report.html").read_text()


def test_envs_over_a_snapshot_of_two_games_lists_and_checks_those_and_skips_the_rest(store, capsys):
    a = _file(store, "maze_paint", "easy", 1, seed=3)
    b = _file(store, "rush_hour", "easy", 1, seed=3)
    snapshot("two", [a, b])
    code, out, err = run(["envs", "--catalog", "two", "--check", "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    checked = {(r["id"], r["mode"]) for r in rows if r.get("check") == "ok"}
    assert checked == {("longpuzzle/MazePaint-v0", "rules"), ("longpuzzle/MazePaint-v0", "pixels"),
                       ("longpuzzle/RushHour-v0", "rules"), ("longpuzzle/RushHour-v0", "pixels"),
                       ("longpuzzle/Suite-v0", "suite")}
    skipped = [r for r in rows if r["mode"] is None]
    assert len(skipped) == len(puzzle_ids()) - 2 and all("no " in r["skipped"] and "levels" in r["skipped"] for r in skipped)
