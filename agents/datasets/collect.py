"""Playing one dataset episode through the GUI and handing every step to the writer.

The episode is the benchmark's objective protocol (agents/harness/objective.py), driven one
agent step at a time through ``ObjectiveEpisode``: the agent starts on the home screen,
navigates, plays the objective's levels in order and advances through the game's own
controls, under the budget clock. The collector stands where the private evaluator does:
beside the frame and action the agent exchanged, it reads what the action did (the moves
the suite's effects name, P and the level's solved state, the evaluator's win) to label
the row. Nothing here changes what the agent sees or does.
"""

from __future__ import annotations

import time

import numpy as np

from longpuzzle.agents.base import FinalAnswer
from longpuzzle.agents.harness import ObjectiveEpisode, Settings
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.datasets.agents import make_agent
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Feedback as SuiteFeedback


def _screen(name: str) -> str:
    return name.split(":", 1)[0]


def play_episode(spec: dict, settings: dict, writer, catalog=None, oracle: bool = False) -> dict:
    """Play the planned episode ``spec`` (id, objective, seed, style, scale, and the agent's
    options) on the levels of ``catalog`` (default: the built-in catalogue) and queue its rows
    on ``writer``; returns the episode's manifest entry. ``oracle``: the rows carry the
    oracle's columns too (oracle_columns.py)."""
    game, diff = spec["objective"].split("/")
    # no clock unless asked (reproducible episodes); no dead-end certificates unless asked: a
    # row holds none, and certifying each new state searches (tens of ms a Bolt Unscrew state)
    opts = {"budget": None, "certify_budget": 0, **settings}
    st = Settings(style=spec["style"], scale=spec["scale"], save_frames=False,
                  **{k: v for k, v in opts.items() if k in ("budget", "max_actions", "action_timeout",
                                                             "certify_budget", "viewport")})
    agent = make_agent(spec["agent"], style=spec["style"], seed=spec["seed"], detours=spec.get("detours", 0.0),
                       restarts=spec.get("restarts", 0.0), gestures=spec.get("gestures", "runs"), catalog=catalog)
    recs: list[dict] = []
    ep = ObjectiveEpisode(game, diff, settings=st, folder=None, agent_name=getattr(agent, "name", "agent"),
                          on_action=lambda step, rec, left: recs.append(rec), catalog=catalog)
    caller = make_caller(agent, ep.settings.action_timeout)
    before = {"screen": "home", "level": None, "P": None, "state": None}
    labels = None
    if oracle:
        from longpuzzle.agents.datasets.oracle_columns import OracleLabels
        labels = OracleLabels(catalog)
    rows = detours = restarts = 0
    last_frame = None
    opening = None
    h_after = None
    t0 = time.perf_counter()
    # the box each frame changed in since the frame before (its render_delta): the PNG writer
    # hashes and compresses only the bands of rows inside it
    deltas = getattr(ep.run, "frame_deltas", None)
    delta_next = deltas[-1] if deltas else None
    shown = getattr(writer, "shown", None)
    # the harness's band digests of the frame it hashed last: the PNG stream's band keys
    hasher = getattr(getattr(ep.run, "traj", None), "hasher", None)
    for obs, action, out in ep.play(caller):
        delta = delta_next                                 # obs.frame's, as it stood before the step
        deltas = getattr(ep.run, "frame_deltas", None)
        delta_next = deltas[-1] if deltas else None
        if out.action is None or isinstance(action, FinalAnswer):
            continue                                   # refused, late or a final answer: no row
        rec = recs[-1]
        after = {"screen": _screen(rec["screen"]), "level": rec.get("level"), "P": rec.get("P"), "state": None}
        if labels is not None and after["level"] is not None and ep.suite.session is not None:
            after["state"] = np.array(ep.suite.session.state)      # the board after, for the oracle
        last_frame = out.frames[-1]
        h_before, h_after = h_after, out.hashes[-1]    # the harness hashed every frame already
        if shown is not None and out.ended is None:
            # the frame the next row holds, to the writer now, while its pixels are still in
            # the CPU's caches from drawing and hashing (the last frame of an episode is no row)
            shown(last_frame, h_after, delta_next, hasher.digests_for(last_frame) if hasher is not None else None)
            deltas = delta_next = None                 # (its row finds the PNG by the hash)
        if obs.frame is None:                          # the opening wait: no frame, no row
            before, opening = after, out.action
            continue
        variety = getattr(agent, "last_variety", None)
        detours += variety == "detour"
        restarts += variety == "restart"
        effects = rec.get("effects") or ()
        moves = [e["move"] for e in effects if e.get("effect") == "move"]
        lvl = before["level"]
        suite = ep.suite
        solved = bool(suite.session is not None and _screen(rec["screen"]) == "level" and suite.session.solved)
        meta = {"episode": spec["id"], "step": ep.run.step, "index": rows, "objective": spec["objective"],
                "game": game, "style": spec["style"], "scale": float(spec["scale"]),
                "screen": before["screen"], "level": lvl, "action": out.action, "variety": variety,
                "effect": _effect(effects), "moves": moves,
                "move_ids": _move_ids(lvl, moves, suite.catalog), "rejected": [e["move"] for e in effects
                                                                 if e.get("effect") == "rejected"],
                "P_before": before["P"], "P": after["P"], "solved": solved, "win": bool(rec.get("win")),
                "objective_complete": ep.ev.complete, "feedback": out.feedback.status,
                "frame_hash": h_before, "next_frame_hash": h_after}
        if labels is not None:
            meta.update(labels.row(lvl, before["state"], after["level"], after["state"], effects))
        writer.add(meta, obs.frame, delta)
        # let go of the frames before the one on screen before the next is drawn: the
        # renderer reuses the arrays of frames nobody holds, and each array in its rotation
        # costs a whole-frame copy when a level's board comes on screen (three arrays when
        # the frame before is still held, two when only the one on screen is)
        delta = obs = out = None
        rows += 1
        before = after
    res = ep.finish().as_dict()
    writer.end_episode(last_frame, h_after)
    return {"id": spec["id"], "objective": spec["objective"], "agent": spec["agent"], "seed": spec["seed"],
            "style": spec["style"], "scale": spec["scale"], "detours_p": spec.get("detours", 0.0),
            "restarts_p": spec.get("restarts", 0.0), "gestures": spec.get("gestures", "runs"),
            "viewport": ep.settings.viewport, "opening": opening,
            "rows": rows, "actions": res["actions"], "end": res["end"], "error": res.get("error", ""),
            "solved_levels": res["solved"], "target_levels": res["target_levels"],
            "detours": detours, "restarts": restarts, "seconds": round(time.perf_counter() - t0, 3)}


def _effect(effects) -> str:
    """The action's main effect, as the suite names it (Feedback.kind)."""
    return SuiteFeedback(list(effects)).kind


def _move_ids(level_id: str | None, moves: list[str], catalog) -> list[int]:
    """The actions of the move texts ``moves`` on ``level_id`` (each text read once per level,
    Level.move_action_cache: the episodes of an objective play the same moves again)."""
    if not moves or level_id is None:
        return []
    lvl = load_level(level_id, catalog)
    known = lvl.move_action_cache
    out = []
    for m in moves:
        a = known.get(m)
        if a is None:
            a = known[m] = int(get_puzzle(lvl.game).parse_move(lvl, m))
        out.append(a)
    return out
