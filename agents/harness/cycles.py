"""The no-progress / repeating-cycle rule of the level protocol (HARNESS.md section 6)."""

from __future__ import annotations

from longpuzzle.agents.metrics import BENCHMARK


class CycleDetector:
    """HARNESS.md section 6: after >= no_progress_steps steps without a strict increase of P,
    if the last R*L post-action screens repeat with period L (L = 1..max_len), the episode ends:
    ``repeated_action_cycle`` if the last R*L actions repeat too, else ``no_progress``."""

    def __init__(self, cfg: dict | None = None):
        c = cfg or BENCHMARK["harness"]["cycle_detection"]
        self.window = c["action_window_size"]
        self.min_len, self.max_len = c["min_cycle_length"], c["max_cycle_length"]
        self.reps = c["required_repetitions"]
        self.no_progress_steps = c["no_progress_steps"]
        self.tol = c["coordinate_tolerance_px"]
        self.best = -1.0
        self.since = 0
        self.screens: list[str] = []
        self.actions: list[dict] = []

    def _same_action(self, a: dict, b: dict) -> bool:
        if a.get("type") != b.get("type") or a.get("direction") != b.get("direction"):
            return False
        for k in ("x", "y", "x0", "y0", "x1", "y1"):
            va, vb = a.get(k), b.get(k)
            if (va is None) != (vb is None):
                return False
            if va is not None and abs(va - vb) > self.tol:
                return False
        return True

    def step(self, action: dict, screen_hash: str, progress: float | None) -> str | None:
        p = -1.0 if progress is None else progress
        if p > self.best + 1e-9:
            self.best = p
            self.since = 0
        else:
            self.since += 1
        self.screens = (self.screens + [screen_hash])[-self.window:]
        self.actions = (self.actions + [action])[-self.window:]
        if self.since < self.no_progress_steps:
            return None
        for L in range(self.min_len, self.max_len + 1):
            n = self.reps * L
            if n > len(self.screens):
                break
            s = self.screens[-n:]
            if all(s[i] == s[i + L] for i in range(n - L)):
                a = self.actions[-n:]
                if all(self._same_action(a[i], a[i + L]) for i in range(n - L)):
                    return "repeated_action_cycle"
                return "no_progress"
        return None
