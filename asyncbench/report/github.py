"""The github-benchmark writer: median done times as benchmark-tracking JSON ("customSmallerIsBetter").

A list of {name, unit, value, range, extra}, one entry per ok case and
variant, the median done time in a fixed unit so that a series keeps one
unit over the commits it tracks. A time whose interval reaches 0 has its
range start at 0 (units.time_as_shown), as the table's `~0 [≤ x]`.
"""

from __future__ import annotations

import json

from asyncbench.report.cells import no_interval_why, steps_per_sample
from asyncbench.report.view import ReportView
from asyncbench.results import spreads, units
from asyncbench.results.model import Result, Status

#: one unit for every entry: a tracked series must not change unit when a time crosses 1 s or 1 ms
BENCHMARK_UNIT, BENCHMARK_SCALE = "ms", 1e3


def _of_steps(result: Result) -> str:
    """' (each of 20 steps)' where a sample is several of the user's steps (the step form), '' where it is one."""
    steps = steps_per_sample(result)
    return f" (each of {steps} steps)" if steps > 1 else ""


#: what an entry's "range" is, said in its "extra" (the action shows "range" as written, beside "value")
RANGE_MEANS = "range: ± half the 95% CI of the median, or the CI itself (low–high) where it is lopsided"


def _range(median: float, low: float, high: float) -> str:
    """'± 0.1234' where the interval is what a ± says; '36.7–42.8' (its ends, in BENCHMARK_UNIT) where a ± would
    misstate it, by the table's rule (spreads.shows_bounds: lopsided, wide, or reaching 0): a trial's '± 3.034' beside
    37.41 ms read as [34.4–40.4], below the least sample, for the table's 37.4 ms [36.7–42.8]."""
    if not spreads.shows_bounds(median, low, high):
        return f"± {units.number((high - low) / 2 * BENCHMARK_SCALE, 4)}"
    first, last = (units.number(end * BENCHMARK_SCALE, 4) for end in (low, high))
    # a signed end beside a dash reads as one ('-0.02–3.1'): ends apart, as units.with_bounds writes them
    return f"{first} … {last}" if low < 0 else f"{first}–{last}"


def github_benchmark(view: ReportView, path: str = "-") -> str:
    """Median done time of every ok case and variant, smaller is better, as benchmark-tracking JSON."""
    entries = []
    for result in view.report.results:
        if result.status != Status.OK:
            continue
        for variant_name, v in result.variants.items():
            # an interval reaching 0 starts at 0, as the table's '~0 [≤ x]'
            median, low, high = units.time_as_shown(v.done_s.median, v.done_s.ci_low, v.done_s.ci_high)
            entries.append(
                {
                    "name": f"{result.id} {variant_name}",
                    "unit": BENCHMARK_UNIT,
                    "value": median * BENCHMARK_SCALE,
                    "range": _range(median, low, high)
                    if low is not None and high is not None
                    else f"no 95% CI: {no_interval_why(v.done_s.n)}",
                    "extra": f"median of {v.done_s.n} samples{_of_steps(result)}; {RANGE_MEANS}; issue {units.seconds(v.issue_s.median)}",
                }
            )
    return json.dumps(entries, indent=1) + "\n"
