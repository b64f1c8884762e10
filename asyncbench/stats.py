"""Pure functions over float sequences: median, IQR, and the CI of the median.

The CI of the median is distribution-free (order statistics with the normal
approximation to the binomial), so it holds for the skewed, outlier-prone
timing distributions benchmarks produce.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from asyncbench.model import Stats

CONFIDENCE = 0.95


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Confidence interval of the median from order statistics.

    With fewer than ~6 samples the interval is simply [min, max].
    """
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median_ci of no values")
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    half_width_ranks = z * math.sqrt(n) / 2
    low_rank = max(1, math.floor(n / 2 - half_width_ranks))
    high_rank = min(n, math.ceil(n / 2 + half_width_ranks + 1))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def relative_ci_half_width(values: Sequence[float]) -> float:
    """Half the CI width of the median relative to the median (inf if undefined)."""
    med = statistics.median(values)
    if med <= 0:
        return math.inf
    low, high = median_ci(values)
    return (high - low) / 2 / med


def iqr(values: Sequence[float]) -> float:
    """Interquartile range; 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1


def summarize(values: Sequence[float]) -> Stats:
    """Median, IQR, extremes and the 95% CI of the median of `values`."""
    low, high = median_ci(values)
    return Stats(
        median=statistics.median(values),
        iqr=iqr(values),
        min=min(values),
        max=max(values),
        ci_low=low,
        ci_high=high,
        n=len(values),
    )


def overlap_efficiency(alone_s: Sequence[float], together_s: float) -> float | None:
    """(ΣT_i − T_all) / (ΣT_i − max T_i): 1 is perfect overlap, 0 fully serialized.

    The one formula every workload uses (EXPERIMENTS.md). Not clipped: noise
    can push it slightly outside [0, 1]; rendering clips. None when there is
    nothing that could overlap (one part, or all but one part take no time).
    """
    total = sum(alone_s)
    room = total - max(alone_s)
    if room <= 0:
        return None
    return (total - together_s) / room
