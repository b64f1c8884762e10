"""A store's point held to what its quantity can be: a time is not negative nor past a year, a ratio is above 0.

history.reading holds every point to be a finite number within its own interval; a row edited by hand can be
that and still be no figure asyncbench writes (a `done_s` of -1 ms in [-2, -0.5] ms was printed "below 0 by
1.00 ms" and judged by the gate; a `machine_s` of 1e300 printed a 300-digit ratio). Here each quantity the
recorder writes (history.recorded) is held, value and interval, to the range a results or `ab` file holds the
same figure to before it is recorded (results.recordable, results.reference, results.paired): what fails is a
damaged row, refused in one line naming its table, row and column, never drawn or judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncbench.history import model
from asyncbench.results import paired, recordable, reference, units
from asyncbench.verdicts import syncs


@dataclass(frozen=True)
class Range:
    """What a quantity's figure can be: at least `least` (above it where `above`), at most `most`; its interval's
    ends the same, or, where `ends_signed`, only within ±`most` (a fit's interval may reach below its estimate's floor)."""

    what: str
    least: float
    most: float
    above: bool = False
    ends_signed: bool = False

    def problem(self, figure: float, end: bool) -> str | None:
        """Why `figure` (an interval's end where `end`) is none of this quantity's, or None."""
        least = -self.most if end and self.ends_signed else self.least
        if figure < least or (self.above and not (end and self.ends_signed) and figure <= least):
            floor = f"above {least:g}" if self.above and not (end and self.ends_signed) else f"at least {least:g}"
            return f"{figure:.6g} where {self.what} is {floor}"
        if figure > self.most:
            return f"{figure:.6g} where {self.what} is at most {self.most:g}"
        return None


#: a time a run measured (results.recordable.measured_time): not negative, no longer than a year
MEASURED_TIME = Range("a time a run measured (s)", 0.0, recordable.MAX_MEASURED_S)
#: the machine's reference: a median of samples each at least reference.MIN_SAMPLE_S (its fixed work's least time)
REFERENCE_TIME = Range("the machine's reference time (s)", reference.MIN_SAMPLE_S, recordable.MAX_MEASURED_S)
#: a bound's slack: not negative (a side cannot grow by less than nothing), its bootstrap interval's ends within a year
SLACK = Range("a slack (s)", 0.0, recordable.MAX_MEASURED_S, ends_signed=True)
#: a share of the machine's time (results.reference.SHARES): 0 to 1
SHARE = Range("a share of the machine's time", 0.0, 1.0)
#: a census' waits per step: a count's median, not negative
PER_STEP = Range("a count per step", 0.0, float("inf"))
#: a paired ratio head/base of two times or two rates (results.paired: each above 0)
PAIRED_RATIO = Range("a paired ratio (×)", 0.0, float("inf"), above=True)
#: a case's own metric in seconds: a time or a difference of two (a built-in workload's SIGNED_TIMES), within a year
#: either way (no time a run measures is longer: results.recordable.MAX_MEASURED_S)
METRIC_TIME = Range("a metric in seconds", -recordable.MAX_MEASURED_S, recordable.MAX_MEASURED_S)
#: a case's own rate (GFLOP/s, items/s): not negative, and no higher than any a machine reaches (results.paired.MAX_RATE)
RATE = Range("a rate", 0.0, paired.MAX_RATE)

_VARIANT_RANGES = {
    "done_s": MEASURED_TIME,
    "issue_s": MEASURED_TIME,
    "device_s": MEASURED_TIME,
    syncs.SYNC_WAIT_S: MEASURED_TIME,
    syncs.SYNCS_PER_STEP: PER_STEP,
    **{quantity: SLACK for quantity in model.BOUND_SLACKS.values()},
}


def range_of(variant: str, quantity: str, unit: str) -> Range | None:
    """The range a point of this series can lie in (its quantity as history.recorded writes it), or None where the
    recorder writes any finite figure (a case's own metric in a unit of its own, a bound's reading: its own rule)."""
    if quantity.startswith(model.PAIRED_PREFIX):
        return PAIRED_RATIO
    if variant:
        return _VARIANT_RANGES.get(quantity)
    if quantity == model.MACHINE_QUANTITY:
        return REFERENCE_TIME
    if quantity == model.PRESSURE_QUANTITY:
        return SHARE
    if unit == units.SECONDS:
        return METRIC_TIME
    if units.is_rate(unit):
        return RATE
    return None
