"""The ratio of two runs' times: Hodges–Lehmann on log times, its exact rank interval, and the samples it needs."""

from __future__ import annotations

import functools
import itertools
import math
import random
import statistics

import pytest

from asyncbench.verdicts import ratio


@functools.cache
def _counts(m: int, n: int) -> tuple[int, ...]:
    """How many arrangements of m old and n new values have U = u, u = 0 … m·n: the counting recursion itself
    (the largest value is an old one, above all n new ones, or a new one)."""
    if m == 0 or n == 0:
        return (1,) + (0,) * (m * n)
    with_old, with_new = _counts(m - 1, n), _counts(m, n - 1)
    return tuple(
        (with_old[u - n] if 0 <= u - n < len(with_old) else 0) + (with_new[u] if u < len(with_new) else 0) for u in range(m * n + 1)
    )


def _enumerated(m: int, n: int) -> list[int]:
    """The same counts by listing every arrangement (small sizes only)."""
    counts = [0] * (m * n + 1)
    for old_places in itertools.combinations(range(m + n), m):
        olds = set(old_places)
        u = new_below = 0
        for place in range(m + n):
            if place in olds:
                u += new_below
            else:
                new_below += 1
        counts[u] += 1
    return counts


@pytest.mark.parametrize("m, n", [(1, 1), (1, 5), (3, 4), (4, 3), (5, 5), (2, 8), (6, 6), (7, 3)])
def test_the_null_distribution_is_the_counting_recursions_exactly(m, n):
    assert list(_counts(m, n)) == _enumerated(m, n)
    total = math.comb(m + n, m)
    expected = list(itertools.accumulate(c / total for c in _counts(m, n)))[: m * n // 2 + 1]
    assert ratio._null_cdf(m, n) == pytest.approx(expected, abs=1e-15)


def test_larger_sizes_match_the_recursion_too():
    counts = _counts(20, 13)
    total = math.comb(33, 13)
    expected = list(itertools.accumulate(c / total for c in counts))[: 20 * 13 // 2 + 1]
    assert ratio._null_cdf(20, 13) == pytest.approx(expected, rel=1e-12)
    assert ratio._null_cdf(13, 20) == ratio._null_cdf(20, 13)  # the same either way round


@pytest.mark.parametrize(
    "m, n, confidence, k",
    [
        (6, 6, 0.95, 6),  # the textbook table: two-sided 5%, reject at U ≤ 5 (P = 0.0206; P(U ≤ 6) = 0.0325)
        (10, 10, 0.95, 24),  # reject at U ≤ 23
        (6, 20, 0.99, 19),
        (3, 3, 0.95, None),  # P(U = 0) = 1/20 > 2.5%: no interval
    ],
)
def test_the_rank_is_the_largest_whose_tail_stays_within_half_the_error(m, n, confidence, k):
    assert ratio.rank(m, n, confidence) == k
    if k is not None:
        cdf = ratio._null_cdf(m, n)
        assert cdf[k - 1] <= (1 - confidence) / 2 < cdf[k]


def test_beyond_the_exact_sizes_the_normal_rank_is_never_above_the_exact_one():
    """Where they meet, the approximation gives an interval at least as wide: it does not overstate what is known."""
    for tail in (0.025, 5e-4, 5e-6):
        exact = sum(1 for p in ratio._null_cdf(50, 50) if p <= tail)
        assert ratio.rank(50, 51, 1 - 2 * tail) <= exact + 25  # one more sample adds about half a pair per tail...
        assert ratio.rank(51, 50, 1 - 2 * tail) >= exact - 25  # ...and the two agree within that


def test_six_against_twenty_samples_give_an_interval_at_a_gates_level():
    """Before, each median needed its own interval at half the error: nothing under 9 samples a side at 99.5%."""
    rng = random.Random(1)
    old = [2.42e-3 * math.exp(rng.gauss(0, 0.05)) for _ in range(20)]
    new = [7.53e-3 * math.exp(rng.gauss(0, 0.2)) for _ in range(6)]
    estimate, interval = ratio.hodges_lehmann(old, new, 0.995, independent=True)  # these 20 happen to look drifting
    differences = sorted(math.log(b) - math.log(a) for a in old for b in new)
    assert estimate == pytest.approx(math.exp(statistics.median(differences)))
    assert interval is not None
    k = ratio.rank(20, 6, 0.995)
    assert interval == pytest.approx((math.exp(differences[k - 1]), math.exp(differences[-k])))
    assert 1.1 < interval[0] < estimate < interval[1]


def test_a_scaled_copy_has_exactly_its_scale_as_the_estimate():
    values = [1.0 + i / 37 for i in range(30)]
    assert ratio.hodges_lehmann(values, values, 0.95)[0] == 1.0
    assert ratio.hodges_lehmann(values, [4 * v for v in values], 0.95)[0] == pytest.approx(4.0, rel=1e-12)


def test_rounds_that_drift_together_widen_the_interval():
    rng = random.Random(2)
    level, drifting = 0.0, []
    for _ in range(60):
        level = 0.9 * level + rng.gauss(0, 0.05)
        drifting.append(math.exp(level))
    other = [math.exp(rng.gauss(0, 0.05)) for _ in range(60)]
    assert ratio.inflation(drifting) > 2
    _, widened = ratio.hodges_lehmann(other, drifting, 0.95)
    _, plain = ratio.hodges_lehmann(other, drifting, 0.95, independent=True)
    assert widened[0] < plain[0]
    assert plain[1] < widened[1]


def test_times_that_are_not_positive_have_no_ratio():
    with pytest.raises(ValueError, match="no logarithm"):
        ratio.hodges_lehmann([1.0, 0.0], [1.0, 2.0], 0.95)


@pytest.mark.parametrize("baseline, confidence", [(6, 0.999), (20, 0.999), (6, 0.95), (1, 0.99)])
def test_samples_needed_is_the_fewest_with_an_interval(baseline, confidence):
    needed = ratio.samples_needed(baseline, confidence)
    assert ratio.rank(baseline, needed, confidence) is not None
    assert needed == 1 or ratio.rank(baseline, needed - 1, confidence) is None
