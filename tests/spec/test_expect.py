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
        ("speedup.median >= 3", "unknown metric"),
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
