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

import math
from typing import Mapping, Sequence

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
    clauses = (
        outside(result, metric, medians_ratio(result, over, under), f"{over} / {under} medians give")
        for metric, (over, under) in ratios.items()
    )
    return why_apart([clause for clause in clauses if clause])


def outside(result: Result, metric: str, own: float | None, said: str, unit: str = "x") -> str:
    """'<said> <own>, outside <metric>'s paired [low–high]' where `own` (a figure the medians beside `metric` give,
    in `metric`'s `unit`: "x" or "%") lies outside `metric`'s interval; '' where it lies inside or either is absent.
    `own` gets the digits that show it outside (units.off_boundary): 0.909 beside an end of 0.912 reads 0.909, never
    the '0.91' its end reads too."""
    bounds = result.bounds.get(metric)
    if bounds is None or own is None or bounds[0] <= own <= bounds[1]:
        return ""
    low, high = (_end(end, unit) for end in bounds)
    shown = _past(own, low if own < bounds[0] else high, unit)
    low, high, shown = _apart_as_printed(own, bounds, unit, (low, high, shown))
    return f"{said} {shown}, outside {metric}'s paired [{low}–{high}]"


# The most decimals an interval's ends and the figure outside it take to read apart (a ratio's, a percentage's number).
APART_DECIMALS = 6


def _apart_as_printed(own: float, bounds: tuple[float, float], unit: str, shown: tuple[str, str, str]) -> tuple[str, str, str]:
    """The interval's ends and `own` with the decimals that print `own` outside them, where the usual ones print it
    inside, or its two ends as one: a trial read '1.054×, outside speedup's paired [1.05–1.05]' of an interval
    [1.05376, 1.05430]; now '1.0548×, outside speedup's paired [1.0538–1.0543]'. Unchanged where they read apart."""
    suffix = "×" if unit == "x" else unit
    scale = 100 if unit == "%" else 1

    def value(text: str) -> float:
        return float(text.removesuffix(suffix).replace(units.MINUS, "-"))

    def reads_apart(texts: tuple[str, str, str]) -> bool:  # and an interval of two ends reads as two ends
        return not value(texts[0]) <= value(texts[2]) <= value(texts[1]) and (texts[0] != texts[1] or bounds[0] == bounds[1])

    if reads_apart(shown) or not all(map(math.isfinite, (own, *bounds))):
        return shown
    start = max(len(text.removesuffix(suffix).partition(".")[2]) for text in shown) + 1
    for decimals in range(start, APART_DECIMALS + 1):
        low, high, figure = (f"{x * scale:.{decimals}f}".replace("-", units.MINUS) for x in (*bounds, own))
        if reads_apart((low, high, figure + suffix)):
            return low, high, figure + suffix
    return shown


def why_apart(clauses: Sequence[str], paired: str = "each round's own ratio") -> str:
    """`outside`'s clauses joined, with why medians may part from a paired figure (`paired`: what that figure is of);
    '' where there are none."""
    if not clauses:
        return ""
    return f"{'; '.join(clauses)}: each median {other_moments('the other')}; judge by the paired figure ({paired})"


def _end(value: float, unit: str) -> str:
    """An interval's end as `outside` prints it: a ratio's three figures (units.ratio_end), a percentage's number."""
    return units.ratio_end(value) if unit == "x" else units.quantity(value, unit).removesuffix(unit)


def _past(own: float, end: str, unit: str) -> str:
    """`own` in `unit`, with at least as many decimals as `end` (the printed interval's end it lies past), more
    (units.off_boundary) where those would still print it as `end`: '0.909×' beside an end of '0.91' or '0.912'."""
    suffix = "×" if unit == "x" else unit
    text = units.ratio(own) if unit == "x" else units.quantity(own, unit)
    number, scale = text.removesuffix(suffix).replace(units.MINUS, "-"), 100 if unit == "%" else 1
    decimals = len(end.partition(".")[2])
    if not math.isfinite(own) or "e" in number or "e" in end:
        return text
    if len(number.partition(".")[2]) < decimals:
        number = f"{own * scale:.{decimals}f}"
    boundary = float(end.replace(units.MINUS, "-"))
    if float(number) == boundary:
        number = units.off_boundary(own * scale, boundary, max(decimals, len(number.partition(".")[2])))
    return f"{number.replace('-', units.MINUS)}{suffix}"
