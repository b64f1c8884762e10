"""The history as a team lead read it (a new user's trial, h42): a change of figures that cannot be told from 0 is no
slowdown (the gate failed on ×1.3 of a per-step time of 4 ns in [−39, +63] ns, which the line itself printed as
"~0"); one-run quantities were folded into "multiples" of an unrelated one (× 0.7284, ÷ 3583, × −0.001954); and a
gate where every series is young said "not judged: …" but not that it judged nothing."""

from __future__ import annotations

import io

from rich.console import Console

from asyncbench.history import gate
from asyncbench.history.model import ChangePoint, Point, Series
from asyncbench.report import case_words, history, trends

STEP_AT = 7  # the run that starts the ×1.3


def _t3(near_zero: bool = True, runs: int = 12) -> Series:
    """`sync_async`'s t3_s: 4.05 ns, then 5.28 ns from STEP_AT on, each run's interval [−39, +63] ns (or clear of 0)."""
    low, high = (-39e-9, 63e-9) if near_zero else (3.9e-9, 5.5e-9)
    points = tuple(
        Point(
            i,
            str(i),
            f"L{i:02d}",
            None,
            4.05e-9 if i < STEP_AT else 5.28e-9,
            low if i < STEP_AT else low * 1.3,
            high * (1 if i < STEP_AT else 1.3),
        )
        for i in range(1, runs + 1)
    )
    change = ChangePoint(STEP_AT, f"L{STEP_AT:02d}", 4.05e-9, 5.28e-9, 1.3, 1.28, 1.32, 1e-6)
    return Series("sync_async[numpy,cpu]", "", "t3_s", "s", "m", {}, points, (change,), runs=runs)


def _printed(found: list[Series]) -> str:
    out = io.StringIO()
    history.print_series(found, Console(file=out, width=400, color_system=None))
    return out.getvalue()


def test_a_change_of_figures_that_cannot_be_told_from_0_is_no_regression_and_says_so_once():
    one = _t3()
    assert gate.regressions([one], 0.1) == []  # it failed the gate: ×1.3 [1.28–1.32]
    said = _printed([one])
    assert "×1.3" not in said
    assert "change(s)" not in said
    assert said.count(history.NOT_TOLD_FROM_ZERO) == 1
    heading = case_words.heading(trends.Case(one.case, (trends.Chart(one.case, "t3_s", "ns", -9, (one,)),)), 0)
    assert "slower" not in heading
    assert "×1.3" not in heading
    assert "cannot be told from 0" in heading
    assert not trends.Chart(one.case, "t3_s", "ns", -9, (one,)).slower


def test_the_same_change_of_figures_clear_of_0_still_fails_the_gate():
    one = _t3(near_zero=False)
    [hit] = gate.regressions([one], 0.1)
    assert hit.change is not None
    assert not hit.inconclusive
    said = _printed([one])
    assert "1 change(s)" in said
    assert "×1.3 [1.28–1.32]" in said
    assert history.NOT_TOLD_FROM_ZERO not in said


def _memory(quantity: str, values: list[float]) -> Series:
    points = tuple(Point(i, str(i), None, None, value, None, None) for i, value in enumerate(values, 1))
    return Series("ci-gate[numpy,cpu]", "", quantity, "mb", "m", {}, points, runs=len(values))


def test_a_one_run_quantity_is_never_folded_into_another_as_a_multiple():
    """One run of ci-gate: gate-memory's chart stood for 'host_uss_delta_mb_k1: this × -0.001954', none charted."""
    found = [_memory("gate_memory", [3.583]), _memory("host_rss_delta_mb_k1", [2.61]), _memory("host_uss_delta_mb_k1", [-0.007])]
    charts = [chart for case in trends.layout(found, 100) for chart in case.charts]
    assert len(charts) == 3
    assert all(chart.also == () for chart in charts)


def test_a_twin_needs_its_runs_and_a_positive_factor():
    three = [1.0, 2.0, 4.0]
    twins = trends.layout([_memory("a", three), _memory("b", [v / 5 for v in three])], 100)
    assert [chart.also for case in twins for chart in case.charts] == [("b: this ÷ 5",)]
    two = trends.layout([_memory("a", three[:2]), _memory("b", [v / 5 for v in three[:2]])], 100)
    assert [chart.also for case in two for chart in case.charts] == [(), ()]  # two runs: one coincidence
    negative = trends.layout([_memory("a", three), _memory("b", [-v for v in three])], 100)
    assert [chart.also for case in negative for chart in case.charts] == [(), ()]


def test_a_gate_where_every_series_is_young_says_it_judged_nothing():
    young = [_t3(runs=3), _t3(runs=2)]
    assert gate.judged_nothing(young)
    assert not gate.judged_nothing([*young, _t3(near_zero=False)])
    line = history.too_short_line(gate.too_short(young), judged_nothing=gate.judged_nothing(young))
    assert line.startswith("the gate judged nothing: all 2 series are too short to judge (2 to 3 runs recorded")
