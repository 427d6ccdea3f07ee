"""Compiled solver hooks for Nut and Bolt (contracts in solvers/template.py).

Keys are CANONICAL: bolts are interchangeable, so a state is packed as the multiset of its
bolts. Each bolt is coded as colour_i << 4i (i from the bottom, 4 bits a nut), the codes are
sorted (largest first) and stored ``bpw = 64 // (4 cap)`` to a word.

aux layout (int64)::

    aux[0] = W      aux[1] = n (bolts)    aux[2] = cap    aux[3] = bpw
    aux[4] = 1 to skip moves out of a completed bolt (full, one colour), else 0
    aux[5] = K (colours)
    aux[8 .. 8+n-1]  scratch (bolt codes while packing)
"""

import numpy as np
from numba import njit

SCR = 8


@njit(cache=True)
def pack(lv, aux, s, key, off):
    n = int(aux[1])
    cap = int(aux[2])
    bpw = int(aux[3])
    w = int(aux[0])
    for b in range(n):
        h = int(s[b])
        code = 0
        for i in range(h):
            code |= int(s[n + b * cap + i]) << (4 * i)
        # insertion into the sorted prefix aux[SCR .. SCR+b-1] (descending)
        j = b
        while j > 0 and aux[SCR + j - 1] < code:
            aux[SCR + j] = aux[SCR + j - 1]
            j -= 1
        aux[SCR + j] = code
    for j in range(w):
        key[off + j] = 0
    for b in range(n):
        key[off + b // bpw] |= np.uint64(aux[SCR + b]) << np.uint64(4 * cap * (b % bpw))


@njit(cache=True)
def unpack(lv, aux, key, off, s):
    n = int(aux[1])
    cap = int(aux[2])
    bpw = int(aux[3])
    for b in range(n):
        code = int((key[off + b // bpw] >> np.uint64(4 * cap * (b % bpw))) & np.uint64((1 << (4 * cap)) - 1))
        h = 0
        for i in range(cap):
            c = (code >> (4 * i)) & 15
            s[n + b * cap + i] = c
            if c != 0:
                h = i + 1
        s[b] = h


@njit(cache=True)
def _mono(s, n, cap, b):
    h = int(s[b])
    c = s[n + b * cap]
    for i in range(1, h):
        if s[n + b * cap + i] != c:
            return False
    return True


@njit(cache=True)
def expand(lv, aux, s, succ, acts):
    """Legal moves, less those that give a state equivalent to another successor or to s:
    only the first empty bolt is tried as a target, and a one-colour bolt is never poured
    whole onto an empty bolt. With aux[4] = 1, completed bolts are never sources."""
    n = int(aux[1])
    cap = int(aux[2])
    prune = aux[4] == 1
    L = s.shape[0]
    first_empty = -1
    for b in range(n):
        if s[b] == 0:
            first_empty = b
            break
    k = 0
    for f in range(n):
        hf = int(s[f])
        if hf == 0:
            continue
        mono = _mono(s, n, cap, f)
        if prune and mono and hf == cap:
            continue
        c = s[n + f * cap + hf - 1]
        run = 1
        while run < hf and s[n + f * cap + hf - 1 - run] == c:
            run += 1
        for t in range(n):
            if t == f:
                continue
            ht = int(s[t])
            if ht == 0:
                if t != first_empty or mono:
                    continue
            elif ht >= cap or s[n + t * cap + ht - 1] != c:
                continue
            moved = min(run, cap - ht)
            row = succ[k]
            for i in range(L):
                row[i] = s[i]
            for j in range(moved):
                row[n + t * cap + ht + j] = c
                row[n + f * cap + hf - 1 - j] = 0
            row[f] = hf - moved
            row[t] = ht + moved
            acts[k] = f * n + t
            k += 1
    return k


@njit(cache=True)
def heuristic(lv, aux, s):
    """max(h1, h2), both consistent (a move lowers each by at most 1):
    h1 = sum over bolts of (runs - 1): every run above a bolt's bottom run must move;
    h2 = runs in total - nuts / cap: a move merges at most one run into another."""
    n = int(aux[1])
    cap = int(aux[2])
    h1 = 0
    runs = 0
    nuts = 0
    for b in range(n):
        h = int(s[b])
        if h == 0:
            continue
        nuts += h
        r = 1
        for i in range(1, h):
            if s[n + b * cap + i] != s[n + b * cap + i - 1]:
                r += 1
        runs += r
        h1 += r - 1
    h2 = runs - nuts // cap
    return h1 if h1 > h2 else h2
