"""The oracle: what the exact solvers know about any state of a level (issue 38).

    from longpuzzle.solvers.oracle import oracle, Oracle
    a = oracle("rush_hour/easy/1", state)      # Answer: d(s) or certified bounds, dead end, best moves
    o = Oracle("rush_hour/easy/1")             # per level, caching: annotate a whole episode with it
    o.at(state).distance                       # d(s): moves to the nearest win (None where only bounds)
    o.cost(state, "A+1")                       # e(s, a) = 1 + d(T(s, a)) - d(s): 0 optimal, inf fatal
    o.moves(state)                             # every legal move with its extra cost, best first
    o.annotate(actions)                        # one record per step of a trajectory from the start

Moves are counted as the rules count them (one accepted action is one move, the winning move
included, as the catalogue's ``optimal_moves`` and the solvers' lengths count; an accepted move
that changes nothing costs 1). d(s) = 0 on a solved state; a certified dead end has d = inf.
Where the paper counts a person's pointer presses instead (its human reference, Table 4: one
per click, drag or swipe), ``o.presses(action)`` is a move's press cost - the presses of the
GUI gesture that makes it from the idle screen: 2 in Nut and Bolt and Bolt Unscrew (a
selection press, then the target's), 1 elsewhere - and each MoveCost carries it (``presses``);
the fewest presses to win is then ``presses_per_move * d(s)`` where every move costs the same
(Color Connect's drags may join several one-cell moves into one press: fewer there).

How it knows (all searches are bounded by stored states, never by time, so every answer is
deterministic):

1. The level's whole reachable state graph (solvers/profile.StateGraph, solved states
   terminal), searched once per level when it fits ``graph_budget`` states, then a backward
   breadth-first search from the solved states: d(s) of EVERY reachable state is exact, a
   dead end is certified by exhaustion, and a state missing from the graph is not reachable
   from the level's start (an error).
2. Otherwise (the level's space is larger), the graph of the states reachable from the asked
   state, when that fits the budget (late in an episode it often does: Maze Paint and Nut and
   Bolt progress one way); such graphs are kept and reused for every later state they hold.
3. Otherwise the game's exhaustive solver on that state (core.solve: BFS, A*, the games' own
   solvers, within ``solve_budget`` states): exact when it proves its solution optimal, else
   certified bounds lower <= d(s) <= upper (upper None: no solution found yet), with
   ``exact`` False. Dead ends: the game's cheap predicate, then core.certify. Answers are
   memoised per state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.errors import IllegalMoveError, LongPuzzleError, MoveSyntaxError
from longpuzzle.engine.protocol import NOOP, Level
from longpuzzle.engine.registry import get_puzzle, puzzle_ids
from longpuzzle.solvers.knowledge import knowledge

GRAPH_BUDGET = 2_000_000       # states of the level's whole graph (way 1)
LOCAL_BUDGET = 200_000         # states of a graph from an asked state (way 2)
SOLVE_BUDGET = 1_000_000       # states of one solver call (way 3)
LOCAL_KEPT = 4_000_000         # states of local graphs kept per level (oldest dropped first)
INF = math.inf
# a game's own budgets and whether way 2 is worth it are its solver knowledge's
# (Knowledge.graph_budget, solve_budget, local_graphs: solvers/game_knowledge.py)


class _Budgets(Mapping):
    """game id -> a budget its solver knowledge sets (the games leaving the default are keys)."""

    def __init__(self, name: str):
        self._name = name

    def __getitem__(self, game: str) -> int:
        v = getattr(knowledge(game), self._name)
        if v is None:
            raise KeyError(game)
        return v

    def __iter__(self):
        return (g for g in puzzle_ids() if getattr(knowledge(g), self._name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


GRAPH_BUDGETS = _Budgets("graph_budget")      # game -> the whole graph's budget (else GRAPH_BUDGET)
SOLVE_BUDGETS = _Budgets("solve_budget")      # game -> one solver call's budget (else SOLVE_BUDGET)


class OracleError(LongPuzzleError, ValueError):
    """A state the oracle cannot answer for: not a valid state of the level, or not reachable
    from its start."""


@dataclass
class Answer:
    """What is known of one state. ``exact``: distance is d(s) (None for a dead end, whose d is
    infinite); otherwise lower <= d(s) <= upper are certified bounds (upper None: unbounded)."""
    level: str
    status: str                       # "solved" | "solvable" | "dead_end" | "unknown"
    exact: bool
    distance: int | None              # d(s) when exact and not a dead end
    lower: int | None                 # certified bounds (both = distance when exact)
    upper: int | None
    method: str                       # "graph" (the level's), "local graph", the solver's method, "predicate"

    @property
    def dead_end(self) -> bool:
        return self.status == "dead_end"

    @property
    def d(self) -> float:
        """d(s) as a number: inf for a dead end; NaN when only bounds are known."""
        if self.dead_end:
            return INF
        return float(self.distance) if self.exact else math.nan

    def as_dict(self) -> dict:
        return {"level": self.level, "status": self.status, "exact": self.exact, "distance": self.distance,
                "lower": self.lower, "upper": self.upper, "dead_end": self.dead_end, "method": self.method}


@dataclass
class MoveCost:
    """One legal move of a state and its extra cost e(s, a) = 1 + d(T(s, a)) - d(s).

    cost: 0 on a shortest path, > 0 a detour of that many moves, inf fatal (it makes a
    solvable level lost), None when undefined or not known exactly: on a board already lost
    (inf - inf), or where only bounds are known (then ``lower``/``upper`` bound it; upper
    None: unbounded)."""
    move: str
    action: int
    cost: float | None
    lower: float | None
    upper: float | None
    after: Answer                     # what is known of the successor
    presses: int | None = None        # pointer presses of the move's GUI gesture (Oracle.presses)

    @property
    def fatal(self) -> bool:
        return self.cost == INF

    def as_dict(self) -> dict:
        c = self.cost
        return {"move": self.move, "action": self.action, "cost": None if c is None or c == INF else int(c),
                "fatal": self.fatal, "lower": _num(self.lower), "upper": _num(self.upper),
                "presses": self.presses, "after": self.after.as_dict()}


def _num(v):
    return None if v is None or v == INF else int(v)


@dataclass
class Step:
    """One annotated step of a trajectory: the state before it, the move and its cost."""
    index: int                        # 1-based number of the move
    move: str
    before: Answer
    cost: MoveCost
    lost_before: bool = False         # the move was played on a board already lost
    optimal: bool = False             # cost 0 (on a shortest path)

    def as_dict(self) -> dict:
        return {"step": self.index, "move": self.move, "d_before": self.before.as_dict(),
                "cost": self.cost.as_dict(), "lost_before": self.lost_before, "optimal": self.optimal}


@dataclass
class _Graph:
    """A complete state graph (way 1 or 2) with its distances to a win."""
    graph: object
    dist: np.ndarray
    whole_level: bool


class Oracle:
    """The oracle of one level, caching what it learns (see the module docstring)."""

    def __init__(self, level: Level | str, *, graph_budget: int | None = None, local_budget: int = LOCAL_BUDGET,
                 solve_budget: int | None = None):
        self.level = load_level(level)
        self.puzzle = get_puzzle(self.level.game)
        self.knowledge = knowledge(self.level.game)
        if graph_budget is None:           # the game's default (its knowledge's, else GRAPH_BUDGET)
            graph_budget = GRAPH_BUDGETS.get(self.level.game, GRAPH_BUDGET)
        self.graph_budget = int(graph_budget)
        self.local_budget = int(local_budget)
        self.solve_budget = int(SOLVE_BUDGETS.get(self.level.game, SOLVE_BUDGET) if solve_budget is None
                                else solve_budget)
        self._level_graph: _Graph | None = None
        self._level_graph_tried = False
        self.level_graph_states = 0          # states of the level's graph (a lower bound when it did not fit)
        self._local: list[_Graph] = []
        self._memo: dict[bytes, Answer] = {}
        self._presses: dict[int, int] = {}      # action -> pointer presses of its gesture
        self._gui = None                        # the level on a direct-launch Suite (for its gestures)

    @property
    def stored_states(self) -> int:
        """States held by this oracle's graphs (the level's and those from later states)."""
        return (self._level_graph.graph.n if self._level_graph is not None else 0) + \
            sum(g.graph.n for g in self._local)

    # ---- what is known of a state ------------------------------------------------------------

    @property
    def whole(self) -> bool:
        """Is the level's whole reachable graph stored (every answer exact, reachability checked)?"""
        self._ensure_level_graph()
        return self._level_graph is not None

    def _ensure_level_graph(self) -> None:
        if self._level_graph_tried:
            return
        self._level_graph_tried = True
        from longpuzzle.solvers.profile import StateGraph
        g = StateGraph(self.level, budget=self.graph_budget)
        self.level_graph_states = g.n
        if g.complete:
            self._level_graph = _Graph(g, g.distances(), True)

    def state(self, state) -> np.ndarray:
        """``state`` checked: a state of the level's shape and type (OracleError if not)."""
        if isinstance(state, np.ndarray) and state.dtype == self.level.initial.dtype \
                and state.shape == self.level.initial.shape:
            return state
        try:
            return self.puzzle.validate_state(self.level, state)
        except ValueError as e:
            raise OracleError(f"not a state of {self.level.id}: {e}") from None

    def at(self, state=None) -> Answer:
        """What is known of ``state`` (default: the level's start)."""
        s = self.level.initial if state is None else self.state(state)
        self._ensure_level_graph()
        lg = self._level_graph
        if lg is not None:
            u = lg.graph.lookup(s)
            if u < 0:
                raise OracleError(f"this state is not reachable from the start of {self.level.id} "
                                  f"(not among its {lg.graph.n:,} reachable states)")
            return self._answer_of(int(lg.dist[u]), "graph")
        key = s.tobytes()
        got = self._memo.get(key)
        if got is not None:
            return got
        got = self._from_local(s)
        if got is None:
            got = self._from_solver(s)
        if len(self._memo) > 1_000_000:
            self._memo.clear()
        self._memo[key] = got
        return got

    def _answer_of(self, d: int, method: str) -> Answer:
        lid = self.level.id
        if d < 0:
            return Answer(lid, "dead_end", True, None, None, None, method)
        return Answer(lid, "solved" if d == 0 else "solvable", True, d, d, d, method)

    def _from_local(self, s: np.ndarray) -> Answer | None:
        if self.puzzle.is_solved(self.level, s):
            return self._answer_of(0, "rules")
        for g in self._local:
            u = g.graph.lookup(s)
            if u >= 0:
                return self._answer_of(int(g.dist[u]), "local graph")
        if self.local_budget <= 0 or not self.knowledge.local_graphs:
            return None
        from longpuzzle.solvers.profile import StateGraph
        g = StateGraph(self.level, s, budget=self.local_budget)
        if not g.complete:
            return None
        self._local.append(_Graph(g, g.distances(), False))
        while sum(x.graph.n for x in self._local) > LOCAL_KEPT and len(self._local) > 1:
            self._local.pop(0)
        return self._answer_of(int(self._local[-1].dist[0]), "local graph")

    def _from_solver(self, s: np.ndarray) -> Answer:
        from longpuzzle.solvers.core import certify, solve
        lid = self.level.id
        if self.knowledge.dead_end(self.level, s):
            return Answer(lid, "dead_end", True, None, None, None, "predicate")
        r = solve(self.level, state=s, budget=self.solve_budget)
        if r.status == "unsolvable":
            return Answer(lid, "dead_end", True, None, None, None, r.method or "search")
        if r.status == "solvable" and r.optimal:
            return Answer(lid, "solvable", True, r.length, r.length, r.length, r.method or "search")
        lower = max(r.lower_bound or 0, 1)          # not solved (checked first): at least one move
        if r.status == "solvable":
            return Answer(lid, "solvable", False, None, lower, r.length, r.method or "search")
        c = certify(self.level, s, budget=self.solve_budget)
        if c.status == "unsolvable":
            return Answer(lid, "dead_end", True, None, None, None, c.method or "dfs")
        if c.status == "solvable":
            return Answer(lid, "solvable", False, None, lower, len(c.actions), f"{r.method}+{c.method}")
        return Answer(lid, "unknown", False, None, lower, None, r.method or "search")

    # ---- moves -------------------------------------------------------------------------------

    def presses(self, action: int) -> int | None:
        """Pointer presses of the GUI gesture that makes ``action`` from the idle level screen,
        counted as the paper counts a person's (engine.gui.presses: one per click, drag or
        swipe): a move's press cost (None for a game without a screen). The gesture's presses
        do not depend on the board (tested over reachable states), so they are found once per
        action on the level's start."""
        if action in self._presses:
            return self._presses[action]
        from longpuzzle.engine import gui
        if self._gui is None:
            from longpuzzle.engine.suite import Suite              # lazy: only where presses are asked
            self._gui = Suite("home", direct=True)
            self._gui = self._gui if self._gui.open_level(self.level)["effect"] != "unavailable" else False
        got = self._presses[action] = gui.presses(self._gui.gesture_for(int(action))) if self._gui else None
        return got

    @property
    def presses_per_move(self) -> int | None:
        """The press cost every move of the level shares (None if its moves differ)."""
        ps = {self.presses(a) for a in range(self.level.n_actions)}
        return ps.pop() if len(ps) == 1 else None

    def actions_of(self, move) -> list[int]:
        """The actions of a move: an action number or a move text (MoveSyntaxError if it is not
        a move of this level; a text may stand for several actions)."""
        if isinstance(move, str):
            return self.puzzle.actions(self.level, move)
        return [self.puzzle.check_action(self.level, move)]

    def after(self, state, move) -> tuple[np.ndarray, int]:
        """(the state after ``move``, moves it counts); IllegalMoveError if the rules refuse it."""
        cur = self.level.initial if state is None else self.state(state)
        acts = self.actions_of(move)
        for a in acts:
            nxt, code = self.puzzle.step(self.level, cur, a)
            if code > NOOP:
                raise self.puzzle.rejection_error(self.level, a, code)
            cur = nxt
        return cur, len(acts)

    def cost(self, state, move, before: Answer | None = None) -> MoveCost:
        """e(s, a) of ``move`` (an action or a move text) from ``state``."""
        s = self.level.initial if state is None else self.state(state)
        if before is None:
            before = self.at(s)
        if before.status == "solved":
            raise IllegalMoveError(f"{self.level.id} is already solved: the episode ended, no move follows")
        t, k = self.after(s, move)
        acts = self.actions_of(move)
        text = move if isinstance(move, str) else self.puzzle.format_move(self.level, acts[0])
        return self._cost(before, self.at(t), k, text, acts[0] if len(acts) == 1 else -1)

    @staticmethod
    def _cost(before: Answer, after: Answer, k: int, text: str, action: int) -> MoveCost:
        if before.dead_end:
            return MoveCost(text, action, None, None, None, after)
        if after.dead_end:
            # d(s) is finite: s is not a dead end (a certificate or a solution of it exists)
            return MoveCost(text, action, INF, INF, INF, after)
        if before.exact and after.exact:
            c = k + after.distance - before.distance
            return MoveCost(text, action, c, c, c, after)
        # bounds: e = k + d(t) - d(s); and e >= 0 always (d(s) <= k + d(t))
        lo = max(0, k + (after.lower or 0) - (before.upper if before.upper is not None else INF))
        hi = INF if after.upper is None else k + after.upper - (before.lower or 0)
        return MoveCost(text, action, None, lo, hi, after)

    def moves(self, state=None) -> list[MoveCost]:
        """Every legal move of ``state`` with its extra cost, cheapest first (ties in action
        order); [] on a solved state."""
        s = self.level.initial if state is None else self.state(state)
        before = self.at(s)
        if before.status == "solved":
            return []
        out = []
        for a in self.puzzle.legal_moves(self.level, s):
            t, code = self.puzzle.step(self.level, s, a)
            if code > NOOP:
                continue
            m = self._cost(before, self.at(t), 1, self.puzzle.format_move(self.level, a), a)
            m.presses = self.presses(a)
            out.append(m)

        def order(m: MoveCost):
            c = m.cost if m.cost is not None else (m.lower if m.lower is not None else INF)
            return (c, m.upper if m.upper is not None else INF, m.action)
        out.sort(key=order)
        return out

    def best(self, state=None) -> list[MoveCost]:
        """The best next moves: those of cost 0 where d is known exactly; where only bounds are
        known, the moves of least lower bound (``exact`` of their answers says which)."""
        ms = [m for m in self.moves(state) if not m.fatal]
        if not ms:
            return []
        if ms[0].cost is not None:
            return [m for m in ms if m.cost == ms[0].cost]
        lo = ms[0].lower
        return [m for m in ms if m.cost is None and m.lower == lo]

    def annotate(self, moves, state=None) -> list[Step]:
        """One Step per move of a trajectory from ``state`` (default: the start). Stops with
        IllegalMoveError at a move the rules refuse (MoveSyntaxError: not a move)."""
        cur = self.level.initial if state is None else self.state(state)
        before = self.at(cur)
        out = []
        for i, mv in enumerate(moves, 1):
            if before.status == "solved":
                raise IllegalMoveError(f"move {i} follows the win of {self.level.id}")
            t, k = self.after(cur, mv)
            acts = self.actions_of(mv)
            text = mv if isinstance(mv, str) else self.puzzle.format_move(self.level, acts[0])
            after = self.at(t)
            c = self._cost(before, after, k, text, acts[0] if len(acts) == 1 else -1)
            out.append(Step(i, text, before, c, lost_before=before.dead_end, optimal=c.cost == 0))
            cur, before = t, after
        return out


