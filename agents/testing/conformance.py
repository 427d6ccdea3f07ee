"""The conformance suite: every check a game must pass, shipped for anyone who adds one.

    from longpuzzle.agents.testing import check_puzzle

    report = check_puzzle("sokoban")                 # raises ConformanceError if a check fails
    report = check_puzzle("sokoban", levels=["sokoban/easy/1"], seed=3, checks=["gui"])

In the spirit of Gymnasium's ``check_env``, Pgx's api_test and OpenSpiel's random simulation
test: the game is looked up in the registry (built-in or registered through the
``longpuzzle.puzzles`` entry point) and run through every promise of the puzzle protocol
(engine/protocol.py), the session, the screens and the tools built on them:

    declaration  id, title, difficulties, move syntax; every level parses to the protocol's arrays
    move_text    format_move / parse_move round trip for every action; garbage text and
                 action numbers out of range are MoveSyntaxError
    rules        step is pure (never writes its input or the level) and deterministic (same
                 move, same bytes); the legal mask agrees with the codes; a rejected move
                 keeps the state and apply refuses it with IllegalMoveError (not the syntax
                 error); progress lies in [0, 1] and is 1 exactly when solved
    simulation   random playouts through a Session to a terminal state (solved, no legal
                 move, or the step limit): the session follows the rules at every step
    kernels      the batched kernel equals single steps; random-walk kernels reach only
                 consistent states; state_bounds hold on every reached state
    episode      move texts and the episode text replay to the same state, counters and log
    save_load    a checkpoint restores a session that behaves identically; corrupt or
                 mismatched checkpoints are refused (CheckpointError)
    undo_restart undo walks back every move where the game has undo, is refused where not;
                 restart gives the initial state
    win          a solution found by the solver wins through the rules and, played as the
                 gestures of the screen, completes the level on screen
    milestones   its milestone kinds (GameSpec.milestones) count within [0, n] with n the
                 level's own, level_won is the rules' is_solved, and every milestone holds
                 once the solver's solution is played
    gui          in both styles, every legal move (at the start and along a random walk) has
                 a gesture from the screen's geometry; that gesture, dispatched as a person's
                 click or drag is, makes exactly that move
    drawing      both styles draw the level without error, at the frame's size, not blank,
                 the same bytes from fresh renderers, and a move changes the picture
    env          Gymnasium's own check_env on the rules and pixel envs of the level; the
                 vector env's rewards sum to the progress made
    knowledge    (if the game declares solver knowledge) packed states round-trip; the
                 search's expansions are the legal moves (up to the packing's symmetry)
    generator    (if the game declares a generator) levels are deterministic in the seed,
                 their records rebuild the same level, their certified solutions win
    labels       every text its declaration gives for another language (GameSpec.labels)
                 can be drawn: some available font (the shipped one, or one a game declares:
                 GameSpec.fonts) has all its glyphs

Each check depends only on (level, seed): a failure names both, and
``check_puzzle(game, levels=[level], seed=seed, checks=[check])`` reproduces it.
"""

from __future__ import annotations

import json
import random
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable

import numpy as np

from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
from longpuzzle.engine.errors import (
    CheckpointError, IllegalMoveError, MoveSyntaxError, UndoNotAllowedError,
)
from longpuzzle.engine.protocol import NOOP, OK, Level
from longpuzzle.engine.registry import get_puzzle

__all__ = ["CHECKS", "ConformanceError", "ConformanceReport", "Failure", "check_puzzle", "random_walk",
           "sample_levels", "walk_states"]

WALK = 60                  # moves of the random walks most checks follow
PLAYOUTS = 4               # random playouts of the simulation check
PLAYOUT_STEPS = 400        # at most this many moves a playout
GUI_MOVES = 8              # moves of the walk along which the gui check tries every legal move
SOLVER_BUDGET = 2_000_000  # states the win check's solver may store
SOLVER_SECONDS = 20.0
GARBAGE = ["", "   ", "??", "1>", "move", "\u00e9\u00e9", "-1", "999999>1"]
# the one warning check_env may give: its advice to normalise Box actions, which the GUI
# space's pixel coordinates deliberately are not (they are the benchmark's own units)
ENV_WARNINGS_ALLOWED = ("symmetric and normalized space",)


# ---- helpers for writing tests of a game -------------------------------------------------------

