"""Live sessions: a person playing in the browser, recorded as an ordinary episode.

The person is an agent like any other. ``HumanAgent.act`` hands the observation to the
page and waits for the page's next GUI action; the episode is driven by the harness's own
stepper and agent loop (ObjectiveEpisode / LevelEpisode ``play``, or ``continue_episode``
for a branch), on a thread of its own. So every action a person sends goes through the
same validation (Suite.validate) and dispatch as an agent's, and the episode folder is the
one ``longpuzzle replay`` verifies.

The clock: the person's time is the agent's time. The harness times each ``act`` call, from
handing over an observation to receiving the next action: the page drawing the frame, the
person looking and moving the pointer, the request coming back. The objective protocol
charges it to the budget (as for every agent); a human level session charges it too (a
person's game is not paused while they think), which its recorded settings say. The first
action of the objective protocol (a wait) is sent by the page as it opens: the clock starts
when the person first sees the screen.

Bounds: at most ``limit`` live sessions at once; a session whose page sends nothing for
``idle`` seconds ends (a final answer saying so, recorded); ``close`` ends every session
(the server stopping): nothing is lost, every folder ends with its result.
"""

from __future__ import annotations

import io
import queue
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from longpuzzle.agents.base import BaseAgent, FinalAnswer
from longpuzzle.agents.harness import HarnessError, Settings
from longpuzzle.agents.harness.agent_call import caller_isolation
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.harness.level import LevelEpisode
from longpuzzle.agents.harness.objective import ObjectiveEpisode
from longpuzzle.agents.harness.frames import open_frames
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError

DEFAULT_LIMIT = 4            # live sessions at once
DEFAULT_IDLE = 600.0         # seconds without an action from the page before a session ends
KEEP_ENDED = 600.0           # seconds an ended session stays readable before it is dropped
HUMAN = "human"              # the agent name of every human episode ("human/<player>" with a name)
PLAYER = re.compile(r"[A-Za-z0-9_-]{1,32}")
LEFT = "the player ended the session"
_STOP = object()             # the server is closing the session


class PlayError(HarnessError):
    """A live-session request that cannot be served (one line, for the page)."""


def human_name(player: str | None) -> str:
    """The agent name of a person's episodes: "human", or "human/<player>"."""
    if not player:
        return HUMAN
    if not PLAYER.fullmatch(player):
        raise PlayError("a player name is 1 to 32 letters, digits, '_' or '-'")
    return f"{HUMAN}/{player}"


def is_human(agent: str | None) -> bool:
    return isinstance(agent, str) and (agent == HUMAN or agent.startswith(HUMAN + "/"))


