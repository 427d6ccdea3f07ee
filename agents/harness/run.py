"""One episode's machinery: the suite, its renderer, the private evaluator, the trajectory
and the public feedback. ``check`` validates one action (the schema, and in the objective
protocol the rule that the first action is a wait) through the engine's one validation
(Suite.validate), ``dispatch`` runs and records a checked one (Suite.run: not validated
again), ``refuse`` records a refused one; ``do`` is the three together."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from longpuzzle.agents.base import DISPATCH_FAILED, Feedback
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import UnreadableAction, jsonable_action
from longpuzzle.agents.base import FeedbackTracker
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.snapshots import SuiteStates
from longpuzzle.agents.harness.trajectory import EVENTS_FORMAT, Trajectory
from longpuzzle.engine import gui
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Suite, difficulty_label
from longpuzzle.render.frame import renderer

FIRST_WAIT_MESSAGE = ("the first action must be a wait (e.g. {\"type\": \"wait\", \"ms\": 0}): it returns the "
                      "first screenshot and starts the clock")


class Run:
    """Shared machinery of one episode: suite, renderer, evaluator, trajectory, feedback."""

    need_wait = False          # objective protocol: no action but a wait until the first wait
    presses = 0                # pointer presses dispatched (one per click, drag or swipe)
    on_action = None           # on_action(step, private_record) after every recorded action
    last_hashes: list = []     # the frame hashes of the last dispatched action's frames

    def __init__(self, suite: Suite, evaluator: Evaluator, settings: Settings, folder, header: dict,
                 first_wait: bool = False, trajectory: Trajectory | None = None, states=None):
        """``trajectory`` and ``states``: what records the frames and the suite states in
        place of the episode folder's (replay.py: hashes only, nothing written)."""
        self.suite = suite
        self.ev = evaluator
        self.st = settings
        self.rend = renderer(suite.style, suite.scale, suite.viewport, suite.lang)
        self.traj = trajectory if trajectory is not None else Trajectory(folder, settings.save_frames)
        frame = self.rend.render(suite)
        self.last_frame = frame
        h0 = self.traj.frame(frame)
        self.fb_tracker = FeedbackTracker(h0)
        self.need_wait = bool(first_wait)
        self.presses = 0
        self.level_presses: dict[str, int] = {}
        extra = {"first_wait": True} if first_wait else {}
        self.header = {"type": "header", "format": EVENTS_FORMAT, **header, **extra,       # as written
                       "settings": settings.as_dict(), "catalog": suite.catalog.identity(), "start": suite.snapshot(),
                       "frame_hash": self.traj.frame_hash, "frame": h0}
        self.traj.write(self.header)
        self.states = states if states is not None else SuiteStates(suite)   # the suite state of every private record
        self.step = 0

    def public_screen(self) -> dict:
        """What the screen shows now, as a person reads it off the frame (no game state, no
        progress, nothing of the evaluator): ``screen`` "home" | "difficulty" | "level", the
        game's title (difficulty and level screens), the difficulty label and the "Level N"
        number printed in a level's header, and ``card`` "level_complete" | "all_complete"
        while the completion card is shown, "game_over" while the game's own failure card is
        (Maze Paint on the hub; None otherwise)."""
        s, suite = self.suite.screen, self.suite
        if s["name"] == "home":
            return {"screen": "home"}
        if s["name"] == "difficulty":
            return {"screen": "difficulty", "game": get_puzzle(s["game"]).title}
        lvl = suite.level
        card = ("all_complete" if suite.last_level() else "level_complete") if suite.complete else \
            "game_over" if suite.failed and suite.game_ui().limits.card else None
        return {"screen": "level", "game": suite.puzzle.title, "difficulty": difficulty_label(lvl.difficulty),
                "level": lvl.number, "card": card}

    def frames_of_action(self) -> list[np.ndarray]:
        """The frames an action shows (intermediate ones first); ``frame_deltas`` each one's
        Renderer.render_delta, for the frame store."""
        out, deltas = [], []
        self.frame_deltas = deltas
        n = self.st.frames_per_move
        rd = getattr(self.rend, "render_delta", None)
        render = rd if rd is not None else (lambda s, t=None: (self.rend.render(s, t), None))
        if n:
            for a in self.suite.anims:
                if a["t1"] > a["t0"]:
                    for i in range(n):
                        t = a["t0"] + (a["t1"] - a["t0"]) * (i + 1) / (n + 1)
                        f, d = render(self.suite, int(t))
                        out.append(f)
                        deltas.append(d)
        f, d = render(self.suite)
        out.append(f)
        deltas.append(d)
        return out

    def check(self, raw_action: Any) -> tuple[dict | None, str]:
        """(the validated action, "") or (None, why it is refused): the engine's one validation
        of a GUI action (Suite.validate), as a person's action gets."""
        try:
            if isinstance(raw_action, UnreadableAction):
                raise gui.ActionError(raw_action.message)
            a = self.suite.validate(raw_action)
        except gui.ActionError as e:
            return None, str(e)
        if self.need_wait and a["type"] != "wait":
            return None, FIRST_WAIT_MESSAGE
        return a, ""

    def refuse(self, raw_action: Any, message: str, t_agent: float) -> tuple[Feedback, dict]:
        """Record a refused action (not dispatched): feedback dispatch_failed with the reason."""
        self.step += 1
        fb = Feedback(DISPATCH_FAILED, False, message, 0)
        self.traj.write({"stream": "public", "step": self.step, "action": jsonable_action(raw_action),
                         "t_agent": round(t_agent, 6), "feedback": fb.__dict__, "frames": []})
        rec = self.ev.observe(self.suite, [])
        rec["invalid_action"] = True
        self.traj.write({"stream": "private", "step": self.step, "record": rec})
        if self.on_action is not None:
            self.on_action(self.step, rec)
        return fb, rec

    def dispatch(self, a: dict, t_agent: float, until: int | None = None
                 ) -> tuple[Feedback, dict, list[np.ndarray], dict]:
        """Run a checked action (``check``'s; events due at or after ``until`` on the virtual
        clock, the deadline, do not happen); record the public and private streams."""
        self.step += 1
        self.need_wait = False
        t0 = time.perf_counter()
        suite = self.suite
        c0 = suite.clock
        lvl = suite.level.id if suite.session is not None and suite.screen.get("name") == "level" else None
        res = suite.run(a, until)
        n_press = res.presses if res.cut else gui.presses(a)
        self.presses += n_press
        if lvl is not None and n_press:
            self.level_presses[lvl] = self.level_presses.get(lvl, 0) + n_press
        frames = self.frames_of_action()
        hashes = self.last_hashes = [self.traj.frame(f, d) for f, d in zip(frames, self.frame_deltas)]
        status = self.fb_tracker.status(a, hashes[-1])
        fb = Feedback(status, True, "", len(frames))
        self.last_frame = frames[-1]
        t_disp = time.perf_counter() - t0
        recording = self.traj.recording        # (no folder: the records are not made at all)
        if recording:
            pub = {"stream": "public", "step": self.step, "action": a, "t_agent": round(t_agent, 6),
                   "t_dispatch": round(t_disp, 6), "sim_ms": suite.clock - c0, "presses": n_press,
                   "feedback": fb.__dict__, "frames": hashes}
            if res.cut:
                pub["cut_at"] = until          # the deadline fell inside this action
            self.traj.write(pub)
        rec = self.ev.observe(suite, res.effects)
        rec["effects"] = res.effects
        if recording:
            self.traj.write({"stream": "private", "step": self.step, "record": rec, **self.states.record(suite)})
        if self.on_action is not None:
            self.on_action(self.step, rec)
        return fb, rec, frames, a

    def do(self, raw_action: Any, t_agent: float, until: int | None = None
           ) -> tuple[Feedback, dict, list[np.ndarray], dict | None]:
        """Check, then dispatch or refuse one action."""
        a, why = self.check(raw_action)
        if a is None:
            fb, rec = self.refuse(raw_action, why, t_agent)
            return fb, rec, [], None
        return self.dispatch(a, t_agent, until)
