"""The history page laid out for people who read it (issue 53, item 8): charts by case with what got slower first,
a case's quantities together in reading order, twin quantities drawn once (saying which names the chart stands for),
times in ms/µs/ns, paired ratios labelled as such, the x axis the runs in the order recorded, and `ab` runs and runs
from a clock that was ahead marked among the recent runs. Before: 25 charts in alphabetical order, y in raw seconds,
`step_s_k0` beside the `done_s` it is a fifth of and torch-on-CPU `issue_s` beside its equal `done_s`, `ab` runs
unmarked."""

from __future__ import annotations

import dataclasses
import re
from html import unescape

from asyncbench.history.model import ChangePoint, LatestRun, Point, RecentRun, Series
from asyncbench.report import history_tables, html, trends
from tests.support.report_page import embedded

MACHINE = "m00000000001"


def _series(case: str, variant: str, quantity: str, values: list[float], unit: str = "s", **changed) -> Series:
    points = tuple(
        Point(run, f"2026-11-{run:02d}T10:00:00+00:00", f"v{run}" if run % 3 == 0 else None, f"{run:040x}", v, v * 0.97, v * 1.04)
        for run, v in enumerate(values, start=1)
    )
    return Series(
        case, variant, quantity, unit, MACHINE, {"cpu": "CPU", "cores": 2, "framework": "torch"}, points, runs=len(points), **changed
    )


def _step(values: list[float], at: int, ratio: float) -> ChangePoint:
    return ChangePoint(at, f"v{at}", values[0], values[-1], ratio, ratio * 0.95, ratio * 1.05, 1e-6)


FLAT = [2.1e-3, 2.0e-3, 2.05e-3, 2.1e-3, 2.0e-3, 2.02e-3]
GROWN = [2.1e-3, 2.0e-3, 2.05e-3, 2.8e-3, 2.9e-3, 2.85e-3]
SHRUNK = [2.8e-3, 2.9e-3, 2.85e-3, 2.1e-3, 2.0e-3, 2.05e-3]


def _titles(page: str) -> list[str]:
    return [chart["title"] for chart in embedded(page)["charts"]]


def test_cases_that_got_slower_come_first_then_changed_ones_each_case_s_charts_together_in_reading_order():
    found = [
        _series("a_flat[torch,cpu]", "k0", "done_s", FLAT),
        _series("a_flat[torch,cpu]", "", "gflops", [5.0, 5.1, 5.2, 5.0, 5.1, 5.0], unit="GFLOP/s"),
        _series("b_faster[torch,cpu]", "k0", "done_s", SHRUNK, change_points=(_step(SHRUNK, 4, 0.72),)),
        _series("c_slower[torch,cpu]", "", "machine_s", [1e-3] * 6),
        _series("c_slower[torch,cpu]", "", "gflops", [5.0, 5.1, 5.2, 5.0, 5.1, 5.0], unit="GFLOP/s"),
        _series("c_slower[torch,cpu]", "k0", "issue_s", [v / (3 + n) for n, v in enumerate(FLAT)]),
        _series("c_slower[torch,cpu]", "k0", "done_s", FLAT),
        _series("c_slower[torch,cpu]", "k1", "done_s", GROWN, change_points=(_step(GROWN, 4, 1.38),)),
    ]
    page = html.render(found, None, [], "h.sqlite")
    assert _titles(page) == [
        "c_slower[torch,cpu] · k1 · done_s",  # its slower chart first, then the case in reading order
        "c_slower[torch,cpu] · k0 · done_s",
        "c_slower[torch,cpu] · k0 · issue_s",
        "c_slower[torch,cpu] · gflops",
        "c_slower[torch,cpu] · machine_s",
        "b_faster[torch,cpu] · k0 · done_s",  # a change, not slower
        "a_flat[torch,cpu] · k0 · done_s",
        "a_flat[torch,cpu] · gflops",
    ]
    headings = re.findall(r'<h3 class="case" id="case-(\d+)">([^<]*)</h3>', page)
    assert headings == [("0", "c_slower[torch,cpu]"), ("5", "b_faster[torch,cpu]"), ("6", "a_flat[torch,cpu]")]
    assert "changed: k1 done_s ×1.38 [1.31–1.45] slower at v4" in page  # with the interval `history` prints
    assert "changed: k0 done_s ×0.72 [0.684–0.756] faster at v4" in page  # faster by its interval
    assert "1 case(s) where something got slower first, then 1 with a change, then the rest (1)" in page


