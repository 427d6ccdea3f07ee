"""Public feedback on an action, computed from frames alone (HARNESS.md section 5)."""

from __future__ import annotations

from longpuzzle.agents.base import NO_VISIBLE_EFFECT, RETURNED_TO_RECENT, SCREEN_CHANGED, WAIT_COMPLETED


class FeedbackTracker:
    """Public feedback from frames alone (HARNESS.md section 5)."""

    def __init__(self, first_hash: str):
        self.recent = [first_hash]

    def status(self, action: dict, h: str) -> str:
        prev = self.recent[-1]
        older = self.recent[-5:-1]
        self.recent.append(h)
        self.recent = self.recent[-6:]
        if action["type"] == "wait" and h == prev:
            return WAIT_COMPLETED
        if h == prev:
            return NO_VISIBLE_EFFECT
        if h in older:
            return RETURNED_TO_RECENT
        return SCREEN_CHANGED
