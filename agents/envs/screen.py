"""What the pixel environments share: a Suite and its renderer, frames as observations, the
GUI action space, the benchmark's public feedback, and the human window.

Observation: the rendered frame, (H, W, 3) uint8 (``style`` "2d" / "3d" and ``scale`` fix
H x W: 960 x 540 at scale 1). Action: a sample of ``gui_action_space`` (agents/envs/gui_space.py)
or any GUI action dict as an agent would send it (batches included); either is validated
once (``Suite.validate``) and run by ``Suite.run``, the path every agent's action takes. A malformed action dict raises
engine.gui.ActionError (nothing is dispatched). ``frames_per_move`` > 0 also puts that many
intermediate animation frames per move into ``info["frames"]``.

Public ``info`` (what the benchmark's agents are shown):

    status      screen_changed / no_visible_effect / returned_to_recent_screen /
                wait_completed (HARNESS.md section 5; from the frames alone)

and the evaluator's private view: ``screen`` (e.g. "level:maze_paint/hard/3"), ``level``
(the level on screen, or None), ``P`` (its progress, or None off a level), ``effects``
(what the action did: moves, rejections, navigation; see engine.suite.Feedback).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from longpuzzle.engine.geometry import projection
from longpuzzle.agents.envs.gui_space import gui_action_space, is_sample, sample_action
from longpuzzle.agents.envs.rules import check_render_mode, check_reward


class ScreenEnv(gym.Env):
    """Base of PixelEnv and SuiteEnv (subclasses make ``self.suite`` in ``reset``)."""

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 30}

    def __init__(self, *, style: str = "2d", scale: float = 1.0, reward: str = "progress",
                 render_mode: str | None = None, frames_per_move: int = 0, lang: str = "en"):
        self.proj = projection(style, float(scale), lang=lang)
        # lang: the language of the screens' texts ("en" | "zh"; the same geometry in each)
        self.style, self.scale, self.lang = self.proj.style, self.proj.scale, self.proj.lang
        self.frame_size = self.proj.size                     # (W, H)
        w, h = self.frame_size
        self.reward_mode = check_reward(reward)
        self.render_mode = check_render_mode(self, render_mode)
        if isinstance(frames_per_move, bool) or not isinstance(frames_per_move, int) or frames_per_move < 0:
            raise ValueError(f"frames_per_move must be a non-negative integer, not {frames_per_move!r}")
        self.frames_per_move = frames_per_move
        self.observation_space = spaces.Box(0, 255, (h, w, 3), np.uint8)
        self.action_space = gui_action_space(self.frame_size)
        self.suite = None
        self._frame: np.ndarray | None = None
        self._tracker = None
        self._viewer = None

    # ---- subclasses --------------------------------------------------------------------
    def _start(self, options: dict | None) -> dict:
        """Make self.suite for a new episode; return the extra reset info."""
        raise NotImplementedError

    def _score(self, effects: list[dict]) -> tuple[float, bool, dict]:
        """(reward, terminated, extra info) after an action."""
        raise NotImplementedError

    # ---- gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        from longpuzzle.agents.base import FeedbackTracker
        from longpuzzle.agents.media.framehash import FrameHasher
        extra = self._start(options)
        self._hasher = FrameHasher()
        self._tracker = FeedbackTracker(self._render_hashed())
        info = {**self._view_info([]), **extra}
        if self.render_mode == "human":
            self.render()
        return self._frame.copy(), info

    def step(self, action: Any):
        if self.suite is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = sample_action(action, self.frame_size) if is_sample(action) else action
        # the action's one validation (raises gui.ActionError for a malformed one), then the run
        fb = self.suite.run(self.suite.validate(a))
        frames, chain = self._intermediate()
        h = self._render_hashed(chain)
        typ = a.get("type", a.get("action_type")) if isinstance(a, dict) else None
        status = self._tracker.status({"type": typ}, h)
        reward, terminated, extra = self._score(fb.effects)
        info = {"status": status, **self._view_info(fb.effects), **extra}
        if self.frames_per_move:
            info["frames"] = tuple(frames)
        if self.render_mode == "human":
            self.render()
        return self._frame.copy(), reward, terminated, False, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() without a render_mode; make the env with render_mode='rgb_array'")
            return None
        if self._frame is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "rgb_array":
            return self._frame.copy()
        if self._viewer is None:
            from longpuzzle.agents.envs.viewer import Viewer
            self._viewer = Viewer(self.frame_size, self.metadata["render_fps"])
        self._viewer.show(self._frame)
        return None

    def close(self):
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    # ---- helpers ----------------------------------------------------------------------
    def _renderer(self):
        from longpuzzle.render.frame import renderer
        return renderer(self.style, self.scale, lang=self.lang)

    def _render_now(self, t: int | None = None) -> np.ndarray:
        return self._renderer().render(self.suite, t)

    def _render_hashed(self, chain: tuple | None = None) -> str:
        """Render the frame on screen now into ``self._frame``; returns its frame hash (from
        the bands that changed since the frame hashed before, when the renderer says which).
        ``chain``: (the frame hashed before, the px box outside which the intermediate frames
        drawn since have its pixels, the last of them), as ``_intermediate`` gives it."""
        # (relative to this env's own frame before: other envs' frames may have come between)
        self._frame, delta = self._renderer().render_delta(self.suite, since=chain[2] if chain else self._frame)
        if chain is not None:
            # the delta from the frame hashed before: through every intermediate frame
            before, box, last = chain
            delta = (before, _union(box, delta[1])) if delta is not None and delta[0] is last else None
        return self._hasher.hash(self._frame, delta)

    def _intermediate(self) -> tuple[list[np.ndarray], tuple | None]:
        """(the animation frames of the move just made, ``frames_per_move`` per animation;
        the chain of their deltas for ``_render_hashed``, None when there are none or one
        is not known, e.g. a level changed; each delta is asked relative to this env's frame before)."""
        out: list[np.ndarray] = []
        n = self.frames_per_move
        if not n:
            return out, None
        r = self._renderer()
        chain = (self._frame, (0, 0, 0, 0), self._frame)
        for an in self.suite.anims:
            if an["t1"] > an["t0"]:
                for i in range(n):
                    frame, delta = r.render_delta(self.suite, int(an["t0"] + (an["t1"] - an["t0"]) * (i + 1) / (n + 1)),
                                                  since=chain[2] if chain is not None else None)
                    out.append(frame)
                    if chain is not None:
                        chain = (chain[0], _union(chain[1], delta[1]), frame) \
                            if delta is not None and delta[0] is chain[2] else None
        return out, (chain if out else None)

    def _view_info(self, effects: list[dict]) -> dict:
        s = self.suite
        on_level = s.screen["name"] == "level" and s.session is not None
        return {"screen": s.screen_name(), "level": s.session.level.id if on_level else None,
                "P": s.session.progress if on_level else None,
                "effects": [dict(e) for e in effects]}

    def __getstate__(self) -> dict:
        d = dict(self.__dict__)
        d["_viewer"] = None
        d["_hasher"] = None
        if d["suite"] is not None:
            d["suite"] = (d["suite"].snapshot(), d["suite"].catalog)     # the exact app, as text, and its levels
        return d

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        if self.suite is not None:
            from longpuzzle.agents.media.framehash import FrameHasher
            from longpuzzle.engine.suite import Suite
            self.suite = Suite.restore(*self.suite)
            self._hasher = FrameHasher()


def _union(a: tuple, b: tuple) -> tuple:
    """The px box (x0, y0, x1, y1) around two boxes; (0, 0, 0, 0), an empty one, adds nothing."""
    if a[2] <= a[0] or a[3] <= a[1]:
        return b
    if b[2] <= b[0] or b[3] <= b[1]:
        return a
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])
