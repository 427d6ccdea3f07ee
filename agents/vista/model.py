"""Built-in model agents on the tools: a model endpoint (agents.models: the clients, the
config, the accounting) calls the Controller's tools through native function calling.

The VISTA ablation ladder (PAPERS.md section 2) as named configurations (``CONFIGS``), each
rung adding to the one before:

    vista-images         images only: every request is the task and the latest screenshot
                         (with the last action and its feedback); tools play, final_answer
    vista-conversation   + the continuous conversation (every turn kept, compacted into a
                         model-written summary when the context fills: ModelConfig.context_tokens)
    vista-notes          + the notes: read_guide / write_guide, read_working / write_working,
                         save_compact_checkpoint (asked for before each compaction, the
                         controller pausing the other tools until it is saved; the notes are
                         shown again after it)
    vista-memory         + lossless memory and inspection: history, inspect (every frame,
                         intermediate ones included, kept and indexed by turn)
    vista-full           + read_pixels (and screenshot): the full harness, the ``vista`` setting
    code-cua             the paper's Code Execution CUA: play, screenshot, run_python, final_answer

A reply's tool calls are run in order through the controller; their results (text and
images) go back as tool messages. A reply without a tool call is the final response
(final_answer; scored, as in the paper); with ``text_reply="reprompt"`` only one that starts
with ``BENCHMARK COMPLETED`` is, and any other is invalid. A reply whose calls were all
refused for bad arguments is invalid: three invalid replies in a row end the episode as an
agent failure (scored), as the model agents' rule. A provider that keeps
failing ends it unscored (ProviderError is an InfrastructureError).

The conversation is logged as ``conversation.jsonl`` in the episode folder in the model
agents' format (agents/models/agent.py: header, message, call and end records; images as
references to stored frames or to the inspect view they were cut from), each call with the
``turn`` it was made at (records.tool_use attributes tokens to levels by it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from longpuzzle.agents.base import AgentError, InfrastructureError, InternalError
from longpuzzle.agents.harness import Settings
from longpuzzle.agents.models.conversation import MAX_INVALID, ModelConversation
from longpuzzle.agents.models.conversation_log import ConversationLog
from longpuzzle.agents.registry import BY_NAME
from longpuzzle.agents.vista.controller import Controller, ToolResult
from longpuzzle.agents.vista.prompt import player_prompt, task_text
from longpuzzle.agents.vista.tools import SETTINGS, TOOLS
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import difficulty_label

COMPLETION_PREFIX = "BENCHMARK COMPLETED"

_NOTES = ("read_guide", "write_guide", "read_working", "write_working", "save_compact_checkpoint")


@dataclass(frozen=True)
class Config:
    name: str
    setting: str                  # the action setting the tools come from (vista | code)
    tools: tuple[str, ...]
    conversation: bool            # continuous conversation with compaction (else: each request stands alone)


def _rung(name, tools, conversation=True):
    order = [t for t in TOOLS if t in set(tools)]
    return Config(name, BY_NAME[name].setting, tuple(order), conversation)


# the tools of each tool agent of the table of agent names (agents/registry.py; a test checks
# that every one has its rung)
CONFIGS: dict[str, Config] = {c.name: c for c in (
    _rung("vista-images", ("play", "final_answer"), conversation=False),
    _rung("vista-conversation", ("play", "final_answer")),
    _rung("vista-notes", ("play", "final_answer") + _NOTES),
    _rung("vista-memory", ("play", "final_answer", "history", "inspect") + _NOTES),
    _rung("vista-full", SETTINGS["vista"]),
    _rung("code-cua", SETTINGS["code"]),
)}


class ToolModelAgent(ModelConversation):
    """A model playing one episode through a Controller's tools (``drive``)."""

    def __init__(self, config: str, model, *, client=None, folder: str | Path | None = None,
                 history_images: int | None = None, max_invalid: int = MAX_INVALID, text_reply: str = "final"):
        if config not in CONFIGS:
            raise ValueError(f"unknown tool configuration {config!r}: use one of {', '.join(CONFIGS)}")
        self.config = CONFIGS[config]
        self.label = config
        self._start(model, client, folder, history_images, max_invalid, text_reply)

    # ---- the episode -------------------------------------------------------------------------
    def drive(self, c: Controller) -> None:
        """Play until the episode ends (or the agent gives up: AgentError)."""
        self.c = c
        self.tools = [t.spec() for t in c.tools]          # the controller's definitions (MCP serves the same)
        lang = c.ep.suite.lang          # the prompts in the screens' language (the paper's: Chinese)
        self.system = player_prompt(self.config.setting, self.config.tools, c.frame_size, c.batch, lang)
        obj = c.ep.obj
        self.task = task_text(c.instruction, get_puzzle(obj.game).title, difficulty_label(obj.difficulty),
                              self.config.setting, lang)
        self.history: list[dict] = []
        self.last: list[dict] = []          # stateless mode: the parts of the latest observation
        self.last_context = 0
        self.invalid_run = 0
        self._open_log()
        self._add({"role": "user", "parts": [{"text": self.task}]})
        try:
            while not c.done:
                if self.config.conversation:
                    self._maybe_compact()
                reply = self._call("step")
                self._handle(reply)
        finally:
            self.close_log()

    def _request(self) -> list[dict]:
        sys = {"role": "system", "text": self.system}
        if self.config.conversation:
            return [sys] + self.history
        parts = [{"text": self.task}] + (self.last or [{"text": "No action yet: the first action must be a wait."}])
        return [sys, {"role": "user", "parts": parts}]

    def _handle(self, reply) -> None:
        c = self.c
        if not reply.tool_calls:
            text = (reply.text or "").strip()
            self._add_assistant(reply)
            if self.text_reply == "final" or text.startswith(COMPLETION_PREFIX):
                c.call("final_answer", {"text": text})      # the final response (the paper's rule)
                return
            self._invalid("the reply has no tool call" + (f" and does not start with {COMPLETION_PREFIX}" if text else ""))
            self._add({"role": "user", "parts": [{"text": "That was not a tool call. Call one of the tools (e.g. play), "
                                                          f"or, if the screen shows the whole objective complete, reply "
                                                          f"with a message that starts with {COMPLETION_PREFIX}."}]})
            return
        self._add_assistant(reply)
        ok = False
        for call in reply.tool_calls:
            if c.done:
                self._add({"role": "tool", "call_id": call.id, "name": call.name,
                           "parts": [{"text": f"not run: the episode has ended ({c.ep.end})"}]})
                continue
            res = c.call(call.name, call.arguments if isinstance(call.arguments, dict) else {"_raw": call.arguments})
            ok = ok or not res.error
            self._add({"role": "tool", "call_id": call.id, "name": call.name, "parts": self._parts(res)})
            if call.name in ("play", "screenshot") and not res.error:
                self.last = [{"text": "Your last call: " + json.dumps({"tool": call.name, "arguments": call.arguments})
                              + "\nResult: " + res.text}] + [p for p in self._parts(res) if "image" in p]
        if ok:
            self.invalid_run = 0
        elif not c.done:
            self._invalid("every tool call of the reply was refused")

    def _invalid(self, why: str) -> None:
        self.invalid_run += 1
        self.usage.parse_failures += 1
        self._event({"type": "parse_failure", "error": why, "run": self.invalid_run})
        if self.invalid_run >= self.max_invalid:
            raise AgentError("invalid_action_limit", f"{self.max_invalid} invalid replies in a row: {why}")

    @staticmethod
    def _parts(res: ToolResult) -> list[dict]:
        return [{"text": res.text}] + [{"image": i.png, "ref": i.ref} for i in res.images]

    # ---- conversation ------------------------------------------------------------------------------
    def _add(self, msg: dict) -> None:
        if self.config.conversation:
            self.history.append(msg)
            if any("image" in p for p in msg.get("parts", ())):
                self._cap_images()
        self._log_message(msg)

    def _call_fields(self) -> dict:
        return {"turn": self.c.turn}        # the controller's turn: records.tool_use attributes tokens by it

    def _maybe_compact(self) -> None:
        limit = self.cfg.context_tokens
        if not limit or self.last_context + (self.cfg.max_output_tokens or 0) < limit:
            return
        c = self.c
        notes = "save_compact_checkpoint" in self.config.tools
        if notes and c.request_checkpoint():       # VISTA: the controller pauses the tools until a checkpoint
            self._add({"role": "user", "parts": [{"text": "Your context is about to be compacted. Call "
                                                          "save_compact_checkpoint now with the full text of "
                                                          "WORKING.md (working_memory) and of GUIDE.md (guide; null "
                                                          "keeps it as it is)."}]})
            reply = self._call("checkpoint", self._request())
            self._add_assistant(reply)
            for call in reply.tool_calls:
                res = c.call(call.name, call.arguments if isinstance(call.arguments, dict) else {}) if not c.done \
                    else ToolResult(f"not run: the episode has ended ({c.ep.end})", error=True)
                self._add({"role": "tool", "call_id": call.id, "name": call.name, "parts": self._parts(res)})
        req = self._request() + [{"role": "user", "parts": [{"text": (
            "The conversation is about to be shortened. Write a summary that lets you continue the task without the "
            "earlier turns: where you are in the interface (game, difficulty, level), what you have done and learned "
            "about the controls, what worked and what did not, and your plan. Reply with the summary text only; do "
            "not act now.")}]}]
        reply = self._call("compaction", req, tools=None)
        summary = (reply.text or "").strip() or "(the model wrote no summary)"
        replaced = len(self.history)
        self.history = []
        self.usage.compactions += 1
        self._event({"type": "compaction", "replaced_messages": replaced, "summary": summary,
                     "context_tokens": self.last_context})
        parts = [{"text": self.task}, {"text": "Summary of the episode so far (earlier turns were replaced by it):\n"
                                               + summary}]
        if notes:
            parts.append({"text": "GUIDE.md:\n" + c.notes.read("GUIDE.md") + "\n\nWORKING.md:\n"
                          + c.notes.read("WORKING.md")})
        self._add({"role": "user", "parts": parts})
        if self.last:
            self._add({"role": "user", "parts": [dict(p) for p in self.last]})
        self.last_context = 0

    # ---- the log -------------------------------------------------------------------------------------
    def _open_log(self) -> None:
        if self.folder is None:
            return
        self._log = ConversationLog(self.folder, {
            "protocol": self.config.name, "model": self.cfg.public(), "setting": self.config.setting,
            "tools_offered": list(self.config.tools), "conversation": self.config.conversation,
            "history_images": self.history_images, "frame": list(self.c.frame_size), "system": self.system,
            "tools": self.tools}, flush_each=True)


def run_tool_agent(agent: ToolModelAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                   folder: str | Path | None = None, on_action=None, header: dict | None = None, catalog=None):
    """One objective episode of a tool-using model agent under the objective protocol;
    returns the EpisodeResult (result.json also records the model's usage). ``header``:
    fields the episode's header adds (the runner's planned identity)."""
    c = Controller(game, difficulty, setting=agent.config.setting, tools=agent.config.tools, settings=settings,
                   folder=folder, agent_name=agent.name, on_action=on_action, catalog=catalog,
                   header={"model": agent.cfg.name or agent.cfg.model, "tool_config": agent.config.name,
                           **(header or {})})
    end, err = "agent_stop", "the agent stopped without a final answer"
    try:
        agent.drive(c)
    except AgentError as e:
        end, err = "agent_error", str(e)
    except InfrastructureError as e:
        end, err = "infrastructure_error", f"{type(e).__name__}: {e}"
    except InternalError:
        raise                     # our own bug: the run stops, the episode stays unfinished
    except Exception as e:  # noqa: BLE001 - the agent's own failure ends its episode
        end, err = "agent_error", f"agent raised: {type(e).__name__}: {e}"
    finally:
        agent.close()
    res = c.close(end, err)
    return res
