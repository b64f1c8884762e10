"""No label contradicts the numbers beside it (issue 53, items 4 and 7): `compare`'s change column names its estimate
and shows what the medians imply; a missing interval says its real cause (too few samples, or rounds that drifted
together); each figure of "What ran ahead" has its own name and interval; a step form's clocks say they are per
sample of its steps; a census's time blocked says what it is not (the saving from removing the wait)."""

from __future__ import annotations

import dataclasses
import json
import random
import statistics

from rich.console import Console

from asyncbench.report import compared, markdown, terminal, view
from asyncbench.report.github import github_benchmark
from asyncbench.results import stats
from asyncbench.results.model import OK, HarnessCost, MetricInfo, Result, Samples, Sampling, StopReason, VariantResult
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from asyncbench.verdicts import compare
from tests.support.helpers import report_of

HARNESS = HarnessCost(sync_s=0.68e-6, sync_high_s=0.7e-6, issue_s=0.1e-6, n=40)


def _variant(issue: list[float], done: list[float]) -> VariantResult:
    return VariantResult(Samples(tuple(issue), tuple(done)), stats.summarize(issue), stats.summarize(done), None)


def _printed(shown: view.ReportView) -> str:
    console = Console(width=200, record=True, color_system=None)
    terminal.print_report(shown, console)
    return " ".join(console.export_text().split())


# --- (a) compare's change column -------------------------------------------------------------------------------


def _timed(case_id: str, done: list[float]) -> Result:
    return Result(case_id, "e", "matmul", "torch", "cpu", {}, OK, variants={"v": _variant(done, done)})


def _two_runs():
    """A baseline around 62.7 ms, and a run whose times split into two modes (58-63 ms and 68-71 ms): medians 9.3%
    apart, while the Hodges–Lehmann shift over every pair of samples, what the verdict is judged by, is +6.7%."""
    rng = random.Random(3)
    base = [61.9e-3 * rng.uniform(0.9, 1.1) for _ in range(40)]
    current = [rng.choice([rng.uniform(58e-3, 63e-3), rng.uniform(68e-3, 71e-3)]) for _ in range(40)]
    return base, current, compare.compare(report_of([_timed("a", base)]), report_of([_timed("a", current)]))


def test_the_change_column_names_its_estimate_and_the_medians_change_is_shown_beside_it():
    base, current, comparison = _two_runs()
    (row,) = comparison.rows
    medians = compared.change_text(statistics.median(current) / statistics.median(base))
    shift = compared.change_text(row.ratio)
    assert medians != shift  # the case the issue met: +4.6% printed between medians 61.9 and 68.6 ms
    shown = compared.comparison(comparison)
    console = Console(width=200, record=True, color_system=None)
    terminal.print_comparison(shown, console)
    text = " ".join(console.export_text().split())
    md = "\n".join(markdown.comparison_lines(shown))
    for rendered in (text, md):
        assert medians in rendered
        assert shift in rendered
        assert "Hodges–Lehmann" in rendered  # the estimate is named, and why it differs from the medians' ratio
        assert "medians" in rendered
    header = md.split("\n")[2]
    assert "| change |" not in header  # no bare "change" column whose figure is not the medians' change


# --- (b) why there is no interval ---------------------------------------------------------------------------------


def _no_interval(n: int) -> Result:
    done = [3e-3 * (1 + 0.01 * i) for i in range(n)]  # each round slower than the last: drifted, or just few
    issue = [d / 10 for d in done]
    return Result(
        f"mm[{n}]",
        "matmul",
        "matmul",
        "jax",
        "cpu",
        {"n": n},
        OK,
        variants={"matmul": _variant(issue, done)},
        metrics={"illusion": 10.0},
        bounds={"illusion": None},
        metric_info={"illusion": MetricInfo("x", "done / issue")},
        sampling=Sampling(n, 1.0, StopReason.COUNT, None, 0.05, 1.0),
    )


def test_a_missing_interval_says_its_real_cause_drifted_rounds_not_too_few_samples():
    """`±?` and `[?]` said "too few samples" at n = 47 when the rounds had drifted together."""
    drifted, few = view.build(report_of([_no_interval(47)])), view.build(report_of([_no_interval(5)]))
    assert drifted.experiments[0].groups[0].rows[0][-2].endswith("±?")  # the done cell of 47 samples has none
    (case,) = drifted.experiments[0].cases
    assert "drifted together" in (case.sampling_note or "")
    assert "47 samples" not in (case.sampling_note or "")  # never "too few samples" of 47
    (short,) = few.experiments[0].cases
    assert "only 5 samples" in (short.sampling_note or "")
    assert "drifted" not in (short.sampling_note or "")
    # the legend names both causes, where it said "too few samples" alone
    assert "drifted together" in drifted.spread_note
    assert "too few samples" in drifted.spread_note