def sample_levels(game: str, k: int = 4, catalog: Catalog | None = None) -> list[str]:
    """First, last and evenly spread level ids of a game in ``catalog`` (default: the built-in
    one; all of them if there are few)."""
    ids = (catalog or builtin_catalog()).level_ids(game)
    if len(ids) <= k:
        return ids
    step = (len(ids) - 1) / (k - 1)
    return sorted({ids[round(i * step)] for i in range(k)}, key=ids.index)


def random_walk(level: Level, n: int, seed: int, rejected_rate: float = 0.2) -> list[int]:
    """n actions: mostly legal moves, some arbitrary (possibly rejected) ones."""
    p = get_puzzle(level.game)
    rng = random.Random(seed)
    state = level.initial.copy()
    out = []
    for _ in range(n):
        legal = p.legal_moves(level, state)
        if legal and rng.random() > rejected_rate:
            a = rng.choice(legal)
        else:
            a = rng.randrange(level.n_actions)
        out.append(a)
        nxt, code = p.step(level, state, a)
        if code <= NOOP:
            state = nxt
    return out


def walk_states(level: Level, actions: list[int]):
    """Yield (state, action, next_state, code) along a walk (rejected actions keep the state)."""
    p = get_puzzle(level.game)
    state = level.initial.copy()
    for a in actions:
        nxt, code = p.step(level, state, a)
        yield state, a, nxt, code
        if code <= NOOP:
            state = nxt


# ---- the report ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Failure:
    """One failed check, with what reproduces it."""
    check: str
    level: str          # level id ("" for a check of the whole game)
    seed: int
    message: str

    def __str__(self) -> str:
        where = f"{self.level}, seed {self.seed}" if self.level else f"seed {self.seed}"
        return f"{self.check} [{where}]: {self.message}"


@dataclass
class ConformanceReport:
    """What check_puzzle ran: ``passed`` and ``failures`` per (check, level), ``skipped``
    checks with the reason (e.g. the game declares no generator)."""
    game: str
    seed: int
    levels: list[str]
    passed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)     # (check, level, reason)
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        head = (f"{self.game}: {len(self.passed)} checks passed, {len(self.failures)} failed, "
                f"{len(self.skipped)} skipped over {len(self.levels)} levels (seed {self.seed})")
        lines = [head] + [f"  FAILED {f}" for f in self.failures]
        lines += [f"  skipped {c}{' [' + lv + ']' if lv else ''}: {why}" for c, lv, why in self.skipped]
        return "\n".join(lines)


class ConformanceError(AssertionError):
    """A game failed one or more conformance checks; ``report`` holds them all. The message
    lists each failure with the level and seed that reproduce it."""

    def __init__(self, report: ConformanceReport):
        self.report = report
        fails = report.failures
        f = fails[0]
        again = f"check_puzzle({report.game!r}, {f'levels=[{f.level!r}], ' if f.level else ''}seed={f.seed}, " \
                f"checks=[{f.check!r}])"
        super().__init__(f"{report.game} failed {len(fails)} conformance check(s):\n"
                         + "\n".join(f"  {f}" for f in fails) + f"\nreproduce the first with {again}")


class _Failed(Exception):
    """A check's expectation that did not hold."""


class _Skip(Exception):
    """A check that does not apply (its reason); ``game_wide``: to no level of the game."""

    def __init__(self, reason: str, game_wide: bool = False):
        super().__init__(reason)
        self.game_wide = game_wide


def _expect(cond: Any, message: str) -> None:
    if not cond:
        raise _Failed(message)


# ---- the checks ------------------------------------------------------------------------------
# A level check is f(ctx, level); a game check f(ctx). Both raise _Failed / _Skip.

@dataclass
class _Ctx:
    game: str
    puzzle: Any
    seed: int
    levels: list[Level]
    catalog: Catalog
    from_catalog: bool


def _check_declaration(ctx: _Ctx) -> None:
    p = ctx.puzzle
    _expect(p.id == ctx.game, f"the puzzle registered as {ctx.game!r} has id {p.id!r}")
    _expect(p.title and p.move_syntax, "the puzzle needs a title and a move_syntax line")
    _expect(p.difficulties, "the puzzle declares no difficulties")
    _expect(ctx.levels, "no levels to check: the catalogue has none of this game and none were given")
    if ctx.from_catalog:
        diffs = [o.difficulty for o in ctx.catalog.objectives(ctx.game)]
        _expect(set(diffs) <= set(p.difficulties),
                f"objectives {diffs} name difficulties the puzzle does not declare {list(p.difficulties)}")
        _expect(diffs == [d for d in p.difficulties if d in set(diffs)],
                f"objectives {diffs} are not in the puzzle's difficulty order {list(p.difficulties)}")
    for lvl in ctx.levels:
        _expect(lvl.game == ctx.game, f"level {lvl.id} is of game {lvl.game!r}")
        _expect(lvl.lv.dtype == np.int32 and lvl.lv.ndim == 1, f"{lvl.id}: lv must be a 1-d int32 array")
        _expect(lvl.initial.ndim == 1 and lvl.initial.dtype == np.dtype(p.state_dtype),
                f"{lvl.id}: the initial state must be a 1-d array of the puzzle's state_dtype {p.state_dtype}")
        _expect(isinstance(lvl.n_actions, int) and lvl.n_actions >= 1, f"{lvl.id}: n_actions must be >= 1")


