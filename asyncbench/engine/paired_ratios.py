"""What a block of paired rounds gives each verdict of `ab`: its paired ratios, round by round (engine.paired).

A verdict is a gated variant's done time or a directed metric (a rate, whose lower value is slower); each round of
a block pairs base's value with head's, and their ratio, oriented so that > 1 is slower, is what the block's value
(results.blocks.block_value) is taken from. A metric whose ratios repeat a variant's (matmul's GFLOP/s is its done
time turned over) is one verdict, not two.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from asyncbench.results import units
from asyncbench.results.model import Clocks
from asyncbench.results.paired import METRIC, VARIANT
from asyncbench.workloads.base import Workload


def directed_metrics(workload: Workload) -> dict[str, int]:
    """The metrics a gate calls slower or faster besides the variants' times: rates (a unit ending in /s, such as
    GFLOP/s), whose lower value is slower. Times derived from several variants (a cost as a difference of two
    times, a per-op estimate) are left out: a ratio of differences of noisy times is mostly noise, and the
    variants' own times are judged; nor are ratios between variants (speedups, shares) a speed of the code."""
    return {metric.name: -1 for metric in workload.metrics if units.is_rate(metric.unit)}


Series = dict[tuple[str, str], tuple[list[float], list[float], list[float]]]


def ratio_series(
    workload: Workload, params: Mapping[str, Any], base: Mapping[str, list[Clocks]], head: Mapping[str, list[Clocks]]
) -> Series:
    """(kind, name) → (base values, head values, paired ratios oriented so > 1 is slower), round by round."""
    series: Series = {}
    rounds = min(len(clocks) for clocks in (*base.values(), *head.values()))
    for name in head:
        old_s, new_s = [c.done_s for c in base[name][:rounds]], [c.done_s for c in head[name][:rounds]]
        series[(VARIANT, name)] = (old_s, new_s, [n / o for o, n in zip(old_s, new_s, strict=True) if o > 0])
    directions = directed_metrics(workload)
    for index in range(rounds if directions else 0):  # without a directed metric only the gated variants were sampled
        old_metrics = workload.round_metrics(params, {n: base[n][index] for n in base})
        new_metrics = workload.round_metrics(params, {n: head[n][index] for n in head})
        for name, direction in directions.items():
            old, new = old_metrics.get(name), new_metrics.get(name)
            if old is None or new is None or old <= 0 or new <= 0:
                continue
            olds, news, ratios = series.setdefault((METRIC, name), ([], [], []))
            olds.append(old)
            news.append(new)
            ratios.append((new / old) ** direction)
    return series


def distinct(series: Series) -> list[tuple[str, str]]:
    """The series' keys without the metrics whose paired ratios repeat an earlier series' (matmul's GFLOP/s is its
    done time turned over): a verdict said twice from the same numbers would only spend the budget twice."""
    kept: dict[tuple[str, str], list[float]] = {}
    for key, (_, _, ratios) in series.items():
        if any(
            len(r) == len(ratios) and all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(r, ratios, strict=True)) for r in kept.values()
        ):
            continue
        kept[key] = ratios
    return list(kept)
