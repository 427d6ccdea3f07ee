"""The agents by name: the one table of what ``eval --agent NAME`` (and ``dataset``, the runner,
verify, the reports) can run, what each is and how it is built.

    scripted   an agent of agents/scripted.py, made in this process (trusted): it acts from
               a script or a model of the app, no model endpoint
    model      a multimodal model over an endpoint (OpenAI or Anthropic wires) playing through
               an agent protocol of agents/models/protocols/: models.agent.ModelAgent
    tool       a model on the VISTA or Code Execution tools (agents/vista/model.py CONFIGS):
               vista.model.ToolModelAgent, through the objective protocol only

Anything else is an agent file: a path to a .py file with one BaseAgent subclass, run in a
sandbox of its own (agents/harness/isolated.py) unless trusted. ``load_agent`` makes a
scripted agent or an agent file; model and tool agents need a model (runner.make_agent).

This module imports nothing of the agents themselves: each entry names the class it is
built from (``module:attribute``), imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path

from longpuzzle.agents.api import BaseAgent
from longpuzzle.engine.errors import LongPuzzleError

SCRIPTED, MODEL, TOOL = "scripted", "model", "tool"


@dataclass(frozen=True)
class AgentName:
    name: str
    kind: str                    # SCRIPTED, MODEL or TOOL
    what: str                    # one line for the commands' help
    builds: str = ""             # "module:attribute": the agent class (scripted) or protocol class (model)
    setting: str = ""            # tool agents: the action setting their tools come from (vista | code)

    def load(self):
        """The class this name is built from (imported now)."""
        module, attr = self.builds.split(":")
        return getattr(importlib.import_module(module), attr)


_S, _P = "longpuzzle.agents.scripted:", "longpuzzle.agents.models.protocols."
AGENTS: tuple[AgentName, ...] = (
    AgentName("random", SCRIPTED, "random gestures on the requested objective's board", _S + "RandomAgent"),
    AgentName("random_anywhere", SCRIPTED, "random actions anywhere", _S + "RandomAnywhereAgent"),
    AgentName("solver", SCRIPTED, "plans with the solvers, acts through the GUI", _S + "SolverAgent"),
    AgentName("greedy", SCRIPTED, "the move of most immediate progress", _S + "GreedyAgent"),
    AgentName("paper_filler", SCRIPTED, "like the paper's agents: fills the last free hole, blames the click "
              "unless told", "longpuzzle.agents.paper_agents:PaperFillerAgent"),
    AgentName("paper_rebuilder", SCRIPTED, "like the paper's agents: restarts when told, then rebuilds the same "
              "dead end", "longpuzzle.agents.paper_agents:PaperRebuilderAgent"),
    AgentName("rulebook", SCRIPTED, "diagnose rules: greedy when told the rule card, half its gestures guessed "
              "without it", "longpuzzle.agents.diagnose.rules_agent:RulebookAgent"),
    AgentName("general_e2e", MODEL, "the original repository's agent", _P + "general_e2e:BuiltinProtocol"),
    AgentName("native", MODEL, "the paper's native GUI actions", _P + "native:NativeProtocol"),
    AgentName("qwen", MODEL, "Qwen-VL function calls", _P + "gui_models:QwenProtocol"),
    AgentName("uitars", MODEL, "UI-TARS Thought/Action", _P + "gui_models:UITarsProtocol"),
    AgentName("vista-images", TOOL, "VISTA ladder: images only", setting="vista"),
    AgentName("vista-conversation", TOOL, "+ the conversation", setting="vista"),
    AgentName("vista-notes", TOOL, "+ notes", setting="vista"),
    AgentName("vista-memory", TOOL, "+ memory and inspection", setting="vista"),
    AgentName("vista-full", TOOL, "the full VISTA harness", setting="vista"),
    AgentName("code-cua", TOOL, "the paper's Code Execution CUA (runs the model's Python)", setting="code"),
)
BY_NAME = {a.name: a for a in AGENTS}


def names(*kinds: str) -> tuple[str, ...]:
    """The names of these kinds (all names without any), in the table's order."""
    return tuple(a.name for a in AGENTS if not kinds or a.kind in kinds)


SCRIPTED_AGENTS = names(SCRIPTED)
TOOL_AGENTS = names(TOOL)
MODEL_AGENTS = names(MODEL, TOOL)     # everything that needs a model (--model)


def runs_model_code(name: str) -> bool:
    """Does this agent run code its model writes (run_python: the code setting)?"""
    a = BY_NAME.get(name)
    return a is not None and a.setting == "code"


def load_agent(spec: str, *, limits=None, pass_env=(), trusted: bool = False, **kwargs):
    """A scripted agent by name (an object, run in-process and trusted), or an agent file: a
    .py file with one BaseAgent subclass, returned as an isolated.AgentFile handle. The file
    is NOT run here: the harness runs it in a sandboxed process of its own (``limits``:
    a longpuzzle.agents.sandbox.Limits; ``pass_env``: environment variables it may see). With
    ``trusted`` the file is imported into this process instead (it may use all of longpuzzle,
    e.g. a scripted agent with a model of the app; the results record it as trusted).
    ``kwargs`` go to the agent class's ``__init__`` where it takes them (``catalog``: the
    catalogue the episode plays, to the scripted agents and trusted files, never into a
    sandbox)."""
    if spec in SCRIPTED_AGENTS:
        cls = BY_NAME[spec].load()
        params = inspect.signature(cls.__init__).parameters
        return cls(**{k: v for k, v in kwargs.items() if k in params})
    path = Path(spec)
    if path.suffix == ".py" and not path.is_file():        # meant as a file: say what is wrong with it
        raise LongPuzzleError(f"agent file {spec}: {'is a folder' if path.is_dir() else 'no such file'}")
    if not (path.suffix == ".py" and path.is_file()):
        raise LongPuzzleError(f"unknown agent {spec!r}: use one of {', '.join(SCRIPTED_AGENTS)} or a path to a .py file")
    if trusted:
        return _import_agent_file(path, kwargs)
    kwargs.pop("catalog", None)
    from longpuzzle.agents.harness.isolated import AgentFile   # lazy: the sandbox's modules, for agent files only

    return AgentFile(path, kwargs=kwargs, limits=limits, pass_env=pass_env)


def _import_agent_file(path: Path, kwargs: dict):
    """The agent of a TRUSTED file, imported and made in this process."""
    modspec = importlib.util.spec_from_file_location(f"user_agent_{abs(hash(str(path.resolve())))}", path)
    mod = importlib.util.module_from_spec(modspec)
    try:
        modspec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - a broken user file is a user mistake
        raise LongPuzzleError(f"cannot load agent file {path}: {type(e).__name__}: {e}") from None
    found = [v for v in vars(mod).values()
             if inspect.isclass(v) and issubclass(v, BaseAgent) and v is not BaseAgent and v.__module__ == mod.__name__]
    if len(found) != 1:
        raise LongPuzzleError(f"{path} must define exactly one BaseAgent subclass (found {len(found)})")
    cls = found[0]
    params = inspect.signature(cls.__init__).parameters
    try:
        return cls(**{k: v for k, v in kwargs.items() if k in params})
    except Exception as e:  # noqa: BLE001 - the file's own __init__ failed: one line, nothing run
        raise LongPuzzleError(f"agent file {path}: {cls.__name__}() raised {type(e).__name__}: {e}") from None
