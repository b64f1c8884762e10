"""`expect:` checks: the grammar (never eval), checked against a workload's declarations."""

from __future__ import annotations

import pytest

from asyncbench.spec import config, expect
from asyncbench.workloads import BUILT_IN

SYNC_ASYNC = BUILT_IN["sync_async"]


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
    parsed = expect.parse(text, SYNC_ASYNC)
    assert (parsed.quantity, parsed.op, parsed.stat, parsed.variant) == (quantity, op, stat, variant)
    assert parsed.threshold == pytest.approx(threshold)


def test_per_variant_metrics_and_variants_of_a_pattern_are_known():
    training = BUILT_IN["training_memory"]
    assert expect.parse("host_rss_delta_mb_k0 < 64", training).quantity == "host_rss_delta_mb_k0"
    assert expect.parse("done_s.max[sync_every=4] < 1s", training).variant == "sync_every=4"


def _step_form():
    from asyncbench.workloads.step_form import step

    @step(sync_every=(0, 4, 1))
    def train(backend, device, params):
        return lambda: None

    return train


@pytest.mark.parametrize("workload", [_step_form(), BUILT_IN["training_memory"]], ids=["step form", "training_memory"])
def test_a_family_s_placeholder_is_refused_and_a_misspelling_gets_a_real_name(workload):
    family = next(m.name for m in workload.metrics if m.name.endswith("_kK"))  # slowdown_kK, epoch_s_kK
    real = family.removesuffix("_kK")
    with pytest.raises(ValueError, match=f"'{family}' declares one metric per variant.*{real}_k1: the variant sync_every=1's"):
        expect.parse(f"{family} <= 1.5", workload)  # no run measures it: it could only ever read *not measured*
    misspelt = real.replace("o", "", 1) if "o" in real else real[:-1]
    with pytest.raises(ValueError, match=f"did you mean '{real}_k1'") as caught:
        expect.parse(f"{misspelt}_k1 <= 1.5", workload)
    assert "K its sync_every" in str(caught.value)
    with pytest.raises(ValueError, match=f"did you mean '{real}_k4'"):
        expect.parse(f"{misspelt}_k4 <= 1.5", workload)
    assert expect.parse(f"{real}_k4 <= 1.5", workload).quantity == f"{real}_k4"


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
        # a real metric with a clock's statistic or variant: say what is wrong, never "did you mean" the name typed
        ("speedup.median >= 3", "'speedup' is a metric, which takes no statistic: write 'speedup >= 3' (a statistic follows a clock"),
        ("speedup[async] >= 3", "'speedup' is a metric, which takes no variant: write 'speedup >= 3'"),
        (3, "as a string"),
    ],
)
def test_malformed_or_unknown_checks_say_what_was_expected(text, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        expect.parse(text, SYNC_ASYNC)


def test_a_bad_check_in_a_config_names_file_line_and_key():
    text = "experiments:\n  - workload: sync_async\n    expect:\n      - speedup >= 1\n      - speedp >= 2\n"
    with pytest.raises(config.ConfigError) as caught:
        config.loads(text, source="t.yaml")
    assert "t.yaml:5" in str(caught.value)
    assert "experiments[0].expect[1]" in str(caught.value)


@pytest.mark.parametrize(
    "text, fragment",
    [
        # a trial's `validate` said ok to all three: no measurement can fall on their wrong side
        ("t1_s < 0ms", "'t1_s < 0ms' can never pass: t1_s is a time, never below 0"),
        ("speedup <= 0", "'speedup <= 0' can never pass: speedup is a ratio, always above 0"),
        ("speedup >= -1", "'speedup >= -1' can never fail: speedup is a ratio, always above 0"),
        ("speedup > 0", "can never fail: speedup is a ratio"),
        ("t1_s > -1ms", "can never fail: t1_s is a time"),
        ("done_s.median >= 0", "'done_s.median >= 0' can never fail: done_s.median is a time, never below 0"),
        ("issue_s.min[async] < -2us", "can never pass: issue_s.min is a time"),
    ],
)
def test_a_check_no_measurement_can_fall_on_the_wrong_side_of_is_refused_in_one_line(text, fragment):
    with pytest.raises(ValueError) as caught:
        expect.parse(text, SYNC_ASYNC)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_size_below_0_is_refused_and_a_declared_difference_or_a_measured_0_is_not():
    training = BUILT_IN["training_memory"]
    with pytest.raises(ValueError, match="can never pass: device_peak_mb_k0 is a size, never below 0"):
        expect.parse("device_peak_mb_k0 < 0", training)
    # a difference of two (declared signed) may lie below 0; a time or a size may be 0 itself; other units are left alone
    assert expect.parse("host_rss_delta_mb_k0 < 0", training).threshold == 0
    assert expect.parse("t3_s < 0", SYNC_ASYNC).threshold == 0
    assert expect.parse("t1_s <= 0", SYNC_ASYNC).op == "<="
    assert expect.parse("done_s.iqr > 0", SYNC_ASYNC).stat == "iqr"
    assert expect.parse("model_error > -5%", SYNC_ASYNC).threshold == pytest.approx(-0.05)
    assert expect.parse("speedup > 0.5", SYNC_ASYNC).threshold == 0.5
    assert expect.parse("overlap_saved_s > -1ms", BUILT_IN["copy_overlap"]).threshold == pytest.approx(-1e-3)


def test_an_impossible_check_in_a_config_is_refused_at_validate():
    text = "experiments:\n  - workload: sync_async\n    expect:\n      - speedup >= 1\n      - speedup >= -1\n"
    with pytest.raises(config.ConfigError) as caught:
        config.loads(text, source="t.yaml")
    assert "t.yaml:5" in str(caught.value)
    assert "can never fail" in str(caught.value)
