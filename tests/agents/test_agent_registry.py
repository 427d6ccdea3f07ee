"""The one table of agent names (agents/registry.py): every name is built the way its kind says,
and every consumer (eval, dataset, the protocols, the tool ladder) reads the same names."""

import pytest
from click.testing import CliRunner

from longpuzzle.agents import registry
from longpuzzle.agents.api import BaseAgent
from longpuzzle.agents.models.protocols import PROTOCOLS, Protocol
from longpuzzle.agents.registry import AGENTS, MODEL, SCRIPTED, TOOL, load_agent
from longpuzzle.agents.vista.model import CONFIGS
from longpuzzle.engine.errors import LongPuzzleError


def test_names_are_unique_and_of_a_known_kind():
    assert len({a.name for a in AGENTS}) == len(AGENTS)
    assert {a.kind for a in AGENTS} == {SCRIPTED, MODEL, TOOL}
    assert registry.names(MODEL) + registry.names(TOOL) == registry.MODEL_AGENTS


@pytest.mark.parametrize("name", registry.names(SCRIPTED))
def test_a_scripted_name_makes_its_agent(name):
    agent = load_agent(name, seed=1, style="2d", unknown_option=3)    # options an agent does not take are dropped
    assert isinstance(agent, BaseAgent) and type(agent) is registry.BY_NAME[name].load()
    assert agent.name == name


def test_every_model_name_is_a_protocol_and_every_tool_name_a_rung():
    assert list(PROTOCOLS) == list(registry.names(MODEL))
    assert all(issubclass(cls, Protocol) for cls in PROTOCOLS.values())
    assert list(CONFIGS) == list(registry.TOOL_AGENTS)
    assert {n: c.setting for n, c in CONFIGS.items()} == {a.name: a.setting for a in AGENTS if a.kind == TOOL}
    assert [n for n in registry.names() if registry.runs_model_code(n)] == ["code-cua"]


def test_model_names_are_not_loaded_as_scripted_agents():
    with pytest.raises(LongPuzzleError, match="unknown agent 'native': use one of random, random_anywhere"):
        load_agent("native")


def test_the_commands_list_every_name():
    from longpuzzle.cli import cli
    text = " ".join(CliRunner().invoke(cli, ["eval", "--help"], terminal_width=1000).output.split())
    for a in AGENTS:
        assert f"{a.name} (" in text, a.name
    text = " ".join(CliRunner().invoke(cli, ["dataset", "--help"], terminal_width=1000).output.split())
    assert ", ".join(registry.SCRIPTED_AGENTS) + " or an agent FILE.py" in text
