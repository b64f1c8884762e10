"""Baseline comparison: verdicts from raw samples, a threshold, and what could not be compared."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import statistics

import pytest

from asyncbench.errors import InputError
from asyncbench.results import stats
from asyncbench.results.labels import Label
from asyncbench.results.model import ERROR, OK, Result, Samples, VariantResult
from asyncbench.results.schema import Report
from asyncbench.verdicts import compare, environments, margin


def _variant(samples) -> VariantResult:
    samples = tuple(samples)
    return VariantResult(Samples(samples, samples), stats.summarize(samples), stats.summarize(samples), None)


def _noisy(median: float, n: int = 60, noise: float = 0.03, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [median * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def _report(cases: dict[str, dict[str, list[float]]], environment=None, status=OK) -> Report:
    rows = tuple(
        Result(case_id, "e", "matmul", "torch", "cpu", {}, status, variants={k: _variant(v) for k, v in variants.items()})
        for case_id, variants in cases.items()
    )
    return dataclasses.replace(Report.new({}, environment or {"cpu": "x"}), results=rows)


@pytest.mark.parametrize(
    "interval, label",
    [
        ((0.98, 1.02), Label.SAME),
        ((1.01, 1.09), Label.SAME),  # surely slower, but within the margin
        ((0.92, 0.99), Label.SAME),
        ((1.2, 1.6), Label.SLOWER),
        ((0.4, 0.6), Label.FASTER),
        ((1.05, 1.3), Label.INCONCLUSIVE),  # straddles the margin
        ((0.95, 1.5), Label.INCONCLUSIVE),
        (None, Label.INCONCLUSIVE),
        ((0.85, 1.05), Label.NOT_SLOWER),  # a slowdown beyond the margin excluded, too wide to say more: a pass
        ((0.87, 0.95), Label.NOT_SLOWER),  # a head about 9% faster at a 10% margin passes (a three-way rule: INCONCLUSIVE)
    ],
)
def test_a_label_is_the_place_of_the_whole_interval_against_the_margin(interval, label):
    assert margin.label_of(interval, 0.10) == label


def test_a_change_whose_median_is_beyond_the_margin_but_whose_interval_is_not_is_not_slower():
    """+11.5% measured, surely slower than before, but not surely beyond 10%: the old test against "no difference"
    (p < 0.01 and the median beyond the margin) called it SLOWER."""
    baseline = _report({"a": {"v": _noisy(1.0, noise=0.05)}})
    current = _report({"a": {"v": _noisy(1.115, noise=0.05, seed=1)}})
    (row,) = compare.compare(baseline, current).rows
    assert row.ratio > 1.10
    assert row.ratio_ci[0] < 1.10 < row.ratio_ci[1]
    assert row.label == Label.INCONCLUSIVE


def test_a_report_compared_with_itself_is_all_same():
    report = _report({"a": {"v": _noisy(1.0)}, "b": {"x": _noisy(2.0, seed=1), "y": _noisy(3.0, seed=2)}})
    comparison = compare.compare(report, report)
    assert [r.label for r in comparison.rows] == [Label.SAME] * 3
    assert not comparison.regressions


def test_a_two_times_slower_case_is_slower_and_the_unchanged_one_same():
    baseline = _report({"a": {"v": _noisy(1.0)}, "b": {"v": _noisy(1.0, seed=5)}})
    current = _report({"a": {"v": _noisy(2.0, seed=3)}, "b": {"v": _noisy(1.0, seed=4)}})
    comparison = compare.compare(baseline, current)
    verdicts = {r.id: r.label for r in comparison.rows}
    assert verdicts == {"a": Label.SLOWER, "b": Label.SAME}
    (slower,) = comparison.regressions
    assert slower.id == "a"
    assert slower.ratio == pytest.approx(2.0, rel=0.05)
    assert slower.ratio_ci[0] > 1.10
    # the 1% false-alarm rate over two rows: 0.5% each, one-sided, so each interval is two-sided at 99%
    assert comparison.confidence == pytest.approx(1 - 2 * 0.01 / 2)


def test_three_samples_cannot_prove_a_regression():
    comparison = compare.compare(_report({"a": {"v": [1.0, 1.1, 0.9]}}), _report({"a": {"v": [2.0, 2.2, 1.8]}}))
    assert comparison.rows[0].label == Label.INCONCLUSIVE
    assert not comparison.regressions


def test_missing_cases_statuses_and_environment_changes_are_reported():
    baseline = _report({"a": {"v": _noisy(1.0)}, "gone": {"v": _noisy(1.0)}}, {"cpu": "x", "frameworks": {"torch": {"version": "2.1"}}})
    current = _report({"a": {"v": _noisy(1.0)}, "new": {"v": _noisy(1.0)}}, {"cpu": "x", "frameworks": {"torch": {"version": "2.13"}}})
    errored = dataclasses.replace(current, results=(dataclasses.replace(current.results[0], status=ERROR),))
    comparison = compare.compare(baseline, current)
    assert comparison.only_in_baseline == ("gone",)
    assert comparison.only_in_current == ("new",)
    assert comparison.environment_changes == (("frameworks.torch.version", "2.1", "2.13"),)
    lost = compare.compare(baseline, errored)
    assert lost.lost == (("a", "ok in the baseline, error now: no reason given"),)
    assert not lost.not_comparable


def test_two_reports_with_no_case_in_common_are_an_input_error():
    with pytest.raises(InputError, match="no case in common") as said:
        compare.compare(_report({"a": {"v": _noisy(1.0)}}), _report({"b": {"v": _noisy(1.0)}}))
    assert "(baseline: a; current: b)" in str(said.value)  # a whole list ends there, never '...' (a trial)
    many = {name: {"v": _noisy(1.0)} for name in "abcde"}
    with pytest.raises(InputError, match="no case in common") as said:
        compare.compare(_report(many), _report({"z": {"v": _noisy(1.0)}}))
    assert "(baseline: a, b, c and 2 more; current: z)" in str(said.value)


@pytest.mark.parametrize("text, value", [("10%", 0.10), ("5%", 0.05), ("7.5 %", 0.075), ("999%", 9.99)])
def test_thresholds_are_percentages(text, value):
    assert margin.parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["ten", "-5%", "nan", "nan%", "100000%", "", "%", "5", "0.05"])
def test_bad_thresholds_are_input_errors(text):
    with pytest.raises(InputError, match="--max-regression"):
        margin.parse_threshold(text)


@pytest.mark.parametrize("text", ["0%", "1000%", "0.0 %"])
def test_a_margin_out_of_range_is_refused_stating_the_range_ab_margin_takes(text):
    """At 0% no interval reads SAME (a config's ab_margin refuses it already); 1000% is where the range ends, and
    the message says so, as ab_margin's does."""
    from asyncbench.spec import overrides
    from tests.spec.test_config import VALID, load_text

    with pytest.raises(InputError, match=r"expected a percentage above 0% and under 1000%") as refused:
        margin.parse_threshold(text)
    assert "from 0% to 1000%" not in str(refused.value)
    with pytest.raises(InputError, match=r"above 0% and under 1000%"):
        overrides.apply_overrides(load_text(VALID), sets=[f"ab_margin={text}"])


def test_a_large_comparison_lists_the_rows_that_changed_and_counts_the_rest():
    from asyncbench.report import compared

    cases = {f"c{i}": {"v": _noisy(1.0, seed=i)} for i in range(150)}
    slower = dict(cases, c7={"v": _noisy(2.0, seed=7)})
    shown = compared.comparison(compare.compare(_report(cases), _report(slower)))
    assert [(row.id, row.label) for row in shown.rows] == [("c7", "SLOWER")]
    assert shown.notes[0].startswith("149 SAME row(s) not listed")
    small = compared.comparison(compare.compare(_report(dict(list(cases.items())[:5])), _report(dict(list(cases.items())[:5]))))
    assert len(small.rows) == 5  # a short comparison lists every row


def test_an_inconclusive_row_fails_the_comparison_unless_allowed():
    """One rule for INCONCLUSIVE: before, only SLOWER and lost cases failed `compare` and `run --baseline`."""
    baseline = _report({"a": {"v": _noisy(1.0, noise=0.05)}})
    current = _report({"a": {"v": _noisy(1.115, noise=0.05, seed=1)}})
    strict = compare.compare(baseline, current)
    assert [r.label for r in strict.rows] == [Label.INCONCLUSIVE]
    assert not strict.regressions
    assert strict.inconclusive == strict.rows
    assert strict.failed
    allowed = compare.compare(baseline, current, allow_inconclusive=True)
    assert not allowed.failed
    assert json.loads(compare.dumps(strict))["failed"] is True


def test_a_row_without_an_interval_says_how_many_samples_it_needs():
    comparison = compare.compare(_report({"a": {"v": [1.0, 1.1, 0.9]}}), _report({"a": {"v": [2.0, 2.2]}}))
    (row,) = comparison.rows
    assert row.ratio_ci is None
    assert row.label == Label.INCONCLUSIVE
    assert row.note == "no 98% interval from 2 vs 3 samples: it needs at least 7 current samples"
    assert compare.samples_needed(_report({"a": {"v": [1.0, 1.1, 0.9]}})) == 7  # P(U = 0): 1/C(10, 3) ≤ 1% < 1/C(9, 3)


def test_the_ratio_is_hodges_lehmann_on_log_times_with_few_samples_a_side():
    """A 3× slowdown measured in 6 rounds against 20: the medians' intervals needed 9 a side at the row's level."""
    base = [2.42e-3 * (1 + 0.01 * ((-1) ** i) * (i % 5)) for i in range(20)]
    slow = [7.53e-3 * (1 + 0.05 * ((-1) ** i) * (i % 3)) for i in range(6)]
    comparison = compare.compare(_report({"a": {"v": base}, "b": {"v": base}}), _report({"a": {"v": slow}, "b": {"v": base}}))
    slower, same = comparison.rows
    assert comparison.confidence == pytest.approx(0.99)  # two rows of a 1% rate: 0.5% a row, one-sided
    assert slower.label == Label.SLOWER
    differences = sorted(math.log(b) - math.log(a) for a in base for b in slow)
    assert slower.ratio == pytest.approx(math.exp(statistics.median(differences)))
    assert slower.ratio_ci[0] > 2.5
    assert same.label == Label.SAME


def test_a_baseline_merged_from_one_machines_shards_differs_in_nothing_from_a_run_there():
    here = {"hostname": "vm", "cpu": "Xeon", "python": "3.11.7", "git_sha": "a1"}
    merged = {"cpu": "Xeon", "python": "3.11.7", "machines": {"vm": dict(here)}, "sweep": {"kind": "shards"}}
    assert environments.changes(merged, here) == ()
    assert environments.changes(here, merged) == ()
    moved = {**merged, "machines": {"vm2": {**here, "hostname": "vm2", "cpu": "EPYC"}}}
    assert set(environments.changes(moved, here)) == {("cpu", "EPYC", "Xeon"), ("hostname", "vm2", "vm")}
    two = {**merged, "machines": {"vm": dict(here), "vm2": {**here, "hostname": "vm2"}}}
    assert ("machines.vm2.hostname", "vm2", None) in environments.changes(two, here)  # two machines are not one


def test_a_comparison_that_compared_nothing_fails_and_says_which_side_lacks_the_clock():
    """A gate on a clock neither file has (device_s on a CPU) compared nothing: it exited 0, a pass of nothing."""
    base, head = _report({"a": {"v": _noisy(1.0)}}), _report({"a": {"v": _noisy(1.0, seed=1)}})
    nothing = compare.compare(base, head, clock="device_s")
    assert nothing.rows == ()
    assert nothing.failed
    assert nothing.not_comparable == (("a", "no device_s samples to pair: neither file has any"),)
    assert not compare.compare(base, head).failed


def test_a_comparison_of_no_row_says_why_instead_of_a_false_alarm_rate_over_zero_rows():
    """The trial: `compare r1.json r2.json --clock device_s` on CPU results printed 'a 1% false-alarm rate over 0
    row(s): 98% intervals, each label one-sided at 1%' above an empty table. No rate is spent over no row: the
    header says there is none, no empty table or key to its columns follows, and the summary says why."""
    from rich.console import Console

    from asyncbench.report import compared, markdown, terminal

    base, head = _report({"a": {"v": _noisy(1.0)}}), _report({"a": {"v": _noisy(1.0, seed=1)}})
    view = compared.comparison(compare.compare(base, head, clock="device_s"))
    assert view.budget == "no row compared"
    assert view.summary == "nothing compared: device_s is in none of the 1 case(s) that ran ok in both files"
    console = Console(record=True, width=200)
    terminal.print_comparison(view, console)
    printed = console.export_text()
    assert "false-alarm rate" not in printed
    assert "┃ case" not in printed
    assert "shift (HL)" not in printed
    assert printed.splitlines()[-1] == view.summary
    lines = markdown.comparison_lines(view)
    assert not any(line.startswith("|") for line in lines)
    assert lines[-1].strip() == view.summary
    skipped = dataclasses.replace(base.results[0], status="skipped", variants={})
    view = compared.comparison(compare.compare(base, dataclasses.replace(head, results=(skipped,))))
    assert view.summary.startswith("nothing compared: no case ran ok in both files")


@pytest.mark.parametrize("text", ["5ms", "5 s", "ten", "5x"])
def test_a_margin_in_another_unit_is_refused_as_no_percentage_not_as_an_ambiguous_plain_number(text):
    # `ab --max-regression 5ms` was told a plain number is ambiguous; 5ms is no plain number
    with pytest.raises(InputError) as refused:
        margin.parse_threshold(text)
    said = str(refused.value)
    assert "\n" not in said
    assert "a margin is a percentage" in said
    assert "plain number" not in said


@pytest.mark.parametrize("text", ["5", "0.05", " 1e-2 "])
def test_a_plain_number_margin_is_refused_as_ambiguous(text):
    with pytest.raises(InputError, match="a plain number is ambiguous"):
        margin.parse_threshold(text)


def test_rows_whose_samples_are_one_measurement_read_twice_are_named_and_keep_their_verdicts():
    """Two run_ids, some rows' samples identical on both sides (a shard against the file merged from it, another
    case rerun): those rows compare a measurement with itself, said as a same run's are; verdicts as judged."""
    from asyncbench.report.compared import comparison
    from tests.support.helpers import ok_result, report_of

    baseline = report_of([ok_result("a[torch,cpu]"), ok_result("b[torch,cpu]")])
    current = report_of([ok_result("a[torch,cpu]"), ok_result("b[torch,cpu]", n=14)])
    assert baseline.run_id != current.run_id
    some = compare.compare(baseline, current)
    assert [row.same_samples for row in some.rows] == [True, False]
    assert not some.same_samples
    said = " ".join(comparison(some).notes)
    assert "1 row(s) hold the same samples in both files" in said
    assert "a[torch,cpu] matmul" in said
    assert "b[torch,cpu]" not in said
    every = compare.compare(baseline, report_of([ok_result("a[torch,cpu]"), ok_result("b[torch,cpu]")]))
    itself = compare.compare(baseline, baseline)
    assert every.same_samples
    assert not itself.same_samples or itself.same_run  # the same run says so once, as the same run
    assert "both files hold the same samples" in " ".join(comparison(every).notes)
    assert [row.label for row in every.rows] == [row.label for row in itself.rows]  # as the same run's: as judged
    assert json.loads(compare.dumps(every))["same_samples"] is True


@pytest.mark.parametrize(
    ("text", "forms", "readings"),
    [
        ("5", "such as 5% or 500%", "5 may mean 5%, or 500% as a fraction"),
        ("0.05", "such as 0.05% or 5%", "0.05 may mean 0.05%, or 5% as a fraction"),
        ("50", "such as 50% (", "50 may mean 50%, or 5000% as a fraction"),
    ],
)
def test_a_plain_number_margin_is_refused_in_the_users_own_number(text, forms, readings):
    """The trial: `ab --max-regression 5` was told "0.05 may mean 5% or 0.05%", a number the user never typed. The
    refusal names the number typed, its two readings, and the forms to write that are margins."""
    with pytest.raises(InputError) as refused:
        margin.parse_threshold(text)
    said = str(refused.value)
    assert forms in said, said
    assert readings in said, said
    assert "0.05" not in said or text == "0.05", said


@pytest.mark.parametrize("text", ["0", "1e300"])
def test_a_plain_number_that_is_a_margin_neither_way_is_refused_as_out_of_range(text):
    with pytest.raises(InputError, match=r"expected a percentage above 0% and under 1000%, written with its %"):
        margin.parse_threshold(text)


def test_compares_markdown_keeps_the_tools_code_spans_and_escapes_the_files_names():
    """`compare --format markdown` printed ``gate with \\`asyncbench ab\\` `` (its own code span escaped) where the
    guide says the tool's notes keep their code spans; a name from a file with backticks still reads as written."""
    base = _report({"a": {"v`x`": _noisy(1.0)}, "`only`": {"v": _noisy(1.0)}})
    head = _report({"a": {"v`x`": _noisy(1.0, seed=1)}})
    from asyncbench.report import compared, markdown

    text = "\n".join(markdown.comparison_lines(compared.comparison(compare.compare(base, head))))
    assert "`asyncbench ab`" in text
    assert "\\`asyncbench ab\\`" not in text
    assert "\\`only\\`" in text  # a case only in the baseline, named with backticks: escaped, not code
    assert "v\\`x\\`" in text  # a variant's name in its cell: escaped


def test_a_framework_only_one_run_used_is_no_difference_of_the_environment():
    """A run records the frameworks its cases used: a torch-only run against a torch-and-numpy one in the same venv
    printed 'environment differs: frameworks.numpy.version: '2.4.6' → None' (a trial). A framework both used, at
    another version or thread count, still differs."""
    both = {"cpu": "Xeon", "frameworks": {"numpy": {"version": "2.4.6"}, "torch": {"version": "2.13.0+cpu", "threads": 2}}}
    torch_only = {"cpu": "Xeon", "frameworks": {"torch": {"version": "2.13.0+cpu", "threads": 2}}}
    assert environments.changes(both, torch_only) == ()
    assert environments.changes(torch_only, both) == ()
    moved = {"cpu": "Xeon", "frameworks": {"torch": {"version": "2.13.0+cpu", "threads": 1}}}
    assert environments.changes(both, moved) == (("frameworks.torch.threads", 2, 1),)
    assert environments.changes({"cpu": "Xeon"}, torch_only) == ()
