"""One declaration per game (engine/declaration.py, engine/registry.py): the built-in games'
declarations name parts that are theirs, reading declarations imports no rules, and a game
installed only through the ``longpuzzle.puzzles`` entry point (a distribution written here
into a temporary folder: its package and its .dist-info with entry_points.txt) has every
part found - rules, screen, levels, drawing, knowledge, generator and tiers, scoring facts,
home-screen slot, labels - with no file of longpuzzle edited."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from importlib import resources

import numpy as np
import pytest

from longpuzzle.engine import registry
from longpuzzle.engine.declaration import DeclarationError, GameSpec, load_object
from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.puzzles.declarations import BUILTIN

FAKE = "fake_paint"
PKG = "fake_paint_game"
# the built-in games (a game of another installed distribution may be registered beside them)
BUILTIN_IDS = [s.id for s in BUILTIN]


def test_builtin_declarations_name_each_games_own_parts():
    from longpuzzle.engine.labels import screen_text
    from longpuzzle.render.frame.drawing import GameDrawing
    from longpuzzle.solvers.generators.base import Generator
    from longpuzzle.solvers.knowledge import Knowledge

    assert registry.puzzle_ids()[:6] == BUILTIN_IDS == ["bolt_unscrew", "rush_hour", "nut_and_bolt", "truck_escape",
                                                        "maze_paint", "color_connect"]
    assert registry.home_order()[:6] == ["bolt_unscrew", "truck_escape", "rush_hour", "nut_and_bolt", "maze_paint",
                                         "color_connect"]
    for s in registry.specs()[:6]:
        p = s.puzzle()
        assert p.id == s.id and p.catalog_order == s.order
        d = s.drawing_class()
        assert issubclass(d, GameDrawing) and d.__module__ == f"longpuzzle.render.{s.id}"
        assert isinstance(s.knowledge_object(), Knowledge) and s.knowledge_object().game == s.id
        assert isinstance(s.generator_object(), Generator) and s.generator_object().game == s.id
        assert s.tier_data()["defining"] == list(s.tier_figures)
        assert s.scoring_facts()["max_steps"] > 0
        text, name = s.level_text()
        assert json.loads(text)["game"] == s.id and name == f"puzzles/levels/{s.id}.json"
        # its title and instructions in Chinese are its own labels, on its screens and the menus
        ui = p.ui
        for t in (p.title, ui.instructions, ui.complete_text):
            assert screen_text(t, "zh", s.id) == screen_text(t, "zh") == s.labels["zh"][t] != t


def test_reading_the_declarations_imports_no_rules_no_numpy_and_no_numba():
    code = textwrap.dedent("""
        import sys
        from longpuzzle.engine import registry
        from longpuzzle.puzzles.declarations import BUILTIN
        ids = [i for i in registry.puzzle_ids() if i in {s.id for s in BUILTIN}]
        order = registry.home_order()
        facts = registry.spec("rush_hour").scoring_facts()
        loaded = sorted(m for m in sys.modules if m.startswith(("longpuzzle.puzzles.", "longpuzzle.render",
                                                                "longpuzzle.solvers", "numba", "numpy")))
        print(len(ids), facts["max_steps"], loaded)
        registry.get_puzzle("maze_paint")
        print(sorted(m for m in sys.modules if m.startswith("longpuzzle.puzzles.")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "6 200 ['longpuzzle.puzzles.declarations']"
    # the rules of the one game asked for, and only those
    assert out[1] == "['longpuzzle.puzzles.declarations', 'longpuzzle.puzzles.maze_paint']"


def test_a_declaration_names_its_parts_as_strings():
    with pytest.raises(DeclarationError, match=r"package\.module:attribute"):
        load_object("longpuzzle.puzzles.maze_paint")
    with pytest.raises(DeclarationError, match="has no attribute"):
        load_object("longpuzzle.puzzles.declarations:NOPE")
    with pytest.raises(DeclarationError, match="non-empty id"):
        GameSpec(id="", rules="x:y")
    bad = GameSpec(id="maze_copy", rules="longpuzzle.puzzles.maze_paint:PUZZLE")
    with pytest.raises(DeclarationError, match="are the game 'maze_paint'"):
        bad.puzzle()
    with pytest.raises(UnknownGameError, match="registered games: bolt_unscrew"):
        registry.spec("no_such_game")
    missing = GameSpec(id="maze_copy", rules="x:y", levels="longpuzzle.puzzles:levels/maze_copy.json")
    with pytest.warns(RuntimeWarning, match="maze_copy: its level file .* cannot be read"):
        assert missing.level_text() is None


# ---- a game of another distribution, through the entry point only ------------------------

_INIT = f'''
from longpuzzle.engine.declaration import GameSpec

GAME = GameSpec(
    id="{FAKE}", rules="{PKG}.rules:PUZZLE", order=7, home=6,
    levels="{PKG}:levels.json", drawing="{PKG}.drawing:DRAWING",
    knowledge="{PKG}.knowledge:KNOWLEDGE", generator="{PKG}.generator:GENERATOR",
    tiers="{PKG}:tiers.json", tier_figures=("optimal", "states"),
    scoring={{"max_steps": 77, "timeout_seconds": 300.0, "time_budget_seconds": 300.0,
              "components": {{"success_base": 60.0, "step_efficiency": 20.0, "action_quality": 10.0,
                              "time_efficiency": 10.0, "failure_progress": 45.0,
                              "failure_action_quality": 8.0, "failure_efficiency": 3.0}},
              "penalties": {{"max_steps": 4.0}},
              "instructions_original": {{"minimal": "paint", "full": "paint every tile"}}}},
    easiest="easy", labels={{"zh": {{"Fake Paint": "\u5047\u6d82\u8272", "Level {{n}}": "\u7b2c {{n}} \u5173!"}}}},
)
'''
_PARTS = {
    "rules.py": f'''
from longpuzzle.puzzles.maze_paint import MazePaint

class FakePaint(MazePaint):
    id = "{FAKE}"
    title = "Fake Paint"
    catalog_order = 7

PUZZLE = FakePaint()
''',
    "drawing.py": '''
from longpuzzle.render.maze_paint import MazePaintDrawing

class FakePaintDrawing(MazePaintDrawing):
    pass

DRAWING = FakePaintDrawing
''',
    "knowledge.py": f'''
from longpuzzle.solvers.knowledge.maze_paint import MazePaintKnowledge

class FakePaintKnowledge(MazePaintKnowledge):
    game = "{FAKE}"
    graph_budget = 1234           # the oracle's budget of its whole graph

KNOWLEDGE = FakePaintKnowledge()
''',
    "generator.py": f'''
from longpuzzle.solvers.generators.maze_paint import MazePaintGenerator

class FakePaintGenerator(MazePaintGenerator):
    game = "{FAKE}"

GENERATOR = FakePaintGenerator()
''',
}


@contextmanager
def _installed(folder, entry_points: str, packages: tuple[str, ...]):
    """A distribution in ``folder`` (its packages written there already) with these
    ``longpuzzle.puzzles`` entry points, on sys.path while the block runs, the registry
    reading it; everything put back afterwards."""
    from longpuzzle.engine import catalog as catalog_module
    dist = folder / "fake_game-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-game\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[longpuzzle.puzzles]\n{entry_points}\n", encoding="utf-8")
    sys.path.insert(0, str(folder))
    registry.reload()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for m in [m for m in sys.modules if m.split(".")[0] in packages]:
            del sys.modules[m]
        registry.reload()
        catalog_module._DEFAULT = None                        # its built-in catalogue may have had the game


@pytest.fixture
def installed_game(tmp_path):
    """The fake game installed into a temporary folder on sys.path (package + dist-info)."""
    pkg = tmp_path / PKG
    pkg.mkdir()
    (pkg / "__init__.py").write_text(_INIT, encoding="utf-8")
    for name, text in _PARTS.items():
        (pkg / name).write_text(text, encoding="utf-8")
    levels = json.loads((resources.files("longpuzzle.puzzles") / "levels" / "maze_paint.json").read_text("utf-8"))
    levels["game"] = FAKE
    levels["objectives"] = levels["objectives"][:1]           # its easy tier
    (pkg / "levels.json").write_text(json.dumps(levels), encoding="utf-8")
    tiers = json.loads((resources.files("longpuzzle.solvers.generators") / "tiers.json").read_text("utf-8"))
    (pkg / "tiers.json").write_text(json.dumps({"games": {FAKE: tiers["games"]["maze_paint"]}}), encoding="utf-8")
    with _installed(tmp_path, f"{FAKE} = {PKG}:GAME", (PKG,)):
        yield tmp_path
    assert FAKE not in registry.puzzle_ids()


def test_a_game_installed_through_the_entry_point_has_every_part_found(installed_game):
    from longpuzzle.agents.metrics import BENCHMARK, EASIEST, LevelRun, level_score
    from longpuzzle.engine.catalog import Catalog
    from longpuzzle.engine.labels import screen_text
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import drawings, render
    from longpuzzle.solvers.core import solve
    from longpuzzle.solvers.generators import generate, generator, generators
    from longpuzzle.solvers.generators.tiers import DEFINING, catalog_tiers
    from longpuzzle.solvers.knowledge import knowledge
    from longpuzzle.solvers.oracle import GRAPH_BUDGET, Oracle

    # declared, in its place, without its rules being imported
    # (after the six: a game of another distribution installed here, e.g. Sokoban (order 7,
    # home 6), sorts after it by id)
    assert registry.puzzle_ids()[6] == FAKE and registry.home_order()[6] == FAKE
    assert f"{PKG}.rules" not in sys.modules
    puzzle = registry.get_puzzle(FAKE)
    assert type(puzzle).__module__ == f"{PKG}.rules" and puzzle.title == "Fake Paint"
    assert FAKE in [p.id for p in registry.puzzles()]

    # its drawing, solver knowledge, generator and tiers
    assert drawings()[FAKE].__module__ == f"{PKG}.drawing" and FAKE in set(drawings())
    assert type(knowledge(FAKE)).__module__ == f"{PKG}.knowledge"
    assert type(generator(FAKE)).__module__ == f"{PKG}.generator" and generator(FAKE) in generators()
    assert DEFINING[FAKE] == ("optimal", "states") and list(catalog_tiers(FAKE)) == ["easy", "medium", "hard"]
    made = next(generate(FAKE, "easy", seed=3, count=1))
    assert made.level.id == f"{FAKE}/easy/1" and made.profile.status == "solvable"

    # its scoring facts and easiest tier
    assert BENCHMARK["games"][FAKE]["max_steps"] == 77 and EASIEST[FAKE] == "easy" and FAKE in EASIEST
    won = level_score(LevelRun(game=FAKE, success=True, steps=7, elapsed=30.0, progress=1.0))
    assert won == pytest.approx(60.0 + 20.0 * (1 - 7 / 77) + 10.0 + 10.0 * (1 - 30 / 300))   # its max_steps

    # its levels in the catalogue, its home card, its screens and texts
    cat = Catalog()
    assert cat.games()[6] == FAKE and cat.level_ids(FAKE)[0] == f"{FAKE}/easy/1"
    level = cat.level(f"{FAKE}/easy/1")
    assert len(solve(level).moves) == level.data["optimal_moves"] == 7
    assert Oracle(level).graph_budget == 1234 and Oracle(cat.level("maze_paint/easy/1")).graph_budget == GRAPH_BUDGET
    home = Suite("home", catalog=cat)
    assert home.home_games()[6][0] == FAKE and len(home.home_games()) == len(registry.home_order()) >= 7
    suite = Suite(f"{FAKE}/easy/1", catalog=cat)
    frame = render(suite)
    same = render(Suite("maze_paint/easy/1", catalog=cat))
    # the same board as Maze Paint's first level, drawn by the game's own drawing; only the
    # title in the header differs
    assert np.array_equal(frame[80:], same[80:]) and not np.array_equal(frame[:80], same[:80])
    suite.dispatch(suite.game_ui().gesture_for(3, suite.proj, suite))   # swipe right
    assert len(suite.session.moves) == 1
    assert screen_text("Fake Paint", "zh") == "\u5047\u6d82\u8272"
    assert screen_text("Level 2", "zh", FAKE) == "\u7b2c 2 \u5173!"


def test_an_entry_point_naming_a_module_with_puzzle_still_registers_its_rules(tmp_path):
    """The older form of the entry point: a module that defines PUZZLE (its rules, no other part)."""
    (tmp_path / "old_paint_game.py").write_text(_PARTS["rules.py"].replace(FAKE, "old_paint"), encoding="utf-8")
    with _installed(tmp_path, "old_paint = old_paint_game", ("old_paint_game",)):
        from longpuzzle.render.frame import drawings
        from longpuzzle.solvers.knowledge import Knowledge, knowledge
        assert "old_paint" in registry.puzzle_ids() and registry.get_puzzle("old_paint").title == "Fake Paint"
        assert "old_paint" not in drawings() and type(knowledge("old_paint")) is Knowledge
    assert "old_paint" not in registry.puzzle_ids()


def test_a_broken_entry_point_is_left_out_with_a_warning(tmp_path):
    with _installed(tmp_path, "broken = no_such_module_here:GAME", ()):
        with pytest.warns(RuntimeWarning, match="entry point broken = 'no_such_module_here:GAME'.*is left out"):
            ids = registry.puzzle_ids()
        assert ids[:6] == BUILTIN_IDS and "broken" not in ids


def test_a_seventh_game_has_its_home_card_inside_the_frame_and_each_card_opens_its_game(installed_game):
    from longpuzzle.engine.catalog import Catalog
    from longpuzzle.engine.geometry import Rect
    from longpuzzle.engine.suite import HOME_CARD_H, HOME_CARD_W, HOME_CARD_Y, Suite, home_card_rects
    from longpuzzle.render.frame import render

    cat = Catalog()
    home = Suite("home", catalog=cat)
    cards = home.home_cards()
    assert [g for g, _ in cards] == registry.home_order() and cards[6][0] == FAKE
    caption_top = 905 - 22 / 2          # "Tap a card to play" (render/frame/screens.py), 22 px
    subtitle_bottom = 190 + 28 / 2      # "Choose a puzzle", 28 px
    rects = [r for _, r in cards]
    for i, r in enumerate(rects):
        assert 0 <= r.x0 < r.x1 <= 540 and subtitle_bottom < r.y0 < r.y1 < caption_top
        assert all(r.x1 <= o.x0 or o.x1 <= r.x0 or r.y1 <= o.y0 or o.y1 <= r.y0 for o in rects[i + 1:])
    # the cards drawn are the cards hit-tested: the layout's widgets, and a tap on each opens its game
    assert [(w.id, w.shape) for w in home.layout().widgets] == [(f"game:{g}", r) for g, r in cards]
    assert render(home).shape[:2] == (960, 540)
    for g, r in cards:
        s = Suite("home", catalog=cat)
        s.dispatch({"type": "click", "x": r.center[0], "y": r.center[1]})
        assert s.screen.get("game", (s.level.game if s.level else None)) == g

    # six slots: RULES.md's cards; any other count shares their band, inside it, none overlapping
    assert home_card_rects(6) == [Rect.centred(270, y, HOME_CARD_W, HOME_CARD_H) for y in HOME_CARD_Y]
    for n in (7, 10, 11, 25):
        rs = home_card_rects(n)
        assert len(rs) == n and min(r.y0 for r in rs) >= 250 and max(r.y1 for r in rs) <= 874
        assert all(20 <= r.x0 < r.x1 <= 520 and r.h > 40 for r in rs)
        assert all(a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0
                   for i, a in enumerate(rs) for b in rs[i + 1:])


def test_a_games_difficulty_menu_is_placed_by_its_declaration(monkeypatch):
    import dataclasses

    from longpuzzle.engine.suite import BACK_BUTTON, DIFF_CARD_Y_BY_COUNT, Suite, screens

    # the built-in games' own placements are declared facts (RULES.md 1.2) ...
    assert registry.spec("bolt_unscrew").difficulty_card_y == (365, 515)
    assert registry.spec("nut_and_bolt").back_button == (75, 918, 110, 42)
    assert registry.spec("maze_paint").difficulty_card_y is registry.spec("maze_paint").back_button is None
    # ... that a declaration of any game may set: the menu reads them
    monkeypatch.setattr(screens, "_SHARED_LAYOUTS", {})
    s = Suite("home")
    s.open_game("maze_paint")
    assert [w.center[1] for w in s.layout().widgets if w.kind == "card"] == list(DIFF_CARD_Y_BY_COUNT[3])
    assert s.layout()["back"].center == BACK_BUTTON[:2]
    monkeypatch.setitem(registry._SPECS, "maze_paint", dataclasses.replace(
        registry.spec("maze_paint"), difficulty_card_y=[300, 450, 600], back_button=(465, 908, 110, 42)))
    monkeypatch.setattr(screens, "_SHARED_LAYOUTS", {})
    s = Suite("home")
    s.open_game("maze_paint")
    assert [w.center[1] for w in s.layout().widgets if w.kind == "card"] == [300, 450, 600]
    assert s.layout()["back"].center == (465, 908)


def test_a_games_chinese_texts_are_drawn_in_its_own_font_and_checked(installed_game, monkeypatch):
    """The shipped CJK font holds longpuzzle's own texts' glyphs only: a game's label with
    others is reported by the conformance check "labels", and drawn once the game declares a
    font that has them (GameSpec.fonts; the Sokoban example's subset is used here)."""
    import dataclasses

    from longpuzzle.agents.testing import check_puzzle
    from longpuzzle.engine.catalog import Catalog
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import layers, render
    from longpuzzle.render.frame import screens as frame_screens
    from longpuzzle.render.frame.paint import CJK_FONT, font_file, missing_glyphs

    ref = "longpuzzle:examples/sokoban/longpuzzle_sokoban/fonts/NotoSansCJKsc-Bold.sokoban.otf"
    if not resources.files("longpuzzle").joinpath(ref.partition(":")[2]).is_file():
        pytest.skip("the Sokoban example's font is not beside this checkout")
    base = registry.spec(FAKE)
    title = "\u63a8\u7bb1\u5b50"            # 推箱子: not among longpuzzle's texts
    rare = "\u9b31\u63a8"                    # 鬱推: 鬱 is in no font here (推 is in Sokoban's, if installed)
    frames = {}
    try:
        for fonts in ({}, {"zh": ref}):
            registry.register(dataclasses.replace(base, labels={"zh": {"Fake Paint": title if fonts else rare}},
                                                  fonts=fonts, _loaded={}))
            font_file.cache_clear()
            report = check_puzzle(FAKE, checks=["labels"], levels=[f"{FAKE}/easy/1"], catalog=Catalog(),
                                  raise_on_failure=False)
            if not fonts:
                assert "\u9b31" in missing_glyphs(rare, "zh", FAKE)
                assert [f.check for f in report.failures] == ["labels"]
                assert "'Fake Paint'" in report.failures[0].message and "GameSpec.fonts" in report.failures[0].message
            else:
                assert report.ok and missing_glyphs(title, "zh", FAKE) == ""
                assert font_file(title, "zh", FAKE) == font_file(title, "zh") != str(CJK_FONT)
                assert font_file("\u64a4\u9500", "zh", FAKE) == str(CJK_FONT)   # 撤销: longpuzzle's own font
            # (fresh renderers and layer bases: a declaration does not change within a process)
            monkeypatch.setattr(layers, "_BASES", {})
            monkeypatch.setattr(frame_screens, "_RENDERERS", {})
            frames[bool(fonts)] = render(Suite(f"{FAKE}/easy/1", catalog=Catalog(), lang="zh"))
    finally:
        registry.unregister(FAKE)
        font_file.cache_clear()
    # the header's title is drawn (other glyphs than the blanks); the board below is the same
    assert not np.array_equal(frames[False][:80], frames[True][:80])
    assert np.array_equal(frames[False][80:], frames[True][80:])
