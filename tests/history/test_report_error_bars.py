"""The history page's error bars: each point drawn with the interval the table prints beside it."""

from __future__ import annotations

from asyncbench.history.model import Point, Series
from asyncbench.report import html


def _series(points: list[tuple[float, float, float]]) -> Series:
    return Series(
        "blockers[jax,cpu]",
        "",
        "print_cost_s",
        "s",
        "m",
        {},
        tuple(Point(i, str(i), f"L{i}", None, value, low, high) for i, (value, low, high) in enumerate(points, start=1)),
        runs=len(points),
    )


def _drawn(trace: dict, index: int) -> tuple[float, float, float]:
    """A point's median and its error bar's ends as the page draws them (the page's own arithmetic)."""
    scale = 10.0 ** trace["e"]
    y = trace["y"][index]
    low = y - trace["lo"][index] if trace.get("lo") else y
    high = y + trace["hi"][index] if trace.get("hi") else y
    return y * scale, low * scale, high * scale


def test_a_cost_whose_median_is_below_0_is_drawn_at_0_with_its_bar_up_to_its_interval_s_upper_end() -> None:
    # print_cost_s of a trial's blockers case: −0.653 ms [−1.34 ms, +1.04 ms], printed `~0 [≤ 1.04 ms]`; the page drew
    # a point at 0 with a bar of [0, 0]: its scale was set by the medians alone (all 0 once shown), and 1.04 ms was
    # sent as a whole number of seconds
    trace = html._series(_series([(-0.653e-3, -1.34e-3, 1.04e-3)]), {1: 1}, html._Index())
    value, low, high = _drawn(trace, 0)
    assert value == 0.0
    assert low == 0.0
    assert abs(high - 1.04e-3) <= 1.04e-3 * 1e-3


def test_a_series_of_medians_below_0_beside_positive_ones_keeps_every_bar() -> None:
    trace = html._series(_series([(-1.88e-3, -4e-3, 9.57e-3), (2.5e-6, 1e-6, 4e-6)]), {1: 1, 2: 2}, html._Index())
    assert abs(_drawn(trace, 0)[2] - 9.57e-3) <= 9.57e-3 * 1e-3
    value, low, high = _drawn(trace, 1)
    assert abs(value - 2.5e-6) <= 2.5e-6 * 1e-3
    assert abs(low - 1e-6) <= 1e-9
    assert abs(high - 4e-6) <= 4e-9
