"""An INCONCLUSIVE row against a baseline says its own cause in the exit reason, as its row does: a neighbour's
row is not one more rounds can decide. `run --baseline`'s exit reason, `compare`'s summary and `ab`'s exit reason
say the same words for the same cause (verdicts.undecided)."""

from __future__ import annotations

import random

from asyncbench.errors import EXIT_GATE
from asyncbench.report import compared
from asyncbench.results import stats
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.results.reference import Reference
from asyncbench.verdicts import compare, outcome, paired, undecided
from tests.support.helpers import report_of

WORK = "float32 256×256 product ×4 on numpy cpu"


def _case(case_id: str, scale_ms: float, seed: int, pressure: float, rounds: int = 30) -> Result:
    """A case of `rounds` rounds around `scale_ms`, with a steady reference read at CPU
    `pressure` (others_cpu the same: a neighbour past BUSY)."""
    draw = random.Random(seed)
    done = tuple(scale_ms * 1e-3 * (1 + draw.gauss(0, 0.01)) for _ in range(rounds))
    reference = Reference(WORK, tuple(1e-3 * (1 + draw.gauss(0, 0.01)) for _ in range(60)), cpu_pressure=pressure, others_cpu=pressure)
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    return Result(case_id, "chain", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)


def _inconclusive_reason(judged: outcome.Outcome) -> str:
    (reason,) = [r for r in judged.reasons if "INCONCLUSIVE against the baseline" in r]
    return reason


def test_a_neighbours_row_is_not_one_more_rounds_may_decide():
    """The trial: rows said 'a neighbour shared the cores … no verdict on this evidence'; the exit reason said 'the
    interval reaches across the margin, or there is none … more rounds via max_time_s may decide it'."""
    now = report_of([_case("a", 5.0, 2, pressure=0.6)])
    comparison = compare.compare(report_of([_case("a", 2.0, 1, pressure=0.02)]), now)
    (row,) = comparison.rows
    assert row.label == Label.INCONCLUSIVE
    assert row.note is not None
    assert "a neighbour shared the cores" in row.note
    judged = outcome.judge(now, comparison=comparison)
    assert judged.code == EXIT_GATE
    reason = _inconclusive_reason(judged)
    assert reason.startswith("1 variant INCONCLUSIVE against the baseline: a chain; a neighbour shared the cores in either run")
    assert "more rounds cannot decide it" in reason
    assert "max_time_s" not in reason
    assert "reaches across" not in reason
    assert reason.endswith("--allow-inconclusive lets it pass")
    summary = compared.comparison(comparison).summary  # `compare` says the same cause in the same words
    assert f"INCONCLUSIVE fails the gate ({undecided.reason(comparison.inconclusive)})" in summary
    assert "a neighbour shared the cores in either run; more rounds cannot decide it" in summary


def test_rows_of_different_causes_are_each_counted_with_their_own_remedy():
    base = report_of([_case("a", 2.0, 1, pressure=0.02), _case("b", 2.0, 3, pressure=0.02, rounds=3)])
    now = report_of([_case("a", 5.0, 2, pressure=0.6), _case("b", 2.0, 4, pressure=0.02, rounds=3)])  # b: too few samples
    comparison = compare.compare(base, now)
    assert [r.label for r in comparison.rows] == [Label.INCONCLUSIVE, Label.INCONCLUSIVE]
    reason = _inconclusive_reason(outcome.judge(now, comparison=comparison))
    assert f"1 where {undecided.NEIGHBOUR.why}: {undecided.NEIGHBOUR.remedy}" in reason
    assert f"1 where {undecided.INTERVAL.why}: more rounds via max_time_s may decide it" in reason


def test_an_interval_that_cannot_tell_is_said_in_the_same_words_by_run_baseline_compare_and_ab():
    few = _case("a", 2.0, 1, pressure=0.02, rounds=3)
    comparison = compare.compare(report_of([few]), report_of([few]))
    reason = _inconclusive_reason(outcome.judge(report_of([few]), comparison=comparison))
    assert f"; {undecided.INTERVAL.why}; more rounds via max_time_s may decide it" in reason
    assert undecided.INTERVAL.why in compared.comparison(comparison).summary
    side = Side("base", "abc", "/usr/bin/python3", "3.11.7", {}, {})
    unsure = PairedCase("a", "ok", ratios=(PairedRatio("v", "variant", "s", 1e-3, 1e-3, 1.04, (0.99, 1.09), Label.INCONCLUSIVE),))
    ab = ABReport("2026-11-23T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (unsure,))
    (said,) = [r for r in paired.judge(ab).reasons if "INCONCLUSIVE" in r]
    assert f"INCONCLUSIVE ({undecided.INTERVAL.why})" in said
