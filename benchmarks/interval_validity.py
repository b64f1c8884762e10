"""Do the intervals keep their promise? Two simulations with the project's own functions.

1. Sequential validity of `expect:` stopping. A clock check whose truth sits
   exactly on its threshold (lognormal samples with median = threshold) is
   sampled until decided, up to N rounds; every PASS or FAIL is wrong.
   Printed for N = 50, 200, 1000: the old rule (a 95% interval after every
   round) and the current one (the runner's own: judged only at the budget's
   looks, at the budget's confidence), each against its nominal rate.
2. Coverage of the median's interval when rounds drift: a Gaussian AR(1)
   with lag-1 autocorrelation ρ = 0, 0.3, 0.6, exponentiated (median 1), at
   n = 30, 100, 300 rounds: how often the 95% interval covers 1, exact
   order statistics (as if independent) against the widened interval.

    python benchmarks/interval_validity.py            # about 12 minutes on 2 cores (the old rule at 1000 rounds)
    python benchmarks/interval_validity.py --trials 100  # a quick look
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asyncbench.results import budget, stats  # noqa: E402
from asyncbench.results.model import Settings, Verdict  # noqa: E402


def _sequential(trials: int, rounds: int, old: bool, family_error: float) -> float:
    """The share of gates that end wrong (PASS or FAIL) for a check exactly on its threshold."""
    from tests.engine import test_sequential as simulation  # the runner's own stopping rule, on a simulated clock

    settings = Settings(warmup=0, min_samples=6, max_samples=rounds, max_time_s=1e9, max_rel_noise=1.0)
    simulation.FAMILY_ERROR = family_error
    saved = budget.Budget.confidence, budget.schedule
    if old:  # the rule before: a 95% interval, asked after every round
        budget.Budget.confidence = lambda self, share=1: stats.CONFIDENCE  # type: ignore[method-assign]
        simulation.budget.schedule = lambda first, last: tuple(range(first, last + 1))  # type: ignore[assignment]
    try:
        verdicts = [simulation._one_gate(seed, settings) for seed in range(trials)]
    finally:
        budget.Budget.confidence, simulation.budget.schedule = saved
    return sum(v in (Verdict.PASS, Verdict.FAIL) for v in verdicts) / trials


def _ar1(rng: random.Random, rho: float, n: int) -> list[float]:
    value, values = rng.gauss(0, 1), []
    for _ in range(n + 50):
        value = rho * value + math.sqrt(1 - rho * rho) * rng.gauss(0, 1)
        values.append(math.exp(0.1 * value))
    return values[50:]


def _coverage(trials: int, rho: float, n: int, independent: bool) -> float:
    rng = random.Random(int(rho * 100) + n)
    hits = total = 0
    for _ in range(trials):
        interval = stats.median_ci(_ar1(rng, rho, n), independent=independent)
        if interval is None:
            continue
        total += 1
        hits += interval[0] <= 1.0 <= interval[1]
    return hits / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    print(f"1. a check exactly on its threshold, sampled until decided ({args.trials} gates each): wrong verdicts")
    for rounds in (50, 200, 1000):
        old = _sequential(args.trials, rounds, old=True, family_error=0.05)
        new = _sequential(args.trials, rounds, old=False, family_error=0.05)
        print(f"   up to {rounds:4d} rounds: 95% after every round {old:6.1%} (nominal 5%) · at the looks, 5% budget {new:6.1%}")
    print(f"2. coverage of the 95% interval of the median under AR(1) drift ({args.trials} samples each)")
    for rho in (0.0, 0.3, 0.6):
        for n in (30, 100, 300):
            plain = _coverage(args.trials, rho, n, independent=True)
            widened = _coverage(args.trials, rho, n, independent=False)
            print(f"   rho {rho:.1f}, n {n:3d}: exact order statistics {plain:6.1%} · widened for dependence {widened:6.1%}")


if __name__ == "__main__":
    main()
