"""A run with --syncs keeps its census's whole step in the history: waits and time blocked per step, per variant,
with their intervals, charted and in the HTML report's latest run; a census without rounds records nothing."""

from __future__ import annotations

import dataclasses

from asyncbench.history import recorded, store, target
from asyncbench.report import html
from asyncbench.results.schema import Report
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from tests.support.helpers import quick_numpy_results

POINT = SyncPoint("/src/train.py", 42, SyncKind.PRINT, "jax.Array.__str__", 10.0, 0.0098, None, None, (10,) * 6, (0.0098,) * 6)


def _with_census(result, rounds: int = 6):
    (variant,) = result.variants
    census = Census(variant, rounds, (POINT,) if rounds else (), "jax's hooks")
    return dataclasses.replace(result, syncs={variant: census})


def test_the_census_whole_step_is_recorded_per_variant_with_its_interval(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    result = _with_census(report.results[0])
    (variant,) = result.variants
    rows = {row["quantity"]: row for row in recorded.quantities(result) if row["variant"] == variant}
    assert rows["syncs_per_step"] == {"variant": variant, "quantity": "syncs_per_step", "unit": "", "value": 10, "low": 10, "high": 10}
    assert rows["sync_wait_s"]["unit"] == "s"
    assert rows["sync_wait_s"]["value"] == 0.0098
    synchronous = _with_census(report.results[0], rounds=0)
    assert not [row for row in recorded.quantities(synchronous) if row["quantity"].startswith("sync")]


def test_the_html_report_shows_the_census_of_the_latest_run(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    report = dataclasses.replace(report, results=(_with_census(report.results[0]), *report.results[1:]))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record(report)
    latest = opened.latest()
    assert latest is not None
    quantities = {quantity for case in latest.cases for _, quantity, *_ in case.quantities}
    assert {"syncs_per_step", "sync_wait_s"} <= quantities
    page = html.render(opened.series(None, html.CHART_POINTS), latest, opened.recent(html.RECENT_RUNS), opened.target.shown)
    assert "<td>syncs_per_step</td>" in page
    assert "9.80 ms" in page
