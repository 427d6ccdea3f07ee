"""The compiled search and the generic solver hooks, as real source that core.py renders per
game: numba caches neither a function that takes another compiled function nor a closure
(engine/specialize.py), so the search is not written once for every game's kernels but
written into a generated module per game, where the game's kernels (step_into, legal_into,
is_solved) are globals it calls and compiles inline.

A game's generated search module (core.search_kernels) is: the game's kernels imported
(engine.specialize), then the solver hooks (core.hook_source: each of pack, unpack,
expand, heuristic and successors imported from the game's knowledge kernels,
solvers/knowledge/<game>_kernels.py, or else the generic one below, copied whole), then
every other function below (the search). Nothing else of this file is copied: not this
docstring, not the TYPE_CHECKING block. The hooks' contract, the search's batches and its
speed notes: solvers/template.py, whose table kernels the search imports.

The file is a module so that readers and linters see the search as code; it is never
imported for use (its functions compile only inside a generated module).
"""

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

# the table kernels, for the search and (the second line) for core.py, which calls them
# through the generated module; these lines are copied with the search
from longpuzzle.solvers.template import _GOLD, _HI, _LO, key_hash, prefetch
from longpuzzle.solvers.template import table_grow_in_place, table_rehash  # noqa: F401

if TYPE_CHECKING:       # bound by the generated module's head (the kernels' contract: engine/protocol.py)
    def step_into(lv, src, dst, action) -> int: ...

    def legal_into(lv, state, mask) -> int: ...

    def is_solved(lv, state) -> bool: ...

    UNPACK_FOR_SUCCESSORS = True        # core.hook_source: whether the search unpacks states for successors


# ---- the generic solver hooks: pack by a field spec in aux, expand by legal_into + step_into, h = 0

@njit(cache=True)
def pack(lv, aux, s, key, off):
    """aux = [W, L, lo_0, bits_0, lo_1, bits_1, ...]: field i holds s[i] - lo_i in bits_i
    bits (0 bits: the field is the constant lo_i). Fields never straddle a word."""
    w = int(aux[0])
    n = int(aux[1])
    for j in range(w):
        key[off + j] = 0
    word = off
    shift = 0
    for i in range(n):
        b = int(aux[3 + 2 * i])
        if b == 0:
            continue
        if shift + b > 64:
            word += 1
            shift = 0
        key[word] |= np.uint64(int(s[i]) - int(aux[2 + 2 * i])) << np.uint64(shift)
        shift += b

@njit(cache=True)
def unpack(lv, aux, key, off, s):
    n = int(aux[1])
    word = off
    shift = 0
    for i in range(n):
        b = int(aux[3 + 2 * i])
        lo = int(aux[2 + 2 * i])
        if b == 0:
            s[i] = lo
            continue
        if shift + b > 64:
            word += 1
            shift = 0
        mask = (np.uint64(1) << np.uint64(b)) - np.uint64(1)
        s[i] = int((key[word] >> np.uint64(shift)) & mask) + lo
        shift += b

@njit(cache=True)
def expand(lv, aux, s, succ, acts):
    mask = np.zeros(succ.shape[0], np.uint8)
    legal_into(lv, s, mask)
    k = 0
    for a in range(succ.shape[0]):
        if mask[a]:
            if step_into(lv, s, succ[k], a) == 0:
                acts[k] = a
                k += 1
    return k

@njit(cache=True)
def heuristic(lv, aux, s):
    return 0

@njit(cache=True)
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h, row0):
    """Successors of s (whose key is keys[off:off+W]) as keys skeys[row0 + i, :], with their
    actions, whether each is solved and (if want_h) its heuristic value in the same rows."""
    a = np.empty(succ.shape[0], np.int64)    # (rows below row0 hold other states' successors)
    k = expand(lv, aux, s, succ, a)
    for i in range(k):
        st = succ[i]
        r = row0 + i
        acts[r] = a[i]
        pack(lv, aux, st, skeys[r], 0)
        solved[r] = is_solved(lv, st)
        if want_h:
            hv[r] = heuristic(lv, aux, st)
    return k


# ---- the search

@njit(cache=True)
def _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes):
    ctl[14] = probes
    ctl[0] = n
    ctl[1] = head
    ctl[2] = sp
    ctl[3] = nq
    ctl[4] = fmin
    ctl[5] = u
    ctl[6] = k
    ctl[7] = i
    ctl[8] = gu
    ctl[12] ^= np.int64(sink & np.uint64(1))


