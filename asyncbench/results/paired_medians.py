"""A paired ratio beside its two variants' medians: why the medians' own ratio may lie outside its interval.

A ratio figure of one case (sync_async's `speedup`, a step form's `slowdown_kK`) is the median over the rounds of
each round's own ratio: the two variants of a round run back to back, so what the moment does to both cancels, and
its interval is of that median (engine.rounds.figures). The variants' medians printed beside it each pool samples
taken at every moment of the case: where the machine's speed drifted over the rounds, the ratio of those medians
can part from the paired figure, even to the other side of 1 (a trial on a loaded 2-core machine: sync 5.36 ms,
async 7.70 ms, a ratio of 0.70, beside a paired speedup of 1.05× [1.01–1.08]). The paired figure is the one to
judge; a row whose medians' ratio lies outside its interval says why in one line (`apart`), in the words `ab` keys
its head column with (report.paired.PAIRED_KEY, `other_moments`), so that the two say it alike.
"""

from __future__ import annotations

from typing import Mapping

from asyncbench.results import units
from asyncbench.results.model import Result

#: what a ratio figure's `help` (metric_info) says it is made of: each round's own ratio, summarized by its median
PAIRED_HELP = "each round's own ratio (paired), its median over the rounds"


def other_moments(than: str) -> str:
    """Why one side's median is not the other's at the paired change: `ab`'s words (report.paired.PAIRED_KEY) and a
    row's (`apart`). `than`: whose moments the median's samples are not ("base": '... than base's')."""
    return (
        f"pools samples taken at other moments than {than}'s: a busy machine slows and speeds the moments, and the two "
        "medians part by far more than the code does"
    )


def medians_ratio(result: Result, over: str, under: str) -> float | None:
    """The ratio of variant `over`'s done-time median to variant `under`'s; None where either is absent or `under`'s
    is not above 0."""
    top, bottom = result.variants.get(over), result.variants.get(under)
    if top is None or bottom is None or not bottom.done_s.median > 0:
        return None
    return top.done_s.median / bottom.done_s.median


def apart(result: Result, ratios: Mapping[str, tuple[str, str]]) -> str:
    """One line saying which of `ratios` (metric -> its numerator's and denominator's variants) have a medians' ratio
    outside their paired interval, and why that is no contradiction; '' where none has (or none has an interval)."""
    outside = []
    for metric, (over, under) in ratios.items():
        bounds, own = result.bounds.get(metric), medians_ratio(result, over, under)
        if bounds is None or own is None or bounds[0] <= own <= bounds[1]:
            continue
        low, high = units.ratio_end(bounds[0]), units.ratio_end(bounds[1])
        outside.append(f"{over} / {under} medians give {units.ratio(own)}, outside {metric}'s paired [{low}–{high}]")
    if not outside:
        return ""
    return f"{'; '.join(outside)}: each median {other_moments('the other')}; judge by the paired figure (each round's own ratio)"
