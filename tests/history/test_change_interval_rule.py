"""When a change's ratio has an interval, as docs/guides/history.md states it: the exact two-sample rank interval at
95%, which exists once the runs on its two sides are enough for it (C(m + n, m) ≥ 40), not "7 or more each"."""

from __future__ import annotations

import random

import pytest

from asyncbench.history import changes
from asyncbench.history.model import Point


def _points(before: int, after: int) -> tuple[Point, ...]:
    values = [0.0040 + 0.00001 * (i % 3) for i in range(before)] + [0.0080 + 0.00001 * (i % 3) for i in range(after)]
    return tuple(Point(run, "t", f"run-{run}", None, value, None, None) for run, value in enumerate(values, start=1))


@pytest.mark.parametrize(
    ("before", "after", "has_one"),
    [(6, 6, True), (6, 5, True), (3, 5, True), (4, 4, True), (5, 3, True), (3, 3, False), (3, 4, False), (4, 3, False)],
)
def test_a_change_has_a_ratio_interval_exactly_when_the_guide_says(before, after, has_one):
    (step,) = changes.change_points(_points(before, after))
    assert step.ratio == pytest.approx(2.0, rel=0.01)
    assert (step.ratio_low is not None and step.ratio_high is not None) is has_one
    if has_one:
        assert step.ratio_low <= step.ratio <= step.ratio_high


@pytest.mark.parametrize(("old", "new", "has_one"), [(2, 8, True), (2, 7, False), (8, 2, True), (1, 38, False), (1, 19, False)])
def test_the_interval_s_rule_at_uneven_sides_is_the_guide_s(old, new, has_one):
    from asyncbench.verdicts import compare

    draw = random.Random(old * 100 + new).random  # runs that do not drift: a side of 20 or more that does counts as fewer
    interval = compare.ratio_interval([1 + 0.01 * draw() for _ in range(old)], [2 + 0.01 * draw() for _ in range(new)], changes.CONFIDENCE)
    assert (interval is not None) is has_one


def test_a_change_between_identical_runs_holds_its_ratio_in_its_interval():
    # ten copies of one run, the last five ×1.5: the ratio of medians is 1.5 and the interval's arithmetic (exp of log
    # differences) gave [1.4999999999999998, 1.4999999999999998], the point outside its own interval by its last bit
    values = [0.004] * 5 + [0.004 * 1.5] * 5
    points = tuple(Point(run, "t", f"run-{run}", None, value, None, None) for run, value in enumerate(values, start=1))
    (step,) = changes.change_points(points)
    assert step.ratio_low is not None
    assert step.ratio_high is not None
    assert step.ratio_low <= step.ratio <= step.ratio_high