@njit(cache=True, nogil=True)
def _steps(lv, aux, w, mode, weight, max_states, stop_at_goal, upper,
           keys, parent, action, g, tk, tid, meta, stack, bhead, qid, qg, qnext,
           succ, acts, skflat, skeys, solvedv, hv, hs, skip, bpar, bt, maxpar, cur, ctl):
    """The search loop, run until it ends or an array must grow (no array is reallocated
    in here, so the loop carries no reference counting). Its state lives in ``ctl``:
    [n, head, sp, nq, fmin, u, k, i, gu, status, goal, lower, sink, f wanted, probes, n seen]
    (probes: table look-ups so far, inserts included); it resumes at row i of a batch of k.
    Only best-first search keeps g (moves from the start) per state; the others get a
    one-element g.

    It works in batches: the successors of up to ``maxpar`` expanded states (until at least
    ``bt`` successors are in hand; breadth- and depth-first search take many, best-first
    one, as its order needs) go into the batch rows (skeys, acts, solvedv, hv; bpar = the
    parent's id, hs = the hash, skip = equal to the grandparent: a reverse move), all their
    home slots are prefetched, then the stored keys their fingerprints point to, and only
    then are they probed and inserted one by one in order (the same ids, in the same order,
    as one state at a time: the misses of a whole batch overlap instead of each waiting).

    Returns 0 finished (status, goal, lower in ctl[9:12]), 1 dense arrays full, 2 table
    over half full, 3 stack full, 4 queue full, 5 bucket ctl[13] past the bucket array."""
    n = ctl[0]
    head = ctl[1]
    sp = ctl[2]
    nq = ctl[3]
    fmin = ctl[4]
    u = ctl[5]
    k = ctl[6]
    i = ctl[7]
    gu = ctl[8]
    probes = ctl[14]
    cap = parent.shape[0]
    nb = bhead.shape[0]
    sink = np.uint64(0)
    while True:
        if i >= k:
            # ---- fill the next batch
            ctl[15] = n           # states stored so far, for a reader on another thread (core._Prefault)
            k = 0
            npar = 0
            while npar < maxpar and k < bt:
                if mode == 0:
                    if head >= n:
                        break
                    u = head
                    head += 1
                    if UNPACK_FOR_SUCCESSORS:
                        unpack(lv, aux, keys, u * w, cur)
                elif mode == 2:
                    if sp == 0:
                        break
                    sp -= 1
                    u = np.int64(stack[sp])
                    if UNPACK_FOR_SUCCESSORS:
                        unpack(lv, aux, keys, u * w, cur)
                else:
                    while fmin < nb and bhead[fmin] < 0:
                        fmin += 1
                    if fmin >= nb:
                        break
                    e = bhead[fmin]
                    bhead[fmin] = qnext[e]
                    u = np.int64(qid[e])
                    if np.int64(qg[e]) != np.int64(g[u]):
                        continue          # stale entry: u was reached more cheaply later
                    unpack(lv, aux, keys, u * w, cur)
                    if weight == 1 and is_solved(lv, cur):
                        ctl[9] = 1
                        ctl[10] = u
                        ctl[11] = fmin
                        _save(ctl, n, head, sp, nq, fmin, u, 0, 0, gu, sink, probes)
                        return 0
                npar += 1
                gu = np.int64(g[u]) if mode == 1 else np.int64(0)
                c = successors(lv, aux, cur, keys, u * w, succ, skeys, acts, solvedv, hv, mode == 1, k)
                # the parent's key (a reverse move) is a known no-op; hash the rest
                pu = np.int64(parent[u])
                for j2 in range(k, k + c):
                    bpar[j2] = u
                    same = pu >= 0
                    if same:
                        for j in range(w):
                            if skflat[j2 * w + j] != keys[pu * w + j]:
                                same = False
                                break
                    skip[j2] = same
                    if not same:
                        # key_hash, written out (calls cost more than the hash here)
                        hx = np.uint64(0)
                        sd = _GOLD
                        for j in range(w):
                            x = skflat[j2 * w + j] ^ sd
                            sd += _GOLD
                            x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                            x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                            hx ^= x ^ (x >> np.uint64(31))
                        hs[j2] = hx
                k += c
            if npar == 0:
                ctl[9] = 0
                _save(ctl, n, head, sp, nq, fmin, u, 0, 0, gu, sink, probes)
                return 0
            # every home slot prefetched, then (a table of 2^15 slots or less stays in cache:
            # nothing to overlap) the stored key a home slot's fingerprint points to (verifying
            # a duplicate reads it)
            tsh = np.uint64(64 - meta[0])
            if meta[0] > 15:
                for j2 in range(k):
                    if not skip[j2]:
                        prefetch(tk, np.int64(hs[j2] >> tsh))
                if w > 1:
                    for j2 in range(k):
                        if not skip[j2]:
                            t = tk[np.int64(hs[j2] >> tsh)]
                            if t != 0 and (t & _HI) == (hs[j2] & _HI):
                                prefetch(keys, (np.int64(t & _LO) - 1) * w)
            i = 0
        while i < k:
            u = np.int64(bpar[i])
            gu = np.int64(g[u]) if mode == 1 else np.int64(0)
            if skip[i] or (mode == 1 and weight == 1 and gu + 1 + hv[i] >= upper):
                i += 1
                continue
            hh = hs[i]
            probes += 1
            # ---- probe (as table_insert_batch; written out: a call would cost reference counting)
            bits = meta[0]
            tmask = (np.int64(1) << bits) - 1
            slot = np.int64(hh >> np.uint64(64 - bits))
            found = 0
            if w == 1:
                if hh == 0:
                    slot = -1
                    found = 1 if meta[2] != 0 else 0
                else:
                    t = tk[slot]
                    while t != hh and t != 0:
                        slot = (slot + 1) & tmask
                        t = tk[slot]
                    found = 1 if t == hh else 0
            else:
                hi = hh & _HI
                t = tk[slot]
                while t != 0:
                    if (t & _HI) == hi:
                        b = (np.int64(t & _LO) - 1) * w
                        j = 0
                        while j < w and keys[b + j] == skflat[i * w + j]:
                            j += 1
                        if j == w:
                            found = 1
                            break
                    slot = (slot + 1) & tmask
                    t = tk[slot]
            if found:
                if mode == 1:
                    if w == 1:
                        fid = meta[2] - 1 if slot < 0 else np.int64(tid[slot])
                    else:
                        fid = np.int64(tk[slot] & _LO) - 1
                    if gu + 1 < np.int64(g[fid]):
                        # reopen with the shorter path
                        f = gu + 1 + weight * hv[i]
                        if nq >= qid.shape[0] or f >= nb:
                            ctl[13] = f
                            _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes)
                            return 4 if nq >= qid.shape[0] else 5
                        g[fid] = gu + 1
                        parent[fid] = u
                        action[fid] = acts[i]
                        qid[nq] = fid
                        qg[nq] = gu + 1
                        qnext[nq] = bhead[f]
                        bhead[f] = nq
                        nq += 1
                        if f < fmin:
                            fmin = f
                i += 1
                continue
            if n >= max_states:
                ctl[9] = -1
                ctl[11] = fmin if mode == 1 and weight == 1 else -1
                _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes)
                return 0
            f = gu + 1 + weight * hv[i]
            if n >= cap or (mode == 2 and sp >= stack.shape[0]) or (mode == 1 and (nq >= qid.shape[0] or f >= nb)):
                ctl[13] = f
                _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes)
                if n >= cap:
                    return 1
                if mode == 2:
                    return 3
                return 4 if nq >= qid.shape[0] else 5
            # insert as a new state
            for j in range(w):
                keys[n * w + j] = skflat[i * w + j]
            parent[n] = u
            action[n] = acts[i]
            if mode == 1:
                g[n] = gu + 1
            if w == 1:
                if slot < 0:
                    meta[2] = n + 1
                else:
                    tk[slot] = hh
                    if mode == 1:
                        tid[slot] = n
            else:
                tk[slot] = (hh & _HI) | np.uint64(n + 1)
            meta[1] += 1
            v = n
            n += 1
            i += 1
            if mode != 1 or weight != 1:
                if stop_at_goal and solvedv[i - 1]:
                    ctl[9] = 1
                    ctl[10] = v
                    ctl[11] = -1
                    _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes)
                    return 0
            if mode == 2:
                stack[sp] = v
                sp += 1
            elif mode == 1:
                qid[nq] = v
                qg[nq] = gu + 1
                qnext[nq] = bhead[f]
                bhead[f] = nq
                nq += 1
                if f < fmin:
                    fmin = f
            if 2 * meta[1] > (np.int64(1) << meta[0]):
                _save(ctl, n, head, sp, nq, fmin, u, k, i, gu, sink, probes)
                return 2


