"""The scripted agents (no model endpoint; agents/registry.py names every agent). All act only
through GUI actions on pixels.

    random   enters the requested objective, then random gestures on the board (seeded)
    random_anywhere   random valid GUI actions anywhere on the frame, menus included
    solver   plans with the exhaustive solvers and acts through the gestures of the public
             screen layout, including menu navigation and advancing: it keeps its own
             model of the app (a Suite started where the protocol starts, fed the same
             actions), which stays exact because the engine is deterministic
    greedy   picks the legal move with the largest immediate progress, no look-ahead, and
             restarts when an action changes nothing on screen (the behaviour the paper
             diagnoses)
"""

from __future__ import annotations

import math
import random
import re
import time

import numpy as np

from longpuzzle.agents import plans as plan_store
from longpuzzle.agents.action_text import prefix_actions
from longpuzzle.agents.base import NO_VISIBLE_EFFECT, BaseAgent, FinalAnswer, Observation, first_action
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.geometry import Circle
from longpuzzle.engine.protocol import NOOP
from longpuzzle.engine.registry import puzzles
from longpuzzle.engine.suite import Suite

DESIGN_W = 540


class RandomAnywhereAgent(BaseAgent):
    """Random valid GUI actions anywhere on the frame (menus included: it wanders off its
    objective)."""
    name = "random_anywhere"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.w, self.h = action_spec["frame"]

    def act(self, obs: Observation):
        if obs.frame is None:
            return first_action(obs)
        r, w, h = self.rng, self.w, self.h
        k = r.random()
        if k < 0.6:
            return {"type": "click", "x": r.randrange(w), "y": r.randrange(h)}
        if k < 0.8:
            return {"type": "swipe", "direction": r.choice(["up", "down", "left", "right"]),
                    "x": r.randrange(w), "y": r.randrange(h)}
        if k < 0.95:
            return {"type": "drag", "x0": r.randrange(w), "y0": r.randrange(h), "x1": r.randrange(w),
                    "y1": r.randrange(h), "steps": 8}
        return {"type": "wait", "ms": 200}


_INSTR = re.compile(r"Complete all levels of (?P<title>.+?) at (?P<diff>\w+) difficulty(?: in the Game Suite)?\.?"
                    r"(?: \(level (?P<n>\d+)\))?")


class AppModelAgent(BaseAgent):
    """The base of the scripted agents that keep their own model of the app (a Suite fed the
    same actions; not a model endpoint): shared navigation (of the levels of
    ``catalog``, default the built-in catalogue: the one the episode plays)."""

    def __init__(self, style: str = "2d", seed: int = 0, catalog=None):
        self.style = style
        self.rng = random.Random(seed)
        self.catalog = catalog or builtin_catalog()

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        m = _INSTR.search(instruction)
        if not m:
            raise LongPuzzleError(f"{self.name} agent cannot read its objective from {instruction!r}")
        titles = {p.title: p.id for p in puzzles()}
        self.game, self.difficulty = titles[m.group("title")], m.group("diff")
        self.targets = self.catalog.objective(f"{self.game}/{self.difficulty}").level_ids
        # the frame it is given fixes the geometry: the game fitted into it (a frame of the
        # game's own shape is the game at that scale; any other is a letterboxed page)
        self._level_n = int(m.group("n")) if m.group("n") else None
        self.model = self._start_model()
        self.plan: list[int] = []

    def _start_model(self) -> Suite:
        """Its model of the app where the protocol starts: the home screen, or the level of a
        level-protocol instruction."""
        page = tuple(int(v) for v in self.action_spec["frame"])
        if self._level_n is not None:
            return Suite(self.targets[self._level_n - 1], style=self.style, direct=True, viewport=page,
                         catalog=self.catalog)
        return Suite("home", style=self.style, viewport=page, catalog=self.catalog)

    def take_over(self, takeover) -> None:
        """It continues an episode played before it (the D.1 takeover): its model of the app is
        rebuilt from the start through the takeover's public action prefix (action_text's
        reader; refused actions were never dispatched), so it plays on from exactly the screen
        the harness restored, without reading any hidden state. Every subclass continues so."""
        super().take_over(takeover)
        prefix = getattr(takeover, "prefix", ())
        if prefix:
            self.model = self._start_model()
            self.follow(prefix_actions(prefix))

    def follow(self, actions: list) -> None:
        """Its model of the app fed these public actions (a board it takes over); no plan."""
        for a in actions:
            self.model.dispatch(a)
        self.plan = []

    def _click_widget(self, wid: str) -> dict:
        w = next(w for w in self.model.layout().widgets if w.id == wid)
        cx, cy = w.shape.center
        px, py = self.model.proj.to_px(cx, cy)
        return {"type": "click", "x": int(round(px)), "y": int(round(py))}

    def navigate(self) -> dict | None:
        """A navigation action, or None when on a target level ready to play."""
        m = self.model
        name = m.screen["name"]
        if name == "home":
            return self._click_widget(f"game:{self.game}")
        if name == "difficulty":
            if m.screen["game"] != self.game:
                return self._click_widget("back")
            return self._click_widget(f"difficulty:{self.difficulty}")
        lvl = m.level
        if lvl.id not in self.targets:
            return self._click_widget("menu")
        if m.complete:
            if lvl.id == self.targets[-1]:
                return None
            if m.timer is not None:       # the game goes on by itself (Nut and Bolt on the hub): wait for it
                return {"type": "wait", "ms": max(1, m.timer["at"] - m.clock - m.action_gap_ms)}
            return self._click_widget("next" if not m.direct else "replay")
        if m.failed:                      # the game's own limits ended the level: try it again (its
            return self._click_widget("replay" if "replay" in m.layout() else "restart")   # card, or restart)
        return None

    def emit(self, action: dict) -> dict:
        self.model.dispatch(action)
        return action

    def external(self, action: dict) -> None:
        """An action another party dispatched in its episode (the workflow controller of
        ``diagnose rules``, agents/diagnose/workflow.py): its model of the app follows it."""
        self.model.dispatch(action)

    def act(self, obs: Observation):
        if obs.frame is None:
            return self.emit(first_action(obs))
        nav = self.navigate()
        if nav is not None:
            self.plan = []
            return self.emit(nav)
        if self.model.complete:
            return FinalAnswer("all levels complete")
        g = self.gesture(obs)
        if g is None:
            return self.emit(self._click_widget("restart"))
        return self.emit(g)

    def gesture(self, obs: Observation) -> dict | None:
        """The next gesture on the board, or None to restart the level."""
        a = self.choose(obs)
        return None if a is None else self.model.gesture_for(a)

    def choose(self, obs: Observation) -> int | None:
        raise NotImplementedError

    def leave_plan(self, move: int) -> None:
        """The agent is about to play ``move``, which its plan did not ask for (a dataset's
        detour): it drops the plan (the solver keeps it to repair, see SolverAgent)."""
        self.plan = []


