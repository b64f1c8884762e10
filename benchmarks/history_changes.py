"""How often `asyncbench history` calls a change: on flat noisy series (false alarms), and on a planted step.

Series of N run medians with Gaussian noise of a given relative spread
(and, for the drift rows, a linear drift across the series), each passed to
the change-point detection `history` uses (history.changes: Apache Otava's
E-divisive means at p < MAX_P_VALUE, changes under MIN_MAGNITUDE dropped).
Prints, per row, the fraction of flat series with any change called, and
the fraction of series with a 30% step in the middle where exactly that
step was found (at its first point). Pure computation: seconds.

    python benchmarks/history_changes.py [--series 300]
"""

from __future__ import annotations

import argparse
import random

from asyncbench.history import changes
from asyncbench.history.model import Point

STEP = 1.30


def points(values: list[float]) -> list[Point]:
    return [Point(i, str(i), f"r{i}", None, v, None, None) for i, v in enumerate(values)]


def series(rng: random.Random, length: int, spread: float, drift: float, step: float) -> list[float]:
    middle = length // 2
    return [(1 + drift * i / max(1, length - 1)) * (step if i >= middle else 1.0) * (1 + rng.gauss(0, spread)) for i in range(length)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=300, help="series per row")
    args = parser.parse_args()
    rng = random.Random(0)
    print(f"changes called at p < {changes.MAX_P_VALUE:g} and above {changes.MIN_MAGNITUDE:.0%}; {args.series} series per row")
    print(f"{'points':>6} {'noise':>6} {'drift':>6}   {'flat: any change':>17}   {'30% step found where it starts':>31}")
    for length in (12, 50, 200):
        for spread, drift in ((0.02, 0.0), (0.05, 0.0), (0.10, 0.0), (0.02, 0.10)):
            false_alarms = sum(bool(changes.change_points(points(series(rng, length, spread, drift, 1.0)))) for _ in range(args.series))
            found = 0
            for _ in range(args.series):
                called = changes.change_points(points(series(rng, length, spread, drift, STEP)))
                found += [c.run for c in called] == [length // 2]  # a point's run is its index here
            print(f"{length:>6} {spread:>6.0%} {drift:>6.0%}   {false_alarms / args.series:>17.1%}   {found / args.series:>31.1%}")


if __name__ == "__main__":
    main()
