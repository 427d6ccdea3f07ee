"""Compiled solver hooks for Sokoban (contracts in longpuzzle/solvers/template.py). Only the
heuristic is the game's own: keys, unpacking and expansion are the generic ones over the
state's fields (knowledge.py gives their field spec: the keeper's cell, then one bit a floor
square for its box).

aux layout (int64)::

    aux[0 : 2 + 2 L]        the generic pack spec [W, L, lo_0, bits_0, ...] of the L state fields
    aux[2 + 2 L + cell]     PUSHES(cell): the fewest pushes that take a box alone on the board
                            from ``cell`` to some goal (0 on a goal); a dead square (no goal
                            reachable) or a wall holds DEAD = R*C, more than any live distance
"""

from numba import njit


@njit(cache=True)
def heuristic(lv, aux, s):
    """Admissible and consistent lower bound on the moves left: the sum over boxes of their
    PUSHES (each push is one move and moves one box one square; boxes are not matched to
    distinct goals, which keeps it a lower bound). A state with a box on a dead square can
    never be solved, so its large value is admissible; a push changes one box's term by at
    most 1 between live squares and never leaves a dead square for a live one (consistent)."""
    n = int(aux[1])
    base = 2 + 2 * n
    ncell = lv[0] * lv[1]
    h = 0
    for c in range(ncell):
        if s[2 + c] != 0:
            h += aux[base + c]
    return h