# --- (c) "What ran ahead": each figure its own name and interval -------------------------------------------------------


def test_the_ran_ahead_figure_says_what_it_is_beside_the_readings_own():
    draw = random.Random(1)
    issue = [300e-6 * draw.uniform(0.97, 1.03) for _ in range(24)]
    row = Result(
        "big[jax,cpu]",
        "big",
        "matmul",
        "jax",
        "cpu",
        {},
        OK,
        variants={"matmul": _variant(issue, [i * 39 for i in issue])},
        asynchronous=True,
        harness=HARNESS,
        reading="a timer without a sync is 39.0× [38.1–39.4] too optimistic",
    )
    (line,) = view.build(report_of([row])).highlights
    figure, reading = line.split("): ", 1)
    assert "beyond the harness's own 700 ns sync" in figure  # not a bare "39.00× [...]" that reads as the reading's
    assert reading == row.reading


# --- (d) a step form's clocks are per sample of its steps --------------------------------------------------------------


def _step_form(steps: int) -> Result:
    done = [10e-3 * (1 + 0.01 * (i % 5)) for i in range(30)]
    return Result(
        f"train[jax,cpu,steps={steps}]",
        "train",
        "step.py:train",
        "jax",
        "cpu",
        {"steps": steps, "sync_every": [0]},
        OK,
        variants={"sync_every=0": _variant([d * 0.98 for d in done], done)},
        metrics={"step_s_k0": 10e-3 / steps},
        bounds={"step_s_k0": (9.9e-3 / steps, 10.2e-3 / steps)},
        metric_info={"step_s_k0": MetricInfo("s", "done time per step with a wait every K steps")},
    )


def test_a_step_forms_table_says_its_times_are_per_sample_of_its_steps():
    """`done` of a sample of 20 steps sat beside per-step times (step_s_k0, blocked/step) with no unit."""
    (experiment,) = view.build(report_of([_step_form(20)])).experiments
    headers = [column.header for column in experiment.columns]
    assert "done per 20 steps" in headers
    assert "issue per 20 steps" in headers
    (case,) = experiment.cases
    assert case.bars
    assert "per sample of 20 steps" in case.bars[0]
    plain = view.build(report_of([_no_interval(30)])).experiments[0]
    assert "done" in [column.header for column in plain.columns]  # a workload whose sample is its step: as before


# --- 7: what time blocked is, and is not ------------------------------------------------------------------------------


def test_the_census_legend_says_time_blocked_is_not_what_removing_the_wait_saves():
    """2.42 ms blocked at a float(loss) line, and the step got 0.75 ms faster without it."""
    point = SyncPoint(
        "/home/me/train.py", 13, SyncKind.CONVERSION, "jax.Array.__float__", 1.0, 2.42e-3, None, None, (1,) * 6, (2.42e-3,) * 6
    )
    row = dataclasses.replace(_step_form(20), syncs={"sync_every=0": Census("sync_every=0", 6, (point,), "jax's hooks", None, 20)})
    shown = view.build(report_of([row]))
    for text in (_printed(shown), " ".join(markdown.markdown(shown).split())):
        assert "blocked/step" in text
        assert "not what removing the wait saves" in text
        assert "slowdown_k1" in text
    without = view.build(report_of([_step_form(20)]))
    assert "slowdown_k1" not in without.spread_note  # said where a census is shown


def test_the_github_benchmark_range_says_why_there_is_no_interval():
    """Its "range" said "no 95% CI (too few samples)" of 47 samples as of 5."""
    (drifted,) = json.loads(github_benchmark(view.build(report_of([_no_interval(47)]))))
    assert "drifted together" in drifted["range"]
    assert "too few samples" not in drifted["range"]
    (stepped,) = json.loads(github_benchmark(view.build(report_of([_step_form(20)]))))
    assert "each of 20 steps" in stepped["extra"]


def test_a_ratio_interval_that_excludes_1_never_prints_an_end_of_1_00():
    """A trial read "costs 1.03× [1.00–1.06]" beside "no cost shown (1.07× [1.00–1.16])": the first interval's end
    was 1.004. An end off 1 shows the side it lies on; one at 1 stays 1.00."""
    from asyncbench.results import units

    assert units.with_bounds(1.03, (1.004, 1.06), "x") == "1.03× [1.004–1.06]"
    assert units.with_bounds(0.98, (0.95, 0.9996), "x") == "0.98× [0.95–0.9996]"
    assert units.with_bounds(1.07, (1.0, 1.16), "x") == "1.07× [1.00–1.16]"
    assert units.with_bounds(1.21, (1.03, 1.6), "x") == "1.21× [1.03–1.60]"


