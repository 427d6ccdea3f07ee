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

from longpuzzle.agents.action_text import action_text, record_text
from longpuzzle.agents.base import Takeover
from longpuzzle.agents.harness.frames import FRAMES_FILE, LEGACY_DIR, FrameStoreError, open_frames, step_frame_indices
from longpuzzle.agents.harness.recompute import screen_shape
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.engine.catalog import Catalog, builtin_catalog

PAIRS = 4               # screenshot-action pairs of a takeover (D.1: up to four)


def continued_source(folder: str | Path, head: dict) -> tuple[Path, int] | None:
    """The episode (its folder) and the step that episode ``folder`` continues (its header's
    ``continued_from``, continue_episode), or None when it continues nothing. HarnessError
    when the entry is malformed, or that episode is gone or its events changed since (the
    digest recorded): what a replay checks first, and a takeover context follows."""
    import hashlib

    src = head.get("continued_from")
    if src is None:
        return None
    if type(src) is not dict or type(src.get("folder")) is not str or type(src.get("step")) is not int \
            or type(src.get("events")) is not str or head.get("protocol") != "objective":
        raise HarnessError(f"{folder}: the header's 'continued_from' is malformed")
    path = Path(folder) / src["folder"]
    try:
        digest = hashlib.sha256((path / "events.jsonl").read_bytes()).hexdigest()
    except OSError:
        raise HarnessError(f"{folder} continues the episode {src['folder']}, which is not there to check "
                           "its start") from None
    if digest != src["events"]:
        raise HarnessError(f"{folder} continues the episode {src['folder']}, whose events have changed since")
    return path, src["step"]


def build_takeover(folder: str | Path, step: int, *, note: str = "", pairs: int = PAIRS,
                   catalog: Catalog | None = None,
                   draw: Callable[[int], np.ndarray] | None = None,
                   drawer: Callable[[Path], Callable[[int], np.ndarray]] | None = None) -> Takeover:
    """The takeover context of recorded episode ``folder`` at step ``step`` (the state after
    that action): every public action up to it as text, the last ``pairs`` dispatched actions
    with the screenshot each was chosen on, and the screenshot after ``step``; ``note`` the
    intervention's text. A screenshot the episode did not store is ``draw(step)`` (the
    screen after that step drawn again; replay.takeover_at passes it). HarnessError when the
    episode has no such step, or a screenshot is neither stored nor drawable.

    An episode that continues another (continue_episode's ``continued_from``, verified by its
    digest: continued_source) is taken over with the whole public history behind it: the
    source's context up to the step it was continued from (followed back along the chain),
    then this episode's own actions numbered on from there, the last ``pairs`` pairs across
    both. ``drawer(folder)`` gives the ``draw`` of an episode up the chain."""
    events = read_events(folder)
    public = [r for r in events if r.get("stream") == "public" and "action" in r and r["step"] <= step]
    if step < 0 or (step > 0 and not any(r["step"] == step for r in public)):
        raise HarnessError(f"{folder} has no recorded action at step {step} to take over from")
    before = Takeover(0)
    src = continued_source(folder, events[0])
    if src is not None:
        before = build_takeover(src[0], src[1], pairs=pairs, catalog=catalog,
                                draw=drawer(src[0]) if drawer else None, drawer=drawer)
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
    own = tuple(record_text({**r, "step": before.step + r["step"]}) for r in public)
    return Takeover(before.step + step, before.prefix + own, (before.pairs + pair_list)[-pairs:] if pairs > 0 else (),
                    frame, note)


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
