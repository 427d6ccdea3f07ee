"""Error types. Every user mistake gets one of these, with a message that says what
is wrong; the command line prints the message (never a traceback) and exits 2.

    LongPuzzleError            base of everything below
    ├── MoveSyntaxError        text that is not a move of this game at all
    ├── IllegalMoveError       a well-formed move that the rules reject (has .reason)
    ├── LevelFormatError       a malformed or inconsistent level file (names file, level, field)
    ├── UnknownGameError       no puzzle registered under that id
    ├── UnknownLevelError      no such level in the catalogue
    └── CheckpointError        a corrupt or mismatched checkpoint / episode text
"""

from __future__ import annotations


class LongPuzzleError(Exception):
    """Base class of every error the library raises for bad input."""


class MoveSyntaxError(LongPuzzleError, ValueError):
    """The text is not a move of this game (cannot be parsed)."""


class IllegalMoveError(LongPuzzleError):
    """A well-formed move that the rules reject in the current state.

    ``code`` is the game's integer rejection code, ``reason`` its short id
    (e.g. ``"target_full"``) and the message explains it in words.
    """

    def __init__(self, message: str, *, move: str = "", code: int = -1, reason: str = ""):
        super().__init__(message)
        self.move = move
        self.code = code
        self.reason = reason


class UndoNotAllowedError(IllegalMoveError):
    """Undo was asked for where the game has none, or nothing is left to undo."""


class LevelFormatError(LongPuzzleError, ValueError):
    """A level file or record that cannot be used; the message names where."""

    def __init__(self, message: str, *, file: str = "", level: str = "", field: str = ""):
        where = ", ".join(p for p in (
            f"file {file}" if file else "",
            f"level {level}" if level else "",
            f"field {field!r}" if field else "",
        ) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.file = file
        self.level = level
        self.field = field


class UnknownGameError(LongPuzzleError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownLevelError(LongPuzzleError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CheckpointError(LongPuzzleError, ValueError):
    """A checkpoint or episode text that is corrupt or does not match the catalogue."""