_ORACLES: dict = {}
KEPT_STATES = 6_000_000        # graph states of the oracles oracle_for keeps (about 100-200 bytes each)


def keep(oracles: dict, key, make) -> Oracle:
    """oracles[key], made by make() if absent; the oldest others are dropped while the graphs
    kept hold more than KEPT_STATES states (a graph of 2,000,000 states is a few hundred MB)."""
    got = oracles.get(key)
    if got is None:
        got = oracles[key] = make()
    else:
        oracles[key] = oracles.pop(key)          # the most recently used last
    while len(oracles) > 1 and sum(o.stored_states for o in oracles.values()) > KEPT_STATES:
        oracles.pop(next(iter(oracles)))
    return got


def oracle_for(level: Level | str, **kw) -> Oracle:
    """The cached Oracle of a level (one per level content and budgets, kept for the process
    within KEPT_STATES graph states)."""
    lvl = load_level(level)
    return keep(_ORACLES, (lvl.id, lvl.sha256, tuple(sorted(kw.items()))), lambda: Oracle(lvl, **kw))


def oracle(level: Level | str, state=None, **kw) -> Answer:
    """What is known of ``state`` (default: the start) of ``level``: oracle_for(level).at(state)."""
    return oracle_for(level, **kw).at(state)


__all__ = ["Answer", "MoveCost", "Oracle", "OracleError", "Step", "oracle", "oracle_for", "MoveSyntaxError"]
