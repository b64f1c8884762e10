"""Pure functions over float sequences: median, IQR, and the CI of the median.

The CI of the median is distribution-free: it is a pair of order statistics X(k) ≤ median ≤ X(n+1−k) whose
coverage follows exactly from the binomial distribution Bin(n, ½), so it holds for the skewed, outlier-prone
distributions timings have. With fewer than 6 values no pair of order statistics covers the median with 95%
probability ([min, max] of 5 values covers 94%, of 3 values 75%): then there is no interval, and nothing pretends
otherwise.

The same interval serves every derived metric: variants are measured in interleaved rounds, so a metric computed
from each round's clocks (a speedup, an overlap efficiency) is a sample of paired values, and the interval of its
median needs no assumption about their distribution either.

It does assume independent rounds, and timings drift: a slow spell covers several rounds in a row, and the plain
interval then covers the median less often than it says. So every interval is widened by the dependence the rounds
show: the count of values below the median, which the order-statistic interval rests on, has its variance inflated
by 1 + 2·Σ_k ρ_I(k), where ρ_I is the autocorrelation of the rounds' sides of the median (above/below). ρ_I(1) is
measured (`lag1_autocorrelation`, rank-based, so one outlier does not move it); the later lags follow a Gaussian
AR(1) with that lag-1 value, for which ρ_I(k) = (2/π)·arcsin(ρ^k) and ρ = sin(π/2·ρ_I(1)). The interval is then
the order-statistic pair of the effective sample size n/inflation, scaled back to n. Independent rounds keep
(nearly) the exact interval, and so do runs too short to tell (MIN_ROUNDS_FOR_DEPENDENCE).

Figures (coverage of the exact and the widened interval under drift; benchmarks/ci_coverage.py,
benchmarks/interval_validity.py): docs/measured.md, section "Statistics".
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
import statistics
from typing import Sequence

from asyncbench.results.model import Stats

CONFIDENCE = 0.95


# The estimate of ρ_I(1) from n rounds is biased low by about 1/n: added back, so short runs are not overconfident.
SMALL_SAMPLE_BIAS = 1.0
# Beyond this the inflation (1+ρ)/(1−ρ) explodes on a noisy estimate; such rounds are one slow trend, not a sample.
MAX_DEPENDENCE = 0.95
# Under this many rounds ρ_I(1) is too noisy to act on (its spread is about 1/√n: ±0.4 at 6 rounds), and widening
# by it would remove the interval of half of all short runs at random: there the exact interval is kept.
MIN_ROUNDS_FOR_DEPENDENCE = 20
# Enough lags for the AR(1) tail: ρ^k below this adds nothing.
_NEGLIGIBLE = 1e-6
_LN2 = math.log(2)


@functools.lru_cache(maxsize=4096)
def order_rank(n: int, confidence: float = CONFIDENCE) -> int | None:
    """The k for which [X(k), X(n+1−k)] covers the median with at least `confidence`; None if no k does.

    The interval misses the median when fewer than k values fall below it
    (or above it): probability 2·P(B ≤ k−1) for B ~ Bin(n, ½). The largest k
    that keeps that under 1 − confidence gives the narrowest such interval.
    """
    tail = (1 - confidence) / 2
    below = 0.0  # P(B ≤ k), each k in turn: ranks 1 .. k keep P(B ≤ rank − 1) within the tail
    for k in range(n // 2):
        below += _half_binomial_pmf(k, n)
        if below > tail:
            return k or None
    return n // 2 or None


def _half_binomial_pmf(j: int, n: int) -> float:
    """P(B = j) for B ~ Bin(n, ½), through log-gamma: no scipy import (1.35 s with torch loaded, paid by the run's
    process, each worker and each comm_overlap rank), and no overflow at large n. It agrees with scipy.stats.binom
    to 2e-13, and order_rank with scipy's for every n up to 5,000 at 50-99% (tests/results/test_stats.py checks a part)."""
    return math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) - n * _LN2)


def coverage(n: int, k: int) -> float:
    """The exact probability that [X(k), X(n+1−k)] of n values covers their median."""
    return 1 - 2 * math.fsum(_half_binomial_pmf(j, n) for j in range(k))


def lag1_autocorrelation(values: Sequence[float], median: float | None = None) -> float | None:
    """The lag-1 autocorrelation of which side of the median each value lies on (+1 above, −1 below; ties left
    out): 0 for independent rounds, near 1 when rounds come in long runs on one side. None under 3 values.
    `median`: the values' median, when the caller has it (the timed loop asks after every round)."""
    med = statistics.median(values) if median is None else median
    above = [v > med for v in values if v != med]
    pairs = len(above) - 1
    if pairs < 2:
        return None
    same: int = sum(map(operator.eq, above, above[1:]))  # each pair's sign product is +1 when the same, −1 when not
    return (2 * same - pairs) / pairs


@functools.lru_cache(maxsize=4096)
def _inflation(rho_sign: float) -> float:
    """1 + 2·Σ_k ρ_I(k) for a Gaussian AR(1) whose sign series has lag-1 autocorrelation `rho_sign`."""
    rho = min(math.sin(math.pi / 2 * rho_sign), MAX_DEPENDENCE)
    total, k = 0.0, 1
    while rho**k > _NEGLIGIBLE:
        total += 2 / math.pi * math.asin(rho**k)
        k += 1
    return 1 + 2 * total


