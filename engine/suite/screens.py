"""The suite's screens: the menus' layout data (RULES.md 1.1 / 1.2), the GameUIs and layouts
shared by every suite of the process, and ScreensMixin: the screen on show, its widgets and
hit-testing, navigation (open_level, open_game, go_home) and the helpers the game UIs call
(show_toast, start_shake, busy_until, try_move, move_effect)."""

from __future__ import annotations

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.errors import UndoNotAllowedError
from longpuzzle.engine.geometry import Layout, Rect, Widget
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle, home_order, spec
from longpuzzle.engine.session import Outcome, Session
from longpuzzle.engine.suite import game_limits
from longpuzzle.engine.suite.game_ui import GameUI, difficulty_label
from longpuzzle.engine.suite.intents import apply

TOAST_MS = 1400
SHAKE_MS = 360

# ---- menu layout data (RULES.md 1.1 / 1.2), design px --------------------------------
HOME_TITLE = "Puzzle Workshop"
HOME_SUBTITLE = "Choose a puzzle"
HOME_CARD_Y = (297, 403, 509, 615, 721, 827)
HOME_CARD_W, HOME_CARD_H = 460, 94
# more than six home slots: the cards share the band the six fill (card tops 250 to bottoms
# 874, between the subtitle and the "Tap a card to play" line at 905), in rows of at most
# HOME_ROWS and as many columns as that needs, HOME_GAP apart
HOME_BAND = (250, 874)
HOME_GAP = 12
HOME_ROWS = 10
DIFF_CARD_W, DIFF_CARD_H = 460, 118
DIFF_CARD_Y_BY_COUNT = {1: (455,), 2: (360, 515), 3: (315, 455, 595), 4: (290, 415, 540, 665),
                        5: (260, 385, 510, 635, 760)}
BACK_BUTTON = (75, 908, 110, 42)
CARD = Rect.centred(270, 470, 420, 300)      # completion card
CARD_NEXT = Widget("next", Rect.centred(270, 520, 260, 60), "pill_button", "Next level")
CARD_REPLAY = Widget("replay", Rect.centred(270, 590, 260, 52), "pill_button", "Replay")
CARD_MENU = Widget("menu", CARD_NEXT.shape, "pill_button", "Menu")    # after an objective's last level
# the card of a level the game's own limits ended (game_limits.py): the level again, or back
CARD_RETRY = Widget("replay", CARD_NEXT.shape, "pill_button", "Try again")
CARD_BACK = Widget("menu", CARD_REPLAY.shape, "pill_button", "Back")


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


