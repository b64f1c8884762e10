"""The ratio of two runs' timings: the Hodges–Lehmann estimate on log times and its exact rank interval.

For samples old (m values) and new (n values), the m·n differences log(new_j) − log(old_i), sorted, are
d_(1) ≤ … ≤ d_(mn). Their median is the Hodges–Lehmann estimate of the shift of log time, and [d_(k), d_(mn+1−k)]
is its distribution-free interval (Bauer 1972; Hollander & Wolfe, ch. 4): the interval misses the shift when the
Mann–Whitney count U of pairs with old above new is below k, or above mn − k, so k is the largest with
P(U ≤ k − 1) ≤ α/2 under the null of no shift. exp() turns both into a ratio of times, current / baseline.

Why this and not the ratio of the two medians' intervals: that needed each median's own order-statistic interval
at half the error, so nothing under 9 samples a side at 99.5%, and a clear slowdown measured in a few rounds
passed a gate as INCONCLUSIVE. A rank interval uses every pair, so a few samples against many already reach a
gate's confidence (6 against 20: P(U = 0) = 1/C(26, 6) = 4·10⁻⁶), and it is narrower than the medians' at any size
(Hodges–Lehmann keeps 95% of the mean's efficiency for normal data, the median 64%).

U's null distribution is exact for small samples (the counting recursion, cached per pair of sizes) and its normal
approximation, continuity corrected, beyond EXACT_PAIRS. What the interval assumes, and what it does about it:
- that a change scales the time distribution (a shift of log time), which is how a slowdown looks. Then it holds
  at any size; where the spread changes too it bends (the rank count varies more than its null says:
  Behrens–Fisher), most where the current run is both noisier and shorter than the baseline;
- independent rounds: rounds that drift together make U vary more, so, as `stats.median_ci` does, the interval
  comes from effective sample sizes n / inflation, where the inflation of U's variance follows from the measured
  lag-1 dependence of each side's rounds (Gaussian AR(1): the autocorrelation of ranks at lag k is
  6/π·asin(ρ^k/2)), and the rank is scaled back to n.

Figures (coverage of a planted ratio, lognormal and heavy-tailed, equal and unequal spreads, drifting rounds;
benchmarks/compare_validity.py): docs/measured.md, section "The baseline comparison's interval".
"""

from __future__ import annotations

import functools
import math
import statistics
from typing import Sequence

from asyncbench.results import stats

# Up to this many pairs (both sides 50 samples) U's null distribution is computed exactly (75 ms at 50 × 50, once
# per pair of sizes); beyond it the normal approximation. Its rank is never above the exact one where they meet,
# so its interval is never narrower: at 50 × 50 it is the same at a 2.5% tail, 5 pairs of 2,500 lower at 5·10⁻⁴,
# 17 lower at 5·10⁻⁶ (benchmarks/compare_validity.py prints the check).
EXACT_PAIRS = 2500
# The differences of more pairs than this (2000 samples a side, 32 MB) are not held at once: each side is thinned
# evenly to fit. Fewer rounds give a wider interval, never a wrong one.
MAX_PAIRS = 4_000_000
# Enough lags of the AR(1) tail: ρ^k below this adds nothing to the inflation.
_NEGLIGIBLE = 1e-6


