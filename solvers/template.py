"""The compiled search's contracts and its visited set. The search itself and the generic
solver hooks are real source in search_source.py, which longpuzzle.solvers.core renders per
game into a generated module: that module gets (from engine.specialize's header) the game's
``step_into``, ``legal_into``, ``is_solved``, ``progress``; then the solver hooks, either
imported from the game's knowledge kernels (solvers/knowledge/<game>_kernels.py) or the
generic ones of search_source.py; then the search itself, which imports the table kernels
below.

Hooks (``aux`` is an int64 array of per-level solver data made in Python by the knowledge):

    pack(lv, aux, s, key, off)       state -> W uint64 words key[off:off+W] (canonical form if the game has
                                     symmetries: two states with equal keys are equivalent)
    unpack(lv, aux, key, off, s)     words key[off:off+W] -> a state (the canonical representative)
    expand(lv, aux, s, succ, acts)   successors of s into succ[i, :], their actions into
                                     acts[i]; returns how many
    heuristic(lv, aux, s)            admissible and consistent lower bound on moves left
    successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h, row0)
                                     successors of s (key keys[off:off+W]) as keys
                                     skeys[row0 + i, :] with actions acts[row0 + i], solved
                                     flags and (if want_h) heuristic values in the same rows
                                     (the search fills one batch from many states); returns
                                     how many; default: expand + pack + is_solved
                                     (a kernels module whose successors reads only the key
                                     sets SUCCESSORS_USE_STATE = False: s is then not
                                     filled in breadth- and depth-first search)

Speed note (numba): a compiled function that calls another compiled function, or has
several exits inside loops, increments and decrements the reference count of every array
argument (atomic operations) on each call; a call-free ``successors`` (as the Rush Hour and
Nut and Bolt ones) costs nothing of the kind. So the search loop (``_steps``) writes its
hash, prefetch and probe out in full instead of calling table_* functions, never
reallocates an array (the Python driver in core.run grows them, with numpy's allocator,
which asks for huge pages), and the successors hook is called once per expanded state.

The visited set (functions ``table_*`` below, real module-level kernels imported by the
generated module, whose source digest it carries): open addressing with linear probing
over a power-of-two array of uint64 words, load factor at most 1/2, the home slot taken
from the TOP bits of the key's 64-bit hash (so the table is ordered by hash and doubling
it rewrites the old array in one sequential pass, without touching the stored keys).

    W == 1: tk[slot] = hash (a bijection of the key: equal words mean equal keys, no key
            comparison), tid[slot] = the state's id (only best-first search keeps ids: it
            reopens states; breadth- and depth-first need membership alone, 8 bytes a slot).
            The one key whose hash is 0 lives in meta[2] (0 marks an empty slot).
    W > 1:  tk[slot] = (hash & 0xFFFFFFFF00000000) | (id + 1): 8 bytes a slot; a match
            of the 32 fingerprint bits is confirmed against the stored key words.

    meta = [bits, count, zero-hash id + 1, spare]; memory: 8 bytes a slot (+4 with ids).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_HI = np.uint64(0xFFFFFFFF00000000)
_LO = np.uint64(0xFFFFFFFF)
MAX_TABLE_BITS = 32
MAX_IDS = (1 << 31) - 2


@njit(cache=True)
def key_hash(keys, base, w):
    """64-bit hash of keys[base:base+w]: the XOR over the words of splitmix64's finaliser
    of (word ^ (j + 1) * golden ratio constant), j the word's position. The words are mixed
    independently (their multiplies overlap instead of waiting on one another) and the
    finaliser is a strong bijection, so no structure of the keys survives into the XOR;
    for w == 1 the hash is a bijection of the key."""
    h = np.uint64(0)
    sd = _GOLD
    for j in range(w):
        x = keys[base + j] ^ sd
        sd += _GOLD
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h ^= x ^ (x >> np.uint64(31))
    return h


@intrinsic
def prefetch(typingctx, arr, idx):
    """prefetch(a, i): ask the CPU to bring a[i]'s cache line in (a hint: no load waits for
    it, no fault; read, keep in all cache levels). LLVM's llvm.prefetch intrinsic."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # llvmlite mangles the overload's name for its own pointer model (typed "p0i8";
        # LLVMs with opaque pointers upgrade that name to "p0" when they read the module)
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p],
                                              ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


