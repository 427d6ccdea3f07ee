"""Sessions: a level being played, with its history, counters and exact checkpoints.

What lives here (and what undo restores):

    state      the rules state (undo and restart restore it exactly)
    moves      the actions applied since the last restart, in order (undo pops one)
    log        every command given, as text, including "undo", "restart" and "rejected:<attempt>"
               (an attempt the screen refused before the rules, counted as rejected): the episode
    counters   accepted moves, no-op moves, rejected moves, undos, restarts (undo never
               lowers a counter; restart never resets one)

Text forms:
    episode     "<level id>: <token> <token> ..."  tokens are move texts, "undo", "restart",
                "rejected:<attempt>"
    checkpoint  JSON text (see Session.checkpoint) holding the exact state, moves, log and
                counters, with a checksum; restoring gives a session that behaves
                identically from then on.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import NamedTuple
from collections.abc import Iterable

import numpy as np

from longpuzzle.engine.catalog import Catalog, load_level
from longpuzzle.engine.textio import loads
from longpuzzle.engine.errors import (
    CheckpointError,
    IllegalMoveError,
    LongPuzzleError,
    MoveSyntaxError,
    UndoNotAllowedError,
)
from longpuzzle.engine.protocol import NOOP, OK, Level, canonical_json
from longpuzzle.engine.registry import get_puzzle

CHECKPOINT_FORMAT = "longpuzzle-checkpoint/1"
REJECTED = "rejected:"          # log prefix of an attempt the screen refused before the rules (see reject)
MAX_COUNT = 2 ** 53             # counters beyond this are not believed
MAX_TOKEN = 200                 # characters of one log entry
UNDO, RESTART = "undo", "restart"


@dataclass
class Counters:
    moves: int = 0        # accepted moves (including no-op moves)
    noop_moves: int = 0   # accepted moves that changed nothing (e.g. Maze Paint wall bumps)
    rejected: int = 0     # moves the rules refused
    undos: int = 0
    restarts: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Outcome(NamedTuple):
    """What one move did (immutable)."""
    move: str            # the move's text
    action: int
    code: int            # OK, NOOP or a rejection code
    accepted: bool
    changed: bool
    reason: str = ""     # rejection reason id
    message: str = ""


_outcome = tuple.__new__       # builds an Outcome from a full tuple (no Python-level __new__)


class Session:
    """One level being played. Not thread-safe; cheap to create."""

    def __init__(self, level: Level | str, catalog: Catalog | None = None):
        """``level``: a Level, or a level id of ``catalog`` (default: the built-in one)."""
        self.level: Level = load_level(level, catalog)
        self.puzzle = get_puzzle(self.level.game)
        self._state = self.level.initial.copy()
        self._stack: list[np.ndarray] = []   # states before each applied move (for undo)
        self.moves: list[int] = []
        self.log: list[str] = []
        self.counters = Counters()
        self._texts: dict[int, str] = self.level.move_text_cache   # action -> move text (shared by every session of the level)
        self._view: tuple | None = None      # (state array, its read-only view): what ``state`` gives

    # -- reading ---------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """A read-only view of the current state (the session replaces its state array on every
        move and never writes into one, so the view of each array is made once and kept)."""
        st = self._state
        c = self._view
        if c is None or c[0] is not st:
            v = st.view()
            v.setflags(write=False)
            self._view = c = (st, v)
        return c[1]

    @property
    def solved(self) -> bool:
        return self.puzzle.is_solved(self.level, self._state)

    @property
    def progress(self) -> float:
        return self.puzzle.progress(self.level, self._state)

    def legal_moves(self) -> list[int]:
        return self.puzzle.legal_moves(self.level, self._state)

    def move_texts(self) -> list[str]:
        return self.puzzle.format_moves(self.level, self.moves)

    def show(self) -> str:
        return self.puzzle.render_text(self.level, self._state)

    # -- acting ----------------------------------------------------------------
    def try_move(self, move: int | str) -> list[Outcome]:
        """Apply a move (text may stand for several actions); never raises for a rule
        rejection (the outcome says why), raises MoveSyntaxError for non-moves. Stops at
        the first rejected action."""
        if isinstance(move, str):
            token = move.strip()
            if token.lower() == UNDO:
                self.undo()
                return []
            if token.lower() == RESTART:
                self.restart()
                return []
            if token.startswith(REJECTED):
                self.reject(token[len(REJECTED):])
                return []
            actions = self.puzzle.actions(self.level, token)
        else:
            actions = [self.puzzle.check_action(self.level, move)]
        out = []
        for a in actions:
            o = self._apply(a)
            out.append(o)
            if not o.accepted:
                break
        return out

    def play(self, move: int | str) -> list[Outcome]:
        """Like try_move, but a rule rejection raises IllegalMoveError (state unchanged
        by the rejected action)."""
        outs = self.try_move(move)
        if outs and not outs[-1].accepted:
            o = outs[-1]
            raise IllegalMoveError(f"move {o.move} rejected: {o.message}", move=o.move, code=o.code, reason=o.reason)
        return outs

    def play_all(self, moves: Iterable[int | str]) -> None:
        for m in moves:
            self.play(m)

    def apply_action(self, action: int) -> Outcome:
        """One action (an int) through the rules: its Outcome; never raises for a rule
        rejection, raises MoveSyntaxError for an action number that does not exist."""
        if type(action) is not int or not 0 <= action < self.level.n_actions:
            action = self.puzzle.check_action(self.level, action)
        return self._apply(action)

    def _apply(self, action: int) -> Outcome:
        text = self._texts.get(action)
        if text is None:
            text = self._texts[action] = self.puzzle.format_move(self.level, action)
        nxt, code = self.puzzle.step(self.level, self._state, action)
        self.log.append(text)
        c = self.counters
        if code > NOOP:
            c.rejected += 1
            rej = self.puzzle.describe_code(code)
            return _outcome(Outcome, (text, action, code, False, False, rej.reason, rej.message))
        self._stack.append(self._state)
        self._state = nxt
        self.moves.append(action)
        c.moves += 1
        if code == NOOP:
            c.noop_moves += 1
        return _outcome(Outcome, (text, action, code, True, code == OK, "", ""))

    def _apply_solved(self, action: int) -> tuple[Outcome, bool]:
        """_apply (``action`` an int in range) and whether the new state is solved, with one
        compiled call for both (the GUI path asks after every move)."""
        text = self._texts.get(action)
        if text is None:
            text = self._texts[action] = self.puzzle.format_move(self.level, action)
        src = self._state
        nxt, r = self.puzzle.step_solved_code(self.level, src, action)      # 2 * code + solved
        self.log.append(text)
        c = self.counters
        if r >= 2 * NOOP + 2:                       # code > NOOP: rejected
            c.rejected += 1
            code = r >> 1
            rej = self.puzzle.describe_code(code)
            return _outcome(Outcome, (text, action, code, False, False, rej.reason, rej.message)), False
        self._stack.append(src)
        self._state = nxt
        self.moves.append(action)
        c.moves += 1
        code = r >> 1
        if code == NOOP:
            c.noop_moves += 1
        return _outcome(Outcome, (text, action, code, True, code == OK, "", "")), r & 1 == 1

    def reject(self, attempt: str) -> None:
        """Count a move attempt that the screen refused before it became an action of the rules
        (e.g. a Rush Hour drag of less than half a cell) as a rejected move, and log it as
        ``rejected:<attempt>`` so that replaying the episode text gives the same counters."""
        self.log.append(f"{REJECTED}{attempt}"[:MAX_TOKEN])
        self.counters.rejected += 1

    def undo(self) -> None:
        if not self.puzzle.undo_allowed:
            raise UndoNotAllowedError(f"{self.puzzle.title} has no undo", reason="undo_not_allowed")
        if not self._stack:
            raise UndoNotAllowedError("nothing to undo", reason="nothing_to_undo")
        self._state = self._stack.pop()
        self.moves.pop()
        self.log.append(UNDO)
        self.counters.undos += 1

    def restart(self) -> None:
        self._state = self.level.initial.copy()
        self._stack.clear()
        self.moves.clear()
        self.log.append(RESTART)
        self.counters.restarts += 1

    def copy(self) -> Session:
        """An independent copy: the same level, state, history and counters (what the two then
        do is their own)."""
        s = Session.__new__(Session)
        s.__dict__.update(self.__dict__)
        s._state = self._state.copy()
        s._stack = list(self._stack)
        s._view = None
        s.moves = list(self.moves)
        s.log = list(self.log)
        s.counters = Counters(**self.counters.as_dict())
        return s

    # -- text forms ------------------------------------------------------------
    def episode_text(self) -> str:
        return f"{self.level.id}: {' '.join(self.log)}".rstrip()

    def move_text(self, action: int) -> str:
        """The text of one action of this level (as move_texts gives it; cached)."""
        text = self._texts.get(action)
        if text is None:
            text = self._texts[action] = self.puzzle.format_move(self.level, int(action))
        return text

    def checkpoint(self) -> str:
        """The exact session as JSON text."""
        return encode_checkpoint({
            "format": CHECKPOINT_FORMAT,
            "level": self.level.id,
            "level_sha256": self.level.sha256,
            "state": [int(v) for v in self._state],
            "moves": self.move_texts(),
            "log": list(self.log),
            "counters": self.counters.as_dict(),
        })

    @classmethod
    def from_checkpoint(cls, text: str, level: Level | None = None, catalog: Catalog | None = None) -> Session:
        """Restore a checkpoint. A corrupt or mismatched one raises CheckpointError and
        nothing else is touched. Its level is looked up in ``catalog`` (default: the built-in
        one); ``level`` may supply a level that is not in a catalogue."""
        try:
            body = loads(text, CheckpointError, "the checkpoint")
        except (json.JSONDecodeError, TypeError) as e:
            raise CheckpointError(f"checkpoint is not valid JSON: {e}") from None
        if not isinstance(body, dict) or body.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"not a longpuzzle checkpoint (expected format {CHECKPOINT_FORMAT!r})")
        need = {"level": str, "level_sha256": str, "state": list, "moves": list, "log": list,
                "counters": dict, "checksum": str}
        for k, t in need.items():
            if not isinstance(body.get(k), t):
                raise CheckpointError(f"checkpoint field {k!r} is missing or has the wrong type")
        if _checksum({k: v for k, v in body.items() if k != "checksum"}) != body["checksum"]:
            raise CheckpointError("checkpoint checksum does not match its content (the file is corrupt or was edited)")
        try:
            lvl = level if level is not None else load_level(body["level"], catalog)
        except LongPuzzleError as e:
            raise CheckpointError(f"checkpoint names a level that cannot be loaded: {e}") from None
        if lvl.id != body["level"] or lvl.sha256 != body["level_sha256"]:
            raise CheckpointError(f"checkpoint was made on a different version of level {body['level']} "
                                  "(the level data changed); refusing to restore it")
        s = cls(lvl)
        if not all(type(m) is str and len(m) <= MAX_TOKEN for m in body["moves"]):
            raise CheckpointError(f"checkpoint moves must be move texts of at most {MAX_TOKEN} characters")
        try:
            for m in body["moves"]:
                s.play(m)
            expected = s.puzzle.validate_state(lvl, body["state"])
        except (LongPuzzleError, ValueError) as e:
            raise CheckpointError(f"checkpoint moves do not replay on {lvl.id}: {e}") from None
        if not np.array_equal(expected, s._state):
            raise CheckpointError("checkpoint state differs from the replay of its moves; refusing to restore it")
        counters = body["counters"]
        if set(counters) != set(Counters().as_dict()) or not all(
                type(v) is int and 0 <= v <= MAX_COUNT for v in counters.values()):
            raise CheckpointError("checkpoint counters are malformed (each a non-negative integer: "
                                  f"{', '.join(Counters().as_dict())})")
        if not all(type(x) is str and 0 < len(x) <= MAX_TOKEN for x in body["log"]):
            raise CheckpointError(f"checkpoint log entries must be move texts of at most {MAX_TOKEN} characters")
        for i, tok in enumerate(body["log"]):          # the episode record must replay as text
            if tok not in (UNDO, RESTART) and not tok.startswith(REJECTED):
                try:
                    s.puzzle.actions(lvl, tok)
                except LongPuzzleError as e:
                    raise CheckpointError(f"checkpoint log entry {i + 1} is not a move: {e}") from None
        s.counters = Counters(**counters)
        s.log = list(body["log"])
        return s


def encode_checkpoint(body: dict) -> str:
    """The checkpoint text of a body (its fields in Session.checkpoint's order, without the
    checksum): what checkpoint() writes, so a body rebuilt from parts gives the same text."""
    body = {k: v for k, v in body.items() if k != "checksum"}
    body["checksum"] = _checksum(body)
    return json.dumps(body)


def _checksum(body: dict) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def parse_episode(text: str) -> tuple[str, list[str]]:
    """'<level id>: tok tok ...' -> (level id, tokens)."""
    if not isinstance(text, str) or ":" not in text:
        raise CheckpointError("an episode is '<level id>: <move> <move> ...'")
    head, _, rest = text.strip().partition(":")
    return head.strip(), rest.split()


def replay(level: Level | str, moves: Iterable[int | str] | None = None, *, strict: bool | None = None,
           catalog: Catalog | None = None) -> Session:
    """A level plus its moves -> the session after them (bit-for-bit the same state as
    live play). ``replay("maze_paint/easy/1: U R")`` takes a whole episode text. Tokens
    "undo" and "restart" are honoured. With ``strict`` (the default for a move list) a
    rejected move raises IllegalMoveError; an episode text is a record of what happened,
    rejected moves included, so by default it replays them as rejections (counted). A level
    id is one of ``catalog`` (default: the built-in catalogue)."""
    if moves is None:
        if not isinstance(level, str):
            raise TypeError("replay(level, moves) or replay(episode_text)")
        level, moves = parse_episode(level)
        strict = False if strict is None else strict
    s = Session(level, catalog)
    for m in moves:
        s.play(m) if strict is None or strict else s.try_move(m)
    return s


__all__ = ["Session", "Outcome", "Counters", "replay", "parse_episode", "MoveSyntaxError"]
