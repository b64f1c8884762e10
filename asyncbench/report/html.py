"""`asyncbench report -o report.html`: the history as one self-contained page that opens offline.

Plotly.js is inlined (no fetch, no CDN), the data is embedded as JSON in a
`<script type="application/json">` element, and the page's Content Security
Policy forbids every request, so the file makes none. A chart per case and
quantity, one trace per machine (machines side by side), each point with
its interval as error bars (a run's: 95%; an `ab` paired ratio's: its
gate's own confidence, which the page names as such; a point with none is
hollow, so that it never reads as a very tight one) and a tooltip that names its run, revision,
interval and machine; change points marked. A variant measured with `run
--bound` gets a chart of what bounds its step: each side's slack with its
interval, the reading (host, device, balanced, inconclusive) a label on each
point. The charts are laid out by
report.trends: by case, what got slower first, twin quantities drawn once,
times in ms, µs or ns. The x axis is the runs in the order they were
recorded (the order change points are looked for in), one step each,
labelled with their dates and labels or commits. Before the charts, the
latest run's table with its verdicts and links to its timelines, the
machines, and the recent runs (`ab` runs marked as such): report.history_tables.

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
from typing import Any, Sequence

import asyncbench.history.model as model
from asyncbench.history.model import ChangePoint, LatestRun, Point, RecentRun, Series
from asyncbench.report import case_words, escaping, history, history_tables, trends
from asyncbench.results import fields, units

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
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; } td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { width: 100%; max-width: 1000px; height: 360px; margin-bottom: 1em; }
h3.case { font-size: 1em; margin: 1.5em 0 0.2em; }
tr.ab td { background: #f3f0ff; }
.pass { color: #176f2c; } .fail { color: #b00020; } .inconclusive { color: #8a5a00; }
.note { color: #666; font-size: 0.9em; }
"""
# Runs labelled under a chart's x axis, at most (evenly spaced back from the newest): six dates with a label each
# fit side by side under a chart 1000 px wide with its legend (eight overlapped).
X_TICKS = 6
# A run's label under the axis is cut to this many characters (the tooltip has it whole); a commit shows this many.
LABEL_CHARS = 14
REVISION_CHARS = 8
DRAW = (
    f"const TICKS = {X_TICKS}, LABEL_CHARS = {LABEL_CHARS}, REVISION_CHARS = {REVISION_CHARS}, DIRTY = {json.dumps(fields.DIRTY)},"
    f" NO_INTERVAL_SYMBOL = {json.dumps(history_tables.NO_INTERVAL_SYMBOL)};"
    + """
const data = JSON.parse(document.getElementById("asyncbench-data").textContent);
const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
const num = (value) => (value === null ? "?" : Number(value).toPrecision(3));
const cut = (text, most) => (text.length > most ? text.slice(0, most - 1) + "…" : text);
const runs = data.runs;
// A value is a whole number of 10^e (e < 0: divided by an exact power of ten, the closest double to the decimal).
const scaled = (whole, e) => (e < 0 ? whole / 10 ** -e : whole * 10 ** e);
// What a run is called under the x axis: its date, and its label, else its commit (a working tree with changes
// "-dirty", as git describe says: an ab of an edited tree against its commit is not that commit against itself), else its number.
const commit = (revision) => revision.slice(0, REVISION_CHARS) + (revision.endsWith(DIRTY) ? DIRTY : "");
const named = (r) => (runs.label[r] !== null ? data.labels[runs.label[r]]
  : runs.revision[r] !== null ? commit(data.revisions[runs.revision[r]]) : "run " + runs.id[r]);
data.charts.forEach((chart, index) => {
  const traces = [];
  // the runs this chart shows, in the order recorded: one step each along the x axis
  const ran = chart.series.map((series) => { let at = 0; return series.r.map((step) => (at += step)); });
  const order = [...new Set(ran.flat())].sort((a, b) => a - b);
  const place = new Map(order.map((r, i) => [r, i]));
  // at most TICKS of them labelled, evenly spaced back from the newest (the run a reader looks at first)
  const every = Math.ceil(order.length / TICKS);
  const ticks = order.map((_, i) => i).filter((i) => (order.length - 1 - i) % every === 0);
  chart.series.forEach((series, at) => {
    const name = data.machines[series.m];
    const run = ran[at];
    // shown in the chart's unit: 10^p of the stored one (ms: p = -3)
    const y = series.y.map((whole) => scaled(whole, series.e - chart.p));
    const bound = (away, sign) => series.y.map((whole, i) => (
      away === undefined || away[i] === null ? null : scaled(whole + sign * away[i], series.e - chart.p)));
    const low = bound(series.lo, -1), high = bound(series.hi, 1);
    const x = run.map((r) => place.get(r));
    // a chart of what bounds a step: a trace per side's slack (series.s), the reading a label on each point (series.k)
    const side = series.s === undefined ? "" : " " + esc(series.s) + " slack";
    const reading = series.k === undefined ? null : series.k.map((word) => esc(word));
    // a time not distinguishable from 0: the table's words for it (series.z: '~0 [≤ 63.3 ns]')
    const zero = new Map(series.z || []);
    const text = y.map((value, i) => [
      esc(chart.title) + side,
      (zero.has(i) ? esc(zero.get(i)) : num(value) + " " + esc(chart.unit) + " [" + num(low[i]) + "–" + num(high[i]) + "]")
        + (reading === null || reading[i] === "" ? "" : " · reading: " + reading[i]),
      "run " + runs.id[run[i]] + (runs.label[run[i]] === null ? "" : " · " + esc(data.labels[runs.label[run[i]]])),
      "revision " + (runs.revision[run[i]] === null ? "unknown" : esc(data.revisions[runs.revision[run[i]]])),
      "machine " + esc(name),
      esc(runs.time[run[i]]),
    ].join("<br>"));
    // a point with no interval is hollow: with no error bar it would look like one whose interval is very tight
    const none = y.map((_, i) => low[i] === null && high[i] === null);
    const marker = {symbol: none.map((hollow) => (hollow ? NO_INTERVAL_SYMBOL : "circle")), size: none.map((hollow) => (hollow ? 10 : 7))};
    traces.push({
      x: x, y: y, text: text, name: esc(name) + side, type: "scatter", mode: reading === null ? "lines+markers" : "lines+markers+text",
      marker: marker, hovertemplate: "%{text}<extra></extra>",
      ...(reading === null ? {} : {customdata: reading, texttemplate: "%{customdata}", textposition: "top center", textfont: {size: 10}}),
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
  const also = chart.also.length ? "<br><sup>also " + chart.also.map(esc).join("; ") + "</sup>" : "";
  Plotly.newPlot("chart-" + index, traces, {
    title: {text: esc(chart.title) + also, font: {size: 14}}, margin: {t: chart.also.length ? 60 : 40, r: 20, b: 80, l: 70},
    xaxis: {
      tickmode: "array", tickvals: ticks, range: [-0.5, order.length - 0.5], zeroline: false, tickangle: 0,
      ticktext: ticks.map((i) => esc(runs.time[order[i]].slice(0, 10)) + "<br>" + esc(cut(named(order[i]), LABEL_CHARS))),
      title: {text: "runs in the order recorded", font: {size: 11}},
    },
    yaxis: {title: {text: esc(chart.axis)}}, hovermode: "closest", showlegend: true,
  }, {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"]});
});
"""
)
# A reading as it labels a point of a chart of what bounds a step (beside traces named "host slack", a bare "host"
# would read as the trace's name)
READING_LABELS = {"host": "host-bound", "device": "device-bound"}
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


