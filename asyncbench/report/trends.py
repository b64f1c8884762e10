"""The history page's charts, laid out for a reader: by case, what changed first, twins drawn once, readable units.

A chart is one quantity of one case, a trace per machine (report/html.py draws them). Laid out here:

- **Order.** The cases with a change that made something slower come first, then those with any change, then the
  rest, each group by case id; a case's charts stay together under its heading. Within a case, the charts with a
  slower change, then those with a change, then the rest in the order a case is read: each variant's clocks
  (done_s, issue_s, device_s), the `ab` ratios, each variant's census, what bounds each variant's step, the
  metrics, and last the machine beside the case (machine_s, cpu_pressure). Alphabetical order (all a page had)
  put a case's 25 charts wherever their names fell.
- **Twins.** Two quantities of a case that say the same thing are drawn once: a step-form case records each
  variant's done time and its `step_s_kK` (that time over its steps), and on a synchronous backend (torch on a
  CPU) a variant's issue time is its done time. A quantity is a twin of an earlier one of its case where, on every
  machine, it has the same runs (TWIN_MIN_RUNS or more), the same change points and discounted runs, and every
  value and interval end is the earlier one's times one positive factor, within TWIN_RELATIVE: the chart of the
  earlier one says what it also stands for ("also issue_s: the same within 0.1% at every run", "also step_s_k0: this ÷ 5").
- **What bounds the step.** A variant's bound series (`run --bound`: each side's slack and the reading,
  history.model.is_bound) are one chart, "VARIANT what bounds the step", after its census: the two slacks with
  their intervals, the reading a label on each point (report/html.py). Never a twin.
- **Units.** Times are drawn in the unit `seconds` prints their typical value in (units.time_unit: ms, µs, ns),
  not in raw seconds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from itertools import groupby
from typing import Sequence

import asyncbench.history.model as model
from asyncbench.history.model import Series
from asyncbench.results import units

# Two quantities are twins where every value and interval end of one is the other's times one factor within this
# share of it: 0.1% is a pixel or less on a chart whose axis spans 30% of its values, and finer than the 3 digits a
# tooltip shows; torch's issue and done times on a CPU differ by 0.01-0.1% (the sync that waits for nothing).
TWIN_RELATIVE = 1e-3
# The fewest runs (on every machine) a quantity is folded into another's chart at: with one run any two figures are
# multiples of each other (a memory delta "× 0.7284" of an unrelated one), with two a single coincidence of two
# ratios makes them look so; three runs ask two independent coincidences within TWIN_RELATIVE, which unrelated
# figures do not meet, and a step-form case's done_s and step_s_kK (true twins) meet from their third run on.
TWIN_MIN_RUNS = 3
# A factor within this of a whole number's inverse is said as a division: step_s_k0 is done_s ÷ 5 (5 steps).
WHOLE_SLACK = 1e-6
# A variant's clocks, in the order a case's time is read.
CLOCKS = ("done_s", "issue_s", "device_s")
# Where a chart of each kind stands within its case (the module's docstring).
CLOCK, PAIRED, CENSUS, BOUND, METRIC, MACHINE = range(6)
# A percentage is 10^-2 of the fraction it shows (Chart.power): 0.000125 is drawn as 0.0125 %.
PERCENT_POWER = -2
#: the name of a variant's chart of what bounds its step (after the variant's name)
BOUND_CHART = "what bounds the step"


@dataclass(frozen=True)
class Chart:
    """One quantity of one case, a series per machine; `power`: the unit shown is 10^power of the stored one (ms:
    −3); `also`: what else the chart stands for (its twins, each with how)."""

    case: str
    name: str  # "VARIANT QUANTITY", or the quantity of a metric
    unit: str
    power: int
    series: tuple[Series, ...]
    also: tuple[str, ...] = ()
    #: what bounds a variant's step (`run --bound`): its series are the sides' slacks and the reading
    bound: bool = False

    @property
    def slower(self) -> bool:
        """Whether a change made it slower beyond its interval (Series.slower_by; a change without an interval is
        changed, not slower: its point ratio says only which way it went). Never the machine's own series
        (Series.of_machine): a runner ×1.5 slower ranked its case among those where "something got slower first",
        where `history` and its gate call it the runner, not the code."""
        return any(
            (one.slower_by(change) or 0.0) > 1 and change.ratio_low is not None and change.ratio_high is not None
            for one in self.series
            if not one.of_machine
            for change in one.judged_changes  # not one whose figures cannot be told from 0 (Series.told_from_zero)
        )

    @property
    def changed(self) -> bool:
        return any(one.judged_changes for one in self.series)


@dataclass(frozen=True)
class Case:
    """A case's charts, in the order the page shows them."""

    case: str
    charts: tuple[Chart, ...]

    @property
    def slower(self) -> bool:
        return any(chart.slower for chart in self.charts)

    @property
    def changed(self) -> bool:
        return any(chart.changed for chart in self.charts)


