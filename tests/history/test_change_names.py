"""How `history` names a change and writes its figures (two new users' trials): an `ab` series' step of +3.5% read
'1.00× → 1.04×, ×1.03 [1.03–1.03]' (an interval of no width, and 1.04 / 1.00 is no 1.03); a store recorded without
labels named the change by the revision all its runs shared."""

from __future__ import annotations

import pytest

from asyncbench.history import changes
from asyncbench.history.model import PAIRED_UNIT, Point
from asyncbench.report import history

SHARED = "4877da96dbfb4fbe8e07a76e032132081ef5d9ed"


def _ab_step(label: bool = False, revisions: list[str | None] | None = None) -> tuple[Point, ...]:
    """Twelve `ab` ratios head/base, 1.0015 ± a little, then 1.0351 ± a little from the seventh run."""
    wobble = [0.0, 0.0003, -0.0002, 0.0001, -0.0003, 0.0002]
    values = [1.0015 + w for w in wobble] + [1.0351 + w for w in wobble]
    return tuple(
        Point(run, "t", f"run-{run}" if label else None, (revisions or [SHARED] * 12)[run - 1], value, None, None)
        for run, value in enumerate(values, start=1)
    )


def test_an_ab_change_line_keeps_its_interval_s_ends_apart_and_its_figures_as_its_ratio():
    (step,) = changes.change_points(_ab_step(), changes.PAIRED_MIN_MAGNITUDE)
    assert step.ratio_low is not None
    assert step.ratio_high is not None
    assert step.ratio_low < step.ratio_high
    line = history.change_line(step, PAIRED_UNIT)
    ratio, interval = line.split(", ×")[1].split(", p")[0].split(" ", 1)
    low, high = interval.strip("[]").split("–")
    assert low != high, line
    assert float(low) <= float(ratio) <= float(high), line
    before, after = (float(text.removesuffix("×")) for text in line.split(": ", 1)[1].split(",")[0].split(" → "))
    decimals = len(ratio.partition(".")[2])
    assert f"{after / before:.{decimals}f}" == ratio, line  # '1.00× → 1.04×, ×1.03' read as a ratio of 1.04


def test_a_time_s_change_line_is_as_it_was():
    """Times keep their three figures and a ratio whose .3g ends are apart its three digits."""
    from asyncbench.history.model import ChangePoint

    step = ChangePoint(7, "v1.3", 12.1e-3, 15.8e-3, 1.31, 1.22, 1.40, 2e-6)
    assert history.change_line(step, "s") == "at v1.3: 12.1 ms → 15.8 ms, ×1.31 [1.22–1.4], p 2e-06"


@pytest.mark.parametrize(
    ("label", "revisions", "named"),
    [
        (False, None, "run 7 (4877da9…)"),  # every run on one revision: it names no run
        (False, [None] * 12, "run 7"),
        (True, None, "run-7"),  # a label is kept
        (False, [f"{run:040x}" for run in range(1, 13)], f"{7:040x}"),  # a revision of its own names it
        (False, [f"{run:040x}" for run in range(1, 7)] + [SHARED] * 6, "run 7 (4877da9…)"),  # shared with the next
    ],
)
def test_a_change_is_named_by_what_tells_its_run_apart(label, revisions, named):
    (step,) = changes.change_points(_ab_step(label, revisions), changes.PAIRED_MIN_MAGNITUDE)
    assert step.run == 7
    assert step.at == named
    assert history.change_line(step, PAIRED_UNIT).startswith(f"at {named}: ")
