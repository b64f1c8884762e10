"""A figure made of a case's rounds, held to the rounds its stored samples give.

A paired figure (a step form's slowdown, matmul's illusion, barrier's saving) is the median over the rounds of a
value each round's clocks give, with the 95% interval of that median (engine.rounds.figures). A reader recomputes the
rounds from the stored samples (results.step_figures, results.matmul_figures, results.workload_figures, each for its
own figures) and holds the stored figure here: its value no further from the rounds' median than the furthest any
one round can move under the samples' rounding (each round's room), and its interval one that those rounds can
give (stats.is_median_interval_of). One rule, one wording, for every figure a file states of its rounds.
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from asyncbench.results import recordable
from asyncbench.results.fields import At
from asyncbench.results.stats import is_median_interval_of, median_ci

# Samples are stored to the nanosecond (results.nanoseconds; full floats before schema 4): each may be this far from
# the one the figure was computed from, which bounds how far a recomputed figure may stray
SAMPLE_ROUNDING_S = 0.5e-9
# Room for the float arithmetic on top of that bound
RELATIVE_ROOM = 1e-9


def hold(at: At, case: Any, name: str, value: Any, interval: Any, per_round: Sequence[tuple[float, float]], how: str = "") -> None:
    """InputError naming `metrics.<name>` or `bounds.<name>` under the result at `at` (case `case`, named in the line)
    where the figure's `value` is
    not the median of `per_round` (each a round's (figure, room)) or its `interval` (None: not held) not one of that
    median those rounds can give. `how`: what a round's figure is, as the refusal says it ("2·size³·n_iter /
    done_s"). Nothing where there are no rounds."""
    if not per_round:
        return
    figures = [figure for figure, _ in per_round]
    worst = max(error for _, error in per_round)
    found = statistics.median(figures)
    rounds = f"its rounds' {how}" if how else "its rounds"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value - found) > worst + RELATIVE_ROOM * abs(found):
        (at / "metrics" / name).fail(
            f"{value:g} is not what the samples of case {case!r} give (the median of {rounds}: {found:g}): {recordable.NOT_WRITTEN}"
        )
    if isinstance(interval, Sequence) and len(interval) == 2 and None not in interval:
        low, high = float(interval[0]), float(interval[1])
        if not is_median_interval_of(low, high, figures, worst + RELATIVE_ROOM * max(abs(low), abs(high))):
            theirs = median_ci(figures)
            said = "too few for a 95% interval" if theirs is None else f"[{theirs[0]:g}, {theirs[1]:g}]"
            (at / "bounds" / name).fail(
                f"[{low:g}, {high:g}] is not an interval the samples of case {case!r} give of the median of {rounds} "
                f"({len(figures)} rounds: {said}): {recordable.NOT_WRITTEN}"
            )