@njit(cache=True)
def _start(lv, aux, init, w, mode, weight, keys, parent, action, g, tk, tid, meta, stack, bhead, qid, qg, qnext, ctl):
    """Store ``init`` as state 0 and queue it. Returns 1 if it is solved, 5 if bucket
    ctl[13] does not fit the bucket array (nothing stored yet: grow it and call again), else 0."""
    f0 = 0
    if mode == 1:
        f0 = weight * heuristic(lv, aux, init)
        if f0 >= bhead.shape[0]:
            ctl[13] = f0
            return 5
    pack(lv, aux, init, keys, 0)
    parent[0] = -1
    action[0] = -1
    g[0] = 0
    h0 = key_hash(keys, 0, w)
    if w == 1 and h0 == 0:
        meta[2] = 1
    else:
        slot = np.int64(h0 >> np.uint64(64 - meta[0]))
        if w == 1:
            tk[slot] = h0
            if mode == 1:
                tid[slot] = 0
        else:
            tk[slot] = (h0 & _HI) | np.uint64(1)
    meta[1] = 1
    ctl[0] = 1
    if is_solved(lv, init):
        ctl[9] = 1
        ctl[10] = 0
        ctl[11] = 0
        return 1
    if mode == 1:
        qid[0] = 0
        qg[0] = 0
        qnext[0] = -1
        bhead[f0] = 0
        ctl[3] = 1
        ctl[4] = f0
    elif mode == 2:
        stack[0] = 0
        ctl[2] = 1
    return 0


@njit(cache=True)
def pack_one(lv, aux, s, key):
    pack(lv, aux, s, key, 0)


@njit(cache=True)
def unpack_one(lv, aux, key, s):
    unpack(lv, aux, key, 0, s)