def test_a_ratio_is_never_printed_outside_the_interval_printed_beside_it():
    """A trial read `illusion 1.00× [1.0004–1.001]`: the bounds had the decimals that show their side of 1, the value
    kept two. A value whose two decimals fall outside its printed interval takes the bounds' decimals."""
    from asyncbench.results import units

    assert units.with_bounds(1.0007, (1.0004, 1.001), "x") == "1.0007× [1.0004–1.001]"
    assert units.with_bounds(0.9996, (0.9991, 0.9998), "x") == "0.9996× [0.999–0.9998]"
    assert units.with_bounds(1.03, (1.004, 1.06), "x") == "1.03× [1.004–1.06]"  # inside already: as it was


def test_the_header_states_the_level_a_reader_recomputes_the_printed_interval_at():
    """The issue: over 3 rows the header said '99% intervals, each label one-sided at 0.33%', while each interval
    was taken at 1 − 2 × 1%/3 = 99.333%: recomputed at 99%, an interval came out narrower than the one printed."""
    rng = random.Random(5)
    runs = [[(60e-3 + 0.4e-3 * i) * rng.uniform(0.9, 1.1) for _ in range(40)] for i in range(6)]
    olds, news = runs[:3], runs[3:]
    result = compare.compare(
        report_of([_timed(name, old) for name, old in zip("abc", olds, strict=True)]),
        report_of([_timed(name, new) for name, new in zip("abc", news, strict=True)]),
    )
    shown = compared.comparison(result)
    level_text = shown.budget.split(" intervals")[0].rsplit(" ", 1)[1]
    assert level_text == "99.333%"
    level = float(level_text.rstrip("%")) / 100
    for row, old, new in zip(shown.rows, olds, news, strict=True):
        recomputed = compare.ratio_interval(old, new, level)
        assert recomputed is not None
        assert compared.interval_text(recomputed) == row.interval


def test_compare_s_table_folds_a_long_case_id_never_cuts_it():
    """As `ab`'s table did, compare's cut a case id too long for its column to 'train_step[to…' (at 110 columns)."""
    case_id = "train_step[torch,cpu,batch=64,width=1024,steps=8,compile=False]"
    base, current, _ = _two_runs()
    result = compare.compare(report_of([_timed(case_id, base)]), report_of([_timed(case_id, current)]))
    console = Console(width=110, record=True, color_system=None)  # at 80 the figures leave the id no column at all
    console.print(terminal.comparison_table(compared.comparison(result)))
    lines = [line for line in console.export_text().splitlines() if line.count("│") > 2]
    assert case_id in "".join(line.split("│")[1].strip() for line in lines)


def test_at_80_columns_compare_s_case_id_is_whole_not_folded_to_nothing():
    """At 80 columns the figures, which never wrap, took the whole width and the case column folded to nothing: the
    id was nowhere in the table. Too narrow for rich's table, the comparison is plain lines, each whole."""
    case_id = "train_step[torch,cpu,batch=64,width=1024,steps=8,compile=False]"
    base, current, _ = _two_runs()
    result = compare.compare(report_of([_timed(case_id, base)]), report_of([_timed(case_id, current)]))
    for width in (80, 100):
        console = Console(width=width, record=True, color_system=None)
        terminal.print_comparison(compared.comparison(result), console)
        assert case_id in console.export_text(), width


def test_the_github_benchmark_range_is_the_interval_itself_where_it_is_lopsided():
    """A trial's bench.json had "value": 37.41, "range": "± 3.034" for the table's 37.4 ms [36.7–42.8]: read as
    [34.4–40.4], below the least sample. A lopsided interval is written as its ends, in the value's unit; a
    balanced one keeps its ±."""
    rng = random.Random(5)
    done = sorted(37.4e-3 * rng.uniform(0.99, 1.01) for _ in range(30)) + [42.8e-3] * 6
    summary = dataclasses.replace(stats.summarize(done), median=37.41e-3, ci_low=36.7e-3, ci_high=42.8e-3)
    lopsided = Result(
        "mm",
        "e",
        "matmul",
        "torch",
        "cpu",
        {},
        OK,
        variants={"v": VariantResult(Samples(tuple(done), tuple(done)), summary, summary, None)},
    )
    (entry,) = json.loads(github_benchmark(view.build(report_of([lopsided]))))
    assert entry["range"] == "36.7–42.8"
    assert "±" not in entry["range"]
    even = dataclasses.replace(summary, ci_low=36.4e-3, ci_high=38.4e-3)
    balanced = dataclasses.replace(lopsided, variants={"v": VariantResult(Samples(tuple(done), tuple(done)), even, even, None)})
    (entry,) = json.loads(github_benchmark(view.build(report_of([balanced]))))
    assert entry["range"] == "± 1"
