"""RQ1's same-state action intervention (PAPERS.md section 5, D.2; ``diagnose branch run``).

From one exact state s of a level, two branches: one plays a COSTLY move, with extra cost
e(s, a) = 1 + d(T(s, a)) - d(s) > 0 (a detour, not fatal: both successors are verified
solvable by the oracle, solvers/oracle.py), the other a SHORTEST-PATH move (e = 0). Then the
agent continues from each successor under the same limits; the outcome is same-level
completion. Only the branch move differs between the two arms of a unit (a state and a
repeat): the paper's matched block.

Where the states come from:
    recorded runs (``find_states``)  every accepted move of an objective episode whose cost
                was 0 < e < inf is a candidate: the agent was SEEN to play that costly move
                from that state; one candidate per level first, in level order, then more
    from scratch (``generate_states``)  the ``solver`` agent plays the level's objective
                through the harness (a real episode folder, ``sources/``) until it has won
                the level; the states along its verified solution that have a costly legal
                move (the cheapest one the oracle lists with e > 0) are the candidates

How a branch is played: the branch move is an ordinary GUI action (the gesture the screen's
layout makes for that move) recorded as a continuation of the source episode at its step
(``branches/<state>-<arm>/``, ``continued_from`` the source; a replay verifies it); the
episode that played it must have applied exactly that move, and the oracle checks the
successor: solvable, d(T(s, a)) = d(s) - 1 + e. The agent's continuation then continues
that folder after the branch move (``episodes/<unit>-<arm>/``), so every continuation replays
back to the recorded source.

The schedule: each state x repeat is a unit with both arms; the arm played first alternates
(unit i plays costly first when i is even), so the branch order is balanced. A continuation
that ends in an infrastructure failure is replaced under the same assignment (the first
valid attempt is primary): the lab's study runner (study.py) plays the schedule and writes
the study folder of its convention (study.json, units.jsonl, episodes/), with the tables of
``branch_tables``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from longpuzzle.agents.base import BaseAgent, FinalAnswer, first_action
from longpuzzle.agents.diagnose import study
from longpuzzle.agents.diagnose.stats import DRAWS, SEED, Count, cluster_bootstrap, paired_effect
from longpuzzle.agents.harness.replay import continue_episode, restore_step
from longpuzzle.agents.harness.settings import HarnessError, Settings
from longpuzzle.agents.report.data import episode_folders, load_trajectory, snapshot_state
from longpuzzle.engine.errors import LongPuzzleError

ARMS = ("costly", "shortest")
BRANCH_ACTIONS = 2                 # the branch episode's actions: the opening wait, the branch move
MIN_DISTANCE = 2                   # d(s) >= 2: the shortest arm's successor is still unsolved


class BranchError(HarnessError):
    """A branch that cannot be played or verified (one ``error:`` line at the command)."""


@dataclass
class BranchState:
    """One state s of the intervention and its two branch moves."""
    id: str                        # "s01", ...
    level: str
    source: str                    # the bootstrap group: the level the state is of
    episode: str                   # the recorded objective episode holding s (absolute path)
    step: int                      # s is the state after this recorded step
    distance: int                  # d(s)
    costly: dict                   # {"move", "action", "cost": e(s, a) > 0, "seen": played by the agent}
    shortest: dict                 # {"move", "action", "cost": 0}

    def as_dict(self) -> dict:
        return asdict(self)


class _Oracles:
    """One oracle per level (they cache what they learn)."""

    def __init__(self):
        self._by = {}

    def __call__(self, level):
        from longpuzzle.solvers.oracle import Oracle

        if level.id not in self._by:
            self._by[level.id] = Oracle(level)
        return self._by[level.id]


def _finite_positive(c) -> bool:
    return c is not None and c != math.inf and c > 0


def _idle(snapshot: str | None) -> bool:
    """No selection pending on the screen (the UI state a move's gesture starts from)."""
    if not snapshot:
        return False
    ui = json.loads(snapshot).get("ui") or {}
    return ui.get("selected") is None


def _candidates_in(folder: Path, oracles: _Oracles) -> list[dict]:
    """The costly moves an agent played in one objective episode folder: for each accepted
    move (one per action) whose cost was 0 < e < inf, from a state with d(s) >= MIN_DISTANCE
    and a shortest-path alternative, the last idle step before it (no selection pending: a
    move made of a selection click and a target click starts from the step before the
    selection) with the board as the move found it."""
    import numpy as np

    from longpuzzle.agents.report.data import episode_catalog
    from longpuzzle.engine.catalog import load_level

    traj = load_trajectory(folder)
    if traj.header.get("protocol") != "objective":
        return []
    cat = episode_catalog(traj.header)
    out = []
    prev_state = None                     # the board after the previous step
    idle = None                           # (step, board, screen) of the last idle step
    for st in traj.steps:
        if st.final_answer is not None:
            continue
        rec, state = st.record, snapshot_state(st.snapshot)
        lid = rec.get("level")
        moves = [e for e in rec.get("effects") or [] if e.get("effect") == "move"]
        if (lid and idle is not None and idle[1] is not None and idle[1] == prev_state
                and idle[2] == f"level:{lid}" and len(moves) == 1
                and moves[0].get("accepted", True) and moves[0].get("changed", True)):
            lvl = load_level(lid, cat)
            o = oracles(lvl)
            try:
                s = np.array(prev_state, dtype=lvl.initial.dtype)
                before = o.at(s)
                if before.exact and (before.distance or 0) >= MIN_DISTANCE and not before.dead_end:
                    mc = o.cost(s, moves[0]["move"], before)
                    best = [m for m in o.best(s) if m.cost == 0]
                    if _finite_positive(mc.cost) and best:
                        out.append({"level": lid, "episode": str(folder), "step": idle[0],
                                    "distance": before.distance,
                                    "costly": {"move": mc.move, "action": mc.action, "cost": int(mc.cost),
                                               "seen": True},
                                    "shortest": {"move": best[0].move, "action": best[0].action, "cost": 0}})
            except LongPuzzleError:        # a state the oracle cannot answer for: not a candidate
                pass
        prev_state = state
        if _idle(st.snapshot):
            idle = (st.step, state, rec.get("screen"))
    return out


def _pick(cands: list[dict], limit: int) -> list[BranchState]:
    """At most ``limit`` candidates, one per level first (levels in order), then the next of
    each level in turn; numbered s01, s02, ..."""
    by: dict[str, list[dict]] = {}
    for c in cands:
        by.setdefault(c["level"], []).append(c)
    picked, k = [], 0
    while len(picked) < limit and any(k < len(v) for v in by.values()):
        for lid in sorted(by):
            if k < len(by[lid]) and len(picked) < limit:
                picked.append(by[lid][k])
        k += 1
    return [BranchState(f"s{i:02d}", c["level"], c["level"], c["episode"], c["step"], c["distance"],
                        c["costly"], c["shortest"]) for i, c in enumerate(picked, 1)]


def find_states(folders, *, limit: int = 3, level: str | None = None) -> list[BranchState]:
    """States of recorded runs (run or episode folders) from which the agent played a costly,
    non-fatal move (0 < e < inf), at most ``limit`` (one per level first); only those of
    ``level`` when given."""
    from longpuzzle.agents.diagnose.rq1 import refuse_other_catalogues
    from longpuzzle.agents.diagnose.study import replay_problem

    oracles = _Oracles()
    cands = []
    for root in folders:
        root = Path(root)
        if not root.is_dir():
            raise BranchError(f"{root} is not a folder")
        refuse_other_catalogues([root])          # before any state is looked for
        for ep in episode_folders(root):
            found = [c for c in _candidates_in(ep.resolve(), oracles) if level is None or c["level"] == level]
            problem = found and replay_problem(ep.parent, ep.name)       # the branches continue it
            if problem:
                raise BranchError(f"{ep.parent}/{problem}: its branches could not replay")
            cands += found
    return _pick(cands, limit)


def generate_states(level: str, out: str | Path, *, limit: int = 3, settings: Settings | None = None
                    ) -> list[BranchState]:
    """From scratch: the solver agent plays ``level``'s objective through the harness until it
    has won ``level`` (a recorded episode under ``out``), and the states along that verified
    solution from which the oracle lists a costly, non-fatal legal move are the candidates
    (that move: the cheapest with e > 0)."""
    import numpy as np

    from longpuzzle.agents.harness.objective import run_objective
    from longpuzzle.engine.catalog import load_level

    lvl = load_level(level)
    folder = Path(out)
    if not (folder / "result.json").is_file():
        agent = _SolveThrough(level)
        st = settings or Settings(action_timeout=None)
        run_objective(agent, lvl.game, lvl.difficulty, settings=st, folder=folder)
        if not agent.won:
            raise BranchError(f"the solver agent did not win {level} within the limits")
    oracles = _Oracles()
    o = oracles(lvl)
    traj = load_trajectory(folder)
    cands = []
    for st in traj.steps:
        rec = st.record
        if rec.get("level") != level or rec.get("screen") != f"level:{level}" or rec.get("win") \
                or not _idle(st.snapshot):
            continue
        state = snapshot_state(st.snapshot)
        if state is None:
            continue
        s = np.array(state, dtype=lvl.initial.dtype)
        before = o.at(s)
        if not before.exact or (before.distance or 0) < MIN_DISTANCE:
            continue
        ms = o.moves(s)
        costly = [m for m in ms if _finite_positive(m.cost)]
        best = [m for m in ms if m.cost == 0]
        if costly and best:
            c = costly[0]
            cands.append({"level": level, "episode": str(folder.resolve()), "step": st.step,
                          "distance": before.distance,
                          "costly": {"move": c.move, "action": c.action, "cost": int(c.cost), "seen": False},
                          "shortest": {"move": best[0].move, "action": best[0].action, "cost": 0}})
    # spread over the solution: evenly spaced candidates, not the first few
    if len(cands) > limit:
        idx = sorted({round(i * (len(cands) - 1) / max(1, limit - 1)) for i in range(limit)})
        cands = [cands[i] for i in idx]
    return _pick(cands, limit)


class _SolveThrough(BaseAgent):
    """The solver agent until it has won ``level`` (then it stops with a final answer)."""
    name = "solver"

    def __init__(self, level: str):
        from longpuzzle.agents.scripted import SolverAgent

        self.inner, self.level, self.won = SolverAgent(), level, False

    def reset(self, instruction, action_spec):
        super().reset(instruction, action_spec)
        self.inner.reset(instruction, action_spec)

    def act(self, obs):
        m = self.inner.model
        if m.session is not None and m.level.id == self.level and m.complete:
            self.won = True
            return FinalAnswer(f"{self.level} is won")
        return self.inner.act(obs)


class _BranchMove(BaseAgent):
    """Plays one GUI action (the branch move's gesture) after the opening wait, then stops."""
    name = "branch-move"

    def __init__(self, gesture: dict):
        self.gesture, self.done = gesture, False

    def act(self, obs):
        if obs.frame is None:
            return first_action(obs)
        if self.done:
            return FinalAnswer("branch move played")
        self.done = True
        return self.gesture


def play_branch(state: BranchState, arm: str, folder: str | Path, oracles: _Oracles | None = None) -> dict:
    """The branch move of ``arm`` played from ``state`` as a continuation of its source episode
    (``folder``), then verified: the episode applied exactly that move, the successor is the
    oracle's T(s, a), solvable, at the distance the move's cost says. Returns the branch's
    record {"folder", "step" (where the agent continues), "move", "cost", "distance_after"}."""
    import numpy as np

    move = getattr(state, arm)
    folder = Path(folder)
    suite = restore_step(state.episode, state.step)          # on the catalogue the source recorded
    if suite.session is None or suite.level.id != state.level:
        raise BranchError(f"{state.id}: step {state.step} of {state.episode} is not on {state.level}")
    gesture = suite.gesture_for(move["action"])
    if suite.interpret(gesture) != [move["action"]]:
        raise BranchError(f"{state.id}: the gesture for {move['move']} does not make that move on the screen")
    if not (folder / "result.json").is_file():
        st = source_settings(state, None, BRANCH_ACTIONS)
        st.action_timeout = None
        continue_episode(state.episode, state.step, _BranchMove(gesture), settings=st, out=folder)
    after = restore_step(folder, BRANCH_ACTIONS)
    lvl = suite.level
    o = (oracles or _Oracles())(lvl)
    s = np.array(snapshot_state(suite.snapshot()), dtype=lvl.initial.dtype)
    want, _ = o.after(s, move["action"])
    got = after.session.state if after.session is not None and after.level.id == state.level else None
    if got is None or not np.array_equal(np.asarray(got), want):
        raise BranchError(f"{state.id}: the {arm} branch episode did not apply {move['move']} (see {folder})")
    ans = o.at(want)
    d_after = state.distance - 1 + move["cost"]
    if ans.dead_end or not ans.exact or ans.distance != d_after:
        raise BranchError(f"{state.id}: the successor of {move['move']} is not solvable at distance {d_after} "
                          f"({ans.status}, d = {ans.distance})")
    return {"folder": str(folder), "step": BRANCH_ACTIONS, "move": move["move"], "cost": move["cost"],
            "distance_after": ans.distance}


def schedule(states: list[BranchState], repeats: int) -> list[dict]:
    """The fixed interleaved schedule (the study runner's): unit = (state, repeat) with both
    arms, repeats outermost; the arms' order rotates from unit to unit, so unit i plays the
    costly arm first when i is even (balanced order)."""
    units = [{"unit": f"{s.id}r{r}", "state": s.id, "repeat": r, "source": s.source, "checkpoint": s.id}
             for r in range(1, repeats + 1) for s in states]
    return study.interleaved(units, lambda u: ARMS)


def continuation_endpoints(folder: str | Path, level: str) -> dict:
    """What a continuation did on the branch's level: won it (same-level completion), at which
    of its actions, its best progress there; and the episode's actions, charged seconds and
    how it ended."""
    traj = load_trajectory(folder)
    won_at, best = None, 0.0
    for st in traj.steps:
        rec = st.record
        if rec.get("level") == level:
            best = max(best, rec.get("P") or 0.0)
            if rec.get("win") and won_at is None:
                won_at = st.step
    res = json.loads(Path(folder, "result.json").read_text(encoding="utf-8")) \
        if Path(folder, "result.json").is_file() else {}
    return {"completed": won_at is not None, "actions_to_win": won_at, "best_P": round(best, 6),
            "actions": res.get("actions"), "end": res.get("end") or (traj.end or {}).get("end"),
            "charged_seconds": res.get("charged_seconds")}


def source_settings(state: BranchState, budget: float | None, max_actions: int | None,
                    harness: str | None = None) -> Settings:
    """The settings a continuation plays under: the source episode's own (its screen, language,
    protocol rules, action timeout), with the study's limits, under ``harness`` (presets:
    "d1" charges the runner's 2 s wait; the screen stays the source's, as recorded)."""
    from longpuzzle.agents.harness.presets import harness_settings

    with open(Path(state.episode, "events.jsonl"), encoding="utf-8") as f:
        head = json.loads(f.readline())
    given = {k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__}
    return harness_settings(harness, Settings(**{**given, "budget": budget, "max_actions": max_actions}),
                            keep_screen=True)


def run_study(states: list[BranchState], make_agent, out: str | Path, *, repeats: int = 3,
              budget: float | None = 300.0, max_actions: int | None = 600, agent: str | dict = "",
              harness: str | None = None, draws: int = DRAWS, seed: int = SEED, note: str = "") -> dict:
    """The whole intervention: play both branch moves of every state (verified), then every
    unit's two continuations in the schedule's order (``make_agent(objective, folder)`` a
    fresh agent for each, e.g. agent_options.AgentChoice.make: a model agent logs its
    conversation in the continuation's folder), each under the source episode's settings with
    the limits ``budget`` (charged seconds) and ``max_actions`` (the paper: 300 s, 600
    actions) and the ``harness`` (presets.HARNESSES: "d1" the diagnostics'), appending
    units.jsonl as it goes, and write study.json at the end (atomically). Returns the study
    document. Resumable: run again on the same folder with the same states, it
    keeps every continuation units.jsonl already records, plays again one that was cut off
    (a folder without result.json) and goes on where the schedule stopped."""
    out = Path(out)
    oracles = _Oracles()
    branches = {(s.id, arm): play_branch(s, arm, out / "branches" / f"{s.id}-{arm}", oracles)
                for s in states for arm in ARMS}
    sched = schedule(states, repeats)
    by_id = {s.id: s for s in states}

    def play(u: dict, arm: str, folder: Path) -> None:
        s, b = by_id[u["state"]], branches[(u["state"], arm)]
        _continue(b["folder"], b["step"], make_agent(s.level.rsplit("/", 1)[0], folder),
                  settings=source_settings(s, budget, max_actions, harness), out=folder,
                  stop_when={"won": [s.level]})          # the outcome is same-level completion: none after it

    units = study.run_units(out, sched, play, lambda u, arm, folder: continuation_endpoints(folder,
                                                                                           by_id[u["state"]].level))
    doc = study_document(states, sched, units, branches, agent=agent, limits={"budget": budget,
                         "max_actions": max_actions, "harness": harness or "default"}, draws=draws, seed=seed,
                         out=out, note=note)
    doc["figures"] = branch_figures(states, units, out, draws=draws, seed=seed)
    study.write_study(out, doc)
    return doc


def _continue(folder, step: int, agent, **kw):
    """continue_episode with the D.1 takeover context (contract 2): a branch episode continues
    its source, so the context is the whole public history (the source's action prefix up to
    s, then the branch episode's own actions; build_takeover follows the chain)."""
    return continue_episode(folder, step, agent, takeover=True, **kw)


def branch_tables(states: list[BranchState], units: list[dict], *, draws: int = DRAWS, seed: int = SEED) -> list[dict]:
    """The intervention's tables: per state and pooled, same-level completions of each arm
    (paired counts) with the source-level bootstrap interval, and the paired effect
    (shortest - costly) over the units that have both arms."""
    prim = study.primary(units)
    unit_ids = sorted({r["unit"] for r in units})
    by_state = {s.id: s for s in states}
    rows, pairs, rates = [], {}, {arm: {} for arm in ARMS}
    for s in states:
        us = [u for u in unit_ids if u.startswith(s.id + "r")]
        both = [u for u in us if (u, "costly") in prim and (u, "shortest") in prim]
        won = {arm: sum(prim[(u, arm)]["endpoints"]["completed"] for u in both) for arm in ARMS}
        rows.append([s.id, s.level, s.distance, f"{s.costly['move']} (e = {s.costly['cost']}"
                     + (", seen" if s.costly.get("seen") else "") + ")", s.shortest["move"],
                     str(Count(won["costly"], len(both))), str(Count(won["shortest"], len(both)))])
        for u in both:
            a, b = (int(prim[(u, arm)]["endpoints"]["completed"]) for arm in ARMS)
            pairs.setdefault(s.source, []).append((a, b))
            rates["costly"].setdefault(s.source, []).append(a)
            rates["shortest"].setdefault(s.source, []).append(b)
    n = sum(len(v) for v in pairs.values())
    k = {arm: sum(sum(v) for v in rates[arm].values()) for arm in ARMS}
    iv = {arm: str(cluster_bootstrap(rates[arm], draws=draws, seed=seed)) if n else "" for arm in ARMS}
    eff = str(paired_effect(pairs, draws=draws, seed=seed)) if n else ""
    rows.append(["all", f"{len(by_state)} states", "", "", "", str(Count(k["costly"], n)), str(Count(k["shortest"], n))])
    t1 = {"id": "branch", "title": "Same-state action intervention: same-level completion by branch",
          "columns": ["state", "level", "d(s)", "costly move", "shortest move", "costly: completed",
                      "shortest: completed"],
          "rows": rows,
          "note": "Each unit is a state and a repeat; both arms continue from the oracle-verified successor of "
                  "their branch move, the arm played first alternating between units."}
    t2 = {"id": "branch_effect", "title": "Completion rates and the paired effect (shortest - costly)",
          "columns": ["paired units", "costly: rate [95% CI]", "shortest: rate [95% CI]",
                      "shortest - costly [95% CI]"],
          "rows": [[n, iv["costly"], iv["shortest"], eff]],
          "note": f"Bootstrap over source levels ({draws:,} draws, seed {seed}); primary continuations only "
                  "(the first valid attempt of each assignment)."}
    return [t1, t2]


def branch_figures(states: list[BranchState], units: list[dict], out: Path, *, draws: int = DRAWS,
                   seed: int = SEED) -> list[dict]:
    """The intervention's figure (figures/branch.png): each arm's completion rate with its
    interval, over the paired units (the rates of the branch_effect table)."""
    from longpuzzle.agents.report.figures import figure_branch

    prim = study.primary(units)
    rates: dict = {arm: {} for arm in ARMS}
    for r in units:
        u = r["unit"]
        if r["status"] == "valid" and r is prim.get((u, r["condition"])) \
                and all((u, arm) in prim for arm in ARMS):
            rates[r["condition"]].setdefault(r["source"], []).append(int(r["endpoints"]["completed"]))
    arms = []
    for arm in ARMS:
        if rates[arm]:
            iv = cluster_bootstrap(rates[arm], draws=draws, seed=seed)
            arms.append((arm, iv.estimate, iv.low, iv.high, f"{sum(map(sum, rates[arm].values()))}/{iv.units}"))
    if figure_branch(arms, out / "figures" / "branch.png") is None:
        return []
    return [{"id": "branch", "title": "Same-level completion by branch move (costly: e(s, a) > 0; shortest: e = 0)",
             "png": "figures/branch.png"}]


def study_document(states, sched, units, branches, *, agent, limits, draws, seed, out, note="") -> dict:
    from longpuzzle.agents.report.data import episode_catalog

    cat = None
    if states:                        # the catalogue the sources recorded
        with open(Path(states[0].episode, "events.jsonl"), encoding="utf-8") as f:
            cat = episode_catalog(json.loads(f.readline())).identity()
    return study.document(
        "branch", catalog=cat, agent=agent, seed=seed, draws=draws, schedule=sched,
        tables=branch_tables(states, units, draws=draws, seed=seed),
        states=[s.as_dict() for s in states],
        branches={f"{sid}-{arm}": {**b, "folder": os.path.relpath(b["folder"], out)}
                  for (sid, arm), b in branches.items()},
        limits=limits, note=note)


def check_study(folder: str | Path) -> tuple[bool, list[str]]:
    """Re-derive a branch study: every branch and continuation folder replays, every unit's
    endpoints are what its folder shows, and the tables are the ones study.json holds."""
    folder = Path(folder)
    doc, units = study.load_study(folder, "branch")
    problems = []
    states = [BranchState(**s) for s in doc["states"]]
    for name, b in doc["branches"].items():
        bad = study.replay_problem(folder, b["folder"])
        if bad:
            problems.append(f"branch {name}: {bad}")
    lv = {s.id: s.level for s in states}
    problems += study.check_replays(folder, units, lambda u, ep: continuation_endpoints(ep, lv[u["checkpoint"]]))
    tables = branch_tables(states, units, draws=doc["draws"], seed=doc["seed"])
    if json.loads(json.dumps(tables)) != doc["tables"]:
        problems.append("the tables re-derived from the units differ from study.json")
    return not problems, problems
