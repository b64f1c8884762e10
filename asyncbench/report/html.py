"""`asyncbench report -o report.html`: the history as one self-contained page that opens offline.

Plotly.js is inlined (no fetch, no CDN), the data is embedded as JSON in a
`<script type="application/json">` element, and the page's Content Security
Policy forbids every request, so the file makes none. A chart per case and
quantity, one trace per machine (machines side by side), each point with
its 95% interval as error bars and a tooltip that names its run, revision,
interval and machine; change points marked. Then the machines, and the
latest run's table with its verdicts and links to its timelines.

Everything that comes from users or their repositories (labels, case ids,
workload names, branches, revisions, reasons) is escaped: in HTML with
html.escape, in the embedded JSON with `<`, `>` and `&` as \\u escapes, so
no string can close the script element that holds it; tooltips and titles
are escaped again, since Plotly renders a subset of HTML in its texts.
"""

from __future__ import annotations

import datetime
import html
import json
from itertools import groupby
from typing import Any, Sequence

from asyncbench.history.model import Series
from asyncbench.history.store import LatestRun
from asyncbench.results import units

# A chart shows at most this many of a series' newest points: a page of ten thousand runs per series would be
# tens of megabytes and slow to draw; the store keeps every point, `history --format json` gives them all.
CHART_POINTS = 500
# The recorded runs listed on the page, newest first.
RECENT_RUNS = 30
# Everything from the page itself; nothing from anywhere else (no request at all).
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; } td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { width: 100%; max-width: 1000px; height: 320px; margin-bottom: 1em; }
.pass { color: #176f2c; } .fail { color: #b00020; } .inconclusive { color: #8a5a00; }
.note { color: #666; font-size: 0.9em; }
"""
DRAW = """
const data = JSON.parse(document.getElementById("asyncbench-data").textContent);
data.charts.forEach((chart, index) => {
  const traces = [];
  chart.machines.forEach((machine) => {
    traces.push({
      x: machine.x, y: machine.y, text: machine.text, name: machine.name, type: "scatter", mode: "lines+markers",
      hovertemplate: "%{text}<extra></extra>",
      error_y: {type: "data", symmetric: false, array: machine.up, arrayminus: machine.down, visible: true, thickness: 1},
    });
    if (machine.changes.x.length) {
      traces.push({
        x: machine.changes.x, y: machine.changes.y, text: machine.changes.text, name: machine.name + " change",
        type: "scatter", mode: "markers", marker: {symbol: "x", size: 14, color: "#b00020"},
        hovertemplate: "%{text}<extra></extra>",
      });
    }
  });
  Plotly.newPlot("chart-" + index, traces, {
    title: {text: chart.title, font: {size: 14}}, margin: {t: 40, r: 20, b: 40, l: 70},
    yaxis: {title: {text: chart.unit}}, hovermode: "closest", showlegend: true,
  }, {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"]});
});
"""


def _json_for_script(data: Any) -> str:
    """JSON that cannot end the script element holding it, nor be read as markup."""
    text = json.dumps(data, separators=(",", ":"), default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _figure(value: float | None, low: float | None, high: float | None, unit: str) -> str:
    bounds = (low, high) if low is not None and high is not None else None
    return units.with_bounds(value, bounds, unit)


def _point_text(series: Series, index: int) -> str:
    point = series.points[index]
    lines = [
        f"{series.case} {series.variant} {series.quantity}".replace("  ", " "),
        f"{_figure(point.value, point.low, point.high, series.unit)}",
        f"run {point.run}" + (f" · {point.label}" if point.label else ""),
        f"revision {point.revision or 'unknown'}",
        f"machine {series.machine}",
        point.created,
    ]
    return "<br>".join(_e(line) for line in lines)


def _charts(found: Sequence[Series]) -> list[dict[str, Any]]:
    charts = []
    key = lambda s: (s.case, s.variant, s.quantity)  # noqa: E731 - a chart per case and quantity
    for (case, variant, quantity), grouped in groupby(sorted(found, key=key), key=key):
        group = list(grouped)
        machines = []
        for series in group:
            first = max(0, len(series.points) - CHART_POINTS)
            shown = range(first, len(series.points))
            changes = [c for c in series.change_points if c.index >= first]
            machines.append(
                {
                    "name": _e(series.machine),
                    "x": [series.points[i].created for i in shown],
                    "y": [series.points[i].value for i in shown],
                    "up": [max(0.0, (series.points[i].high or series.points[i].value) - series.points[i].value) for i in shown],
                    "down": [max(0.0, series.points[i].value - (series.points[i].low or series.points[i].value)) for i in shown],
                    "text": [_point_text(series, i) for i in shown],
                    "changes": {
                        "x": [series.points[c.index].created for c in changes],
                        "y": [series.points[c.index].value for c in changes],
                        "text": [
                            _e(f"change at {c.at}: ×{c.ratio:.3g}")
                            + "<br>"
                            + _e(
                                f"{units.with_bounds(c.before, None, series.unit)} → {units.with_bounds(c.after, None, series.unit)}, "
                                f"p {c.p_value:.2g}"
                            )
                            for c in changes
                        ],
                    },
                }
            )
        title = f"{case} · {variant + ' · ' if variant else ''}{quantity}"
        charts.append({"title": _e(title), "unit": _e(group[0].unit), "machines": machines})
    return charts


def _machines_table(found: Sequence[Series]) -> str:
    machines = {s.machine: s.machine_info for s in found}
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td>{_e(info.get('cpu'))}</td><td class=num>{_e(info.get('cores'))}</td>"
        f"<td>{_e(', '.join(info.get('gpus') or []) or '–')}</td><td>{_e(info.get('framework'))}</td></tr>"
        for name, info in machines.items()
    )
    return f"<table><tr><th>machine</th><th>CPU</th><th>cores</th><th>GPUs</th><th>framework</th></tr>{rows}</table>"


def _latest_table(latest: LatestRun | None) -> str:
    if latest is None:
        return "<p class=note>no run recorded</p>"
    said = " · ".join(
        _e(part)
        for part in (
            f"run {latest.run}",
            latest.label or "",
            f"revision {latest.revision}" if latest.revision else "",
            f"branch {latest.branch}" if latest.branch else "",
            f"host {latest.host}" if latest.host else "",
            latest.created,
        )
        if part
    )
    rows = []
    for case in latest.cases:
        checks = "<br>".join(
            f"<span class={_e(check.get('verdict', ''))}>{_e(check.get('verdict', ''))}</span> {_e(check.get('expect', ''))}"
            for check in case.checks
        )
        traces = " ".join(f'<a href="file://{_e(path)}">{_e(variant)}</a>' for variant, path in case.traces.items())
        if not case.quantities:
            rows.append(
                f"<tr><td>{_e(case.case)}</td><td>{_e(case.status)}</td><td colspan=3>{_e(case.reason or '')}</td>"
                f"<td>{checks}</td><td>{traces}</td></tr>"
            )
            continue
        for index, (variant, quantity, unit, value, low, high) in enumerate(case.quantities):
            first = index == 0
            rows.append(
                f"<tr><td>{_e(case.case) if first else ''}</td><td>{_e(case.status) if first else ''}</td>"
                f"<td>{_e(variant)}</td><td>{_e(quantity)}</td><td class=num>{_e(_figure(value, low, high, unit))}</td>"
                f"<td>{checks if first else ''}</td><td>{traces if first else ''}</td></tr>"
            )
    header = "<tr><th>case</th><th>status</th><th>variant</th><th>quantity</th><th>median [95%]</th><th>checks</th><th>timelines</th></tr>"
    return f"<p>{said}</p><table>{header}{''.join(rows)}</table>"


def _runs_table(recent: Sequence[Any]) -> str:
    rows = "".join(
        f"<tr><td class=num>{_e(run.id)}</td><td>{_e(run.created)}</td><td>{_e(run.label or '')}</td>"
        f"<td>{_e(run.revision or '')}</td><td>{_e(run.branch or '')}</td><td>{_e(run.host or '')}</td><td>{_e(run.version or '')}</td></tr>"
        for run in recent
    )
    header = "<tr><th>run</th><th>created</th><th>label</th><th>revision</th><th>branch</th><th>host</th><th>asyncbench</th></tr>"
    return f"<table>{header}{rows}</table>"


def render(found: Sequence[Series], latest: LatestRun | None, recent: Sequence[Any], store_shown: str) -> str:
    """The whole page."""
    from plotly.offline import get_plotlyjs

    charts = _charts(found)
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    chart_divs = "".join(f'<div class="chart" id="chart-{index}"></div>' for index in range(len(charts)))
    capped = any(len(s.points) > CHART_POINTS for s in found)
    note = f" Each chart shows a series' newest {CHART_POINTS} runs." if capped else ""
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>asyncbench history</title>"
        f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
        "<h1>asyncbench history</h1>"
        f"<p class=note>{_e(store_shown)} · {len(found)} series on {len({s.machine for s in found})} machine(s) · "
        f"written {created}. Error bars are each run's 95% interval; ✕ marks where a change starts.{_e(note)}</p>"
        f"<h2>Latest run</h2>{_latest_table(latest)}"
        f"<h2>Machines</h2>{_machines_table(found)}"
        f"<h2>Recent runs</h2>{_runs_table(recent)}"
        f"<h2>Trends</h2>{chart_divs}"
        f'<script type="application/json" id="asyncbench-data">{_json_for_script({"charts": charts})}</script>'
        f"<script>{DRAW}</script></body></html>\n"
    )
