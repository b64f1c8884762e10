"""`expect:` verdicts: pass, fail, inconclusive or not measured from the 95% interval of what is checked."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.results import budget, stats
from asyncbench.results.model import OK, SKIPPED, Check, Result, Samples, Settings, VariantResult, Verdict
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from asyncbench.workloads import BUILT_IN

SYNC_ASYNC = BUILT_IN["sync_async"]


def _result(metrics, bounds=None, sync_s=(1.0, 1.1, 0.9, 1.05, 0.95, 1.0), async_s=(0.5, 0.6, 0.4, 0.55, 0.45, 0.5), status=OK) -> Result:
    variants = {
        name: VariantResult(
            samples=Samples(issue_s=samples, done_s=samples),
            issue_s=stats.summarize(samples),
            done_s=stats.summarize(samples),
            device_s=None,
        )
        for name, samples in (("sync", sync_s), ("async", async_s))
    }
    result = Result(
        "id", "e", "sync_async", "torch", "cpu", {}, status, reason="why", variants=variants, metrics=metrics, bounds=bounds or {}
    )
    return SYNC_ASYNC.describe(result, reading=False)


def _verdicts(texts, result):
    expectations = tuple(expect.parse(t, SYNC_ASYNC) for t in texts)
    return checks.evaluate(expectations, result)


def test_a_check_passes_only_when_its_whole_interval_satisfies_it():
    result = _result({"speedup": 2.0}, {"speedup": (1.8, 2.2)})
    passed, failed, straddling = _verdicts(["speedup >= 1.5", "speedup >= 2.5", "speedup >= 2.1"], result)
    assert passed == Check("speedup >= 1.5", Verdict.PASS, passed.detail, 2.0, (1.8, 2.2), confidence=0.95)
    assert failed.verdict == Verdict.FAIL
    assert "short by 20%" in failed.detail
    assert "2.00× [1.80–2.20]" in failed.detail
    assert straddling.verdict == Verdict.INCONCLUSIVE
    assert "straddles" in straddling.detail


def test_the_worked_example_of_the_issue_is_inconclusive_not_a_pass():
    """slowdown_item 1.2× with an interval reaching 11×: `<= 1.5` is neither shown to hold nor to fail."""
    conversion = BUILT_IN["conversion"]
    result = conversion.describe(
        dataclasses.replace(_result({"slowdown_item": 1.2}, {"slowdown_item": (0.4, 11.0)}), workload="conversion")
    )
    (check,) = checks.evaluate((expect.parse("slowdown_item <= 1.5", conversion),), result)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert checks.failed(check)
    assert not checks.failed(check, allow_inconclusive=True)


def test_no_interval_is_inconclusive_and_a_single_measurement_is_compared_as_it_is():
    few = _result({"speedup": 2.0}, {"speedup": None})
    (check,) = _verdicts(["speedup >= 1.5"], few)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "no 95% interval" in check.detail
    training = BUILT_IN["training_memory"]
    memory = training.describe(dataclasses.replace(_result({"host_rss_delta_mb_k0": 3.0}), workload="training_memory"), reading=False)
    (check,) = checks.evaluate((expect.parse("host_rss_delta_mb_k0 < 64", training),), memory)
    assert check.verdict == Verdict.PASS
    assert "one measurement" in check.detail
    assert "3.00 MiB" in check.detail  # the unit stored with the result


def test_a_clock_check_without_a_variant_holds_for_the_worst_variant():
    (check,) = _verdicts(["done_s.median < 0.8"], _result({}))
    assert (check.verdict, check.value) == (Verdict.FAIL, 1.0)
    assert "[sync]" in check.detail
    (check,) = _verdicts(["done_s.median[async] < 0.8"], _result({}))
    assert (check.verdict, check.value) == (Verdict.PASS, 0.5)
    (check,) = _verdicts(["done_s.median < 0.8"], _result({}, sync_s=(0.1, 0.2, 0.3)))  # 3 samples: no interval
    assert check.verdict == Verdict.INCONCLUSIVE  # async passes; the worst verdict wins
    assert "[sync]" in check.detail


def test_a_check_on_something_not_measured_or_a_case_that_did_not_run_fails():
    (metric,) = _verdicts(["speedup >= 1"], _result({"speedup": None}))
    (clock,) = _verdicts(["device_s.median < 1"], _result({}))
    assert metric.verdict == Verdict.NOT_MEASURED
    assert clock.verdict == Verdict.NOT_MEASURED
    assert "not measured" in metric.detail
    assert "not measured" in clock.detail
    (skipped,) = _verdicts(["speedup >= 1"], _result({}, status=SKIPPED))
    assert skipped.verdict == Verdict.NOT_MEASURED
    assert checks.failed(skipped, allow_inconclusive=True)
    assert "the case was skipped: why" in skipped.detail


@pytest.mark.parametrize(
    "op, interval, threshold, verdict",
    [
        ("<", (1.0, 2.0), 3.0, Verdict.PASS),
        ("<", (1.0, 3.0), 3.0, Verdict.INCONCLUSIVE),
        ("<", (3.0, 4.0), 3.0, Verdict.FAIL),
        ("<=", (1.0, 3.0), 3.0, Verdict.PASS),
        (">", (3.0, 4.0), 3.0, Verdict.INCONCLUSIVE),
        (">=", (3.0, 4.0), 3.0, Verdict.PASS),
        (">=", (1.0, 2.9), 3.0, Verdict.FAIL),
    ],
)
def test_verdict_of_an_interval(op, interval, threshold, verdict):
    assert checks.verdict_of(op, interval, threshold) == verdict


def test_a_far_miss_is_said_as_a_multiple_not_in_e_notation():
    (check,) = _verdicts(["t1_s < 1ns"], _result({"t1_s": 3.76e-3}, {"t1_s": (3.7e-3, 3.8e-3)}))
    assert check.verdict == Verdict.FAIL
    assert "3760000× the threshold" in check.detail
    assert "e+" not in check.detail


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99, 0.998, 0.9995, 0.99999])
def test_the_rounds_a_median_interval_needs_are_the_order_statistics_own(confidence):
    needed = budget.rounds_for_median(confidence)
    assert stats.order_rank(needed, confidence) is not None
    assert stats.order_rank(needed - 1, confidence) is None


def test_a_case_with_checks_takes_the_rounds_their_intervals_need_at_their_level():
    """--quick's 1 s cap stopped a case after 6 rounds, 4 short of a 99.8% interval: `done_s.median > 0` was left
    INCONCLUSIVE. Sampling now never stops (noise, max_time_s) before the checks can be decided."""
    shared = budget.Budget(0.01, 1, 6, 20)  # one check, looks at 6, 9, 14, 20 and one more: 0.2% a look
    clock = (expect.parse("done_s.median > 0", SYNC_ASYNC),)
    named = (expect.parse("done_s.median[sync] > 0", SYNC_ASYNC),)
    assert checks.rounds_needed(clock, shared, ["sync"]) == 10  # 99.8%
    assert checks.rounds_needed(clock, shared, ["a", "b", "c"]) == 12  # over three variants: 99.93% each
    assert checks.rounds_needed(named, shared, ["a", "b", "c"]) == 10
    assert checks.rounds_needed((expect.parse("done_s.max > 0", SYNC_ASYNC),), shared, ["sync"]) == 1  # a fact, no interval
    quick = Settings(warmup=1, min_samples=6, max_samples=20, max_time_s=0.2)
    raised = checks.enough_rounds(quick, clock, shared, ["sync"])
    assert (raised.min_samples, raised.max_samples, raised.max_time_s) == (10, 20, 0.2)
    assert checks.enough_rounds(quick, (), shared, ["sync"]) == quick  # no checks: nothing to wait for
    capped = checks.enough_rounds(dataclasses.replace(quick, max_samples=8), clock, shared, ["sync"])
    assert capped.min_samples == 8  # max_samples stays a hard cap...
    result = _result({}, sync_s=(1.0,) * 8, async_s=(1.0,) * 8)  # two variants: 99.9% each
    (check,) = checks.evaluate(clock, result, shared)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "no 99.9% interval from 8 rounds (it needs 11)" in check.detail  # ...and the row says what it cost