def _check_move_text(ctx: _Ctx, lvl: Level) -> None:
    p = ctx.puzzle
    for a in range(lvl.n_actions):
        text = p.format_move(lvl, a)
        _expect(isinstance(text, str) and text and not any(c.isspace() for c in text),
                f"format_move({a}) gave {text!r}: a move text is one token without spaces")
        try:
            got = p.actions(lvl, text)
        except MoveSyntaxError as e:
            raise _Failed(f"the text {text!r} of action {a} is refused by parse_move: {e}") from None
        _expect(got == [a], f"the text {text!r} of action {a} reads back as actions {got}")
    for garbage in GARBAGE:
        try:
            p.actions(lvl, garbage)
        except MoveSyntaxError:
            pass
        else:
            raise _Failed(f"the text {garbage!r} was taken as a move instead of a MoveSyntaxError")
    for bad in (lvl.n_actions, -1, "1", 1.5, True):
        try:
            p.check_action(lvl, bad)
        except MoveSyntaxError:
            pass
        else:
            raise _Failed(f"the action {bad!r} was taken instead of a MoveSyntaxError")


def _check_rules(ctx: _Ctx, lvl: Level) -> None:
    p = ctx.puzzle
    lv_before = lvl.lv.copy()
    for i, (state, a, nxt, code) in enumerate(walk_states(lvl, random_walk(lvl, WALK, seed=ctx.seed + 1))):
        before = state.copy()
        mask = p.legal_mask(lvl, state)
        outs = [p.step(lvl, state, b) for b in range(lvl.n_actions)]
        _expect(np.array_equal(state, before), f"step {i}: step() wrote to its input state")
        again, code2 = p.step(lvl, state, a)
        _expect(code2 == code and again.tobytes() == nxt.tobytes(),
                f"step {i}: the same move {a} on the same state gave another result")
        codes = [c for _, c in outs]
        _expect([int(m) for m in mask] == [int(c == OK) for c in codes],
                f"step {i}: legal_mask disagrees with the codes of step (mask {list(map(int, mask))}, codes {codes})")
        _expect(sorted(p.legal_moves(lvl, state)) == [b for b in range(lvl.n_actions) if codes[b] == OK],
                f"step {i}: legal_moves disagrees with the codes of step")
        for b, (out, c) in enumerate(outs):
            if c != OK:
                _expect(np.array_equal(out, state), f"step {i}: move {b} was not OK (code {c}) but changed the state")
        if code > NOOP:
            try:
                p.apply(lvl, state, a)
            except MoveSyntaxError:
                raise _Failed(f"step {i}: the rejected move {a} raised MoveSyntaxError, not IllegalMoveError") from None
            except IllegalMoveError as e:
                _expect(e.reason and str(e), f"step {i}: IllegalMoveError without a reason or a message")
            else:
                raise _Failed(f"step {i}: apply() took the move {a} that step rejected (code {code})")
        else:
            out = p.apply(lvl, state, a)
            _expect(np.array_equal(out, nxt) and out is not state, f"step {i}: apply() and step() disagree on move {a}")
        prog = p.progress(lvl, state)
        _expect(0.0 <= prog <= 1.0, f"step {i}: progress {prog} outside [0, 1]")
        _expect((prog == 1.0) == bool(p.is_solved(lvl, state)), f"step {i}: progress {prog} but is_solved "
                                                                 f"{p.is_solved(lvl, state)}")
        _expect(isinstance(p.render_text(lvl, state), str), f"step {i}: render_text did not give text")
    _expect(np.array_equal(lvl.lv, lv_before), "the level vector changed")


