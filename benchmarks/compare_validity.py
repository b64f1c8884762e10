"""Does `compare`'s ratio interval keep its promise, and does it decide from few samples? Simulations with the
project's own function (verdicts.ratio.hodges_lehmann, through verdicts.compare where a label is judged).

1. Coverage of a planted ratio: baseline samples from a timing distribution,
   current samples the same distribution times r (r = 1, 1.1, 3: a change
   scales every time), m, n in {6, 10, 20, 50}; how often the interval
   contains r, and how often it misses on each side (every label is one-sided:
   a side's miss rate is what a wrong label costs), at 95% and at 99% (one
   row's level in a gate: 1 − 2 × 0.5%). Distributions: lognormal (σ = 0.1
   on log time) and heavy-tailed (base · (1 + 0.1 · Lomax(1.5)): a floor and
   a long right tail, infinite variance).
2. Where the model bends: the current run twice as noisy as the baseline at
   the same median (a contended machine), and rounds that drift together
   (AR(1) log times, ρ = 0.5, n ≥ 20) with and without the widening.
3. The 3× slowdown from the issue: baseline 20 samples at 2.42 ms, current 6
   samples at 7.53 ms, judged by `compare` at a 10% margin, as one row (98%
   interval) and as one of two (99.5%, the issue's level): the share called
   SLOWER, against the interval it replaced (each median's order-statistic
   interval at half the error).
4. The normal approximation beyond EXACT_PAIRS against the exact rank at
   the boundary (50 × 50).

    python benchmarks/compare_validity.py                 # about 4 minutes on 2 cores
    python benchmarks/compare_validity.py --trials 300    # a quick look
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy  # noqa: E402

from asyncbench.results import stats  # noqa: E402
from asyncbench.results.model import OK, Result, Samples, VariantResult  # noqa: E402
from asyncbench.results.schema import Report  # noqa: E402
from asyncbench.verdicts import compare, ratio  # noqa: E402

SIZES = (6, 10, 20, 50)
RATIOS = (1.0, 1.1, 3.0)
LEVELS = (0.95, 0.99)


def lognormal(rng: numpy.random.Generator, n: int, spread: float = 1.0) -> numpy.ndarray:
    return numpy.exp(rng.normal(0.0, 0.1 * spread, n))


def heavy(rng: numpy.random.Generator, n: int, spread: float = 1.0) -> numpy.ndarray:
    return 1 + 0.1 * spread * rng.pareto(1.5, n)


DISTRIBUTIONS: dict[str, Callable[..., numpy.ndarray]] = {"lognormal": lognormal, "heavy-tailed": heavy}


def _median_of(draw: Callable[..., numpy.ndarray], spread: float) -> float:
    return float(numpy.median(draw(numpy.random.default_rng(12345), 2_000_000, spread)))


def coverage(
    draw: Callable[..., numpy.ndarray], m: int, n: int, r: float, level: float, trials: int, seed: int, **kw: Any
) -> tuple[float, float, float]:
    """(covered, missed low, missed high): the interval lies wholly above r / wholly below r."""
    rng = numpy.random.default_rng(seed)
    covered = low = high = 0
    for _ in range(trials):
        old, new = draw(rng, m), r * draw(rng, n)
        interval = ratio.hodges_lehmann(list(old), list(new), level, **kw)[1]
        if interval is None:
            covered += 1  # no interval claims nothing (never at these sizes and levels)
        elif interval[0] > r:
            high += 1
        elif interval[1] < r:
            low += 1
        else:
            covered += 1
    return covered / trials, low / trials, high / trials


def _ar1(rng: numpy.random.Generator, rho: float, n: int) -> numpy.ndarray:
    value, values = rng.normal(), []
    for _ in range(n + 50):
        value = rho * value + math.sqrt(1 - rho * rho) * rng.normal()
        values.append(math.exp(0.1 * value))
    return numpy.array(values[50:])


def _report(samples: list[float]) -> Report:
    summary = stats.summarize(samples)
    variant = VariantResult(Samples(tuple(samples), tuple(samples)), summary, summary, None)
    row = Result("case[numpy,cpu]", "e", "matmul", "numpy", "cpu", {}, OK, variants={"matmul": variant})
    return dataclasses.replace(Report.new({}, {}), results=(row,))


def _old_interval(old: list[float], new: list[float], confidence: float) -> tuple[float, float] | None:
    """The interval compare used before: each median's order-statistic interval at half the error, divided."""
    each = 1 - (1 - confidence) / 2
    old_ci, new_ci = stats.median_ci(old, each), stats.median_ci(new, each)
    if old_ci is None or new_ci is None or old_ci[0] <= 0:
        return None
    return new_ci[0] / old_ci[1], new_ci[1] / old_ci[0]


