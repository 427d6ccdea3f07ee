"""The lab's intervals (agents/diagnose/stats.py): seeded, source-level, paired."""

from __future__ import annotations

import numpy as np
import pytest

from longpuzzle.agents.diagnose.stats import (
    Count, cluster_bootstrap, paired_effect, resample, statistic_bootstrap,
)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    groups = {"a": [1, 0, 1, 1], "b": [0, 0], "c": [1, 1, 0], "d": [0]}
    one, two = cluster_bootstrap(groups, seed=7), cluster_bootstrap(groups, seed=7)
    assert one == two and one.draws == 10_000
    assert one.estimate == pytest.approx(5 / 10)
    other = cluster_bootstrap(groups, seed=8)
    assert (other.low, other.high) != (one.low, one.high) or other.seed != one.seed
    assert 0 <= one.low <= one.estimate <= one.high <= 1


def test_resampling_is_by_source_not_by_unit():
    # one source holds every success: a unit bootstrap would give a narrow interval around 0.5;
    # drawing whole sources, some draws hold no success at all and some only successes
    groups = {"a": [1] * 50, "b": [0] * 50}
    iv = cluster_bootstrap(groups, draws=2000, seed=1)
    assert iv.low == 0.0 and iv.high == 1.0 and iv.sources == 2 and iv.units == 100


def test_the_draws_do_not_depend_on_the_order_the_sources_are_given_in():
    a = {"x": [1, 0], "y": [1], "z": [0, 0, 1]}
    b = dict(reversed(list(a.items())))
    assert cluster_bootstrap(a, seed=3) == cluster_bootstrap(b, seed=3)


def test_a_paired_effect_is_second_minus_first_per_unit():
    pairs = {"hard/1": [(0, 1), (1, 1)], "hard/3": [(0, 1)], "hard/5": [(1, 0)]}
    iv = paired_effect(pairs, seed=0)
    assert iv.estimate == pytest.approx((1 + 0 + 1 - 1) / 4)
    assert iv.signed and str(iv).startswith("+0.25 [")
    with pytest.raises(ValueError):
        paired_effect({"s": [(1, 2, 3)]})


def test_percentiles_match_a_direct_computation():
    groups = {"a": [1, 0], "b": [1, 1, 1], "c": [0]}
    iv = cluster_bootstrap(groups, draws=500, seed=5)
    keys = sorted(groups, key=repr)
    idx = resample(3, 500, 5)
    stats = []
    for row in idx:
        units = [v for i in row for v in groups[keys[i]]]
        stats.append(sum(units) / len(units))
    lo, hi = np.quantile(stats, [0.025, 0.975])
    assert (iv.low, iv.high) == pytest.approx((lo, hi))


def test_a_general_statistic_shares_the_draws_of_the_same_seed():
    groups = {"a": [1, 0], "b": [1, 1, 1], "c": [0]}

    def pooled(vals):
        units = [u for v in vals for u in v]
        return sum(units) / len(units) if units else None

    assert statistic_bootstrap(groups, pooled, draws=300, seed=2) == cluster_bootstrap(groups, draws=300, seed=2)


def test_empty_or_malformed_input_is_refused():
    with pytest.raises(ValueError):
        cluster_bootstrap({})
    with pytest.raises(ValueError):
        cluster_bootstrap({"a": [float("nan")]})
    with pytest.raises(ValueError):
        cluster_bootstrap({"a": [1]}, confidence=1.5)
    iv = cluster_bootstrap({"a": [], "b": [1]}, draws=200, seed=0)
    assert iv.undefined > 0 and iv.estimate == 1.0


def test_counts_print_as_the_papers_tables_do():
    assert str(Count(22, 24)) == "22/24" and Count(0, 0).rate is None
