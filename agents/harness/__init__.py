"""Episodes: an agent in front of the suite, measured by the private evaluator.

Protocols
    objective   the paper's (objective.py): start on the home screen with one instruction
                ("Complete all levels of <game> at <difficulty> difficulty ..."); the agent
                navigates, solves the objective's levels in order, advances and restarts
                through the game's own controls. One wall-clock budget (agent time included)
                and optionally a maximum number of actions cover the whole objective. Ends at
                full completion, at the agent's FinalAnswer, at the budget, or on an agent error.
    level       the original repository's (level.py): every level launched directly, with
                the per-game step and play-time limits, the 3-consecutive-invalid-actions
                limit and the no-progress / repeating-cycle rule (HARNESS.md sections 3 and 6).

The modules, one job each:

    settings.py     Settings, the default budget and timeouts, the instruction text, HarnessError
    agent_call.py   the agent caller interface; the in-process caller of trusted agents (a
                    timeout per call, failures become AgentError)
    isolated.py     AgentFile and its IsolatedAgentCaller: an agent file in a sandboxed process
                    (longpuzzle.agents.sandbox) that gets only the public observation;
                    make_caller picks one of the two callers for an agent
    agent_host.py   the program that runs the agent file inside that process (standalone)
    run.py          one episode's machinery: validate, dispatch, render, record one action
    feedback.py     public feedback from frames alone
    cycles.py       the level protocol's no-progress / repeating-cycle detector
    trajectory.py   the episode folder (events.jsonl, frames.lpf, result.json): crash-safe writing
                    off the main thread, reading the events back
    episode_folder.py  an episode folder as files: its recorded screenshot hash at a step, a linked copy
    frames.py       frame hashes, the lossless frame file, and the API that reads stored frames
    snapshots.py    the exact suite state in private records (full snapshots now and then, deltas
                    between) and rebuilding the state after any step
    results.py      EpisodeResult and the part of a result that a replay must reproduce
    objective.py    ObjectiveEpisode (the paper's protocol, driven one agent step at a time:
                    by run_objective's agent calls, or by a tool server) and run_objective
    level.py        LevelEpisode (the original repository's protocol, one level driven one agent
                    step at a time, as ObjectiveEpisode) and run_level_chain
    replay.py       replay_episode (feeds every recorded action through the protocol's own stepper,
                    checks every frame, record, snapshot and ending, recomputes result.json;
                    refuses tampered folders), restore_step, continue_episode
    takeover.py     build_takeover: the D.1 takeover context of a recorded episode at a step
                    (public action prefix as text, screenshot-action pairs, current screenshot;
                    replay.takeover_at draws the screenshots an episode did not store)

Everything a caller needs is importable from ``longpuzzle.agents.harness``.
"""

from longpuzzle.agents.harness.agent_call import AgentCaller
from longpuzzle.agents.harness.cycles import CycleDetector
from longpuzzle.agents.base import FeedbackTracker
from longpuzzle.agents.harness.isolated import AgentFile, IsolatedAgentCaller, make_caller
from longpuzzle.agents.harness.level import LevelEpisode, run_level_chain
from longpuzzle.agents.harness.objective import ObjectiveEpisode, StepOutcome, run_objective
from longpuzzle.agents.harness.replay import ReplayReport, continue_episode, replay_episode, restore_step, takeover_at
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.settings import (
    DEFAULT_ACTION_TIMEOUT, DEFAULT_BUDGET, HarnessError, Settings, instruction_for,
)
from longpuzzle.agents.harness.frames import (
    FRAME_HASH, FrameHasher, FrameStore, FrameStoreError, frame_hash, open_frames, step_frame_indices,
)
from longpuzzle.agents.harness.trajectory import EVENTS_FORMAT, Trajectory, read_episode, read_events
from longpuzzle.agents.harness.takeover import action_text, build_takeover

__all__ = [
    "AgentCaller", "AgentFile", "CycleDetector", "DEFAULT_ACTION_TIMEOUT", "DEFAULT_BUDGET", "EVENTS_FORMAT", "EpisodeResult",
    "FRAME_HASH", "FeedbackTracker", "FrameHasher", "FrameStore", "ObjectiveEpisode", "StepOutcome", "FrameStoreError",
    "HarnessError", "IsolatedAgentCaller", "LevelEpisode", "ReplayReport", "Settings", "Trajectory",
    "action_text", "build_takeover", "continue_episode", "frame_hash", "instruction_for",
    "make_caller", "open_frames", "read_episode", "read_events",
    "replay_episode", "restore_step", "run_level_chain", "run_objective", "step_frame_indices", "takeover_at",
]
