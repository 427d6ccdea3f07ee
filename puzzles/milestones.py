"""The built-in games' milestone kinds (engine/milestones.py), named by their declarations
(puzzles/declarations.py ``milestones=``): what a judge is asked about a level's screen, each
an exact count or test on the level's state, read with the game's own state layout and kernels.

    Bolt Unscrew    boards out          boards that have dropped out of the frame (status LEFT)
    Rush Hour       way clear           no vehicle or bush on the exit row ahead of the red car
    Nut and Bolt    stacks sorted       colours gathered whole on one bolt (a full, single-colour bolt)
    Truck Escape    vehicles left       trucks that have driven out of the yard
    Maze Paint      cells painted       painted floor tiles (the start tile is painted from the start)
    Color Connect   pairs connected     colour pairs joined by a finished path

Each game then has the level won (engine/milestones.py LEVEL_WON).
"""

from __future__ import annotations

from longpuzzle.engine.milestones import Check, Count


def boards_out(level, state) -> tuple[int, int]:
    from longpuzzle.puzzles.bolt_unscrew import LEFT
    lv = level.lv
    nA, nP, ss = int(lv[0]), int(lv[1]), int(lv[11])
    return sum(int(state[nA + p * ss]) == LEFT for p in range(nP)), nP


def way_clear(level, state) -> bool:
    from longpuzzle.puzzles.rush_hour import _direct_blockers
    return int(_direct_blockers(level.lv, state)) == 0


def stacks_sorted(level, state) -> tuple[int, int]:
    from longpuzzle.puzzles.nut_and_bolt import _pure_colour
    lv = level.lv
    n, cap, colours = int(lv[0]), int(lv[1]), int(lv[2])
    done = {int(_pure_colour(lv, state, b)) for b in range(n) if int(state[b]) == cap}
    done.discard(0)
    return len(done), colours


def vehicles_left(level, state) -> tuple[int, int]:
    n = int(level.lv[2])
    return n - int(state[0]), n


def cells_painted(level, state) -> tuple[int, int]:
    return int(state[1]), int(level.lv[2])


def pairs_connected(level, state) -> tuple[int, int]:
    return int(state[2]), int(level.lv[2])


_M = "longpuzzle.puzzles.milestones:"
BOLT_UNSCREW = (Count("boards_out", _M + "boards_out",
                      "Have at least {k} of the {n} boards dropped out of the puzzle (no longer on the screen)?"),)
RUSH_HOUR = (Check("way_clear", _M + "way_clear",
                   "Is the red car's way to the exit clear: is there no vehicle or obstacle in its row between "
                   "it and the exit?"),)
NUT_AND_BOLT = (Count("stacks_sorted", _M + "stacks_sorted",
                      "Are at least {k} of the {n} colours sorted: each gathered on one bolt that is full and holds "
                      "only that colour?"),)
TRUCK_ESCAPE = (Count("vehicles_left", _M + "vehicles_left",
                      "Have at least {k} of the {n} trucks driven out of the yard?"),)
MAZE_PAINT = (Count("cells_painted", _M + "cells_painted",
                    "Are at least {k} of the {n} floor tiles of the maze painted?", thresholds="quarters"),)
COLOR_CONNECT = (Count("pairs_connected", _M + "pairs_connected",
                       "Are at least {k} of the {n} colour pairs connected by a finished path?"),)
