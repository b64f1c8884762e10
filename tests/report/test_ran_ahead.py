"""What a report says ran ahead, and numbers that read right (issue 33): "What ran ahead" lists only the rows that
did, beyond the harness's own sync; a row that could not be judged is said so with why; a table never shows a ±
that reaches below zero, nor a negative time, and the same bytes read the same in the table and the metric line."""

from __future__ import annotations

import dataclasses
import random
import statistics

from rich.console import Console

from asyncbench.report import cells, markdown, terminal, view
from asyncbench.results import stats, units
from asyncbench.results.model import OK, HarnessCost, Memory, MetricInfo, Result, Samples, VariantResult
from asyncbench.verdicts import outcome
from asyncbench.workloads import BUILT_IN
from tests.support.helpers import report_of

HARNESS = HarnessCost(sync_s=0.68e-6, sync_high_s=0.7e-6, issue_s=0.1e-6, n=40)


def _variant(issue: list[float], done: list[float], rss: int | None = None) -> VariantResult:
    return VariantResult(
        Samples(tuple(issue), tuple(done)), stats.summarize(issue), stats.summarize(done), None, Memory(host_rss_peak_delta_bytes=rss)
    )


def _row(name: str, backend: str, issue: list[float], done: list[float], asynchronous: bool, reading: str, **fields) -> Result:
    return Result(
        f"{name}[{backend},cpu]",
        name,
        "matmul",
        backend,
        "cpu",
        {},
        OK,
        variants={"matmul": _variant(issue, done)},
        asynchronous=asynchronous,
        harness=HARNESS,
        reading=reading,
        **fields,
    )


def _jittered(seed: int, n: int, around: float) -> list[float]:
    draw = random.Random(seed)
    return [around * draw.uniform(0.97, 1.03) for _ in range(n)]


def rows() -> list[Result]:
    """The issue's four: a no-op step on JAX (1.35×, all of it the harness's sync), a numpy 16² product (1.09×),
    a JAX matmul 39× from rounds with an interval, and the same from --quick's 20 rounds that drifted (none)."""
    noop_issue = _jittered(1, 24, 2e-6)
    noop = _row("noop", "jax", noop_issue, [i + 0.7e-6 for i in noop_issue], True, "the no-op's reading")
    small_issue = _jittered(2, 24, 10e-6)
    numpy = _row("small", "numpy", small_issue, [i * 1.09 for i in small_issue], False, "numpy's reading")
    big_issue = _jittered(3, 24, 300e-6)
    jax = _row("big", "jax", big_issue, [i * 39 for i in big_issue], True, "the loop returns after 300 µs ...")
    quick = _row("quick", "jax", [300e-6] * 20, [300e-6 * (30 + i) for i in range(20)], True, "quick's reading")
    return [noop, numpy, jax, quick]


def _printed(report) -> str:
    console = Console(width=200, record=True, color_system=None)
    terminal.print_report(view.build(report), console)
    return console.export_text()


def test_what_ran_ahead_lists_only_the_rows_that_did_beyond_the_harness():
    built = view.build(report_of(rows()))
    figure = "done / issue 38.99768× [38.99763–38.99769] beyond the harness's own 700 ns sync"  # its ends apart (units)
    assert built.highlights == (f"big jax cpu (ran ahead: {figure}): the loop returns after 300 µs ...",)
    text = _printed(report_of(rows()))
    heading = text.split("What ran ahead", 1)[1].split("\n\n", 1)[0]
    assert "big jax cpu" in heading
    assert "noop" not in heading
    assert "small numpy" not in heading


def test_a_row_that_could_not_be_judged_is_said_so_with_why_never_left_out():
    built = view.build(report_of(rows()))
    (line,) = built.unjudged
    assert line.startswith("quick jax cpu (matmul): no 95% interval at n = 20")
    for text in (_printed(report_of(rows())), markdown.markdown(built)):
        heading = text.split("What ran ahead", 1)[1].split("\n\n", 1)[0]
        assert "not judged" in heading
        assert "quick jax cpu (matmul): no 95% interval at n = 20" in heading
    alone = _printed(report_of([rows()[3]]))  # nothing ran ahead: the heading still says what was not judged
    assert "What ran ahead (none shown: no row" in alone
    assert "none shown to run ahead, 1 not judged (no interval)" in outcome.headline(report_of([rows()[3]]))
    assert "1 ran ahead" in outcome.headline(report_of(rows()))


