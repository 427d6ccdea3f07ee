"""engine/lru.py: the bounded cache the agents' memos share."""

import threading

import pytest

from longpuzzle.engine.lru import LRU


def test_it_forgets_the_least_recently_used_beyond_its_bound():
    c = LRU(3)
    for k in "abc":
        c.put(k, k.upper())
    assert c.get("a") == "A"              # a use: "b" is now the oldest
    c.put("d", "D")
    assert c.keys() == ["c", "a", "d"] and "b" not in c and c.get("b") is None
    c.put("c", "C2")                      # putting again is a use, and replaces the value
    c.put("e", "E")
    assert c.keys() == ["d", "c", "e"] and c.get("c") == "C2" and len(c) == 3


def test_a_stored_none_is_told_from_a_miss_by_the_default():
    c, missing = LRU(2), object()
    c.put("k", None)
    assert c.get("k", missing) is None and c.get("x", missing) is missing
    c.clear()
    assert len(c) == 0 and c.get("k", missing) is missing


def test_the_bound_is_at_least_one():
    with pytest.raises(ValueError, match="at least 1"):
        LRU(0)


def test_a_threadsafe_cache_keeps_its_bound_under_threads():
    c = LRU(50, threadsafe=True)

    def work(t):
        for i in range(2000):
            c.put((t, i % 70), i)
            c.get((t, (i * 7) % 70))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(c) == 50 and len(set(c.keys())) == 50