def _huge_zeros(n: int, dtype) -> np.ndarray:
    """np.zeros from numpy's allocator (which asks for transparent huge pages on large
    arrays: far fewer TLB misses on random probes than numba's allocator gives)."""
    return np.zeros(n, dtype)


def table_arrays(bits: int, w: int, ids: bool = True):
    """Zeroed (tk, tid) of a table of 2**bits slots (numpy-allocated). ``ids=False`` (one-word
    keys, membership only, as a breadth- or depth-first search needs): no id array."""
    return _huge_zeros(1 << bits, np.uint64), _huge_zeros((1 << bits) if w == 1 and ids else 1, np.int32)


@njit(cache=True)
def table_rehash(tk, tid, tk2, tid2, meta, w):
    """Move every entry of (tk, tid) into the empty, twice as large (tk2, tid2): one
    sequential pass (home slots come from the top hash bits, so old slot p's entries land
    near 2p). Sets meta[0] to the new bits."""
    bits = meta[0] + 1
    mask = (np.int64(1) << bits) - 1
    sh = np.uint64(64 - bits)
    for s in range(tk.shape[0]):
        t = tk[s]
        if t != 0:
            p = np.int64(t >> sh)
            while tk2[p] != 0:
                p = (p + 1) & mask
            tk2[p] = t
            if w == 1 and tid.shape[0] > 1:
                tid2[p] = tid[s]
    meta[0] = bits


@njit(cache=True)
def table_grow_in_place(tk, tid, meta):
    """Double the table in place: tk (and tid, if it keeps ids) hold 2**(bits+1) slots whose
    first half is the table and whose second half is zero; afterwards all of them are the
    table and meta[0] is bits + 1. No second array, no fresh copy: on a large search the
    memory of the old table is the first half of the new one.

    One pass from the top slot down: an entry leaves old slot o for its new home q (2p or
    2p + 1 for its old home p) or the first empty slot after it. Invariant: slots above o hold
    only moved entries (each at or after its new home, with no empty slot between), slots at
    or below o only unmoved ones. So an entry with q > o whose probe does not wrap past the
    end lands among moved entries alone; any other (its home displaced by more than its own
    position, or its probe wrapping: only at the two ends of the table) waits in a side list
    and is inserted once every old entry has moved."""
    bits = meta[0]
    nb = bits + 1
    top = (np.int64(1) << nb) - 1
    sh = np.uint64(64 - nb)
    ids = tid.shape[0] > 1
    cap = 256
    dk = np.empty(cap, np.uint64)
    di = np.empty(cap, np.int32)
    nd = 0
    for o in range((np.int64(1) << bits) - 1, -1, -1):
        t = tk[o]
        if t == 0:
            continue
        tk[o] = 0
        x = tid[o] if ids else np.int32(0)
        q = np.int64(t >> sh)
        if q > o:
            p = q
            while p <= top and tk[p] != 0:
                p += 1
            if p <= top:
                tk[p] = t
                if ids:
                    tid[p] = x
                continue
        if nd == cap:
            cap *= 2
            dk2 = np.empty(cap, np.uint64)
            di2 = np.empty(cap, np.int32)
            dk2[:nd] = dk[:nd]
            di2[:nd] = di[:nd]
            dk = dk2
            di = di2
        dk[nd] = t
        di[nd] = x
        nd += 1
    for r in range(nd):
        t = dk[r]
        p = np.int64(t >> sh)
        while tk[p] != 0:
            p = (p + 1) & top
        tk[p] = t
        if ids:
            tid[p] = di[r]
    meta[0] = nb
    return nd


