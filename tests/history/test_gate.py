"""The history's gate (`history --fail-on-regression`, history.gate) fails while a series' newest run lies in a
slowdown that started among its newest `within` runs (a new user's trial, item B1): it failed only where the newest
run itself started the change, so a step found a few runs after it started never failed the gate, and a job run
again after a failure passed. Through the commands and a real store: tests/e2e/test_history_exit_codes.py."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.history import gate
from asyncbench.history.model import ChangePoint, Point, Series

SLOWED_AT = 5  # the run that starts the step


def _series(runs: int, changes: tuple[ChangePoint, ...], unit: str = "s") -> Series:
    """`runs` runs of 1.0, then 2.0 from SLOWED_AT on, with these change points."""
    points = tuple(Point(i, str(i), f"r{i}", None, 1.0 if i < SLOWED_AT else 2.0, None, None) for i in range(1, runs + 1))
    return Series("c[numpy,cpu]", "v", "done_s", unit, "m", {}, points, changes, runs=runs)


DOUBLED = ChangePoint(SLOWED_AT, f"r{SLOWED_AT}", 1.0, 2.0, 2.0, 1.8, 2.2, 1e-6)


def test_a_slowdown_fails_the_gate_on_every_run_until_it_is_within_runs_old():
    """Found at the 8th run, 3 runs after it started: the old gate passed it there and at every run after."""
    for runs in range(SLOWED_AT, SLOWED_AT + gate.WITHIN_RUNS):
        [hit] = gate.regressions([_series(runs, (DOUBLED,))], 0.1)
        assert (hit.change, hit.runs_ago) == (DOUBLED, runs - SLOWED_AT)
        assert hit.slower == pytest.approx(1.8)  # by the ratio's whole interval: its end nearest 1
    assert gate.regressions([_series(SLOWED_AT + gate.WITHIN_RUNS, (DOUBLED,))], 0.1) == []  # no longer new


@pytest.mark.parametrize("within", [1, 3, 20])
def test_within_says_how_many_runs_a_slowdown_fails_the_gate(within):
    failing = [runs for runs in range(SLOWED_AT, SLOWED_AT + 25) if gate.regressions([_series(runs, (DOUBLED,))], 0.1, within)]
    assert failing == list(range(SLOWED_AT, SLOWED_AT + within))


def test_a_slowdown_within_the_margin_or_a_speedup_passes():
    assert gate.regressions([_series(8, (DOUBLED,))], 0.8) == []  # 1.8× at worst: within an 80% margin
    faster = ChangePoint(SLOWED_AT, f"r{SLOWED_AT}", 2.0, 1.0, 0.5, 0.45, 0.55, 1e-6)
    assert gate.regressions([_series(8, (faster,))], 0.1) == []
    rate = _series(8, (DOUBLED,), unit="items/s")  # a rate that doubled is faster
    assert gate.regressions([rate], 0.1) == []


def test_a_newer_change_decides_and_a_flat_series_never_fails():
    back = ChangePoint(9, "r9", 2.0, 1.0, 0.5, 0.45, 0.55, 1e-6)  # the slowdown undone at run 9
    assert gate.regressions([_series(10, (DOUBLED, back))], 0.1) == []
    again = dataclasses.replace(DOUBLED, run=9, at="r9")  # a second slowdown: it is the one named
    [hit] = gate.regressions([_series(10, (DOUBLED, again))], 0.1)
    assert (hit.change.run, hit.runs_ago) == (9, 1)
    assert gate.regressions([_series(30, ())], 0.1) == []


def test_a_change_older_than_the_points_read_passes():
    """`history --last 3` read only the newest three points: a change before them is not new (the command reads as
    many as --within reaches back; tests/e2e/test_history_exit_codes.py)."""
    shown = dataclasses.replace(_series(9, (DOUBLED,)), points=_series(9, (DOUBLED,)).points[-3:])
    assert gate.regressions([shown], 0.1) == []
