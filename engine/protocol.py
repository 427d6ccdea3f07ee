"""The puzzle protocol: what every game module in longpuzzle.puzzles provides.

Data lives where its lifetime belongs:

    Level    level parameters, fixed for the level's life (never changes, never undone)
             .lv       int32[:]   the "level vector": sizes, walls, capacities... read by kernels
             .initial  <dtype>[:] the initial state
             .extra    Python-side data (names, display geometry) used by text forms / rendering
    state    the undoable rules state: ONE flat numpy array of the game's dtype.
             Undo and restart restore exactly this and nothing else.
    Session  history, counters (engine/session.py);  UI state and pixels live in render/.

Compiled kernels (module-level ``numba.njit(cache=True)`` functions in each game module;
every one is pure: it never writes to ``lv`` or ``src``):

    step_into(lv, src, dst, action) -> int64 code
        writes the successor of ``src`` under ``action`` into ``dst`` (same shape).
        code OK (0): accepted, the state changed; NOOP (1): accepted and counted as a move,
        nothing changed (e.g. a Maze Paint swipe into a wall); BAD_ACTION (2): the integer is
        not an action of this level; >= 3: the game's own rejection reasons. On any code
        other than OK, ``dst`` equals ``src``.
    legal_into(lv, state, mask) -> int64
        mask[a] = 1 iff step_into would return OK (accepted AND changes the state);
        returns the number of such actions. ``mask`` has length ``level.n_actions``.
    is_solved(lv, state) -> bool
    progress(lv, state) -> float64   the benchmark's progress potential P in [0, 1]

Keep each game's kernels self-contained in its own module (numba's on-disk cache does not
track calls into other files).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any
from collections.abc import Iterable, Sequence

import numpy as np

from longpuzzle.engine.errors import IllegalMoveError, MoveSyntaxError

# Result codes shared by every game's step_into. Games number their own reasons from 3.
OK = 0
NOOP = 1
BAD_ACTION = 2
FIRST_GAME_CODE = 3


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, eq=False)
class Level:
    """One level, parsed. Immutable: ``lv`` and ``initial`` are read-only arrays."""

    game: str
    difficulty: str
    number: int                      # 1-based within its objective
    lv: np.ndarray                   # int32 level vector (layout documented per game)
    initial: np.ndarray              # initial state (layout documented per game)
    n_actions: int                   # actions are integers 0 .. n_actions-1
    data: dict                       # the level record exactly as in the level file
    extra: Any = None                # game-side Python data (names, geometry)
    source: str = ""                 # file it was loaded from
    name: str = ""                   # optional display name / original id

    def __post_init__(self) -> None:
        self.lv.setflags(write=False)
        self.initial.setflags(write=False)

    @cached_property
    def id(self) -> str:
        return f"{self.game}/{self.difficulty}/{self.number}"

    @cached_property
    def move_text_cache(self) -> dict:
        """action -> its move text (Puzzle.format_move), filled in by the sessions that play
        this level (a cache: a level's texts never change)."""
        return {}

    @cached_property
    def move_action_cache(self) -> dict:
        """move text -> its action (Puzzle.parse_move), filled in by readers of this level's
        move texts (a cache, as move_text_cache the other way)."""
        return {}

    @cached_property
    def diagnostics_cache(self) -> dict:
        """state bytes -> Puzzle.diagnostics of that state, filled in by the evaluators of
        this level's episodes (a cache: diagnostics are a function of the level and the
        state; the episodes of an objective pass through the same states)."""
        return {}

    @cached_property
    def step_cache(self) -> dict:
        """(state bytes, action) -> (the successor, read-only; step_solved_into's 2 * code +
        solved), filled in by Puzzle.step, step_solved and the sessions that play this level
        when its game keeps steps (Puzzle.keeps_steps; a cache: a step is a function of the
        level, the state and the action, and the episodes of an objective make the same moves
        again). At most STEPS_KEPT (a Bolt Unscrew entry is about 2.5 KB: 10 MB a level)."""
        return {}

    @cached_property
    def sha256(self) -> str:
        """Digest of the level's content (game + record), used to match checkpoints."""
        return hashlib.sha256(canonical_json({"game": self.game, "data": self.data}).encode()).hexdigest()

    def __repr__(self) -> str:
        return f"Level({self.id!r})"


@dataclass(frozen=True)
class Rejection:
    reason: str        # short id, e.g. "target_full"
    message: str       # one sentence for people


STEPS_KEPT = 4096                # steps kept a level (Level.step_cache), when its game keeps them


class Puzzle:
    """Base class of a game. Subclasses set the class attributes and implement the
    four methods marked *game*; everything else is generic over the kernels."""

    id: str = ""
    title: str = ""
    difficulties: tuple[str, ...] = ()
    catalog_order: int = 100               # position in the benchmark's game order
    undo_allowed: bool = False
    state_dtype: Any = np.int16
    kernels: ModuleType                    # module holding step_into / legal_into / is_solved / progress
    rejections: dict[int, Rejection] = {}  # the game's codes >= FIRST_GAME_CODE
    move_syntax: str = ""                  # one line describing the move text
    dead_ends: bool = False                # can a legal move make the level unsolvable?
    # step, step_solved and sessions keep the steps they made (Level.step_cache, at most
    # STEPS_KEPT a level): for games whose step costs much more than looking it up (about
    # 1 us), e.g. a physics settle
    keeps_steps: bool = False

    # ---- game ----------------------------------------------------------------
    def build_level(self, record: dict, *, difficulty: str, number: int, where: str) -> Level:
        """Parse and validate one level record; raise LevelFormatError naming the field."""
        raise NotImplementedError

    def format_move(self, level: Level, action: int) -> str:
        raise NotImplementedError

    def parse_move(self, level: Level, text: str) -> int | list[int]:
        """Text -> action (or, for compound text forms, a list of actions).
        Raise MoveSyntaxError for text that is not a move of this level."""
        raise NotImplementedError

    def render_text(self, level: Level, state: np.ndarray) -> str:
        raise NotImplementedError

    # ---- generic -------------------------------------------------------------
    def describe_code(self, code: int) -> Rejection:
        if code == BAD_ACTION:
            return Rejection("bad_action", "that action number does not exist in this level")
        if code in self.rejections:
            return self.rejections[code]
        return Rejection(f"code_{code}", f"the rules rejected the move (code {code})")

    def actions(self, level: Level, text: str) -> list[int]:
        """Parse text into the list of actions it stands for."""
        if not isinstance(text, str):
            raise MoveSyntaxError(f"a move must be text, not {type(text).__name__}")
        out = self.parse_move(level, text.strip())
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def check_action(self, level: Level, action: Any) -> int:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise MoveSyntaxError(f"an action must be an integer, not {action!r}")
        a = int(action)
        if not 0 <= a < level.n_actions:
            raise MoveSyntaxError(f"action {a} is out of range 0..{level.n_actions - 1} for {level.id}")
        return a

    def step(self, level: Level, state: np.ndarray, action: int) -> tuple[np.ndarray, int]:
        """(successor, code) without raising; the input is never modified."""
        if self.keeps_steps and state.dtype == self.state_dtype:
            nxt, r = self.kept_step(level, state, int(action))
            return nxt.copy(), r >> 1
        dst = state.copy()       # same shape and type, writable; quicker than np.empty_like
        # a Python int types as int64 in numba, the same signature as np.int64 and cheaper to make
        code = int(self.kernels.step_into(level.lv, state, dst, int(action)))
        return dst, code

    _step_solved = None      # the compiled step_solved_into kernel, loaded at first use

    def step_solved(self, level: Level, state: np.ndarray, action: int) -> tuple[np.ndarray, int, bool]:
        """(successor, code, solved) without raising: ``step`` and ``is_solved`` of the
        successor in ONE compiled call (``solved`` is False for a rejected action). ``action``
        must already be a Python int in range (see check_action); the input is never modified."""
        dst, r = self.step_solved_code(level, state, action)
        return dst, r >> 1, r & 1 == 1

    def step_solved_code(self, level: Level, state: np.ndarray, action: int) -> tuple[np.ndarray, int]:
        """(successor, 2 * code + (1 if solved else 0)): step_solved's answer as the
        step_solved_into kernel gives it (the successor the caller's own, writable), from
        Level.step_cache when the game keeps_steps."""
        k = self._step_solved or self.step_solved_kernel()
        if self.keeps_steps and state.dtype == self.state_dtype:
            nxt, r = self.kept_step(level, state, action, k)
            return nxt.copy(), r
        dst = state.copy()
        return dst, k(level.lv, state, dst, action)

    def kept_step(self, level: Level, state: np.ndarray, action: int, step_solved=None) -> tuple[np.ndarray, int]:
        """(the successor, read-only: copy it to own it; 2 * code + solved) of ``action`` (a
        Python int) from ``state`` (of the game's state_dtype), as step_solved_into gives them,
        kept in Level.step_cache (a game that keeps_steps: its step costs more than finding it
        there again). Made by ``step_solved`` (the step_solved_into kernel) when given, else
        by the game's kernels module (step_into, then is_solved: as a short command runs
        them, without compiling)."""
        kept = level.step_cache
        key = (state.tobytes(), action)
        hit = kept.get(key)
        if hit is None:
            dst = state.copy()
            if step_solved is not None:
                r = step_solved(level.lv, state, dst, action)
            else:
                k = self.kernels
                code = int(k.step_into(level.lv, state, dst, action))
                r = 2 * code + (1 if code <= NOOP and k.is_solved(level.lv, dst) else 0)
            dst.setflags(write=False)
            if len(kept) >= STEPS_KEPT:
                try:
                    del kept[next(iter(kept))]  # the one kept longest goes first
                except (KeyError, RuntimeError, StopIteration):
                    pass                        # (another thread's step changed the cache between)
            hit = kept[key] = (dst, r)
        return hit

    def step_solved_kernel(self):
        """The compiled ``step_solved_into(lv, src, dst, action) -> 2 * code + solved``
        (engine/specialize.py PLAY_TEMPLATE), loaded at first use."""
        if self._step_solved is None:
            from longpuzzle.engine.specialize import play_kernels
            self._step_solved = play_kernels(self).step_solved_into
        return self._step_solved

    def apply(self, level: Level, state: np.ndarray, move: int | str) -> np.ndarray:
        """Pure: returns the new state, raises IllegalMoveError if the rules reject the move
        and MoveSyntaxError if it is not a move at all. Text may stand for several actions."""
        acts = self.actions(level, move) if isinstance(move, str) else [self.check_action(level, move)]
        cur = state
        for a in acts:
            nxt, code = self.step(level, cur, a)
            if code > NOOP:
                raise self.rejection_error(level, a, code)
            cur = nxt
        return cur if cur is not state else state.copy()

    def rejection_error(self, level: Level, action: int, code: int) -> IllegalMoveError:
        rej = self.describe_code(code)
        text = self.format_move(level, action) if 0 <= action < level.n_actions else str(action)
        return IllegalMoveError(f"move {text} rejected: {rej.message}", move=text, code=code, reason=rej.reason)

    def legal_mask(self, level: Level, state: np.ndarray) -> np.ndarray:
        mask = np.zeros(level.n_actions, np.uint8)
        self.kernels.legal_into(level.lv, state, mask)
        return mask

    def legal_moves(self, level: Level, state: np.ndarray) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.legal_mask(level, state))]

    def is_solved(self, level: Level, state: np.ndarray) -> bool:
        return bool(self.kernels.is_solved(level.lv, state))

    def progress(self, level: Level, state: np.ndarray) -> float:
        return float(self.kernels.progress(level.lv, state))

    def format_moves(self, level: Level, actions: Iterable[int]) -> list[str]:
        return [self.format_move(level, int(a)) for a in actions]

    def validate_state(self, level: Level, state: Sequence[int]) -> np.ndarray:
        """Turn a list of ints (e.g. from a checkpoint) into a state array of the right
        shape and dtype, or raise ValueError (for any value that is not an integer, however
        large, and for a list of the wrong length)."""
        if isinstance(state, np.ndarray):
            state = state.tolist() if state.ndim == 1 else [state.tolist()]
        if type(state) not in (list, tuple):
            raise ValueError(f"a state is a list of integers, not {type(state).__name__}")
        n = level.initial.shape[0]
        if len(state) != n:
            raise ValueError(f"state has shape ({len(state)},), expected ({n},)")
        info = np.iinfo(level.initial.dtype)
        for v in state:
            if type(v) is not int or not info.min <= v <= info.max:
                if type(v) is int or (isinstance(v, np.integer) and not isinstance(v, bool)):
                    raise ValueError("state values do not fit the state's integer type "
                                     f"({level.initial.dtype}: {info.min}..{info.max})")
                raise ValueError(f"state values must be integers, not {type(v).__name__}")
        return np.array(state, level.initial.dtype)

    def state_bounds(self, level: Level) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): two arrays of the state's shape and dtype with ``low[i] <= s[i] <=
        high[i]`` for EVERY state reachable from ``level.initial`` (observation spaces are
        built from them, so they must be true bounds; keep them as tight as the rules allow).
        The default is the dtype's whole range; every built-in game gives its own (the
        conformance suite checks them along random walks)."""
        info = np.iinfo(level.initial.dtype)
        return (np.full(level.initial.shape, info.min, level.initial.dtype),
                np.full(level.initial.shape, info.max, level.initial.dtype))

    def harness_deadlock(self, level: Level, state: np.ndarray) -> str | None:
        """The original harness ends a level early on some cheap deadlock tests (Bolt
        Unscrew: no usable hole; Rush Hour: no vehicle can move). Return the termination
        reason, or None."""
        return None

    def diagnostics(self, level: Level, state: np.ndarray) -> dict:
        """Optional game-specific facts for evaluators and reports (e.g. usable holes);
        never shown to agents."""
        return {}

    def __repr__(self) -> str:
        return f"<Puzzle {self.id}>"