def layout(found: Sequence[Series], shown_points: int) -> list[Case]:
    """Every case's charts (each series' newest `shown_points` compared for twins, as drawn), in the page's order."""
    cases = []
    for case, grouped in groupby(sorted(found, key=_key), key=lambda one: one.case):
        charts = [_chart(list(group), shown_points) for _, group in groupby(list(grouped), key=_chart_of)]
        charts = [chart for chart in charts if chart.series]  # a reading with no slack beside it: nothing to draw
        cases.append(Case(case, tuple(sorted(_folded(charts, shown_points), key=_tier))))
    return sorted(cases, key=lambda one: (_tier(one), one.case))


def _key(one: Series) -> tuple[object, ...]:
    """Series of a case together, its quantities in reading order, machines in order."""
    return (one.case, *_rank(one), one.unit, one.machine)


def _chart_of(one: Series) -> tuple[str, ...]:
    """Which chart a series is drawn on: its variant's quantity in its unit, or its variant's bound chart."""
    return (one.variant, BOUND_CHART) if model.is_bound(one.quantity) else (one.variant, one.quantity, one.unit)


def _rank(one: Series) -> tuple[int, str, int, str]:
    """Where a quantity stands within its case (the module's docstring): its kind, variant, clock and name."""
    if model.is_bound(one.quantity):
        return (BOUND, one.variant, 0, BOUND_CHART)
    if one.variant and one.quantity in CLOCKS:
        return (CLOCK, one.variant, CLOCKS.index(one.quantity), one.quantity)
    if one.paired:
        return (PAIRED, one.variant, 0, one.quantity)
    if one.of_machine:
        return (MACHINE, "", 0, one.quantity)
    return (CENSUS if one.variant else METRIC, one.variant, 0, one.quantity)


def _tier(item: Chart | Case) -> int:
    """0 where something got slower, 1 where something changed, 2 elsewhere."""
    return 0 if item.slower else 1 if item.changed else 2


def _chart(group: list[Series], shown_points: int) -> Chart:
    first = group[0]
    if model.is_bound(first.quantity):
        return _bound_chart(group, shown_points)
    name = f"{first.variant} {first.quantity}" if first.variant else first.quantity
    unit, power = first.unit, 0
    if first.unit == "s":  # times in the unit their typical value reads in
        values = [point.value for one in group for point in one.points[-shown_points:]]
        scale, unit = units.time_unit(statistics.median(values)) if values else (1.0, "s")
        power = round(math.log10(scale))
    elif first.shown_unit == model.SHARE_SHOWN:  # a share of the time, stored as a fraction: drawn in percent
        unit, power = model.SHARE_SHOWN, PERCENT_POWER
    return Chart(first.case, name, unit, power, tuple(group))


