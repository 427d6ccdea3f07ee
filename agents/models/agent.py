"""ModelAgent: a multimodal model behind an agent protocol, as a BaseAgent.

Per step: the observation (the screenshot as a lossless PNG, and for function calling the
results of the last calls) is appended to the conversation, the model is called, and its
reply is parsed into GUI actions in frame pixels. Replies that cannot be parsed are counted
as parse failures and answered with the protocol's corrective message; three invalid
replies or refused actions in a row end the episode (an agent failure, AgentError
"invalid_action_limit": scored), as the original repository's invalid-action limit does. Protocols with
the claim rule answer the first completion claim with a continuation prompt and end the
episode on the second. A provider that keeps failing raises ProviderError (an
InfrastructureError: the episode is unscored and rerun).

Context: the full history is kept, with ``history_images`` capping how many of the latest
screenshots are re-sent (older ones become a text placeholder and their bytes are dropped).
``memory="d1"`` is the diagnostics' harness instead (agents/models/d1.py, PAPERS.md D.1): the
takeover context, then at most 12 recent action turns and 4 screenshots per request, with a
model-written summary every 8 turns (the conversation log keeps every message all the same).
When the last request plus the reply budget reaches ``context_tokens``, the model writes a
summary that replaces the earlier turns (compaction); the conversation log records it.

The conversation is saved as ``conversation.jsonl`` in the episode folder: a header (the
protocol, the model settings without any key, the system prompt and tools), every message
as it was added (images as references to the episode's stored frames: ``{"frame": N}`` is
frame N of the folder's frame store, ``open_frames(folder).read(N)``; never copies), every call
(usage, latency, retries, cost, the reply) and every parse failure, claim and compaction, then an end record with the totals.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from longpuzzle.agents.base import AgentError, BaseAgent, FinalAnswer, Observation, first_action
from longpuzzle.agents.models import d1
from longpuzzle.agents.models.clients import ModelClient, ProviderError, Reply, context_overflow, unsupported_settings
from longpuzzle.agents.models.config import ModelConfig
from longpuzzle.agents.models.conversation import MAX_INVALID, ModelConversation
from longpuzzle.agents.models.conversation_log import ConversationLog
from longpuzzle.agents.models.protocols import PROTOCOLS, Context, ParseError
from longpuzzle.engine.registry import puzzles

_UNSET = object()
# what a rule probe's copy of the context says of the calls still waiting for their results
PROBE_PENDING = "not run yet: answer the question below first (it does not change the game)"
MEMORIES = ("full", "d1")          # what a request holds: the whole history, or the D.1 window
_INSTR = re.compile(r"Complete all levels of (?P<title>.+?) at (?P<diff>\w+) difficulty")


def InvalidReplyLimit(detail: str) -> AgentError:
    """Too many invalid replies in a row: the episode ends as an agent failure (scored)."""
    return AgentError("invalid_action_limit", detail)


class ModelAgent(ModelConversation, BaseAgent):
    """A model endpoint (``config``) playing through an agent protocol (``protocol``)."""

    def __init__(self, protocol: str, config: ModelConfig, *, client: ModelClient | None = None,
                 game: str | None = None, difficulty: str | None = None, folder: str | Path | None = None,
                 prompt_setting=_UNSET, language: str = "zh", history_images=_UNSET, resize: str | None = None,
                 scale_factor=_UNSET, level_protocol: bool = False, max_invalid: int = MAX_INVALID,
                 prompt_lang: str = "en", text_reply: str = "final", memory: str = "full"):
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown agent protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")
        self.protocol_cls = PROTOCOLS[protocol]
        self.protocol_name = self.label = protocol
        d = self.protocol_cls.defaults
        cfg = config.with_(**{k: v for k, v in d.items() if getattr(config, k) is None})
        # a protocol default that the wire's SDK takes no parameter for is not sent (e.g.
        # general_e2e's temperature 0 on the Anthropic Messages API); the model's own
        # settings were checked before the run (cli: unsupported_settings)
        cfg = replace(cfg, **{k: None for k in unsupported_settings(cfg) if getattr(config, k) is None})
        self._start(cfg, client, folder, self.protocol_cls.default_history_images
                    if history_images is _UNSET else history_images, max_invalid, text_reply)
        self.game, self.difficulty = game, difficulty
        default_setting = "full" if protocol == "general_e2e" else None
        self.prompt_setting = default_setting if prompt_setting is _UNSET else prompt_setting
        self.language = language
        self.prompt_lang = prompt_lang      # the protocol's own prompts: "en", or "zh" where it has them
        self.resize = resize
        self.scale_factor = scale_factor
        self.level_protocol = level_protocol
        self.resets = 0
        if memory not in MEMORIES:
            raise ValueError(f"memory {memory!r}: use {' or '.join(MEMORIES)}")
        self.memory = memory
        if memory == "d1":
            self.history_images = d1.IMAGES      # (recorded in the log; the window applies it)

    # ---- episode set-up
    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.close_log()
        self.resets += 1
        game, diff = self.game, self.difficulty
        if game is None:
            m = _INSTR.search(instruction)
            if m:
                titles = {p.title: p.id for p in puzzles()}
                game, diff = titles.get(m.group("title")), m.group("diff")
        ctx = Context(instruction, game, diff, tuple(action_spec["frame"]), self.prompt_setting, self.language,
                      self.level_protocol, self.prompt_lang)
        kw = {"resize": self.resize}
        if self.scale_factor is not _UNSET:
            kw["scale_factor"] = self.scale_factor
        self.proto = self.protocol_cls(ctx, **kw)
        self.proto.text_reply = self.text_reply
        self.system = self.proto.system_prompt()
        self.tools = self.proto.tools()
        self.history: list[dict] = []
        self.frame_idx = 0
        self.pending_calls: list[str] = []
        self.invalid_run = 0
        self.claims = 0
        self.started = False
        self.last_context = 0
        self.calls = 0
        self.summary: str | None = None         # the latest D.1 summary
        self.turns_since_summary = 0
        self.takeover = None                     # (api.Takeover once given: take_over)
        self.takeover_parts: list[dict] = []     # the takeover message's parts, until it is added
        self._open_log(ctx)
        if not self.proto.screenshot_first:
            self._add({"role": "user", "parts": [{"text": self.proto.task_text()}]})

    def take_over(self, takeover) -> None:
        """The takeover context (api.Takeover). Under memory "d1" it is shown to the model: in
        a message of its own before the first reply (function calling: with the current
        screenshot), or with the first screenshot's message (the first observation is the
        current screenshot). Under the full memory it is kept and not shown (as before)."""
        super().take_over(takeover)
        if self.memory != "d1" or getattr(self, "proto", None) is None:
            return
        png = self.proto.view.png
        if self.proto.tool_mode or self.started:
            self._add({"role": "user", "parts": d1.takeover_parts(takeover, png, with_current=True)})
        else:
            self.takeover_parts = d1.takeover_parts(takeover, png, with_current=False)

    def note(self, text: str) -> None:
        super().note(text)
        if getattr(self, "proto", None) is not None:
            self._add({"role": "user", "parts": [{"text": text}]})

    def probe(self, probe) -> str:
        """A rule probe (api.Probe) answered in a request of its own on a COPY of the context:
        the request is the acting one so far plus the question (calls still waiting for their
        results are answered as not run yet, as the wire requires), and neither the question
        nor the reply enters the history; the call is logged with the kind ``probe``."""
        if getattr(self, "proto", None) is None:
            return ""
        req = self._request()
        if self.proto.tool_mode:
            req += [{"role": "tool", "call_id": cid, "name": "gui", "parts": [{"text": PROBE_PENDING}]}
                    for cid in self.pending_calls]
        req.append({"role": "user", "parts": [{"text": probe.text}]})
        try:
            return self._call("probe", req).text or ""
        finally:
            self._flush()

    # ---- one step
    def act(self, obs: Observation):
        try:
            return self._act(obs)
        finally:
            self._flush()

    def _act(self, obs: Observation):
        if obs.frame is None and not self.proto.tool_mode:
            # the objective protocol's opening wait (it returns the first screenshot and starts
            # the clock): the harness's part of these protocols, no model call
            self._event({"type": "opening_wait"})
            return first_action(obs)
        fb = obs.feedback
        if fb is not None:
            self.frame_idx += fb.frames
            if fb.executed:
                self.invalid_run = 0
            else:
                self.invalid_run += 1
                if self.invalid_run >= self.max_invalid:
                    self._end_invalid("the dispatcher refused the last actions")
        self._add_observation(obs)
        again = 0
        while True:
            self._maybe_compact()
            if self.memory == "d1" and self.turns_since_summary >= d1.SUMMARY_EVERY:
                self._summarise()
            reply = self._model_call("step" if again == 0 else "follow-up")
            try:
                d = self.proto.parse(reply)
            except ParseError as e:
                self._parse_failure(reply, e)
                again += 1
                continue
            if obs.frame is None and d.final is None and not (d.actions and d.actions[0]["type"] == "wait"):
                self._parse_failure(reply, ParseError("the first call must be wait: it returns the first "
                                                      "screenshot and starts the clock"))
                again += 1
                continue
            self._add_assistant(reply)
            if d.final is not None:
                self.claims += 1
                self.usage.claims += 1
                self._event({"type": "claim", "text": d.final, "n": self.claims})
                if self.proto.claim_rule and self.claims == 1:
                    self._add({"role": "user", "parts": [{"text": self.proto.continuation()}]})
                    again += 1
                    continue
                return FinalAnswer(d.final)
            self.pending_calls = list(d.call_ids)
            if len(d.actions) == 1:
                return d.actions[0]
            return {"type": "batch", "actions": d.actions}

    # ---- conversation
    def _image_part(self, obs: Observation) -> dict:
        png = self.proto.view.png(obs.frame)
        ref = {"frame": self.frame_idx, "step": obs.step}
        if not self.proto.view.identity:
            ref["size"] = list(self.proto.view.size)
        return {"image": png, "ref": ref}

    def _add_observation(self, obs: Observation) -> None:
        fb = obs.feedback
        if self.proto.tool_mode:
            if self.pending_calls:
                img = self._image_part(obs)
                text = self.proto.observation_text(fb, False)
                for i, cid in enumerate(self.pending_calls):
                    last = i == len(self.pending_calls) - 1
                    parts = [{"text": text}, img] if last else [{"text": "done (run in order with the next call)"}]
                    self._add({"role": "tool", "call_id": cid, "name": "gui", "parts": parts})
                self.pending_calls = []
            elif self.started:
                self._add({"role": "user", "parts": [{"text": self.proto.observation_text(fb, False)},
                                                     self._image_part(obs)]})
            # the first observation of a function-calling episode is not sent: the model's
            # first call (wait) returns it
        else:
            parts = []
            if not self.started:
                parts.append({"text": self.proto.task_text()})
                parts += self.takeover_parts           # D.1: the takeover, before the current screenshot
                self.takeover_parts = []
            elif fb is not None and not fb.executed:
                parts.append({"text": self.proto.correction(f"the dispatcher refused the action: {fb.message}")})
            else:
                t = self.proto.observation_text(fb, False)
                if t:
                    parts.append({"text": t})
            parts.append(self._image_part(obs))
            self._add({"role": "user", "parts": parts})
        self.started = True

    def _parse_failure(self, reply: Reply, e: ParseError) -> None:
        self.usage.parse_failures += 1
        self.invalid_run += 1
        self._event({"type": "parse_failure", "error": str(e), "run": self.invalid_run})
        self._add_assistant(reply)
        if self.invalid_run >= self.max_invalid:
            self._end_invalid(f"the replies could not be parsed (last: {e})")
        msg = self.proto.correction(str(e))
        calls = reply.tool_calls
        if self.proto.tool_mode and calls:
            for c in calls:
                self._add({"role": "tool", "call_id": c.id, "name": c.name, "parts": [{"text": "error: " + msg}]})
        else:
            self._add({"role": "user", "parts": [{"text": msg}]})

    def _end_invalid(self, why: str):
        self._event({"type": "invalid_limit", "detail": why})
        raise InvalidReplyLimit(f"{self.max_invalid} invalid replies or refused actions in a row: {why}")

    def _add(self, msg: dict) -> None:
        self.history.append(msg)
        self._log_message(msg)
        if msg["role"] == "assistant":
            self.turns_since_summary += 1
        if any("image" in p for p in msg.get("parts", ())):
            self._cap_images()

    def _cap_images(self) -> None:
        if self.memory != "d1":
            return super()._cap_images()
        # D.1: the newest screenshots a request can still show keep their bytes (the takeover's
        # while it is live); the window (d1.window) decides what each request sends
        keep, live = d1.IMAGES, self._takeover_live()
        for m in reversed(self.history):
            for p in reversed(m.get("parts", ())):
                if "image" not in p or p["image"] is None:
                    continue
                if live and "takeover" in p["ref"]:
                    continue
                if keep > 0:
                    keep -= 1
                else:
                    p["image"] = None
                    p.pop("_b64", None)

    def _takeover_live(self) -> bool:
        """D.1: the takeover's screenshots are shown until the model's first reply after it."""
        return getattr(self, "takeover", None) is not None and d1.opening_end(self.history) == len(self.history)

    def _request(self) -> list[dict]:
        if self.memory == "d1":
            return [{"role": "system", "text": self.system}] + d1.window(self.history, self.summary,
                                                                         takeover_live=self._takeover_live())
        return [{"role": "system", "text": self.system}] + self.history

    def _summarise(self) -> None:
        """D.1: the model's summary of the play so far (every d1.SUMMARY_EVERY turns), kept in
        every later request in place of the turns that leave the window."""
        req = self._request() + [{"role": "user", "parts": [{"text": d1.summary_request()}]}]
        reply = self._call("summary", req)
        self.summary = (reply.text or "").strip() or "(no summary was written)"
        self.turns_since_summary = 0
        self._event({"type": "summary", "text": self.summary})

    def _count_call(self) -> int:
        self.calls += 1                     # a call record counts the calls since the last reset
        return self.calls

    @staticmethod
    def _sent_ref(ref: dict):
        return ref.get("frame", ref)        # the stored frame it shows (a takeover's picture: its ref)

    def _model_call(self, kind: str) -> Reply:
        """A step's call; a request refused as longer than the model's context is answered by
        a compaction (from the text of the history) and sent once more."""
        try:
            return self._call(kind)
        except ProviderError as e:
            if not context_overflow(e):
                raise
            self._event({"type": "context_overflow", "error": str(e)})
            if not self._compact("the provider refused the request as too long", text_only=True):
                raise
            return self._call(kind)

    # ---- compaction
    def _maybe_compact(self) -> None:
        limit = self.cfg.context_tokens
        if not limit or self.last_context + (self.cfg.max_output_tokens or 0) < limit:
            return
        self._compact(f"{self.last_context} tokens reached the limit of {limit}")

    def _compact(self, reason: str, text_only: bool = False) -> bool:
        """Replace the turns before the latest observation with a model-written summary
        (``text_only``: the summary request leaves every screenshot out). False when there
        is nothing to replace."""
        # the latest observation (messages after the last assistant turn) is kept
        cut = len(self.history)
        while cut > 0 and self.history[cut - 1]["role"] != "assistant":
            cut -= 1
        if cut == 0:
            return False
        tail = self.history[cut:]
        req = self._request() + [{"role": "user", "parts": [{"text": self.proto.compaction_request()}]}]
        if text_only:
            req = [{**m, "parts": [{"image": None, "ref": p["ref"]} if "image" in p else p for p in m["parts"]]}
                   if "parts" in m else m for m in req]
        reply = self._call("compaction", req)
        summary = (reply.text or "").strip() or "(the model wrote no summary)"
        parts = [p for m in tail for p in m.get("parts", ())]
        replaced = len(self.history) - len(tail)
        self.history = []
        self._event({"type": "compaction", "reason": reason, "replaced_messages": replaced, "summary": summary,
                     "context_tokens": self.last_context})
        self.usage.compactions += 1
        self.pending_calls = []
        self._add({"role": "user", "parts": [{"text": self.proto.task_text()},
                                             {"text": "Summary of the episode so far (earlier turns were "
                                                      "replaced by it):\n" + summary}]})
        self._add({"role": "user", "parts": parts or [{"text": "Continue."}]})
        self.last_context = 0
        return True

    # ---- the conversation log
    def _open_log(self, ctx: Context) -> None:
        if self.folder is None:
            return
        d = self.folder / f"level_{self.resets:02d}" if self.level_protocol else self.folder
        d.mkdir(parents=True, exist_ok=True)
        self._log = ConversationLog(d, {"protocol": self.protocol_name,
                     "model": self.cfg.public(), "prompt_setting": ctx.prompt_setting, "language": ctx.language,
                     "history_images": self.history_images, "view": list(self.proto.view.size),
                     "frame": list(ctx.frame_size), "scale_factor": self.proto.scale,
                     "system": self.system, "tools": self.tools})

    def _flush(self) -> None:
        if self._log is not None:
            self._log.flush()               # once per step: the lines of a step reach the file together