@njit(cache=True)
def table_insert_batch(tk, tid, meta, keys, w, start, n, ids, batch):
    """Insert keys[i*w:(i+1)*w] for i = start .. n-1 into the table whose stored keys are
    ``keys`` itself (a new key keeps its index as id); ids[i] = the id of key i (its first
    occurrence; without an id array, n for any key already present). Works in batches of ``batch`` keys: hashes first, then every home slot
    loaded (their cache misses overlap), then probe and insert. Returns the index reached:
    n, or earlier when the table got over half full (grow it, then call again). Calls no
    other compiled function, as the search's own probe loop."""
    hs = np.empty(batch, np.uint64)
    sink = np.uint64(0)
    with_ids = tid.shape[0] > 1
    i = start
    while i < n:
        b1 = min(n, i + batch)
        for q in range(i, b1):
            hx = np.uint64(0)
            sd = _GOLD
            for j in range(w):
                x = keys[q * w + j] ^ sd
                sd += _GOLD
                x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                hx ^= x ^ (x >> np.uint64(31))
            hs[q - i] = hx
        bits = meta[0]
        sh = np.uint64(64 - bits)
        for q in range(i, b1):
            sink ^= tk[np.int64(hs[q - i] >> sh)]
            if w == 1 and with_ids:
                sink ^= np.uint64(tid[np.int64(hs[q - i] >> sh)])
        stop = False
        for q in range(i, b1):
            hh = hs[q - i]
            bits = meta[0]
            mask = (np.int64(1) << bits) - 1
            slot = np.int64(hh >> np.uint64(64 - bits))
            found = -1
            if w == 1:
                if hh == 0:
                    slot = -1
                    found = meta[2] - 1
                else:
                    t = tk[slot]
                    while t != hh and t != 0:
                        slot = (slot + 1) & mask
                        t = tk[slot]
                    if t == hh:
                        found = np.int64(tid[slot]) if with_ids else np.int64(n)
            else:
                hi = hh & _HI
                t = tk[slot]
                while t != 0:
                    if (t & _HI) == hi:
                        b = (np.int64(t & _LO) - 1) * w
                        j = 0
                        while j < w and keys[b + j] == keys[q * w + j]:
                            j += 1
                        if j == w:
                            found = np.int64(t & _LO) - 1
                            break
                    slot = (slot + 1) & mask
                    t = tk[slot]
            if found >= 0:
                ids[q] = found
                continue
            ids[q] = q
            if w == 1:
                if slot < 0:
                    meta[2] = q + 1
                else:
                    tk[slot] = hh
                    if with_ids:
                        tid[slot] = q
            else:
                tk[slot] = (hh & _HI) | np.uint64(q + 1)
            meta[1] += 1
            if 2 * meta[1] > (np.int64(1) << meta[0]):
                i = q + 1
                stop = True
                break
        if stop:
            meta[3] ^= np.int64(sink & np.uint64(1))
            return i
        i = b1
    meta[3] ^= np.int64(sink & np.uint64(1))
    return n


@njit(cache=True)
def table_lookup_many(tk, tid, meta, stored, w, queries, n, out):
    """out[i] = the id of the key queries[i*w:(i+1)*w] in a table over ``stored`` (-1:
    absent). Call-free like the insert."""
    bits = meta[0]
    mask = (np.int64(1) << bits) - 1
    sh = np.uint64(64 - bits)
    hs = np.empty(16, np.uint64)
    sink = np.uint64(0)
    for q in range(n):
        if q % 16 == 0:
            # the next 16 hashes, and their home slots loaded together
            for r in range(min(16, n - q)):
                hx = np.uint64(0)
                sd = _GOLD
                for j in range(w):
                    x = queries[(q + r) * w + j] ^ sd
                    sd += _GOLD
                    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                    hx ^= x ^ (x >> np.uint64(31))
                hs[r] = hx
                sink ^= tk[np.int64(hx >> sh)]
                if w == 1 and tid.shape[0] > 1:
                    sink ^= np.uint64(tid[np.int64(hx >> sh)])
        hx = hs[q % 16]
        found = -1
        slot = np.int64(hx >> sh)
        if w == 1:
            if hx == 0:
                found = meta[2] - 1
            else:
                t = tk[slot]
                while t != hx and t != 0:
                    slot = (slot + 1) & mask
                    t = tk[slot]
                if t == hx:
                    found = np.int64(tid[slot]) if tid.shape[0] > 1 else np.int64(n)
        else:
            hi = hx & _HI
            t = tk[slot]
            while t != 0:
                if (t & _HI) == hi:
                    b = (np.int64(t & _LO) - 1) * w
                    j = 0
                    while j < w and stored[b + j] == queries[q * w + j]:
                        j += 1
                    if j == w:
                        found = np.int64(t & _LO) - 1
                        break
                slot = (slot + 1) & mask
                t = tk[slot]
        out[q] = found
    meta[3] ^= np.int64(sink & np.uint64(1))
    return out


