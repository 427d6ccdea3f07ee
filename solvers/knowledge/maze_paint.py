"""Maze Paint: bitboard keys (one bit per floor cell, then the ball's floor index; see
solvers/knowledge/maze_paint_kernels.py) and successors made from the parent's key: a swipe
ORs a precomputed mask of the cells it paints. Breadth-first search is optimal in moves (a
swipe into a wall is a counted no-op, never part of a shortest solution, and the search
never makes it)."""

from __future__ import annotations

import numpy as np

from longpuzzle.solvers.knowledge import Knowledge
from longpuzzle.solvers.knowledge import maze_paint_kernels

HEADER = 4
FI = maze_paint_kernels.FI


def _layout(level) -> tuple[int, int, int, int, int]:
    """(F, BB, ball word, ball shift, W) of a level's keys."""
    F = int(level.lv[2])
    bb = max(1, (F - 1).bit_length())
    pos = F if (F % 64) + bb <= 64 else (F // 64 + 1) * 64
    return F, bb, pos // 64, pos % 64, (pos + bb + 63) // 64


class MazePaintKnowledge(Knowledge):
    game = "maze_paint"
    method = "bfs"
    kernels = maze_paint_kernels

    def words(self, level):
        return _layout(level)[4]

    def aux(self, level):
        lv = level.lv
        rows, cols = int(lv[0]), int(lv[1])
        ncell = rows * cols
        F, bb, bword, bshift, w = _layout(level)
        floor_index = np.full(ncell, -1, np.int64)
        cells = np.flatnonzero(np.asarray(lv[HEADER:HEADER + ncell]) != 0)
        floor_index[cells] = np.arange(F)
        full = np.zeros(w * 64, np.uint8)
        full[:F] = 1
        dest = np.full(4 * F, -1, np.int64)
        masks = np.zeros((4 * F, w * 64), np.uint8)
        strides = (-cols, cols, -1, 1)
        for i, cell in enumerate(cells):
            for d in range(4):
                stop = int(lv[HEADER + ncell + 4 * cell + d])
                if stop == cell:
                    continue
                dest[4 * i + d] = floor_index[stop]
                cur = int(cell)
                masks[4 * i + d, floor_index[cur]] = 1
                while cur != stop:
                    cur += strides[d]
                    masks[4 * i + d, floor_index[cur]] = 1

        def words_of(bits):               # rows of w*64 bits -> int64 words (little-endian bits)
            return np.packbits(bits.reshape(-1, w, 64), axis=-1, bitorder="little").view("<u8").reshape(-1) \
                .astype(np.uint64).view(np.int64)

        head = np.array([w, F, bb, bword, bshift, ncell, 0, 0], np.int64)
        return np.concatenate([head, floor_index, cells.astype(np.int64), words_of(full), dest,
                               words_of(masks) if F else np.zeros(0, np.int64)])


KNOWLEDGE = MazePaintKnowledge()
