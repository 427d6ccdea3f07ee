"""The agent's own text per recorded step of an episode folder (what the diagnostics code
with fixed regular expressions: the stated reasons of RQ1, the attribution of RQ2).

A model agent's text is in its ``conversation.jsonl`` (agents/models/conversation_log.py),
written in order: the messages as they were added (a screenshot as a reference naming the
step of the observation it showed, ``{"image": {"frame": N, "step": S}}``: S actions had been
taken) and a record of every call with its reply (text, reasoning, tool calls). A call made
when the newest screenshot logged so far is of step S chose action S + 1 (before any
screenshot: action 1, the opening wait a model is asked for); the calls of one step (a
``step`` call and its ``follow-up`` calls after a reply that could not be parsed) are joined
in order. Compactions (summaries) are not an action's reason and are left out. The scripted
paper-like agents (agents/paper_agents.py) write the same records to the same file, so
scripted and model agents are read alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from longpuzzle.agents.models.conversation_log import read_records

CONVERSATION = "conversation.jsonl"
ACTING_CALLS = ("step", "follow-up")       # the call kinds whose reply chose an action


def _reply_text(reply: dict) -> str:
    parts = [reply.get("reasoning") or "", reply.get("text") or ""]
    for c in reply.get("tool_calls") or []:
        args = c.get("arguments", c.get("input"))
        parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    return "\n".join(p for p in parts if p)


def _image_steps(v) -> list[int]:
    """The steps named by the screenshot references anywhere inside a logged message."""
    if isinstance(v, dict):
        img = v.get("image")
        if isinstance(img, dict) and type(img.get("step")) is int:
            return [img["step"]]
        return [s for x in v.values() for s in _image_steps(x)]
    if isinstance(v, list):
        return [s for x in v for s in _image_steps(x)]
    return []


def step_texts(folder: str | Path) -> dict[int, str]:
    """{step: the agent's text that chose it} for an episode folder (empty when the agent left
    no text). Lines that are not JSON objects (a log cut off by a kill) are skipped."""
    out: dict[int, list[str]] = {}
    seen = 0                                  # the newest step a logged screenshot showed
    for rec in read_records(folder):
        if rec.get("type") == "message":
            seen = max([seen, *_image_steps(rec.get("message"))])
            continue
        if rec.get("type") != "call" or rec.get("kind") not in ACTING_CALLS:
            continue
        reply = rec.get("reply")
        text = _reply_text(reply) if isinstance(reply, dict) else ""
        if text:
            out.setdefault(seen + 1, []).append(text)
    return {k: "\n".join(v) for k, v in sorted(out.items())}