def test_a_change_without_an_interval_is_changed_not_slower_and_its_heading_says_its_point_alone_says_which_way():
    """A [?] change's point ratio says only which way it went: the page neither puts it among the cases that got
    slower nor calls it slower without saying so (the gate calls it INCONCLUSIVE)."""
    bare = dataclasses.replace(_step(GROWN, 4, 1.38), ratio_low=None, ratio_high=None)
    found = [
        _series("a_flat[torch,cpu]", "k0", "done_s", FLAT),
        _series("b_bare[torch,cpu]", "k1", "done_s", GROWN, change_points=(bare,)),
    ]
    page = html.render(found, None, [], "h.sqlite")
    assert "changed: k1 done_s ×1.38 [?] slower by its point alone at v4" in page
    assert "0 case(s) where something got slower first, then 1 with a change, then the rest (1)" in page


def _tooltips(page: str) -> list[str]:
    return [text for chart in embedded(page)["charts"] for one in chart["series"] for _, text in one.get("c", [])]


def test_a_change_is_named_with_the_interval_history_prints_in_its_heading_and_its_tooltip_and_a_way_only_where_shown():
    """A user's page said 'done_s ×1.92 slower at slow-1' and a ✕ tooltip 'change at slow-1: ×1.92 (20.1 ms → 38.6 ms,
    p 0.00078)' where `history` printed '×1.92 [1.38–3]': both now carry the interval, and an interval holding 1
    names no way (the gate cannot call it slower at any margin)."""
    grown = ChangePoint(4, "slow-1", 2.0e-3, 3.86e-3, 1.92, 1.38, 3.0, 7.8e-4)
    moot = ChangePoint(4, "v4", 2.0e-3, 2.1e-3, 1.05, 0.9, 1.2, 1e-3)
    rate = ChangePoint(4, "v4", 5.0, 4.0, 0.8, 0.7, 0.9, 1e-4)  # a rate that fell: slower
    found = [
        _series("a_moot[torch,cpu]", "k0", "done_s", GROWN, change_points=(moot,)),
        _series("b_rate[torch,cpu]", "", "gflops", [5.0, 5.1, 5.2, 4.0, 4.1, 4.0], unit="GFLOP/s", change_points=(rate,)),
        _series("c_grown[torch,cpu]", "sync_every=0", "done_s", GROWN, change_points=(grown,)),
    ]
    page = unescape(html.render(found, None, [], "h.sqlite"))
    assert "changed: sync_every=0 done_s ×1.92 [1.38–3] slower at slow-1" in page
    assert "changed: gflops ×0.8 [0.7–0.9] slower at v4" in page
    assert "changed: k0 done_s ×1.05 [0.9–1.2], which way not shown: its interval holds ×1 at v4" in page
    assert "×1.92 slower" not in page
    assert sorted(_tooltips(page)) == [
        "change at slow-1: ×1.92 [1.38–3] slower (2.00 ms → 3.86 ms, p 0.00078)",
        "change at v4: ×0.8 [0.7–0.9] slower (5 GFLOP/s → 4 GFLOP/s, p 0.0001)",
        "change at v4: ×1.05 [0.9–1.2], which way not shown: its interval holds ×1 (2.00 ms → 2.10 ms, p 0.001)",
    ]