def png_bytes(frame: np.ndarray) -> bytes:
    """A frame as PNG (lossless: the page shows the engine's pixels; fast compression, the
    frame is drawn once and thrown away)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(frame, dtype=np.uint8), "RGB").save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


@dataclass
class Update:
    """What the page shows after an action: the frame, the step, the public feedback, and
    the end once the episode has ended (with the result's headline)."""
    version: int
    step: int
    frame: np.ndarray | None
    feedback: dict | None = None
    time_left: float | None = None
    ended: str | None = None
    result: dict = field(default_factory=dict)

    def state(self) -> dict:
        return {"version": self.version, "step": self.step, "feedback": self.feedback,
                "time_left": None if self.time_left is None else round(self.time_left, 1),
                "ended": self.ended, "result": self.result}


class HumanAgent(BaseAgent):
    """The person at the page: ``act`` publishes the observation to the session and returns
    the page's next action (or a final answer when they leave or stay idle too long)."""

    name = HUMAN

    def __init__(self, session: LiveSession):
        self.session = session

    def act(self, observation):
        if observation.frame is None:            # the objective protocol's first wait: the page is open
            return {"type": "wait", "ms": 0}
        return self.session.hand_over(observation)


class LiveSession:
    """One person's live episode (see the module doc). ``submit(action)`` gives the page's
    action to the agent loop and waits for what it produced; ``update`` is what the page
    shows now."""

    def __init__(self, kind: str, target: str, folder: Path, *, settings: Settings, catalog: Catalog,
                 player: str | None = None, idle: float = DEFAULT_IDLE, source: tuple[Path, int] | None = None):
        self.id = secrets.token_urlsafe(12)
        self.kind, self.target, self.folder = kind, target, Path(folder)
        self.settings, self.catalog, self.idle, self.source = settings, catalog, idle, source
        self.agent_name = human_name(player)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.cond = threading.Condition()
        self.update = Update(0, 0, None)
        self.last_seen = time.monotonic()
        self.ended_at: float | None = None
        self.error = ""
        self.thread = threading.Thread(target=self._run, name=f"play-{self.id[:6]}", daemon=True)

    # ---- the page's side ------------------------------------------------------------------
    def start(self, timeout: float = 60.0) -> Update:
        """Start the episode; returns the first screen (after the protocol's first wait)."""
        self.thread.start()
        return self.wait_for(0, timeout)

    def submit(self, action, timeout: float = 60.0) -> Update:
        """The page's next action (a GUI action dict, validated by the harness like an
        agent's); returns the update it produced (a refused action: the same frame, feedback
        dispatch_failed with the reason)."""
        with self.cond:
            if self.update.ended:
                raise PlayError(f"the session has ended ({self.update.ended})")
            seen = self.update.version
        self.last_seen = time.monotonic()
        self.inbox.put(action)
        return self.wait_for(seen, timeout)

    def leave(self, timeout: float = 60.0) -> Update:
        """The person ends the session (a final answer, recorded)."""
        with self.cond:
            if self.update.ended:
                return self.update
            seen = self.update.version
        self.inbox.put(FinalAnswer(LEFT))
        return self.wait_for(seen, timeout)

    def wait_for(self, seen: int, timeout: float) -> Update:
        """The first update after version ``seen`` (or the session's end)."""
        with self.cond:
            if not self.cond.wait_for(lambda: self.update.version > seen or self.update.ended, timeout):
                raise PlayError("the game did not answer in time")
            return self.update

    @property
    def ended(self) -> bool:
        return self.update.ended is not None

    def close(self) -> None:
        """End the session now (the server stopping, or the session dropped): what was played
        is recorded and the folder finished."""
        if not self.ended:
            self.inbox.put(_STOP)
        if self.thread.is_alive():
            self.thread.join(30)

    # ---- the agent's side ---------------------------------------------------------------
    def hand_over(self, obs):
        """HumanAgent.act: show ``obs``, then wait for the page's action."""
        fb = obs.feedback
        self._publish(Update(self.update.version + 1, obs.step, obs.frame,
                             None if fb is None else {"status": fb.status, "executed": fb.executed,
                                                      "message": fb.message},
                             obs.time_left))
        try:
            item = self.inbox.get(timeout=self.idle)
        except queue.Empty:
            return FinalAnswer(f"the player was idle for {self.idle:g} s")
        if item is _STOP:
            return FinalAnswer("the server closed the session")
        return item

    def _publish(self, up: Update) -> None:
        with self.cond:
            self.update = up
            self.cond.notify_all()

    def _run(self) -> None:
        agent = HumanAgent(self)
        try:
            if self.kind == "branch":
                from longpuzzle.agents.harness.replay import continue_episode
                src, step = self.source
                res = continue_episode(src, step, agent, settings=self.settings, out=self.folder,
                                       catalog=self.catalog)
                summary = _headline(res)
            else:
                summary = self._play(agent)
            self._finish(summary)
        except Exception as e:  # noqa: BLE001 - an infrastructure failure: said on the page, never silent
            self.error = f"{type(e).__name__}: {e}"
            self._finish({"end": "infrastructure_error", "error": self.error})

    def _play(self, agent: HumanAgent) -> dict:
        """A new episode: an objective from the home screen, or one level launched directly
        (the level protocol), through the stepper's own agent loop (as run_objective and the
        level chain drive it)."""
        st = self.settings
        if self.kind == "objective":
            game, diff = self.target.split("/")
            ep = ObjectiveEpisode(game, diff, settings=st, folder=self.folder, agent_name=self.agent_name,
                                  catalog=self.catalog)
        else:
            ep = LevelEpisode(self.target, settings=st, folder=self.folder, agent_name=self.agent_name,
                              catalog=self.catalog)
        caller = make_caller(agent, st.action_timeout)
        for _ in ep.play(caller):
            pass
        if self.kind == "objective":
            return _headline(ep.finish({"agent_isolation": caller_isolation(caller)}))
        out = ep.finish(caller_isolation(caller))
        return {"end": out["termination"], "success": out["success"], "actions": out["steps"],
                "presses": out["presses"]}

    def _finish(self, summary: dict) -> None:
        frame = self.update.frame
        try:                              # the last frame the episode recorded (after its last action)
            with open_frames(self.folder) as store:
                if len(store):
                    frame = store.read(len(store) - 1)
        except HarnessError:              # no frames stored (nothing was played): keep the last shown
            pass
        self.ended_at = time.monotonic()
        self._publish(Update(self.update.version + 1, summary.get("actions", self.update.step), frame,
                             self.update.feedback, None, summary.get("end") or "ended",
                             {**summary, "folder": str(self.folder)}))


def _headline(res) -> dict:
    """An objective episode's result as the page says it."""
    return {"end": res.end, "success": res.outcome.success, "solved": res.outcome.solved_count,
            "target_levels": len(res.outcome.levels), "actions": res.actions, "presses": res.presses}


def human_settings(*, style: str = "2d", scale: float = 1.0, lang: str = "en", viewport=None,
                   budget: float | None = None, base: Settings | None = None) -> Settings:
    """The settings of a person's episode: no per-call timeout (a person may think; the idle
    limit ends an abandoned session), their time charged, frames stored (the viewer shows
    them); ``base``: a branched episode's recorded settings, kept otherwise."""
    import dataclasses

    if base is not None:
        return dataclasses.replace(base, action_timeout=None, save_frames=True)
    return Settings(style=style, scale=scale, lang=lang, viewport=viewport, budget=budget, action_timeout=None,
                    charge_agent_time=True, save_frames=True)


def dispatched_step(folder: str | Path, step: int) -> int:
    """The state after recorded step ``step`` as a step restore_step takes: ``step`` itself when
    its action was dispatched, else the last dispatched step before it (a refused action, a
    final answer change nothing), 0 for the start. PlayError past the episode's last step."""
    from longpuzzle.agents.harness.trajectory import read_events

    last, best = 0, 0
    for rec in read_events(folder)[1:]:
        k = rec.get("step")
        if type(k) is int:
            last = max(last, k)
            if rec.get("stream") == "private" and ("snapshot" in rec or "suite" in rec) and k <= step:
                best = max(best, k)
    if step > last:
        raise PlayError(f"the episode has {last} steps, not {step}")
    return best


class SessionPool:
    """The live sessions of one server: at most ``limit`` at once, each recorded into its own
    folder under ``out``; ended ones are dropped after KEEP_ENDED seconds."""

    def __init__(self, out: str | Path, *, catalog: Catalog | None = None, limit: int = DEFAULT_LIMIT,
                 idle: float = DEFAULT_IDLE):
        self.out = Path(out)
        self.catalog = catalog or builtin_catalog()
        self.limit, self.idle = limit, idle
        self.sessions: dict[str, LiveSession] = {}
        self.lock = threading.Lock()

    def _folder(self, slug: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        return self.out / f"{stamp}-{slug.replace('/', '_')}-{secrets.token_hex(3)}"

    def _admit(self, s: LiveSession) -> LiveSession:
        self.sweep()
        with self.lock:
            if sum(not x.ended for x in self.sessions.values()) >= self.limit:
                raise PlayError(f"{self.limit} live sessions are running (the limit); end one first")
            self.sessions[s.id] = s
        return s

    def new(self, target: str, *, player: str | None = None, style: str = "2d", scale: float = 1.0,
            lang: str = "en", viewport=None, budget: float | None = None) -> LiveSession:
        """A session playing ``target``: an objective "game/difficulty" from the home screen,
        or a level "game/difficulty/n" launched directly."""
        parts = target.split("/") if isinstance(target, str) else []
        try:
            if len(parts) == 2:
                kind = "objective"
                self.catalog.objective(target)
            elif len(parts) == 3:
                kind = "level"
                self.catalog.level(target)
            else:
                raise PlayError("play an objective (game/difficulty) or a level (game/difficulty/n)")
        except LongPuzzleError as e:          # the catalogue's UnknownLevelError: one line for the page
            raise PlayError(str(e)) from None
        st = human_settings(style=style, scale=scale, lang=lang, viewport=viewport, budget=budget)
        return self._admit(LiveSession(kind, target, self._folder(target), settings=st, catalog=self.catalog,
                                       player=player, idle=self.idle))

    def branch(self, folder: str | Path, step: int, *, player: str | None = None) -> LiveSession:
        """A session continuing recorded episode ``folder`` from step ``step``, restored
        exactly (replay.continue_episode: the new episode records where it continues from
        and replays only while the source does)."""
        from longpuzzle.agents.harness.recompute import recorded_settings
        from longpuzzle.agents.harness.replay import recorded_catalog, restore_step
        from longpuzzle.agents.harness.trajectory import read_events

        head = read_events(folder)[0]
        if head.get("protocol") != "objective":
            raise PlayError("only objective episodes can be branched (a level-protocol episode is one level)")
        cat = recorded_catalog(head.get("catalog"), self.catalog)
        step = dispatched_step(folder, step)
        restore_step(folder, step, cat)
        st = human_settings(base=recorded_settings(head))
        return self._admit(LiveSession("branch", head["objective"], self._folder(f"branch-{head['objective']}"),
                                       settings=st, catalog=cat, player=player, idle=self.idle,
                                       source=(Path(folder), step)))

    def get(self, sid: str) -> LiveSession:
        with self.lock:
            s = self.sessions.get(sid)
        if s is None:
            raise PlayError("no such live session (it ended and was dropped, or never existed)")
        return s

    def sweep(self) -> None:
        """Drop sessions that ended more than KEEP_ENDED seconds ago."""
        now = time.monotonic()
        with self.lock:
            for sid in [k for k, s in self.sessions.items() if s.ended_at is not None and now - s.ended_at > KEEP_ENDED]:
                del self.sessions[sid]

    def close(self) -> None:
        """End every live session (the server stopping): each folder is finished."""
        with self.lock:
            live = list(self.sessions.values())
        for s in live:
            s.close()
