"""The github-benchmark writer: median done times as benchmark-tracking JSON ("customSmallerIsBetter").

A list of {name, unit, value, range, extra}, one entry per ok case and
variant, the median done time in a fixed unit so that a series keeps one
unit over the commits it tracks.
"""

from __future__ import annotations

import json

from asyncbench.report.cells import no_interval_why, steps_per_sample
from asyncbench.report.view import ReportView
from asyncbench.results import units
from asyncbench.results.model import Result, Status

#: one unit for every entry: a tracked series must not change unit when a time crosses 1 s or 1 ms
BENCHMARK_UNIT, BENCHMARK_SCALE = "ms", 1e3


def _of_steps(result: Result) -> str:
    """' (each of 20 steps)' where a sample is several of the user's steps (the step form), '' where it is one."""
    steps = steps_per_sample(result)
    return f" (each of {steps} steps)" if steps > 1 else ""


def github_benchmark(view: ReportView, path: str = "-") -> str:
    """Median done time of every ok case and variant, smaller is better, as benchmark-tracking JSON."""
    entries = []
    for result in view.report.results:
        if result.status != Status.OK:
            continue
        for variant_name, v in result.variants.items():
            low, high = v.done_s.ci_low, v.done_s.ci_high
            half_ci = (high - low) / 2 if low is not None and high is not None else None
            entries.append(
                {
                    "name": f"{result.id} {variant_name}",
                    "unit": BENCHMARK_UNIT,
                    "value": v.done_s.median * BENCHMARK_SCALE,
                    "range": f"± {units.number(half_ci * BENCHMARK_SCALE, 4)}"
                    if half_ci is not None
                    else f"no 95% CI: {no_interval_why(v.done_s.n)}",
                    "extra": f"median of {v.done_s.n} samples{_of_steps(result)}; ± is half the 95% CI of the median; "
                    f"issue {units.seconds(v.issue_s.median)}",
                }
            )
    return json.dumps(entries, indent=1) + "\n"
