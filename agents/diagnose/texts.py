"""The agent's own text per recorded step of an episode folder (what the diagnostics code
with fixed regular expressions: the stated reasons of RQ1, the attribution of RQ2).

A model agent's text is in its ``conversation.jsonl`` (agents/models/conversation_log.py):
every call record holds the reply (its text, reasoning and tool calls) and the references of
the images it sent, each naming the step of the observation it showed (``{"frame": N,
"step": S}``: S actions had been taken). The reply of a call whose newest image is of step S
chose action S + 1; the calls of one step (a ``step`` call and its ``follow-up`` calls after
a reply that could not be parsed) are joined in order. Compactions (summaries) are not an
action's reason and are left out.
"""

from __future__ import annotations

import json
from pathlib import Path

CONVERSATION = "conversation.jsonl"
ACTING_CALLS = ("step", "follow-up")       # the call kinds whose reply chose an action


def _reply_text(reply: dict) -> str:
    parts = [reply.get("reasoning") or "", reply.get("text") or ""]
    for c in reply.get("tool_calls") or []:
        args = c.get("arguments", c.get("input"))
        parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    return "\n".join(p for p in parts if p)


def step_texts(folder: str | Path) -> dict[int, str]:
    """{step: the agent's text that chose it} for an episode folder (empty when the agent left
    no text). Lines that are not JSON objects (a log cut off by a kill) are skipped."""
    p = Path(folder) / CONVERSATION
    if not p.is_file():
        return {}
    out: dict[int, list[str]] = {}
    with open(p, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") != "call" or rec.get("kind") not in ACTING_CALLS:
                continue
            steps = [r["step"] for r in rec.get("images_sent") or []
                     if isinstance(r, dict) and type(r.get("step")) is int]
            reply = rec.get("reply")
            if not steps or not isinstance(reply, dict):
                continue
            text = _reply_text(reply)
            if text:
                out.setdefault(max(steps) + 1, []).append(text)
    return {k: "\n".join(v) for k, v in sorted(out.items())}
