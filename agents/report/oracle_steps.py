"""Every recorded step of an episode annotated by the oracle (solvers/oracle.py, issue 38):
d(s) after each action, the extra cost of its moves, the first fatal move, the moves played
on a lost board and the share of optimal moves. This project's own step metrics, reported
beside the paper's (``analyze --oracle``), never mixed into them.

    doc = oracle_steps(episode_folder)

An action's cost is moves + d(after) - d(before) over the states the recording holds before
and after it (an action may carry several moves; an undo or a restart is no move and costs
nothing: the attempt goes on from the state it brings). Costs: 0 every move on a shortest
path, k a detour of k moves, None where the board was already lost (inf - inf) or where d is
known only by bounds, "inf" for a fatal action (a solvable board made lost).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from longpuzzle.agents.report.data import episode_catalog, episode_trajectories, snapshot_state
from longpuzzle.engine.catalog import load_level


def oracle_steps(folder: str | Path, oracles: dict | None = None) -> dict:
    """The annotation of one episode folder (``oracles``: {(catalogue hash, level id): Oracle}
    shared between episodes of a run, so each level's graph is built once), its levels those
    of the catalogue the episode recorded."""
    from longpuzzle.solvers.oracle import Oracle, OracleError, keep     # lazy: the solvers' kernels

    oracles = {} if oracles is None else oracles
    cat = None

    def oracle_of(lid):
        return keep(oracles, (cat.content_hash, lid), lambda: Oracle(load_level(lid, cat)))

    steps, fatal = [], []
    moves = optimal = lost = inexact = judged = costed = 0
    extra = 0                                          # sum of the finite extra costs
    offset = 0
    for traj in episode_trajectories(folder):
        cat = cat or episode_catalog(traj.header)
        prev = None                                    # (level, Answer) before the next action
        if traj.level:
            o = oracle_of(traj.level)
            prev = (traj.level, o.at())
        last = offset
        for st in traj.steps:
            if st.final_answer is not None:
                continue
            x = offset + st.step
            last = x
            rec = st.record
            lid = rec.get("level")
            state = snapshot_state(st.snapshot)
            if lid is None or state is None:
                prev = None                            # off a level (menus)
                continue
            o = oracle_of(lid)
            try:
                now = o.at(np.array(state, dtype=o.level.initial.dtype))
            except OracleError:                        # pragma: no cover - a recording the rules do not reach
                prev = None
                continue
            eff = rec.get("effects") or []
            n = sum(e.get("effect") == "move" for e in eff)
            no_move = any(e.get("effect") in ("undo", "restart") for e in eff)
            cost = None
            if prev is not None and prev[0] == lid and n and not no_move:
                before = prev[1]
                moves += n
                if before.dead_end:
                    lost += n
                elif now.dead_end:
                    cost = "inf"
                    fatal.append([x, lid])
                    judged += n
                elif before.exact and now.exact:
                    cost = n + now.distance - before.distance
                    extra += cost
                    optimal += n if cost == 0 else 0
                    judged += n
                    costed += n
                else:
                    inexact += n
            steps.append([x, lid, now.distance, now.status, now.exact, cost])
            prev = (lid, now)
        offset = last
    return {"steps": steps, "moves": moves, "first_fatal": fatal[0] if fatal else None, "fatal": fatal,
            "lost_board_moves": lost, "optimal_moves": optimal, "inexact_moves": inexact, "judged_moves": judged,
            "optimal_share": round(100.0 * optimal / judged, 2) if judged else None,
            "mean_extra_cost": round(extra / costed, 4) if costed else None,
            "extra_cost": extra, "costed_moves": costed}


def annotate_run(doc: dict, episode_dirs: list, oracles: dict | None = None) -> dict:
    """Each episode's annotation into a run's analytics (analytics.analyze_run's document, its
    episodes in the order of ``episode_dirs``) and the run's step metrics beside them
    (``doc["oracle"]``); ``oracles`` shared between runs. Returns ``doc``."""
    oracles = {} if oracles is None else oracles
    for ep, folder in zip(doc["episodes"], episode_dirs):
        ep["oracle"] = oracle_steps(folder, oracles)
    doc["oracle"] = summary([ep["oracle"] for ep in doc["episodes"] if "oracle" in ep])
    return doc


def summary(docs: list[dict]) -> dict:
    """Run-level step metrics over episodes' annotations (this project's, not the paper's):
    shares among the judged moves (neither on a lost board nor known only by bounds)."""
    judged = sum(d["judged_moves"] for d in docs)
    fatal = sum(len(d["fatal"]) for d in docs)
    costed = sum(d.get("costed_moves", 0) for d in docs)
    return {"moves": sum(d["moves"] for d in docs), "judged_moves": judged, "fatal_actions": fatal,
            "lost_board_moves": sum(d["lost_board_moves"] for d in docs),
            "inexact_moves": sum(d["inexact_moves"] for d in docs),
            "optimal_share": round(100.0 * sum(d["optimal_moves"] for d in docs) / judged, 2) if judged else None,
            "fatal_rate": round(100.0 * fatal / judged, 2) if judged else None,
            "mean_extra_cost": round(sum(d.get("extra_cost", 0) for d in docs) / costed, 4) if costed else None}
