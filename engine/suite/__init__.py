"""The game suite as an app: screens, GUI input, a virtual clock. No pixels here.

Screens (RULES.md section 1)::

    home                      a card per game (positions: HOME_CARD_Y for six, home_card_rects for
                              more; order: the games' declarations)
    difficulty(game)          one card per objective of the game in the catalogue; a game with
                              a single objective (Truck Escape) goes straight to its level 1
    level(level id)           the game's board, HUD and buttons, drawn from its GameUI
      + completion card       after the winning move: "Next level" / "Replay"; after the last
                              level of its objective "All complete!" with "Menu" / "Replay";
                              Nut and Bolt on the hub: no buttons, the next level 1.35 s later
      + failure card          Maze Paint on the hub, when its own limits end the level
                              (game_limits.py): "Try again" / "Back"

A :class:`Suite` holds the current screen, the :class:`Session` of the level being played,
the game's UI state (selection, ...), pointer state, transient feedback (toast, shake),
the animations started by the last action and a virtual clock in ms. ``dispatch(action)``
takes one GUI action (engine/gui.py), in pixels of the frame of the suite's (style, scale),
maps its points through the projection back to design px, runs them through the screen's
widgets and the game's input state machine, and returns a :class:`Feedback` listing what
happened. ``snapshot()`` / ``Suite.restore(text)`` give the exact app as JSON text.

Per game, the Puzzle object carries its UI class as ``puzzle.ui`` (a :class:`GameUI`
subclass defined in the game's own module). The suite reaches games only through the
registry, the catalogue and that attribute.

Timing (all on the virtual clock, never the wall clock): each top-level action starts ``action_gap_ms`` after the previous one ended (the
harness needs time between steps, HARNESS.md section 4); events that arrive while a move
animation runs are ignored (input is locked, as in the original); when an action's events
are done the clock runs on to the end of any animation it started, so every action ends
in a settled screen. Toasts stay visible for TOAST_MS, shakes last SHAKE_MS.

Layout (each module imports only those above it; app.py all of them). The Suite is its
settings and a composition of parts that each keep their own state or none: Navigator (the
app state - screen, session, UI state, transient feedback, animations, clock, timer, limits,
failure - and the operations on it: navigation, moves, what input does on a screen; the
Suite's attributes and methods of those names delegate to it), ScreenWidgets (what each
screen is made of), Pointer (the press state; an action's events), the snapshots, the
intents' application.

    intents.py     the intents a game's screen produces (Move, Select, Toast, ...), the
                   read-only Board it reads the level through, and apply (the suite applies them)
    game_ui.py     GameUI (a game's screen: board geometry + input state machine), Feedback,
                   difficulty_label
    game_limits.py the games' own failure limits on the hub (Maze Paint, Color Connect)
    screens.py     the menus' layout data, the GameUIs and layouts shared by every suite,
                   ScreenWidgets (a part: GameUIs, layouts, hit-testing, screen names, cached)
    navigator.py   Navigator (a part: the app state; navigation, toasts, shakes, try_move, the
                   clock's events, what a button, a board event or a key does: press_button,
                   board_event, key_event)
    pointer.py     Pointer (a part: the press state; runs a validated action one way, as pointer
                   and key events on the clock, handing each to the screen)
    snapshots.py   snapshot, restore and the checks it makes, encode_snapshot (no state of its own)
    app.py         Suite (its settings, clone, snapshots; validate once, run, moves <->
                   gestures, interpret; delegates to the Navigator) = its parts

Every name that engine/suite.py defined before it became this package is importable here.
"""

from longpuzzle.engine.suite.game_ui import DIFFICULTY_LABELS, Feedback, GameUI, difficulty_label
from longpuzzle.engine.suite.intents import (
    INTENTS, Board, Deselect, GestureBegin, GestureEnd, Move, Refuse, Reject, Select, Shake, Toast,
)
from longpuzzle.engine.suite.screens import (
    BACK_BUTTON, CARD, CARD_MENU, CARD_NEXT, CARD_REPLAY, DIFF_CARD_H, DIFF_CARD_W,
    DIFF_CARD_Y_BY_COUNT, HOME_CARD_H, HOME_CARD_W, HOME_CARD_Y, HOME_SUBTITLE, HOME_TITLE, SHAKE_MS,
    SHARED_KEPT, TOAST_MS, ScreenWidgets, home_card_rects,
)
from longpuzzle.engine.suite.navigator import Navigator
from longpuzzle.engine.suite.pointer import Pointer
from longpuzzle.engine.suite.snapshots import MAX_CLOCK, POINTER_KEYS, SNAPSHOT_FORMAT, encode_snapshot
from longpuzzle.engine.suite.app import ACTION_GAP_MS, ScreenUnavailableError, Suite
# the private helpers too, as before (tests read _SHARED_LAYOUTS; SHARED_KEPT and the caches
# are read in screens.py: patch them there)
from longpuzzle.engine.suite.screens import _SHARED_LAYOUTS, _SHARED_UIS, _shared  # noqa: F401
from longpuzzle.engine.suite.pointer import (  # noqa: F401
    _CLICK_MS, _DOWN, _KEY, _MOVE, _UP, _WAIT, _WHEEL,
)
from longpuzzle.engine.suite.snapshots import (  # noqa: F401
    _check_anims, _check_pointer, _check_screen, _check_transient, _int_in, _jsonable, _num_or_nan, _unjson,
)

__all__ = [
    "ACTION_GAP_MS", "BACK_BUTTON", "Board", "Deselect", "GestureBegin", "GestureEnd", "INTENTS", "Move", "Refuse",
    "Reject", "Select", "Shake", "Toast", "CARD", "CARD_MENU", "CARD_NEXT", "CARD_REPLAY",
    "DIFFICULTY_LABELS", "DIFF_CARD_H", "DIFF_CARD_W", "DIFF_CARD_Y_BY_COUNT", "Feedback", "GameUI",
    "HOME_CARD_H", "HOME_CARD_W", "HOME_CARD_Y", "HOME_SUBTITLE", "HOME_TITLE", "MAX_CLOCK",
    "POINTER_KEYS", "Pointer", "SHAKE_MS", "SHARED_KEPT", "SNAPSHOT_FORMAT", "ScreenUnavailableError",
    "ScreenWidgets", "Navigator", "Suite", "TOAST_MS", "difficulty_label", "encode_snapshot", "home_card_rects",
]
