"""A bounded cache that forgets what was used longest ago: the memo of the harness, the agents
and the media code (plans, certificates, PNGs of frames, stored frames, action names).

    cache = LRU(64)                 # at most 64 entries
    hit = cache.get(key)            # None (or ``default``) when absent; a hit counts as a use
    cache.put(key, value)           # returns value; the oldest entries go beyond the bound

``LRU(n, threadsafe=True)`` takes a lock around each call, for caches shared by the threads of
a process (a lookup and a put are each atomic; two threads missing the same key both compute
it, as before, and the later put wins). functools.lru_cache fits where the cached thing is a
function of hashable arguments; this is for the rest (keys made from content, values that are
computed in several places, caches cleared or sized per object).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import nullcontext


class LRU:
    __slots__ = ("maxsize", "_d", "_lock")

    def __init__(self, maxsize: int, threadsafe: bool = False):
        if maxsize < 1:
            raise ValueError(f"an LRU cache holds at least 1 entry, not {maxsize}")
        self.maxsize = maxsize
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock() if threadsafe else nullcontext()

    def get(self, key, default=None):
        """The value under ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            d = self._d
            if key not in d:
                return default
            d.move_to_end(key)
            return d[key]

    def put(self, key, value):
        """Keep ``value`` under ``key`` as the most recently used, dropping the least
        recently used entries beyond ``maxsize``; returns ``value``."""
        with self._lock:
            d = self._d
            d[key] = value
            d.move_to_end(key)
            while len(d) > self.maxsize:
                d.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __contains__(self, key) -> bool:
        return key in self._d

    def __len__(self) -> int:
        return len(self._d)

    def keys(self) -> list:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._d)
