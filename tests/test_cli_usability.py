"""What a new user meets on the command line: one numbering of moves, moves that changed
nothing, sentences instead of Python reprs, plurals, one-line usage errors, replaying a whole
run folder, the README's own examples, unique result folders, live episode status and the
location of numba's cache."""

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.cli import EpisodeStatus, new_results_folder
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.cli import cli

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = Path(__file__).resolve().parents[1] / "docs"          # the documentation site's pages


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_check_numbers_moves_from_one_in_text_and_json():
    moves = "2>3 1>2 1>3"                    # the second move is refused
    out = json.loads(run("check", "nut_and_bolt/easy/1", "--moves", moves, "--json").output)
    assert out["applied"] == 1 and out["rejected_at"] == 2 and out["moves"] == 3
    text = run("check", "nut_and_bolt/easy/1", "--moves", moves).output
    assert "rejected move 2 (1>2): " in text and "applied 1 of 3 moves" in text
    assert "move move" not in text and text.count("1>2") == 1     # the move is named once
    out = json.loads(run("check", "nut_and_bolt/easy/1", "--moves", "2>3", "--json").output)
    assert out["rejected_at"] is None and out["applied"] == 1


def test_check_reports_moves_that_changed_nothing():
    # on maze_paint/easy/1 the ball starts against the left wall: L is accepted and does nothing
    out = json.loads(run("check", "maze_paint/easy/1", "--moves", "L U", "--json").output)
    assert out["applied"] == 2 and out["unchanged"] == [1]
    text = run("check", "maze_paint/easy/1", "--moves", "L U").output
    assert "applied 2 of 2 moves, 1 of them changed nothing (move 1: L)" in text
    out = json.loads(run("check", "maze_paint/easy/1", "--moves", "U R", "--json").output)
    assert out["unchanged"] == []
    out = json.loads(run("check", "maze_paint/easy/1", "--moves", "U undo", "--json").output)
    assert out["rejected_at"] == 2 and "no undo" in out["reason"]


def test_verify_text_without_a_lower_bound(monkeypatch):
    import longpuzzle.solvers.cli as scli

    monkeypatch.setattr(scli, "verify_level", lambda level, budget=None: {
        "ok": True, "optimal": False, "lower_bound": None, "status": "solvable", "length": 90,
        "states": 82, "seconds": 0.001})
    r = run("verify", "--game", "color_connect")
    assert r.exit_code == 0 and "None" not in r.output and "not proven optimal" in r.output


def test_replay_text_is_a_sentence_and_json_is_json(tmp_path):
    r = run("replay", "nut_and_bolt/easy/1: 2>3 1>3 undo 2>4")
    assert r.exit_code == 0
    last = r.output.strip().splitlines()[-1]
    assert last == "nut_and_bolt/easy/1: 2 moves on the board (3 played, 1 undo); solved: no; progress P = 0.3750"
    assert "{" not in r.output
    out = json.loads(run("replay", "nut_and_bolt/easy/1: 2>3 1>3 undo 2>4", "--json").output)
    assert out["moves"] == 2 and out["counters"]["undos"] == 1


def test_levels_says_level_not_levels_for_one():
    out = run("levels", "--game", "nut_and_bolt").output
    assert re.search(r"nut_and_bolt/nightmare\s+1 level\s+nut_and_bolt/nightmare/1$", out, re.M)
    assert "1 levels" not in out and "3 levels" in out
    assert run("levels", "--game", "truck_escape").output.strip().endswith("1 objective, 5 levels")


@pytest.mark.parametrize("args, words", [
    (["check"], "Missing argument 'LEVEL_ID'"),
    (["show", "--bogus"], "No such option '--bogus'"),
    (["--bogus"], "No such option"),
    (["frobnicate"], "No such command 'frobnicate'"),
    (["screenshot", "--style", "4d", "--out", "x.png"], "'4d' is not one of"),
    (["eval", "--episodes", "0"], "--episodes must be at least 1"),
    (["replay", ""], "not an empty string"),                   # (not every episode below this folder)
    (["replay", "no-such-folder"], "no-such-folder: no such file or folder"),
    (["solve", "nut_and_bolt/nightmare/1", "--budget", "-3"], "-3 is not in the range x>=1"),
    (["verify", "--game", "maze_paint", "--budget", "0"], "0 is not in the range x>=1"),
])
def test_usage_errors_are_one_error_line_with_status_2(args, words):
    r = run(*args)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], r.output
    assert "--help" in lines[0]


