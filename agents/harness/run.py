"""One episode's machinery: the suite, its renderer, the private evaluator, the trajectory
and the public feedback; ``do`` validates, dispatches and records one action."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from longpuzzle.agents.base import DISPATCH_FAILED, Feedback
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import jsonable_action
from longpuzzle.agents.harness.feedback import FeedbackTracker
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import EVENTS_FORMAT, Trajectory
from longpuzzle.engine import gui
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import renderer


class Run:
    """Shared machinery of one episode: suite, renderer, evaluator, trajectory, feedback."""

    def __init__(self, suite: Suite, evaluator: Evaluator, settings: Settings, folder, header: dict):
        self.suite = suite
        self.ev = evaluator
        self.st = settings
        self.rend = renderer(suite.style, suite.scale)
        self.traj = Trajectory(folder, settings.save_frames)
        frame = self.rend.render(suite)
        self.last_frame = frame
        h0 = self.traj.frame(frame)
        self.fb_tracker = FeedbackTracker(h0)
        self.traj.write({"type": "header", "format": EVENTS_FORMAT, **header, "settings": settings.as_dict(),
                         "start": suite.snapshot(), "frame_hash": self.traj.frame_hash, "frame": h0})
        self.step = 0

    def frames_of_action(self) -> list[np.ndarray]:
        out = []
        n = self.st.frames_per_move
        if n:
            for a in self.suite.anims:
                if a["t1"] > a["t0"]:
                    for i in range(n):
                        t = a["t0"] + (a["t1"] - a["t0"]) * (i + 1) / (n + 1)
                        out.append(self.rend.render(self.suite, int(t)))
        out.append(self.rend.render(self.suite))
        return out

    def do(self, raw_action: Any, t_agent: float) -> tuple[Feedback, dict, list[np.ndarray], dict | None]:
        """Validate and dispatch one action; record public and private streams."""
        self.step += 1
        t0 = time.perf_counter()
        try:
            a = gui.validate(raw_action, self.suite.frame_size)
        except gui.ActionError as e:
            fb = Feedback(DISPATCH_FAILED, False, str(e), 0)
            self.traj.write({"stream": "public", "step": self.step, "action": jsonable_action(raw_action),
                             "t_agent": round(t_agent, 6), "feedback": fb.__dict__, "frames": []})
            rec = self.ev.observe(self.suite, [])
            rec["invalid_action"] = True
            self.traj.write({"stream": "private", "step": self.step, "record": rec})
            return fb, rec, [], None
        res = self.suite.dispatch(a)
        frames = self.frames_of_action()
        hashes = [self.traj.frame(f) for f in frames]
        status = self.fb_tracker.status(a, hashes[-1])
        fb = Feedback(status, True, "", len(frames))
        self.last_frame = frames[-1]
        t_disp = time.perf_counter() - t0
        self.traj.write({"stream": "public", "step": self.step, "action": a, "t_agent": round(t_agent, 6),
                         "t_dispatch": round(t_disp, 6), "feedback": fb.__dict__, "frames": hashes})
        rec = self.ev.observe(self.suite, res.effects)
        rec["effects"] = res.effects
        self.traj.write({"stream": "private", "step": self.step, "record": rec, "snapshot": self.suite.snapshot()})
        return fb, rec, frames, a