class ScreenWidgets:
    """A part of a Suite with its own state: what the current screen is made of, cached - the
    GameUI of each level shown (by id and content), the layout of each screen shown, the
    screen on show's name, layout and last hit-test. It reads the suite's public state (its
    screen, session, settings, completion); the suite tells it when the screen changed
    (``stale``). Clones share the per-level caches and copy the rest."""

    __slots__ = ("uis", "layouts", "key", "current", "last_hit", "cur_ui", "sname")

    def __init__(self):
        # (level id, content digest) -> its GameUI: ids repeat across catalogues and generated
        # levels, so the id alone would hand one level another's geometry (shared by clones)
        self.uis: dict[tuple[str, str], GameUI] = {}
        # (screen name, direct, level digest, catalogue) -> Layout (shared by clones)
        self.layouts: dict[tuple, Layout] = {}
        self.key = None                  # the key of the screen on show's layout (None: stale)
        self.current: Layout | None = None
        self.last_hit = None             # (x, y, layout, widget) of the last hit-test
        self.cur_ui = None               # (session, its GameUI)
        self.sname = None                # (screen, (complete, failed), name)

    def copy(self) -> ScreenWidgets:
        c = ScreenWidgets.__new__(ScreenWidgets)
        for k in ScreenWidgets.__slots__:
            setattr(c, k, getattr(self, k))
        return c

    def stale(self) -> None:
        """The screen changed (another screen, or a card over the board): its layout is made
        again when next asked for."""
        self.key = None

    def game_ui(self, session: Session | None, level: Level | None = None) -> GameUI | None:
        """The GameUI of ``level`` (default: the session's level), or None (no screen)."""
        if level is None:
            if session is None:
                return None
            c = self.cur_ui
            if c is not None and c[0] is session:
                return c[1]
            u = self.game_ui(session, session.level)
            self.cur_ui = (session, u)
            return u
        key = (level.id, level.sha256)
        u = self.uis.get(key)
        if u is None:
            cls = getattr(get_puzzle(level.game), "ui", None)
            if cls is None:
                return None
            u = _shared(self.uis, key, lambda: _shared(_SHARED_UIS, (cls, level.id, level.sha256),
                                                       lambda: cls(get_puzzle(level.game), level)))
        return u

    def screen_name(self, suite: ScreensMixin) -> str:
        s = suite.screen
        done = (suite.complete, suite.failed)
        c = self.sname
        if c is not None and c[0] is s and c[1] == done:
            return c[2]
        if s["name"] == "home":
            name = "home"
        elif s["name"] == "difficulty":
            name = f"difficulty:{s['game']}"
        else:
            name = f"level:{s['level']}" + (":complete" if suite.complete else ":failed" if suite.failed else "")
        self.sname = (s, done, name)    # screens are replaced, never edited in place
        return name

    def layout(self, suite: ScreensMixin) -> Layout:
        """The widgets of the suite's current screen (cached; rebuilt when the screen changes)."""
        if self.key is not None and self.current is not None:
            return self.current
        # a level screen is its level's (by content); every screen lists or links the
        # objectives of the suite's catalogue
        key = (self.screen_name(suite), suite.direct, suite.session.level.sha256 if suite.session is not None else None,
               suite.catalog)
        lay = self.layouts.get(key)
        if lay is not None:
            self.current, self.key = lay, key
            return lay
        if suite.screen["name"] == "level":
            # a level's layouts are shared by every suite (its GameUI is, and holds no state)
            u, direct = self.game_ui(suite.session), suite.direct
            if suite.complete:
                last = suite.last_level()
                auto = bool(u.auto_advance_ms) and not direct and not last     # goes on by itself: no buttons
                lay = _shared(_SHARED_LAYOUTS, ("complete", direct, last, auto), lambda: Layout(
                    [] if auto else [CARD_REPLAY] if direct else [CARD_MENU if last else CARD_NEXT, CARD_REPLAY]))
            elif suite.failed and u.limits.card:
                lay = _shared(_SHARED_LAYOUTS, ("failed", direct), lambda: Layout(
                    [CARD_RETRY] if direct else [CARD_RETRY, CARD_BACK]))
            else:
                lay = _shared(_SHARED_LAYOUTS, ("level", u, direct),
                              lambda: Layout(list(u.targets()) + list(u.buttons(direct))))
        else:
            # the menus' layouts too are shared by every suite of the process (the harness's
            # and each agent's model of the app start at the home screen every episode),
            # by the catalogue's content: its hit-test index is built once, not per suite
            lay = _shared(_SHARED_LAYOUTS, ("menu", key[0], suite.direct, suite.catalog.content_hash),
                          lambda: Layout(_menu_widgets(suite)))
        self.current = _shared(self.layouts, key, lambda: lay)
        self.key = key
        return lay

    def hit(self, suite: ScreensMixin, x: float, y: float) -> Widget | None:
        """The widget of the suite's current screen under the design point (the last answer is
        kept, since one event is usually hit-tested by the suite and then by the game)."""
        lay = self.current if self.key is not None else None
        if lay is None:
            lay = self.layout(suite)
        h = self.last_hit
        if h is not None and h[0] == x and h[1] == y and h[2] is lay:
            return h[3]
        w = lay.hit(x, y)
        self.last_hit = (x, y, lay, w)
        return w


