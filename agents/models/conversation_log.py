"""conversation.jsonl: a model agent's conversation as it was sent and received, one JSON
record a line (header, messages with images by reference, calls, parse failures,
compactions, end with the usage). Written by the model agents (agent.py) and the tool
agents (agents/vista/model.py) alike; thread-safe."""

from __future__ import annotations

import json
import threading
from pathlib import Path

CONVERSATION_FORMAT = "longpuzzle-conversation/1"


class ConversationLog:
    """An open conversation.jsonl in ``folder``. ``flush_each``: every record reaches the file
    at once (else at ``flush``, e.g. once per step, so a step's lines arrive together)."""

    def __init__(self, folder: Path, header: dict, *, flush_each: bool = False):
        folder.mkdir(parents=True, exist_ok=True)
        self._f = open(folder / "conversation.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - the log owns the file (close())
        self._lock = threading.Lock()
        self.flush_each = flush_each
        self.event({"type": "header", "format": CONVERSATION_FORMAT, **header})

    def event(self, rec: dict) -> None:
        with self._lock:
            self._f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
            if self.flush_each:
                self._f.flush()

    def message(self, msg: dict) -> None:
        """A conversation message, its images by reference and its tool calls as dicts."""
        m = {k: v for k, v in msg.items() if k not in ("parts", "tool_calls")}
        if "parts" in msg:
            m["parts"] = [{"image": p["ref"]} if "image" in p else p for p in msg["parts"]]
        if msg.get("tool_calls"):
            m["tool_calls"] = [c.as_dict() for c in msg["tool_calls"]]
        self.event({"type": "message", "message": m})

    def flush(self) -> None:
        with self._lock:
            self._f.flush()

    def close(self, usage: dict) -> None:
        self.event({"type": "end", "usage": usage})
        self._f.close()


def read_records(folder: str | Path):
    """The records of ``folder``'s conversation.jsonl, in order, each a dict (nothing when the
    agent left no log). Lines that are not JSON objects (a log cut off by a kill) are skipped."""
    path = Path(folder) / "conversation.jsonl"
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                yield rec
