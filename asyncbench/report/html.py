"""`asyncbench report -o report.html`: the history as one self-contained page that opens offline.

Plotly.js is inlined (no fetch, no CDN), the data is embedded as JSON in a
`<script type="application/json">` element, and the page's Content Security
Policy forbids every request, so the file makes none. A chart per case and
quantity, one trace per machine (machines side by side), each point with
its 95% interval as error bars and a tooltip that names its run, revision,
interval and machine; change points marked. Then the machines, and the
latest run's table with its verdicts and links to its timelines.

The embedded data is columns, not an object per point, and says each thing
once: a table of the runs the charts show (id, time, and label, revision
as positions in tables of their own), a table of machines; per trace, its
runs as steps through the run table (mostly 1), each median as a whole
number of 10^e (e per trace, so that every median keeps DIGITS significant
digits) and its interval as distances below and above it in those units,
left out where no run has one. The page's script (DRAW) builds the points
and their tooltips from these. About 18 bytes a point where objects of
strings and floats took 64: at 3,000 series of 100 charted points, a
10.1 MB page, 4.8 MB of it Plotly (benchmarks/history_scale.py --cases 75;
it was 24 MB).

Everything that comes from users or their repositories (labels, case ids,
workload names, branches, revisions, reasons) is escaped: in HTML with
report.escaping.html (control characters shown, then html.escape); in the
embedded JSON with control characters shown and `<`, `>` and `&` as \\u
escapes, so no string can close the script element that holds it; tooltips and titles
are escaped again, since Plotly renders a subset of HTML in its texts.
Every attribute is quoted, and a word that becomes a class (a verdict) is
taken from the vocabulary, never from the store. The policy lets run only
the page's own two scripts, named by their sha256 (no 'unsafe-inline'), so
markup that got in anyway could run nothing.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import math
from itertools import groupby
from typing import Any, Sequence

from asyncbench.history.model import ChangePoint, LatestRun, Series
from asyncbench.report import escaping
from asyncbench.results import units

# A chart shows at most this many of a series' newest points: a thousand series of 500 points made a 67 MB page in
# the old format, one object per point (benchmarks/history_scale.py), and a chart of 100 runs shows a step and its
# neighbourhood (change points are looked for in a series' newest 100 runs too); the store keeps every point,
# `history --last N --format json` gives more.
CHART_POINTS = 100
# The recorded runs listed on the page, newest first.
RECENT_RUNS = 30
# Everything from the page itself; nothing from anywhere else (no request at all). Scripts: only the page's own two
# (Plotly and DRAW), named by their sha256 (`csp`), so a string that became markup could run nothing even if it
# escaped its escaping. Styles stay inline: Plotly sets style attributes as it draws, and a style runs no code.
CSP = "default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; img-src data:; font-src data:"
#: the class a verdict's word gets on the page (anything else gets none)
VERDICT_CLASSES = {"pass": "pass", "fail": "fail", "inconclusive": "inconclusive"}
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
const runs = data.runs;
// A value is a whole number of 10^e (e < 0: divided by an exact power of ten, the closest double to the decimal).
const scaled = (whole, e) => (e < 0 ? whole / 10 ** -e : whole * 10 ** e);
data.charts.forEach((chart, index) => {
  const traces = [];
  chart.series.forEach((series) => {
    const name = data.machines[series.m];
    let at = 0;
    const run = series.r.map((step) => (at += step));
    const y = series.y.map((whole) => scaled(whole, series.e));
    const bound = (away, sign) => series.y.map((whole, i) => (
      away === undefined || away[i] === null ? null : scaled(whole + sign * away[i], series.e)));
    const low = bound(series.lo, -1), high = bound(series.hi, 1);
    const x = run.map((r) => runs.time[r]);
    const text = y.map((value, i) => [
      esc(chart.title),
      num(value) + " " + esc(chart.unit) + " [" + num(low[i]) + "–" + num(high[i]) + "]",
      "run " + runs.id[run[i]] + (runs.label[run[i]] === null ? "" : " · " + esc(data.labels[runs.label[run[i]]])),
      "revision " + (runs.revision[run[i]] === null ? "unknown" : esc(data.revisions[runs.revision[run[i]]])),
      "machine " + esc(name),
      esc(x[i]),
    ].join("<br>"));
    traces.push({
      x: x, y: y, text: text, name: esc(name), type: "scatter", mode: "lines+markers",
      hovertemplate: "%{text}<extra></extra>",
      error_y: {
        type: "data", symmetric: false, visible: true, thickness: 1,
        array: y.map((value, i) => (high[i] === null ? 0 : Math.max(0, high[i] - value))),
        arrayminus: y.map((value, i) => (low[i] === null ? 0 : Math.max(0, value - low[i]))),
      },
    });
    const changes = series.c || [];
    if (changes.length) {
      traces.push({
        x: changes.map((c) => x[c[0]]), y: changes.map((c) => y[c[0]]),
        text: changes.map((c) => esc(c[1])), name: esc(name) + " change",
        type: "scatter", mode: "markers", marker: {symbol: "x", size: 14, color: "#b00020"},
        hovertemplate: "%{text}<extra></extra>",
      });
    }
    const discounted = series.d || [];
    if (discounted.length) {
      traces.push({
        x: discounted.map((d) => x[d[0]]), y: discounted.map((d) => y[d[0]]),
        text: discounted.map((d) => "discounted: " + esc(d[1])), name: esc(name) + " discounted",
        type: "scatter", mode: "markers", marker: {symbol: "circle-open", size: 14, color: "#888888"},
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
# Significant digits of the values embedded in the page, at least, for each point's median: past the precision of any
# interval here (3 are shown), and each digit less is a megabyte less on a page of two thousand series.
DIGITS = 5
# The largest whole number a value is sent as: a double holds every integer up to 2^53 (about 9e15) exactly.
LARGEST_WHOLE = 10**15


def _json_for_script(data: Any) -> str:
    """JSON that cannot end the script element holding it, nor be read as markup."""
    text = json.dumps(data, separators=(",", ":"), default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _e(value: Any) -> str:
    """Text or an attribute's value (always quoted) as HTML: control characters shown, `&`, `<`, `>`, `"` and `'`
    escaped (report.escaping, the rule of every writer)."""
    return escaping.html(value)


def csp(*scripts: str) -> str:
    """The page's Content Security Policy, which lets run these inline scripts and no other."""
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts)
    return CSP.format(scripts=hashes)


def _figure(value: float | None, low: float | None, high: float | None, unit: str) -> str:
    bounds = (low, high) if low is not None and high is not None else None
    return units.with_bounds(value, bounds, unit)


def _exponent(values: Sequence[float]) -> int:
    """The power of ten a series' values are sent as whole multiples of: each median keeps DIGITS significant digits
    (the least one sets it), and no whole number passes LARGEST_WHOLE (the greatest one caps it)."""
    sizes = [abs(v) for v in values if v != 0 and math.isfinite(v)]
    if not sizes:
        return 0
    least = math.floor(math.log10(min(sizes))) - (DIGITS - 1)
    return max(least, math.ceil(math.log10(max(sizes)) - math.log10(LARGEST_WHOLE)), -300)  # 10.0**300 is a double; 10.0**330 is not


def _whole(value: float, exponent: int) -> int:
    return round(value * 10.0**-exponent) if exponent < 0 else round(value / 10.0**exponent)


class _Index:
    """Strings sent once: runs refer to them by position (labels, revisions and machines repeat)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._positions: dict[str, int] = {}

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        text = escaping.visible(text)  # shown in tooltips as every writer shows a name
        if text not in self._positions:
            self._positions[text] = len(self.items)
            self.items.append(text)
        return self._positions[text]


def _runs(found: Sequence[Series], labels: _Index, revisions: _Index) -> tuple[dict[str, list[Any]], dict[int, int]]:
    """Every run a chart shows, once, in time order, as columns (id, time, label and revision as positions in their
    tables); and each run's position there, by which the points name it."""
    shown = {point.run: point for series in found for point in series.points[-CHART_POINTS:]}
    ordered = sorted(shown.values(), key=lambda point: (point.created, point.run))
    columns: dict[str, list[Any]] = {
        "id": [point.run for point in ordered],
        "time": [escaping.visible(point.created[:19].replace("T", " ")) for point in ordered],
        "label": [labels(point.label) for point in ordered],
        "revision": [revisions(point.revision) for point in ordered],
    }
    return columns, {point.run: position for position, point in enumerate(ordered)}


def _series(series: Series, run_positions: dict[int, int], machines: _Index) -> dict[str, Any]:
    """One machine's trace, compact: `r` the runs' positions as steps from the one before (mostly 1), `y` each
    median as a whole number of 10^`e`, `lo` and `hi` its interval's distance below and above it in the same units
    (null where a run has none; left out where no run has one), `c` its change points ([point, text], left out if
    none), `d` the runs its change search discounted ([point, why], left out if none)."""
    shown = series.points[-CHART_POINTS:]
    exponent = _exponent([point.value for point in shown])
    wholes = [_whole(point.value, exponent) for point in shown]
    positions = [run_positions[point.run] for point in shown]
    trace: dict[str, Any] = {
        "m": machines(series.machine),
        "e": exponent,
        "r": [position - (positions[i - 1] if i else 0) for i, position in enumerate(positions)],
        "y": wholes,
    }
    if any(point.low is not None for point in shown):
        trace["lo"] = [None if p.low is None else w - _whole(p.low, exponent) for p, w in zip(shown, wholes, strict=True)]
    if any(point.high is not None for point in shown):
        trace["hi"] = [None if p.high is None else _whole(p.high, exponent) - w for p, w in zip(shown, wholes, strict=True)]
    where = {point.run: index for index, point in enumerate(shown)}
    changes = [[where[change.run], _change_text(change, series.unit)] for change in series.change_points if change.run in where]
    if changes:
        trace["c"] = changes
    discounted = [[where[run], escaping.visible(why)] for run, why in series.discounted if run in where]
    if discounted:  # runs the change search left out (history.discount): a moved machine, a neighbour
        trace["d"] = discounted
    return trace


def _change_text(change: ChangePoint, unit: str) -> str:
    before, after = units.with_bounds(change.before, None, unit), units.with_bounds(change.after, None, unit)
    return f"change at {escaping.visible(change.at)}: ×{change.ratio:.3g} ({before} → {after}, p {change.p_value:.2g})"


def _charts(found: Sequence[Series], run_positions: dict[int, int], machines: _Index) -> list[dict[str, Any]]:
    """A chart per case and quantity, a trace per machine; user strings raw (the page escapes them as it draws)."""
    charts = []
    key = lambda s: (s.case, s.variant, s.quantity)  # noqa: E731 - a chart per case and quantity
    for (case, variant, quantity), grouped in groupby(sorted(found, key=key), key=key):
        group = list(grouped)
        title = escaping.visible(f"{case} · {variant + ' · ' if variant else ''}{quantity}")
        charts.append(
            {"title": title, "unit": escaping.visible(group[0].unit), "series": [_series(s, run_positions, machines) for s in group]}
        )
    return charts


def _machines_table(found: Sequence[Series]) -> str:
    machines = {s.machine: s.machine_info for s in found}
    rows = "".join(
        f'<tr><td>{_e(name)}</td><td>{_e(info.get("cpu"))}</td><td class="num">{_e(info.get("cores"))}</td>'
        f"<td>{_e(', '.join(info.get('gpus') or []) or '–')}</td><td>{_e(info.get('framework'))}</td></tr>"
        for name, info in machines.items()
    )
    return f"<table><tr><th>machine</th><th>CPU</th><th>cores</th><th>GPUs</th><th>framework</th></tr>{rows}</table>"


def _latest_table(latest: LatestRun | None) -> str:
    if latest is None:
        return '<p class="note">no run recorded</p>'
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
            f'<span class="{_e(VERDICT_CLASSES.get(str(check.get("verdict", "")), ""))}">{_e(check.get("verdict", ""))}</span> '
            f"{_e(check.get('expect', ''))}"
            for check in case.checks
        )
        traces = " ".join(f'<a href="file://{_e(path)}">{_e(variant)}</a>' for variant, path in case.traces.items())
        if not case.quantities:
            rows.append(
                f'<tr><td>{_e(case.case)}</td><td>{_e(case.status)}</td><td colspan="3">{_e(case.reason or "")}</td>'
                f"<td>{checks}</td><td>{traces}</td></tr>"
            )
            continue
        for index, (variant, quantity, unit, value, low, high) in enumerate(case.quantities):
            first = index == 0
            rows.append(
                f"<tr><td>{_e(case.case) if first else ''}</td><td>{_e(case.status) if first else ''}</td>"
                f'<td>{_e(variant)}</td><td>{_e(quantity)}</td><td class="num">{_e(_figure(value, low, high, unit))}</td>'
                f"<td>{checks if first else ''}</td><td>{traces if first else ''}</td></tr>"
            )
    header = "<tr><th>case</th><th>status</th><th>variant</th><th>quantity</th><th>median [95%]</th><th>checks</th><th>timelines</th></tr>"
    return f"<p>{said}</p><table>{header}{''.join(rows)}</table>"


def _runs_table(recent: Sequence[Any]) -> str:
    rows = "".join(
        f'<tr><td class="num">{_e(run.id)}</td>'
        f"<td>{_e(run.created)}</td><td>{_e(run.label or '')}</td>"
        f"<td>{_e(run.revision or '')}</td><td>{_e(run.branch or '')}</td><td>{_e(run.host or '')}</td>"
        f"<td>{_e(run.version or '')}</td></tr>"
        for run in recent
    )
    header = "<tr><th>run</th><th>created</th><th>label</th><th>revision</th><th>branch</th><th>host</th><th>asyncbench</th></tr>"
    return f"<table>{header}{rows}</table>"


def render(found: Sequence[Series], latest: LatestRun | None, recent: Sequence[Any], store_shown: str) -> str:
    """The whole page."""
    from plotly.offline import get_plotlyjs

    plotly = get_plotlyjs()
    labels, revisions, machines = _Index(), _Index(), _Index()
    runs, run_positions = _runs(found, labels, revisions)
    charts = _charts(found, run_positions, machines)
    data = {"charts": charts, "runs": runs, "labels": labels.items, "revisions": revisions.items, "machines": machines.items}
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    chart_divs = "".join(f'<div class="chart" id="chart-{index}"></div>' for index in range(len(charts)))
    capped = any(s.runs > len(s.points) for s in found)
    note = f" Each chart shows a series' newest {CHART_POINTS} runs." if capped else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp(plotly, DRAW))}">'
        "<title>asyncbench history</title>"
        f"<style>{STYLE}</style><script>{plotly}</script></head><body>"
        "<h1>asyncbench history</h1>"
        f'<p class="note">{_e(store_shown)}'
        f" · {len(found)} series on {len({s.machine for s in found})} machine(s) · "
        f"written {created}. Error bars are each run's 95% interval; ✕ marks where a change starts.{_e(note)}</p>"
        f"<h2>Latest run</h2>{_latest_table(latest)}"
        f"<h2>Machines</h2>{_machines_table(found)}"
        f"<h2>Recent runs</h2>{_runs_table(recent)}"
        f"<h2>Trends</h2>{chart_divs}"
        f'<script type="application/json" id="asyncbench-data">{_json_for_script(data)}</script>'
        f"<script>{DRAW}</script></body></html>\n"
    )
