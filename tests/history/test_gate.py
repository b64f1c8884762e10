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
    assert gate.regressions([_series(8, (DOUBLED,))], 1.3) == []  # 2.2× at most: within a 130% margin
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


# ---- a verdict from an interval, never a point estimate; the machine's own series never fails the gate -------------
# (a team lead's review: `--max-regression 203%` failed on `×3.03 [?]` and 205% passed, the verdict moving with the
# point ratio of a change with no interval; and the gate failed on the runner's reference time, `machine_s`)

TRIPLED_NO_INTERVAL = ChangePoint(SLOWED_AT, f"r{SLOWED_AT}", 1.0, 3.03, 3.03, None, None, 1e-6)


@pytest.mark.parametrize("margin", [0.1, 2.0, 2.03, 2.05, 10.0])
def test_a_slower_change_without_an_interval_is_inconclusive_whatever_the_margin(margin):
    """The old gate failed at 203% and passed at 205%: the point ratio decided. Now any margin reads the same."""
    [hit] = gate.regressions([_series(7, (TRIPLED_NO_INTERVAL,))], margin)
    assert hit.inconclusive
    assert gate.failing([hit]) == [hit]  # it fails the gate, as `ab`'s INCONCLUSIVE does
    assert gate.failing([hit], allow_inconclusive=True) == []
    faster = dataclasses.replace(TRIPLED_NO_INTERVAL, before=3.03, after=1.0, ratio=1 / 3.03)
    assert gate.regressions([_series(7, (faster,))], margin) == []  # faster by its point ratio: no slowdown to judge


def test_an_inconclusive_line_says_why_and_how_many_more_runs_would_give_it_an_interval():
    from asyncbench.report import history as shown

    # 4 runs before the change, 3 after: C(7, 4) = 35 < 40, one more after it gives C(8, 4) = 70
    [hit] = gate.regressions([_series(7, (TRIPLED_NO_INTERVAL,))], 2.05)
    assert hit.runs_short == 1
    line = shown.regression_line(hit, gate.WITHIN_RUNS)
    assert line.startswith("inconclusive: c[numpy,cpu] v done_s on m: ×3.03 [?]")
    assert "too few runs on a side for an interval (the exact rule: the history guide); 1 more run like these" in line
    assert "not judged against the margin" in line
    assert "unless --allow-inconclusive" in line
    assert "does not fail the gate" in shown.regression_line(hit, gate.WITHIN_RUNS, allow_inconclusive=True)
    # a run discounted before the change leaves 3 there: C(3 + n, 3) >= 40 from n = 5, two more than the 3 after it
    discounted = dataclasses.replace(_series(7, (TRIPLED_NO_INTERVAL,)), discounted=((2, "a neighbour"),))
    assert gate.regressions([discounted], 0.1)[0].runs_short == 2
    # the side before reaches past the points read: not told
    unread = dataclasses.replace(_series(7, (TRIPLED_NO_INTERVAL,)), runs=12)
    assert gate.regressions([unread], 0.1)[0].runs_short is None


def test_a_change_with_an_interval_is_still_judged_by_its_whole_interval():
    wide = ChangePoint(SLOWED_AT, f"r{SLOWED_AT}", 1.0, 3.03, 3.03, 1.5, 4.0, 1e-6)
    [hit] = gate.regressions([_series(8, (wide,))], 0.4)
    assert not hit.inconclusive
    assert hit.slower == pytest.approx(1.5)
    assert gate.regressions([_series(8, (wide,))], 3.5) == []  # 4.0× at most: within 350%, whatever its point ratio


@pytest.mark.parametrize("margin", [0.8, 1.0, 1.19])
def test_a_change_whose_interval_straddles_the_margin_is_inconclusive_and_fails_unless_allowed(margin):
    """A new user's trial: ×1.295 [1.2906–1.3018] at a 29.3% margin passed `history --fail-on-regression` in silence,
    where `ab` and `compare` call an interval across the margin INCONCLUSIVE. DOUBLED is ×2 [1.8–2.2]."""
    from asyncbench.report import history as shown

    [hit] = gate.regressions([_series(8, (DOUBLED,))], margin)
    assert hit.inconclusive
    assert hit.straddles
    assert hit.slower == pytest.approx(1.8)
    assert gate.failing([hit]) == [hit]
    assert gate.failing([hit], allow_inconclusive=True) == []
    line = shown.regression_line(hit, gate.WITHIN_RUNS, margin=margin)
    assert line.startswith("inconclusive: c[numpy,cpu] v done_s on m: ×2 [1.8–2.2]"), line
    assert f"its interval straddles the margin ({margin * 100:.3g}%), so it is shown neither beyond it nor within it" in line
    assert "unless --allow-inconclusive" in line
    rate = _series(8, (dataclasses.replace(DOUBLED, before=2.0, after=1.0, ratio=0.5, ratio_low=0.45, ratio_high=0.55),), unit="items/s")
    [halved] = gate.regressions([rate], 1.0)  # a rate halved [0.45–0.55]: 1.82×–2.22× slower, across a 100% margin
    assert halved.straddles


@pytest.mark.parametrize("change", [DOUBLED, TRIPLED_NO_INTERVAL])
def test_the_machine_s_own_reference_is_a_note_and_never_fails_the_gate(change):
    from asyncbench.history.model import MACHINE_QUANTITY
    from asyncbench.report import history as shown

    reference = dataclasses.replace(_series(8, (change,)), variant="", quantity=MACHINE_QUANTITY)
    case = _series(8, ())
    hits = gate.regressions([reference, case], 0.1)
    assert [hit.series.quantity for hit in hits] == [MACHINE_QUANTITY]  # told
    assert gate.failing(hits) == [] == gate.failing(hits, allow_inconclusive=True)  # never failing
    line = shown.regression_line(hits[0], gate.WITHIN_RUNS)
    assert line.startswith("note: c[numpy,cpu] on m: the machine's reference changed ×")
    for said in ("the runner, not the code", "does not fail the gate", "discounted runs"):
        assert said in line
