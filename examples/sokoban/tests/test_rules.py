"""Sokoban's rules: pushes, rejections, the text forms, level validation, and the game's
place among longpuzzle's games (its declaration found through the entry point)."""

import numpy as np
import pytest

from longpuzzle.engine.catalog import builtin_catalog as catalog
from longpuzzle.engine.errors import IllegalMoveError, LevelFormatError, MoveSyntaxError
from longpuzzle.engine.registry import get_puzzle, puzzle_ids, spec

from longpuzzle_sokoban.rules import layout_of

P = get_puzzle("sokoban")


def build(layout, name=""):
    return P.build_level({"layout": layout, "name": name}, difficulty="easy", number=1, where="<test>")


def test_the_entry_point_declares_every_part():
    assert puzzle_ids()[-1] == "sokoban"                 # order 7: after the benchmark's six
    s = spec("sokoban")
    assert s.puzzle() is P and P.ui.__name__ == "SokobanUI"
    assert s.drawing_class().__name__ == "SokobanDrawing"
    assert s.knowledge_object().game == "sokoban"
    assert s.generator_object().tiers() == ["easy", "medium", "hard", "beyond"]
    assert s.scoring_facts()["max_steps"] == 200 and s.easiest == "easy"
    assert [o.difficulty for o in catalog().objectives("sokoban")] == ["easy", "medium", "hard"]


def test_a_push_moves_the_box_and_counts_goals():
    lv = build(["######", "#@$-.#", "######"])
    s = P.apply(lv, lv.initial, "R")                      # push: the box one square on
    assert P.render_text(lv, s).split("\n")[1] == "#-@$.#" and not P.is_solved(lv, s)
    s = P.apply(lv, s, "R")
    assert P.render_text(lv, s).split("\n")[1] == "#--@*#"
    assert P.is_solved(lv, s) and P.progress(lv, s) == 1.0
    with pytest.raises(IllegalMoveError) as e:             # the box is against the wall now
        P.apply(lv, s, "R")
    assert e.value.reason == "box_blocked"


def test_walls_and_two_boxes_are_rejected_and_change_nothing():
    lv = build(["######", "#@$$.#", "#---.#", "######"])
    for move, reason in (("R", "box_blocked"), ("U", "wall"), ("L", "wall")):
        with pytest.raises(IllegalMoveError) as e:
            P.apply(lv, lv.initial, move)
        assert e.value.reason == reason
        nxt, code = P.step(lv, lv.initial, P.actions(lv, move)[0])
        assert code > 1 and np.array_equal(nxt, lv.initial)
    assert P.legal_moves(lv, lv.initial) == [1]             # only D


def test_move_text_runs_and_garbage():
    lv = build(["#######", "#@-$-.#", "#######"])
    assert P.actions(lv, "rrR") == [3, 3, 3]
    assert P.is_solved(lv, P.apply(lv, lv.initial, "RRR"))
    for bad in ("", "X", "R1", "up"):
        with pytest.raises(MoveSyntaxError):
            P.actions(lv, bad)


def test_text_form_round_trips():
    for lv in catalog().levels("sokoban"):
        again = build(layout_of(lv, lv.initial))
        assert np.array_equal(again.initial, lv.initial) and np.array_equal(again.lv, lv.lv)


@pytest.mark.parametrize("layout, words", [
    (["#####", "#-$.#", "#####"], "exactly one keeper"),
    (["######", "#@$$.#", "######"], "as many boxes as goals"),
    (["#####", "#@x.#", "#####"], "unknown character 'x'"),
    (["#####", "#@*-#", "#####"], "already on a goal"),
    (["#####", "#@-##", "#####", "#$.##"], "never reach"),
    ("#@$.#", "list of row strings"),
])
def test_bad_levels_name_their_fault(layout, words):
    with pytest.raises(LevelFormatError) as e:
        build(layout)
    assert words in str(e.value) and "layout" in str(e.value)


def test_chinese_labels_have_their_glyphs_in_a_font():
    """longpuzzle's CJK font is a subset of its own texts; the glyphs it lacks come from the
    game's own subset (GameSpec.fonts): every Chinese label can be drawn, and the title is
    drawn in the game's font, not as blanks in longpuzzle's."""
    from longpuzzle.render.frame.paint import CJK_FONT, font_file, missing_glyphs

    labels = spec("sokoban").labels["zh"]
    assert labels["Sokoban"] == "推箱子"
    for english, text in labels.items():
        assert missing_glyphs(text, "zh", "sokoban") == "", (english, text)
    assert font_file("推箱子", "zh") == font_file("推箱子", "zh", "sokoban") == spec("sokoban").font_files("zh")[0]
    assert font_file("撤销", "zh", "sokoban") == str(CJK_FONT)       # longpuzzle's own font where it can


def test_screen_geometry_maps_taps_and_swipes_to_steps():
    """One geometry for hit-testing and drawing: the centre of the square next to the keeper
    is a tap of that step; a square farther away is nothing; a swipe anywhere steps along its
    dominant axis (ties vertical)."""
    lv = catalog().level("sokoban/hard/1")
    ui = P.ui(P, lv)
    k = int(lv.initial[0])
    r, c = divmod(k, ui.cols)
    for a, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
        x, y = ui.cell_center(r + dr, c + dc)
        assert ui.cell_at(x, y) == (r + dr, c + dc) and ui.direction(k, x, y, x, y) == a
        assert ui.cell_rect(k).contains(*ui.cell_center(k))
    x, y = ui.cell_center(r + 2, c)
    assert ui.direction(k, x, y, x, y) is None                     # two squares away
    assert ui.direction(k, 10, 10, 10 - 30, 10 + 30) == 1          # a tie goes vertical: down
    assert ui.direction(k, 10, 10, 10 + 40, 10 - 5) == 3
    assert ui.direction(k, 10, 10, float("nan"), 10) is None
