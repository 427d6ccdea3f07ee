"""Nut and Bolt ``successors`` kernel (solvers/knowledge/nut_and_bolt_kernels.py) against a
plain Python reading of the key: decode the bolt codes, apply every legal move of the rules
(less the moves the kernel documents as skipped: onto an empty bolt other than the first,
a one-colour bolt onto an empty one, with aux[4] = 1 out of a completed bolt), canonicalise.
Compares successors, their order, keys, actions, solved flags and heuristic values."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.knowledge import nut_and_bolt_kernels as K

KNOW = knowledge("nut_and_bolt")


# ---- the plain reading -------------------------------------------------------------

def geometry(cap):
    fw = 4 * cap
    return fw, 64 // fw


def encode(bolts, n, cap):
    """Canonical key words: codes colour_i << 4i sorted descending, bpw to a word."""
    fw, bpw = geometry(cap)
    codes = sorted((sum(c << (4 * i) for i, c in enumerate(b)) for b in bolts), reverse=True)
    words = [0] * (-(-n // bpw))
    for o, code in enumerate(codes):
        words[o // bpw] |= code << (fw * (o % bpw))
    return tuple(words)


def decode(words, n, cap):
    fw, bpw = geometry(cap)
    bolts = []
    for o in range(n):
        code = (int(words[o // bpw]) >> (fw * (o % bpw))) & ((1 << fw) - 1)
        nuts = []
        for i in range(cap):
            c = (code >> (4 * i)) & 15
            if c == 0:
                break
            nuts.append(c)
        bolts.append(nuts)
    return bolts


def runs(b):
    return sum(1 for i, c in enumerate(b) if i == 0 or c != b[i - 1])


def complete(b, cap):
    return len(b) == cap and len(set(b)) == 1


def solved(bolts, cap):
    return all(not b or complete(b, cap) for b in bolts)


def heuristic(bolts, cap):
    r = [runs(b) for b in bolts if b]
    h1 = sum(x - 1 for x in r)
    h2 = sum(r) - sum(len(b) for b in bolts) // cap
    return max(h1, h2)


def reference(words, n, cap, prune):
    """[(key words, action, solved, heuristic)] in the kernel's order (source, then target)."""
    bolts = decode(words, n, cap)
    empties = [b for b in range(n) if not bolts[b]]
    first_empty = empties[0] if empties else -1
    out = []
    for f in range(n):
        src = bolts[f]
        if not src:
            continue
        mono = len(set(src)) == 1
        if prune and complete(src, cap):
            continue
        c = src[-1]
        run = 1
        while run < len(src) and src[-1 - run] == c:
            run += 1
        for t in range(n):
            dst = bolts[t]
            if t == f:
                continue
            if not dst:
                if t != first_empty or mono:
                    continue
            elif len(dst) >= cap or dst[-1] != c:
                continue
            moved = min(run, cap - len(dst))
            child = [list(b) for b in bolts]
            child[t] = dst + [c] * moved
            child[f] = src[:len(src) - moved]
            out.append((encode(child, n, cap), f * n + t, solved(child, cap), heuristic(child, cap)))
    return out


# ---- the kernel ----------------------------------------------------------------------

def kernel(words, n, cap, k_colours, prune, row0, off):
    level = SimpleNamespace(lv=np.array([n, cap, k_colours], np.int32))
    aux = KNOW.aux(level, prune=prune)
    w = int(aux[0])
    assert w == len(words)
    keys = np.full(off + w + 3, 0xDEADBEEF, np.uint64)       # other states' keys around it
    keys[off:off + w] = np.array(words, np.uint64)
    rows = row0 + n * n + 1
    s = np.zeros(n + n * cap, np.int8)
    succ = np.zeros((rows, s.shape[0]), np.int8)
    skeys = np.full((rows, w), 7, np.uint64)
    acts = np.full(rows, -5, np.int64)
    sv = np.zeros(rows, np.bool_)
    hv = np.full(rows, -9, np.int64)
    c = K.successors(level.lv, aux, s, keys, off, succ, skeys, acts, sv, hv, True, row0)
    # rows below row0 (other states' successors) and after the last are left alone
    for lo, hi in ((0, row0), (row0 + c, rows)):
        assert (skeys[lo:hi] == 7).all() and (acts[lo:hi] == -5).all() and (hv[lo:hi] == -9).all()
        assert not sv[lo:hi].any()
    got = [(tuple(int(x) for x in skeys[row0 + i]), int(acts[row0 + i]), bool(sv[row0 + i]), int(hv[row0 + i]))
           for i in range(c)]
    # want_h False: same rows but for the heuristic values (not written)
    hv2 = np.full(rows, -9, np.int64)
    c2 = K.successors(level.lv, aux, s, keys, off, succ, skeys, acts, sv, hv2, False, row0)
    assert c2 == c
    got2 = [(tuple(int(x) for x in skeys[row0 + i]), int(acts[row0 + i]), bool(sv[row0 + i])) for i in range(c)]
    assert got2 == [g[:3] for g in got]
    return got