class RandomAgent(AppModelAgent):
    """The baseline users expect: it enters the requested objective through the menus (as
    the solver does), then plays random gestures on the board - clicks on the board's
    pieces, drags between them, swipes - and advances after each level it happens to win.
    It never presses the HUD's buttons (restart, undo, menu)."""
    name = "random"

    def __init__(self, seed: int = 0, style: str = "2d", catalog=None):
        super().__init__(style, seed, catalog)

    def gesture(self, obs):
        m = self.model
        targets = [w for w in m.layout().widgets if w.kind == "target"]
        if not targets:
            return {"type": "wait", "ms": 200}
        r = self.rng

        def point(w=None):
            sh = (w or r.choice(targets)).shape
            if isinstance(sh, Circle):
                a, d = r.uniform(0, 2 * math.pi), sh.r * math.sqrt(r.random())
                x, y = sh.cx + d * math.cos(a), sh.cy + d * math.sin(a)
            else:
                x, y = r.uniform(sh.x0, sh.x1), r.uniform(sh.y0, sh.y1)
            px, py = m.proj.to_px(x, y)
            w_, h_ = m.frame_size
            return min(max(int(px), 0), w_ - 1), min(max(int(py), 0), h_ - 1)
        k = r.random()
        if k < 0.5:
            x, y = point()
            return {"type": "click", "x": x, "y": y}
        if k < 0.75:
            (x0, y0), (x1, y1) = point(), point()
            return {"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": 8, "ms": 300}
        x, y = point()
        return {"type": "swipe", "direction": r.choice(["up", "down", "left", "right"]), "x": x, "y": y}


