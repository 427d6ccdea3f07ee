"""What a game's screen may ask of the suite: a closed set of intents, and the read-only Board
through which the screen sees the level.

A GameUI never acts on the suite. Its input handlers (``on_pointer``, ``on_key``,
``on_button``) are given a :class:`Board` (what the screen may read) and produce intents,
which the suite applies in order at the event's time and turns into the effects of the
action (Feedback.effects, recorded in episodes). A handler is a generator: the value of
``yield Move(action)`` is the move's :class:`~longpuzzle.engine.session.Outcome` (the board
already shows its result); every other intent yields None. A handler that needs no answer may
return a list of intents instead.

    Move(action)                     play one action of the rules (its animation, the win,
                                     the game's own limits): effect "move" or "rejected"
    Reject(attempt, reason, message, target)
                                     an attempt the screen refuses before the rules (Rush
                                     Hour's drag of less than half a cell): counted and logged
                                     as a rejected move (Session.reject); effect "rejected"
    Refuse(reason, message, target)  an input that does nothing; effect "refused" (target None:
                                     none named)
    Select(target, switched_from)    effect "select" (switched_from None: none named)
    Deselect(target)                 effect "deselect"
    Toast(text)                      a toast shows for TOAST_MS (no effect)
    Shake(target)                    the widget shakes for SHAKE_MS (no effect)
    GestureBegin() / GestureEnd()    where a gesture counted by the game's own limits begins
                                     and ends (Color Connect; nothing when the level runs none)

The screen's own per-play state (``board.ui``, the JSON-able dict of GameUI.initial_state)
belongs to the screen: it edits it in place. Everything else it reads through the Board.
``apply(suite, intents, t)`` is how the suite applies them (through its own operations:
try_move, show_toast, start_shake, Session.reject, gesture_begin / gesture_end).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple
from collections.abc import Generator

if TYPE_CHECKING:
    import numpy as np

    from longpuzzle.engine.geometry import Widget
    from longpuzzle.engine.suite.app import Suite


class Move(NamedTuple):
    action: int


class Reject(NamedTuple):
    attempt: str
    reason: str
    message: str
    target: str


class Refuse(NamedTuple):
    reason: str
    message: str
    target: str | None = None


class Select(NamedTuple):
    target: str
    switched_from: str | None = None


class Deselect(NamedTuple):
    target: str


class Toast(NamedTuple):
    text: str


class Shake(NamedTuple):
    target: str


class GestureBegin(NamedTuple):
    pass


class GestureEnd(NamedTuple):
    pass


INTENTS = (Move, Reject, Refuse, Select, Deselect, Toast, Shake, GestureBegin, GestureEnd)
# what a handler gives: a list of intents, or a generator of them sent each one's answer
Intents = list | Generator[Any, Any, Any]


class Board:
    """What a game's screen reads of the level it is showing (read-only): the rules state, its
    own UI state, the pointer's press, the widget under a point, whether the level is won.
    One per suite; every read is of the suite as it is now."""

    __slots__ = ("_suite",)

    def __init__(self, suite: Suite):
        self._suite = suite

    @property
    def state(self) -> np.ndarray:
        """The rules state (a read-only array; a new one after each move)."""
        return self._suite.session.state

    def at(self, i: int) -> int:
        """Value ``i`` of the rules state (what ``state[i]`` holds, as an int, without making
        the read-only array)."""
        return self._suite.session._state.item(i)

    @property
    def ui(self) -> dict:
        """The screen's own per-play state (GameUI.initial_state's dict): the screen edits it."""
        return self._suite.ui

    @property
    def pointer(self) -> MappingProxyType:
        """The pointer (read-only): while pressed, the press's design point ``x0``, ``y0``, the
        widget id ``target`` it hit, and the current ``x``, ``y``."""
        return MappingProxyType(self._suite.pointer)

    @property
    def complete(self) -> bool:
        """Whether the level is won (its completion card shows)."""
        return self._suite.complete

    def hit(self, x: float, y: float) -> Widget | None:
        """The widget of the screen under the design point (x, y)."""
        s = self._suite
        return s.widgets.hit(s.nav, x, y)


def apply(suite: Suite, produced: Intents, t: int) -> list[dict]:
    """Apply the intents a game's screen produced (a list, or a generator sent each intent's
    answer: a Move's Outcome) to ``suite`` at clock ``t``, in order; the effects they make."""
    out: list[dict] = []
    if type(produced) is list:
        for i in produced:
            _apply_one(suite, i, t, out)
        return out
    send = produced.send
    try:
        i = send(None)
        while True:
            i = send(_apply_one(suite, i, t, out))
    except StopIteration:
        pass
    return out


def _apply_one(suite: Suite, i, t: int, out: list) -> Any:
    """Apply one intent through the suite's own operations; its effect goes to ``out``; its
    answer (a Move's Outcome, else None)."""
    how = _APPLY.get(type(i))
    if how is None:
        raise TypeError(f"a game's screen asked for {type(i).__name__}, which is not an intent "
                        f"({', '.join(c.__name__ for c in INTENTS)})")
    return how(suite, i, t, out)


def _move(suite: Suite, i: Move, t: int, out: list):
    o = suite.try_move(i.action, t)
    out.append(suite.move_effect(o))
    return o


def _reject(suite: Suite, i: Reject, t: int, out: list) -> None:
    suite.session.reject(i.attempt)
    out.append({"effect": "rejected", "move": i.attempt, "reason": i.reason, "message": i.message,
                "target": i.target})


def _refuse(suite: Suite, i: Refuse, t: int, out: list) -> None:
    e = {"effect": "refused", "reason": i.reason, "message": i.message}
    if i.target is not None:
        e["target"] = i.target
    out.append(e)


def _select(suite: Suite, i: Select, t: int, out: list) -> None:
    e = {"effect": "select", "target": i.target}
    if i.switched_from is not None:
        e["switched_from"] = i.switched_from
    out.append(e)


def _deselect(suite: Suite, i: Deselect, t: int, out: list) -> None:
    out.append({"effect": "deselect", "target": i.target})


def _toast(suite: Suite, i: Toast, t: int, out: list) -> None:
    suite.show_toast(i.text, t)


def _shake(suite: Suite, i: Shake, t: int, out: list) -> None:
    suite.start_shake(i.target, t)


def _gesture_begin(suite: Suite, i: GestureBegin, t: int, out: list) -> None:
    suite.gesture_begin()


def _gesture_end(suite: Suite, i: GestureEnd, t: int, out: list) -> None:
    suite.gesture_end()


# intent type -> how the suite applies it (every intent of INTENTS, nothing else)
_APPLY = {Move: _move, Reject: _reject, Refuse: _refuse, Select: _select, Deselect: _deselect, Toast: _toast,
          Shake: _shake, GestureBegin: _gesture_begin, GestureEnd: _gesture_end}
assert set(_APPLY) == set(INTENTS)
