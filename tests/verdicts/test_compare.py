"""Baseline comparison: verdicts from raw samples, a threshold, and what could not be compared."""

from __future__ import annotations

import dataclasses
import random

import pytest

from asyncbench.errors import InputError
from asyncbench.results import schema as results
from asyncbench.results import stats
from asyncbench.results.model import ERROR, OK, Report, Result, Samples, VariantResult
from asyncbench.verdicts import compare


def _variant(samples) -> VariantResult:
    samples = tuple(samples)
    return VariantResult(Samples(samples, samples), stats.summarize(samples), stats.summarize(samples), None)


def _noisy(median: float, n: int = 30, noise: float = 0.03, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [median * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def _report(cases: dict[str, dict[str, list[float]]], environment=None, status=OK) -> Report:
    rows = tuple(
        Result(case_id, "e", "matmul", "torch", "cpu", {}, status, variants={k: _variant(v) for k, v in variants.items()})
        for case_id, variants in cases.items()
    )
    return dataclasses.replace(results.new_report({}, environment or {"cpu": "x"}), results=rows)


@pytest.mark.parametrize(
    "ratio, p, verdict",
    [
        (1.0, 1.0, compare.SAME),
        (1.08, 1e-9, compare.SAME),  # significant but within the threshold
        (0.93, 1e-9, compare.SAME),
        (1.5, 1e-9, compare.SLOWER),
        (0.5, 1e-9, compare.FASTER),
        (1.5, 0.2, compare.INCONCLUSIVE),  # beyond the threshold, not distinguishable from noise
        (1.5, None, compare.INCONCLUSIVE),
    ],
)
def test_verdict_needs_both_the_threshold_and_significance(ratio, p, verdict):
    assert compare.label(ratio, p, 0.10) == verdict


def test_a_report_compared_with_itself_is_all_same():
    report = _report({"a": {"v": _noisy(1.0)}, "b": {"x": _noisy(2.0, seed=1), "y": _noisy(3.0, seed=2)}})
    comparison = compare.compare(report, report)
    assert [r.label for r in comparison.rows] == [compare.SAME] * 3
    assert not comparison.regressions


def test_a_two_times_slower_case_is_slower_and_the_unchanged_one_same():
    baseline = _report({"a": {"v": _noisy(1.0)}, "b": {"v": _noisy(1.0, seed=5)}})
    current = _report({"a": {"v": _noisy(2.0, seed=3)}, "b": {"v": _noisy(1.0, seed=4)}})
    comparison = compare.compare(baseline, current)
    verdicts = {r.id: r.label for r in comparison.rows}
    assert verdicts == {"a": compare.SLOWER, "b": compare.SAME}
    (slower,) = comparison.regressions
    assert slower.id == "a"
    assert slower.ratio == pytest.approx(2.0, rel=0.05)
    assert slower.p_value < compare.SIGNIFICANCE


def test_three_samples_cannot_prove_a_regression():
    comparison = compare.compare(_report({"a": {"v": [1.0, 1.1, 0.9]}}), _report({"a": {"v": [2.0, 2.2, 1.8]}}))
    assert comparison.rows[0].label == compare.INCONCLUSIVE
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
    with pytest.raises(InputError, match="no case in common"):
        compare.compare(_report({"a": {"v": _noisy(1.0)}}), _report({"b": {"v": _noisy(1.0)}}))


@pytest.mark.parametrize("text, value", [("10%", 0.10), ("5", 0.05), ("7.5 %", 0.075), ("0%", 0.0)])
def test_thresholds_are_percentages(text, value):
    assert compare.parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["ten", "-5%", "nan", "100000%", ""])
def test_bad_thresholds_are_input_errors(text):
    with pytest.raises(InputError, match="--max-regression"):
        compare.parse_threshold(text)


def test_p_values_computed_together_are_each_the_p_of_its_own_scipy_call():
    """Batched by size and ties, as scipy's 'auto' picks its method: small samples take the exact test, tied or
    large ones the asymptotic; each p must be what a call of its own gives."""
    from scipy.stats import mannwhitneyu

    rng = random.Random(7)
    pairs = [([1.0, 2.5, 2.0], [1.5, 3.0, 3.5, 4.0]), ([1.1, 1.2, 1.3], [1.4, 1.5, 1.6, 1.7])]  # no ties: the exact test
    pairs.append(([1.0, 1.0, 2.0], [1.0, 3.0, 3.0, 4.0]))  # the same sizes with ties: asymptotic, not exact
    for n_old, n_new in [(6, 6), (6, 6), (30, 25), (30, 25), (9, 40)]:
        old = [round(rng.uniform(1, 2), 2) for _ in range(n_old)]
        new = [round(rng.uniform(1, 2.2), 2) for _ in range(n_new)]
        pairs.append((old, new))
    pairs.append(([1.0], [2.0, 3.0]))  # too few to test
    found = compare.p_values(pairs)
    for (old, new), p in zip(pairs[:-1], found[:-1], strict=True):
        assert p == pytest.approx(float(mannwhitneyu(new, old, alternative="two-sided").pvalue), rel=1e-12)
    assert found[-1] is None


def test_a_large_comparison_lists_the_rows_that_changed_and_counts_the_rest():
    from asyncbench.report import compared

    cases = {f"c{i}": {"v": _noisy(1.0, seed=i)} for i in range(150)}
    slower = dict(cases, c7={"v": _noisy(2.0, seed=7)})
    shown = compared.comparison(compare.compare(_report(cases), _report(slower)))
    assert [(row.id, row.label) for row in shown.rows] == [("c7", "SLOWER")]
    assert shown.notes[0].startswith("149 SAME row(s) not listed")
    small = compared.comparison(compare.compare(_report(dict(list(cases.items())[:5])), _report(dict(list(cases.items())[:5]))))
    assert len(small.rows) == 5  # a short comparison lists every row
