"""`--bmf`: every measure of a results file as Bencher Metric Format, value the median and bounds the interval's ends;
a figure with no interval has no bounds, never a made-up one; an `ab` file's paired ratios with their intervals."""

from __future__ import annotations

import dataclasses
import json
import math

from asyncbench.report import bmf, view
from asyncbench.report.writers import WRITERS
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from tests.support.golden import golden_report
from tests.support.helpers import ok_result, report_of


def _written(report) -> dict:
    return json.loads(WRITERS["bmf"].render(view.build(report), "bmf.json"))


def test_each_clock_is_its_median_with_the_ends_of_its_interval_in_seconds():
    report = golden_report()
    written = _written(report)
    first = report.results[0]
    done, issue = first.variants["matmul"].done_s, first.variants["matmul"].issue_s
    measures = written[f"{first.id} matmul"]
    assert measures["done_s"] == {"value": done.median, "lower_value": done.ci_low, "upper_value": done.ci_high}
    assert measures["issue_s"] == {"value": issue.median, "lower_value": issue.ci_low, "upper_value": issue.ci_high}
    assert "device_s" not in measures  # not timed on this device: no measure, not a zero
    assert measures["host_rss_peak_delta_bytes"] == {"value": 4 << 20}  # one measurement: no interval
    assert not any("size=512" in name for name in written)  # the errored case has no figure a series should take


def test_each_metric_keeps_its_interval_and_one_without_has_no_bounds():
    first = golden_report().results[0]
    metrics = _written(golden_report())[first.id]
    assert metrics["illusion"] == {"value": 16.0, "lower_value": 15.2, "upper_value": 16.4}
    low, high = first.bounds["gflops"]
    assert metrics["gflops"] == {"value": first.metrics["gflops"], "lower_value": low, "upper_value": high}
    assert metrics["verified"] == {"value": 1.0}  # stored without an interval: none written


def test_a_clock_with_too_few_samples_for_an_interval_is_a_value_alone():
    few = ok_result("m[torch,cpu]", n=4)  # under six samples: the median has no 95% interval
    assert few.variants["matmul"].done_s.ci_low is None
    measures = _written(report_of([few]))["m[torch,cpu] matmul"]
    assert measures["done_s"] == {"value": few.variants["matmul"].done_s.median}


def test_the_step_forms_per_step_figures_are_measures_and_nothing_unfinite_is_written():
    stepped = dataclasses.replace(
        ok_result("s[numpy,cpu]"),
        metrics={"step_s_k1": 2e-4, "slowdown_k1": 1.5, "illusion": math.nan, "broken": None},
        bounds={"step_s_k1": (1.9e-4, 2.2e-4), "slowdown_k1": None},
    )
    metrics = _written(report_of([stepped]))["s[numpy,cpu]"]
    assert metrics == {"step_s_k1": {"value": 2e-4, "lower_value": 1.9e-4, "upper_value": 2.2e-4}, "slowdown_k1": {"value": 1.5}}


def _ab(*ratios: PairedRatio) -> ABReport:
    side = Side("base", "abc", "/usr/bin/python3", "3.11.7")
    return ABReport(
        "2026-11-23T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (PairedCase("a[numpy,cpu]", "ok", ratios=ratios),)
    )


def test_an_ab_file_gives_each_paired_ratio_with_its_interval():
    slower = PairedRatio("step", "variant", "s", 1e-3, 1.2e-3, 1.2, (1.1, 1.3), Label.SLOWER)
    metric = PairedRatio("gflops", "metric", "GFLOP/s", 2.0, 1.9, 1.05, None, Label.INCONCLUSIVE)
    written = json.loads(bmf.ab_bmf(_ab(slower, metric)))
    assert written == {
        "a[numpy,cpu] step": {bmf.PAIRED_RATIO: {"value": 1.2, "lower_value": 1.1, "upper_value": 1.3}},
        "a[numpy,cpu] gflops (metric)": {bmf.PAIRED_RATIO: {"value": 1.05}},
    }


def test_a_time_whose_interval_reaches_below_0_has_its_lower_end_at_0_as_the_table_says_0():
    """A trial's `t3_s` of 4.06 ns in [-39.2, 63.3] ns, which the table prints '~0 [≤ 63.3 ns]', was written with a
    lower_value of -3.92e-08: a time below 0. Its lower end is 0 (a median below 0: 0); the results file keeps it."""
    from asyncbench.results.model import MetricInfo

    residual = dataclasses.replace(
        ok_result("s[numpy,cpu]"),
        metrics={"t3_s": 4.06e-09, "t1_s": -1e-09, "gap_s": -2e-06, "ratio": 0.5},
        bounds={"t3_s": (-3.924e-08, 6.33e-08), "t1_s": (-5e-09, 3e-09), "gap_s": (-3e-06, -1e-06), "ratio": (-0.1, 0.9)},
        metric_info={name: MetricInfo("s") for name in ("t3_s", "t1_s", "gap_s")} | {"ratio": MetricInfo("")},
    )
    metrics = _written(report_of([residual]))["s[numpy,cpu]"]
    assert metrics["t3_s"] == {"value": 4.06e-09, "lower_value": 0.0, "upper_value": 6.33e-08}
    assert metrics["t1_s"] == {"value": 0.0, "lower_value": 0.0, "upper_value": 3e-09}  # a median below 0: 0, as ~0
    assert metrics["gap_s"] == {"value": -2e-06, "lower_value": -3e-06, "upper_value": -1e-06}  # wholly below 0: 'below 0 by'
    assert metrics["ratio"] == {"value": 0.5, "lower_value": -0.1, "upper_value": 0.9}  # not a time: as stored
    assert residual.bounds["t3_s"] == (-3.924e-08, 6.33e-08)


def test_csv_and_github_benchmark_state_a_time_reaching_0_as_the_table_does():
    """The same rule in every export (units.time_as_shown): a time's interval reaching below 0 starts at 0."""
    import csv
    import io

    from asyncbench.results import stats
    from asyncbench.results.model import MetricInfo

    residual = dataclasses.replace(
        ok_result("s[numpy,cpu]"),
        metrics={"t3_s": 4.06e-09},
        bounds={"t3_s": (-3.924e-08, 6.33e-08)},
        metric_info={"t3_s": MetricInfo("s")},
    )
    done = dataclasses.replace(stats.summarize([1e-9] * 12), median=2e-9, ci_low=-1e-9, ci_high=4e-9)
    variant = dataclasses.replace(residual.variants["matmul"], done_s=done)
    built = view.build(report_of([dataclasses.replace(residual, variants={"matmul": variant})]))
    row = next(csv.DictReader(io.StringIO(WRITERS["csv"].render(built, "out.csv"))))
    assert (float(row["metric_t3_s_low"]), float(row["metric_t3_s_high"])) == (0.0, 6.33e-08)
    assert (float(row["done_s_median"]), float(row["done_s_ci_low"]), float(row["done_s_ci_high"])) == (2e-9, 0.0, 4e-9)
    entry = json.loads(WRITERS["github-benchmark"].render(built, "out.json"))[0]
    assert entry["range"].startswith("0–")  # in ms, from 0: not "-0.000001 … 0.000004"