def test_twin_quantities_are_drawn_once_and_the_chart_says_what_else_it_stands_for():
    """torch on a CPU: a variant's issue time is its done time within 0.01%; a step form's step_s_k0 is its done time
    over its 5 steps. Three charts become one, which names the other two and how they relate."""
    done = _series("train[torch,cpu]", "sync_every=0", "done_s", GROWN, change_points=(_step(GROWN, 4, 1.38),))
    issue = dataclasses.replace(
        done, quantity="issue_s", points=tuple(p._replace(value=p.value * 0.99995, low=p.low * 0.9999, high=p.high) for p in done.points)
    )
    per_step = dataclasses.replace(
        done,
        variant="",
        quantity="step_s_k0",
        points=tuple(p._replace(value=p.value / 5, low=p.low / 5, high=p.high / 5) for p in done.points),
    )
    near = dataclasses.replace(
        done, variant="", quantity="epoch_s", points=(*done.points[:-1], done.points[-1]._replace(value=done.points[-1].value * 1.01))
    )
    elsewhere = dataclasses.replace(done, quantity="device_s", change_points=())  # the same figures, but no change marked
    data = embedded(html.render([done, issue, per_step, near, elsewhere], None, [], "h.sqlite"))
    charts = {chart["title"]: chart for chart in data["charts"]}
    assert sorted(charts) == [
        "train[torch,cpu] · epoch_s",
        "train[torch,cpu] · sync_every=0 · device_s",
        "train[torch,cpu] · sync_every=0 · done_s",
    ]
    assert charts["train[torch,cpu] · sync_every=0 · done_s"]["also"] == [
        "sync_every=0 issue_s: the same within 0.1% at every run",
        "step_s_k0: this ÷ 5",
    ]
    assert charts["train[torch,cpu] · epoch_s"]["also"] == []  # 1% off at one run: its own chart
    assert charts["train[torch,cpu] · sync_every=0 · device_s"]["also"] == []


def test_times_are_drawn_in_the_unit_they_read_in_and_ratios_say_what_they_are():
    found = [
        _series("fast[numpy,cpu]", "v", "done_s", [4.1e-6, 4.0e-6, 4.2e-6]),
        _series("ms[numpy,cpu]", "v", "done_s", [0.0031, 0.0032, 0.0030]),
        _series("slow[numpy,cpu]", "v", "done_s", [2.5, 2.6, 2.4]),
        _series("gated[numpy,cpu]", "v", "ab:v@a1b2c3d", [1.0, 1.01, 0.99], unit="x"),
        _series("gated[numpy,cpu]", "", "slowdown_k1", [1.2, 1.21, 1.19], unit="x"),
        _series("mem[numpy,cpu]", "", "host_rss_delta_mb", [3.0, 3.1, 3.0], unit="MiB"),
    ]
    charts = {chart["title"]: chart for chart in embedded(html.render(found, None, [], "h.sqlite"))["charts"]}
    said = {title: (chart["unit"], chart["p"], chart["axis"]) for title, chart in charts.items()}
    assert said == {
        "fast[numpy,cpu] · v · done_s": ("µs", -6, "µs"),
        "ms[numpy,cpu] · v · done_s": ("ms", -3, "ms"),
        "slow[numpy,cpu] · v · done_s": ("s", 0, "s"),
        "gated[numpy,cpu] · v · ab:v@a1b2c3d": ("×", 0, "head/base × (> 1: slower)"),
        "gated[numpy,cpu] · slowdown_k1": ("×", 0, "×"),  # a metric's ratio is no head/base
        "mem[numpy,cpu] · host_rss_delta_mb": ("MiB", 0, "MiB"),
    }


