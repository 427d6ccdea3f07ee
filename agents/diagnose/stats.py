"""Source-level bootstrap intervals and paired effects, as the paper reports its diagnostics
(PAPERS.md section 5, D.1: "paired counts; bootstrap over source levels (10,000 draws) for
confidence intervals").

The units of an experiment (checkpoints, retries, sessions) are grouped by their SOURCE (the
level a checkpoint came from): units of one source are not independent, so a bootstrap draw
resamples whole sources with replacement and pools every unit of the drawn sources (a cluster
bootstrap). The statistic is the pooled mean of the units' values (a rate for 0/1 outcomes, a
mean effect for paired differences). The interval is the percentile interval of the draws.
Everything is seeded: the same inputs, seed and number of draws give the same interval, on any
machine (numpy's PCG64 generator through ``default_rng``).

    rate = cluster_bootstrap({"hard/1": [1, 0, 1], "hard/3": [0, 0]})       # Interval
    effect = paired_effect({"hard/1": [(0, 1), (1, 1)], "hard/3": [(0, 1)]})  # B - A per unit
    str(effect)                                 # '+0.67 [+0.50, +1.00]'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

DRAWS = 10_000          # the paper's number of bootstrap draws
SEED = 0                # the default seed of every interval the lab reports
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Count:
    """k of n units, as the paper's tables print them ("22/24")."""
    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class Interval:
    """A statistic on the whole sample with its bootstrap percentile interval.

    estimate    the statistic on the observed units (the pooled mean)
    low, high   the (1 - confidence) / 2 and (1 + confidence) / 2 percentiles of the draws
                (None when no draw had a defined value)
    draws       bootstrap draws made; ``undefined`` of them had no unit (every drawn source
                empty) and are left out of the percentiles
    sources, units  how many sources and units the sample holds
    """
    estimate: float | None
    low: float | None
    high: float | None
    draws: int
    seed: int
    confidence: float
    sources: int
    units: int
    undefined: int = 0
    signed: bool = False        # printed with a sign (an effect, not a rate)

    def __str__(self) -> str:
        def f(v):
            if v is None:
                return "n/a"
            return f"{v:+.2f}" if self.signed else f"{v:.2f}"
        return f"{f(self.estimate)} [{f(self.low)}, {f(self.high)}]"

    def as_dict(self) -> dict:
        return asdict(self)


def resample(n_sources: int, draws: int = DRAWS, seed: int = SEED) -> np.ndarray:
    """The drawn source indices, shape (draws, n_sources), int64: row b is bootstrap draw b,
    n_sources sources drawn with replacement. The same arguments give the same array, so
    intervals that share a seed share their draws (their comparisons are paired)."""
    if n_sources < 1:
        raise ValueError("a bootstrap needs at least one source")
    if draws < 1:
        raise ValueError("a bootstrap needs at least one draw")
    return np.random.default_rng(seed).integers(0, n_sources, size=(draws, n_sources))


def _values(groups: Mapping[Hashable, Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Per source (in sorted key order, so the draw of a source never depends on the mapping's
    insertion order): the sum and the count of its units' values, float64, shape (sources,)."""
    if not groups:
        raise ValueError("a bootstrap needs at least one source")
    keys = sorted(groups, key=repr)
    sums = np.array([float(np.sum(np.asarray(groups[k], dtype=np.float64))) for k in keys])
    counts = np.array([float(len(groups[k])) for k in keys])
    if not np.all(np.isfinite(sums)):
        raise ValueError("a unit's value is not a finite number")
    return sums, counts


def cluster_bootstrap(groups: Mapping[Hashable, Sequence[float]], *, draws: int = DRAWS, seed: int = SEED,
                      confidence: float = CONFIDENCE, signed: bool = False) -> Interval:
    """The pooled mean of the units' values with its source-level bootstrap interval.

    ``groups`` maps each source to the values of its units (0/1 outcomes, or differences). A
    source with no unit may be given: it is drawn like the others and adds nothing."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    sums, counts = _values(groups)
    n = int(counts.sum())
    estimate = float(sums.sum() / n) if n else None
    idx = resample(len(sums), draws, seed)
    s, c = sums[idx].sum(axis=1), counts[idx].sum(axis=1)
    ok = c > 0
    stats = s[ok] / c[ok]
    low = high = None
    if stats.size:
        tail = (1 - confidence) / 2
        low, high = (float(v) for v in np.quantile(stats, [tail, 1 - tail]))
    return Interval(estimate, low, high, draws, seed, confidence, len(sums), n, int((~ok).sum()), signed)


def paired_effect(pairs: Mapping[Hashable, Sequence[tuple[float, float]]], **kw) -> Interval:
    """The mean paired effect (second minus first, per unit: the A -> B effect of a matched
    block) with its source-level interval. ``pairs`` maps a source to its units' (a, b)."""
    diffs = {}
    for src, units in pairs.items():
        d = []
        for u in units:
            if len(u) != 2:
                raise ValueError(f"a paired unit of {src!r} is not an (a, b) pair: {u!r}")
            d.append(float(u[1]) - float(u[0]))
        diffs[src] = d
    return cluster_bootstrap(diffs, signed=True, **kw)


def statistic_bootstrap(groups: Mapping[Hashable, object], statistic: Callable[[list], float | None], *,
                        draws: int = DRAWS, seed: int = SEED, confidence: float = CONFIDENCE,
                        signed: bool = False) -> Interval:
    """Any statistic of the drawn sources (for contrasts that are not a pooled mean, e.g. the
    paper's dKxP interaction of four cells' LC): ``statistic(list of the drawn sources'
    values)`` returns a number, or None where undefined. Slower than cluster_bootstrap (a
    Python call per draw: about 10,000 calls), with the same draws for the same seed."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    keys = sorted(groups, key=repr)
    if not keys:
        raise ValueError("a bootstrap needs at least one source")
    values = [groups[k] for k in keys]
    estimate = statistic(values)
    out = []
    for row in resample(len(keys), draws, seed):
        v = statistic([values[i] for i in row])
        if v is not None:
            out.append(float(v))
    low = high = None
    if out:
        tail = (1 - confidence) / 2
        low, high = (float(v) for v in np.quantile(np.array(out), [tail, 1 - tail]))
    units = sum(len(v) if isinstance(v, Sequence) else 1 for v in values)
    return Interval(None if estimate is None else float(estimate), low, high, draws, seed, confidence, len(keys),
                    units, draws - len(out), signed)
