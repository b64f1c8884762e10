"""The Bencher Metric Format writer: every measure of a results file (or an `ab` file) with its interval, as BMF JSON.

BMF (https://bencher.dev/docs/reference/bencher-metric-format/, read by
`bencher run --adapter json`) is an object keyed by benchmark name, each a
map of measure name to {value, lower_value, upper_value}; the bounds are
optional. They map onto what asyncbench stores: value is the median, the
bounds the ends of its 95% interval. A figure stored without an interval
(too few samples for one, a single measurement such as memory) is a value
alone: never a made-up interval around it.

Benchmarks and measures, per ok case (an errored or skipped case has no
figure a series should take):

- `<case id> <variant>`: each clock (`issue_s`, `done_s`, `device_s` where
  the device was timed), in seconds, per sample as the results file holds
  it (a step-form sample is `steps` steps); and each memory figure measured,
  in bytes, without bounds.
- `<case id>`: each metric under its stored name, in its stored unit
  (seconds for times such as the step form's `step_s_kK`, a ratio for
  `slowdown_kK`, `illusion` or a speedup), with its interval where it has one.

A time whose interval reaches below 0 (a difference such as `t3_s` or a
cost, not distinguishable from 0: the table's `~0 [≤ x]`) is written with
its lower end at 0, and a median below 0 as 0: no time is below 0. The
results file keeps the figures as measured.

An `ab` file gives `<case id> <variant>` (a metric: `<case id> <name>
(metric)`) with one measure, `paired_ratio`: head / base, a ratio without a
unit (above 1: head is slower), its interval the one the verdict was judged
by. Names are written as they are: JSON escapes what it must, and its
reader is a program.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Mapping

from asyncbench.report.view import ReportView
from asyncbench.results import units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.model import CLOCKS, Stats, Status
from asyncbench.results.paired import METRIC
from asyncbench.results.schema import Report

#: the measure an `ab` file's rows are written under: head / base, a ratio without a unit
PAIRED_RATIO = "paired_ratio"

Metric = dict[str, float]


def _metric(value: float | None, bounds: tuple[float, float] | None = None, unit: str = "") -> Metric | None:
    """{value, lower_value, upper_value}; bounds only where there is an interval; None for no finite value (JSON
    has no NaN, and a dashboard must not take one). A time (`unit` "s") whose interval reaches 0 has its lower end
    at 0, as the table's `~0 [≤ x]` says (units.time_as_shown): never a negative time."""
    if value is None or not math.isfinite(value):
        return None
    if unit == units.SECONDS and bounds is not None:
        value, low, _ = units.time_as_shown(value, *bounds)
        bounds = (bounds[0] if low is None else low, bounds[1])
    metric = {"value": value}
    if bounds is not None and all(math.isfinite(bound) for bound in bounds):
        metric.update(lower_value=float(bounds[0]), upper_value=float(bounds[1]))
    return metric


def _clock(stats: Stats) -> Metric | None:
    """A clock's median and the ends of its 95% interval (none: fewer samples than one needs)."""
    low, high = stats.ci_low, stats.ci_high
    return _metric(stats.median, (low, high) if low is not None and high is not None else None, units.SECONDS)


def _add(benchmarks: dict[str, dict[str, Metric]], benchmark: str, measures: Mapping[str, Metric | None]) -> None:
    given = {name: metric for name, metric in measures.items() if metric is not None}
    if given:
        benchmarks.setdefault(benchmark, {}).update(given)


def measures(report: Report) -> dict[str, dict[str, Metric]]:
    """Benchmark name -> measure name -> metric, for every ok case of `report` (the module's docstring)."""
    benchmarks: dict[str, dict[str, Metric]] = {}
    for result in report.results:
        if result.status != Status.OK:
            continue
        for variant_name, variant in result.variants.items():
            clocks = {clock: _clock(stats) for clock in CLOCKS if (stats := getattr(variant, clock)) is not None}
            memory = {name: _metric(value) for name, value in dataclasses.asdict(variant.memory).items() if value is not None}
            _add(benchmarks, f"{result.id} {variant_name}", {**clocks, **memory})
        metrics = {name: _metric(value, result.bounds.get(name), result.unit_of(name)) for name, value in result.metrics.items()}
        _add(benchmarks, result.id, metrics)
    return benchmarks


def bmf(view: ReportView, path: str = "-") -> str:
    """The writer (report.writers): every measure of the view's report as BMF JSON."""
    return _dumps(measures(view.report))


def ab_measures(report: ABReport) -> dict[str, dict[str, Metric]]:
    """Benchmark name -> {PAIRED_RATIO: metric} for every compared variant and metric of an `ab` report."""
    benchmarks: dict[str, dict[str, Metric]] = {}
    for case in report.cases:
        for ratio in case.ratios:
            what = f"{ratio.name} (metric)" if ratio.kind == METRIC else ratio.name
            _add(benchmarks, f"{case.id} {what}", {PAIRED_RATIO: _metric(ratio.ratio, ratio.ratio_ci)})
    return benchmarks


def ab_bmf(report: ABReport) -> str:
    """An `ab` report's paired ratios as BMF JSON (`ab --bmf`, `show AB.json --format bmf`)."""
    return _dumps(ab_measures(report))


def _dumps(benchmarks: dict[str, dict[str, Metric]]) -> str:
    return json.dumps(benchmarks, indent=1, allow_nan=False) + "\n"
