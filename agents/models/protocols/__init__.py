"""Agent protocols: how an episode becomes a conversation, and replies become GUI actions.

    general_e2e   general_e2e.py the original repository's built-in agent (Thought/Action JSON)
    native        native.py      the paper's Native GUI Actions setting (function calling)
    qwen          gui_models.py  Qwen-VL text function calls on a 0..1000 grid
    uitars        gui_models.py  UI-TARS Thought/Action on the smart_resize'd image
    base.py       the Protocol interface, Decision, ParseError, prompts' shared pieces
    zh_prompts.py the native protocol's prompts in Chinese (the paper's; Context.prompt_lang "zh")
"""

from longpuzzle.agents.models.protocols.base import (
    COMPLETION_PREFIX, Context, Decision, ParseError, Protocol, game_instruction,
)
from longpuzzle.agents.models.protocols.general_e2e import BuiltinProtocol
from longpuzzle.agents.models.protocols.gui_models import QwenProtocol, UITarsProtocol
from longpuzzle.agents.models.protocols.native import NativeProtocol
from longpuzzle.agents.registry import AGENTS, MODEL

# each model agent of the table of agent names, by the protocol class it names
PROTOCOLS: dict[str, type[Protocol]] = {a.name: a.load() for a in AGENTS if a.kind == MODEL}

__all__ = ["COMPLETION_PREFIX", "Context", "Decision", "PROTOCOLS", "ParseError", "Protocol", "BuiltinProtocol",
           "NativeProtocol", "QwenProtocol", "UITarsProtocol", "game_instruction"]
