"""Where a series changed: E-divisive means with a significance test (Apache Otava), told with its uncertainty.

Otava (formerly Hunter, Fleming et al. 2023; its analysis ships inside
asyncbench, history.edivisive says why) splits a series where the
energy distance between the two sides is largest, keeps a split only when a
test says it is significant (MAX_P_VALUE), and repeats on each side: a
single noisy point does not make a change, a step that lasts does. Each
change is then told as the ratio of the medians after and before it, with
the 95% interval of that ratio from the two segments (the interval `compare`
gives two results), so "how much" carries its uncertainty as every figure
here does. The false-alarm rate on flat noisy series is measured by
`benchmarks/history_changes.py`. A change must also be large enough to be
more than the drift between runs: the paired ratios of recorded `ab` files,
where that drift cancels, are held to a floor of their own, measured by
`benchmarks/history_drift.py`.
"""

from __future__ import annotations

import json
import statistics
from typing import Sequence

from asyncbench.history import model
from asyncbench.history.model import ChangePoint, Point, Series

# The significance a change must reach: Otava's default. Per series: a report of many series sees more false
# changes in all (benchmarks/history_changes.py measures how many on flat series).
MAX_P_VALUE = 0.001
# Otava's sliding window (points): changes are looked for within windows of this many points.
WINDOW = 50
# The smallest change called, relative: each point is one run's median, whose interval sees the noise within
# that run but not the drift between runs (another process, another hour). Twelve runs of an unchanged workload
# on the 2-core machine drifted by 11%, which the significance test alone called a change; so a change must also
# be larger than this to be one (Otava's min_magnitude).
MIN_MAGNITUDE = 0.15
# The smallest change called in a paired-ratio series (`ab` files recorded: quantity `ab:NAME`, unit x): each
# point is one `ab` gate's ratio head/base, both sides measured round by round in the same blocks of processes, so
# the machine's drift between runs cancels in it. Beside a CPU hog on the 2-core machine, 53 `ab` gates of identical
# sides (benchmarks/history_drift.py, three sessions) gave ratios 0.995-1.010: 1.5% apart at most, SD 0.37%, while
# the run medians of the same work beside them spread by 74-188% (max/min, per series). Twice the widest of those
# spreads, as MIN_MAGNITUDE stands above the 11% drift of medians: a planted +5% step is then found at the run it
# starts, and flat series show none.
PAIRED_MIN_MAGNITUDE = 0.03
# What marks a paired-ratio series: store.record_ab's quantities are `ab:` + the compared name, in unit x (the read
# models' own: history.model).
PAIRED_PREFIX, PAIRED_UNIT = model.PAIRED_PREFIX, model.PAIRED_UNIT
is_paired = model.is_paired
# A change's interval is the ratio's at this confidence, as every interval asyncbench reports.
CONFIDENCE = 0.95
# The fewest runs a series is searched in (history.model says why: `history` reads it there too).
MIN_RUNS = model.MIN_RUNS


def min_magnitude(quantity: str, unit: str) -> float:
    """The smallest change called in a series of this quantity: PAIRED_MIN_MAGNITUDE for a paired ratio of an `ab`
    file, whose points carry no drift between runs; MIN_MAGNITUDE for a run's median, which does."""
    return PAIRED_MIN_MAGNITUDE if is_paired(quantity, unit) else MIN_MAGNITUDE


def change_points(points: Sequence[Point], smallest: float = MIN_MAGNITUDE) -> tuple[ChangePoint, ...]:
    """Where the values of `points` (in run order) shifted, in order; a change must exceed `smallest` (relative:
    min_magnitude of the series' kind). None in a series of fewer than MIN_RUNS points: too short to tell."""
    values = [p.value for p in points]
    if len(values) < MIN_RUNS:
        return ()
    low, high = min(values), max(values)
    if low > 0 and high < low * (1 + smallest):
        # the means on the two sides of any split lie between the smallest and the largest value, so no split here
        # changes by more than `smallest`, and Otava's merge would keep none: its answer, without its search (a
        # quiet series, the common case, costs recording nothing here)
        return ()
    # scipy (two seconds of imports on a loaded 2-core machine, more than the rest of a `record`): only where a
    # series is searched, not where it is too short or too quiet to be
    from asyncbench.history.edivisive.analysis import compute_change_points
    from asyncbench.verdicts import compare

    found, _ = compute_change_points(values, window_len=WINDOW, max_pvalue=MAX_P_VALUE, min_magnitude=smallest)
    edges = [0, *(c.index for c in found), len(values)]
    changes = []
    for position, change in enumerate(found, start=1):
        before, after = values[edges[position - 1] : change.index], values[change.index : edges[position + 1]]
        middle_before, middle_after = statistics.median(before), statistics.median(after)
        interval = compare.ratio_interval(before, after, CONFIDENCE)
        first = points[change.index]
        changes.append(
            ChangePoint(
                run=first.run,
                at=first.label or first.revision or f"run {first.run}",
                before=middle_before,
                after=middle_after,
                ratio=middle_after / middle_before if middle_before else float("inf"),
                ratio_low=interval[0] if interval else None,
                ratio_high=interval[1] if interval else None,
                p_value=float(change.stats.pvalue),
            )
        )
    return tuple(changes)


def to_json(found: Sequence[Series]) -> str:
    return json.dumps([s.to_dict() for s in found], indent=1, default=str)
