"""The visited-set table at scale (correctness, not speed), and how searches stop: a state
budget or the memory cap ends a search with ``unknown``, never an out-of-memory crash."""

from __future__ import annotations

import numpy as np
import pytest

from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers import certify, explore, solve
from longpuzzle.solvers.core import BFS, DFS, bytes_per_state, peak_bytes_per_state, run, search_kernels
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.template import KeyTable, key_hash, table_bytes, table_grow_in_place


def _reference_ids(keys: np.ndarray, w: int) -> np.ndarray:
    """First-occurrence index of every key, by numpy (no hashing)."""
    rows = keys.reshape(-1, w)
    _, first, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first[inv.ravel()]


@pytest.mark.parametrize("w", [1, 2, 5])
def test_table_matches_numpy_on_random_keys_with_duplicates(w):
    rng = np.random.default_rng(w)
    n = 300_000
    distinct = rng.integers(0, 2**63, (n // 3, w), dtype=np.int64).view(np.uint64)
    # duplicates, keys differing in one word only, and the all-zero key
    distinct[1] = 0
    distinct[2] = distinct[3]
    distinct[2, -1] ^= np.uint64(1)
    keys = distinct[rng.integers(0, distinct.shape[0], n)].ravel()
    t = KeyTable(w)
    ids = t.insert(keys)
    want = _reference_ids(keys, w)
    assert np.array_equal(ids, want)
    assert len(t) == np.unique(want).size
    # the load factor stays at most 1/2 and the memory is exactly the slots
    assert 2 * len(t) <= (1 << t.bits)
    assert t.nbytes == table_bytes(t.bits, w)
    # lookups: present keys find their first id, absent ones -1
    probe = rng.integers(0, 2**63, (1000, w), dtype=np.int64).view(np.uint64).ravel()
    got = t.lookup(np.concatenate([keys[: 1000 * w], probe]))
    assert np.array_equal(got[:1000], want[:1000])
    assert (got[1000:] == -1).all()
    if w == 1:
        # membership only (no id array): new keys keep their index, present ones give n
        m = KeyTable(1, ids=False)
        ids2 = m.insert(keys)
        first = want == np.arange(n)
        assert np.array_equal(ids2[first], np.arange(n)[first]) and (ids2[~first] == n).all()
        assert len(m) == len(t) and m.nbytes == table_bytes(m.bits, 1, ids=False) < t.nbytes


def _key_with_hash(h: int) -> int:
    """The one-word key whose hash (splitmix64's finaliser, a bijection) is h."""
    def inv_shift_xor(x, s):
        out = x
        for _ in range(64 // s + 1):
            out = x ^ (out >> s)
        return out & (2**64 - 1)
    m1, m2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
    x = inv_shift_xor(h, 31)
    x = (x * pow(m2, -1, 2**64)) % 2**64
    x = inv_shift_xor(x, 27)
    x = (x * pow(m1, -1, 2**64)) % 2**64
    x = inv_shift_xor(x, 30)
    return x ^ 0x9E3779B97F4A7C15


def test_table_one_word_key_whose_hash_is_zero():
    """The one key that the bijective one-word hash maps to 0 (the empty marker) is kept
    apart and still found."""
    k0 = _key_with_hash(0)
    assert int(key_hash(np.array([k0], np.uint64), 0, 1)) == 0
    keys = np.array([5, k0, 7, k0, 5], np.uint64)
    t = KeyTable(1, bits=4)
    assert list(t.insert(keys)) == [0, 1, 2, 1, 0]
    assert len(t) == 3
    assert list(t.lookup(np.array([k0, 6], np.uint64))) == [1, -1]


def test_table_on_keys_of_a_real_search():
    """Keys stored by a real breadth-first search are distinct, and re-inserting them in a
    fresh table (also shuffled, also doubled) gives back exactly their ids."""
    level = builtin_catalog().level("rush_hour/medium/5")
    raw = explore(level)
    w = raw.words
    keys = raw.keys[: raw.n * w]
    t = KeyTable(w)
    assert np.array_equal(t.insert(keys), np.arange(raw.n))
    twice = np.concatenate([keys, keys])
    assert np.array_equal(KeyTable(w).insert(twice), np.concatenate([np.arange(raw.n)] * 2))
    perm = np.random.default_rng(0).permutation(raw.n)
    shuffled = keys.reshape(-1, w)[perm].ravel()
    t2 = KeyTable(w)
    assert np.array_equal(t2.insert(shuffled), np.arange(raw.n))
    assert np.array_equal(t2.lookup(keys), np.argsort(perm))


def _big_nut_level():
    p = get_puzzle("nut_and_bolt")
    rec = dict(builtin_catalog().level("nut_and_bolt/extreme/3").data)
    rec["bolts"] = list(rec["bolts"]) + [{"nuts": []}]
    return p.build_level(rec, difficulty="extreme", number=99, where="test")


@pytest.mark.parametrize("mode", [BFS, DFS])
def test_budget_stops_with_unknown(mode):
    level = _big_nut_level()
    raw = run(level, level.initial, mode, budget=50_000, stop_at_goal=False)
    assert raw.status == -1 and raw.n == 50_000 and raw.stopped == "budget"
    r = solve(level, method="bfs", budget=30_000)
    assert r.status == "unknown" and r.states == 30_000 and not r.moves and not r.note
    c = certify(level, budget=20_000)
    assert c.status in ("unknown", "solvable")
    if c.status == "unknown":
        assert c.states == 20_000


def test_memory_cap_stops_with_a_clear_message():
    level = _big_nut_level()
    cap = 4_000_000                     # bytes
    raw = run(level, level.initial, BFS, budget=10**9, stop_at_goal=False, max_bytes=cap)
    assert raw.status == -1 and raw.stopped == "memory"
    assert raw.n == int(cap / peak_bytes_per_state(level))
    assert raw.memory_bytes <= cap
    from longpuzzle.solvers.core import from_raw
    res = from_raw(level, level.initial, raw, optimal=True, method="bfs")
    assert res.status == "unknown" and "memory cap" in res.note and "memory cap" in res.as_dict()["note"]


def test_memory_report_is_bounded():
    level = builtin_catalog().level("rush_hour/medium/5")
    raw = explore(level)
    assert raw.status == 0 and raw.n == 838_753
    # measured bytes a state: dense arrays (with doubling slack) + table at load 1/4..1/2
    per_state = raw.memory_bytes / raw.n
    assert per_state <= peak_bytes_per_state(level)
    assert bytes_per_state(level) <= peak_bytes_per_state(level)
    assert raw.table_bits <= (4 * raw.n).bit_length()


def test_reverse_move_precheck_and_batching_keep_results():
    """The parent pre-check and batched probing change no count: BFS layer sizes of a
    Rush Hour level equal a plain Python BFS over the rules API."""
    from collections import deque
    level = builtin_catalog().level("rush_hour/hard/7")
    p = get_puzzle("rush_hour")
    seen = {level.initial.tobytes()}
    q = deque([level.initial])
    while q:
        s = q.popleft()
        for a in p.legal_moves(level, s):
            t, _ = p.step(level, s, a)
            if t.tobytes() not in seen:
                seen.add(t.tobytes())
                q.append(t)
    assert explore(level).n == len(seen)


@pytest.mark.parametrize("lid", ["rush_hour/medium/5", "maze_paint/hard/8", "nut_and_bolt/hard/1"])
def test_batched_search_and_in_place_table_growth_store_the_same_states(lid, monkeypatch):
    """Breadth-first search probes successors of many states in one batch and grows its table
    in place once it is big: the stored states (keys, parents, actions, in order) are exactly
    those of a search that expands one state at a time and rehashes into new arrays."""
    from longpuzzle.solvers import core
    level = builtin_catalog().level(lid)
    a = explore(level)
    keep = lambda r: (r.n, r.keys[:r.n * r.words].copy(), r.parent[:r.n].copy(), r.action[:r.n].copy())  # noqa: E731
    ka = keep(a)
    goals = [run(level, level.initial, BFS).goal]              # the goal found first (stop at goal)
    monkeypatch.setattr(core, "BATCH_SUCCESSORS", 1)
    monkeypatch.setattr(core, "BATCH_PARENTS", 1)
    monkeypatch.setattr(core, "RESERVE_TABLE_BITS", 10 ** 3)      # never reserve: rehash every time
    kb = keep(explore(level))
    goals.append(run(level, level.initial, BFS).goal)
    monkeypatch.setattr(core, "BATCH_SUCCESSORS", 1000)
    monkeypatch.setattr(core, "BATCH_PARENTS", 1000)
    monkeypatch.setattr(core, "RESERVE_TABLE_BITS", 13)            # in-place from 2**13 slots on
    c = explore(level)
    kc = keep(c)
    goals.append(run(level, level.initial, BFS).goal)
    assert a.n > 10_000 and c.table_bits > 14
    for x, y, z in zip(ka, kb, kc):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert goals[0] > 0 and goals[0] == goals[1] == goals[2]


def test_knowledge_successors_match_generic_expansion():
    """The knowledge kernels' successors (incremental Nut and Bolt keys, Rush Hour key
    arithmetic, Maze Paint bitboards) equal expand + pack + is_solved (+ heuristic) on states
    along random walks; unpack(pack(s)) == s where keys are not canonical."""
    import random
    for lid in ["nut_and_bolt/nightmare/1", "nut_and_bolt/hard/2", "rush_hour/medium/5", "rush_hour/hard/3",
                "maze_paint/hard/8", "maze_paint/medium/4", "maze_paint/hard/7"]:
        level = builtin_catalog().level(lid)
        p = get_puzzle(level.game)
        k = knowledge(level.game)
        mod = search_kernels(level.game)
        kern = k.kernels
        for aux in ([k.aux(level), k.aux(level, prune=True)] if level.game == "nut_and_bolt" else [k.aux(level)]):
            w = k.words(level)
            rng = random.Random(lid)
            s = level.initial.copy()
            na, L = level.n_actions, s.shape[0]
            for _ in range(40):
                key = np.zeros(w, np.uint64)
                mod.pack_one(level.lv, aux, s, key)
                cs = s.copy()
                mod.unpack_one(level.lv, aux, key, cs)
                if level.game == "maze_paint":
                    assert np.array_equal(cs, s), lid
                succ = np.zeros((na, L), s.dtype)
                acts = np.zeros(na, np.int64)
                want = []
                for i in range(mod.expand(level.lv, aux, cs, succ, acts)):
                    kk = np.zeros(w, np.uint64)
                    mod.pack_one(level.lv, aux, succ[i], kk)
                    hv = int(kern.heuristic(level.lv, aux, succ[i])) if hasattr(kern, "heuristic") else 0
                    want.append((tuple(kk), int(acts[i]), bool(p.is_solved(level, succ[i])), hv))
                sk = np.zeros((na, w), np.uint64)
                a2 = np.zeros(na, np.int64)
                sv = np.zeros(na, np.bool_)
                hv = np.zeros(na, np.int64)
                n2 = kern.successors(level.lv, aux, cs, key, 0, succ, sk, a2, sv, hv, True, 0)
                got = [(tuple(sk[i]), int(a2[i]), bool(sv[i]), int(hv[i]) if hasattr(kern, "heuristic") else 0)
                       for i in range(n2)]
                assert got == want, lid
                moves = p.legal_moves(level, s)
                if not moves:
                    break
                s, _ = p.step(level, s, rng.choice(moves))


@pytest.mark.parametrize("ids", [True, False])
def test_table_grows_in_place_with_clusters_at_both_ends(ids):
    """In-place doubling (the table's second half reserved) keeps every key findable with its
    id, also for the entries it must set aside: homes displaced past their own slot (long
    clusters at the start) and probes that wrap round the end. Keys are chosen by their hash
    (one-word keys: the hash is a bijection) to make such clusters."""
    rng = np.random.default_rng(7)
    top = lambda b, v: (v << (64 - b)) | int(rng.integers(0, 1 << 40))  # noqa: E731  hash with top bits v
    hashes = set()
    for b in range(12, 17):
        for v in [0, 1, 2, (1 << b) - 1, (1 << b) - 2, (1 << b) - 3]:
            hashes.update(top(b, v) for _ in range(40))        # 40 keys a home: long clusters
    hashes.update(int(x) for x in rng.integers(1, 2**63, 20_000))
    hashes.discard(0)
    keys = np.array([_key_with_hash(h) for h in sorted(hashes)], np.uint64)
    keys = keys[rng.permutation(keys.size)]
    keys = np.concatenate([keys, keys[:500]])                   # and duplicates
    ref = KeyTable(1, ids=ids)
    want = ref.insert(keys)
    t = KeyTable(1, ids=ids, reserve_bits=17)
    got = t.insert(keys)
    assert t._tk.shape[0] == 1 << 17 and t.tk.base is t._tk     # grew inside the reserve
    assert np.array_equal(got, want) and len(t) == len(ref) == keys.size - 500
    assert np.array_equal(t.lookup(keys), ref.lookup(keys))
    absent = rng.integers(0, 2**63, 2000, dtype=np.int64).view(np.uint64)
    absent = absent[~np.isin(absent, keys)]
    assert (t.lookup(absent) == -1).all()
    # the set-aside path really ran: a table of 2**b slots with entries at both ends
    tk = np.zeros(1 << 9, np.uint64)
    tid = np.zeros(1 << 9 if ids else 1, np.int32)
    meta = np.array([8, 0, 0, 0], np.int64)
    entries = [(np.uint64((255 << 56) | (j + 1)), j) for j in range(6)] + [(np.uint64((0 << 56) | (j + 1)), 10 + j)
                                                                         for j in range(5)]
    for h, i in entries:                                      # linear probing in the 2**8 table
        p = int(h) >> 56
        while tk[p] != 0:
            p = (p + 1) % 256
        tk[p], meta[1] = h, meta[1] + 1
        if ids:
            tid[p] = i
    assert table_grow_in_place(tk, tid, meta) > 0 and meta[0] == 9
    for h, i in entries:                                      # every entry at or after its new home, no gap
        p = int(h) >> 55
        while tk[p] != h:
            assert tk[p] != 0
            p = (p + 1) % 512
        if ids:
            assert tid[p] == i
    assert np.count_nonzero(tk) == len(entries)


def test_prefaulting_another_core_changes_no_state(monkeypatch):
    """A large search backs its next pages from another thread (madvise MADV_POPULATE_WRITE:
    pages made present, no byte changed). With it on (from small sizes, forced here) and
    off, the stored states are the same; populating a range of filled memory keeps its
    contents."""
    from longpuzzle.solvers import core
    if not core._Prefault.usable():
        pytest.skip("needs Linux with two usable cores")
    level = builtin_catalog().level("rush_hour/medium/5")
    monkeypatch.setattr(core, "RESERVE_AT", 1 << 12)
    monkeypatch.setattr(core, "RESERVE_TABLE_BITS", 13)
    monkeypatch.setattr(core._Prefault, "AHEAD", 1 << 16)      # many small steps behind the search
    calls = []
    populate = core._Prefault._populate

    def counting(self, a, lo, hi):
        calls.append(hi - lo)
        populate(self, a, lo, hi)
    monkeypatch.setattr(core._Prefault, "_populate", counting)
    on = explore(level, budget=2_000_000)
    assert calls and not core._Prefault._broken
    monkeypatch.setattr(core._Prefault, "usable", classmethod(lambda cls: False))
    off = explore(level, budget=2_000_000)
    assert on.n == off.n == 838_753
    for x, y in ((on.keys, off.keys), (on.parent, off.parent), (on.action, off.action)):
        assert np.array_equal(x[:on.n * (x.shape[0] // on.parent.shape[0])], y[:off.n * (y.shape[0] // off.parent.shape[0])])
    # populate over memory already written keeps every byte
    a = np.arange(1 << 20, dtype=np.int64)
    pf = object.__new__(core._Prefault)
    import threading
    pf._stop = threading.Event()
    populate(pf, a, 0, a.shape[0])
    assert np.array_equal(a, np.arange(1 << 20, dtype=np.int64))
