"""Compiled solver hooks for Nut and Bolt (contracts in solvers/template.py).

Keys are CANONICAL: bolts are interchangeable, so a state is packed as the multiset of its
bolts. Each bolt is coded as colour_i << 4i (i from the bottom, 4 bits a nut), the codes are
sorted (largest first) and stored ``bpw = 64 // (4 cap)`` to a word.

aux layout (int64)::

    aux[0] = W      aux[1] = n (bolts)    aux[2] = cap    aux[3] = bpw
    aux[4] = 1 to skip moves out of a completed bolt (full, one colour), else 0
    aux[5] = K (colours)
    aux[8 .. 8+n-1]  scratch (bolt codes while packing)
    aux[8+n ..]      scratch of ``successors`` and its constant tables (see its docstring;
                     made by NutAndBoltKnowledge.aux)

Limits: cap <= 15 (a code fits an int64 with room: 4 cap <= 60 bits), n <= 63 (bitmasks of
bolts), colours 1 .. 15.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

SCR = 8
SUCCESSORS_USE_STATE = False      # successors() reads the parent's key only
_ONES = 0x1111111111111111        # a 1 in every nibble
_U = np.uint64                    # array indices cast to uint64: no negative-index wraparound


def _bit_intrinsic(llvm_name, doc):
    """An int64 -> int64 intrinsic for one of LLVM's bit counting intrinsics (inlined code,
    no call: ``successors`` stays call-free). ctlz/cttz are defined at 0 (they give 64)."""

    @intrinsic
    def op(typingctx, x):
        if x != types.int64:
            return None
        sig = types.int64(types.int64)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            if llvm_name == "llvm.ctpop.i64":
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]), llvm_name)
                return builder.call(fn, [args[0]])
            i1 = ir.IntType(1)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i1]), llvm_name)
            return builder.call(fn, [args[0], ir.Constant(i1, 0)])

        return sig, codegen

    op.__doc__ = doc
    return op


clz64 = _bit_intrinsic("llvm.ctlz.i64", "clz64(x): leading zero bits of the int64 x (64 for 0).")
ctz64 = _bit_intrinsic("llvm.cttz.i64", "ctz64(x): trailing zero bits of the int64 x (64 for 0).")
popcount64 = _bit_intrinsic("llvm.ctpop.i64", "popcount64(x): set bits of the int64 x.")


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
    for i in range(1, h):  # noqa: SIM110 - numba compiles no generator
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


@njit(cache=True, error_model="numpy")
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h, row0):
    """The successors of ``expand`` (same moves, same order), made from the parent's key
    alone: a move changes two bolt codes, so the child's sorted code list is the parent's
    with two codes taken out and two merged in (no re-sorting), built word by word from the
    parent's key words; solved flags and heuristic values are updated incrementally.

    Calls no other compiled function (numba then adds no reference counting to the call);
    clz64/ctz64/popcount64 are intrinsics (inlined instructions, not calls), and
    error_model="numpy" leaves the one division without an exception path (which would
    keep numba's reference counting of the array arguments in the function). Array
    indices are cast to uint64 (_U): numba then emits no negative-index wraparound.

    Bolt facts from a code (no loop over nuts): height from the highest non-zero nibble,
    top colour from that nibble; x = code ^ (top colour in every nibble below the height)
    is 0 for a one-colour bolt and its highest non-zero nibble ends the top run; runs (for
    the heuristic only) = non-zero nibbles of code ^ (code >> 4). The codes are sorted, so
    the non-empty bolts come first and the first zero code ends them.

    Moves: bitmasks of bolts (bit b: the b-th code) by top colour (all, and not full), of
    bolts of several colours and of completed bolts. The sources with a target come from
    the colour masks; then one loop over the (source, target) pairs in order (no loop per
    source: few mispredicted branches), the targets of a source being the not full bolts
    of its top colour and the first empty bolt (unless the source is one colour).

    Merging: let C be the parent's codes (descending, zero padded), u < v the removed
    indices {f, t}, a >= a2 the new codes {cf2, ct2}, placed at slots pa < pb of the child
    (pa = kept codes above a, pb = 1 + kept codes above a2). Every other child slot o holds
    C[o + d], d = [o >= T1] + [o >= T2] - [o > pa] - [o > pb] (T1, T2: the first slots from
    which the kept codes skip u, resp. v), and d is -1, 0 or 1 (the source's code moves
    down, the target's up). So a child key word is the parent's word, the parent's stream
    shifted one field either way, a or a2, chosen field by field with masks from the
    constant table of "fields >= T" masks; only the words holding slots min(u, pa) ..
    max(v, pb) differ from the parent's.

    aux after the pack scratch, at P = SCR + n: 16 bitmasks by colour of the bolts that are
    not full and have that top colour, 16 of the bolts with that top colour (n <= 63);
    (constant, set by the knowledge) word and shift of each key field (2 blocks of n); the
    parent's codes, zero padded (64); the parent's key words, each followed by the words of
    the stream shifted by +1 and by -1 field (3 W); (constant) the mask of the fields >= T
    in word j at GE + T W + j, for T = 0 .. n + 2."""
    n = int(aux[1])
    cap = int(aux[2])
    bpw = int(aux[3])
    w = int(aux[0])
    prune = aux[4] == 1
    fw = 4 * cap
    wbits = fw * bpw
    fmask = (np.int64(1) << fw) - 1
    used = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - wbits)    # (wbits may be 64)
    MK = SCR + n
    TB = MK + 16
    WO = TB + 16
    SO = WO + n
    CO = SO + n
    PW = CO + 64
    GE = PW + 3 * w
    npow = np.int64(1) << (64 - clz64(np.int64(n)))   # a power of two > n
    for c in range(32):
        aux[_U(MK + c)] = 0
    R = 0
    nuts = 0
    several = np.int64(0)       # bolts of several colours
    complete = np.int64(0)      # completed bolts (full, one colour)
    NE = n
    for b in range(n):
        code = np.int64(keys[_U(off + aux[_U(WO + b)])] >> _U(aux[_U(SO + b)])) & fmask
        if code == 0:
            NE = b
            break
        ti = (63 - clz64(code)) >> 2                 # index of the top nut
        top = (code >> (4 * ti)) & 15
        mixed = code != top * (_ONES >> (60 - 4 * ti))
        aux[_U(CO + b)] = code
        bit = np.int64(1) << b
        aux[_U(MK + top)] |= bit & -np.int64(ti != cap - 1)
        aux[_U(TB + top)] |= bit
        several |= bit & -np.int64(mixed)
        complete |= bit & -np.int64((not mixed) & (ti == cap - 1))
        nuts += ti
    nuts += NE
    if want_h:
        for b in range(NE):
            code = aux[_U(CO + b)]
            d = code ^ (code >> 4)                   # non-zero nibbles: ends of runs
            R += popcount64((d | (d >> 1) | (d >> 2) | (d >> 3)) & _ONES)
    bad = NE - popcount64(complete)
    # the first empty bolt (index NE, if any): code 0
    empty_bit = np.int64(0)
    if n > NE:
        empty_bit = np.int64(1) << NE
    for j in range(NE, npow):
        aux[_U(CO + j)] = 0
    # the parent's key words, and the stream shifted down (+1: field o holds field o + 1)
    # and up (-1: field o holds field o - 1) by one field
    # (in uint64: logical shifts, a word may use all 64 bits)
    ufw = np.uint64(fw)
    urest = np.uint64(wbits - fw)
    prev = np.uint64(0)
    for wd in range(w):
        cur = keys[_U(off + wd)]
        aux[_U(PW + 3 * wd)] = np.int64(cur)
        aux[_U(PW + 3 * wd + 2)] = np.int64(((cur << ufw) & used) | (prev >> urest))
        if wd > 0:
            aux[_U(PW + 3 * wd - 2)] = np.int64((prev >> ufw) | ((cur & np.uint64(fmask)) << urest))
        prev = cur
    aux[_U(PW + 3 * w - 2)] = np.int64(prev >> ufw)
    rep = np.int64(0)                                # a 1 in the lowest bit of every field
    for r in range(bpw):
        rep |= np.int64(1) << (fw * r)
    # sources with a target: a bolt of top colour c has one among the not full bolts of
    # colour c (S) unless S is empty or S is that bolt alone; the empty bolt is a target of
    # the bolts of several colours. With prune, completed bolts are no sources.
    fm = several & -np.int64(empty_bit != 0)
    for c in range(16):
        S = aux[_U(MK + c)]
        keep = np.int64(-1) if (S & (S - 1)) != 0 else ~S
        fm |= aux[_U(TB + c)] & keep & -np.int64(S != 0)
    if prune:
        fm &= ~complete
    full = nuts // cap          # (no zero check, error_model="numpy": no exception path)
    k = row0
    prev_f = -1
    prev_t = 0
    while fm != 0:
        f = ctz64(fm)
        cf = aux[_U(CO + f)]
        hf = (67 - clz64(cf)) >> 2
        c = (cf >> (4 * hf - 4)) & 15
        x = cf ^ (c * (_ONES >> (64 - 4 * hf)))
        run = hf - 1 - ((63 - clz64(x)) >> 2)
        multi = (several >> f) & 1
        tm = (aux[_U(MK + c)] & ~(np.int64(1) << f)) | (empty_bit & -multi)
        tm &= (np.int64(-2) << prev_t) if f == prev_f else np.int64(-1)
        t = ctz64(tm)
        fm ^= np.int64((tm & (tm - 1)) == 0) << f
        prev_f = f
        prev_t = t
        ct = aux[_U(CO + t)]
        ht = (67 - clz64(ct)) >> 2
        moved = min(run, cap - ht)
        # the two new codes
        hf2 = hf - moved
        cf2 = cf & ((np.int64(1) << (4 * hf2)) - 1)
        ct2 = ct | ((c * (_ONES >> (64 - 4 * moved))) << (4 * ht))
        ht2 = ht + moved
        emptied = hf2 == 0
        onto_empty = ht == 0
        # bolts neither empty nor complete, before and after: f (never full after), t (never
        # full before; one colour after if it was, or was empty)
        badf = 1 - ((complete >> f) & 1)
        badt2 = (ht2 != cap) | (((several >> t) & 1) == 1)
        solved[_U(k)] = bad - badf - (not onto_empty) + (not emptied) + badt2 == 0
        if want_h:
            R2 = R - (moved == run) + onto_empty
            h1 = R2 - (NE - emptied + onto_empty)
            h2 = R2 - full
            hv[_U(k)] = h1 if h1 > h2 else h2
        acts[_U(k)] = f * n + t
        # merge: the parent's codes (descending) less f and t, plus cf2 and ct2
        a = cf2 if cf2 >= ct2 else ct2
        a2 = ct2 if cf2 >= ct2 else cf2
        na = 0
        na2 = 0
        for j in range(npow):
            x = aux[_U(CO + j)]
            na += x > a
            na2 += x > a2
        pa = na - (cf > a) - (ct > a)
        pb = na2 - (cf > a2) - (ct > a2) + 1
        u = f if f < t else t
        v = t if f < t else f
        T1 = u + (pa < u) + (pb <= u)
        T2 = v - 1 + (pa < v - 1) + (pb <= v - 1)
        lo = u if u < pa else pa
        hi = v if v > pb else pb
        for wd in range(w):
            skeys[_U(k), _U(wd)] = keys[_U(off + wd)]
        ra = a * rep                                 # a, a2 in every field
        ra2 = a2 * rep
        g1 = GE + T1 * w
        g2 = GE + T2 * w
        gpa = GE + pa * w
        gpb = GE + pb * w
        for wd in range(aux[_U(WO + lo)], aux[_U(WO + hi)] + 1):
            A1 = aux[_U(g1 + wd)]
            A2 = aux[_U(g2 + wd)]
            Ga = aux[_U(gpa + wd)]
            B1 = aux[_U(gpa + w + wd)]
            Gb = aux[_U(gpb + wd)]
            B2 = aux[_U(gpb + w + wd)]
            Ea = Ga & ~B1                            # field pa
            Eb = Gb & ~B2                            # field pb
            E = Ea | Eb
            X = A1 & ~A2                             # [o >= T1] + [o >= T2] == 1
            Y = B1 & ~B2                             # [o > pa] + [o > pb] == 1
            Mp = ((X & ~B1) | (A2 & Y)) & ~E         # d = +1
            Mm = ((Y & ~A1) | (X & B2)) & ~E         # d = -1
            p0 = aux[_U(PW + 3 * wd)]
            out = p0 ^ ((p0 ^ aux[_U(PW + 3 * wd + 1)]) & Mp) ^ ((p0 ^ aux[_U(PW + 3 * wd + 2)]) & Mm)
            out ^= ((p0 ^ ra) & Ea) ^ ((p0 ^ ra2) & Eb)
            skeys[_U(k), _U(wd)] = np.uint64(out)
        k += 1
    return k - row0