class KeyTable:
    """The visited set as a Python object over a dense key array (for the table's own tests
    and benchmark; the search runs the same layout and probe inside its loop).

        t = KeyTable(w); ids = t.insert(keys)   # keys: uint64, n*w words; ids[i] = first id
        t.lookup(queries) -> ids or -1;  t.nbytes;  len(t)

    ``ids=False`` (one-word keys): membership only, 8 bytes a slot, as breadth- and
    depth-first searches use it; insert() then gives n for keys already present and
    lookup() n for present keys.
    """

    def __init__(self, w: int, bits: int = 12, batch: int = 16, ids: bool = True, reserve_bits: int = 0):
        self.w = int(w)
        self.ids = ids or self.w > 1
        # reserve_bits > bits: room for 2**reserve_bits slots made at once (zero pages are
        # only backed when written) and the table grows in place inside it
        self._tk, self._tid = table_arrays(max(bits, reserve_bits), self.w, self.ids)
        self.tk, self.tid = self._view(bits)
        self.meta = np.array([bits, 0, 0, 0], np.int64)
        self.batch = batch
        self.keys = np.zeros(0, np.uint64)

    def _view(self, bits: int):
        return self._tk[:1 << bits], (self._tid[:1 << bits] if self._tid.shape[0] > 1 else self._tid)

    def __len__(self) -> int:
        return int(self.meta[1])

    @property
    def bits(self) -> int:
        return int(self.meta[0])

    @property
    def nbytes(self) -> int:
        return int(self.tk.nbytes + (self.tid.nbytes if self.w == 1 and self.ids else 0))

    def grow(self) -> None:
        if self._tk.shape[0] >= 2 << self.bits:
            self.tk, self.tid = self._view(self.bits + 1)
            table_grow_in_place(self.tk, self.tid, self.meta)
            return
        tk2, tid2 = table_arrays(self.bits + 1, self.w, self.ids)
        table_rehash(self.tk, self.tid, tk2, tid2, self.meta, np.int64(self.w))
        self._tk, self._tid = self.tk, self.tid = tk2, tid2

    def insert(self, keys: np.ndarray) -> np.ndarray:
        """Insert a fresh batch of keys (this table then refers to ``keys`` as its stored
        keys: one insert call per table)."""
        keys = np.ascontiguousarray(keys, np.uint64)
        n = keys.shape[0] // self.w
        self.keys = keys
        ids = np.empty(n, np.int64)
        i = 0
        while True:
            i = table_insert_batch(self.tk, self.tid, self.meta, keys, np.int64(self.w), np.int64(i),
                                   np.int64(n), ids, np.int64(self.batch))
            if 2 * self.meta[1] > (1 << self.bits):
                self.grow()
            if i >= n:
                return ids

    def lookup(self, queries: np.ndarray) -> np.ndarray:
        queries = np.ascontiguousarray(queries, np.uint64)
        n = queries.shape[0] // self.w
        return table_lookup_many(self.tk, self.tid, self.meta, self.keys, np.int64(self.w), queries,
                                 np.int64(n), np.empty(n, np.int64))


def table_bytes(bits: int, w: int, ids: bool = True) -> int:
    """Memory of a table of 2**bits slots."""
    return (1 << bits) * (8 + (4 if w == 1 and ids else 0))
