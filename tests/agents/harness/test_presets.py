"""Evaluation presets (agents/harness/presets.py): the paper's conditions by default for model
evaluations (1280 x 900 page, Chinese screens and prompts, charged model time), fast and repo
beside it, every result recording its preset, and report / leaderboard keeping presets apart.
Model runs go through the scripted model on a real HTTP server on 127.0.0.1."""

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from longpuzzle.agents.media.images import decode_png
from longpuzzle.agents.testing.endpoints import ReplayScript, ScriptedServer, gesture_script, solver_gestures
from longpuzzle.cli import cli

PAGE = (1280, 900)


def _eval(tmp_path, name, *args):
    r = CliRunner().invoke(cli, ["eval", "--objective", "nut_and_bolt/easy", "--out", str(tmp_path / name), *args])
    assert r.exit_code == 0, r.output
    return tmp_path / name, json.loads((tmp_path / name / "run.json").read_text())["run"]


def test_a_model_evaluation_runs_under_the_paper_preset_by_default(tmp_path):
    """--model without --preset: the objective protocol on the 1280 x 900 page with Chinese
    screens, the native protocol's Chinese prompts naming the on-screen labels, model time
    charged; the scripted model (solver gestures in page px) completes the objective, and the
    preset is in run.json, the summary and every result."""
    script = ReplayScript(gesture_script("native", solver_gestures("nut_and_bolt/easy", PAGE), PAGE))
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 2
        models = tmp_path / "models.toml"
        models.write_text(f'[models.scripted]\napi = "openai-chat"\nbase_url = "{srv.url_v1}"\n'
                          f'api_key_env = ""\nagent = "native"\n')
        out, run = _eval(tmp_path, "run", "--model", "scripted", "--models-file", str(models))
        bodies = srv.bodies
    st = run["settings"]
    assert (run["protocol"], st["preset"], st["viewport"], st["lang"], st["budget"], st["charge_agent_time"],
            st["invalid_action_policy"]) == ("objective", "paper", list(PAGE), "zh", 3600.0, True, "dispatch_failed")
    assert run["agent_options"]["prompt_lang"] == "zh" and run["agent_options"].get("prompt_setting") is None
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["OSR"] == 100.0 and summary["settings"]["preset"] == "paper"
    res = json.loads(next(out.rglob("result.json")).read_text())
    assert res["rules"]["preset"] == "paper" and res["rules"]["lang"] == "zh"
    msgs = bodies[0]["body"]["messages"]
    system = msgs[0]["content"] if isinstance(msgs[0]["content"], str) else msgs[0]["content"][0]["text"]
    assert "允许使用的信息" in system and "BENCHMARK COMPLETED" in system and "0 <= x < 1280" in system
    task = json.dumps(msgs[1:], ensure_ascii=False)
    assert "「螺帽与螺栓」" in task and "简单" in task and "Complete all levels" not in task
    imgs = [p for p in json.dumps(bodies[-1]["body"]).split('"') if p.startswith("data:image/png;base64,")]
    import base64
    frame = decode_png(base64.b64decode(imgs[-1].split(",", 1)[1]))
    assert frame.shape == (PAGE[1], PAGE[0], 3)
    assert (frame[:, :100] == 0).all()                   # the page's bars beside the game


def test_fast_repo_and_given_options_are_recorded(tmp_path):
    _, run = _eval(tmp_path, "solver", "--max-actions", "5")             # not a model: fast by default
    st = run["settings"]
    assert (st["preset"], st["viewport"], st["lang"], run["protocol"]) == ("fast", None, "en", "objective")
    _, run = _eval(tmp_path, "paper", "--preset", "paper", "--max-actions", "5", "--viewport", "1280x900")
    assert run["settings"]["preset"] == "paper"                         # the preset's own value: unchanged
    _, run = _eval(tmp_path, "changed", "--preset", "paper", "--max-actions", "5", "--lang", "en", "--budget", "60")
    st = run["settings"]
    assert st["preset"] == "paper (changed: budget, lang)"
    assert (st["viewport"], st["lang"], st["budget"]) == (list(PAGE), "en", 60.0)
    _, run = _eval(tmp_path, "repo", "--preset", "repo", "--max-actions", "3")
    st = run["settings"]
    assert (run["protocol"], st["scale"], st["lang"], st["charge_agent_time"], st["invalid_action_policy"],
            st["preset"]) == ("level", 2.0, "zh", False, "dispatch_failed", "repo")
    res = json.loads(next((tmp_path / "repo").rglob("result.json")).read_text())
    assert res["rules"]["preset"] == "repo"


