"""How an interval is said beside its value in a table cell or a note: a `±` where it is one (as far below as above,
and narrow), its bounds where it is lopsided, wide or reaches zero. One rule (`shows_bounds`) for the table's cells
(`spread`) and the notes that state an interval relative to its value (`relative_spread`)."""

from __future__ import annotations

from asyncbench.results import units

# A `±` reads as an interval as far below as above. Past this ratio of its longer side to its shorter, half the
# interval misstates each side by more than a fifth (sides 1 and 1.5: ± 1.25), so the bounds are shown instead.
LOPSIDED = 1.5
# A `±` of half the value or more reads as "anywhere near zero" (and rounds to ±100% before it reaches it): past
# this relative half-width, as printed (a 49.97% that prints as ±50% is at it), the bounds themselves are shown.
WIDE = 0.5


def spread(median: float, low: float | None, high: float | None) -> str:
    """A time and its interval as a table cell: '8.31 ms ±1.2%' where ± is what the interval is, '8.31 ms [8.2–9.9]'
    where it is lopsided or would reach below zero (never '±501%'), '8.31 ms ±?' without one."""
    if low is None or high is None:
        return f"{units.seconds(median)} ±?"
    if median <= 0 or low <= 0:
        return units.with_bounds(median, (low, high), "s")
    if shows_bounds(median, low, high):
        return units.with_bounds(median, (low, high), "s")
    return f"{units.seconds(median)} ±{units.percent((high - low) / 2 / median)}"


def shows_bounds(median: float, low: float, high: float) -> bool:
    """Whether an interval is said by its bounds rather than a `±`: it is lopsided (LOPSIDED), wide (WIDE), or the
    value or its lower end is not above zero. The one rule of `spread` and `relative_spread`."""
    if median <= 0 or low <= 0:
        return True
    below, above = median - low, high - median
    # held on the share as `spread` prints it: 49.97% prints as ±50%, which is wide
    wide = units.percent_as_printed((high - low) / 2 / median) >= WIDE
    return wide or max(below, above) > LOPSIDED * min(below, above)


def relative_spread(median: float, low: float, high: float) -> str:
    """An interval relative to its value, by `spread`'s rule: '±1.2%', or '[−13% … +1535%]' where the table shows
    the bounds (a stopping note said '±1535%' of a row the table showed as '517 µs [449 µs–16.3 ms]')."""
    if median > 0 and shows_bounds(median, low, high):
        return f"[{_signed(low / median - 1)} … {_signed(high / median - 1)}]"
    return f"±{units.percent((high - low) / 2 / median)}" if median > 0 else "±?"


def _signed(fraction: float) -> str:
    return f"{'−' if fraction < 0 else '+'}{units.percent(abs(fraction))}"