@pytest.mark.parametrize("args, words", [
    (["eval", "--objective", "rush_hour/easy", "--ship-code"], "--ship-code are for --backend ray"),
    (["eval", "--objective", "rush_hour/easy", "--backend", "ray"], "needs Ray"),     # (Ray hidden below)
    (["eval", "--objective", "maze_paint/easy", "--all"], "not both"),
    (["eval", "--agent", "/nonexistent/agent.py"], "agent file /nonexistent/agent.py: no such file"),
    (["eval", "--agent", "folder.py"], "agent file folder.py: is a folder"),
    (["dataset", "--objective", "maze_paint/easy", "--all", "--out", "d"], "not both"),
])
def test_a_usage_error_creates_nothing(args, words, tmp_path, monkeypatch):
    """A mistake is one error line, exit 2, and nothing is written: no results/eval-<time>/
    folder (which `leaderboard` would then trip on and `--resume` quietly run)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)        # as where Ray is not installed
    if "folder.py" in args:
        (tmp_path / "folder.py").mkdir()
    before = sorted(tmp_path.rglob("*"))
    r = run(*args)
    assert r.exit_code == 2 and r.output.startswith("error: ") and words in r.output, r.output
    assert sorted(tmp_path.rglob("*")) == before


def test_usage_error_from_a_real_process_is_one_line_on_stderr():
    r = subprocess.run([sys.executable, "-m", "longpuzzle", "check"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("error: Missing argument")


@pytest.mark.parametrize("delay", [0.0, 1.0])
def test_ctrl_c_exits_130_with_one_line(delay):
    """Ctrl-C (SIGINT) ends a command with status 130, the shell's convention (128 + SIGINT),
    and one line on stderr, whether it lands while the command starts or while it runs (the
    outcome is the same at any moment: the delay only varies where). The child says when
    Python's own handler is in place, so the signal never lands before it."""
    import signal
    args = ["rollout", "maze_paint/easy/1", "--env", "rules", "--episodes", "100000000"]
    # (Python's own Ctrl-C handler, as on a terminal: a test run started in the background
    # inherits SIGINT ignored, which Python then keeps)
    code = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"import longpuzzle.cli as c; print('ready', flush=True); c.main({args!r})")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (out, err)
    assert err.strip() == "interrupted" and out == ""


@pytest.mark.parametrize("args", [["show"], ["rollout", "--walks", "3", "--steps", "5", "--json"]])
def test_show_and_rollout_without_a_level_say_which_they_use(args):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert r.stderr == "(no LEVEL_ID given: maze_paint/easy/1)\n"
    if "--json" in args:
        assert json.loads(r.stdout)["level"] == "maze_paint/easy/1"
    r = CliRunner().invoke(cli, [args[0], "maze_paint/easy/1"] + args[1:])
    assert r.exit_code == 0 and r.stderr == ""


def test_readme_command_examples_run():
    """Every ``longpuzzle replay "..."`` / ``check`` / ``show`` example line of the README and
    of the documentation site's pages that names a real level runs as written (a level of a
    game not installed here, such as the Sokoban example's, is left out)."""
    from longpuzzle.engine.registry import puzzle_ids

    pages = [README, *sorted(DOCS.rglob("*.md"))]
    lines = [l.strip() for p in pages for l in p.read_text(encoding="utf-8").splitlines()]
    found = [l for l in lines if re.match(r"longpuzzle (replay \"[a-z_]+/|check [a-z_]+/|show [a-z_]+/)", l)]
    games = set(puzzle_ids())
    cmds = [l for l in found if re.match(r'longpuzzle \w+ "?([a-z_]+)/', l).group(1) in games]
    assert any("undo" in c for c in cmds), "the README shows a replay with undo"
    assert len(cmds) >= 5 and all(c.startswith("longpuzzle show sokoban/") for c in set(found) - set(cmds)), found
    for c in cmds:
        c = re.split(r"\s{3,}", c)[0]          # the table's description column
        args = shlex.split(c)[1:]
        r = run(*args)
        assert r.exit_code == 0, (c, r.output)


