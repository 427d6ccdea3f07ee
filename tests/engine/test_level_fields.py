"""The level record errors every game's build_level raises through engine/fields.py
(level_fail, board_size): the file, the level id and the field named, the same wording in
every grid game."""

import pytest

from longpuzzle.engine.errors import LevelFormatError
from longpuzzle.engine.fields import board_size, is_int, level_fail
from longpuzzle.engine.registry import get_puzzle


def test_level_fail_names_file_level_and_field():
    e = level_fail("rush_hour", "easy", 3, "x.json")("must be odd", "rows")
    assert isinstance(e, LevelFormatError)
    assert (e.file, e.level, e.field) == ("x.json", "rush_hour/easy/3", "rows")
    assert str(e) == "file x.json, level rush_hour/easy/3, field 'rows': must be odd"


def test_board_size_reads_both_sides_and_refuses_bools_floats_and_out_of_range():
    fail = level_fail("g", "easy", 1, "f")
    assert board_size({"rows": 2, "cols": 7}, fail, 2, 9) == (2, 7)
    for rows, cols, field in ((1, 3, "rows"), (3, 10, "cols"), (True, 3, "rows"), (3, 4.0, "cols"), (None, 3, "rows")):
        with pytest.raises(LevelFormatError, match="must be an integer from 2 to 9") as err:
            board_size({"rows": rows, "cols": cols}, fail, 2, 9)
        assert err.value.field == field
    assert is_int(3) and not is_int(True) and not is_int(3.0)


@pytest.mark.parametrize("game, lo, hi", [("rush_hour", 2, 12), ("truck_escape", 1, 40), ("color_connect", 1, 32)])
def test_the_grid_games_refuse_a_board_side_out_of_range_alike(game, lo, hi):
    with pytest.raises(LevelFormatError) as err:
        get_puzzle(game).build_level({"rows": hi + 1, "cols": lo}, difficulty="easy", number=4, where="bad.json")
    assert (err.value.file, err.value.level, err.value.field) == ("bad.json", f"{game}/easy/4", "rows")
    assert str(err.value).endswith(f": must be an integer from {lo} to {hi}")
