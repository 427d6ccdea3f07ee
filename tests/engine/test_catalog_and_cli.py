"""Catalogue, registry and command line: ids, errors for bad input, JSON outputs."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level, parse_level_file
from longpuzzle.cli import cli
from longpuzzle.engine.errors import LevelFormatError, UnknownGameError, UnknownLevelError
from longpuzzle.engine.registry import get_puzzle, puzzle_ids, register, unregister
from longpuzzle.engine.session import Session

EXPECTED = {  # the original benchmark's objectives (the games built so far must match it)
    "bolt_unscrew": {"easy": 8, "hard": 8},
    "rush_hour": {"easy": 10, "medium": 10, "hard": 10},
    "nut_and_bolt": {"easy": 3, "medium": 3, "hard": 3, "extreme": 3, "nightmare": 1},
    "truck_escape": {"default": 5},
    "maze_paint": {"easy": 10, "medium": 10, "hard": 10},
    "color_connect": {"easy": 10, "hard": 10},
}


def test_objectives_match_the_benchmark():
    # the built-in games (a game of another installed distribution may be in the catalogue too)
    games = [g for g in builtin_catalog().games() if g in EXPECTED]
    assert {"nut_and_bolt", "maze_paint"} <= set(games)
    for g in games:
        assert {o.difficulty: len(o.level_ids) for o in builtin_catalog().objectives(g)} == EXPECTED[g]
    order = list(EXPECTED)
    assert games == sorted(games, key=order.index)
    if set(games) == set(EXPECTED):
        assert sum(len(builtin_catalog().objectives(g)) for g in games) == 16
        assert sum(len(builtin_catalog().level_ids(g)) for g in games) == 114


def test_level_ids_and_errors():
    lvl = load_level("maze_paint/hard/3")
    assert lvl.id == "maze_paint/hard/3" and lvl.number == 3 and lvl.name == "hard_03"
    with pytest.raises(UnknownGameError, match="registered games"):
        load_level("chess/easy/1")
    with pytest.raises(UnknownLevelError, match=r"levels 1\.\.10"):
        load_level("maze_paint/hard/11")
    with pytest.raises(UnknownLevelError, match="no difficulty"):
        load_level("maze_paint/insane/1")
    with pytest.raises(UnknownLevelError, match="game/difficulty/n"):
        load_level("maze_paint")


def _doc(**over):
    doc = {"format": "longpuzzle-levels/1", "game": "maze_paint",
           "objectives": [{"difficulty": "easy", "levels": [{"layout": ["S..", "#.."]}]}]}
    doc.update(over)
    return json.dumps(doc)


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ("[]", "JSON object"),
    (_doc(format="v0"), "format"),
    (_doc(game="chess"), "unknown game"),
    (_doc(objectives=[]), "objectives"),
    (_doc(objectives=[{"difficulty": "nope", "levels": [{"layout": ["S"]}]}]), "unknown difficulty"),
    (_doc(objectives=[{"difficulty": "easy", "levels": [{"layout": "S.."}]}]), "layout"),
    (_doc(objectives=[{"difficulty": "easy", "levels": [7]}]), "JSON object"),
])
def test_malformed_level_files_name_the_file(text, words):
    with pytest.raises(LevelFormatError) as e:
        parse_level_file(text, "custom.json")
    assert "custom.json" in str(e.value) and words in str(e.value)


def test_extra_level_file_replaces_a_game(tmp_path):
    f = tmp_path / "mine.json"
    f.write_text(_doc())
    cat = Catalog([f])
    assert cat.level_ids("maze_paint") == ["maze_paint/easy/1"]
    assert cat.level("maze_paint/easy/1").source == str(f)
    s = Session(cat.level("maze_paint/easy/1"))
    s.play("R")
    assert s.solved is False and s.progress == pytest.approx(2 / 4)
    s.play_all(["D", "L"])
    assert s.solved is True and s.progress == 1.0
    with pytest.raises(LevelFormatError, match="cannot read"):
        Catalog([tmp_path / "missing.json"])


def test_registry_discovers_and_accepts_new_puzzles():
    from longpuzzle.puzzles.maze_paint import MazePaint

    class Variant(MazePaint):
        id = "maze_variant"
        title = "Maze Variant"
    assert "maze_paint" in puzzle_ids() and "nut_and_bolt" in puzzle_ids()
    register(Variant())
    try:
        assert get_puzzle("maze_variant").title == "Maze Variant"
    finally:
        unregister("maze_variant")
    with pytest.raises(UnknownGameError):
        get_puzzle("maze_variant")


runner = CliRunner()


def run(*args):
    return runner.invoke(cli, list(args))


def test_every_subcommand_has_help():
    r = run("--help")
    assert r.exit_code == 0
    commands = [line.split()[0] for line in r.output.split("Commands:")[1].strip().splitlines() if line.strip()]
    assert {"levels", "show", "check", "replay", "rollout"} <= set(commands)
    for c in commands:
        rr = run(c, "--help")
        assert rr.exit_code == 0 and "Usage:" in rr.output


def test_levels_json():
    r = run("levels", "--json")
    data = json.loads(r.output)
    assert data["level_count"] == len(builtin_catalog().level_ids())
    assert data["objectives"][0]["levels"][0]["id"].endswith("/1")


def test_check_json_solved_rejected_and_errors():
    r = run("check", "maze_paint/easy/1", "--moves", "U R D R U", "--json")
    out = json.loads(r.output)
    assert r.exit_code == 0 and out["level"] == "maze_paint/easy/1" and out["applied"] == 5
    assert out["rejected_at"] is None and 0 < out["progress"] <= 1
    r = run("check", "nut_and_bolt/easy/1", "--moves", "2>3 1>2 1>3", "--json")
    out = json.loads(r.output)
    assert out["applied"] == 1 and out["rejected_at"] == 2 and out["solved"] is False   # counted from 1
    for args, words in [(("check", "nut_and_bolt/easy/1", "--moves", "2>9"), "no bolt 9"),
                        (("check", "nosuch/easy/1", "--moves", "U"), "unknown game"),
                        (("show", "maze_paint/hard/99"), "levels 1..10"),
                        (("replay", "garbage"), "episode")]:
        r = run(*args)
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output


def test_show_and_replay_and_checkpoint_file(tmp_path):
    r = run("show", "nut_and_bolt/easy/1", "--moves", "2>3")
    assert r.exit_code == 0 and "legal now" in r.output
    s = Session("nut_and_bolt/easy/1")
    s.play_all(["2>3", "1>3", "undo"])
    f = tmp_path / "ck.json"
    f.write_text(s.checkpoint())
    out = json.loads(run("replay", str(f), "--json").output)
    assert out["moves"] == 1 and out["counters"]["undos"] == 1
    out = json.loads(run("replay", s.episode_text(), "--json").output)
    assert out["moves"] == 1 and out["counters"] == s.counters.as_dict()
    f.write_text(s.checkpoint().replace('"2>3"', '"1>4"'))
    r = run("replay", str(f))
    assert r.exit_code == 2 and "checksum" in r.output


def test_rollout_json():
    out = json.loads(run("rollout", "maze_paint/easy/1", "--walks", "50", "--steps", "40", "--json").output)
    assert out["walks"] == 50 and 0 <= out["solved"] <= 50 and out["moves"] > 0


def test_python_dash_m_entry_point():
    r = subprocess.run([sys.executable, "-m", "longpuzzle", "show", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "Usage:" in r.stdout
