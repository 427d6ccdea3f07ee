"""The shared agent options (agents/agent_options.py, contract 4): one decorator and one builder
that eval and every diagnose command use, so any agent eval accepts runs everywhere."""

import click
import pytest
from click.testing import CliRunner

from longpuzzle.agents.agent_options import AgentOptions, agent_options, build_agent
from longpuzzle.agents.cli import eval_cmd
from longpuzzle.agents.harness import Settings


@click.command()
@agent_options(default_agent="greedy")
@click.option("--out", default="x")
def _cmd(agent_opts, out):
    choice = build_agent(agent_opts, Settings(budget=10.0), default="greedy")
    click.echo(f"{choice.agent} {choice.label} {sorted(choice.agent_options or {})} {out}")


def test_a_command_gets_one_value_with_every_agent_option():
    seen = {}

    @click.command()
    @agent_options()
    def cmd(agent_opts):
        seen["o"] = agent_opts

    r = CliRunner().invoke(cmd, ["--agent", "native", "--model", "m", "--temperature", "0.5", "--agent-env", "A",
                                 "--agent-env", "B", "--history-images", "2", "--no-stream"])
    assert r.exit_code == 0, r.output
    o = seen["o"]
    assert isinstance(o, AgentOptions)
    assert (o.agent, o.model, o.temperature, o.agent_env, o.history_images, o.stream) == \
        ("native", "m", 0.5, ("A", "B"), 2, False)
    assert o.wants_model


def test_the_builder_makes_scripted_agents_and_refuses_unknown_ones(tmp_path):
    r = CliRunner().invoke(_cmd, [])
    assert r.exit_code == 0 and r.output.startswith("greedy greedy"), r.output
    r = CliRunner().invoke(_cmd, ["--agent", "no_such_agent"])
    assert r.exit_code != 0 and "unknown agent 'no_such_agent'" in str(r.exception or r.output)
    choice = build_agent(AgentOptions(agent="greedy"), Settings())
    a, b = choice.make("maze_paint/easy", tmp_path / "a"), choice.make("maze_paint/easy", tmp_path / "b")
    assert type(a).__name__ == "GreedyAgent" and a is not b           # a fresh agent per continuation


def test_a_model_agent_is_resolved_with_its_options_and_no_key_is_recorded(monkeypatch):
    monkeypatch.setenv("LP_TEST_KEY", "sk-secret-never-stored")
    r = CliRunner().invoke(_cmd, ["--model", "some-model", "--base-url", "http://127.0.0.1:9/v1",
                                  "--api-key-env", "LP_TEST_KEY", "--history-images", "3"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("native native:some-model ['history_images', 'language', 'prompt_lang']")
    choice = build_agent(AgentOptions(model="some-model", base_url="http://127.0.0.1:9/v1", api_key_env="LP_TEST_KEY"))
    assert "sk-secret" not in repr(choice.public())
    with pytest.raises(click.UsageError, match="needs --model"):
        build_agent(AgentOptions(agent="native"))


def test_eval_takes_the_shared_options():
    params = {p.name for p in eval_cmd.params}
    for name in ("agent_spec", "model_name", "base_url", "trusted_agent", "agent_network", "text_reply", "language"):
        assert name in params


def test_eval_gives_a_scripted_agent_its_episode_folder(tmp_path):
    # the paper-like agents leave their text in the folder they are given: through eval too,
    # so a run made by eval is coded by the diagnostics as one made by diagnose
    from longpuzzle.agents.diagnose.texts import step_texts
    from longpuzzle.agents.paper_agents import MOVE

    r = CliRunner().invoke(eval_cmd, ["--agent", "paper_filler", "--objective", "bolt_unscrew/easy",
                                      "--max-actions", "6", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    texts = step_texts(tmp_path / "run" / "bolt_unscrew_easy" / "episode_001")
    assert texts and MOVE in texts.values()
