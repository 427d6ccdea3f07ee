"""The takeover context of the diagnostics' harness (PAPERS.md section 4, D.1), built from a
recorded episode: what an agent that continues it at step k is shown of what came before.

It holds only what was public: the recorded actions as text (the action as the harness
validated it, and the public feedback it got), the screenshots they were chosen on (the
episode's stored frames; drawn again from the exact restored state when it stored none:
``draw``, which replay.takeover_at gives) and the current screenshot. Nothing private (board
state, grading signals) enters it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from longpuzzle.agents.base import Takeover
from longpuzzle.agents.harness.frames import FRAMES_FILE, LEGACY_DIR, FrameStoreError, open_frames, step_frame_indices
from longpuzzle.agents.harness.recompute import screen_shape
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.engine.catalog import Catalog, builtin_catalog

PAIRS = 4               # screenshot-action pairs of a takeover (D.1: up to four)


def _num(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def action_text(action: dict) -> str:
    """An action as one line of text, e.g. ``click(412, 300)``, ``drag(10, 20, 200, 20)``,
    ``key(Enter)``, ``swipe(left)``, ``wait(2000 ms)``, ``batch[click(1, 2); key(Enter)]``."""
    if not isinstance(action, dict):
        return str(action)
    t = action.get("type", "?")
    if t == "batch":
        return "batch[" + "; ".join(action_text(a) for a in action.get("actions") or ()) + "]"
    if t == "drag" or (t == "swipe" and action.get("x0") is not None):
        return f"{t}({', '.join(_num(action.get(k)) for k in ('x0', 'y0', 'x1', 'y1'))})"
    if t == "swipe":
        at = f" at {_num(action['x'])}, {_num(action['y'])}" if action.get("x") is not None else ""
        return f"swipe({action.get('direction')}{at})"
    if t == "key":
        return f"key({action.get('name')})"
    if t == "typetext":
        return f"typetext({str(action.get('text'))!r})"
    if t == "scroll":
        return f"scroll({action.get('direction', 'down')})"
    if t == "wait":
        return f"wait({_num(action.get('ms', 1000))} ms)"
    if "x" in action and "y" in action and action.get("x") is not None:
        return f"{t}({_num(action['x'])}, {_num(action['y'])})"
    return f"{t}()"


def record_text(rec: dict) -> str:
    """A public step record as one line: its step, its action and the feedback it got."""
    fb = rec.get("feedback") or {}
    status = fb.get("status", "")
    if fb.get("executed") is False:
        status = f"refused: {fb.get('message', '')}".rstrip(": ")
    return f"step {rec['step']}: {action_text(rec.get('action'))} -> {status}"


def build_takeover(folder: str | Path, step: int, *, note: str = "", pairs: int = PAIRS,
                   catalog: Catalog | None = None,
                   draw: Callable[[int], np.ndarray] | None = None) -> Takeover:
    """The takeover context of recorded episode ``folder`` at step ``step`` (the state after
    that action): every public action up to it as text, the last ``pairs`` dispatched actions
    with the screenshot each was chosen on, and the screenshot after ``step``; ``note`` the
    intervention's text. A screenshot the episode did not store is ``draw(step)`` (the
    screen after that step drawn again; replay.takeover_at passes it). HarnessError when the
    episode has no such step, or a screenshot is neither stored nor drawable."""
    events = read_events(folder)
    public = [r for r in events if r.get("stream") == "public" and "action" in r and r["step"] <= step]
    if step < 0 or (step > 0 and not any(r["step"] == step for r in public)):
        raise HarnessError(f"{folder} has no recorded action at step {step} to take over from")
    # the last frame each step left on screen (step 0: the first observation's)
    idx = step_frame_indices(events)
    shown: dict[int, int] = {}
    last = 0
    for k in range(step + 1):
        if idx.get(k):
            last = idx[k][-1]
        shown[k] = last
    dispatched = [r for r in public if (r.get("feedback") or {}).get("executed") is not False and r["step"] > 1]
    chosen = dispatched[-pairs:] if pairs > 0 else []
    with _Screens(folder, events, catalog, draw) as screens:
        pair_list = tuple((screens.after(r["step"] - 1, shown[r["step"] - 1]), action_text(r["action"]))
                          for r in chosen)
        frame = screens.after(step, shown[step])
    return Takeover(step, tuple(record_text(r) for r in public), pair_list, frame, note)


class _Screens:
    """The screenshot after a recorded step: its stored frame, else drawn again from the
    restored state (an episode run with --no-frames)."""

    def __init__(self, folder, events, catalog, draw):
        self.folder, self.draw = folder, draw
        self.store = None
        if (Path(folder) / FRAMES_FILE).is_file() or (Path(folder) / LEGACY_DIR).is_dir():
            try:
                self.store = open_frames(folder, screen_shape(events[0], catalog or builtin_catalog()))
            except FrameStoreError:
                self.store = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.store is not None:
            self.store.close()

    def after(self, step: int, frame_index: int) -> np.ndarray:
        if self.store is not None and frame_index < len(self.store):
            out = np.array(self.store.read(frame_index))
        elif self.draw is not None:
            out = np.array(self.draw(step))
        else:
            raise HarnessError(f"{self.folder} stored no screenshot of step {step} (use replay.takeover_at, "
                               "which draws it again)")
        out.setflags(write=False)
        return out
