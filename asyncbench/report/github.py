"""The github-benchmark writer: median done times as benchmark-tracking JSON ("customSmallerIsBetter").

A list of {name, unit, value, range, extra}, one entry per ok case and
variant, the median done time in a fixed unit so that a series keeps one
unit over the commits it tracks.
"""

from __future__ import annotations

import json

from asyncbench.report.view import ReportView
from asyncbench.results import units
from asyncbench.results.model import Status

#: one unit for every entry: a tracked series must not change unit when a time crosses 1 s or 1 ms
BENCHMARK_UNIT, BENCHMARK_SCALE = "ms", 1e3


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
                    "range": f"± {units.number(half_ci * BENCHMARK_SCALE, 4)}" if half_ci is not None else "no 95% CI (too few samples)",
                    "extra": f"median of {v.done_s.n} samples; ± is half the 95% CI of the median; issue {units.seconds(v.issue_s.median)}",
                }
            )
    return json.dumps(entries, indent=1) + "\n"
