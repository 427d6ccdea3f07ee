"""Scripted agents that behave like the paper's model agents at a dead end (PAPERS.md section
5, RQ2), for the diagnostics lab's end-to-end tests and worked examples (no model endpoint).

    paper_filler     plays the move of most visible progress (so in Bolt Unscrew it fills the
                     last free hole); at a board where nothing moves any more it blames the
                     click ("the click did not register") and clicks again, and only after
                     ``patience`` such actions restarts - unless it is told the board is lost
                     (the state message of ``diagnose takeover``), then it restarts at once.
                     After a restart it plays greedily again (and so builds a new dead end).
    paper_rebuilder  restarts when told the board is lost and then plays again the very moves
                     that led to the board it took over: it rebuilds the same dead end, and
                     there blames the click. Untold, it blames the click and never restarts.

How they know the board they take over: from the public action prefix, as a model agent is
given it at takeover (D.1). ``prefix`` is the source episode's dispatched public actions up to
the takeover (exact, as diagnose takeover gives them); without it, the takeover context's
prefix text (``take_over``: the harness's ``Takeover``, lines such as ``step 7: click(412,
300) -> screen_changed``, read back by the one reader of that format, agents/action_text.py,
refused actions skipped: the scripted agents' common AppModelAgent.take_over). Each agent
replays them on its own model of the app (a Suite from the home screen, fed the same actions;
the engine is deterministic), so it starts from exactly the screen the harness restored,
without reading any hidden state.

Their text: a model agent's reasons are in its conversation.jsonl, which the attribution
coding (agents/diagnose/texts.py step_texts) reads. These agents write the same records to
the same file of the episode folder they are given (``folder``): per action a message naming
the screenshot it saw ({"image": {"step": S}}) and a "step" call whose reply text is the
reason for the action - so every diagnostic reads scripted and model agents alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from longpuzzle.agents.base import BaseAgent, FinalAnswer, Observation, first_action
from longpuzzle.agents.scripted import GreedyAgent

CONVERSATION = "conversation.jsonl"
# what in an instruction tells the agent its board is lost (the state message of diagnose
# takeover, in English and in Chinese): the agents' only way of being "told"
TOLD_LOST = re.compile(r"cannot be completed|Recovery is required|无法.{0,12}完成|需要恢复")

# the agents' own sentences (the attribution coding of diagnose takeover must read BLAME as
# blaming the click, RESTART_TOLD / RESTART_LATE as naming the board's state, MOVE as neither)
MOVE = "This move makes the most visible progress now (it fills a free spot and releases a piece)."
BLAME = "The click on the piece did not register (a missed click); I click it again more precisely."
RESTART_TOLD = "The state information says this board cannot be completed; I restart the level with the " \
               "visible Restart button."
RESTART_LATE = "Nothing responds after many attempts; I restart the level."
REBUILD = "Restarted: I repeat my plan, this move releases a piece."


class _TextLog:
    """A conversation.jsonl of a scripted agent, in the model agents' record format."""

    def __init__(self, folder: Path, agent: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / CONVERSATION
        self._write({"type": "header", "format": "longpuzzle-conversation/1", "agent": agent, "scripted": True},
                    mode="w")

    def _write(self, rec: dict, mode: str = "a") -> None:
        with open(self.path, mode, encoding="utf-8") as f:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def say(self, step: int, text: str) -> None:
        """The reason for the action chosen after seeing the screenshot of step ``step``."""
        self._write({"type": "message", "message": {"role": "user", "parts": [{"image": {"step": step}}]}})
        self._write({"type": "call", "kind": "step", "reply": {"text": text}})


class PaperAgent(GreedyAgent):
    """The common part: the prefix replayed at reset, the text log, told or not, the restart."""
    name = "paper"
    patience: int | None = None          # stuck actions before a restart of its own (None: never)

    def __init__(self, style: str = "2d", seed: int = 0, catalog=None, folder: str | Path | None = None,
                 prefix: list | None = None, patience: int | None = None):
        super().__init__(style, seed, catalog)
        self.folder = None if folder is None else Path(folder)
        self.prefix = list(prefix or [])
        if patience is not None:
            self.patience = patience
        self.log: _TextLog | None = None

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.follow(self.prefix)
        self.told = bool(TOLD_LOST.search(instruction))
        self.obeyed = False                         # it restarted after being told
        self.stuck = 0                              # actions at a board where nothing moves
        self.last: dict | None = None
        self.log = _TextLog(self.folder, self.name) if self.folder is not None else None

    def follow(self, actions: list) -> None:
        """Its model of the app through these public actions (the board it takes over), and
        the moves on that board since its level began."""
        super().follow(actions)
        self.taken_over = self.model.session.moves[:] if self.model.session is not None else []

    def take_over(self, takeover) -> None:
        """The takeover context (after reset): its prefix text read back (AppModelAgent), unless
        the exact ``prefix`` was given (then already followed at reset)."""
        if self.prefix:
            BaseAgent.take_over(self, takeover)
        else:
            super().take_over(takeover)

    def say(self, obs: Observation, text: str) -> None:
        if self.log is not None:
            self.log.say(obs.step, text)

    def restart(self, obs: Observation, text: str) -> dict:
        self.say(obs, text)
        self.stuck, self.plan = 0, []
        return self.emit(self._click_widget("restart"))

    def act(self, obs: Observation):
        if obs.frame is None:
            return self.emit(first_action(obs))
        nav = self.navigate()
        if nav is not None:
            return self.emit(nav)
        if self.model.complete:
            return FinalAnswer("all levels complete")
        if self.told and not self.obeyed:
            self.obeyed = True
            return self.restart(obs, RESTART_TOLD)
        s = self.model.session
        move = self.next_move()
        if move is None:                            # nothing moves: it blames the click
            self.stuck += 1
            if self.patience is not None and self.stuck > self.patience:
                return self.restart(obs, RESTART_LATE)
            self.say(obs, BLAME)
            return self.emit(self.last or self._a_piece())
        self.stuck = 0
        self.say(obs, REBUILD if self.rebuilding(s) else MOVE)
        self.last = self.model.gesture_for(move)
        return self.emit(self.last)

    def next_move(self) -> int | None:
        """The move it plays now, or None where it sees none."""
        s = self.model.session
        p = s.puzzle
        after = [(a, p.apply(s.level, s.state, a)) for a in p.legal_moves(s.level, s.state)]
        after = [(a, t) for a, t in after if not np.array_equal(t, s.state)]     # moves that change the board
        if not after:
            return None
        scored = [(p.progress(s.level, t), a) for a, t in after]
        best = max(v for v, _ in scored)
        return min(a for v, a in scored if v == best)     # ties: the first move (the same choices every time)

    def rebuilding(self, s) -> bool:
        return False

    def _a_piece(self) -> dict:
        """A click on the first piece on the board (its retry when it has no click to repeat)."""
        w = next((w for w in self.model.layout().widgets if w.kind == "target"), None)
        if w is None:
            return {"type": "wait", "ms": 500}
        px, py = self.model.proj.to_px(*w.shape.center)
        return {"type": "click", "x": int(round(px)), "y": int(round(py))}


class PaperFillerAgent(PaperAgent):
    """Greedy by visible progress; blames the click at a dead end and restarts late on its own
    (after ``patience`` = 12 stuck actions), at once when told the board is lost."""
    name = "paper_filler"
    patience = 12


class PaperRebuilderAgent(PaperAgent):
    """Restarts when told; then replays the moves that led to the board it took over (the same
    dead end again); blames the click wherever nothing moves, and never restarts untold."""
    name = "paper_rebuilder"
    patience = None

    def next_move(self) -> int | None:
        s = self.model.session
        done = s.moves
        plan = self.taken_over
        if self.obeyed and len(done) < len(plan) and done == plan[:len(done)]:
            return plan[len(done)]                  # the same moves again, in the same order
        return super().next_move() if not self.obeyed or done[:len(plan)] != plan else None

    def rebuilding(self, s) -> bool:
        return self.obeyed and len(s.moves) <= len(self.taken_over)