def _exponent(values: Sequence[float]) -> int:
    """The power of ten a series' values are sent as whole multiples of: each value (medians and interval ends) keeps
    DIGITS significant digits (the least one sets it), and no whole number passes LARGEST_WHOLE (the greatest one caps
    it)."""
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
    """Every run a chart shows, once, in the order recorded (the order of the series change points are looked for
    in: a run recorded late from an old file stands where the search saw it), as columns (id, time, label and
    revision as positions in their tables); and each run's position there, by which the points name it."""
    shown = {point.run: point for series in found for point in series.points[-CHART_POINTS:]}
    ordered = sorted(shown.values(), key=lambda point: point.run)
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
    (null where a run has none; left out where no run has one; a time's from 0 where it reaches below 0:
    units.time_as_shown), `z` the tooltip's figure of each point that is a time not distinguishable from 0, as the
    table words it ([point, '~0 [≤ 63.3 ns]'], left out if none), `c` its change points ([point, text], left out if
    none), `d` the runs its change search discounted ([point, why], left out if none)."""
    shown = [_as_shown(point, series.shown_unit) for point in series.points[-CHART_POINTS:]]
    # the scale is set by the interval's ends too: a cost whose median is below 0 is drawn at 0, and with the medians
    # alone (every one 0) its bar up to 1.04 ms was sent as a whole number of seconds, 0: a point with no bar
    exponent = _exponent([v for point in shown for v in (point.value, point.low, point.high) if v is not None])
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
    # the table's words for a time not distinguishable from 0 (shown from 0): '~0 [≤ 63.3 ns]', not '4.06 ns [0–63.3]'
    near_zero = [
        [i, history.point_figure(p, units.SECONDS)] for i, p in enumerate(shown) if series.shown_unit == units.SECONDS and p.low == 0
    ]
    if near_zero:
        trace["z"] = near_zero
    where = {point.run: index for index, point in enumerate(shown)}
    changes = [[where[change.run], _change_text(series, change)] for change in series.change_points if change.run in where]
    if changes:
        trace["c"] = changes
    discounted = [[where[run], escaping.visible(why)] for run, why in series.discounted if run in where]
    if discounted:  # runs the change search left out (history.discount): a moved machine, a neighbour
        trace["d"] = discounted
    return trace


def _as_shown(point: Point, unit: str) -> Point:
    """A point as the page draws it: a time whose interval reaches below 0 from 0 (units.time_as_shown), its error
    bar never reaching a negative time; as stored otherwise."""
    if unit != units.SECONDS:
        return point
    value, low, high = units.time_as_shown(point.value, point.low, point.high)
    return point._replace(value=value, low=low, high=high)


def _change_text(series: Series, change: ChangePoint) -> str:
    """A ✕'s tooltip: 'change at v1.3: ×1.31 [1.22–1.40] slower (12.1 ms → 15.8 ms, p 2e-06)', its ratio with the
    interval `history` prints and a way only where that interval shows one (report.history.change_words)."""
    unit = series.shown_unit
    before, after = units.with_bounds(change.before, None, unit), units.with_bounds(change.after, None, unit)
    said = history.change_words(series, change)
    return f"change at {escaping.visible(change.at)}: {escaping.visible(said)} ({before} → {after}, p {change.p_value:.2g})"


def _chart(chart: trends.Chart, run_positions: dict[int, int], machines: _Index) -> dict[str, Any]:
    """A chart's data: its title, what else it stands for (its twins), its unit and that unit's power of ten of the
    stored one (`p`), its y axis's title, a trace per machine; user strings raw (the page escapes them as it
    draws)."""
    # the variant and the quantity from the series, each whole: "VARIANT QUANTITY" split at its first space cut a
    # variant named with a space (a trial: "a · | b | …" of the variant "a | b | …"); a bound chart's ends in words
    first = chart.series[0]
    named = " · ".join(part for part in (first.variant, trends.BOUND_CHART if chart.bound else first.quantity) if part)
    traces = _bound_series(chart, run_positions, machines) if chart.bound else [_series(s, run_positions, machines) for s in chart.series]
    return {
        "title": escaping.visible(f"{chart.case} · {named}"),
        "also": [escaping.visible(said) for said in chart.also],
        "unit": escaping.visible("×" if chart.unit == "x" else chart.unit),
        "axis": escaping.visible(_axis(chart)),
        "p": chart.power,
        "series": traces,
    }


def _bound_series(chart: trends.Chart, run_positions: dict[int, int], machines: _Index) -> list[dict[str, Any]]:
    """The traces of a chart of what bounds a step: a trace per side's slack and machine (`s`: the side), the first
    of each machine's with `k`, the reading at each of its points (READING_LABELS, else the word of
    history.model.BOUND_READINGS; "" where that run has none, "?" for a code asyncbench does not write): the page
    labels each point with it."""
    readings = {
        one.machine: {point.run: model.reading_word(point.value) for point in one.points}
        for one in chart.series
        if one.quantity == model.BOUND_READING
    }
    traces, labelled = [], set()
    for one in chart.series:
        side = next((side for side, quantity in model.BOUND_SLACKS.items() if quantity == one.quantity), None)
        if side is None:
            continue
        trace = {**_series(one, run_positions, machines), "s": side}
        if one.machine not in labelled:
            labelled.add(one.machine)
            said = readings.get(one.machine, {})
            trace["k"] = [READING_LABELS.get(said.get(point.run, ""), said.get(point.run, "")) for point in one.points[-CHART_POINTS:]]
        traces.append(trace)
    return traces


def _axis(chart: trends.Chart) -> str:
    """A chart's y axis title: its unit (× for a ratio), and what a paired ratio of `ab` files is."""
    if chart.series[0].paired:
        return "head/base × (> 1: slower)"
    if chart.bound:
        return f"slack per step ({chart.unit})"
    return "×" if chart.unit == "x" else chart.unit


