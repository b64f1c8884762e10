"""The report page's embedded data (report/html.py): what it says, read back as the page's script reads it, and what
it costs per point, computed from the page (issue 32: at 3,000 series the page was 24.6 MB; the goal is 20 MB).

The format: a table of the runs the charts show (id, time, label, revision; labels, revisions and machines as
positions in tables of their own) and per trace the runs as steps through that table, each median as a whole number
of 10^e, its interval as distances below and above in the same units. Decoding here mirrors the page's script (DRAW),
and the browser test checks that the script draws tooltips from it."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from asyncbench.history.model import ChangePoint, Point, Series
from asyncbench.report import html
from tests.support.report_page import embedded

#: bytes of embedded data per charted point, at most (medians with 5 digits, intervals, run ids in the ten thousands,
#: a label every 50 runs, 40-hex revisions): 18.6 measured; the old format, an object of strings and floats per
#: point, was 64
BYTES_PER_POINT = 22
SERIES_GOAL, PAGE_GOAL_BYTES = 3_000, 20 * 1024 * 1024


def _decoded(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every trace as the page's script reads it: its machine, and per point run id, time, label, revision, median,
    low and high (in the stored unit; `shown`: the median in the chart's unit, 10^p of it, as drawn); and its change
    points (the point's index and text)."""
    runs, traces = data["runs"], []
    for chart in data["charts"]:
        for series in chart["series"]:
            at, positions = 0, []
            for step in series["r"]:
                at += step
                positions.append(at)
            exponent = series["e"]

            def scaled(whole: int, exponent: int = exponent) -> float:
                return whole / 10**-exponent if exponent < 0 else whole * 10**exponent

            def bound(away: list[int | None] | None, sign: int, series: dict[str, Any] = series) -> list[float | None]:
                return [None if away is None or away[i] is None else scaled(w + sign * away[i]) for i, w in enumerate(series["y"])]

            label = [runs["label"][p] for p in positions]
            revision = [runs["revision"][p] for p in positions]
            traces.append(
                {
                    "title": chart["title"],
                    "unit": chart["unit"],
                    "machine": data["machines"][series["m"]],
                    "run": [runs["id"][p] for p in positions],
                    "time": [runs["time"][p] for p in positions],
                    "label": [None if i is None else data["labels"][i] for i in label],
                    "revision": [None if i is None else data["revisions"][i] for i in revision],
                    "value": [scaled(w) for w in series["y"]],
                    "shown": [scaled(w, exponent - chart["p"]) for w in series["y"]],
                    "also": chart["also"],
                    "low": bound(series.get("lo"), -1),
                    "high": bound(series.get("hi"), 1),
                    "changes": series.get("c", []),
                    "discounted": series.get("d", []),
                }
            )
    return traces


def _series(case: int, machine: int, runs: int, first_run: int = 10_000, scale: float = 1e-3) -> Series:
    """A quantity of a case on a machine: `runs` runs an hour apart, medians about `scale` with a 3% wobble, each
    with an interval 2% below and 3% above it, a label every 50 runs and a 40-hex revision each."""
    points = []
    for index in range(runs):
        run = first_run + index
        value = scale * (1 + case % 7) * (1 + 0.03 * math.sin(index * 1.7 + case))
        created = f"2026-{1 + index // 600:02d}-{1 + index // 24 % 25:02d}T{index % 24:02d}:00:00+00:00"
        points.append(Point(run, created, f"v{run}" if run % 50 == 0 else None, f"{run:040x}", value, value * 0.98, value * 1.03))
    return Series(
        case=f"case{case}[torch,cpu]",
        variant="v0",
        quantity="done_s",
        unit="s",
        machine=f"m{machine:011d}",
        machine_info={"cpu": "CPU", "cores": 2, "gpus": [], "framework": "torch 2.13.0"},
        points=tuple(points),
        runs=runs,
    )


def _render(found: list[Series]) -> str:
    return html.render(found, None, [], "h.sqlite")


def test_the_page_says_every_charted_points_run_value_and_interval_to_5_digits():
    found = [_series(case, machine, 130) for case in range(3) for machine in range(2)]
    traces = _decoded(embedded(_render(found)))
    assert len(traces) == len(found)
    for series, trace in zip(found, traces, strict=True):
        shown = series.points[-html.CHART_POINTS :]
        assert trace["machine"] == series.machine
        assert trace["unit"] == "ms"  # medians about a millisecond, drawn in ms (not 0.001 s)
        assert all(math.isclose(said, point.value * 1e3, rel_tol=6e-5) for said, point in zip(trace["shown"], shown, strict=True))
        assert trace["run"] == [p.run for p in shown]
        assert trace["time"] == [p.created[:19].replace("T", " ") for p in shown]
        assert trace["label"] == [p.label for p in shown]
        assert trace["revision"] == [p.revision for p in shown]
        for name in ("value", "low", "high"):
            for said, point in zip(trace[name], shown, strict=True):
                assert math.isclose(said, getattr(point, name), rel_tol=6e-5), (name, said, point)


