"""The visited-set table at scale (correctness, not speed), and how searches stop: a state
budget or the memory cap ends a search with ``unknown``, never an out-of-memory crash."""

from __future__ import annotations

import numpy as np
import pytest

from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers import certify, explore, solve
from longpuzzle.solvers.core import BFS, DFS, bytes_per_state, peak_bytes_per_state, run, search_kernels
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.template import KeyTable, table_bytes


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


def test_table_one_word_key_whose_hash_is_zero():
    """The one key that the bijective one-word hash maps to 0 (the empty marker) is kept
    apart and still found."""
    # invert splitmix64's finaliser at 0 -> the key k with hash(k) == 0
    def inv_shift_xor(x, s):
        out = x
        for _ in range(64 // s + 1):
            out = x ^ (out >> s)
        return out & (2**64 - 1)
    m1, m2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
    x = inv_shift_xor(0, 31)
    x = (x * pow(m2, -1, 2**64)) % 2**64
    x = inv_shift_xor(x, 27)
    x = (x * pow(m1, -1, 2**64)) % 2**64
    x = inv_shift_xor(x, 30)
    k0 = x ^ 0x9E3779B97F4A7C15
    keys = np.array([5, k0, 7, k0, 5], np.uint64)
    t = KeyTable(1, bits=4)
    assert list(t.insert(keys)) == [0, 1, 2, 1, 0]
    assert len(t) == 3
    assert list(t.lookup(np.array([k0, 6], np.uint64))) == [1, -1]


def test_table_on_keys_of_a_real_search():
    """Keys stored by a real breadth-first search are distinct, and re-inserting them in a
    fresh table (also shuffled, also doubled) gives back exactly their ids."""
    level = catalog().level("rush_hour/medium/5")
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
    rec = dict(catalog().level("nut_and_bolt/extreme/3").data)
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
    level = catalog().level("rush_hour/medium/5")
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
    level = catalog().level("rush_hour/hard/7")
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


def test_knowledge_successors_match_generic_expansion():
    """The knowledge kernels' successors (incremental Nut and Bolt keys, Rush Hour key
    arithmetic, Maze Paint bitboards) equal expand + pack + is_solved (+ heuristic) on states
    along random walks; unpack(pack(s)) == s where keys are not canonical."""
    import random
    for lid in ["nut_and_bolt/nightmare/1", "nut_and_bolt/hard/2", "rush_hour/medium/5", "rush_hour/hard/3",
                "maze_paint/hard/8", "maze_paint/medium/4", "maze_paint/hard/7"]:
        level = catalog().level(lid)
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
                n2 = kern.successors(level.lv, aux, cs, key, 0, succ, sk, a2, sv, hv, True)
                got = [(tuple(sk[i]), int(a2[i]), bool(sv[i]), int(hv[i]) if hasattr(kern, "heuristic") else 0)
                       for i in range(n2)]
                assert got == want, lid
                moves = p.legal_moves(level, s)
                if not moves:
                    break
                s, _ = p.step(level, s, rng.choice(moves))