def dependence_inflation(values: Sequence[float], median: float | None = None) -> float:
    """How much the rounds' dependence inflates the variance of the median's rank count (1: none seen)."""
    rho = lag1_autocorrelation(values, median)
    if rho is None:
        return 1.0
    rho += SMALL_SAMPLE_BIAS / len(values)
    return _inflation(round(rho, 3)) if rho > 0 else 1.0


def independent_rounds(values: Sequence[float], median: float | None = None) -> int:
    """How many independent rounds `values` count as for the median's interval: n over the dependence inflation (n
    itself under MIN_ROUNDS_FOR_DEPENDENCE, where the dependence is not acted on), at least 1."""
    n = len(values)
    inflation = 1.0 if n < MIN_ROUNDS_FOR_DEPENDENCE else dependence_inflation(values, median)
    return max(int(n / inflation), 1)


def _median_and_ci(values: Sequence[float], confidence: float, independent: bool) -> tuple[float, tuple[float, float] | None]:
    """The median and its interval from one sort of the values."""
    n = len(values)
    if n == 0:
        raise ValueError("median_ci of no values")
    ordered = sorted(values)
    half = n // 2
    med = ordered[half] if n % 2 else (ordered[half - 1] + ordered[half]) / 2
    effective = n if independent else independent_rounds(values, med)
    k = order_rank(effective, confidence)
    if k is None:
        return med, None
    if effective < n:
        k = max(1, math.floor(k * n / effective))
    return med, (ordered[k - 1], ordered[n - k])


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE, independent: bool = False) -> tuple[float, float] | None:
    """The distribution-free CI of the median, widened for dependent rounds (unless the values are known to be
    `independent`: then the exact interval); None when there are too few values for `confidence`."""
    return _median_and_ci(values, confidence, independent)[1]


def is_median_interval_of(low: float, high: float, values: Sequence[float], tolerance: float) -> bool:
    """Whether [low, high] (within `tolerance`) is an interval of the median that `values` can give: their k-th least
    and k-th greatest, for a k no greater than the exact 95% interval's (median_ci widens it for dependent rounds by
    taking a smaller k; version 1 of the results wrote [min, max] where there were too few for one: k = 1).
    Not median_ci's own interval: that one rests on the order the rounds ran in and on the widening's constants,
    which an older file may not share; an interval narrower than its values allow, or not of them (ci_low = ci_high
    = the median beside samples that spread 3.8-10.7 ms), none writes."""
    ordered = sorted(values)
    n = len(ordered)
    most = order_rank(n) or 1
    first, last = bisect.bisect_left(ordered, low - tolerance), bisect.bisect_right(ordered, low + tolerance)
    return any(abs(ordered[n - 1 - i] - high) <= tolerance for i in range(first, min(last, most)))


def relative_ci_half_width(values: Sequence[float]) -> float:
    """Half the CI width of the median relative to the median (inf when there is no CI or the median is not positive)."""
    med, interval = _median_and_ci(values, CONFIDENCE, independent=False)
    if med <= 0 or interval is None:
        return math.inf
    low, high = interval
    return (high - low) / 2 / med


def iqr(values: Sequence[float]) -> float:
    """Interquartile range; 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1


def summarize(values: Sequence[float]) -> Stats:
    """Median, IQR, extremes and the 95% CI of the median of `values` (None when n is too small)."""
    interval = median_ci(values)
    return Stats(
        median=statistics.median(values),
        iqr=iqr(values),
        min=min(values),
        max=max(values),
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
        n=len(values),
    )


def side(bounds: tuple[float, float] | None, reference: float) -> int | None:
    """Where an interval lies against a reference value: +1 wholly above, −1 wholly below, 0 across it, None without one.

    The rule every reading and verdict follows: a difference from `reference`
    ("no difference", 1× or 0%) is stated only when the interval excludes it.
    """
    if bounds is None:
        return None
    low, high = bounds
    if low > reference:
        return 1
    if high < reference:
        return -1
    return 0


def overlap_efficiency(alone_s: Sequence[float], together_s: float) -> float | None:
    """(ΣT_i − T_all) / (ΣT_i − max T_i): 1 is perfect overlap, 0 fully serialized.

    The one formula every workload uses. Not clipped: noise can push it
    slightly outside [0, 1]; rendering clips. None when there is nothing that
    could overlap (one part, or all but one part take no time).
    """
    total = sum(alone_s)
    room = total - max(alone_s)
    if room <= 0:
        return None
    return (total - together_s) / room


def expanded_tail(confidence: float, rounds: int) -> float:
    """The tail the percentile interval is read at: (1 − confidence)/2 widened for a small sample, as Hesterberg's
    expanded percentile interval does (the bootstrap's spread is too narrow by √((n−1)/n), and a normal quantile
    too small by Student's t on n − 1 degrees of freedom): the tail at z = √(n/(n−1))·t(n−1, 1 − tail). At 30
    rounds a 95% interval is read at 1.9% and 98.1%; planted slacks were covered in 88–93% of reruns without it."""
    normal = statistics.NormalDist()
    z = normal.inv_cdf(1 - (1 - confidence) / 2)
    freedom = rounds - 1
    # Student's t quantile by its Cornish–Fisher expansion in 1/ν (within 0.1% of the exact one from ν = 4 on)
    t = (
        z
        + (z**3 + z) / (4 * freedom)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * freedom**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * freedom**3)
    )
    return normal.cdf(-math.sqrt(rounds / freedom) * t)