def test_runs_the_change_search_discounted_are_marked_with_why_and_others_carry_no_mark():
    plain = _series(0, 0, 20)
    marked = dataclasses.replace(_series(1, 0, 20), discounted=((10_004, "a task waited for a CPU 50% of the time"),))
    traces = _decoded(embedded(_render([plain, marked])))
    assert traces[0]["discounted"] == []
    assert traces[1]["discounted"] == [[4, "a task waited for a CPU 50% of the time"]]
    page = _render([marked])
    assert '"discounted: " + esc(d[1])' in page  # drawn as a marker whose text is escaped as it is drawn


def test_values_of_every_size_keep_their_digits_and_missing_intervals_are_left_out():
    found = [
        _with(_series(0, 0, 20, scale=scale), list(_series(0, 0, 20, scale=scale).points), 10 + n)
        for n, scale in enumerate((1e-9, 1e-3, 1.0, 123.0, 1e12, -5e-4))
    ]
    # zero among the medians, and one run without an interval
    points = list(_series(1, 0, 5).points)
    points[1] = points[1]._replace(value=0.0)
    points[2] = points[2]._replace(low=None, high=None)
    found.append(_with(found[0], points, 1))
    bare = [p._replace(low=None, high=None) for p in _series(2, 0, 5).points]
    found.append(_with(found[0], bare, 2))
    data = embedded(_render(found))
    traces = {t["title"]: t for t in _decoded(data)}
    for series in found:
        trace = traces[f"{series.case} · v0 · done_s"]
        for name in ("value", "low", "high"):
            for said, point in zip(trace[name], series.points, strict=True):
                wanted = getattr(point, name)
                assert (said is None) == (wanted is None)
                if wanted is not None:
                    # 5 digits of the median, in the median's units: a bound is as precise as the median it is beside
                    assert abs(said - wanted) <= 6e-5 * max(abs(point.value), abs(wanted)) or said == wanted == 0, (name, said, point)
    bare_trace = next(s for c in data["charts"] for s in c["series"] if c["title"].startswith("case2["))
    assert "lo" not in bare_trace
    assert "hi" not in bare_trace
    assert "c" not in bare_trace


def test_medians_far_apart_in_one_series_stay_whole_numbers_a_double_holds():
    points = [p._replace(value=v, low=v, high=v) for p, v in zip(_series(0, 0, 3).points, (1e-9, 1.0, 1e9), strict=True)]
    data = embedded(_render([_with(_series(0, 0, 3), points, 0)]))
    series = data["charts"][0]["series"][0]
    assert max(abs(w) for w in series["y"]) <= html.LARGEST_WHOLE
    trace = _decoded(data)[0]
    assert math.isclose(trace["value"][2], 1e9, rel_tol=1e-12)
    assert math.isclose(trace["value"][1], 1.0, rel_tol=1e-6)


def test_change_points_name_their_point():
    series = _series(0, 0, 130)
    change_run = series.points[-10].run
    series = dataclasses.replace(series, change_points=(ChangePoint(change_run, "v1", 1e-3, 2e-3, 2.0, 1.8, 2.2, 1e-5),))
    trace = _decoded(embedded(_render([series])))[0]
    (index, text), *_ = trace["changes"]
    assert trace["run"][index] == change_run
    assert text.startswith("change at v1: ×2")


def test_the_page_costs_at_most_its_budget_per_point_so_3000_series_fit_in_20_mb():
    """Computed from a page of 200 series (5 machines × 40 cases) of 150 runs each, 100 charted: the embedded data per
    charted point, and the whole page extrapolated to SERIES_GOAL series."""
    found = [_series(case, machine, 150) for case in range(40) for machine in range(5)]
    page = _render(found)
    empty = _render([])
    points = len(found) * html.CHART_POINTS
    per_point = (len(page.encode()) - len(empty.encode())) / points
    assert per_point <= BYTES_PER_POINT, f"{per_point:.1f} bytes a point"
    assert len(empty.encode()) + SERIES_GOAL * html.CHART_POINTS * per_point <= PAGE_GOAL_BYTES


def _with(series: Series, points: list[Point], case: int) -> Series:
    return dataclasses.replace(series, case=f"case{case}[torch,cpu]", points=tuple(points), runs=len(points))


def test_a_time_whose_interval_reaches_below_0_is_drawn_from_0_and_its_tooltip_says_what_the_table_does():
    """A trial's `t3_s` point, 4.06 ns in [-39.2, 63.3] ns, read '4.06 ns [-39.2–63.3]' in the tooltip, its error
    bar reaching a negative time, where the table says '~0 [≤ 63.3 ns]': its tooltip now says that, its bar starts at 0."""
    points = list(_series(0, 0, 3, scale=1e-8).points)
    points[1] = points[1]._replace(value=4.06e-09, low=-3.924e-08, high=6.33e-08)
    data = embedded(_render([_with(_series(0, 0, 3, scale=1e-8), points, 0)]))
    series = data["charts"][0]["series"][0]
    assert series["z"] == [[1, "~0 [≤ 63.3 ns]"]]  # the table's words, one formatter (units.with_bounds)
    trace = _decoded(data)[0]
    assert trace["low"][1] == 0.0
    assert math.isclose(trace["high"][1], 6.33e-08, rel_tol=1e-4)
    assert math.isclose(trace["value"][1], 4.06e-09, rel_tol=1e-4)
    assert "zero.has(i) ? esc(zero.get(i))" in _render([_with(_series(0, 0, 3, scale=1e-8), points, 0)])
