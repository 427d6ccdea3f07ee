"""The budget clock: what an episode's time budget is charged with.

    charged = real    elapsed time on the harness's clock since the clock started (the
                      agent's thinking, dispatch, rendering, the evaluator's bookkeeping) -
                      minus the agent's own time when ``charge_agent_time`` is False (the
                      original level protocol pauses the game while the model predicts)
            + simulated  the suite's virtual clock over every action: waits, the press of a
                      click, drag / swipe / long-press durations, the input gap before each
                      action (engine/suite/app.py ACTION_GAP_MS) and the animations it ran
            + latency    ``action_latency`` seconds per executed action: the browser's
                      synchronisation after a dispatch (settings.ORIGINAL_SYNC_SECONDS)

So ``wait(600000)`` charges 600 s (plus the 0.25 s input gap), however fast the machine.
The objective protocol starts the clock at the agent's first action, which must be a wait
(PAPERS.md section 1); the level protocol starts it when the level is loaded.
"""

from __future__ import annotations

import math
import time


class BudgetClock:
    def __init__(self, budget: float | None, charge_agent_time: bool, action_latency: float = 0.0):
        self.budget = budget
        self.charge_agent_time = bool(charge_agent_time)
        self.action_latency = float(action_latency)
        self.t0: float | None = None
        self.t1: float | None = None           # stopped
        self.agent = 0.0                        # real seconds the agent took (after the start)
        self.simulated = 0.0
        self.latency = 0.0
        self.actions = 0                        # executed actions charged with latency
        self.at_deadline = False                # an action ran into the deadline

    # ---- running --------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self.t0 is not None

    def start(self) -> None:
        if self.t0 is None:
            self.t0 = time.perf_counter()

    def stop(self) -> None:
        if self.t0 is not None and self.t1 is None:
            self.t1 = time.perf_counter()

    def agent_call(self, seconds: float) -> None:
        """The agent took ``seconds`` of real time (counted only once the clock runs)."""
        if self.started:
            self.agent += seconds

    def action(self, simulated_ms: float, at_deadline: bool = False) -> None:
        """An executed action: its simulated duration and the per-action latency. With
        ``at_deadline`` the action ran into the deadline (the suite stopped there): the budget
        is spent, whatever real time the rest of the step takes."""
        if at_deadline:
            self.at_deadline = True
        self.simulated += simulated_ms / 1000.0
        self.latency += self.action_latency
        self.actions += 1

    # ---- reading ----------------------------------------------------------------------
    def real(self) -> float:
        if self.t0 is None:
            return 0.0
        return (self.t1 if self.t1 is not None else time.perf_counter()) - self.t0

    def charged(self) -> float:
        r = self.real()
        if not self.charge_agent_time:
            r = max(0.0, r - self.agent)
        return r + self.simulated + self.latency

    def left(self) -> float | None:
        """Charged seconds of budget left (the whole budget before the start; None: none)."""
        if self.budget is None:
            return None
        return self.budget - self.charged()

    def expired(self) -> bool:
        return self.budget is not None and self.started and (self.at_deadline or self.charged() >= self.budget)

    def agent_timeout(self, action_timeout: float | None) -> tuple[float | None, bool]:
        """(timeout for the next agent call, whether it is the budget's deadline): the agent
        gets min(action timeout, budget left) when its time is charged."""
        if not (self.started and self.budget is not None and self.charge_agent_time):
            return action_timeout, False
        left = max(0.0, self.left())
        if action_timeout is None or left < action_timeout:
            return left, True
        return action_timeout, False

    def deadline_ms(self, suite_clock: int) -> int | None:
        """The deadline on the suite's virtual clock for the next action (budget left, as
        simulated time from now), or None without a budget. Rounded up to whole ms: an
        event at whole ms t is before the deadline exactly when t < the rounded-up value,
        and an action cut there has used the whole budget (rounding down left a fraction of
        a ms that only slower code used to cover)."""
        if self.budget is None:
            return None
        return int(suite_clock + math.ceil(max(0.0, self.left()) * 1000.0))

    def parts(self) -> dict:
        """Real and charged time apart, with the parts the charged time is the sum of."""
        real, agent = self.real(), self.agent
        return {
            "real": round(real, 6), "charged": round(self.charged(), 6),
            "agent": round(agent, 6), "harness": round(real - agent, 6),
            "simulated": round(self.simulated, 6), "latency": round(self.latency, 6),
            "charge_agent_time": self.charge_agent_time, "action_latency": self.action_latency,
            "budget": self.budget,
        }
