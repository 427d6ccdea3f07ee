"""Compiled solver hooks for Bolt Unscrew: an admissible, consistent heuristic for the core
searches (A* proofs and lower bounds).

h = number of occupied anchors that pin at least one attached piece, and at least 1 while
a released piece rests on the board. A piece leaves only when it has no pin, pins are only
removed by taking the screw out of their anchor, and one move empties exactly one anchor
(and fills one), so the count falls by at most 1 a move; a resting piece falls on only when
a peg under it is taken away, which is a move. The maximum of the two lower bounds is
admissible and, each changing by at most 1 a move, consistent.

aux: the generic pack spec [W, L, lo/bits ...] (2 + 2L entries), then nA scratch entries.
(The greedy search that finds the first solutions is compiled separately: see
GREEDY_TEMPLATE in bolt_unscrew.py.)
"""

from numba import njit


@njit(cache=True)
def heuristic(lv, aux, s):
    na = int(lv[0])
    npieces = int(lv[1])
    holes = int(lv[2])
    ss = int(lv[11])
    scr = 2 + 2 * int(aux[1])
    for a in range(na):
        aux[scr + a] = 0
    h = 0
    resting = 0
    for p in range(npieces):
        base = na + p * ss
        st = int(s[base])
        if st != 0:
            if st == 1:
                resting = 1
            continue
        for k in range(holes):
            a = int(s[base + 4 + k])
            if a >= 0 and aux[scr + a] == 0:
                aux[scr + a] = 1
                h += 1
    return h if h > resting else resting
