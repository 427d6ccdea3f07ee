"""Compiled solver hooks for Nut and Bolt (contracts in solvers/template.py).

Keys are CANONICAL: bolts are interchangeable, so a state is packed as the multiset of its
bolts. Each bolt is coded as colour_i << 4i (i from the bottom, 4 bits a nut), the codes are
sorted (largest first) and stored ``bpw = 64 // (4 cap)`` to a word.

aux layout (int64)::

    aux[0] = W      aux[1] = n (bolts)    aux[2] = cap    aux[3] = bpw
    aux[4] = 1 to skip moves out of a completed bolt (full, one colour), else 0
    aux[5] = K (colours)
    aux[8 .. 8+n-1]  scratch (bolt codes while packing)
    aux[8+n .. 8+6n-1]  scratch of ``successors`` (per-bolt counts of the parent)
"""

import numpy as np
from numba import njit

SCR = 8
SUCCESSORS_USE_STATE = False      # successors() reads the parent's key only


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
    wi = off
    sh = 0
    fw = 4 * cap
    for b in range(n):
        code = int((key[wi] >> np.uint64(sh)) & np.uint64((1 << fw) - 1))
        sh += fw
        if sh == fw * bpw:
            sh = 0
            wi += 1
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


@njit(cache=True)
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h):
    """The successors of ``expand`` (same moves, same order), made from the parent's key
    alone: a move changes two bolt codes, so the child's sorted code list is the parent's
    with two codes taken out and two merged in (no re-sorting), packed straight into
    skeys[i, :]; solved flags and heuristic values are updated from per-bolt counts.
    Calls no other compiled function (numba then adds no reference counting to the call).

    Scratch in aux (after the pack scratch): per bolt of the parent, at P = SCR + n:
    code, height, top run length, number of runs, top colour (5 blocks of n); then 16
    bitmasks by colour of the bolts that are not full and have that top colour (n <= 63);
    then (constant, set by the knowledge) word and shift of each key field (2 blocks of n)."""
    n = int(aux[1])
    cap = int(aux[2])
    bpw = int(aux[3])
    w = int(aux[0])
    prune = aux[4] == 1
    fw = 4 * cap
    fmask = (1 << fw) - 1
    P = SCR + n
    CO = P
    HE = P + n
    RU = P + 2 * n
    RC = P + 3 * n
    TC = P + 4 * n
    MK = P + 5 * n
    WO = MK + 16
    SO = WO + n
    for c in range(16):
        aux[MK + c] = 0
    first_empty = -1
    R = 0
    NE = 0
    nuts = 0
    bad = 0
    wi = off
    sh = 0
    for b in range(n):
        code = int((keys[wi] >> np.uint64(sh)) & np.uint64(fmask))
        sh += fw
        if sh == fw * bpw:
            sh = 0
            wi += 1
        h = 0
        r = 0
        prev = -1
        run = 0
        top = 0
        for i in range(cap):
            c = (code >> (4 * i)) & 15
            if c == 0:
                break
            h = i + 1
            if c != prev:
                r += 1
                run = 1
            else:
                run += 1
            prev = c
            top = c
        aux[CO + b] = code
        aux[HE + b] = h
        aux[RU + b] = run
        aux[RC + b] = r
        aux[TC + b] = top
        if h == 0:
            if first_empty < 0:
                first_empty = b
        else:
            NE += 1
            R += r
            nuts += h
            if h != cap or r != 1:
                bad += 1
            if h < cap:
                aux[MK + top] |= np.int64(1) << b
    k = 0
    for f in range(n):
        hf = int(aux[HE + f])
        if hf == 0:
            continue
        rf = int(aux[RC + f])
        monof = rf == 1
        if prune and monof and hf == cap:
            continue
        c = int(aux[TC + f])
        run = int(aux[RU + f])
        cf = int(aux[CO + f])
        badf = 1 if (hf != cap or rf != 1) else 0
        # targets, in increasing order: not full with top colour c, and the first empty bolt
        # (unless f is one colour); bit t of a mask
        tmask = aux[MK + c] & ~(np.int64(1) << f)
        if first_empty >= 0 and not monof:
            tmask |= np.int64(1) << first_empty
        while tmask != 0:
            low = tmask & -tmask
            tmask ^= low
            t = 0
            while (np.int64(1) << t) != low:
                t += 1
            ht = int(aux[HE + t])
            moved = min(run, cap - ht)
            ct = int(aux[CO + t])
            rt = int(aux[RC + t])
            # the two new codes
            hf2 = hf - moved
            cf2 = cf & ((1 << (4 * hf2)) - 1)
            ct2 = ct
            for j in range(moved):
                ct2 |= c << (4 * (ht + j))
            ht2 = ht + moved
            rf2 = rf - 1 if moved == run else rf
            rt2 = 1 if ht == 0 else rt
            badt = 0 if ht == 0 else (1 if (ht != cap or rt != 1) else 0)
            badf2 = 1 if (hf2 != 0 and (hf2 != cap or rf2 != 1)) else 0
            badt2 = 1 if (ht2 != cap or rt2 != 1) else 0
            solved[k] = bad - badf - badt + badf2 + badt2 == 0
            if want_h:
                R2 = R - (1 if moved == run else 0) + (1 if ht == 0 else 0)
                NE2 = NE - (1 if hf2 == 0 else 0) + (1 if ht == 0 else 0)
                h1 = R2 - NE2
                h2 = R2 - nuts // cap
                hv[k] = h1 if h1 > h2 else h2
            # merge: the parent's codes (descending) less f and t, plus cf2 and ct2
            a = cf2 if cf2 >= ct2 else ct2
            a2 = ct2 if cf2 >= ct2 else cf2
            pend = 2
            for j in range(w):
                skeys[k, j] = 0
            o = 0
            jj = 0
            wo = 0
            so = 0
            while o < n:
                if jj == f or jj == t:
                    jj += 1
                    continue
                if pend > 0 and (jj >= n or a >= int(aux[CO + jj])):
                    x = a
                    a = a2
                    pend -= 1
                else:
                    x = int(aux[CO + jj])
                    jj += 1
                if x != 0:
                    skeys[k, wo] |= np.uint64(x) << np.uint64(so)
                o += 1
                so += fw
                if so == fw * bpw:
                    so = 0
                    wo += 1
            acts[k] = f * n + t
            k += 1
    return k
