"""Compiled solver hooks for Rush Hour (see solvers/template.py for the contracts).

Keys: vehicle v's coordinate in bits 4*(v % 16) .. of word v // 16 (coordinates < 16).
aux layout::

    aux[0] = W, aux[1] = N, aux[2 .. 2+2N-1] unused (generic spec slots)
    G = 2 + 2N:  aux[G .. G+R*C-1]  scratch occupancy grid (boards over 64 cells)
    F = G + R*C: aux[F] = 1 if R*C <= 64 (bitboard path), aux[F+1] = bush bitboard,
                 aux[F+2+2v] = vehicle v's cells at coordinate 0 as a bitboard (bit r*C+c),
                 aux[F+3+2v] = bit stride of one step of v (1 horizontal, C vertical)
"""

import numpy as np
from numba import njit

HEADER = 10        # as in puzzles/rush_hour.py


@njit(cache=True)
def expand(lv, aux, s, succ, acts):
    rows = lv[0]
    cols = lv[1]
    n = lv[2]
    m = lv[5]
    grid0 = HEADER + 3 * n
    g = 2 + 2 * n
    for c in range(rows * cols):
        aux[g + c] = lv[grid0 + c]
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = lv[base + 2]
        if lv[base] == 0:
            for k in range(lv[base + 1]):
                aux[g + fixed * cols + pos + k] = 1
        else:
            for k in range(lv[base + 1]):
                aux[g + (pos + k) * cols + fixed] = 1
    cnt = 0
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = lv[base + 2]
        length = lv[base + 1]
        if lv[base] == 0:
            c = pos - 1
            d = 1
            while c >= 0 and aux[g + fixed * cols + c] == 0:
                for j in range(n):
                    succ[cnt, j] = s[j]
                succ[cnt, v] = pos - d
                acts[cnt] = v * 2 * m + m + d - 1
                cnt += 1
                c -= 1
                d += 1
            c = pos + length
            d = 1
            while c < cols and aux[g + fixed * cols + c] == 0:
                for j in range(n):
                    succ[cnt, j] = s[j]
                succ[cnt, v] = pos + d
                acts[cnt] = v * 2 * m + d - 1
                cnt += 1
                c += 1
                d += 1
        else:
            r = pos - 1
            d = 1
            while r >= 0 and aux[g + r * cols + fixed] == 0:
                for j in range(n):
                    succ[cnt, j] = s[j]
                succ[cnt, v] = pos - d
                acts[cnt] = v * 2 * m + m + d - 1
                cnt += 1
                r -= 1
                d += 1
            r = pos + length
            d = 1
            while r < rows and aux[g + r * cols + fixed] == 0:
                for j in range(n):
                    succ[cnt, j] = s[j]
                succ[cnt, v] = pos + d
                acts[cnt] = v * 2 * m + d - 1
                cnt += 1
                r += 1
                d += 1
    return cnt


@njit(cache=True)
def pack(lv, aux, s, key, off):
    for j in range(int(aux[0])):
        key[off + j] = 0
    for v in range(s.shape[0]):
        key[off + (v >> 4)] |= np.uint64(int(s[v])) << np.uint64(4 * (v & 15))


@njit(cache=True)
def unpack(lv, aux, key, off, s):
    for v in range(s.shape[0]):
        s[v] = int((key[off + (v >> 4)] >> np.uint64(4 * (v & 15))) & np.uint64(15))


@njit(cache=True)
def _emit(keys, off, skeys, cnt, v, delta):
    """skeys[cnt] = the key keys[off:off+W] with vehicle v's field moved by delta."""
    for j in range(skeys.shape[1]):
        skeys[cnt, j] = keys[off + j]
    sh = np.uint64(4 * (v & 15))
    word = keys[off + (v >> 4)]
    new = np.uint64(np.int64((word >> sh) & np.uint64(15)) + delta)
    skeys[cnt, v >> 4] = (word & ~(np.uint64(15) << sh)) | (new << sh)


