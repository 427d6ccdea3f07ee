"""The suite's screens: the menus' layout data (RULES.md 1.1 / 1.2), the GameUIs and layouts
shared by every suite of the process, and ScreenWidgets: what the screen on show is made of,
its widgets and hit-testing (navigation and moves are the Navigator's, navigator.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from longpuzzle.engine.geometry import Layout, Rect, Widget
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle, spec
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite.game_ui import GameUI, difficulty_label

if TYPE_CHECKING:
    from longpuzzle.engine.suite.navigator import Navigator

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

    def screen_name(self, suite: Navigator) -> str:
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

    def layout(self, suite: Navigator) -> Layout:
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

    def hit(self, suite: Navigator, x: float, y: float) -> Widget | None:
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


def _menu_widgets(suite: Navigator) -> list[Widget]:
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