def test_report_refuses_and_leaderboard_separates_runs_of_different_presets(tmp_path):
    a, _ = _eval(tmp_path, "fast", "--max-actions", "5")
    b, _ = _eval(tmp_path, "paper", "--preset", "paper", "--max-actions", "5")
    c, _ = _eval(tmp_path, "fast2", "--max-actions", "5")
    r = CliRunner().invoke(cli, ["report", str(a), str(b), "--out", str(tmp_path / "rep"), "--no-videos"])
    assert r.exit_code != 0 and "different presets (fast, paper)" in r.output
    r = CliRunner().invoke(cli, ["report", str(a), str(b), "--out", str(tmp_path / "rep"), "--no-videos",
                                 "--mixed-presets"])
    assert r.exit_code == 0, r.output
    assert "made under different presets (fast, paper)" in (tmp_path / "rep" / "report.html").read_text()
    r = CliRunner().invoke(cli, ["leaderboard", str(a), str(b), str(c), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    by = {row["preset"]: row for row in rows}
    assert set(by) == {"fast", "paper"} and len(rows) == 2             # the two fast runs pooled, paper apart
    assert len(by["fast"]["runs"]) == 2 and len(by["paper"]["runs"]) == 1
    assert "preset paper" in by["paper"]["harness_label"]


def test_the_paper_preset_screenshot_is_the_chinese_page(tmp_path):
    from PIL import Image
    r = CliRunner().invoke(cli, ["screenshot", "home", "--preset", "paper", "--out", str(tmp_path / "p.png")])
    assert r.exit_code == 0, r.output
    img = np.asarray(Image.open(tmp_path / "p.png").convert("RGB"))
    assert img.shape == (900, 1280, 3)
    r = CliRunner().invoke(cli, ["screenshot", "home", "--lang", "zh", "--viewport", "1280x900",
                                 "--out", str(tmp_path / "q.png")])
    assert r.exit_code == 0, r.output
    assert np.array_equal(img, np.asarray(Image.open(tmp_path / "q.png").convert("RGB")))
    assert Path(tmp_path / "p.png").stat().st_size > 10_000


def test_the_code_setting_prompts_are_chinese_under_the_paper_preset(tmp_path):
    """code-cua (the paper's Code Execution CUA) on the tools: its player prompt and task message
    follow the screens' language; the scripted model completes the objective on the page."""
    script = ReplayScript(gesture_script("code-cua", solver_gestures("nut_and_bolt/easy", PAGE), PAGE))
    with ScriptedServer(script) as srv:
        srv.keep_bodies = 1
        out, run = _eval(tmp_path, "code", "--agent", "code-cua", "--model", "scripted", "--api", "openai-chat",
                         "--base-url", srv.url_v1, "--api-key-env", "")
        body = srv.bodies[0]["body"]
    assert run["settings"]["preset"] == "paper" and run["settings"]["lang"] == "zh"
    assert json.loads((out / "summary.json").read_text())["metrics"]["OSR"] == 100.0
    text = json.dumps(body["messages"], ensure_ascii=False)
    assert "允许使用的信息" in text and "`run_python` 在你自己的持久进程里运行 Python 代码" in text
    assert "「螺帽与螺栓」" in text and "设置：代码执行 CUA" in text and "You are playing" not in text
