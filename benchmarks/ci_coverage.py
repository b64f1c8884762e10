"""How often does the 95% CI of the median really cover the median? Coverage by simulation.

Draws `--trials` samples of n values from a skewed distribution (lognormal,
sigma 1: timings are skewed and outlier-prone) whose median is known
(exactly 1), and counts how often the interval asyncbench reports contains
it. Next to it, the interval asyncbench reported before schema 2: order
statistics from the normal approximation, [min, max] for small n, labelled
95% whatever n was.

    python benchmarks/ci_coverage.py                  # n = 3, 5, 6, 10, 30, 100; 10 000 trials each
    python benchmarks/ci_coverage.py --trials 100000 --n 3 5 7
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy

from asyncbench.results import stats


def normal_approximation_ci(values: list[float]) -> tuple[float, float]:
    """The interval asyncbench called a 95% CI up to results schema 1 ([min, max] for n < 6)."""
    ordered = sorted(values)
    n = len(ordered)
    z = statistics.NormalDist().inv_cdf(0.975)
    half_width_ranks = z * math.sqrt(n) / 2
    low_rank = max(1, math.floor(n / 2 - half_width_ranks))
    high_rank = min(n, math.ceil(n / 2 + half_width_ranks + 1))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--n", type=int, nargs="+", default=[3, 5, 6, 10, 30, 100])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = numpy.random.default_rng(args.seed)
    true_median = 1.0  # of lognormal(0, 1)
    print(f"coverage of the true median by the reported '95%' interval, {args.trials} lognormal(0, 1) samples per n")
    print(f"{'n':>5}  {'now (exact binomial)':>28}  {'before (normal approx., [min,max] if n<6)':>42}")
    for n in args.n:
        draws = rng.lognormal(0.0, 1.0, size=(args.trials, n))
        k = stats.order_rank(n)
        if k is None:
            now = "no interval (none is 95%)"
        else:
            hits = sum(stats.median_ci(list(row))[0] <= true_median <= stats.median_ci(list(row))[1] for row in draws)
            now = f"{hits / args.trials:.1%} (exact: {stats.coverage(n, k):.1%})"
        before_hits = 0
        for row in draws:
            low, high = normal_approximation_ci(list(row))
            before_hits += low <= true_median <= high
        print(f"{n:>5}  {now:>28}  {before_hits / args.trials:>42.1%}")


if __name__ == "__main__":
    main()
