"""A run with --bound keeps what bounds each variant's step in the history: each side's slack with its interval and
the reading, as series of their own (no migration: new series names), drawn in the HTML report as one chart per
variant, "what bounds the step", the reading a label on each point; no change points looked for in them; a reading
the recorder does not write is refused before storing, and one found in a store is drawn as "?"."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from asyncbench.history import model, reading, recorded, store, target
from asyncbench.report import html
from asyncbench.results.bound import Bound
from asyncbench.results.schema import Report
from tests.support.bounds import device_bound, host_bound, synchronous
from tests.support.helpers import quick_numpy_results

#: a variant name that is markup: escaped wherever the page shows it
TAG_VARIANT = "<img src=x onerror=alert(1)>"


def with_bound(report: Report, make, run: str) -> Report:
    """`report` as another run (`run` its id) whose first result's variants each have the bound `make(variant)`."""
    first = report.results[0]
    bound: dict[str, Bound] = {name: make(name) for name in first.variants}
    return dataclasses.replace(report, run_id=run, results=(dataclasses.replace(first, bound=bound), *report.results[1:]))


def recorded_store(tmp_path, makes=(host_bound, host_bound, device_bound)):
    """A store holding one run per bound maker (the same quick numpy run, each with its own id), and the case."""
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for index, make in enumerate(makes):
        opened.record(with_bound(report, make, f"bound-run-{index}"))
    return opened, report.results[0]


def _page_data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="asyncbench-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_a_variants_bound_is_recorded_as_its_sides_slacks_and_its_reading(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    result = with_bound(report, host_bound, "r").results[0]
    (variant,) = result.variants
    rows = {row["quantity"]: row for row in recorded.quantities(result) if row["variant"] == variant}
    assert rows["bound:host_slack_s"] == {
        "variant": variant, "quantity": "bound:host_slack_s", "unit": "s", "value": 0.0, "low": 0.0, "high": 0.00001,
    }  # fmt: skip
    assert (rows["bound:device_slack_s"]["value"], rows["bound:device_slack_s"]["low"]) == (0.0003, 0.00028)
    assert rows["bound:reading"]["value"] == model.BOUND_READINGS.index("host")
    assert rows["bound:reading"]["unit"] == model.READING_UNIT
    none = with_bound(report, synchronous, "s").results[0]
    assert not [row for row in recorded.quantities(none) if model.is_bound(row["quantity"])]


def test_a_slack_outside_its_own_interval_is_recorded_with_the_interval_reaching_it():
    assert recorded.bound_interval(0.5, (0.1, 0.4)) == (0.1, 0.5)
    assert recorded.bound_interval(0.05, (0.1, 0.4)) == (0.05, 0.4)
    assert recorded.bound_interval(0.2, None) == (None, None)


def test_the_store_holds_the_bound_series_without_change_points(tmp_path):
    opened, result = recorded_store(tmp_path, (host_bound,) * 4 + (device_bound,) * 4)
    (variant,) = result.variants
    found = {one.quantity: one for one in opened.series(None, html.CHART_POINTS) if one.variant == variant and model.is_bound(one.quantity)}
    assert sorted(found) == ["bound:device_slack_s", "bound:host_slack_s", "bound:reading"]
    host = found["bound:host_slack_s"]
    assert [point.value for point in host.points] == [0.0] * 4 + [0.00042] * 4  # a step from 0: no ratio to tell it by
    assert all(one.change_points == () for one in found.values())
    readings = [model.reading_word(point.value) for point in found["bound:reading"].points]
    assert readings == ["host"] * 4 + ["device"] * 4


def test_the_page_draws_one_chart_per_variant_of_what_bounds_the_step(tmp_path):
    opened, result = recorded_store(tmp_path)
    (variant,) = result.variants
    page = html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    charts = [chart for chart in _page_data(page)["charts"] if chart["title"].endswith("what bounds the step")]
    assert [chart["title"] for chart in charts] == [f"{result.id} · {variant} · what bounds the step"]
    [chart] = charts
    assert chart["unit"] == "µs"
    assert chart["axis"] == "slack per step (µs)"
    host, device = chart["series"]
    assert (host["s"], device["s"]) == ("host", "device")
    assert host["k"] == ["host-bound", "host-bound", "device-bound"]  # the reading labels the first trace's points
    assert "k" not in device
    assert "lo" in host
    assert "hi" in device
    assert '<td>bound:reading</td><td class="num">device</td>' in page  # the latest run's table: the word
    titles = [chart["title"] for chart in _page_data(page)["charts"]]
    assert not [title for title in titles if "bound:" in title]  # never a chart of a bound series alone


def test_a_recorded_reading_the_recorder_does_not_write_is_refused_and_a_stored_one_is_drawn_as_unknown(tmp_path):
    from asyncbench.history import recording

    report = with_bound(Report.load(quick_numpy_results(tmp_path / "r.json")), host_bound, "hostile")
    made = recording.of_report(report)
    entry = made.entries[0]
    for row in entry.quantities:
        if row["quantity"] == model.BOUND_READING:
            row["value"] = 7
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    with pytest.raises(reading.DamagedRow, match="a reading 7 where asyncbench writes one of 0-3"):
        recording._check_points(made)
    opened.record(report)
    import sqlalchemy as sa

    with opened.transaction() as connection:  # a store written by another hand
        series = opened.table("series")
        points = opened.table("points")
        [series_id] = connection.execute(sa.select(series.c.id).where(series.c.quantity == model.BOUND_READING)).scalars()
        connection.execute(points.update().where(points.c.series_id == series_id).values(value=7.5))
    page = html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    [chart] = [chart for chart in _page_data(page)["charts"] if chart["title"].endswith("what bounds the step")]
    assert chart["series"][0]["k"] == [model.UNKNOWN_READING]


def test_a_variant_name_that_is_markup_is_escaped_in_the_bound_chart(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    first = report.results[0]
    (variant,) = first.variants
    renamed = dataclasses.replace(first, variants={TAG_VARIANT: first.variants[variant]}, bound={TAG_VARIANT: host_bound(TAG_VARIANT)})
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record(dataclasses.replace(report, run_id="markup", results=(renamed, *report.results[1:])))
    page = html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    assert TAG_VARIANT not in page  # in the data as \u003c escapes, in the table as &lt;
    [chart] = [chart for chart in _page_data(page)["charts"] if chart["title"].endswith("what bounds the step")]
    assert TAG_VARIANT in chart["title"]  # raw in the data: the page's esc() escapes it as it draws


def test_history_in_a_terminal_shows_the_readings_word_and_no_change_search(tmp_path):
    import io

    from rich.console import Console

    from asyncbench.report import history

    opened, result = recorded_store(tmp_path)
    out = io.StringIO()
    history.print_series(opened.series(None, 40), Console(file=out, width=400))
    [reading_line] = [line for line in out.getvalue().splitlines() if "bound:reading" in line]
    assert " device (3 runs, not searched for changes (what bounds the step: read its chart))" in reading_line
