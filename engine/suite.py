"""The game suite as an app: screens, GUI input, a virtual clock. No pixels here.

Screens (RULES.md section 1)::

    home                      six game cards (positions: HOME_CARD_Y, order HOME_ORDER)
    difficulty(game)          one card per objective of the game in the catalogue; a game with
                              a single objective (Truck Escape) goes straight to its level 1
    level(level id)           the game's board, HUD and buttons, drawn from its GameUI
      + completion card       after the winning move: "Next level" / "Replay"; after the last
                              level of its objective "All complete!" with "Menu" / "Replay"

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

Timing: each top-level action starts ``action_gap_ms`` after the previous one ended (the
harness needs time between steps, HARNESS.md section 4); events that arrive while a move
animation runs are ignored (input is locked, as in the original); when an action's events
are done the clock runs on to the end of any animation it started, so every action ends
in a settled screen. Toasts stay visible for TOAST_MS, shakes last SHAKE_MS.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from longpuzzle.engine import gui
from longpuzzle.engine.catalog import catalog, load_level
from longpuzzle.engine.textio import loads
from longpuzzle.engine.errors import CheckpointError, LongPuzzleError, UndoNotAllowedError
from longpuzzle.engine.geometry import Layout, Projection, Rect, Widget, projection
from longpuzzle.engine.protocol import Level, canonical_json
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.session import Outcome, Session

SNAPSHOT_FORMAT = "longpuzzle-suite/1"
TOAST_MS = 1400
SHAKE_MS = 360
ACTION_GAP_MS = 250

# ---- menu layout data (RULES.md 1.1 / 1.2), design px --------------------------------
HOME_TITLE = "Puzzle Workshop"
HOME_SUBTITLE = "Choose a puzzle"
HOME_ORDER = ("bolt_unscrew", "truck_escape", "rush_hour", "nut_and_bolt", "maze_paint", "color_connect")
HOME_CARD_Y = (297, 403, 509, 615, 721, 827)
HOME_CARD_W, HOME_CARD_H = 460, 94
DIFF_CARD_W, DIFF_CARD_H = 460, 118
DIFF_CARD_Y_BY_COUNT = {1: (455,), 2: (360, 515), 3: (315, 455, 595), 4: (290, 415, 540, 665),
                        5: (260, 385, 510, 635, 760)}
DIFF_CARD_Y = {"bolt_unscrew": (365, 515), "nut_and_bolt": (260, 385, 510, 635, 760)}
BACK_BUTTON = (75, 908, 110, 42)
BACK_BUTTON_AT = {"nut_and_bolt": (75, 918, 110, 42)}
DIFFICULTY_LABELS = {"easy": "Easy", "medium": "Medium", "hard": "Hard", "extreme": "Extreme",
                     "nightmare": "Nightmare", "default": "Play"}
CARD = Rect.centred(270, 470, 420, 300)      # completion card
CARD_NEXT = Widget("next", Rect.centred(270, 520, 260, 60), "pill_button", "Next level")
CARD_REPLAY = Widget("replay", Rect.centred(270, 590, 260, 52), "pill_button", "Replay")
CARD_MENU = Widget("menu", CARD_NEXT.shape, "pill_button", "Menu")    # after an objective's last level
_DOWN, _MOVE, _UP, _KEY, _WHEEL, _WAIT, _CLICK_MS = gui.DOWN, gui.MOVE, gui.UP, gui.KEY, gui.WHEEL, gui.WAIT, gui.CLICK_MS
_click_point, _drag_fields = gui.click_point, gui.drag_fields


# GameUIs (level geometry, no mutable state) and level screens' layouts, shared by every
# Suite of the process (harness, agents' models, clones): built once per level, not per suite
_SHARED_UIS: dict = {}           # (ui class, level id, level sha256) -> GameUI
_SHARED_LAYOUTS: dict = {}       # ("level", GameUI, direct) | ("complete", direct, last) |
#                                  ("menu", screen name, direct, catalogue content hash) -> Layout
SHARED_KEPT = 1024               # entries kept in each (the oldest are dropped)


def _shared(cache: dict, key, make):
    v = cache.get(key)
    if v is None:
        v = make()
        if len(cache) >= SHARED_KEPT:
            try:
                del cache[next(iter(cache))]
            except (KeyError, RuntimeError, StopIteration):     # another thread got there first
                pass
        cache[key] = v
    return v


class ScreenUnavailableError(LongPuzzleError):
    """A level of a game that has no screen (no GameUI) was asked for."""


def difficulty_label(d: str) -> str:
    return DIFFICULTY_LABELS.get(d, d.replace("_", " ").title())


class GameUI:
    """Base class of a game's screen: board geometry (design px) + input state machine.

    Adding a game's screen = two classes, nothing else changes:

    1. In the game's module (puzzles/<game>.py): ``class XxxUI(GameUI)`` and, after the
       Puzzle class, ``Xxx.ui = XxxUI``. One instance per level (``__init__(puzzle, level)``
       computes the geometry from ``level.lv`` / ``level.extra``); it holds NO mutable state:
       the per-play UI state is the JSON-able dict from ``initial_state()``, kept in
       ``suite.ui`` (snapshots capture it). Provide:
         buttons(direct)  HUD buttons as Widgets: ids "restart" / "undo" / "menu" get the
                          generic meaning (menu hidden when ``direct``); other ids go to
                          on_button (e.g. Truck Escape's item buttons -> a toast)
         targets()        board widgets (kind "target") - vehicles, trucks, anchors, cells,
                          or one "surface" - hit-tested topmost-last-drawn first; fixed
                          for the level (the suite builds each screen's layout once)
         on_pointer(suite, kind, x, y, t)   kind "down" / "move" / "up", design px; the
                          press is in suite.pointer (x0, y0, target id); suite.hit(x, y)
                          hit-tests; play moves ONLY through suite.try_move(action, t)
                          (returns the session Outcome, records the animation, detects the
                          win); feedback through suite.show_toast(text, t) /
                          suite.start_shake(target id, t); return effect dicts (use
                          suite.move_effect(outcome) for moves)
         on_key / on_button, hud_lines(session) (extra HUD text lines),
         animation_ms(before, after, action, code) (input locked meanwhile),
         gesture_for(action, proj, suite) -> a GUI action dict in integer px of ``proj``
                          that makes exactly that move from the idle UI state of
                          ``suite`` (tests check interpret(gesture_for(m)) == [m]);
                          optionally gesture_run(actions, proj, suite) -> (gesture, k): one
                          gesture for the first k moves, as a person would (Color Connect:
                          a whole route in one drag)
       and the class attributes exit_to, instructions, complete_title / complete_text,
       header_y (and optionally instructions_y, toast_y).
    2. A drawing module render/<game>.py (see longpuzzle.render.frame.drawing.GameDrawing).
    """

    exit_to = "difficulty"            # where the in-game back button goes: "difficulty" | "home"
    # True: what a drag's moves do, a release with a position does again from that position
    # alone (on_pointer acts on "up" alone, or, as Rush Hour's vehicle, follows the pointer
    # and settles where it is released): Suite._drag, a whole drag whose release is on the
    # plane, does not send it the moves between press and release
    pointer_up_only = False
    instructions = ""                 # the game's short instruction text (drawn by render)
    complete_title = "Complete!"
    complete_text = ""
    header_y = 84                     # design y of the "Level N" header line

    def __init__(self, puzzle, level: Level):
        self.puzzle = puzzle
        self.level = level

    # -- layout ----------------------------------------------------------------
    def buttons(self, direct: bool) -> list[Widget]:
        """HUD buttons (ids "restart", "undo", "menu" have their generic meaning; other ids
        are passed to on_button)."""
        return []

    def targets(self) -> list[Widget]:
        """Board widgets the pointer can hit (kind "target"; drawn by the game's renderer)."""
        return []

    def hud_lines(self, session: Session) -> list[str]:
        """Extra HUD text (e.g. pieces left)."""
        return []

    # -- input -----------------------------------------------------------------
    def initial_state(self) -> dict:
        return {}

    def check_ui(self, ui: Any) -> str:
        """Why ``ui`` (restored from a snapshot) is not a UI state this screen can continue
        from ("" when it is). The default: exactly the keys of initial_state(), each None or
        plain data; games whose UI state holds more override this (and call it first)."""
        if type(ui) is not dict:
            return f"the UI state is {type(ui).__name__}, not an object"
        keys = set(self.initial_state())
        if set(ui) != keys:
            return f"the UI state has keys {sorted(map(str, ui))[:8]}, expected {sorted(keys)}"
        return ""

    def on_pointer(self, suite: "Suite", kind: str, x: float, y: float, t: int) -> list[dict]:
        """A pointer event on the board (not on a HUD button), design px. ``suite.pointer``
        holds the press (``x0``, ``y0``, ``target``). Return effect dicts."""
        return []

    def on_key(self, suite: "Suite", name: str, t: int) -> list[dict]:
        return []

    def on_button(self, suite: "Suite", wid: str, t: int) -> list[dict]:
        return []

    def animation_ms(self, before: np.ndarray, after: np.ndarray, action: int, code: int) -> int:
        """How long the move's animation runs (input is locked meanwhile)."""
        return 0

    def gesture_for(self, action: int, proj: Projection, suite: "Suite | None" = None) -> dict:
        """A GUI action (frame px of ``proj``) that makes this move from the idle UI state."""
        raise NotImplementedError

    def gesture_run(self, actions, proj: Projection, suite: "Suite | None" = None) -> tuple[dict, int]:
        """(gesture, k): ONE gesture that makes the first k >= 1 of ``actions`` in order from
        the idle UI state, as a person would (e.g. a whole Color Connect route in one drag).
        By default one gesture per move."""
        return self.gesture_for(int(actions[0]), proj, suite), 1


@dataclass(slots=True, init=False)
class Feedback:
    """What one dispatched action did. ``effects`` are dicts with an "effect" key:
    move (move, accepted, changed), rejected (move, reason, message), select / deselect
    (target), navigate (screen), restart, undo, refused (reason, message: a HUD button that
    cannot act), ignored (why: "input locked"), unavailable (game). Empty = nothing happened."""
    effects: list[dict] = field(default_factory=list)
    screen: str = ""
    clock: int = 0
    cut: bool = False            # a deadline (dispatch's ``until``) cut the action short
    presses: int = -1            # with a deadline: the pointer presses that happened

    def __init__(self, effects: list[dict] | None = None, screen: str = "", clock: int = 0):
        self.effects = [] if effects is None else effects      # (quicker than the generated one)
        self.screen = screen
        self.clock = clock
        self.cut = False
        self.presses = -1

    @property
    def kind(self) -> str:
        kinds = [e["effect"] for e in self.effects]
        for k in ("move", "rejected", "navigate", "restart", "undo", "select", "deselect", "refused", "ignored"):
            if k in kinds:
                return k
        return kinds[0] if kinds else "nothing"

    @property
    def moves(self) -> list[str]:
        return [e["move"] for e in self.effects if e["effect"] == "move"]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "effects": self.effects, "screen": self.screen, "clock": self.clock}


class Suite:
    """The app. ``start`` is "home" or a level id; ``style``/``scale`` fix the frame the
    action coordinates refer to; ``direct`` is the benchmark's direct launch (no way back
    to the menus, completion card offers only "Replay")."""

    def __init__(self, start: str = "home", *, style: str = "2d", scale: float = 1.0, direct: bool = False,
                 action_gap_ms: int = ACTION_GAP_MS, viewport: tuple[int, int] | None = None):
        self.proj: Projection = projection(style, float(scale), viewport)
        self.direct = bool(direct)
        self.action_gap_ms = int(action_gap_ms)
        self.clock = 0
        self.screen: dict = {"name": "home"}
        self.session: Session | None = None
        self.ui: dict = {}
        self.pointer: dict = {"down": False}
        self.toast: dict | None = None
        self.shake: dict | None = None
        self.anims: list[dict] = []
        self.complete = False
        # (level id, content digest) -> its GameUI: ids repeat across catalogues and generated
        # levels, so the id alone would hand one level another's geometry (shared by clones)
        self._uis: dict[tuple[str, str], GameUI] = {}
        # (screen name, direct, level digest, catalogue in use) -> Layout (shared by clones)
        self._layouts: dict[tuple, Layout] = {}
        self._layout_key = None
        self._layout: Layout | None = None
        self._last_hit = None
        self._cur_ui = None
        self._sname = None
        if start not in (None, "", "home"):
            eff = self.open_level(load_level(start).id)
            if eff["effect"] == "unavailable":
                raise ScreenUnavailableError(eff["message"] + " (its puzzle class has no `ui`)")

    # ---- settings ----------------------------------------------------------------
    @property
    def style(self) -> str:
        return self.proj.style

    @property
    def scale(self) -> float:
        return self.proj.scale

    @property
    def viewport(self) -> tuple[int, int] | None:
        """The page the frame is letterboxed into (None: the frame is the game's own)."""
        return self.proj.viewport

    @property
    def frame_size(self) -> tuple[int, int]:
        return self.proj.size

    # ---- screens -------------------------------------------------------------------
    @property
    def level(self) -> Level | None:
        return self.session.level if self.session else None

    @property
    def puzzle(self):
        return self.session.puzzle if self.session else None

    def game_ui(self, level: Level | None = None) -> GameUI | None:
        if level is None:
            if self.session is None:
                return None
            c = self._cur_ui
            if c is not None and c[0] is self.session:
                return c[1]
            u = self.game_ui(self.session.level)
            self._cur_ui = (self.session, u)
            return u
        key = (level.id, level.sha256)
        u = self._uis.get(key)
        if u is None:
            cls = getattr(get_puzzle(level.game), "ui", None)
            if cls is None:
                return None
            u = _shared(self._uis, key, lambda: _shared(_SHARED_UIS, (cls, level.id, level.sha256),
                                                        lambda: cls(get_puzzle(level.game), level)))
        return u

    def screen_name(self) -> str:
        s = self.screen
        c = self._sname
        if c is not None and c[0] is s and c[1] == self.complete:
            return c[2]
        if s["name"] == "home":
            name = "home"
        elif s["name"] == "difficulty":
            name = f"difficulty:{s['game']}"
        else:
            name = f"level:{s['level']}" + (":complete" if self.complete else "")
        self._sname = (s, self.complete, name)      # screens are replaced, never edited in place
        return name

    def home_games(self) -> list[tuple[str, float]]:
        """(game id, card centre y) of the home screen: games in HOME_ORDER first, then any
        other registered game with levels."""
        have = catalog().games()
        order = [g for g in HOME_ORDER if g in have] + [g for g in have if g not in HOME_ORDER]
        out = []
        for g in order:
            slot = HOME_ORDER.index(g) if g in HOME_ORDER else len(HOME_ORDER) + len(out)
            y = HOME_CARD_Y[slot] if slot < len(HOME_CARD_Y) else HOME_CARD_Y[-1] + (slot - 5) * 106
            out.append((g, y))
        return out

    def layout(self) -> Layout:
        """The widgets of the current screen (cached; rebuilt when the screen changes)."""
        if self._layout_key is not None and self._layout is not None:
            return self._layout
        # a level screen is its level's (by content); every screen lists or links the
        # objectives of the catalogue in use
        key = (self.screen_name(), self.direct, self.session.level.sha256 if self.session is not None else None,
               catalog())
        lay = self._layouts.get(key)
        if lay is not None:
            self._layout, self._layout_key = lay, key
            return lay
        if self.screen["name"] == "level":
            # a level's layouts are shared by every suite (its GameUI is, and holds no state)
            u, direct = self.game_ui(), self.direct
            if self.complete:
                last = self.last_level()
                lay = _shared(_SHARED_LAYOUTS, ("complete", direct, last), lambda: Layout(
                    [CARD_REPLAY] if direct else [CARD_MENU if last else CARD_NEXT, CARD_REPLAY]))
            else:
                lay = _shared(_SHARED_LAYOUTS, ("level", u, direct),
                              lambda: Layout(list(u.targets()) + list(u.buttons(direct))))
        else:
            # the menus' layouts too are shared by every suite of the process (the harness's
            # and each agent's model of the app start at the home screen every episode),
            # by the catalogue's content: its hit-test index is built once, not per suite
            lay = _shared(_SHARED_LAYOUTS, ("menu", key[0], self.direct, catalog().content_hash),
                          lambda: Layout(self._menu_widgets()))
        self._layout = _shared(self._layouts, key, lambda: lay)
        self._layout_key = key
        return lay

    def _menu_widgets(self) -> list[Widget]:
        """The widgets of the home or the difficulty screen."""
        s = self.screen
        ws: list[Widget] = []
        if s["name"] == "home":
            for g, y in self.home_games():
                ws.append(Widget(f"game:{g}", Rect.centred(270, y, HOME_CARD_W, HOME_CARD_H), "card",
                                 get_puzzle(g).title))
            return ws
        g = s["game"]
        objs = catalog().objectives(g)
        ys = DIFF_CARD_Y.get(g) or DIFF_CARD_Y_BY_COUNT.get(len(objs)) or tuple(
            260 + 125 * i for i in range(len(objs)))
        for o, y in zip(objs, ys):
            ws.append(Widget(f"difficulty:{o.difficulty}", Rect.centred(270, y, DIFF_CARD_W, DIFF_CARD_H),
                             "card", difficulty_label(o.difficulty), (len(o.level_ids),)))
        bx, by, bw, bh = BACK_BUTTON_AT.get(g, BACK_BUTTON)
        ws.append(Widget("back", Rect.centred(bx, by, bw, bh), "pill_button", "Back"))
        return ws

    def last_level(self) -> bool:
        """Whether the level on screen is the last of its objective (its card says "All
        complete!" and offers the menu instead of a next level)."""
        lvl = self.level
        return lvl is not None and catalog().objective(f"{lvl.game}/{lvl.difficulty}").level_ids[-1] == lvl.id

    def hit(self, x: float, y: float) -> Widget | None:
        """The widget of the current screen under the design point (the last answer is kept,
        since one event is usually hit-tested by the suite and then by the game)."""
        lay = self._layout if self._layout_key is not None else None
        if lay is None:
            lay = self.layout()
        h = self._last_hit
        if h is not None and h[0] == x and h[1] == y and h[2] is lay:
            return h[3]
        w = lay.hit(x, y)
        self._last_hit = (x, y, lay, w)
        return w

    def _go(self, screen: dict) -> dict:
        self.screen = screen
        self.pointer = {"down": False}
        self.toast = self.shake = None
        self.complete = False
        self._layout_key = None
        if screen["name"] != "level":
            self.session = None
            self.ui = {}
            self.anims = []            # animations belong to the level that is no longer shown
        return {"effect": "navigate", "screen": self.screen_name()}

    def open_level(self, level_id) -> dict:
        """Open a level (an id in the catalogue in use, or a Level)."""
        level = load_level(level_id)
        u = self.game_ui(level)
        if u is None:
            return {"effect": "unavailable", "game": level.game,
                    "message": f"{get_puzzle(level.game).title} has no screen yet"}
        self.session = Session(level)
        self.ui = u.initial_state()
        self.anims = []
        return self._go({"name": "level", "level": level.id})

    def open_game(self, game: str) -> dict:
        objs = catalog().objectives(game)
        if len(objs) == 1:
            return self.open_level(objs[0].level_ids[0])
        return self._go({"name": "difficulty", "game": game})

    def go_home(self) -> dict:
        return self._go({"name": "home"})

    # ---- helpers used by the game UIs --------------------------------------------------
    def show_toast(self, text: str, t: int) -> None:
        self.toast = {"text": text, "t0": t, "until": t + TOAST_MS}

    def start_shake(self, target: str, t: int) -> None:
        self.shake = {"target": target, "t0": t, "until": t + SHAKE_MS}

    def busy_until(self) -> int:
        an = self.anims
        if not an:
            return 0
        if len(an) == 1:
            return an[0]["t1"]
        return max(a["t1"] for a in an)

    def try_move(self, action: int, t: int) -> Outcome:
        """Play one action through the session; record its animation; handle completion."""
        s = self.session
        before = s._state          # Session replaces (never mutates) its state array on a move
        if type(action) is not int or not 0 <= action < s.level.n_actions:
            action = s.puzzle.check_action(s.level, action)
        o, solved = s._apply_solved(action)
        if o[3]:                   # accepted
            c = self._cur_ui
            u = c[1] if c is not None and c[0] is s else self.game_ui()
            code = o[2]
            dur = int(u.animation_ms(before, s._state, action, code))
            self.anims.append({"kind": "move", "t0": t, "t1": t + dur, "action": action, "code": code,
                               "before": before})        # numpy here; a list in snapshots
            if solved:
                self.complete = True
                self._layout_key = None
        return o

    def move_effect(self, o: Outcome) -> dict:
        if o.accepted:
            return {"effect": "move", "move": o.move, "accepted": True, "changed": o.changed}
        return {"effect": "rejected", "move": o.move, "reason": o.reason, "message": o.message}

    # ---- dispatch --------------------------------------------------------------------
    def dispatch(self, action: Any, until: int | None = None) -> Feedback:
        """Validate and run one GUI action (frame px). Raises gui.ActionError if malformed.

        ``until`` is a deadline on the virtual clock (ms): events due at or after it do not
        happen, the clock stops there, and the Feedback is marked ``cut`` (with the presses
        that did happen). An action that ends before it runs exactly as without it."""
        if until is not None:
            return self._dispatch_until(action, int(until))
        pt = _click_point(action, self.proj.size)      # the commonest action: a well-formed click
        if pt is not None:
            if self.anims:
                self.anims = []
            effects: list[dict] = []
            self._click(pt[0], pt[1], effects)
            return Feedback(effects, self.screen_name(), self.clock)
        if type(action) is dict and len(action) == 7 and action.get("type") == "drag":
            f = _drag_fields(action, self.proj.size)      # a well-formed drag with every field
            if f is not None:
                if self.anims:
                    self.anims = []
                effects = []
                self._drag(*f, effects)
                return Feedback(effects, self.screen_name(), self.clock)
        a = gui.validate(action, self.proj.size)
        if self.anims:
            self.anims = []
        effects = []
        typ = a["type"]
        if typ == "click":                  # the commonest actions: a click, a batch of clicks
            self._click(a["x"], a["y"], effects)
        elif (typ == "drag" or typ == "swipe") and "via" not in a:
            self._drag(a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"], effects)
        elif typ == "batch":
            for sub in a["actions"]:
                if sub["type"] == "click":
                    self._click(sub["x"], sub["y"], effects)
                else:
                    self._run(sub, effects)
        else:
            self._run(a, effects)
        return Feedback(effects, self.screen_name(), self.clock)

    def _click(self, px: float, py: float, effects: list) -> None:
        """One click at frame px (px, py): press, and release CLICK_MS later, in place."""
        start = self.clock + self.action_gap_ms
        end = start + _CLICK_MS
        proj = self.proj
        if proj.is_3d:
            x, y = proj.from_px(px, py)
        else:
            x, y = (px - proj.ox) / proj.sx, (py - proj.oy) / proj.sy        # from_px in 2d
        out = self._down(x, y, start)
        if out:
            effects.extend(out)
        out = self._release(x, y, end)
        if out:
            effects.extend(out)
        an = self.anims
        if an:
            b = an[0]["t1"] if len(an) == 1 else self.busy_until()
            self.clock = end if end >= b else b
        else:
            self.clock = end

    def _drag(self, x0: float, y0: float, x1: float, y1: float, n: int, ms: int, effects: list) -> None:
        """A validated drag or swipe from (x0, y0) to (x1, y1) frame px in n steps over ms:
        the events of gui.expand (press, n moves along the segment, release at the end),
        without building the event list."""
        start = self.clock + self.action_gap_ms
        from_px = self.proj.from_px
        x, y = from_px(x0, y0)
        out = self._down(x, y, start)
        if out:
            effects.extend(out)
        c = self._cur_ui
        xe, ye = from_px(x1, y1)             # the release's point (NaN off a 3d plane)
        if not (c is not None and c[0] is self.session and c[1].pointer_up_only and not self.complete
                and self.screen["name"] == "level" and xe == xe and ye == ye):
            # (a game that acts on the release alone sees nothing of the moves: the pointer's
            # position they set is the release's, hit-tested again there; a release without
            # a position may leave things where the last move put them)
            dx, dy = x1 - x0, y1 - y0
            for i in range(1, n + 1):
                f = i / n
                x, y = from_px(x0 + dx * f, y0 + dy * f)
                out = self._move(x, y, start + round(ms * f))
                if out:
                    effects.extend(out)
        end = start + ms
        out = self._release(xe, ye, end)
        if out:
            effects.extend(out)
        b = self.busy_until() if self.anims else 0
        self.clock = end if end >= b else b

    def _run(self, a: dict, effects: list) -> None:
        typ = a["type"]
        if typ == "batch":
            for sub in a["actions"]:
                self._run(sub, effects)
            return
        if typ == "click":
            self._click(a["x"], a["y"], effects)
            return
        if (typ == "drag" or typ == "swipe") and "via" not in a:
            self._drag(a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"], effects)
            return
        self._events(a, effects, None)

    def _dispatch_until(self, action: Any, until: int) -> Feedback:
        a = gui.validate(action, self.proj.size)
        if self.anims:
            self.anims = []
        effects: list[dict] = []
        typ = a["type"]
        start = self.clock + self.action_gap_ms
        if typ == "click" and start + _CLICK_MS < until or (typ == "drag" or typ == "swipe") and "via" not in a \
                and start + a["ms"] < until:
            # every event of the action comes before the deadline: the fast paths of dispatch,
            # then only the animations it started can run into the deadline (as in _events)
            if typ == "click":
                self._click(a["x"], a["y"], effects)
            else:
                self._drag(a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"], effects)
            fb = Feedback(effects, self.screen_name(), self.clock)
            if self.clock > until:
                self.clock = until
                fb.clock = until
                fb.cut = True
            fb.presses = 1
            return fb
        runs = [0]                          # presses that happened
        cut = self._run_until(a, effects, until, runs)
        fb = Feedback(effects, self.screen_name(), self.clock)
        fb.cut = cut
        fb.presses = runs[0]
        return fb

    def _run_until(self, a: dict, effects: list, until: int, runs: list) -> bool:
        """_run through the generic event path (identical results), stopping at ``until``."""
        if a["type"] == "batch":
            for sub in a["actions"]:
                if self._run_until(sub, effects, until, runs):
                    return True
            return False
        return self._events(a, effects, until, runs)

    def _events(self, a: dict, effects: list, until: int | None, runs: list | None = None) -> bool:
        """The timed events of one non-batch action (gui.expand), then the clock runs on to the
        end of the animations it started. With ``until``: events due at or after it are dropped
        and the clock stops there (returns True when that cut the action short)."""
        start = self.clock + self.action_gap_ms
        end = start
        from_px = self.proj.from_px
        for (dt, kind, px, py, key) in gui.expand(a):
            t = start + dt
            if until is not None and t >= until:
                self.clock = max(self.clock, until)
                return True
            end = t
            if kind is _DOWN and runs is not None:
                runs[0] += 1
            if kind is _WAIT:
                continue
            if kind is _KEY:
                effects.extend(self._key(key, t))
                continue
            if kind is _WHEEL:
                continue          # no screen of the suite scrolls
            if px != px:          # release without a point: where the pointer is
                x, y = self.pointer.get("x", float("nan")), self.pointer.get("y", float("nan"))
            else:
                x, y = from_px(px, py)
            out = self._pointer(kind, x, y, t)
            if out:
                effects.extend(out)
        b = self.busy_until() if self.anims else 0
        self.clock = end if end >= b else b
        if until is not None and self.clock > until:        # the deadline fell in an animation
            self.clock = until
            return True
        return False

    def _key(self, name: str, t: int) -> list[dict]:
        if self.screen["name"] == "level" and not self.complete and t >= self.busy_until():
            return self.game_ui().on_key(self, name, t)
        return []

    def _pointer(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        if kind == _DOWN:
            return self._down(x, y, t)
        if kind == _UP:
            return self._release(x, y, t)
        return self._move(x, y, t)

    def _move(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer MOVE to design (x, y)."""
        p = self.pointer
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked") or p["button"]:
            return []
        return self._board(_MOVE, x, y, t)

    def _down(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer DOWN at design (x, y)."""
        p = self.pointer
        pre = None
        if p.get("down"):            # a second press without release: release where it is first
            pre = self._release(p["x"], p["y"], t)
        an = self.anims
        locked = bool(an) and t < (an[0]["t1"] if len(an) == 1 else self.busy_until())
        lay = self._layout if self._layout_key is not None else None     # self.hit(x, y), inlined
        if lay is None:
            lay = self.layout()
        h = self._last_hit
        if h is not None and h[0] == x and h[1] == y and h[2] is lay:
            w = h[3]
        else:
            w = lay.hit(x, y)
            self._last_hit = (x, y, lay, w)
        if w is None:
            target = None
            button = False
        else:
            target = w.id
            button = w.kind != "target"
        self.pointer = {"down": True, "x": x, "y": y, "x0": x, "y0": y, "t0": t,
                        "target": target, "button": button, "locked": locked}
        if locked:
            return (pre or []) + [{"effect": "ignored", "why": "input locked"}]
        if button or self.complete or self.screen["name"] != "level":
            return pre or []
        c = self._cur_ui                   # the board (as _board)
        u = c[1] if c is not None and c[0] is self.session else self.game_ui()
        out = u.on_pointer(self, _DOWN, x, y, t)
        return pre + out if pre else out

    def _release(self, x: float, y: float, t: int) -> list[dict]:
        """Pointer UP at design (x, y)."""
        p = self.pointer
        if not p.get("down"):
            return []
        p["x"] = x
        p["y"] = y
        if p.get("locked"):
            self.pointer = {"down": False, "x": x, "y": y}
            return []
        if p["button"]:
            out: list[dict] = []
            w = self.hit(x, y)
            if w is not None and w.id == p["target"]:
                out = self._button(w.id, t)
        elif self.complete or self.screen["name"] != "level":
            out = []
        else:
            c = self._cur_ui               # the board (as _board)
            u = c[1] if c is not None and c[0] is self.session else self.game_ui()
            out = u.on_pointer(self, _UP, x, y, t)
        if self.pointer is p:
            self.pointer = {"down": False, "x": x, "y": y}
        return out

    def _board(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        if self.complete or self.screen["name"] != "level":
            return []
        c = self._cur_ui
        u = c[1] if c is not None and c[0] is self.session else self.game_ui()
        return u.on_pointer(self, kind, x, y, t)

    def _button(self, wid: str, t: int) -> list[dict]:
        name = self.screen["name"]
        if name == "home":
            return [self.open_game(wid.split(":", 1)[1])]
        if name == "difficulty":
            if wid == "back":
                return [self.go_home()]
            d = wid.split(":", 1)[1]
            obj = catalog().objective(f"{self.screen['game']}/{d}")
            return [self.open_level(obj.level_ids[0])]
        u = self.game_ui()
        lvl = self.level
        if wid == "replay":        # the Level itself: its id may name another level in the catalogue in use
            return [self.open_level(lvl), {"effect": "restart"}]
        if wid == "next":
            ids = catalog().objective(f"{lvl.game}/{lvl.difficulty}").level_ids
            i = ids.index(lvl.id)
            if i + 1 < len(ids):
                return [self.open_level(ids[i + 1])]
            return [self._exit(u)]
        if wid == "menu":
            return [self._exit(u)]
        if wid == "restart":
            self.session.restart()
            self.ui = u.initial_state()
            self.shake = self.toast = None
            return [{"effect": "restart"}]
        if wid == "undo":
            try:
                self.session.undo()
            except UndoNotAllowedError as e:
                return [{"effect": "refused", "reason": e.reason, "message": str(e)}]
            self.ui = u.initial_state()
            return [{"effect": "undo"}]
        return u.on_button(self, wid, t)

    def _exit(self, u: GameUI) -> dict:
        g = self.level.game
        if u.exit_to == "difficulty" and len(catalog().objectives(g)) > 1:
            return self._go({"name": "difficulty", "game": g})
        return self.go_home()

    # ---- moves <-> gestures ------------------------------------------------------------
    def gesture_for(self, action: int) -> dict:
        return self.game_ui().gesture_for(int(action), self.proj, self)

    def gesture_run(self, actions) -> tuple[dict, int]:
        """One gesture for the first k of ``actions`` (GameUI.gesture_run): (gesture, k)."""
        return self.game_ui().gesture_run(list(actions), self.proj, self)

    def interpret(self, gui_action: Any) -> list[int]:
        """The moves (action ints) a GUI action would apply, without changing this suite."""
        c = self.clone()
        n0 = len(c.session.moves) if c.session else 0
        log0 = len(c.session.log) if c.session else 0
        c.dispatch(gui_action)
        if c.session is None or c.session is not None and self.session is not None and c.level.id != self.level.id:
            return []
        s = c.session
        if len(s.log) < log0:
            return []
        return [int(a) for a in s.moves[n0:]]

    def clone(self) -> "Suite":
        c = Suite.__new__(Suite)
        c.__dict__.update(self.__dict__)
        c.screen = dict(self.screen)
        c.ui = json.loads(json.dumps(self.ui))
        c.pointer = dict(self.pointer)
        c.toast = dict(self.toast) if self.toast else None
        c.shake = dict(self.shake) if self.shake else None
        c.anims = [dict(a) for a in self.anims]
        if self.session is not None:
            s = Session.__new__(Session)
            s.__dict__.update(self.session.__dict__)
            s._state = self.session._state.copy()
            s._stack = list(self.session._stack)
            s.moves = list(self.session.moves)
            s.log = list(self.session.log)
            s.counters = type(self.session.counters)(**self.session.counters.as_dict())
            c.session = s
        return c

    # ---- snapshots ----------------------------------------------------------------------
    def snapshot(self) -> str:
        return encode_snapshot(self.snapshot_fields(), self.session.checkpoint() if self.session else None)

    def snapshot_fields(self) -> dict:
        """The snapshot's body but its session and checksum, as plain data (the app's screen,
        UI state, pointer, transient feedback, animations and clock; containers are the
        suite's own, to be encoded at once): ``encode_snapshot(fields, checkpoint)`` is
        ``snapshot()``."""
        body = {
            "format": SNAPSHOT_FORMAT,
            "style": self.style, "scale": self.scale, "direct": self.direct, "action_gap_ms": self.action_gap_ms,
            "clock": self.clock, "screen": self.screen, "complete": self.complete,
            "ui": self.ui, "pointer": _jsonable(self.pointer), "toast": self.toast, "shake": self.shake,
            "anims": [{**a, "before": [int(v) for v in a["before"]]} for a in self.anims],
        }
        if self.viewport is not None:
            body["viewport"] = list(self.viewport)
        return body

    @classmethod
    def restore(cls, text: str) -> "Suite":
        try:
            body = loads(text, CheckpointError, "the suite snapshot")
        except (json.JSONDecodeError, TypeError) as e:
            raise CheckpointError(f"suite snapshot is not valid JSON: {e}") from None
        if not isinstance(body, dict) or body.get("format") != SNAPSHOT_FORMAT:
            raise CheckpointError(f"not a suite snapshot (expected format {SNAPSHOT_FORMAT!r})")
        chk = body.pop("checksum", None)
        if chk != hashlib.sha256(canonical_json(body).encode()).hexdigest():
            raise CheckpointError("suite snapshot checksum does not match its content")
        try:
            missing = [k for k in ("style", "scale", "direct", "action_gap_ms", "clock", "screen", "complete",
                                   "session", "ui", "pointer", "toast", "shake", "anims") if k not in body]
            if missing:
                raise CheckpointError(f"suite snapshot is missing {', '.join(missing)}")
            vp = body.get("viewport")
            if type(body["direct"]) is not bool or not _int_in(body["action_gap_ms"], 0, 60_000) \
                    or vp is not None and type(vp) is not list:
                raise CheckpointError("suite snapshot: direct, action_gap_ms or viewport has the wrong type")
            s = cls("home", style=body["style"], scale=body["scale"], direct=body["direct"],
                    action_gap_ms=body["action_gap_ms"], viewport=None if vp is None else tuple(vp))
            s.screen = _check_screen(body["screen"])
            if body["session"] is not None:
                if type(body["session"]) is not str:
                    raise CheckpointError("suite snapshot: the session is not a checkpoint text")
                s.session = Session.from_checkpoint(body["session"])
            if (s.screen["name"] == "level") != (s.session is not None) or (
                    s.session is not None and s.session.level.id != s.screen.get("level")):
                raise CheckpointError("suite snapshot: screen and session disagree")
            if not _int_in(body["clock"], 0, MAX_CLOCK):
                raise CheckpointError(f"suite snapshot: clock must be whole ms from 0 to {MAX_CLOCK}")
            s.clock = body["clock"]
            if type(body["complete"]) is not bool or body["complete"] and not (s.session is not None
                                                                               and s.session.solved):
                raise CheckpointError("suite snapshot: 'complete' says the level is won, but its board is not "
                                      "solved")
            s.complete = body["complete"]
            u = s.game_ui() if s.session is not None else None
            why = u.check_ui(body["ui"]) if u is not None else ("" if body["ui"] == {} else "the UI state of a "
                                                                "menu screen must be empty")
            if why:
                raise CheckpointError(f"suite snapshot: {why}")
            s.ui = body["ui"]
            s.pointer = _check_pointer(body["pointer"])
            s.toast = _check_transient(body["toast"], "toast", "text")
            s.shake = _check_transient(body["shake"], "shake", "target")
            s.anims = _check_anims(body["anims"], s)
        except CheckpointError:
            raise
        except LongPuzzleError as e:          # a style, scale or viewport that cannot be used
            raise CheckpointError(f"suite snapshot: {e}") from None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
            raise CheckpointError(f"suite snapshot is malformed: {type(e).__name__}: {str(e)[:200]}") from None
        return s


MAX_CLOCK = 2 ** 53                 # ms on the virtual clock a snapshot may claim


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return type(v) is int and lo <= v <= hi


def _num_or_nan(v: Any) -> bool:
    return v is None or type(v) in (int, float) and (v != v or -1e9 < v < 1e9)


def _check_screen(screen: Any) -> dict:
    if type(screen) is not dict:
        raise CheckpointError("suite snapshot: the screen is not an object")
    name = screen.get("name")
    keys = {"home": {"name"}, "difficulty": {"name", "game"}, "level": {"name", "level"}}.get(name)
    if keys is None or set(screen) != keys:
        raise CheckpointError(f"suite snapshot: unknown screen {str(screen)[:80]}")
    if name == "difficulty":
        g = screen["game"]
        if type(g) is not str or g not in catalog().games() or len(catalog().objectives(g)) < 2:
            raise CheckpointError(f"suite snapshot: no difficulty screen for game {str(g)[:40]!r}")
    if name == "level" and type(screen["level"]) is not str:
        raise CheckpointError("suite snapshot: the level of the screen is not a level id")
    return dict(screen)


POINTER_KEYS = {"down": bool, "x": "num", "y": "num", "x0": "num", "y0": "num", "t0": int, "target": "text",
                "button": bool, "locked": bool}


def _check_pointer(p: Any) -> dict:
    """The pointer of a snapshot: released ({"down": false[, "x", "y"]}) or pressed with
    every field of _down(); values of the right types (NaN as null)."""
    bad = CheckpointError("suite snapshot: the pointer is malformed")
    if type(p) is not dict or type(p.get("down")) is not bool or not set(p) <= set(POINTER_KEYS):
        raise bad
    need = set(POINTER_KEYS) if p["down"] else {"down"}
    if not need <= set(p) or not p["down"] and set(p) - {"down", "x", "y"}:
        raise bad
    for k, v in p.items():
        t = POINTER_KEYS[k]
        ok = (_num_or_nan(v) if t == "num" else v is None or type(v) is str and len(v) <= 200 if t == "text"
              else _int_in(v, -MAX_CLOCK, MAX_CLOCK) if t is int else type(v) is t)
        if not ok:
            raise CheckpointError(f"suite snapshot: pointer field {k!r} has the wrong type or value")
    return _unjson(p)


def _check_transient(v: Any, what: str, text_key: str) -> dict | None:
    if v is None:
        return None
    if type(v) is not dict or set(v) != {text_key, "t0", "until"} or type(v[text_key]) is not str \
            or len(v[text_key]) > 500 or not _int_in(v["t0"], 0, MAX_CLOCK) or not _int_in(v["until"], 0, MAX_CLOCK):
        raise CheckpointError(f"suite snapshot: the {what} is malformed")
    return dict(v)


def _check_anims(anims: Any, s: "Suite") -> list[dict]:
    if type(anims) is not list or len(anims) > 1000:
        raise CheckpointError("suite snapshot: anims must be a list")
    if s.session is None:
        return []                      # (older snapshots kept those of a level left; none are shown)
    out = []
    lvl, p = s.session.level, s.session.puzzle
    for a in anims:
        if type(a) is not dict or set(a) != {"kind", "t0", "t1", "action", "code", "before"} or a["kind"] != "move" \
                or not _int_in(a["t0"], 0, MAX_CLOCK) or not _int_in(a["t1"], a["t0"], MAX_CLOCK) \
                or not _int_in(a["action"], 0, lvl.n_actions - 1) or not _int_in(a["code"], 0, 2 ** 31):
            raise CheckpointError("suite snapshot: an animation record is malformed")
        try:
            before = p.validate_state(lvl, a["before"])
        except ValueError as e:
            raise CheckpointError(f"suite snapshot: an animation's state is malformed: {e}") from None
        out.append({**a, "before": before})
    return out


def encode_snapshot(fields: dict, session: str | None) -> str:
    """The snapshot text of ``fields`` (Suite.snapshot_fields) and the session's checkpoint
    text (None: no session), exactly as Suite.snapshot writes it."""
    body = {}
    for k, v in fields.items():
        if k != "checksum":
            body[k] = v
        if k == "complete":
            body["session"] = session
    body["checksum"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    return json.dumps(body)


def _jsonable(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in d.items()}


def _unjson(d: dict) -> dict:
    return {k: (float("nan") if v is None and k in ("x", "y") else v) for k, v in d.items()}
