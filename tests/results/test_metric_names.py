"""The metrics a built-in workload (and the step form) writes, as the results layer holds a stored result to them
(results.metric_names), are those the workloads declare: the table cannot drift from them."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.results import metric_names
from asyncbench.results.fields import At
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.step_reading import StepForm


def test_each_built_in_workload_s_metrics_are_its_declared_ones_and_those_it_wrote_before() -> None:
    assert set(metric_names.BUILT_IN_METRICS) == set(BUILT_IN)
    for name, workload in BUILT_IN.items():
        declared = {metric.name for metric in workload.metrics}
        assert declared <= metric_names.BUILT_IN_METRICS[name], name
        assert metric_names.BUILT_IN_METRICS[name] - declared <= {"speedup_ci_low", "speedup_ci_high"}, name


def test_the_step_form_s_metrics_are_its_declared_ones() -> None:
    assert {metric.name for metric in StepForm.metrics} == metric_names.STEP_FORM_METRICS


def test_a_metric_a_built_in_workload_never_writes_is_refused_and_a_user_s_own_is_left() -> None:
    result = {"workload": "sync_async", "params": {}, "variants": {}, "metrics": {"speedup": 1.0, "bogus": 1.0}}
    with pytest.raises(InputError, match=r"metrics\.bogus.*no metric workload 'sync_async' writes"):
        metric_names.held(result, At("r.json") / "results" / 0)
    metric_names.held({**result, "workload": "bench.py:mine"}, At("r.json"))  # its metrics are its own
    per_k = {"workload": "training_memory", "params": {}, "metrics": {"epoch_s_k2": 1.0, "verified": 1.0}}
    metric_names.held(per_k, At("r.json"))


def test_the_signed_times_are_the_declared_ones_and_every_time_ends_as_one() -> None:
    for workload in [*BUILT_IN.values(), StepForm]:
        for metric in workload.metrics:
            assert metric.name.endswith(metric_names.TIME_SUFFIXES) == (metric.unit == "s"), metric.name
            if metric.unit == "s":
                assert (metric.name in metric_names.SIGNED_TIMES) == metric.signed, metric.name


def test_a_duration_below_0_is_refused_and_a_difference_is_not() -> None:
    result = {"workload": "barrier", "params": {}, "metrics": {"waitall_s": -1e-6}}
    with pytest.raises(InputError, match=r"metrics\.waitall_s.*a time below 0"):
        metric_names.never_negative(result, At("r.json") / "results" / 0)
    per_k = {"workload": "training_memory", "params": {}, "metrics": {"epoch_s_k2": -1.0}}
    with pytest.raises(InputError, match=r"metrics\.epoch_s_k2"):
        metric_names.never_negative(per_k, At("r.json"))
    metric_names.never_negative({"workload": "sync_async", "metrics": {"t3_s": -1e-8}}, At("r.json"))
    metric_names.never_negative({"workload": "bench.py:mine", "metrics": {"late_s": -1.0}}, At("r.json"))