def test_a_ran_ahead_line_of_a_row_of_several_variants_names_the_variant_its_figure_is_of():
    """A trial's `multi_device jax cpu (ran ahead: done / issue 16.28× ...)` was its `first` variant's figure (`second`
    gave 27.3×), unnamed, where the lines not judged name theirs: a row of several variants now names it."""
    issue = _jittered(4, 24, 300e-6)
    several = dataclasses.replace(
        rows()[2],
        id="two[jax,cpu]",
        experiment="two",
        variants={"first": _variant(issue, [i * 16 for i in issue]), "second": _variant(issue, [i * 27 for i in issue])},
    )
    built = view.build(report_of([several, rows()[2]]))
    first, single = built.highlights
    assert first.startswith("two jax cpu (ran ahead in first: done / issue 15.99"), first
    assert single.startswith("big jax cpu (ran ahead: done / issue"), single  # one variant: nothing to tell apart
    for text in (_printed(report_of([several])), markdown.markdown(built)):
        assert "two jax cpu (ran ahead in first: done / issue" in text


def test_a_line_not_judged_calls_its_figure_done_over_issue_not_the_illusion_metric():
    """A trial's `nosync jax cpu (sync_every=4): no 95% interval ...; its illusion 1.00×` sat beside the row's
    `illusion 1.20×` (done / issue of sync_every=0): the variant's figure is named done / issue, not the metric's name."""
    (line,) = view.build(report_of(rows())).unjudged
    assert "its illusion" not in line
    assert "; its done / issue " in line


def test_the_matmul_reading_judges_beyond_the_harness_and_says_when_it_cannot():
    reading = BUILT_IN["matmul"].reading
    noop, _, _, quick = rows()

    def with_illusion(result: Result) -> Result:
        values = [d / i for i, d in zip(result.variants["matmul"].samples.issue_s, result.variants["matmul"].samples.done_s, strict=False)]
        metrics = {"issue_s": 1e-6, "done_s": 1e-6, "illusion": statistics.median(values)}
        return dataclasses.replace(result, metrics={**metrics, "gflops": 1.0}, bounds={"illusion": stats.median_ci(values)})

    said = reading(with_illusion(noop))
    assert with_illusion(noop).bounds["illusion"][0] > 1.2  # the raw illusion's interval is above the line ...
    assert "nothing runs ahead" in said
    assert "beyond the harness's own 700 ns sync" in said
    assert "no 95% interval at n = 20" in reading(with_illusion(quick))


def _numbers_row() -> Result:
    info = {"t3_s": MetricInfo("s"), "host_rss_delta_mb_k0": MetricInfo("MiB")}
    done = [1.0e-3] * 3 + [1.002e-3] * 3 + [1.2e-3, 1.3e-3, 1.5e-3, 2e-3, 3e-3, 5e-3]  # a long tail above the median
    return Result(
        "n[torch,cpu]",
        "n",
        "sync_async",
        "torch",
        "cpu",
        {},
        OK,
        variants={"sync": _variant(done, done, rss=4096)},
        metrics={"t3_s": -4.51e-6, "host_rss_delta_mb_k0": 4096 / 2**20},
        bounds={"t3_s": (-5.8e-6, 5.78e-7), "host_rss_delta_mb_k0": (4096 / 2**20, 4096 / 2**20)},
        metric_info=info,
        asynchronous=False,
    )


def test_a_table_shows_a_lopsided_interval_as_its_bounds_and_no_negative_time():
    row = _numbers_row()
    cell = cells.spread(row.variants["sync"].done_s)
    low, high = row.variants["sync"].done_s.ci_low, row.variants["sync"].done_s.ci_high
    assert high - row.variants["sync"].done_s.median > 1.5 * (row.variants["sync"].done_s.median - low)  # lopsided
    assert cell == "1.10 ms [1.00–2.00]"  # not ±45%: the interval reaches 0.1 ms below the median and 0.9 ms above
    line = cells.metric_line(row)
    assert "t3 ~0 [≤ 578 ns]" in line
    assert "-" not in line
    assert "−" not in line
    assert units.ZERO_NOTE in view.build(report_of([row])).spread_note  # `~0` explained once


def test_the_same_bytes_read_the_same_in_the_table_and_the_metric_line():
    row = _numbers_row()
    assert cells.memory_cell(row.variants["sync"]) == "+4.00 KiB"
    assert "host_rss_delta_mb_k0 4.00 KiB" in cells.metric_line(row)