def test_replay_accepts_a_run_folder_and_sums_up(tmp_path):
    out = tmp_path / "run"
    r = run("eval", "--objective", "maze_paint/easy", "--episodes", "2", "--max-actions", "8",
            "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    r = run("replay", str(out))
    assert r.exit_code == 0, r.output
    assert "maze_paint_easy/episode_001: 8 actions replayed" in r.output
    assert "2 episodes replayed: 2 matched, 0 diverged" in r.output
    assert r.output.strip().splitlines()[-1].startswith("run VERIFIED: ")
    d = json.loads(run("replay", str(out), "--json").output)
    assert d["matched"] == 2 and [e["episode"] for e in d["episodes"]] == [
        "maze_paint_easy/episode_001", "maze_paint_easy/episode_002"]
    ev = out / "maze_paint_easy" / "episode_002" / "events.jsonl"
    ev.write_text(ev.read_text().replace('"P":0.0', '"P":0.5', 1))
    r = run("replay", str(out))
    assert r.exit_code == 1 and "1 matched, 1 diverged" in r.output and "DIVERGED" in r.output
    assert r.output.strip().splitlines()[-1].startswith("run NOT VERIFIED: maze_paint_easy/episode_002: ")
    r = run("replay", str(tmp_path / "run" / "maze_paint_easy" / "nothing_here"))
    assert r.exit_code == 2 and "error:" in r.output
    (tmp_path / "empty").mkdir()
    r = run("replay", str(tmp_path / "empty"))
    assert r.exit_code == 2 and "neither an episode folder nor an eval output folder" in r.output


def test_result_folders_started_in_the_same_second_do_not_collide(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "strftime", lambda fmt: "20250101-120000")
    a = new_results_folder(tmp_path)
    b = new_results_folder(tmp_path)
    c = new_results_folder(tmp_path)
    assert [p.name for p in (a, b, c)] == ["eval-20250101-120000", "eval-20250101-120000-2",
                                           "eval-20250101-120000-3"]
    assert all(p.is_dir() for p in (a, b, c))


class _Bar:
    def __init__(self):
        self.texts = []

    def set_postfix_str(self, s, refresh=True):
        self.texts.append(s)

    def update(self, n):
        pass


def test_a_running_episode_shows_its_level_actions_and_time_left():
    bar = _Bar()
    status = EpisodeStatus(bar, "nut_and_bolt/easy")
    r = run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=Settings(budget=120, action_timeout=None, save_frames=False),
                      on_action=status)
    assert len(bar.texts) == r.actions
    assert bar.texts[0].startswith("nut_and_bolt/easy, home, 1 action, ")      # the first wait
    m = re.fullmatch(r"nut_and_bolt/easy, level 3/3 P 1\.00, (\d+) actions, (\d+) s left", bar.texts[-1])
    assert m and int(m.group(1)) == r.actions and 60 < int(m.group(2)) <= 120
    assert any("level 2/3" in t for t in bar.texts)


def test_numba_cache_goes_under_the_project_cache_folder(tmp_path):
    script = ("import longpuzzle, numba, sys\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "import lp_probe\n"
              "lp_probe.f(1)\n"
              "print(numba.config.CACHE_DIR)\n")
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "lp_probe.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n"
                                                 "    return x + 1\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["LONGPUZZLE_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path / "mod")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == str(tmp_path / "cache" / "numba")
    assert list((tmp_path / "cache" / "numba").rglob("*.nbi")), "numba wrote its cache index there"
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")            # an explicit choice is kept
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path / "mod")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / "mine")
    assert list((tmp_path / "mine").rglob("*.nbi"))


def test_a_command_imports_only_the_module_that_offers_it():
    import importlib

    from longpuzzle.cli import COMMAND_MODULES

    for mod, names in COMMAND_MODULES.items():      # the table names each module's commands
        assert tuple(c.name for c in importlib.import_module(mod).COMMANDS) == names, mod
    code = ("import sys\nfrom longpuzzle.cli import main\n"
            "try:\n    main(['dataset', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.endswith('.cli') and m.startswith('longpuzzle.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out.strip().splitlines()[-1])
    assert "longpuzzle.agents.datasets.cli" in loaded
    others = set(COMMAND_MODULES) - {"longpuzzle.agents.datasets.cli"}
    assert not others & set(loaded), loaded
    assert run("frobnicate").exit_code == 2          # an unknown name still gets the usage error


def _screen_lines(raw: str) -> list[str]:
    """The lines a terminal shows for this output: a carriage return goes back to the start of
    the line, later characters overwrite earlier ones (tqdm's bar is redrawn that way)."""
    shown = []
    for segment in raw.replace("\r\n", "\n").split("\n"):
        line: list[str] = []
        pos = 0
        for ch in segment:
            if ch == "\r":
                pos = 0
                continue
            if pos < len(line):
                line[pos] = ch
            else:
                line.append(ch)
            pos += 1
        shown.append("".join(line).rstrip())
    return shown


@pytest.mark.parametrize("extra", [[], ["--profile"]])
def test_verify_result_lines_on_a_terminal_are_not_written_over_the_progress_bar(extra):
    """On a terminal (stdout and stderr both on it) each result line starts at the line's start,
    the bar cleared first and drawn again below."""
    import pty

    import fcntl
    import struct
    import termios

    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))   # 160 columns: a bar is drawn
    p = subprocess.Popen([sys.executable, "-m", "longpuzzle", "verify", "--game", "maze_paint"] + extra,
                         stdin=subprocess.DEVNULL, stdout=child_fd, stderr=child_fd, close_fds=True)
    os.close(child_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 65536)
        except OSError:                          # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main_fd)
    assert p.wait(timeout=300) == 0
    shown = _screen_lines(b"".join(chunks).decode("utf-8", "replace"))
    from longpuzzle.engine.catalog import builtin_catalog
    rows = [l for l in shown if "solvable" in l and "certified" not in l]
    assert len(rows) == len(builtin_catalog().level_ids("maze_paint")), shown
    assert all(l.startswith(("ok ", "maze_paint/")) for l in rows), rows
