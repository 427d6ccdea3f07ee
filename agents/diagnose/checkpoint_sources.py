"""Where checkpoints come from (``longpuzzle diagnose checkpoints``): candidate states found in
recorded runs, or generated from scratch with the solvers and recorded as real episodes.
Every candidate is validated by checkpoints.make_checkpoint; the folder is written whole
(checkpoints.write_folder) before any continuation can run.

From runs (``--from RUN_DIR``): every objective episode of the run (agents/report/data.py
reads the run folder; agents/report/analytics.py finds its level attempts and dead ends):
    dead ends   per attempt, the first board that carried the certificate - Bolt Unscrew
                the paper's no-free-hole one (``no_free_hole_step``), the other games the
                evaluator's exhaustive one (each dead spell's fatal step) - and the last
                board of the attempt while still lost, when it is another state.
    controls    the boards along an attempt that won (a solution the run itself verified).
Candidates are deduplicated by board (distinct states), validated, and at most ``limit``
of each kind kept, spread evenly over the candidates in the order found.

From scratch (``--level L --policy P``): the policy plans moves on the level with the
solvers and oracle, then PolicyAgent (a scripted agent) plays them through the harness from
the suite's home screen (solving earlier levels of the objective with the solver), so the
checkpoints are steps of an ordinary episode folder and continuations replay with
``continued_from``. Policies (POLICIES):
    greedy      dead ends: the move of largest immediate progress (ties by the seed) until
                the board is certified; then a native restart and again with the next seed,
                until ``count`` distinct dead ends (or 4 x count tries).
    fatal       dead ends: i moves along a shortest solution, then the fatal move
                (its successor certified unsolvable: e(s, a) = inf) of largest immediate
                progress where there is one, then greedy moves until the board is
                certified; i spread evenly over the solution first.
    solution    controls: ``count`` states spread evenly along one shortest solution
                (verified with solvers.core.check_solution), the solved state excluded.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import click
import numpy as np

from longpuzzle.agents.api import FinalAnswer, first_action
from longpuzzle.agents.diagnose import checkpoints as ck
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.engine.catalog import Catalog, load_level
from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.protocol import NOOP
from longpuzzle.engine.registry import get_puzzle

POLICIES = ("greedy", "fatal", "solution")
POLICY_KIND = {"greedy": "dead_end", "fatal": "dead_end", "solution": "control"}
DEFAULT_COUNT = {"dead_end": 24, "control": 12}      # the paper's D and N (RQ2)
GREEDY_CAP = 500            # moves a greedy run may play before it is given up (a loop)


def spread(items: list, n: int | None) -> list:
    """At most ``n`` of ``items``, spread evenly in order (all when n is None or enough)."""
    if n is None or len(items) <= n:
        return list(items)
    if n <= 0:
        return []
    idx = sorted({round(i * (len(items) - 1) / max(1, n - 1)) for i in range(n)})
    return [items[i] for i in idx]


# ---- from recorded runs -----------------------------------------------------------------------

def run_episodes(folder: str | Path, catalog: Catalog) -> list[Path]:
    """The objective episode folders of a run folder (or a lone episode folder), each recorded
    on ``catalog`` (CheckpointError naming the first that is not)."""
    from longpuzzle.agents.report.data import load_run

    folder = Path(folder)
    try:
        run = load_run(folder)
    except HarnessError as e:
        raise ck.CheckpointError(str(e)) from None
    eps = [Path(e["dir"]) for e in run.episodes if e.get("dir")]
    out = []
    for ep in eps:
        if not (ep / "events.jsonl").is_file():
            continue                                    # a level-protocol episode (level_01, ...)
        head = read_events(ep)[0]
        got = (head.get("catalog") or {}).get("hash")
        if got != catalog.content_hash:
            raise ck.CheckpointError(f"{ep} was recorded on another catalogue (hash {str(got)[:16]}) than "
                                     f"{catalog.identity().get('name') or 'builtin'} (hash {catalog.content_hash[:16]}); "
                                     "give its catalogue with --catalog")
        if head.get("protocol") == "objective":
            out.append(ep)
    return out


def run_candidates(episode: Path) -> list[tuple[str, int]]:
    """(kind, step) candidates of one objective episode, in order (see the module docstring)."""
    from longpuzzle.agents.report.analytics import analyze_episode

    doc = analyze_episode(episode)
    out = []
    for a in doc["attempts"]:
        bolt = a["level"].startswith("bolt_unscrew/")
        firsts = [a["no_free_hole_step"]] if bolt else [s["step"] for s in a["dead_spells"]]
        firsts = [s for s in firsts if s is not None]
        for s in firsts:
            out.append(("dead_end", s))
        if firsts and a["end"] in ("restart", "left"):
            last = a["end_step"] - 1          # the board the agent left (the restart's step is the next)
            if last > firsts[-1]:
                out.append(("dead_end", last))
        elif firsts and a["end"] == "end" and a["end_step"] > firsts[-1]:
            out.append(("dead_end", a["end_step"]))
        if a["end"] == "won":
            steps = sorted({m["step"] for m in a["move_log"] if m["step"] < a["end_step"]})
            out.extend(("control", s) for s in [a["start_step"], *steps] if s > 0)
    return out


# ---- from scratch ------------------------------------------------------------------------------

def _certified(level, p, s) -> bool:
    """The board carries the dead-end certificate checkpoints.certify_dead_end asks for."""
    from longpuzzle.solvers.core import certify

    if p.is_solved(level, s):
        return False
    if level.game == "bolt_unscrew":
        return p.diagnostics(level, s).get("usable_holes") == 0
    return certify(level, s.copy(), budget=ck.CERTIFY_BUDGET, solution=False).status == "unsolvable"


def _legal(level, p, s) -> list[tuple[int, np.ndarray]]:
    out = []
    for a in p.legal_moves(level, s):
        t, code = p.step(level, s, a)
        if code <= NOOP and not np.array_equal(t, s):
            out.append((int(a), t))
    return out


def _greedy_until_certified(level, p, s, rng: random.Random, cap: int) -> list[int] | None:
    """Greedy moves (largest immediate progress, ties by ``rng``) from ``s`` until the board is
    certified; None when it wins, runs out of moves or of ``cap`` moves first."""
    moves = []
    while not _certified(level, p, s):
        if len(moves) >= cap or p.is_solved(level, s):
            return None
        legal = _legal(level, p, s)
        if not legal:
            return None
        scored = [(float(p.progress(level, t)), a, t) for a, t in legal]
        best = max(v for v, _, _ in scored)
        _, a, s = rng.choice([x for x in scored if x[0] == best])
        moves.append(a)
    return moves


def _solution(level) -> list[int]:
    from longpuzzle.solvers.core import check_solution, solve

    r = solve(level)
    if r.status != "solvable" or not check_solution(level, level.initial, r.actions):
        raise ck.CheckpointError(f"no verified solution of {level.id} was found")
    return [int(a) for a in r.actions]


def plan(level, policy: str, count: int, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """The policy's segments: (moves from the level's start, indices k of the checkpoint states
    - the state after moves[:k]) per segment; segments are played one after another, a native
    restart between them."""
    p = get_puzzle(level.game)
    if policy == "solution":
        sol = _solution(level)
        ks = spread(list(range(len(sol))), count)          # 0 .. n-1: the solved state excluded
        return [(sol[:max(ks)] if ks else [], ks)]
    segs, seen = [], set()
    cap = GREEDY_CAP

    def add(moves):
        s = level.initial
        for a in moves:
            s, _ = p.step(level, s, a)
        key = s.tobytes()
        if key not in seen:
            seen.add(key)
            segs.append((moves, [len(moves)]))

    if policy == "greedy":
        for i in range(4 * count):
            if len(segs) >= count:
                break
            got = _greedy_until_certified(level, p, level.initial, random.Random(seed + i), cap)
            if got is not None:
                add(got)
    elif policy == "fatal":
        from longpuzzle.solvers.core import certify

        sol = _solution(level)
        s, prefixes = level.initial, []
        for i, a in enumerate(sol):
            prefixes.append((list(sol[:i]), s))
            s, _ = p.step(level, s, a)
        first = spread(prefixes, count)             # spread over the solution first, then the rest
        for moves, s in first + [x for x in prefixes if not any(x is y for y in first)]:
            if len(segs) >= count:
                break
            # the fatal moves here (the successor certified unsolvable: e(s, a) = inf), the one
            # of largest immediate progress (the agents' choice); none: greedy from here
            fatal = [(float(p.progress(level, t)), -a, a, t) for a, t in _legal(level, p, s)
                     if certify(level, t.copy(), budget=ck.CERTIFY_BUDGET, solution=False).status == "unsolvable"]
            head, t = ([max(fatal)[2]], max(fatal)[3]) if fatal else ([], s)
            rest = _greedy_until_certified(level, p, t, random.Random(seed + len(segs) + len(moves)), cap)
            if rest is not None:
                add(moves + head + rest)
    else:
        raise ck.CheckpointError(f"unknown policy {policy!r} (one of {', '.join(POLICIES)})")
    if not segs:
        raise ck.CheckpointError(f"the {policy} policy reaches no certified dead end on {level.id}")
    return segs


class PolicyAgent(SolverAgent):
    """Plays planned segments on one target level through the GUI (a scripted agent): it
    enters the objective and solves the levels before the target as the solver agent does;
    on the target it plays each segment's moves one gesture per move, presses the screen's
    restart button between segments, and stops (a final answer) after the last. ``marks``:
    (segment, moves played, the step that played them) for every state it reached there."""
    name = "checkpoint_policy"

    def __init__(self, level_id: str, segments: list[list[int]], catalog=None):
        super().__init__(catalog=catalog)
        self.target = level_id
        self.segments = [list(s) for s in segments]
        self.seg, self.done = 0, 0
        self.steps = 0
        self.marks: list[tuple[int, int, int]] = []

    def emit(self, action):
        self.steps += 1
        return super().emit(action)

    def act(self, obs):
        if obs.frame is None:
            return self.emit(first_action(obs))
        m = self.model
        on_target = m.session is not None and m.screen.get("name") == "level" and m.level.id == self.target \
            and not m.complete
        if not on_target:
            return super().act(obs)
        if not self.marks or self.marks[-1][0] != self.seg:
            self.marks.append((self.seg, 0, self.steps))      # the segment's start on screen
        seg = self.segments[self.seg]
        if self.done < len(seg):
            a = seg[self.done]
            self.done += 1
            act = self.emit(m.gesture_for(a))
            self.marks.append((self.seg, self.done, self.steps))
            return act
        if self.seg + 1 >= len(self.segments):
            return FinalAnswer("the planned states were played")
        self.seg, self.done = self.seg + 1, 0
        return self.emit(self._click_widget("restart"))


def record(level_id: str, policy: str, count: int, seed: int, folder: Path, catalog: Catalog,
           settings) -> list[tuple[str, int, dict]]:
    """Plan with the policy, play it through the harness into ``folder`` (an episode folder)
    and return (kind, step, origin) of every planned state."""
    from longpuzzle.agents.harness.objective import run_objective

    level = load_level(level_id, catalog)
    segs = plan(level, policy, count, seed)
    agent = PolicyAgent(level.id, [m for m, _ in segs], catalog=catalog)
    run_objective(agent, level.game, level.difficulty, settings=settings, folder=folder, catalog=catalog)
    at = {(s, k): step for s, k, step in agent.marks}
    boards = _boards(folder)
    p = get_puzzle(level.game)
    out = []
    for i, (moves, ks) in enumerate(segs):
        for k in ks:
            s = level.initial
            for a in moves[:k]:
                s, _ = p.step(level, s, a)
            if (i, k) not in at or boards.get(at[(i, k)]) != (level.id, tuple(int(v) for v in s)):
                raise ck.CheckpointError(f"the recorded episode did not reach planned state {k} of segment {i + 1}")
            out.append((POLICY_KIND[policy], at[(i, k)],
                        {"policy": policy, "seed": seed, "segment": i + 1, "moves": k}))
    return out


def _boards(folder: Path) -> dict[int, tuple]:
    """step -> (level id, board) of every recorded step of an episode that shows a level."""
    from longpuzzle.agents.report.data import load_trajectory, snapshot_state

    out = {}
    for st in load_trajectory(folder).steps:
        board = snapshot_state(st.snapshot)
        if board is not None and st.record.get("level"):
            out[st.step] = (st.record["level"], board)
    return out


# ---- the command ----------------------------------------------------------------------------

def _settings(preset: str):
    from longpuzzle.agents.harness.presets import PRESETS
    from longpuzzle.agents.harness.settings import Settings

    return Settings(**PRESETS[preset]["settings"], preset=preset)


def build(out, runs=(), levels=(), policy=None, count=None, seed=0, preset="paper", kinds=("dead_end", "control"),
          limits=None, catalog: Catalog | None = None, log=None) -> tuple[list[ck.Checkpoint], dict]:
    """Make a checkpoints folder ``out`` from recorded runs and / or from scratch; written whole
    at the end (nothing on any error). Returns (checkpoints, {reason: rejected candidates})."""
    from longpuzzle.engine.catalog import builtin_catalog

    cat = catalog or builtin_catalog()
    limits = {**DEFAULT_COUNT, **(limits or {})}
    log = log or (lambda msg: None)
    if levels and policy is None:
        raise ck.CheckpointError("--level needs --policy (" + ", ".join(POLICIES) + ")")
    if not runs and not levels:
        raise ck.CheckpointError("give --from RUN_DIR or --level LEVEL --policy POLICY")
    tmp = ck.staging(out)
    try:
        cands, made_from = [], []           # (kind, episode folder in tmp, step, origin)
        n_ep = 0
        for r in runs:
            eps = run_episodes(r, cat)
            made_from.append({"run": str(Path(r).resolve()), "episodes": len(eps)})
            for ep in eps:
                n_ep += 1
                found = [(k, s) for k, s in run_candidates(ep) if k in kinds]
                if not found:
                    continue
                dest = ck.copy_episode(ep, tmp / ck.EPISODES / f"{n_ep:03d}-{ep.name}")
                rel = str(ep.relative_to(r)) if ep.is_relative_to(r) else ep.name
                cands += [(k, dest, s, {"run": str(Path(r).resolve()), "episode": rel, "step": s}) for k, s in found]
        for lid in levels:
            level = load_level(lid, cat)
            n_ep += 1
            kind = POLICY_KIND.get(policy)
            n = count if count is not None else limits.get(kind, 12)
            dest = tmp / ck.EPISODES / f"{n_ep:03d}-{level.id.replace('/', '_')}-{policy}"
            log(f"recording the {policy} policy on {level.id} ...")
            got = record(level.id, policy, n, seed, dest, cat, _settings(preset))
            made_from.append({"level": level.id, "policy": policy, "seed": seed, "count": n, "preset": preset})
            cands += [(k, dest, s, o) for k, s, o in got]
        kept, rejected, seen = [], {}, set()
        by_kind = {k: [c for c in cands if c[0] == k] for k in ck.KINDS}
        for kind in ck.KINDS:
            ok = []
            for _, ep, step, origin in by_kind[kind]:
                try:
                    cp = ck.make_checkpoint(tmp, ep, step, kind, catalog=cat, origin=origin)
                except ck.CheckpointError as e:
                    # named by the recorded episode it was copied from (the staging folder is gone
                    # by the time this is read), or by its place in ``out`` when recorded here
                    src = (Path(origin["run"]) / origin["episode"] if "run" in origin
                           else Path(str(ep).replace(str(tmp), str(out))))
                    why = str(e).split(":")[0].replace(str(ep), str(src))
                    rejected[why] = rejected.get(why, 0) + 1
                    continue
                if cp.state_sha256 in seen:
                    continue
                seen.add(cp.state_sha256)
                ok.append(cp)
            kept += spread(ok, limits.get(kind))
        if not kept:
            raise ck.CheckpointError("no candidate state validated" +
                                     (f" ({', '.join(f'{v} {k}' for k, v in rejected.items())})" if rejected else
                                      " (no candidate states found)"))
        _prune(tmp, kept)
        return ck.write_folder(tmp, out, kept, cat, made_from), rejected
    except BaseException:
        ck.discard(tmp)
        raise


def _prune(tmp: Path, kept: list[ck.Checkpoint]) -> None:
    """Drop the copied episodes no kept checkpoint is a step of."""
    import shutil

    used = {(tmp / cp.episode).resolve() for cp in kept}
    root = tmp / ck.EPISODES
    for p in (root.iterdir() if root.is_dir() else []):
        if p.resolve() not in used:
            shutil.rmtree(p)


def _table(cps: list[ck.Checkpoint]) -> str:
    rows = [("id", "kind", "level", "step", "P", "d(s) / certificate", "episode")]
    for c in cps:
        what = str(c.distance) if c.kind == "control" else (c.certificate or {}).get("kind", "")
        rows.append((c.id, c.kind, c.level, str(c.step), f"{c.P:.3f}", what, c.episode))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(v.ljust(w[i]) for i, v in enumerate(r)).rstrip() for r in rows)


@click.command("checkpoints")
@click.argument("more_runs", nargs=-1, type=click.Path(exists=True, file_okay=False), metavar="[RUN_DIR]...")
@click.option("--from", "runs", multiple=True, type=click.Path(exists=True, file_okay=False), metavar="RUN_DIR",
              help="A recorded run folder (or episode folder) to find candidate states in (repeatable).")
@click.option("--level", "levels", multiple=True, metavar="LEVEL",
              help="Generate states from scratch on this level (repeatable), with --policy.")
@click.option("--policy", type=click.Choice(POLICIES),
              help="greedy / fatal: certified dead ends; solution: controls along a verified solution.")
@click.option("--count", type=click.IntRange(1), help="States per --level [default: 24 dead ends, 12 controls].")
@click.option("--seed", type=int, default=0, show_default=True, help="The policies' tie-breaking seed.")
@click.option("--preset", type=click.Choice(("paper", "fast")), default="paper", show_default=True,
              help="The screen the generated episodes are recorded on.")
@click.option("--kind", "kind", type=click.Choice(("dead_end", "control", "both")), default="both",
              show_default=True, help="Which states to take from --from runs.")
@click.option("--max-dead-ends", type=click.IntRange(0), default=DEFAULT_COUNT["dead_end"], show_default=True)
@click.option("--max-controls", type=click.IntRange(0), default=DEFAULT_COUNT["control"], show_default=True)
@click.option("--out", type=click.Path(file_okay=False), help="The new checkpoints folder.")
@click.option("--check", "check_dir", type=click.Path(), help="Re-validate an existing checkpoints folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the checkpoints as JSON.")
@catalog_option
def checkpoints_cmd(more_runs, runs, levels, policy, count, seed, preset, kind, max_dead_ends, max_controls, out,
                    check_dir, as_json, catalog):
    """Fix the checkpoints of the diagnostics: validated dead ends and solvable controls, from
    recorded runs (--from RUN_DIR...) or from scratch (--level L --policy P), written whole
    into a new folder before any continuation; --check re-validates a folder."""
    if check_dir:
        if out or runs or more_runs or levels:
            raise click.UsageError("--check takes no other source or --out")
        cps = ck.load_checkpoints(check_dir, catalog)
        if as_json:
            click.echo(json.dumps({"folder": str(check_dir), "checkpoints": [c.as_dict() for c in cps]}, indent=1))
            return
        click.echo(_table(cps))
        click.echo(f"{len(cps)} checkpoints validated ({check_dir})")
        return
    if not out:
        raise click.UsageError("--out DIR is needed (a new folder)")
    if policy and not levels:
        raise click.UsageError("--policy needs --level")
    kinds = ck.KINDS if kind == "both" else (kind,)
    try:
        cps, rejected = build(out, tuple(runs) + tuple(more_runs), levels, policy, count, seed, preset, kinds,
                              {"dead_end": max_dead_ends, "control": max_controls}, catalog,
                              log=lambda m: click.echo(m, err=True))
    except LongPuzzleError as e:
        raise ck.CheckpointError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    if as_json:
        click.echo(json.dumps({"folder": str(out), "checkpoints": [c.as_dict() for c in cps], "rejected": rejected},
                              indent=1))
        return
    click.echo(_table(cps))
    tally = {k: sum(c.kind == k for c in cps) for k in ck.KINDS}
    click.echo(f"{tally['dead_end']} dead ends, {tally['control']} controls written to {out}")
    if rejected:
        click.echo("rejected candidates: " + ", ".join(f"{v} {k}" for k, v in sorted(rejected.items())),
                   file=sys.stderr)
    for lvl in levels if policy and count else ():     # say so when a level gave fewer than asked
        got = sum(c.level == lvl for c in cps)
        if got < count:
            click.echo(f"{lvl}: {got} of the {count} states asked for (no more distinct states of the {policy} "
                       "policy validated, or the --max limits kept fewer)", file=sys.stderr)