class SolverAgent(AppModelAgent):
    """Plans with the solvers and plays each plan with as few pointer presses as a person
    would: one gesture per run of moves the game's screen can take in one press (a whole
    Color Connect route in one drag), else one per move. ``plans`` may give known solutions
    (level id -> move texts or action ints) used from a level's initial state instead of a
    search; the plans it searched for are kept (agents/plans.py: for the process, and on
    disk in the cache folder). After a detour (leave_plan) it mends the plan it left when
    it can (_repair), else it searches for a plan soon rather than the shortest (solve's
    ``shortest=False``)."""
    name = "solver"

    def __init__(self, style: str = "2d", seed: int = 0, budget: int = 20_000_000, plans: dict | None = None,
                 catalog=None):
        super().__init__(style, seed, catalog)
        self.budget = budget
        self.plans = plans or {}
        self._left = None        # (state before a detour, the detour's move, the plan it left)
        self._detoured = False   # the next plan is one after a detour
        self.mended_by = None    # how _repair mended the plan it left last (None: it did not)

    def leave_plan(self, move: int) -> None:
        self._left = (self.model.session.state.copy(), int(move), list(self.plan)) if self.plan else None
        self._detoured = True
        self.plan = []

    def _repair(self) -> list[int] | None:
        """After a detour: the plan it left, mended without a search, or None. Tried in this
        order (shortest first), the first that still solves the level from here wins:
        the old plan without the detour's move (when the plan had it), the old plan as it
        was, the detour undone (a legal move back to the state before it) then the old plan,
        and, where no move gives that state again, the nearest undo then the old plan: the
        legal move to the state that differs from the one before the detour in the fewest
        entries of its array (fewer than here does; e.g. Bolt Unscrew's screw put back, the
        boards it swung hanging at other angles). ``mended_by`` names the one that won
        (``without``, ``as is``, ``undone``, ``near undo``). When the old plan was shortest
        (opt moves from the state before the detour), every state one move from there needs
        at least opt - 1, so a plan mended by the first three is at most two moves longer
        than the shortest from here (and the first candidate is shortest); the nearest undo
        has no such bound (its state is not the one before), only its length, one more than
        the old plan's."""
        from longpuzzle.solvers.core import check_solution     # lazy: the solvers' kernels load at the first plan

        before, move, old = self._left
        self._left = None
        s = self.model.session
        level, p, here = s.level, s.puzzle, s.state
        candidates = []
        if move in old:
            i = old.index(move)
            candidates.append(("without", old[:i] + old[i + 1:]))
        candidates.append(("as is", old))
        near, near_d = None, int(np.count_nonzero(here != before))
        for u in p.legal_moves(level, here):
            back, code = p.step(level, here, u)
            if code > NOOP:
                continue
            d = int(np.count_nonzero(back != before))
            if d == 0:
                candidates.append(("undone", [u] + old))
                near = None
                break
            if d < near_d:
                near, near_d = u, d
        if near is not None:
            candidates.append(("near undo", [near] + old))
        for kind, plan in candidates:
            if check_solution(level, here, plan):
                self.mended_by = kind
                return plan
        self.mended_by = None
        return None

    def _plan(self) -> bool:
        from longpuzzle.solvers import solve        # lazy: the solvers' kernels load at the first plan

        s = self.model.session
        at_start = np.array_equal(s.state, s.level.initial)
        if at_start:                                     # a level's start (again, after a restart)
            self._left, self._detoured = None, False
        if self._left is not None:
            mended = self._repair()
            if mended is not None:
                self.plan = mended
                self._detoured = False
                return True
        known = self.plans.get(s.level.id)
        if known is not None and not s.moves and at_start:
            self.plan = [m if isinstance(m, int) else s.puzzle.parse_move(s.level, m) for m in known]
            return True
        # after a detour that it could not mend, a plan soon (solve's shortest=False): each
        # detour leads somewhere new, where a search for the shortest plan can take seconds
        shortest = not self._detoured
        self._detoured = False
        plan = plan_store.lookup(s.level, s.state, self.budget, shortest)
        if plan is plan_store.MISSING:
            t0 = time.perf_counter()
            res = solve(s.level, state=s.state.copy(), budget=self.budget, shortest=shortest)
            plan = tuple(res.actions) if res.status == "solvable" else None
            plan_store.keep(s.level, s.state, self.budget, shortest, plan, time.perf_counter() - t0)
        if plan is None:
            return False                 # a dead end (or out of budget): restart
        self.plan = list(plan)
        return True

    def gesture(self, obs):
        if not self.plan and not self._plan():
            return None
        g, k = self.model.gesture_run(self.plan)
        del self.plan[:k]
        return g

    def choose(self, obs):
        if not self.plan and not self._plan():
            return None
        return self.plan.pop(0)


class GreedyAgent(AppModelAgent):
    name = "greedy"

    def choose(self, obs):
        s = self.model.session
        if obs.feedback is not None and obs.feedback.status == NO_VISIBLE_EFFECT and s.moves:
            return None                  # nothing changed on screen: restart
        p = s.puzzle
        legal = p.legal_moves(s.level, s.state)
        if not legal:
            return None
        scored = [(p.progress(s.level, p.apply(s.level, s.state, a)), a) for a in legal]
        best = max(v for v, _ in scored)
        return self.rng.choice([a for v, a in scored if v == best])
