"""A results row edited by a test (its samples scaled, its params moved to another sweep point) made consistent again:
its paired figures recomputed from its samples and params, as a careful forger, or a test that replicates a real row,
would make them. A reader holds each built-in workload's figures to the samples (results.workload_figures,
results.matmul_figures): a row whose `n_ops` moved without its `t1_s` is refused before the mistake a test plants is
reached."""

from __future__ import annotations

import statistics
from typing import Any

from asyncbench.results import matmul_figures, stats, workload_figures


def restated(row: dict[str, Any]) -> dict[str, Any]:
    """`row` (a results file's row as JSON), its metrics and their bounds set to what its samples give; in place."""
    rounds = {**workload_figures.metric_rounds(row), **matmul_figures.metric_rounds(row)}  # matmul's clocks, too
    for name, per_round in rounds.items():
        figures = [figure for figure, _ in per_round]
        row["metrics"][name] = statistics.median(figures)
        if row.get("bounds", {}).get(name) is not None:
            interval = stats.median_ci(figures)
            row["bounds"][name] = None if interval is None else list(interval)
    return row