def _bound_chart(group: list[Series], shown_points: int) -> Chart:
    """A variant's chart of what bounds its step: its slacks' series (host, then device, per machine), then the
    readings' (drawn as labels); in the unit its largest slack reads in. No series where no slack was recorded."""
    first = group[0]
    slacks = sorted(
        (one for one in group if one.quantity in model.BOUND_SLACKS.values() and one.unit == "s"),
        key=lambda one: (one.machine, list(model.BOUND_SLACKS.values()).index(one.quantity)),
    )
    readings = [one for one in group if one.quantity == model.BOUND_READING]
    values = [abs(point.value) for one in slacks for point in one.points[-shown_points:]]
    scale, unit = units.time_unit(max(values)) if values and max(values) > 0 else (1.0, "s")
    name = f"{first.variant} {BOUND_CHART}" if first.variant else BOUND_CHART
    return Chart(first.case, name, unit, round(math.log10(scale)), tuple(slacks + readings) if slacks else (), bound=True)


def _folded(charts: list[Chart], shown_points: int) -> list[Chart]:
    """The case's charts with each twin folded into the first chart it is a twin of (which says so); a chart of
    what bounds a step is never a twin."""
    kept: list[Chart] = []
    for chart in charts:
        if chart.bound:
            kept.append(chart)
            continue
        for index, earlier in enumerate(kept):
            if earlier.bound:
                continue
            factor = _factor(earlier, chart, shown_points)
            if factor is not None:
                kept[index] = Chart(
                    earlier.case, earlier.name, earlier.unit, earlier.power, earlier.series, (*earlier.also, _said(chart.name, factor))
                )
                break
        else:
            kept.append(chart)
    return kept


def _said(name: str, factor: float) -> str:
    """How a twin relates to the chart drawn: the same, this ÷ N, or this × f."""
    if abs(factor - 1) <= TWIN_RELATIVE:
        return f"{name}: the same within {units.percent(TWIN_RELATIVE)} at every run"
    whole = round(1 / factor)
    if whole > 1 and abs(1 / factor - whole) <= WHOLE_SLACK * whole:
        return f"{name}: this ÷ {whole}"
    return f"{name}: this × {units.number(factor, 4)}"


def _factor(drawn: Chart, other: Chart, shown_points: int) -> float | None:
    """The one factor `other` is `drawn` times at every shown point, value and interval ends, on every machine (within
    TWIN_RELATIVE; 1 where every figure is 0); None where they are no twins. The factor is the middle of the figures'
    ratios, not the first one's: taken from the first, issue_s 0.06% under done_s there and 0.06% over later (each
    within 0.1% of done_s) read as 0.12% off it, and a twin was drawn apart."""
    if drawn.series[0].unit != other.series[0].unit or len(drawn.series) != len(other.series):
        return None
    ratios: list[float] = []
    for mine, theirs in zip(drawn.series, other.series, strict=True):
        if mine.machine != theirs.machine or _marks(mine) != _marks(theirs):
            return None
        ours, their = mine.points[-shown_points:], theirs.points[-shown_points:]
        if [p.run for p in ours] != [p.run for p in their] or len(ours) < TWIN_MIN_RUNS:
            return None  # too few runs to tell a twin from figures that happen to be multiples
        for a, b in zip(ours, their, strict=True):
            for x, y in ((a.value, b.value), (a.low, b.low), (a.high, b.high)):
                if x is None or y is None or x == 0 or y == 0:
                    if x != y:  # an interval on one side only, or 0 against a figure
                        return None
                    continue
                ratios.append(y / x)
    if not ratios:
        return 1.0
    if min(ratios) <= 0:  # a sign change is no multiple a chart can stand for
        return None
    factor = (min(ratios) + max(ratios)) / 2
    return factor if all(abs(ratio - factor) <= TWIN_RELATIVE * abs(ratio) for ratio in ratios) else None


def _marks(one: Series) -> tuple[object, ...]:
    """What a chart marks on a series: its change points' runs, its discounted runs."""
    return (tuple(change.run for change in one.change_points), tuple(run for run, _ in one.discounted))
