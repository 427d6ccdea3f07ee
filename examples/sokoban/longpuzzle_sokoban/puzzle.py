"""The module the ``longpuzzle.puzzles`` entry point names: the Sokoban Puzzle with its
screen attached (``PUZZLE``). Rules live in rules.py (which never imports the screen or the
drawing); this module only joins them."""

from __future__ import annotations

from longpuzzle_sokoban.rules import Sokoban
from longpuzzle_sokoban.ui import SokobanUI

Sokoban.ui = SokobanUI

PUZZLE = Sokoban()
