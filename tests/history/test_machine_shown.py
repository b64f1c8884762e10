"""The machine beside a case as a person reads it: its CPU pressure (a share of the time, recorded as a fraction) as a
percentage in `history`, the report's latest-run table and its chart; `history --format json` keeps the fraction."""

from __future__ import annotations

import io
import json
from html import unescape

from rich.console import Console

from asyncbench.history import changes
from asyncbench.history.model import LatestCase, LatestRun, Point, Series
from asyncbench.report import history as shown
from asyncbench.report import html
from tests.support.report_page import embedded

PRESSURES = [0.000125, 0.0002, 0.0001]


def _pressure() -> Series:
    points = tuple(Point(run, f"2026-11-0{run}T10:00:00+00:00", f"r{run}", None, v, None, None) for run, v in enumerate(PRESSURES, 1))
    return Series("c[numpy,cpu]", "", "cpu_pressure", "", "m00000000001", {"cpu": "CPU", "cores": 2, "framework": "numpy"}, points, runs=3)


def test_history_prints_the_cpu_pressure_as_a_percentage_and_its_json_keeps_the_fraction():
    out = io.StringIO()
    shown.print_series([_pressure()], Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert " 0.01% (3 runs" in text  # the newest, 0.0001: a share of the time
    assert "0.0001 (" not in text
    (written,) = json.loads(changes.to_json([_pressure()]))
    assert [point["value"] for point in written["points"]] == PRESSURES
    assert written["unit"] == ""


def test_the_report_shows_the_cpu_pressure_as_a_percentage_in_the_latest_run_and_on_its_chart():
    case = LatestCase("c[numpy,cpu]", "m00000000001", "ok", None, (), {}, [("", "cpu_pressure", "", 0.000125, None, None)])
    latest = LatestRun(3, "2026-11-03T10:00:00+00:00", "r3", None, None, "h", (case,))
    page = html.render([_pressure()], latest, [], "h.sqlite")
    assert '<td class="num">0.0125%</td>' in unescape(page)
    assert '<td class="num">0.000125</td>' not in unescape(page)
    (chart,) = embedded(page)["charts"]
    assert (chart["unit"], chart["p"], chart["axis"]) == ("%", -2, "%")


def test_machine_s_is_recorded_with_its_median_s_interval_and_without_one_where_its_samples_drifted(tmp_path):
    """docs/guides/history.md: `machine_s` is the reference's median with that median's interval (stats.median_ci)
    where its samples give one; none where they drifted together (a reference that slowed through its case: 40
    samples, each a little slower), and such a row reads, its interval null."""
    from asyncbench.history import recorded, store, target
    from asyncbench.results import stats
    from asyncbench.results.model import OK, Result, Samples, VariantResult
    from asyncbench.results.reference import Reference
    from tests.support.helpers import report_of

    done = tuple(0.002 * (1 + 0.001 * (i % 5)) for i in range(20))
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    steady = tuple(0.001 * (1 + 0.01 * ((i * 7) % 11)) for i in range(40))
    drifted = tuple(0.001 * (1 + 0.002 * i) for i in range(40))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for run, samples in enumerate((steady, drifted), start=1):
        reference = Reference("float32 256×256 product ×4 on numpy cpu", samples, cpu_pressure=0.000125)
        result = Result("c", "e", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)
        (row,) = [r for r in recorded.quantities(result) if r["quantity"] == "machine_s"]
        interval = stats.median_ci(samples)
        assert (row["low"], row["high"]) == (interval if interval else (None, None))
        assert (interval is None) is (samples is drifted)
        opened.record(report_of([result]), label=f"run-{run}")
    (machine,) = [s for s in opened.series() if s.quantity == "machine_s"]
    assert [(p.low is None, p.high is None) for p in machine.points] == [(False, False), (True, True)]
