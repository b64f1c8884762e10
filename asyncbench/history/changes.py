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
from typing import Any, Sequence

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
#: how far (relative) a change's ratio may lie outside the interval computed for it and still be held inside it: the
#: ratio is of medians, the interval's ends exp of log differences, and between identical runs the two differ in the
#: last bit (1.5 against [1.4999999999999998, 1.4999999999999998]): a point outside its own interval, which no
#: reader should meet. A wider gap is no rounding and is left as found.
ROUNDING = 1e-12
# The fewest runs a series is searched in (history.model says why: `history` reads it there too).
MIN_RUNS = model.MIN_RUNS
# The fewest runs on each side of a change point called (history.model says why: reading holds an older store's
# stored changes to it too).
MIN_SIDE_RUNS = model.MIN_SIDE_RUNS


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
    cut, called = _apart(found, values, smallest)
    edges = [0, *(c.index for c in cut), len(values)]
    changes = []
    for position, change in enumerate(cut, start=1):
        if change not in called:
            continue
        before, after = values[edges[position - 1] : change.index], values[change.index : edges[position + 1]]
        middle_before, middle_after = statistics.median(before), statistics.median(after)
        ratio = middle_after / middle_before if middle_before else float("inf")
        interval = _holding(compare.ratio_interval(before, after, CONFIDENCE), ratio)
        first = points[change.index]
        changes.append(
            ChangePoint(
                run=first.run,
                at=model.run_named(points, change.index),
                before=middle_before,
                after=middle_after,
                ratio=ratio,
                ratio_low=interval[0] if interval else None,
                ratio_high=interval[1] if interval else None,
                p_value=float(change.stats.pvalue),
            )
        )
    return tuple(changes)


def _holding(interval: tuple[float, float] | None, ratio: float) -> tuple[float, float] | None:
    """`interval` with an end that misses `ratio` by rounding alone (ROUNDING) moved onto it."""
    if interval is None:
        return None
    low, high = interval
    if ratio < low <= ratio * (1 + ROUNDING):
        low = ratio
    if ratio * (1 - ROUNDING) <= high < ratio:
        high = ratio
    return low, high


def _apart(found: list[Any], values: list[float], smallest: float) -> tuple[list[Any], list[Any]]:
    """Otava's change points (in order) held to MIN_SIDE_RUNS runs a side (its split takes no smallest segment:
    history.model.MIN_SIDE_RUNS): the segments the series is cut into, and the changes called among them.

    A segment of fewer runs between two changes (a run or two apart from those around them, or a step taken over
    two runs) is no segment: the change with the weaker test of the two that bound it goes, its neighbours' tests
    are taken again over the segments it joined, and Otava's merge judges them by MAX_P_VALUE and `smallest` again.
    A short segment at the series' start or end (its first run or two unlike the rest; a step too new to tell) stays
    a segment, so that it is in neither side of the next change, but the change that bounds it is not called (one
    at the end is, once MIN_SIDE_RUNS runs lie after it)."""
    from asyncbench.history.edivisive.analysis import TTestSignificanceTester, merge

    tester = TTestSignificanceTester(MAX_P_VALUE)
    cut = list(found)
    while True:
        edges = [0, *(c.index for c in cut), len(values)]
        # the changes that bound a short segment between two changes (segment `at` runs from cut[at - 1] to cut[at])
        bounding = [c for at in range(1, len(cut)) if edges[at + 1] - edges[at] < MIN_SIDE_RUNS for c in cut[at - 1 : at + 1]]
        if not bounding:
            break
        cut.remove(max(bounding, key=lambda c: c.stats.pvalue))
        intervals = tester.get_intervals(cut)
        cut = merge([tester.change_point(c.to_candidate(), values, intervals) for c in cut], values, MAX_P_VALUE, smallest)
    edges = [0, *(c.index for c in cut), len(values)]
    called = [c for at, c in enumerate(cut, start=1) if min(c.index - edges[at - 1], edges[at + 1] - c.index) >= MIN_SIDE_RUNS]
    return cut, called


def held_apart(found: Sequence[ChangePoint], runs: Sequence[int], whole: bool) -> tuple[ChangePoint, ...]:
    """The stored changes `found` (in order) of a series whose runs read are `runs` (in order; `whole`: all its
    runs), less those with fewer than MIN_SIDE_RUNS of those runs on a side: a store recorded before change_points
    held changes to it still holds them (a change at the second run, from one run), until a run recorded looks again.
    A side is counted in every run read, discounted or not (a run discounted now may not have been when its change
    was found, so this holds back no change that change_points called), and one that reaches past the runs read is
    long enough."""
    position = {run: at for at, run in enumerate(runs)}
    edges = [0 if whole else None, *(position.get(change.run) for change in found), len(runs)]
    kept = []
    for at, change in enumerate(found, start=1):
        here, before, after = edges[at], edges[at - 1], edges[at + 1]
        if here is None:  # before the runs read: as stored
            kept.append(change)
            continue
        short_before = before is not None and here - before < MIN_SIDE_RUNS
        short_after = after is not None and after - here < MIN_SIDE_RUNS
        if not (short_before or short_after):
            kept.append(change)
    return tuple(kept)


def to_json(found: Sequence[Series]) -> str:
    return json.dumps([s.to_dict() for s in found], indent=1, default=str)
