"""What every model agent shares: a conversation with a model endpoint, measured and logged.

Two kinds of agents talk to a model (agents/registry.py): ``ModelAgent`` (agents/models/agent.py:
an agent protocol turning replies into GUI actions) and ``ToolModelAgent`` (agents/vista/model.py:
replies' tool calls run through a Controller). Both are a ``ModelConversation``:

- the endpoint: the client made from the ModelConfig (or given), its prices, ``stop_run``;
- the history: messages of parts (text, or an image with the ``ref`` it is logged as), at most
  ``history_images`` screenshots kept in it (older ones become a placeholder, bytes dropped);
- every call: its usage added to ``usage`` (tokens, latency, retries, cost; accounting.py), the
  context it used (reported, or estimated from characters and images) for compaction, and
  one ``call`` record in the conversation log;
- the conversation log (conversation.jsonl; conversation_log.py): opened by the agent with its
  header, closed with the usage totals; ``report`` is what the episode's result records.

What differs stays in each agent: how the history becomes a request (``_request``), how a
reply is handled, the rules of invalid replies, compaction's prompts.
"""

from __future__ import annotations

from pathlib import Path

from longpuzzle.agents.models.accounting import Usage
from longpuzzle.agents.models.clients import make_client
from longpuzzle.agents.models.conversation_log import ConversationLog

MAX_INVALID = 3                  # consecutive invalid replies (or refused actions) that end an episode
TEXT_REPLIES = ("final", "reprompt")   # a function-calling reply without a tool call: final, or re-prompted
IMAGE_TOKENS_ESTIMATE = 1500     # per image, when the provider reports no usage
_TOOLS = object()                # _call's default: the agent's own tools


class ModelConversation:
    """The shared state and calls of a model agent (module doc). A subclass sets ``label`` (the
    protocol or tool configuration it records), ``system``, ``tools`` and ``history`` for
    each episode, and defines ``_request``."""

    label: str

    def _start(self, cfg, client, folder: str | Path | None, history_images: int | None, max_invalid: int,
               text_reply: str) -> None:
        """Set up the endpoint and the settings every model agent has (from ``__init__``)."""
        self.cfg = cfg
        self.client = client or make_client(cfg)
        self.prices = cfg.prices()
        self.name = f"{self.label}:{cfg.name or cfg.model}"
        self.folder = Path(folder) if folder else None
        self.history_images = history_images
        self.max_invalid = max_invalid
        if text_reply not in TEXT_REPLIES:
            raise ValueError(f"text_reply {text_reply!r}: use {' or '.join(TEXT_REPLIES)}")
        self.text_reply = text_reply
        self.usage = Usage()
        self.last_context = 0
        self._log: ConversationLog | None = None

    def stop_run(self, reason: str) -> None:
        """The run is stopping (an internal error elsewhere): the next request raises InternalError."""
        self.client.stop_run(reason)

    # ---- the history
    def _add_assistant(self, reply) -> None:
        self._add({"role": "assistant", "text": reply.text, "tool_calls": list(reply.tool_calls)})

    def _cap_images(self) -> None:
        """Keep the latest ``history_images`` screenshots of the history, drop the bytes of the rest."""
        k = self.history_images
        if k is None:
            return
        # the images kept are always the newest ones: scanning back from the newest, the
        # first image already dropped means every older one was dropped before
        seen = 0
        for m in reversed(self.history):
            for p in reversed(m.get("parts", ())):
                if "image" not in p:
                    continue
                if p["image"] is None:
                    return
                seen += 1
                if seen > k:
                    p["image"] = None
                    p.pop("_b64", None)

    # ---- calls
    def _call(self, kind: str, messages: list[dict] | None = None, tools=_TOOLS):
        """One call of the model (``messages``: the request, default ``_request()``; ``tools``:
        default the agent's own, None for a call without tools), measured and logged."""
        msgs = messages if messages is not None else self._request()
        reply = self.client.complete(msgs, self.tools if tools is _TOOLS else tools)
        u = reply.usage
        cost = self.usage.add_call(u, self.prices, kind)
        n = self._count_call()
        if u.reported:
            self.last_context = u.input + u.output
        else:
            chars = sum(len(p.get("text", "")) for m in msgs for p in m.get("parts", ()))
            chars += sum(len(m.get("text") or "") for m in msgs)
            imgs = sum(1 for m in msgs for p in m.get("parts", ()) if p.get("image") is not None)
            self.last_context = chars // 4 + imgs * IMAGE_TOKENS_ESTIMATE
        self._event({"type": "call", "n": n, "kind": kind, **self._call_fields(),
                     "usage": {"input_uncached": u.input_uncached, "input_cached": u.input_cached, "output": u.output,
                               "reasoning": u.reasoning, "reported": u.reported},
                     "latency": round(u.latency, 4), "retries": u.retries,
                     "cost": None if cost is None else round(cost, 8),
                     "images_sent": [self._sent_ref(p["ref"]) for m in msgs for p in m.get("parts", ())
                                     if p.get("image") is not None],
                     "reply": {"text": reply.text, "tool_calls": [c.as_dict() for c in reply.tool_calls],
                               "reasoning": reply.reasoning, "finish": reply.finish, "id": reply.id}})
        return reply

    def _count_call(self) -> int:
        """The number the call record gives this call (default: the calls of the agent's usage)."""
        return self.usage.calls

    def _call_fields(self) -> dict:
        """Fields of a call record after its kind (default none)."""
        return {}

    @staticmethod
    def _sent_ref(ref: dict):
        """How a call record names an image it sent (default: its whole ref)."""
        return ref

    # ---- the conversation log
    def _event(self, rec: dict) -> None:
        if self._log is not None:
            self._log.event(rec)

    def _log_message(self, msg: dict) -> None:
        if self._log is not None:
            self._log.message(msg)

    def close_log(self) -> None:
        if self._log is not None:
            self._log.close(self.usage.as_dict())
            self._log = None

    def close(self) -> None:
        """End of the episode: close the log and the client's connections."""
        self.close_log()
        self.client.close()

    def report(self) -> dict:
        """What the episode's result records about the model."""
        return {"protocol": self.label, "model": self.cfg.name or self.cfg.model, "api": self.cfg.api,
                "usage": self.usage.as_dict()}