@njit(cache=True)
def _successors_bits(lv, aux, s, keys, off, skeys, acts, solved):
    rows = lv[0]
    cols = lv[1]
    n = lv[2]
    t = lv[3]
    m = lv[5]
    f = 2 + 2 * n + rows * cols
    occ = np.uint64(aux[f + 1])
    for v in range(n):
        occ |= np.uint64(aux[f + 2 + 2 * v]) << np.uint64(int(s[v]) * aux[f + 3 + 2 * v])
    goal = cols - lv[HEADER + 3 * t + 1]
    one = np.uint64(1)
    cnt = 0
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = lv[base + 2]
        length = lv[base + 1]
        if lv[base] == 0:
            row0 = fixed * cols
            c = pos - 1
            d = 1
            while c >= 0 and (occ >> np.uint64(row0 + c)) & one == 0:
                _emit(keys, off, skeys, cnt, v, -d)
                acts[cnt] = v * 2 * m + m + d - 1
                solved[cnt] = v == t and pos - d == goal
                cnt += 1
                c -= 1
                d += 1
            c = pos + length
            d = 1
            while c < cols and (occ >> np.uint64(row0 + c)) & one == 0:
                _emit(keys, off, skeys, cnt, v, d)
                acts[cnt] = v * 2 * m + d - 1
                solved[cnt] = v == t and pos + d == goal
                cnt += 1
                c += 1
                d += 1
        else:
            r = pos - 1
            d = 1
            while r >= 0 and (occ >> np.uint64(r * cols + fixed)) & one == 0:
                _emit(keys, off, skeys, cnt, v, -d)
                acts[cnt] = v * 2 * m + m + d - 1
                solved[cnt] = False
                cnt += 1
                r -= 1
                d += 1
            r = pos + length
            d = 1
            while r < rows and (occ >> np.uint64(r * cols + fixed)) & one == 0:
                _emit(keys, off, skeys, cnt, v, d)
                acts[cnt] = v * 2 * m + d - 1
                solved[cnt] = False
                cnt += 1
                r += 1
                d += 1
    return cnt


@njit(cache=True)
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h):
    rows = lv[0]
    if aux[2 + 2 * lv[2] + rows * lv[1]] == 1:
        return _successors_bits(lv, aux, s, keys, off, skeys, acts, solved)
    cols = lv[1]
    n = lv[2]
    t = lv[3]
    m = lv[5]
    grid0 = HEADER + 3 * n
    g = 2 + 2 * n
    for c in range(rows * cols):
        aux[g + c] = lv[grid0 + c]
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = lv[base + 2]
        if lv[base] == 0:
            for k in range(lv[base + 1]):
                aux[g + fixed * cols + pos + k] = 1
        else:
            for k in range(lv[base + 1]):
                aux[g + (pos + k) * cols + fixed] = 1
    goal = cols - lv[HEADER + 3 * t + 1]
    cnt = 0
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = lv[base + 2]
        length = lv[base + 1]
        if lv[base] == 0:
            c = pos - 1
            d = 1
            while c >= 0 and aux[g + fixed * cols + c] == 0:
                _emit(keys, off, skeys, cnt, v, -d)
                acts[cnt] = v * 2 * m + m + d - 1
                solved[cnt] = v == t and pos - d == goal
                cnt += 1
                c -= 1
                d += 1
            c = pos + length
            d = 1
            while c < cols and aux[g + fixed * cols + c] == 0:
                _emit(keys, off, skeys, cnt, v, d)
                acts[cnt] = v * 2 * m + d - 1
                solved[cnt] = v == t and pos + d == goal
                cnt += 1
                c += 1
                d += 1
        else:
            r = pos - 1
            d = 1
            while r >= 0 and aux[g + r * cols + fixed] == 0:
                _emit(keys, off, skeys, cnt, v, -d)
                acts[cnt] = v * 2 * m + m + d - 1
                solved[cnt] = False
                cnt += 1
                r -= 1
                d += 1
            r = pos + length
            d = 1
            while r < rows and aux[g + r * cols + fixed] == 0:
                _emit(keys, off, skeys, cnt, v, d)
                acts[cnt] = v * 2 * m + d - 1
                solved[cnt] = False
                cnt += 1
                r += 1
                d += 1
    return cnt