def _check_simulation(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.session import Session
    p = ctx.puzzle
    rng = random.Random(ctx.seed + 11)
    for k in range(PLAYOUTS):
        s = Session(lvl)
        state = lvl.initial.copy()
        for i in range(PLAYOUT_STEPS):
            if p.is_solved(lvl, state):
                break
            legal = s.legal_moves()
            _expect(legal == p.legal_moves(lvl, state), f"playout {k}, move {i}: the session's legal moves are not the rules'")
            if not legal:
                break
            a = rng.choice(legal)
            nxt, code = p.step(lvl, state, a)
            _expect(code == OK and not np.array_equal(nxt, state),
                    f"playout {k}, move {i}: the legal move {a} gave code {code} or did not change the state")
            outs = s.try_move(a)
            _expect(len(outs) == 1 and outs[0].accepted and outs[0].code == OK,
                    f"playout {k}, move {i}: the session did not accept the legal move {a}: {outs}")
            state = nxt
            _expect(np.array_equal(s.state, state), f"playout {k}, move {i}: the session's state is not the rules'")
        _expect(s.solved == bool(p.is_solved(lvl, state)), f"playout {k}: the session's solved is not the rules'")
        _expect((s.progress == 1.0) == s.solved, f"playout {k}: progress {s.progress} at the end, solved {s.solved}")


def _check_kernels(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.batch import kernels, step_batch
    p = ctx.puzzle
    rng = np.random.default_rng(ctx.seed + 6)
    states = np.stack([st for st, *_ in walk_states(lvl, random_walk(lvl, WALK, seed=ctx.seed + 6))])
    actions = rng.integers(0, lvl.n_actions, len(states))
    before = states.copy()
    dst, codes = step_batch(lvl, states, actions)
    _expect(np.array_equal(states, before), "step_batch wrote to its input states")
    for i in range(len(states)):
        nxt, code = p.step(lvl, states[i], int(actions[i]))
        _expect(code == codes[i] and np.array_equal(nxt, dst[i]), f"row {i}: step_batch differs from step")
    low, high = p.state_bounds(lvl)
    _expect(low.shape == high.shape == lvl.initial.shape and low.dtype == high.dtype == lvl.initial.dtype,
            "state_bounds must give two arrays shaped and typed as the state")
    _expect((low <= lvl.initial).all() and (lvl.initial <= high).all(), "the initial state lies outside state_bounds")
    k = kernels(p)
    n = 16 if p.keeps_steps else 64           # (a game that keeps its steps has costly ones)
    final = np.empty((n, lvl.initial.shape[0]), lvl.initial.dtype)
    solved = np.zeros(n, np.bool_)
    for steps in (5, 25, 120):
        k.random_walks(lvl.lv, lvl.initial, n, steps, ctx.seed + steps, lvl.n_actions, final, solved)
        out = np.argwhere((final < low) | (final > high))
        _expect(not len(out), f"random walks of {steps} moves left state_bounds at (walk, element) {out[:5].tolist()}")
        for i in range(n):
            _expect(solved[i] == p.is_solved(lvl, final[i]), f"random walk {i} of {steps} moves: solved flag "
                                                              f"{bool(solved[i])} but is_solved says otherwise")


def _check_episode(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.session import Session, parse_episode, replay
    s = Session(lvl)
    for a in random_walk(lvl, WALK, seed=ctx.seed + 2):
        s.try_move(a)
    r = replay(lvl, s.move_texts())
    _expect(r.state.tobytes() == s.state.tobytes(), "replaying the move texts gave another state")
    level_id, tokens = parse_episode(s.episode_text())
    _expect(level_id == lvl.id, f"the episode text names level {level_id!r}")
    r2 = replay(lvl, tokens, strict=False)
    _expect(np.array_equal(r2.state, s.state) and r2.counters == s.counters and r2.log == s.log,
            "replaying the episode text gave another state, counters or log")


def _check_save_load(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.session import Session, _checksum
    p = ctx.puzzle
    walk = random_walk(lvl, 2 * WALK, seed=ctx.seed + 3)
    s = Session(lvl)
    for a in walk[:WALK]:
        s.try_move(a)
    if p.undo_allowed and s.moves:
        s.undo()
    ck = s.checkpoint()
    t = Session.from_checkpoint(ck, lvl)
    _expect(np.array_equal(t.state, s.state) and t.counters == s.counters and t.moves == s.moves,
            "a restored checkpoint differs from the session it was made of")
    for i, a in enumerate(walk[WALK:]):
        _expect(s.try_move(a) == t.try_move(a), f"move {i} after restoring: another outcome")
        _expect(np.array_equal(t.state, s.state), f"move {i} after restoring: another state")
    _expect(t.checkpoint() == s.checkpoint(), "the checkpoints of the two sessions differ at the end")
    s = Session(lvl)
    for a in random_walk(lvl, 10, seed=ctx.seed + 4):
        s.try_move(a)
    ck = s.checkpoint()
    body = json.loads(ck)
    bad = {"cut in half": ck[: len(ck) // 2], "empty": "", "a list": "[]", "an empty object": "{}",
           "a renamed field": ck.replace('"moves"', '"muves"')}
    tampered = dict(body, state=[v + 1 for v in body["state"]])     # (the checksum no longer matches)
    bad["a changed state"] = json.dumps(tampered)
    forged = {k: v for k, v in tampered.items() if k != "checksum"}
    forged["checksum"] = _checksum(forged)
    bad["a state the moves do not give"] = json.dumps(forged)
    other = {k: v for k, v in body.items() if k != "checksum"}
    other["level_sha256"] = "0" * 64
    other["checksum"] = _checksum(other)
    bad["another version of the level"] = json.dumps(other)
    for what, text in bad.items():
        try:
            Session.from_checkpoint(text, lvl)
        except CheckpointError:
            pass
        else:
            raise _Failed(f"a checkpoint with {what} was restored instead of refused")


def _check_undo_restart(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.session import Session
    p = ctx.puzzle
    s = Session(lvl)
    seen = [s.state.copy()]
    for a in random_walk(lvl, 30, seed=ctx.seed + 5):
        if s.try_move(a)[-1].accepted:
            seen.append(s.state.copy())
    if p.undo_allowed:
        for k in range(len(seen) - 1):
            s.undo()
            _expect(np.array_equal(s.state, seen[-2 - k]), f"undo {k + 1} did not give the state before")
        _expect(np.array_equal(s.state, lvl.initial), "undoing every move did not give the initial state")
    try:
        s.undo()
    except UndoNotAllowedError:
        pass
    else:
        raise _Failed("undo with nothing to undo (or in a game without undo) was not refused")
    _expect(np.array_equal(s.state, seen[0] if p.undo_allowed else seen[-1]), "a refused undo changed the state")
    s.restart()
    _expect(np.array_equal(s.state, lvl.initial) and s.moves == [] and s.counters.restarts == 1,
            "restart did not give the initial state")


def _suite(ctx: _Ctx, lvl: Level, style: str):
    """A direct-launch suite showing ``lvl`` (a person's screen; no game limits)."""
    from longpuzzle.engine.suite import Suite
    s = Suite("home", style=style, direct=True, catalog=ctx.catalog)
    eff = s.open_level(lvl)
    if eff.get("effect") == "unavailable":
        raise _Skip(f"{get_puzzle(lvl.game).title} has no screen (its puzzle class has no `ui`)", game_wide=True)
    return s


_SOLUTIONS: dict = {}        # (level id, content digest) -> the solver's result: win and milestones share it


def _solution(lvl: Level):
    """The solver's (not necessarily shortest) solution of a level, found once per process."""
    from longpuzzle.solvers.core import solve
    key = (lvl.id, lvl.sha256)
    if key not in _SOLUTIONS:
        _SOLUTIONS[key] = solve(lvl, budget=SOLVER_BUDGET, shortest=False, time_limit=SOLVER_SECONDS)
    return _SOLUTIONS[key]


def _check_win(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.session import Session
    r = _solution(lvl)
    if not r.actions:
        _expect(r.status != "unsolvable", "the solver proved the level unsolvable")
        raise _Skip(f"the solver found no solution within its budget ({r.status})")
    p = ctx.puzzle
    _expect(not p.is_solved(lvl, lvl.initial), "the level is solved before any move")
    s = Session(lvl)
    for i, a in enumerate(r.actions):
        outs = s.try_move(int(a))
        _expect(outs and outs[-1].accepted, f"the solver's move {i} ({a}) was rejected: {outs}")
    _expect(s.solved and s.progress == 1.0, "the solver's solution does not win through the rules")
    u = _suite(ctx, lvl, "2d")
    for i, a in enumerate(r.actions):
        fb = u.dispatch(u.gesture_for(int(a)))
        _expect(fb.kind == "move", f"the gesture of the solution's move {i} ({a}) did {fb.as_dict()}")
    _expect(u.session.solved and u.complete, "the solution played as gestures did not complete the level on screen")


def _check_milestones(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine.milestones import level_milestones, milestone_kinds
    from longpuzzle.engine.registry import spec
    kinds = milestone_kinds(spec(ctx.game))
    p = ctx.puzzle
    states = [s for s, _, _, _ in walk_states(lvl, random_walk(lvl, 40, ctx.seed))]
    r = _solution(lvl)
    if r.actions:                        # and the board the solver's solution ends on
        st = lvl.initial.copy()
        for a in r.actions:
            st, _ = p.step(lvl, st, int(a))
        _expect(p.is_solved(lvl, st), "the solver's solution does not solve the level")
        states.append(st)
    totals = {}
    for st in states:
        ms = level_milestones(kinds, lvl, st)
        for m, have, _ in ms:
            _expect(0 <= have <= m.n, f"milestone {m.id}: {have} items counted of {m.n}")
            n = totals.setdefault(m.kind, m.n) if m.counting else m.n
            _expect(n == m.n, f"milestone kind {m.kind}: the level's number of items changed from {n} to {m.n}")
        won = p.is_solved(lvl, st)
        _expect(ms[-1][0].kind == "level_won" and ms[-1][2] is bool(won), "level_won is not the rules' is_solved")
        if won:
            _expect(all(holds for _, _, holds in ms), "a milestone does not hold on a solved board: "
                    + ", ".join(m.id for m, _, holds in ms if not holds))


def _check_gui(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.engine import gui
    from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W
    p = ctx.puzzle
    for style in ("2d", "3d"):
        s = _suite(ctx, lvl, style)
        for w in s.layout().widgets:
            x, y = w.center
            _expect(0 <= x <= DESIGN_W and 0 <= y <= DESIGN_H, f"{style}: widget {w.id} lies outside the screen")
        rng = random.Random(ctx.seed + 7)
        state = lvl.initial.copy()
        for i in range(GUI_MOVES):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                break
            for m in legal:
                g = s.gesture_for(m)
                gui.validate(g, s.proj.size)
                for a in (g["actions"] if g["type"] == "batch" else [g]):
                    _expect(all(isinstance(a[k], int) for k in a if k != "type"),
                            f"{style}, move {i}: the gesture of {m} is not in whole pixels: {g}")
                got = s.interpret(g)
                _expect(got == [m], f"{style}, move {i}: the gesture {g} of move {m} makes {got}")
            m = rng.choice(legal)
            n = len(s.session.moves)
            fb = s.dispatch(s.gesture_for(m))                  # the path of a person's click or drag
            _expect(s.session.moves[n:] == [m], f"{style}, move {i}: dispatching the gesture of {m} made "
                                                f"{s.session.moves[n:]} ({fb.as_dict()})")
            state, _ = p.step(lvl, state, m)
            _expect(np.array_equal(s.session.state, state), f"{style}, move {i}: the screen's state is not the rules'")


def _check_drawing(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.render.frame import Renderer
    for style in ("2d", "3d"):
        a, b = _suite(ctx, lvl, style), _suite(ctx, lvl, style)
        f1 = Renderer(style, 1.0).render(a)
        f2 = Renderer(style, 1.0).render(b)            # a fresh renderer: no shared caches
        w, h = a.proj.size
        _expect(f1.shape == (h, w, 3) and f1.dtype == np.uint8, f"{style}: a frame of shape {f1.shape}, {f1.dtype}")
        _expect(f1.std() > 1, f"{style}: the frame is blank")
        _expect(f1.tobytes() == f2.tobytes(), f"{style}: two renderers drew the same screen differently")
        legal = a.session.legal_moves()
        if legal:
            m = random.Random(ctx.seed + 8).choice(legal)
            for s in (a, b):
                s.dispatch(s.gesture_for(m))
                s.dispatch({"type": "wait", "ms": 5000})       # animations over
            g1 = Renderer(style, 1.0).render(a)
            _expect(g1.tobytes() == Renderer(style, 1.0).render(b).tobytes(),
                    f"{style}: after move {m}, two renderers drew the same screen differently")
            _expect(g1.tobytes() != f1.tobytes(), f"{style}: move {m} changed nothing on screen")


def _check_env(ctx: _Ctx, lvl: Level) -> None:
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from longpuzzle.agents.envs import PuzzleVectorEnv, env_id, register_envs
    p = ctx.puzzle
    eid = env_id(ctx.game)
    if eid not in gym.registry:
        register_envs()                   # (a game registered after the envs were)
    for mode in ("rules", "pixels"):
        env = gym.make(eid, mode=mode, level=lvl)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        bad = [str(w.message) for w in caught if not any(a in str(w.message) for a in ENV_WARNINGS_ALLOWED)]
        _expect(not bad, f"{mode} env: check_env warned {bad}")
        env.close()
    n = 8
    env = PuzzleVectorEnv(n, lvl, autoreset_mode="disabled")
    states, _ = env.reset(seed=ctx.seed)
    rng = np.random.default_rng(ctx.seed + 9)
    total = np.zeros(n)
    for _ in range(40):
        acts = [rng.choice(p.legal_moves(lvl, states[i]) or [0]) for i in range(n)]
        states, rew, term, trunc, info = env.step(np.array(acts))
        total += rew
        if term.any():
            break
    p0 = p.progress(lvl, lvl.initial)
    for i in range(n):
        _expect(abs(total[i] - (p.progress(lvl, states[i]) - p0)) < 1e-9,
                f"vector env {i}: rewards sum to {total[i]}, progress made {p.progress(lvl, states[i]) - p0}")


def _check_knowledge(ctx: _Ctx, lvl: Level) -> None:
    from longpuzzle.solvers.core import level_aux, search_kernels
    from longpuzzle.solvers.knowledge import Knowledge, knowledge
    k = knowledge(ctx.game)
    if type(k) is Knowledge and k.kernels is None:
        raise _Skip("the game declares no solver knowledge", game_wide=True)
    p = ctx.puzzle
    mod = search_kernels(ctx.game)
    aux, w = level_aux(lvl)
    rng = random.Random(ctx.seed + 10)
    s = lvl.initial.copy()
    na, n_el = lvl.n_actions, s.shape[0]

    def pack(state):
        key = np.zeros(w, np.uint64)
        mod.pack_one(lvl.lv, aux, state, key)
        return key

    for i in range(WALK // 2):
        key = pack(s)
        cs = s.copy()
        mod.unpack_one(lvl.lv, aux, key, cs)
        _expect(np.array_equal(pack(cs), key), f"state {i}: pack(unpack(pack(s))) != pack(s)")
        _expect(bool(p.is_solved(lvl, cs)) == bool(p.is_solved(lvl, s)), f"state {i}: unpacking changed whether it is solved")
        succ = np.zeros((na, n_el), s.dtype)
        acts = np.zeros(na, np.int64)
        got = {}
        for j in range(mod.expand(lvl.lv, aux, cs, succ, acts)):
            a = int(acts[j])
            nxt, code = p.step(lvl, cs, a)
            _expect(code == OK, f"state {i}: the search expands move {a}, which the rules refuse (code {code})")
            _expect(np.array_equal(pack(nxt), pack(succ[j])), f"state {i}: the search's successor by move {a} "
                                                                 f"is not the rules'")
            got[a] = tuple(pack(succ[j]))
        # every legal move's successor is expanded, up to the packing's symmetry; a move to a
        # state equivalent to this one may be left out (it leads nowhere new)
        want = {tuple(pack(p.step(lvl, cs, a)[0])) for a in p.legal_moves(lvl, cs)} - {tuple(key)}
        missing = want - set(got.values())
        _expect(not missing, f"state {i}: {len(missing)} successors of legal moves are not expanded by the search")
        moves = p.legal_moves(lvl, s)
        if not moves:
            break
        s, _ = p.step(lvl, s, rng.choice(moves))


def _check_generator(ctx: _Ctx) -> None:
    from longpuzzle.engine.errors import UnknownGameError
    from longpuzzle.solvers.generators import generate, generator
    try:
        gen = generator(ctx.game)
    except UnknownGameError:
        raise _Skip("the game declares no generator", game_wide=True) from None
    p = ctx.puzzle
    tier = gen.tiers()[0]
    made = list(generate(ctx.game, tier, seed=ctx.seed, count=2))
    again = next(generate(ctx.game, tier, seed=ctx.seed, start=1, count=1))
    _expect(again.record == made[1].record, f"tier {tier}: level 1 of seed {ctx.seed} came out differently when made again")
    for i, g in enumerate(made):
        lvl = g.level
        _expect(lvl.game == ctx.game and lvl.difficulty == tier, f"tier {tier}: level {i} is {lvl.id}")
        rebuilt = p.build_level(g.record, difficulty=tier, number=lvl.number, where=f"generated {lvl.id}")
        _expect(np.array_equal(rebuilt.lv, lvl.lv) and np.array_equal(rebuilt.initial, lvl.initial)
                and rebuilt.n_actions == lvl.n_actions, f"tier {tier}: level {i}'s record builds another level")
        _expect(g.profile.status == "solvable", f"tier {tier}: level {i} is not certified solvable")
        acts = [a for t in g.profile.solution for a in p.actions(lvl, t)]
        state = lvl.initial
        for a in acts:
            state, code = p.step(lvl, state, a)
            _expect(code == OK, f"tier {tier}: level {i}'s certified solution has a rejected move {a}")
        _expect(p.is_solved(lvl, state), f"tier {tier}: level {i}'s certified solution does not win")


# name -> (check, per level?)
def _check_labels(ctx: _Ctx) -> None:
    from longpuzzle.engine.registry import spec
    from longpuzzle.render.frame.paint import missing_glyphs
    labels = spec(ctx.game).labels
    if not labels:
        raise _Skip("the game declares no texts in other languages", game_wide=True)
    blank = {(lang, english, text): gone for lang, texts in labels.items() for english, text in texts.items()
             if (gone := missing_glyphs(text, lang, ctx.game))}
    _expect(not blank, "; ".join(f"{lang} {english!r} -> {text!r}: no available font has {gone!r}"
                                 for (lang, english, text), gone in blank.items())
            + " (declare a font with these glyphs: GameSpec.fonts)")


CHECKS: dict[str, tuple[Callable, bool]] = {
    "declaration": (_check_declaration, False),
    "move_text": (_check_move_text, True),
    "rules": (_check_rules, True),
    "simulation": (_check_simulation, True),
    "kernels": (_check_kernels, True),
    "episode": (_check_episode, True),
    "save_load": (_check_save_load, True),
    "undo_restart": (_check_undo_restart, True),
    "win": (_check_win, True),
    "milestones": (_check_milestones, True),
    "gui": (_check_gui, True),
    "drawing": (_check_drawing, True),
    "env": (_check_env, True),
    "knowledge": (_check_knowledge, True),
    "generator": (_check_generator, False),
    "labels": (_check_labels, False),
}


def _levels(game: str, levels: Iterable[str | Level] | None, cat: Catalog) -> tuple[list[Level], bool]:
    if levels is None:
        return [cat.level(lid) for lid in sample_levels(game, catalog=cat)], True
    return [load_level(x, cat) for x in levels], False


def check_puzzle(game_id: str, *, levels: Iterable[str | Level] | None = None, seed: int = 0,
                 checks: Iterable[str] | None = None, catalog: Catalog | None = None,
                 raise_on_failure: bool = True) -> ConformanceReport:
    """Run the conformance checks (CHECKS; all of them by default) on a registered game.

    ``levels``: level ids or Level objects (default: the first, last and two evenly spread
    levels of the game in ``catalog``, by default the built-in one, which holds the levels
    of the games declared through the entry point too). ``seed`` fixes every random walk and
    playout. Returns the ConformanceReport; if a check failed, raises ConformanceError
    listing every failure with the level and seed that reproduce it (or, with
    ``raise_on_failure=False``, returns the report with its ``failures``)."""
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"unknown conformance check(s) {unknown}; the checks are {', '.join(CHECKS)}")
    puzzle = get_puzzle(game_id)              # an unknown game -> UnknownGameError
    cat = catalog if catalog is not None else builtin_catalog()
    lvls, from_catalog = _levels(game_id, levels, cat)
    ctx = _Ctx(game_id, puzzle, int(seed), lvls, cat, from_catalog)
    report = ConformanceReport(game_id, int(seed), [lv.id for lv in lvls])
    for name in names:
        fn, per_level = CHECKS[name]
        for lvl in (lvls if per_level else [None]):
            where = lvl.id if lvl is not None else ""
            try:
                fn(ctx, lvl) if per_level else fn(ctx)
            except _Skip as e:
                report.skipped.append((name, where, str(e)))
                if e.game_wide:
                    break                              # the same for every level
            except _Failed as e:
                report.failures.append(Failure(name, where, ctx.seed, str(e)))
            except Exception as e:  # noqa: BLE001 - a crash is a failure too, with where it happened
                tb = traceback.extract_tb(e.__traceback__)[-1]
                report.failures.append(Failure(name, where, ctx.seed, f"raised {type(e).__name__}: {e} "
                                               f"({tb.filename}:{tb.lineno})"))
            else:
                report.passed.append((name, where))
    if report.failures and raise_on_failure:
        raise ConformanceError(report)
    return report