def render(found: Sequence[Series], latest: LatestRun | None, recent: Sequence[RecentRun], store_shown: str) -> str:
    """The whole page."""
    from plotly.offline import get_plotlyjs

    plotly = get_plotlyjs()
    labels, revisions, machines = _Index(), _Index(), _Index()
    runs, run_positions = _runs(found, labels, revisions)
    laid_out = trends.layout(found, CHART_POINTS)
    charts: list[dict[str, Any]] = []
    chart_divs: list[str] = []
    for case in laid_out:
        chart_divs.append(case_words.heading(case, len(charts)))
        for chart in case.charts:
            chart_divs.append(f'<div class="chart" id="chart-{len(charts)}"></div>')
            charts.append(_chart(chart, run_positions, machines))
    data = {"charts": charts, "runs": runs, "labels": labels.items, "revisions": revisions.items, "machines": machines.items}
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
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
        f"written {created}. {_e(history_tables.error_bars(found))} ✕ marks where a change starts.{_e(note)}</p>"
        f"<h2>Latest run</h2>{history_tables.latest(latest)}"
        f"<h2>Machines</h2>{history_tables.machines(found)}"
        f"<h2>Recent runs</h2>{history_tables.recent(recent)}"
        f"<h2>Trends</h2>{case_words.layout_note(laid_out)}{''.join(chart_divs)}"
        f'<script type="application/json" id="asyncbench-data">{_json_for_script(data)}</script>'
        f"<script>{DRAW}</script></body></html>\n"
    )