def test_the_x_axis_is_the_runs_in_the_order_recorded_whatever_their_files_say():
    """A run recorded late from an old file stands where the change search saw it: after the runs recorded before."""
    one = _series("late[numpy,cpu]", "v", "done_s", FLAT)
    points = list(one.points)
    points[-1] = points[-1]._replace(created="2025-01-01T00:00:00+00:00")  # run 6: an old file recorded last
    data = embedded(html.render([dataclasses.replace(one, points=tuple(points))], None, [], "h.sqlite"))
    assert data["runs"]["id"] == [1, 2, 3, 4, 5, 6]
    assert data["runs"]["time"][-1] == "2025-01-01 00:00:00"


def test_ab_runs_and_runs_from_a_clock_ahead_are_marked_among_the_recent_runs_and_in_the_latest():
    recent = [
        RecentRun(3, "2099-01-01T00:00:00+00:00", None, "a1b2c3d", None, "h", "0.1.0", "run", True),
        RecentRun(2, "2026-11-02T00:00:00+00:00", "pr-7", "a1b2c3d", None, "h", "0.1.0", "ab", False),
        RecentRun(1, "2026-11-01T00:00:00+00:00", None, "a1b2c3d", None, "h", "0.1.0", "run", False),
    ]
    latest = LatestRun(2, "2026-11-02T00:00:00+00:00", "pr-7", "a1b2c3d", None, "h", (), kind="ab")
    page = html.render([_series("x[numpy,cpu]", "v", "done_s", FLAT)], latest, recent, "h.sqlite")
    rows = re.findall(r"<tr( class=\"ab\")?><td class=\"num\">(\d)</td><td>([^<]*)</td><td>([^<]*)</td>", page)
    assert rows == [
        ("", "3", "run", history_tables._e(f"2099-01-01T00:00:00+00:00 {history_tables.CLOCK_AHEAD}")),
        (' class="ab"', "2", history_tables.AB_RUN, "2026-11-02T00:00:00+00:00"),
        ("", "1", "run", "2026-11-01T00:00:00+00:00"),
    ]
    assert history_tables._e(f"run 2 · {history_tables.AB_RUN} · pr-7") in page


def test_a_twin_within_a_tenth_of_a_percent_either_side_of_its_chart_is_folded_into_it():
    """issue_s 0.06% under done_s at one run and 0.06% over at the next, each within 0.1% of it: drawn once (the factor
    is the middle of the ratios, not the first run's)."""
    done = _series("train[torch,cpu]", "sync_every=0", "done_s", FLAT)
    scaled = [0.9994 if i % 2 == 0 else 1.0006 for i in range(len(FLAT))]
    issue = dataclasses.replace(
        done,
        quantity="issue_s",
        points=tuple(p._replace(value=p.value * f, low=p.low * f, high=p.high * f) for p, f in zip(done.points, scaled, strict=True)),
    )
    data = embedded(html.render([done, issue], None, [], "h.sqlite"))
    assert [chart["title"] for chart in data["charts"]] == ["train[torch,cpu] · sync_every=0 · done_s"]
    assert data["charts"][0]["also"] == ["sync_every=0 issue_s: the same within 0.1% at every run"]


def test_the_layout_keeps_every_series_once_and_folds_only_twins():
    found = [
        _series(f"c{case}[numpy,cpu]", "v", quantity, [float(case + 1 + n) for n in range(4)])
        for case in range(3)
        for quantity in ("done_s", "issue_s")
    ]
    laid_out = trends.layout(found, html.CHART_POINTS)
    drawn = [(chart.case, chart.name) for case in laid_out for chart in case.charts]
    assert sorted(drawn) == [(f"c{case}[numpy,cpu]", "v done_s") for case in range(3)]  # identical issue_s: folded
    assert all(chart.also == ("v issue_s: the same within 0.1% at every run",) for case in laid_out for chart in case.charts)


