import math
import statistics

import pytest

from asyncbench import stats


def test_summarize_matches_statistics_module():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 100.0]
    s = stats.summarize(values)
    assert s.median == statistics.median(values)
    assert s.min == 1.0 and s.max == 100.0 and s.n == 6
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    assert s.iqr == pytest.approx(q3 - q1)


def test_median_ci_contains_median_and_narrows_with_more_samples():
    small = [float(i) for i in range(1, 11)]
    large = [float(i % 10 + 1) for i in range(1000)]
    low_s, high_s = stats.median_ci(small)
    low_l, high_l = stats.median_ci(large)
    assert low_s <= statistics.median(small) <= high_s
    assert low_l <= statistics.median(large) <= high_l
    assert (high_l - low_l) < (high_s - low_s)


def test_median_ci_of_few_samples_is_the_range():
    assert stats.median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)


def test_median_ci_coverage_is_about_95_percent():
    import random

    rng = random.Random(1)
    hits = 0
    trials = 400
    for _ in range(trials):
        sample = [rng.expovariate(1.0) for _ in range(41)]
        low, high = stats.median_ci(sample)
        hits += low <= math.log(2) <= high
    assert 0.90 <= hits / trials <= 0.995


def test_relative_half_width_is_zero_for_constant_and_inf_for_nonpositive():
    assert stats.relative_ci_half_width([2.0] * 10) == 0.0
    assert stats.relative_ci_half_width([0.0] * 10) == math.inf