def check(bolts, n, cap, prune, row0=0, off=0):
    words = encode(bolts, n, cap)
    colours = {c for b in bolts for c in b}
    assert kernel(words, n, cap, max(len(colours), 1), prune, row0, off) == reference(words, n, cap, prune)


# ---- states --------------------------------------------------------------------------

CAPS = [1, 2, 3, 4, 5, 6, 8, 9, 12, 15]      # 64-bit words (1, 2, 4, 8), one code a word (9+)


@st.composite
def states(draw):
    cap = draw(st.sampled_from(CAPS))
    n = draw(st.integers(1, 40))
    n_colours = draw(st.integers(1, 15))
    colours = draw(st.lists(st.integers(1, 15), min_size=n_colours, max_size=n_colours, unique=True))
    bolts = []
    for _ in range(n):
        kind = draw(st.sampled_from(["empty", "full1", "mono", "mixed", "mixed", "mixed", "full"]))
        if kind == "empty":
            bolts.append([])
            continue
        h = cap if kind.startswith("full") else draw(st.integers(1, cap))
        if kind in ("full1", "mono"):
            bolts.append([draw(st.sampled_from(colours))] * h)
        else:
            # few colours a bolt: long runs, equal tops
            few = draw(st.lists(st.sampled_from(colours), min_size=1, max_size=3))
            bolts.append([draw(st.sampled_from(few)) for _ in range(h)])
    return bolts, n, cap, draw(st.booleans()), draw(st.integers(0, 5)), draw(st.integers(0, 3))


@st.composite
def near_solved(draw):
    """Complete and empty bolts, then a few nuts moved anywhere (solved children occur)."""
    cap = draw(st.sampled_from(CAPS))
    full = draw(st.integers(1, 12))
    n = full + draw(st.integers(0, 3))
    bolts = [[draw(st.integers(1, 15))] * cap for _ in range(full)] + [[] for _ in range(n - full)]
    for _ in range(draw(st.integers(0, 3))):
        f = draw(st.sampled_from([b for b in range(n) if bolts[b]]))
        t = draw(st.sampled_from([b for b in range(n) if len(bolts[b]) < cap] or [f]))
        for _ in range(draw(st.integers(1, cap))):
            if bolts[f] and len(bolts[t]) < cap:
                bolts[t].append(bolts[f].pop())
    return bolts, n, cap, draw(st.booleans()), draw(st.integers(0, 5)), draw(st.integers(0, 3))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(states(), near_solved()))
def test_successors_match_the_rules_on_random_states(case):
    bolts, n, cap, prune, row0, off = case
    check(bolts, n, cap, prune, row0, off)


@pytest.mark.parametrize("cap", CAPS)
@pytest.mark.parametrize("prune", [False, True])
def test_successors_edge_states(cap, prune):
    # no bolt, all empty, all complete, one nut, no empty bolt, a sorted state but one move
    check([[]], 1, cap, prune)
    check([[], [], []], 3, cap, prune)
    check([[3] * cap, [5] * cap, []], 3, cap, prune)
    check([[7], [], []], 3, cap, prune, row0=4, off=2)
    check([[1] * cap, [2] * (cap - 1) + [1] if cap > 1 else [2], [2] * cap], 3, cap, prune)
    check([[2] * (cap - 1), [1] * cap, [2]], 3, cap, prune)
    check([[15] * cap, [14, 15] * (cap // 2) + [14] * (cap % 2), [], [15]], 4, cap, prune, row0=1)
    if cap >= 3:        # solved children: a one-colour target filled; a mixed one filled (not)
        check([[2] * (cap - 1), [2], [3] * cap, []], 4, cap, prune)
        check([[1] + [2] * (cap - 2), [2], [3] * cap, []], 4, cap, prune)
    # many bolts of the same top colour (long target lists), the empty bolt last
    check([[4, 9][: min(2, cap)] for _ in range(20)] + [[]], 21, cap, prune)
    check([[9] * min(cap, 2) for _ in range(39)] + [[]], 40, cap, prune)


def test_successors_of_catalogue_walks():
    """States of the real levels (random plays): the kernel against the plain reading."""
    import random

    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.registry import get_puzzle
    p = get_puzzle("nut_and_bolt")
    for level in builtin_catalog().levels("nut_and_bolt"):
        n, cap = int(level.lv[0]), int(level.lv[1])
        rng = random.Random(level.id)
        s = level.initial.copy()
        for i in range(30):
            bolts = [[int(c) for c in s[n + b * cap: n + b * cap + int(s[b])]] for b in range(n)]
            check(bolts, n, cap, prune=i % 2 == 1, row0=i % 3)
            moves = p.legal_moves(level, s)
            if not moves:
                break
            s, _ = p.step(level, s, rng.choice(moves))
