import math
import statistics

import pytest

from asyncbench.results import stats


def test_summarize_matches_statistics_module():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 100.0]
    s = stats.summarize(values)
    assert s.median == statistics.median(values)
    assert s.min == 1.0
    assert s.max == 100.0
    assert s.n == 6
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


def test_no_95_percent_interval_from_fewer_than_six_samples():
    """[min, max] of 5 values covers the median only 94% of the time, of 3 values 75%: no interval is honest."""
    assert stats.median_ci([3.0, 1.0, 2.0]) is None
    assert stats.median_ci([5.0, 3.0, 1.0, 2.0, 4.0]) is None
    assert stats.median_ci([6.0, 3.0, 1.0, 2.0, 4.0, 5.0]) == (1.0, 6.0)
    assert stats.summarize([1.0, 2.0, 3.0]).ci_low is None
    assert stats.relative_ci_half_width([1.0, 2.0, 3.0]) == math.inf


@pytest.mark.parametrize("n", [*range(1, 41), 100, 257, 1000])
def test_median_ci_is_scipys_distribution_free_quantile_interval(n):
    """The same order statistics as scipy.stats.quantile_test's confidence interval of the median."""
    import numpy
    from scipy.stats import quantile_test

    values = numpy.random.default_rng(n).lognormal(size=n)
    ours = stats.median_ci(list(values), independent=True)
    theirs = quantile_test(values, q=float(numpy.median(values))).confidence_interval(0.95)
    if ours is None:
        assert math.isnan(theirs.low) or math.isnan(theirs.high)
    else:
        assert ours == (theirs.low, theirs.high)


@pytest.mark.parametrize("n, k", [(6, 1), (10, 2), (30, 10)])
def test_interval_ranks_have_at_least_95_percent_coverage_and_are_the_tightest(n, k):
    assert stats.order_rank(n) == k
    assert stats.coverage(n, k) >= 0.95 > stats.coverage(n, k + 1)


def test_interval_ranks_are_scipys_binomial_ranks_for_every_n_and_level():
    """order_rank and coverage compute Bin(n, ½) without scipy; they agree with scipy.stats.binom everywhere."""
    import numpy
    from scipy.stats import binom

    for confidence in (0.5, 0.9, 0.95, 0.975, 0.99):
        for n in [*range(1, 401), 1000, 4999, 5000, 100_000]:
            tails = binom.cdf(numpy.arange(n // 2), n, 0.5)
            expected = int(numpy.count_nonzero(tails <= (1 - confidence) / 2)) or None
            assert stats.order_rank(n, confidence) == expected, (n, confidence)
    for n, k in [(6, 1), (30, 10), (1000, 469)]:
        assert stats.coverage(n, k) == pytest.approx(1 - 2 * binom.cdf(k - 1, n, 0.5), abs=1e-12)


def test_intervals_import_no_scipy():
    """scipy.stats takes 1.35 s to import with torch loaded, paid by a run's process, its workers and comm_overlap's
    ranks: a run that measures and reports intervals must not import it."""
    import subprocess
    import sys

    code = (
        "import sys; from asyncbench.results import stats; from asyncbench.measure.timing import measure; "
        "from asyncbench.results.model import Settings; "
        "from asyncbench.measure.procedure import Procedure; "
        "measure({'a': lambda: None}, lambda: None, lambda: None, Procedure(Settings(warmup=1, min_samples=6, max_samples=6))); "
        "assert stats.median_ci([float(i * 7 % 50) for i in range(50)]) is not None; stats.coverage(50, 18); "
        "print('scipy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("bounds, reference, where", [((1.1, 1.3), 1.0, 1), ((0.7, 0.9), 1.0, -1), ((0.9, 1.2), 1.0, 0), (None, 1.0, None)])
def test_a_difference_is_stated_only_when_the_interval_excludes_the_reference(bounds, reference, where):
    assert stats.side(bounds, reference) == where


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


def _ar1(rng, rho, n):
    """n values of a Gaussian AR(1) with lag-1 autocorrelation rho, exponentiated (median 1): drifting timings."""
    value, values = rng.gauss(0, 1), []
    for _ in range(n + 50):
        value = rho * value + math.sqrt(1 - rho * rho) * rng.gauss(0, 1)
        values.append(math.exp(0.1 * value))
    return values[50:]


@pytest.mark.parametrize("rho", [0.3, 0.6])
def test_median_ci_keeps_its_coverage_when_rounds_drift(rho):
    """Plain order statistics covered 89-91% at rho 0.3 and 74-77% at 0.6 (n = 100); widened, about 95%."""
    import random

    rng = random.Random(7)
    trials = 600
    hits = sum(low <= 1.0 <= high for low, high in (stats.median_ci(_ar1(rng, rho, 100)) for _ in range(trials)))
    assert hits / trials >= 0.92


def test_lag1_autocorrelation_sees_runs_on_one_side_of_the_median():
    assert stats.lag1_autocorrelation([1.0, 2.0] * 10) == -1.0
    assert stats.lag1_autocorrelation([1.0] * 10 + [2.0] * 10) == pytest.approx(17 / 19)
    assert stats.lag1_autocorrelation([1.0, 2.0]) is None
    assert stats.dependence_inflation([1.0, 2.0] * 10) == 1.0
    assert stats.dependence_inflation([1.0] * 10 + [2.0] * 10) > 5


def test_relative_half_width_is_zero_for_constant_and_inf_for_nonpositive():
    assert stats.relative_ci_half_width([2.0] * 10) == 0.0
    assert stats.relative_ci_half_width([0.0] * 10) == math.inf
