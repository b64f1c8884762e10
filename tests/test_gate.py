"""`expect:` checks: the grammar (never eval) and the verdicts on a result."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.spec import config

from asyncbench.verdicts import gate

from asyncbench.results import stats
from asyncbench.results.model import OK, SKIPPED, Result, Samples, VariantResult
from asyncbench.workloads import WORKLOADS

SYNC_ASYNC = WORKLOADS["sync_async"]


@pytest.mark.parametrize(
    "text, quantity, op, threshold, stat, variant",
    [
        ("speedup >= 3", "speedup", ">=", 3.0, None, None),
        ("speedup>=3x", "speedup", ">=", 3.0, None, None),
        ("  t1_s < 50us ", "t1_s", "<", 50e-6, None, None),
        ("done_s.median < 0.01", "done_s", "<", 0.01, "median", None),
        ("done_s < 10ms", "done_s", "<", 0.01, "median", None),
        ("issue_s.ci_high[async] <= 2e-3", "issue_s", "<=", 2e-3, "ci_high", "async"),
        ("model_error > -5%", "model_error", ">", -0.05, None, None),
    ],
)
def test_checks_parse_into_quantity_operator_and_threshold_in_base_units(text, quantity, op, threshold, stat, variant):
    parsed = gate.parse(text, SYNC_ASYNC)
    assert (parsed.quantity, parsed.op, parsed.stat, parsed.variant) == (quantity, op, stat, variant)
    assert parsed.threshold == pytest.approx(threshold)


def test_per_variant_metrics_and_variants_of_a_pattern_are_known():
    training = WORKLOADS["training_memory"]
    assert gate.parse("host_rss_delta_mb_k0 < 64", training).quantity == "host_rss_delta_mb_k0"
    assert gate.parse("done_s.max[sync_every=4] < 1s", training).variant == "sync_every=4"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("speedp >= 3", "did you mean 'speedup'"),
        ("speedup == 3", "comparisons are <, <=, > and >="),
        ("speedup => 3", "comparisons are"),
        ("speedup >= three", "malformed check"),
        ("__import__('os').system('x') > 1", "malformed check"),
        ("done_s.mean < 1", "did you mean 'median'"),
        ("done_s[asink] < 1", "no variant 'asink'"),
        ("speedup >= 3ms", "unit 'ms' does not fit speedup"),
        ("t1_s < 5x", "unit 'x' does not fit t1_s"),
        ("speedup.median >= 3", "unknown metric"),
        (3, "as a string"),
    ],
)
def test_malformed_or_unknown_checks_say_what_was_expected(text, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        gate.parse(text, SYNC_ASYNC)


def test_a_bad_check_in_a_config_names_file_line_and_key():
    text = "experiments:\n  - workload: sync_async\n    expect:\n      - speedup >= 1\n      - speedp >= 2\n"
    with pytest.raises(config.ConfigError) as caught:
        config.loads(text, source="t.yaml")
    assert "t.yaml:5" in str(caught.value) and "experiments[0].expect[1]" in str(caught.value)


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
    return Result("id", "e", "sync_async", "torch", "cpu", {}, status, reason="why", variants=variants, metrics=metrics, bounds=bounds or {})


def _verdicts(texts, result):
    expectations = tuple(gate.parse(t, SYNC_ASYNC) for t in texts)
    return gate.evaluate(expectations, result, SYNC_ASYNC)


def test_a_check_passes_only_when_its_whole_interval_satisfies_it():
    result = _result({"speedup": 2.0}, {"speedup": (1.8, 2.2)})
    passed, failed, straddling = _verdicts(["speedup >= 1.5", "speedup >= 2.5", "speedup >= 2.1"], result)
    assert passed["verdict"] == gate.PASS and passed["value"] == 2.0 and passed["bounds"] == [1.8, 2.2]
    assert failed["verdict"] == gate.FAIL and "short by 20%" in failed["detail"] and "2.00× [1.80–2.20]" in failed["detail"]
    assert straddling["verdict"] == gate.INCONCLUSIVE and "straddles" in straddling["detail"]


def test_the_worked_example_of_the_issue_is_inconclusive_not_a_pass():
    """slowdown_item 1.2× with an interval reaching 11×: `<= 1.5` is neither shown to hold nor to fail."""
    conversion = WORKLOADS["conversion"]
    result = dataclasses.replace(_result({"slowdown_item": 1.2}, {"slowdown_item": (0.4, 11.0)}), workload="conversion")
    (check,) = gate.evaluate((gate.parse("slowdown_item <= 1.5", conversion),), result, conversion)
    assert check["verdict"] == gate.INCONCLUSIVE and gate.failed(check) and not gate.failed(check, allow_inconclusive=True)


def test_no_interval_is_inconclusive_and_a_single_measurement_is_compared_as_it_is():
    few = _result({"speedup": 2.0}, {"speedup": None})
    (check,) = _verdicts(["speedup >= 1.5"], few)
    assert check["verdict"] == gate.INCONCLUSIVE and "no 95% interval" in check["detail"]
    training = WORKLOADS["training_memory"]
    memory = dataclasses.replace(_result({"host_rss_delta_mb_k0": 3.0}), workload="training_memory")
    (check,) = gate.evaluate((gate.parse("host_rss_delta_mb_k0 < 64", training),), memory, training)
    assert check["verdict"] == gate.PASS and "one measurement" in check["detail"]


def test_a_clock_check_without_a_variant_holds_for_the_worst_variant():
    (check,) = _verdicts(["done_s.median < 0.8"], _result({}))
    assert check["verdict"] == gate.FAIL and "[sync]" in check["detail"] and check["value"] == 1.0
    (check,) = _verdicts(["done_s.median[async] < 0.8"], _result({}))
    assert check["verdict"] == gate.PASS and check["value"] == 0.5
    (check,) = _verdicts(["done_s.median < 0.8"], _result({}, sync_s=(0.1, 0.2, 0.3)))  # 3 samples: no interval
    assert check["verdict"] == gate.INCONCLUSIVE and "[sync]" in check["detail"]  # async passes; the worst verdict wins


def test_a_check_on_something_not_measured_or_a_case_that_did_not_run_fails():
    (metric,) = _verdicts(["speedup >= 1"], _result({"speedup": None}))
    (clock,) = _verdicts(["device_s.median < 1"], _result({}))
    assert metric["verdict"] == clock["verdict"] == gate.NOT_MEASURED
    assert "not measured" in metric["detail"] and "not measured" in clock["detail"]
    (skipped,) = _verdicts(["speedup >= 1"], _result({}, status=SKIPPED))
    assert skipped["verdict"] == gate.NOT_MEASURED and gate.failed(skipped, allow_inconclusive=True)
    assert "the case was skipped: why" in skipped["detail"]


@pytest.mark.parametrize(
    "op, interval, threshold, verdict",
    [
        ("<", (1.0, 2.0), 3.0, gate.PASS), ("<", (1.0, 3.0), 3.0, gate.INCONCLUSIVE), ("<", (3.0, 4.0), 3.0, gate.FAIL),
        ("<=", (1.0, 3.0), 3.0, gate.PASS), (">", (3.0, 4.0), 3.0, gate.INCONCLUSIVE), (">=", (3.0, 4.0), 3.0, gate.PASS),
        (">=", (1.0, 2.9), 3.0, gate.FAIL),
    ],
)
def test_verdict_of_an_interval(op, interval, threshold, verdict):
    assert gate.verdict_of(op, interval, threshold) == verdict


def test_a_far_miss_is_said_as_a_multiple_not_in_e_notation():
    (check,) = _verdicts(["t1_s < 1ns"], _result({"t1_s": 3.76e-3}, {"t1_s": (3.7e-3, 3.8e-3)}))
    assert check["verdict"] == gate.FAIL and "3760000× the threshold" in check["detail"] and "e+" not in check["detail"]