def test_the_page_says_what_each_point_is_and_never_calls_an_ab_ratio_s_interval_95_percent():
    """An `ab` point is a paired ratio whose interval is at its gate's own confidence (98%, 99.6%...), which the store
    does not keep: the page said "Error bars are each run's 95% interval" and headed its figures "median [95%]"."""
    runs_only = html.render([_series("x[numpy,cpu]", "v", "done_s", FLAT)], None, [], "h.sqlite")
    assert "median (or figure), its error bars its 95% interval." in runs_only
    assert "paired ratio" not in runs_only
    paired = _series("gated[numpy,cpu]", "v", "ab:v@a1b2c3d", [1.0, 1.01, 0.99], unit="x")
    latest = LatestRun(2, "2026-11-02T00:00:00+00:00", "pr-7", "a1b2c3d", None, "h", (), kind="ab")
    page = unescape(html.render([paired], latest, [], "h.sqlite"))
    assert "each run's 95% interval" not in page
    assert "an ab point is the gate's paired ratio head/base" in page
    assert "the gate's own confidence" in page
    assert "median [95%]" not in page
    assert history_tables.FIGURE_HEADER["ab"] in page
    latest_run = dataclasses.replace(latest, kind="run")
    assert "<th>median [95%]</th>" in html.render([paired], latest_run, [], "h.sqlite")


def test_an_ab_check_the_store_keeps_as_same_reads_within_margin_where_its_interval_excludes_no_change():
    """A trial: `ab` printed `+102.5% [+91.7% … +144.5%] WITHIN MARGIN (slower, by less than the 150% margin)`, the
    report's latest run `pass ab sync_every=0 (SAME)` beside 2.02× [1.92–2.44]. The store keeps the file's label
    (SAME); the page words it as `ab` does, from the stored interval (stores recorded before read the same)."""
    from asyncbench.history.model import LatestCase, LatestRun
    from asyncbench.report import history_tables

    within = {"expect": "ab sync_every=0 (SAME)", "verdict": "pass", "value": 2.02, "bounds": [1.92, 2.44]}
    same = {"expect": "ab sync_every=4 (SAME)", "verdict": "pass", "value": 1.01, "bounds": [0.97, 1.04]}
    case = LatestCase("c[numpy,cpu]", "h", "ok", None, (within, same), {}, [])
    page = history_tables.latest(LatestRun(2, "2026-11-02T00:00:00+00:00", "pr-7", "a1b2c3d", None, "h", (case,), kind="ab"))
    assert "ab sync_every=0 (WITHIN MARGIN (slower, by less than the margin))" in page
    assert "ab sync_every=0 (SAME)" not in page
    assert "ab sync_every=4 (SAME)" in page  # its interval holds no change: SAME is what it reads
    damaged = {**within, "bounds": ["x", None]}  # a store edited by hand: its words as stored, no traceback
    case = LatestCase("c[numpy,cpu]", "h", "ok", None, (damaged,), {}, [])
    assert "ab sync_every=0 (SAME)" in history_tables.latest(
        dataclasses.replace(LatestRun(2, "t", None, None, None, "h", (case,)), kind="ab")
    )


def test_a_change_of_the_machine_alone_is_a_change_of_the_runner_never_a_case_that_got_slower():
    """A trial's runner ×1.5 slower for good, the code unchanged: the page put the case first among those "where
    something got slower", `changed: machine_s ×1.49 … slower`, where `history` and its gate call it the runner."""
    moved = [1e-3, 1.01e-3, 0.99e-3, 1.5e-3, 1.49e-3, 1.51e-3]
    found = [
        _series("a_flat[torch,cpu]", "k0", "done_s", FLAT),
        _series("m_moved[torch,cpu]", "", "machine_s", moved, change_points=(_step(moved, 4, 1.49),)),
        _series("m_moved[torch,cpu]", "k0", "done_s", FLAT),
    ]
    page = html.render(found, None, [], "h.sqlite")
    assert "0 case(s) where something got slower first, then 1 with a change, then the rest (1)" in page
    assert "machine_s ×1.49 [1.42–1.56] slower at v4 (the runner, not the code)" in page
