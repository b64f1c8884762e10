"""A case's metrics with their intervals, from paired rounds.

Variants are measured in interleaved rounds (timing.measure), so round i's
samples of every variant ran back to back on the same machine state. A
workload's `round_metrics` turns one round's clocks into metric values; over
the rounds each metric is then a sample of paired values, reported as its
median with the distribution-free 95% interval of that median (stats). This
needs no assumption about the distribution of timings or ratios, and the
pairing cancels the machine's slow drift, which hits both sides of a round
alike. (A bootstrap of the ratio of medians would need an assumption of
independent rounds it does not have, and is unreliable for medians of few
values.) Metrics of single measurements (`run_metrics`: the memory run) come
without an interval; metrics a synchronous backend cannot have (`needs_async`)
are None there.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Mapping

from asyncbench.results import stats
from asyncbench.results.model import Clocks, VariantResult
from asyncbench.workloads.base import Workload

Bounds = dict[str, tuple[float, float] | None]


def per_round(workload: Workload, params: Mapping[str, Any], variants: Mapping[str, VariantResult]) -> dict[str, list[float]]:
    """Each metric's finite values, one per round (a round where it is undefined adds none)."""
    rounds = min((len(v.samples.done_s) for v in variants.values()), default=0)
    values: dict[str, list[float]] = {}
    for i in range(rounds):
        clocks = {
            name: Clocks(
                issue_s=v.samples.issue_s[i],
                done_s=v.samples.done_s[i],
                device_s=v.samples.device_s[i] if v.samples.device_s else None,
            )
            for name, v in variants.items()
        }
        for name, value in workload.round_metrics(params, clocks).items():
            series = values.setdefault(name, [])
            if value is not None and math.isfinite(value):
                series.append(value)
    return values


def figures(
    workload: Workload, params: Mapping[str, Any], variants: Mapping[str, VariantResult], asynchronous: bool | None
) -> tuple[dict[str, float | None], Bounds]:
    """(metrics, bounds) of a measured case; bounds[m] is None when there were too few rounds for an interval."""
    metrics: dict[str, float | None] = {}
    bounds: Bounds = {}
    for name, values in per_round(workload, params, variants).items():
        metrics[name] = statistics.median(values) if values else None
        bounds[name] = stats.median_ci(values) if values else None
    metrics.update(workload.run_metrics(params, variants))
    if asynchronous is False:
        for name in metrics:
            declared = workload.metric(name)
            if declared is not None and declared.needs_async:
                metrics[name] = None
                bounds.pop(name, None)
    order = {m.name: index for index, m in enumerate(workload.metrics)}

    def declared_position(name: str) -> int:  # per-k metrics (epoch_s_k2) sort with their declaration (epoch_s_kK)
        declared = workload.metric(name)
        return order.get(declared.name, len(order)) if declared is not None else len(order)

    ranked = sorted(metrics, key=declared_position)
    return {name: metrics[name] for name in ranked}, {name: bounds[name] for name in ranked if name in bounds}
