"""Compiled solver hooks for Rush Hour (see solvers/template.py for the contracts).

Keys: vehicle v's coordinate in bits 4*(v % 16) .. of word v // 16 (coordinates < 16).
aux layout::

    aux[0] = W, aux[1] = N, aux[2 .. 2+2N-1] unused (generic spec slots)
    G = 2 + 2N:  aux[G .. G+R*C-1]  scratch occupancy grid (boards over 64 cells)
    F = G + R*C: aux[F] = 1 if R*C <= 64 (bitboard path), aux[F+1] = bush bitboard,
                 aux[F+2+2v] = vehicle v's cells at coordinate 0 as a bitboard (bit r*C+c),
                 aux[F+3+2v] = bit stride of one step of v (1 horizontal, C vertical)
    small boards (R, C <= 8, R*C <= 64, N <= 16): aux[1] = E > 0 (else 0), and
        aux[E-4] = the target's winning coordinate, aux[E-3] / aux[E-2] = bush bitboards
        column-major (bit c*R+r) / row-major (bit r*C+c),
        aux[E+8v .. E+8v+6] = vehicle v: offset of its line (row-major row for horizontal,
            column-major column for vertical), length, 1 if vertical, action base v*2M,
            1 if the target, step stride in the row-major / column-major board,
        aux[E+8N+v] / aux[E+9N+v] = its cells at coordinate 0, row-major / column-major,
        aux[E+10N + p*2^C + pattern]  (then the same for R at E+10N+C*2^C):
            free cells before / after cell p on a line of that occupancy pattern,
            as back | fwd << 8
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
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h, row0):
    """Every slide of every vehicle, as keys (the parent's key with one 4-bit field moved).
    Small boards (aux[1] = E > 0): a row-major and a column-major bitboard, and each
    vehicle's free run both ways read from a table by its line's 8-bit pattern (no cell
    loop). Otherwise a grid in aux scratch. Calls no other compiled function: numba then
    adds no reference counting to the search's call."""
    n = int(lv[2])
    w = skeys.shape[1]
    cnt = row0
    e = int(aux[1])
    if e > 0:
        rows = int(lv[0])
        cols = int(lv[1])
        occ = np.uint64(aux[e - 2])
        occt = np.uint64(aux[e - 3])
        for v in range(n):
            pos = np.uint64(s[v])
            b = e + 8 * v
            occ |= np.uint64(aux[e + 8 * n + v]) << (pos * np.uint64(aux[b + 5]))
            occt |= np.uint64(aux[e + 9 * n + v]) << (pos * np.uint64(aux[b + 6]))
        goal = aux[e - 4]
        lh = e + 10 * n
        lvt = lh + (cols << cols)
        mh = np.uint64((1 << cols) - 1)
        mv = np.uint64((1 << rows) - 1)
        for v in range(n):
            b = e + 8 * v
            pos = np.int64(s[v])
            length = aux[b + 1]
            if aux[b + 2] == 1:
                pat = np.int64((occt >> np.uint64(aux[b])) & mv)
                tb = lvt
                sz = 1 << rows
            else:
                pat = np.int64((occ >> np.uint64(aux[b])) & mh)
                tb = lh
                sz = 1 << cols
            nbk = aux[tb + pos * sz + pat] & 255
            nfw = aux[tb + (pos + length - 1) * sz + pat] >> 8
            if nbk == 0 and nfw == 0:
                continue
            wv = v >> 4
            unit = np.uint64(1) << np.uint64(4 * (v & 15))
            abase = aux[b + 3]
            m = int(lv[5])
            base_word = keys[off + wv]
            for d in range(1, nbk + 1):
                for j in range(w):
                    skeys[cnt, j] = keys[off + j]
                skeys[cnt, wv] = base_word - np.uint64(d) * unit
                acts[cnt] = abase + m + d - 1
                solved[cnt] = False
                cnt += 1
            tgt = aux[b + 4] == 1
            for d in range(1, nfw + 1):
                for j in range(w):
                    skeys[cnt, j] = keys[off + j]
                skeys[cnt, wv] = base_word + np.uint64(d) * unit
                acts[cnt] = abase + d - 1
                solved[cnt] = tgt and pos + d == goal
                cnt += 1
        return cnt - row0
    # ---- boards over 64 cells (or more than 16 vehicles): occupancy grid in aux scratch
    m = int(lv[5])
    rows = int(lv[0])
    cols = int(lv[1])
    g = 2 + 2 * n
    grid0 = HEADER + 3 * n
    for c in range(rows * cols):
        aux[g + c] = lv[grid0 + c]
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        fixed = int(lv[base + 2])
        for k in range(int(lv[base + 1])):
            if lv[base] == 0:
                aux[g + fixed * cols + pos + k] = 1
            else:
                aux[g + (pos + k) * cols + fixed] = 1
    tv = int(lv[3])
    goal = cols - int(lv[HEADER + 3 * tv + 1])
    for v in range(n):
        base = HEADER + 3 * v
        pos = int(s[v])
        length = int(lv[base + 1])
        fixed = int(lv[base + 2])
        if lv[base] == 0:
            first = fixed * cols
            stride = 1
            top = cols - length
        else:
            first = fixed
            stride = cols
            top = rows - length
        wv = v >> 4
        unit = np.uint64(1) << np.uint64(4 * (v & 15))
        abase = v * 2 * m
        d = 1
        while pos - d >= 0 and aux[g + first + (pos - d) * stride] == 0:
            for j in range(w):
                skeys[cnt, j] = keys[off + j]
            skeys[cnt, wv] = keys[off + wv] - np.uint64(d) * unit
            acts[cnt] = abase + m + d - 1
            solved[cnt] = False
            cnt += 1
            d += 1
        d = 1
        while pos + d <= top and aux[g + first + (pos + length - 1 + d) * stride] == 0:
            for j in range(w):
                skeys[cnt, j] = keys[off + j]
            skeys[cnt, wv] = keys[off + wv] + np.uint64(d) * unit
            acts[cnt] = abase + d - 1
            solved[cnt] = v == tv and pos + d == goal
            cnt += 1
            d += 1
    return cnt - row0
