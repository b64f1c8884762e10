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

from asyncbench.history.model import ChangePoint, Series
from asyncbench.history.store import LatestRun
from asyncbench.results import units

# A chart shows at most this many of a series' newest points: a thousand series of 500 points made a 67 MB page
# (benchmarks/history_scale.py); the store keeps every point, `history --last N --format json` gives more.
CHART_POINTS = 100
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
const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
const num = (value) => (value === null ? "?" : Number(value).toPrecision(3));
data.charts.forEach((chart, index) => {
  const traces = [];
  chart.machines.forEach((machine) => {
    const text = machine.y.map((y, i) => [
      esc(chart.title),
      num(y) + " " + esc(chart.unit) + " [" + num(machine.low[i]) + "–" + num(machine.high[i]) + "]",
      "run " + machine.run[i] + (machine.label[i] === null ? "" : " · " + esc(data.labels[machine.label[i]])),
      "revision " + (machine.revision[i] === null ? "unknown" : esc(data.revisions[machine.revision[i]])),
      "machine " + esc(machine.name),
      esc(machine.x[i]),
    ].join("<br>"));
    traces.push({
      x: machine.x, y: machine.y, text: text, name: esc(machine.name), type: "scatter", mode: "lines+markers",
      hovertemplate: "%{text}<extra></extra>",
      error_y: {
        type: "data", symmetric: false, visible: true, thickness: 1,
        array: machine.y.map((y, i) => (machine.high[i] === null ? 0 : Math.max(0, machine.high[i] - y))),
        arrayminus: machine.y.map((y, i) => (machine.low[i] === null ? 0 : Math.max(0, y - machine.low[i]))),
      },
    });
    if (machine.changes.length) {
      traces.push({
        x: machine.changes.map((c) => machine.x[c.point]), y: machine.changes.map((c) => machine.y[c.point]),
        text: machine.changes.map((c) => esc(c.text)), name: esc(machine.name) + " change",
        type: "scatter", mode: "markers", marker: {symbol: "x", size: 14, color: "#b00020"},
        hovertemplate: "%{text}<extra></extra>",
      });
    }
  });
  Plotly.newPlot("chart-" + index, traces, {
    title: {text: esc(chart.title), font: {size: 14}}, margin: {t: 40, r: 20, b: 40, l: 70},
    yaxis: {title: {text: esc(chart.unit)}}, hovermode: "closest", showlegend: true,
  }, {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"]});
});
"""
# Significant digits of the values embedded in the page: past the precision of any interval here (3 are shown),
# and each digit less is a megabyte less on a page of two thousand series.
DIGITS = 5


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


def _round(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.{DIGITS}g}")


class _Index:
    """Strings sent once: points refer to them by position (labels and revisions repeat across every series)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._positions: dict[str, int] = {}

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        if text not in self._positions:
            self._positions[text] = len(self.items)
            self.items.append(text)
        return self._positions[text]


def _change_text(change: ChangePoint, unit: str) -> str:
    before, after = units.with_bounds(change.before, None, unit), units.with_bounds(change.after, None, unit)
    return f"change at {change.at}: ×{change.ratio:.3g} ({before} → {after}, p {change.p_value:.2g})"


def _charts(found: Sequence[Series], labels: _Index, revisions: _Index) -> list[dict[str, Any]]:
    """A chart per case and quantity, a trace per machine; user strings raw (the page escapes them as it draws)."""
    charts = []
    key = lambda s: (s.case, s.variant, s.quantity)  # noqa: E731 - a chart per case and quantity
    for (case, variant, quantity), grouped in groupby(sorted(found, key=key), key=key):
        group = list(grouped)
        machines = []
        for series in group:
            shown = series.points[-CHART_POINTS:]
            where = {point.run: index for index, point in enumerate(shown)}
            machines.append(
                {
                    "name": series.machine,
                    "x": [point.created[:19].replace("T", " ") for point in shown],
                    "y": [_round(point.value) for point in shown],
                    "low": [_round(point.low) for point in shown],
                    "high": [_round(point.high) for point in shown],
                    "run": [point.run for point in shown],
                    "label": [labels(point.label) for point in shown],
                    "revision": [revisions(point.revision) for point in shown],
                    "changes": [
                        {"point": where[change.run], "text": _change_text(change, series.unit)}
                        for change in series.change_points
                        if change.run in where
                    ],
                }
            )
        title = f"{case} · {variant + ' · ' if variant else ''}{quantity}"
        charts.append({"title": title, "unit": group[0].unit, "machines": machines})
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
        f"<td>{_e(run.revision or '')}</td><td>{_e(run.branch or '')}</td><td>{_e(run.host or '')}</td>"
        f"<td>{_e(run.version or '')}</td></tr>"
        for run in recent
    )
    header = "<tr><th>run</th><th>created</th><th>label</th><th>revision</th><th>branch</th><th>host</th><th>asyncbench</th></tr>"
    return f"<table>{header}{rows}</table>"


def render(found: Sequence[Series], latest: LatestRun | None, recent: Sequence[Any], store_shown: str) -> str:
    """The whole page."""
    from plotly.offline import get_plotlyjs

    labels, revisions = _Index(), _Index()
    charts = _charts(found, labels, revisions)
    data = {"charts": charts, "labels": labels.items, "revisions": revisions.items}
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    chart_divs = "".join(f'<div class="chart" id="chart-{index}"></div>' for index in range(len(charts)))
    capped = any(s.runs > len(s.points) for s in found)
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
        f'<script type="application/json" id="asyncbench-data">{_json_for_script(data)}</script>'
        f"<script>{DRAW}</script></body></html>\n"
    )
