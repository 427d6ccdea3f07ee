"""Compiled solver hooks for Maze Paint (contracts in solvers/template.py): bitboard keys.

The F floor cells are numbered 0..F-1 in cell order (their "floor index"). A key of W
words holds::

    bit i (word i // 64, bit i % 64), i < F      floor cell i is painted
    ball field: BB bits at word aux[3], shift aux[4]   the floor index of the ball
                (after the painted bits; moved to the next word if it would straddle one)

A swipe from floor index i in direction d paints a fixed set of cells (the run from i to
where the ball stops), so a successor key is the parent's painted words OR a precomputed
mask, with the ball field replaced: no state is unpacked during breadth-first search.

aux layout (int64; masks are uint64 bit patterns)::

    aux[0] = W     aux[1] = F     aux[2] = BB (ball field bits)    aux[3] = ball word
    aux[4] = ball shift           aux[5] = R*C (cells)             aux[6..7] spare
    FI  = 8                       aux[FI + cell]  floor index of a cell, -1 for a wall
    CE  = FI + R*C                aux[CE + i]     cell of floor index i
    FU  = CE + F                  aux[FU + j]     word j of the "all painted" bits (W words)
    DE  = FU + W                  aux[DE + 4 i + d]  floor index where the ball stops when
                                  swiped in direction d from floor index i, -1 if it cannot move
    MK  = DE + 4 F                aux[MK + (4 i + d) W + j]  word j of the cells that swipe paints
"""

import numpy as np
from numba import njit

SUCCESSORS_USE_STATE = False      # successors() reads the parent's key only
FI = 8


@njit(cache=True)
def pack(lv, aux, s, key, off):
    w = int(aux[0])
    F = int(aux[1])
    ncell = int(aux[5])
    CE = FI + ncell
    for j in range(w):
        key[off + j] = 0
    for i in range(F):
        if s[2 + int(aux[CE + i])] != 0:
            key[off + i // 64] |= np.uint64(1) << np.uint64(i % 64)
    ball = int(aux[FI + int(s[0])])
    key[off + int(aux[3])] |= np.uint64(ball) << np.uint64(aux[4])


@njit(cache=True)
def unpack(lv, aux, key, off, s):
    F = int(aux[1])
    ncell = int(aux[5])
    CE = FI + ncell
    for c in range(ncell):
        s[2 + c] = 0
    painted = 0
    for i in range(F):
        if (key[off + i // 64] >> np.uint64(i % 64)) & np.uint64(1):
            s[2 + int(aux[CE + i])] = 1
            painted += 1
    mask = (np.uint64(1) << np.uint64(aux[2])) - np.uint64(1)
    ball = int((key[off + int(aux[3])] >> np.uint64(aux[4])) & mask)
    s[0] = aux[CE + ball]
    s[1] = painted


@njit(cache=True)
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h, row0):
    """The moves of the generic expand (every swipe that moves the ball, in the order U, D,
    L, R) as keys, from the parent's key alone. Calls no other compiled function."""
    w = int(aux[0])
    F = int(aux[1])
    ncell = int(aux[5])
    bw = int(aux[3])
    bs = np.uint64(aux[4])
    fmask = (np.uint64(1) << np.uint64(aux[2])) - np.uint64(1)
    CE = FI + ncell
    FU = CE + F
    DE = FU + w
    MK = DE + 4 * F
    ball = int((keys[off + bw] >> bs) & fmask)
    k = row0
    for d in range(4):
        dest = aux[DE + 4 * ball + d]
        if dest < 0:
            continue
        m = MK + (4 * ball + d) * w
        done = True
        for j in range(w):
            x = keys[off + j] | np.uint64(aux[m + j])
            if j == bw:
                x = (x & ~(fmask << bs)) | (np.uint64(dest) << bs)
                if (x & ~(fmask << bs)) != np.uint64(aux[FU + j]):
                    done = False
            elif x != np.uint64(aux[FU + j]):
                done = False
            skeys[k, j] = x
        solved[k] = done
        if want_h:
            hv[k] = 0
        acts[k] = d
        k += 1
    return k - row0
