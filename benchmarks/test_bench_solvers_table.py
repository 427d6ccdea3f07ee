"""The visited-set table at scale: inserts and lookups of 10^7 packed keys (random, and
keys stored by a real search), in keys per second, with the table's bytes per stored key.

Run:  python -m pytest benchmarks/test_bench_solvers_table.py --benchmark-enable
Goal (the issue): at least 5,000,000 inserts per second at 10^7 keys and more, memory
bounded (load factor at most 1/2: 2..4 slots a key, 8 bytes a slot, +4 for one-word keys).
``extra_info["ops"]`` = keys per round, so the summary prints keys per second.
"""

import numpy as np
import pytest

from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.solvers.core import explore
from longpuzzle.solvers.template import KeyTable

GOAL_INSERTS_PER_S = 5_000_000


def _record(benchmark, n, table):
    benchmark.group = "table"
    benchmark.extra_info["ops"] = n
    benchmark.extra_info["table_bytes_per_key"] = round(table.nbytes / max(len(table), 1), 2)
    benchmark.extra_info["table_MB_per_million_keys"] = round(table.nbytes / max(len(table), 1), 2)
    benchmark.extra_info["goal_per_s"] = GOAL_INSERTS_PER_S
    if benchmark.stats and benchmark.stats.stats.median:
        benchmark.extra_info["per_s"] = round(n / benchmark.stats.stats.median)


@pytest.mark.parametrize("w,ids", [(1, False), (1, True), (2, True)])
def test_insert_10m_random_keys(benchmark, w, ids):
    """ids=False: membership only (one-word keys, as breadth- and depth-first searches)."""
    n = 10_000_000
    keys = np.random.default_rng(w).integers(0, 2**63, n * w, dtype=np.int64).view(np.uint64)
    KeyTable(w, bits=4, ids=ids).insert(keys[: 1000 * w])     # load the compiled code (insert and grow)
    out = {}

    def go():
        t = KeyTable(w, ids=ids)
        t.insert(keys)
        out["t"] = t

    benchmark.pedantic(go, rounds=1, iterations=1)
    assert len(out["t"]) > 0.99 * n
    _record(benchmark, n, out["t"])


def test_lookup_10m_random_keys(benchmark):
    n = 10_000_000
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64)
    t = KeyTable(1)
    t.insert(keys)
    t.lookup(keys[:1000])
    queries = keys[rng.permutation(n)]
    got = benchmark.pedantic(t.lookup, args=(queries,), rounds=1, iterations=1)
    assert (got >= 0).all()
    _record(benchmark, n, t)


def test_insert_keys_of_a_real_search(benchmark):
    """Keys stored by a whole Rush Hour search (838,753 states), inserted 12 times over in
    shuffled order (10^7 inserts, of which 9 in 10 find their key present)."""
    level = builtin_catalog().level("rush_hour/medium/5")
    raw = explore(level)
    w = raw.words
    keys = raw.keys[: raw.n * w].reshape(-1, w)
    rng = np.random.default_rng(3)
    stream = np.concatenate([keys[rng.permutation(raw.n)] for _ in range(12)]).ravel()
    n = stream.shape[0] // w
    KeyTable(w, bits=4).insert(stream[: 1000 * w])
    out = {}

    def go():
        t = KeyTable(w)
        t.insert(stream)
        out["t"] = t

    benchmark.pedantic(go, rounds=1, iterations=1)
    assert len(out["t"]) == raw.n
    _record(benchmark, n, out["t"])
