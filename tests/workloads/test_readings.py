"""Readings say only what the interval shows: no saving from a wide interval, no negative cost stated as a cost."""

from __future__ import annotations

from asyncbench.results.model import OK, Result


def _metrics_result(workload: str, metrics, bounds, asynchronous=False) -> Result:
    return Result("c", "c", workload, "torch", "cpu", {}, OK, metrics=metrics, bounds=bounds, asynchronous=asynchronous)


def test_a_wide_interval_is_no_saving_however_large_the_median():
    """The issue's example: 15% of the wait saved, from data at ±93%."""
    from asyncbench.workloads import WORKLOADS

    wide = _metrics_result("barrier", {"waitall_s": 0.139, "wait_one_s": 0.118, "saved_fraction": 0.15}, {"saved_fraction": (-0.6, 0.8)})
    reading = WORKLOADS["barrier"].reading(wide)
    assert reading.startswith("no difference shown")
    assert "of the wait saved" not in reading
    clear = _metrics_result("barrier", {"waitall_s": 0.3, "wait_one_s": 0.1, "saved_fraction": 0.66}, {"saved_fraction": (0.6, 0.7)}, True)
    assert "of the wait saved" in WORKLOADS["barrier"].reading(clear)


def test_a_negative_conversion_cost_is_never_stated_as_a_cost():
    from asyncbench.workloads import WORKLOADS

    metrics = {
        "slowdown_item": 0.8,
        "slowdown_numpy": 0.9,
        "slowdown_print": 1.04,
        "item_cost_s": -0.016,
        "numpy_cost_s": -0.0162,
        "print_cost_s": 0.0003,
    }
    bounds = {
        "slowdown_item": (0.4, 2.3),
        "slowdown_numpy": (0.5, 2.0),
        "slowdown_print": (0.7, 1.5),
        "item_cost_s": (-0.05, 0.02),
        "numpy_cost_s": (-0.05, 0.02),
        "print_cost_s": (-0.01, 0.01),
    }
    reading = WORKLOADS["conversion"].reading(_metrics_result("conversion", metrics, bounds))
    assert reading.startswith("no conversion cost shown")
    assert "-16" not in reading


def test_the_step_form_says_nothing_runs_ahead_only_when_the_illusions_interval_shows_it():
    from asyncbench.workloads.step_form import StepWorkload

    workload = StepWorkload(lambda backend, device, params: lambda: None, name="loop")

    def reading(bounds):
        return workload.reading(_metrics_result("loop", {"illusion": 1.1}, {"illusion": bounds}))

    assert "nothing much runs ahead" in reading((1.0, 1.15))
    assert "long before the work is done" in reading((1.3, 1.5))
    for unsettled in ((1.0, 1.6), None):  # across the line, or no interval at all: neither is shown
        assert "nothing much runs ahead" not in reading(unsettled)
        assert "not shown whether the loop runs ahead" in reading(unsettled)
