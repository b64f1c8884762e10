"""One case of a built-in (or a test's) workload run through the runner on the stream-semantics test device
(tests/support/stream_device.py), with its sanity warnings, and the ends of a metric's interval: what the GPU
workload tests (tests/workloads/test_gpu_*.py) assert on."""

from __future__ import annotations

import dataclasses
from typing import Any

from asyncbench.engine import runner, sanity
from asyncbench.results.model import Case, Result, Settings
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from tests.support.stream_device import StreamSimBackend

#: enough rounds for a 95% interval (six), few enough to keep each test near a second
SETTINGS = Settings(warmup=1, min_samples=6, max_samples=8, max_time_s=1.0, max_rel_noise=0.05)


def run_on(
    backend: StreamSimBackend, workload: str | Workload, device: str = "cuda:0", settings: Settings = SETTINGS, **params: Any
) -> Result:
    """One case through the runner on the test device, with its sanity warnings."""
    chosen = BUILT_IN[workload] if isinstance(workload, str) else workload
    case = Case(
        id=f"{chosen.name}[streamsim,{device}]",
        experiment=chosen.name,
        workload=chosen.name,
        backend="streamsim",
        device=device,
        params={**chosen.defaults(quick=True), **params},
        settings=settings,
    )
    result = runner.run_case(case, chosen, backend)
    return dataclasses.replace(result, warnings=sanity.warnings_of(result, chosen, {}))


def low(result: Result, metric: str) -> float:
    """The low end of `metric`'s interval (a metric without one fails the test)."""
    bounds = result.bounds[metric]
    assert bounds is not None, f"{metric} has no interval"
    return bounds[0]


def high(result: Result, metric: str) -> float:
    """The high end of `metric`'s interval (a metric without one fails the test)."""
    bounds = result.bounds[metric]
    assert bounds is not None, f"{metric} has no interval"
    return bounds[1]