@functools.lru_cache(maxsize=256)
def _null_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U ≤ u) for u = 0 … m·n/2 under no shift, exactly. The count of arrangements of m old and n new values
    with U = u follows the counting recursion c(u; m, n) = c(u − n; m − 1, n) + c(u; m, n − 1) (the largest value
    is an old one, above all n new ones, or a new one); its solution is the Gaussian binomial
    Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i), whose coefficients are built here in exact integers, only as far as
    m·n/2 (each step only carries counts upward): a few hundred vector steps at 50 × 50, not 2,500."""
    import numpy

    small, large = min(m, n), max(m, n)  # U's distribution is the same either way round
    top = small * large // 2
    counts = numpy.zeros(top + 1, dtype=object)
    counts[:] = 0
    counts[0] = 1
    for i in range(1, small + 1):
        shift = large + i
        if shift <= top:  # × (1 − q^shift): from the top down, so each count uses the one below before it changes
            counts[shift:] = counts[shift:] - counts[: top + 1 - shift]
        # ÷ (1 − q^i): c[u] += c[u − i] upward, a running sum along each residue class mod i
        padded = numpy.zeros(-(-(top + 1) // i) * i, dtype=object)
        padded[:] = 0
        padded[: top + 1] = counts
        counts = numpy.cumsum(padded.reshape(-1, i), axis=0).ravel()[: top + 1]
    total = math.comb(m + n, m)
    running, cdf = 0, []
    for count in counts:
        running += int(count)
        cdf.append(running / total)
    return tuple(cdf)


def rank(m: int, n: int, confidence: float) -> int | None:
    """The k for which [d_(k), d_(mn+1−k)] covers the shift with at least `confidence`; None when none does."""
    tail = (1 - confidence) / 2
    if m < 1 or n < 1:
        return None
    if m * n <= EXACT_PAIRS:
        k = sum(1 for p in _null_cdf(m, n) if p <= tail)
    else:
        mean, sd = m * n / 2, math.sqrt(m * n * (m + n + 1) / 12)
        k = math.floor(mean + 0.5 + statistics.NormalDist().inv_cdf(tail) * sd)
    return k if k >= 1 else None


@functools.lru_cache(maxsize=1024)
def _rank_inflation(rho_sign: float) -> float:
    """How much a Gaussian AR(1) with this lag-1 sign autocorrelation inflates the variance of a rank sum."""
    rho = min(math.sin(math.pi / 2 * min(rho_sign, 1.0)), stats.MAX_DEPENDENCE)
    total, k = 0.0, 1
    while rho**k > _NEGLIGIBLE:
        total += 6 / math.pi * math.asin(rho**k / 2)
        k += 1
    return 1 + 2 * total


def inflation(values: Sequence[float]) -> float:
    """The inflation of a side's share of U's variance by its rounds' dependence (1: none seen, or too few rounds
    to tell: stats.MIN_ROUNDS_FOR_DEPENDENCE)."""
    if len(values) < stats.MIN_ROUNDS_FOR_DEPENDENCE:
        return 1.0
    rho = stats.lag1_autocorrelation(values)
    if rho is None:
        return 1.0
    rho += stats.SMALL_SAMPLE_BIAS / len(values)  # biased low by about 1/n, as stats.dependence_inflation says
    return _rank_inflation(round(rho, 3)) if rho > 0 else 1.0


def _thinned(values: Sequence[float], most: int) -> Sequence[float]:
    """Every s-th round, in the order they ran, so that at most `most` remain."""
    step = math.ceil(len(values) / most)
    return values[::step] if step > 1 else values


def hodges_lehmann(
    old: Sequence[float], new: Sequence[float], confidence: float, independent: bool = False
) -> tuple[float, tuple[float, float] | None]:
    """(estimate, interval) of the ratio new / old of two samples of positive times: exp of the median of the
    pairwise log differences, and of its rank interval at `confidence` (None: too few samples for one). Rounds are
    taken as dependent as they look unless `independent`. ValueError for an empty side or a time ≤ 0."""
    import numpy

    if not old or not new:
        raise ValueError("a ratio of no samples")
    if min(old) <= 0 or min(new) <= 0:
        raise ValueError("a time of 0 or less has no logarithm")
    if len(old) * len(new) > MAX_PAIRS:
        most = math.isqrt(MAX_PAIRS)
        old, new = _thinned(old, most), _thinned(new, most)
    m, n = len(old), len(new)
    differences = (numpy.log(numpy.asarray(new, dtype=float))[None, :] - numpy.log(numpy.asarray(old, dtype=float))[:, None]).ravel()
    pairs = m * n
    middle = [(pairs - 1) // 2, pairs // 2]
    inflated = (1.0, 1.0) if independent else (inflation(old), inflation(new))
    m_eff, n_eff = max(int(m / inflated[0]), 1), max(int(n / inflated[1]), 1)
    k = rank(m_eff, n_eff, confidence)
    if k is not None and m_eff * n_eff < pairs:
        k = max(1, math.floor(k * pairs / (m_eff * n_eff)))
    wanted = middle + ([k - 1, pairs - k] if k is not None else [])
    ordered = numpy.partition(differences, sorted(set(wanted)))
    estimate = math.exp((float(ordered[middle[0]]) + float(ordered[middle[1]])) / 2)
    if k is None:
        return estimate, None
    return estimate, (math.exp(float(ordered[k - 1])), math.exp(float(ordered[pairs - k])))


def samples_needed(baseline: int, confidence: float, most: int = 100_000) -> int | None:
    """The fewest current samples whose ratio with `baseline` samples has an interval at `confidence` (independent
    rounds; None: none up to `most`). Exactly, one exists when even U = 0 is rare enough: 1/C(m+n, n) ≤ α/2."""
    tail = (1 - confidence) / 2
    for n in range(1, most + 1):
        if baseline * n > EXACT_PAIRS:
            if rank(baseline, n, confidence) is not None:
                return n
        elif math.comb(baseline + n, n) * tail >= 1:
            return n
    return None