def slowdown(trials: int) -> None:
    print("\n3. A 3x slowdown, baseline 20 samples at 2.42 ms (lognormal, 5%), current 6 at 7.53 ms (20%), margin 10%:")
    rng = numpy.random.default_rng(3)
    for rows, family in ((1, 0.01), (2, 0.01)):
        labels: dict[str, int] = {}
        old_labels: dict[str, int] = {}
        for _ in range(trials):
            base = list(2.42e-3 * numpy.exp(rng.normal(0, 0.05, 20)))
            current = list(7.53e-3 * numpy.exp(rng.normal(0, 0.20, 6)))
            # `rows` rows share the family rate: the row is judged at its share, as compare() splits it
            judged = compare.compare(_report(base), _report(current), 0.10, family_error=family / rows)
            (row,) = judged.rows
            labels[row.label] = labels.get(row.label, 0) + 1
            before = compare.label_of(_old_interval(base, current, 1 - family / rows), 0.10)
            old_labels[before] = old_labels.get(before, 0) + 1
        level = 1 - 2 * family / rows
        print(
            f"   as {rows} row(s) of a 1% gate ({level:.1%} interval): {_shares(labels, trials)}"
            f"   [before, at {1 - family / rows:.1%}: {_shares(old_labels, trials)}]"
        )


def _shares(counts: dict[str, int], trials: int) -> str:
    return ", ".join(f"{label} {count / trials:.1%}" for label, count in sorted(counts.items(), key=lambda kv: -kv[1]))


def normal_boundary() -> None:
    print("\n4. The rank k at 50 x 50: exact (counting recursion) against the normal approximation used beyond it:")
    for tail in (0.025, 0.005, 5e-4, 5e-5, 5e-6):
        exact = sum(1 for p in ratio._null_cdf(50, 50) if p <= tail)
        sd = math.sqrt(50 * 50 * 101 / 12)
        normal = math.floor(1250 + 0.5 + statistics.NormalDist().inv_cdf(tail) * sd)
        print(f"   one-sided {tail:g}: exact k = {exact}, normal k = {normal} (of 2500 pairs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000, help="simulated comparisons per cell")
    args = parser.parse_args()
    trials = args.trials

    print(f"1. Coverage of a planted ratio ({trials} comparisons a cell; worst over r = {', '.join(map(str, RATIOS))}):")
    worst_overall: dict[tuple[str, float], tuple[float, float]] = {}
    pooled: dict[tuple[str, float], list[tuple[float, float, float]]] = {}
    for name, draw in DISTRIBUTIONS.items():
        for level in LEVELS:
            print(f"   {name}, nominal {level:.0%} (each side {(1 - level) / 2:.1%}):  m\\n " + " ".join(f"{n:>16}" for n in SIZES))
            for m in SIZES:
                cells = []
                for n in SIZES:
                    results = [coverage(draw, m, n, r, level, trials, seed=m * 1000 + n * 10 + i) for i, r in enumerate(RATIOS)]
                    pooled.setdefault((name, level), []).extend(results)
                    covered = min(c for c, _, _ in results)
                    side = max(max(lo, hi) for _, lo, hi in results)
                    key = (name, level)
                    prior = worst_overall.get(key, (1.0, 0.0))
                    worst_overall[key] = (min(prior[0], covered), max(prior[1], side))
                    cells.append(f"{covered:6.1%} (side {side:4.1%})")
                print(f"      {m:>4} " + " ".join(f"{c:>16}" for c in cells))
    for (name, level), cells in pooled.items():
        covered, low, high = (statistics.fmean(c[i] for c in cells) for i in range(3))
        print(
            f"   pooled over the {len(cells)} cells ({len(cells) * trials} comparisons), {name} at {level:.0%}: covered {covered:.2%}, "
            f"missed below {low:.2%}, above {high:.2%} (each side's nominal {(1 - level) / 2:.1%})"
        )
    print(
        "   worst cell (Monte Carlo noise included): "
        + "; ".join(f"{name} {level:.0%}: {c:.1%} covered, {s:.2%} on one side" for (name, level), (c, s) in worst_overall.items())
    )

    print("\n2. Where the model bends (nominal 95%, r = 1):")
    for name, draw in DISTRIBUTIONS.items():
        truth = _median_of(draw, 2.0) / _median_of(draw, 1.0)  # the ratio of medians when only the spread changed
        for m, n in ((20, 6), (6, 20), (20, 20), (50, 10)):
            rng = numpy.random.default_rng(m * 100 + n)
            hits = 0
            for _ in range(trials):
                interval = ratio.hodges_lehmann(list(draw(rng, m)), list(draw(rng, n, 2.0)), 0.95)[1]
                hits += interval is None or interval[0] <= truth <= interval[1]
            print(f"   {name}, current twice as noisy, m = {m}, n = {n}: covers the ratio of medians ({truth:.3f}) {hits / trials:.1%}")
    for n in (20, 50):
        for independent in (True, False):
            rng = numpy.random.default_rng(n)
            hits = 0
            for _ in range(trials):
                interval = ratio.hodges_lehmann(list(_ar1(rng, 0.5, n)), list(_ar1(rng, 0.5, n)), 0.95, independent=independent)[1]
                hits += interval is None or interval[0] <= 1 <= interval[1]
            how = "as if independent" if independent else "widened (as compare does)"
            print(f"   AR(1) rounds, rho 0.5, m = n = {n}, {how}: {hits / trials:.1%}")

    slowdown(trials)
    normal_boundary()


if __name__ == "__main__":
    main()