def home_card_rects(n: int) -> list[Rect]:
    """The home screen's card of each of ``n`` slots (slot order: rows top to bottom, each
    left to right). Up to six, RULES.md's cards (HOME_CARD_Y); more share the six's band,
    shorter and, past HOME_ROWS rows, side by side: all inside the frame, none over the
    titles or the caption below."""
    if n <= len(HOME_CARD_Y):
        return [Rect.centred(270, y, HOME_CARD_W, HOME_CARD_H) for y in HOME_CARD_Y[:n]]
    cols = -(-n // HOME_ROWS)
    rows = -(-n // cols)
    top, bottom = HOME_BAND
    pitch = (bottom - top + HOME_GAP) / rows
    h = min(HOME_CARD_H, pitch - HOME_GAP)
    w = (HOME_CARD_W - HOME_GAP * (cols - 1)) / cols
    left = 270 - HOME_CARD_W / 2
    out = []
    for i in range(n):
        row, col = divmod(i, cols)
        x0, y0 = left + col * (w + HOME_GAP), top + row * pitch
        out.append(Rect(x0, y0, x0 + w, y0 + h))
    return out


def _menu_widgets(suite: ScreensMixin) -> list[Widget]:
    """The widgets of the suite's home or difficulty screen."""
    s = suite.screen
    ws: list[Widget] = []
    if s["name"] == "home":
        for g, r in suite.home_cards():
            ws.append(Widget(f"game:{g}", r, "card", get_puzzle(g).title))
        return ws
    g = s["game"]
    objs = suite.catalog.objectives(g)
    decl = spec(g)        # a game may place its difficulty cards and Back button its own way
    ys = decl.difficulty_card_y or DIFF_CARD_Y_BY_COUNT.get(len(objs)) or tuple(
        260 + 125 * i for i in range(len(objs)))
    for o, y in zip(objs, ys):
        ws.append(Widget(f"difficulty:{o.difficulty}", Rect.centred(270, y, DIFF_CARD_W, DIFF_CARD_H),
                         "card", difficulty_label(o.difficulty), (len(o.level_ids),)))
    bx, by, bw, bh = decl.back_button or BACK_BUTTON
    ws.append(Widget("back", Rect.centred(bx, by, bw, bh), "pill_button", "Back"))
    return ws


class ScreensMixin:
    """The screens of a Suite (app.py, whose __init__ sets the state read here): navigation,
    moves, the clock's own events; the widgets on screen are its ``widgets`` part's."""

    # ---- screens -------------------------------------------------------------------
    @property
    def level(self) -> Level | None:
        return self.session.level if self.session else None

    @property
    def puzzle(self):
        return self.session.puzzle if self.session else None

    def game_ui(self, level: Level | None = None) -> GameUI | None:
        """The GameUI of ``level`` (default: the level on screen), or None (no screen)."""
        return self.widgets.game_ui(self.session, level)

    def screen_name(self) -> str:
        return self.widgets.screen_name(self)

    def home_cards(self) -> list[tuple[str, Rect]]:
        """(game id, its card) of the home screen: the games of the catalogue with a declared
        home slot in slot order (registry.home_order), then the others; each in its slot's
        card of home_card_rects (a game keeps its slot when the catalogue lacks another)."""
        have = self.catalog.games()
        home = home_order()
        extra = [g for g in have if g not in home]
        slots = [(g, home.index(g)) for g in home if g in have] + [(g, len(home) + i) for i, g in enumerate(extra)]
        if not slots:
            return []
        rects = home_card_rects(max(i for _, i in slots) + 1)
        return [(g, rects[i]) for g, i in slots]

    def home_games(self) -> list[tuple[str, float]]:
        """(game id, its card's centre y) of the home screen (home_cards; the cards' centre x
        is 270 while they fit in one column)."""
        return [(g, r.center[1]) for g, r in self.home_cards()]

    def layout(self) -> Layout:
        """The widgets of the current screen (cached; rebuilt when the screen changes)."""
        return self.widgets.layout(self)

    def last_level(self) -> bool:
        """Whether the level on screen is the last of its objective (its card says "All
        complete!" and offers the menu instead of a next level)."""
        lvl = self.level
        return lvl is not None and self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids[-1] == lvl.id

    def hit(self, x: float, y: float) -> Widget | None:
        """The widget of the current screen under the design point."""
        return self.widgets.hit(self, x, y)

    def _go(self, screen: dict) -> dict:
        self.screen = screen
        self.input.lift()
        self.toast = self.shake = None
        self.complete = False
        self.timer = None
        self.failed = None
        self.widgets.stale()
        if screen["name"] != "level":
            self.session = None
            self.ui = {}
            self.anims = []            # animations belong to the level that is no longer shown
            self.limits = None
        return {"effect": "navigate", "screen": self.screen_name()}

    def open_level(self, level_id, t: int | None = None) -> dict:
        """Open a level (an id in the suite's catalogue, or a Level), at clock ``t`` (default: now)."""
        level = load_level(level_id, self.catalog)
        u = self.game_ui(level)
        if u is None:
            return {"effect": "unavailable", "game": level.game,
                    "message": f"{get_puzzle(level.game).title} has no screen yet"}
        self.session = Session(level)
        self.ui = u.initial_state()
        self.anims = []
        self.limits = game_limits.start(self.clock if t is None else t, u.limits, self.session._state) \
            if u.limits is not None and self.game_limits_on else None
        return self._go({"name": "level", "level": level.id})

    def open_game(self, game: str, t: int | None = None) -> dict:
        objs = self.catalog.objectives(game)
        if len(objs) == 1:
            return self.open_level(objs[0].level_ids[0], t)
        return self._go({"name": "difficulty", "game": game})

    def go_home(self) -> dict:
        return self._go({"name": "home"})

    def play_moves(self, moves) -> None:
        """Set the level on screen up by playing moves (texts or action ints) through its rules,
        as ``Session.play`` does (an illegal one raises IllegalMoveError), with no animation or
        time: the screen shows the board after them (the completion card when they win it)."""
        for m in moves:
            self.session.play(m)
        self.complete = self.session.solved
        self.widgets.stale()

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
            c = self.widgets.cur_ui
            u = c[1] if c is not None and c[0] is s else self.game_ui()
            code = o[2]
            dur = int(u.animation_ms(before, s._state, action, code))
            self.anims.append({"kind": "move", "t0": t, "t1": t + dur, "action": action, "code": code,
                               "before": before})        # numpy here; a list in snapshots
            if solved:
                self.complete = True
                self.widgets.stale()
                if u.auto_advance_ms and not self.direct and not self.last_level():
                    self.timer = {"at": t + dur + int(u.auto_advance_ms), "then": "next"}
            elif self.limits is not None and u.limits.per == "move":     # the game's own limits (on the hub)
                why = game_limits.record(self.limits, u.limits, action, before, s._state,
                                         u.painted(s._state) - u.painted(before), t + dur)
                if why is not None:
                    self.fail(why)
        return o

    def gesture_begin(self) -> None:
        """A game whose limits count gestures (Color Connect) begins one: the state before it."""
        lim = self.limits
        if lim is not None and lim.get("open", 0) is None and not self.failed:
            st = self.session._state
            lim["open"] = [game_limits.digest(st), self.game_ui().painted(st)]

    def gesture_end(self) -> None:
        """... and ends the gesture held open (its record may end the level)."""
        lim = self.limits
        if lim is None or not lim.get("open"):
            return
        u, st = self.game_ui(), self.session._state
        why = game_limits.gesture(lim, u.limits, st, u.painted(st))
        if why is not None and not self.complete:
            self.fail(why)

    def fail(self, reason: str) -> None:
        """The game's own limits end the level: its failure card shows; the board takes no input."""
        self.failed = reason
        self.toast = self.shake = None
        self.widgets.stale()

    def tick(self, t: int) -> list[dict]:
        """What the clock reaching ``t`` does on its own: an auto-advance due, the game's time
        limit. Called before each event at t and at the end of each action (effect dicts)."""
        out: list[dict] = []
        tm = self.timer
        if tm is not None and t >= tm["at"]:
            self.timer = None
            lvl = self.level
            ids = self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids
            i = ids.index(lvl.id)
            if i + 1 < len(ids):
                out.append({**self.open_level(ids[i + 1], tm["at"]), "auto": True})
        lim = self.limits
        if lim is not None and not self.failed and not self.complete and t - lim["t0"] >= self.game_ui().limits.timeout_ms:
            self.fail("timeout")
            out.append({"effect": "failed", "reason": "timeout"})
        return out

    # ---- input on the screens (the Pointer part's events land here) -------------------------
    def key_event(self, name: str, t: int) -> list[dict]:
        """A key pressed at t (the clock's own events due by then first): to the game's screen."""
        pre = self.tick(t) if self.timer is not None or self.limits is not None else []
        if self.screen["name"] == "level" and not self.complete and not self.failed and t >= self.busy_until():
            return pre + apply(self, self.game_ui().on_key(self.board, name, t), t)
        return pre

    def board_event(self, kind: str, x: float, y: float, t: int) -> list[dict]:
        """A pointer event on the game's board (not on a button), design px: the intents its
        screen returns, applied (none off a level, or once it is won or failed)."""
        if self.complete or self.failed or self.screen["name"] != "level":
            return []
        c = self.widgets.cur_ui
        u = c[1] if c is not None and c[0] is self.session else self.game_ui()
        return apply(self, u.on_pointer(self.board, kind, x, y, t), t)

    def press_button(self, wid: str, t: int) -> list[dict]:
        """A click on the button ``wid`` of the screen (pressed and released on it) at t."""
        name = self.screen["name"]
        if name == "home":
            return [self.open_game(wid.split(":", 1)[1], t)]
        if name == "difficulty":
            if wid == "back":
                return [self.go_home()]
            d = wid.split(":", 1)[1]
            obj = self.catalog.objective(f"{self.screen['game']}/{d}")
            return [self.open_level(obj.level_ids[0], t)]
        u = self.game_ui()
        lvl = self.level
        if wid == "replay":        # the Level itself: its id may name another level in the suite's catalogue
            return [self.open_level(lvl, t), {"effect": "restart"}]
        if wid == "next":
            ids = self.catalog.objective(f"{lvl.game}/{lvl.difficulty}").level_ids
            i = ids.index(lvl.id)
            if i + 1 < len(ids):
                return [self.open_level(ids[i + 1], t)]
            return [self._exit(u)]
        if wid == "menu":
            return [self._exit(u)]
        if wid == "restart":
            self.session.restart()
            self.ui = u.initial_state()
            self.shake = self.toast = None
            if self.limits is not None:         # the original reloads the level: its limits start again
                self.limits = game_limits.start(t, u.limits, self.session._state)
                self.failed = None
                self.widgets.stale()
            return [{"effect": "restart"}]
        if wid == "undo":
            try:
                self.session.undo()
            except UndoNotAllowedError as e:
                return [{"effect": "refused", "reason": e.reason, "message": str(e)}]
            self.ui = u.initial_state()
            return [{"effect": "undo"}]
        return apply(self, u.on_button(self.board, wid, t), t)

    def _exit(self, u: GameUI) -> dict:
        g = self.level.game
        if u.exit_to == "difficulty" and len(self.catalog.objectives(g)) > 1:
            return self._go({"name": "difficulty", "game": g})
        return self.go_home()

    def move_effect(self, o: Outcome) -> dict:
        if o.accepted:
            return {"effect": "move", "move": o.move, "accepted": True, "changed": o.changed}
        return {"effect": "rejected", "move": o.move, "reason": o.reason, "message": o.message}
