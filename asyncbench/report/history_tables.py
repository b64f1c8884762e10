"""The history page's tables (report/html.py): the latest run with its verdicts and timelines, the machines, and the
recent runs, an `ab` run and a run from a clock that was ahead marked as such; and what each point's error bars
are (`error_bars`: a run's 95% interval, an `ab` paired ratio's at its gate's own confidence).

Everything from the store is data: each value is escaped as every writer escapes HTML (report.escaping), and a word
that becomes a class (a verdict) is taken from the vocabulary, never from the store.
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

import asyncbench.history.model as model
from asyncbench.history.model import LatestRun, RecentRun, Series
from asyncbench.report import escaping
from asyncbench.results import units
from asyncbench.results.labels import Label, label_cell

#: what an `ab` run is called where runs are listed: its points are paired ratios head/base, not one side's medians
AB_RUN = "ab (head/base)"
#: how the store keeps an `ab` ratio whose label is SAME (history.recording's check of it: "ab NAME (LABEL)")
AB_SAME = re.compile(r"(ab .+) \(SAME\)")
#: an `ab` run's row in the recent runs, shaded
AB_ROW = ' class="ab"'
#: said beside a run's creation time where its file says it was made after it was recorded (history.clock): its
#: machine's clock was ahead, and the run is ordered by when it was recorded
CLOCK_AHEAD = "(after it was recorded: its machine's clock was ahead)"
#: the figures' column of the latest run: a run's medians with their 95% intervals; an `ab` run's paired ratios
#: head/base, each interval at its gate's own confidence (its false-alarm rate split over its cases and looks: 98%,
#: 99.6%, never 95%), which the store does not keep, so no level is named for them
FIGURE_HEADER = {"run": "median [95%]", "ab": "paired ratio head/base [the gate's interval]"}
#: the class a verdict's word gets on the page (anything else gets none)
VERDICT_CLASSES = {"pass": "pass", "fail": "fail", "inconclusive": "inconclusive"}


def _e(value: Any) -> str:
    """Text or an attribute's value (always quoted) as HTML (report.escaping, the rule of every writer)."""
    return escaping.html(value)


def _figure(value: float | None, low: float | None, high: float | None, unit: str) -> str:
    if unit == model.READING_UNIT and value is not None:  # what bounds a step: a word, stored as its code
        return model.reading_word(value)
    bounds = (low, high) if low is not None and high is not None else None
    return units.with_bounds(value, bounds, unit)


#: how the page draws a point with no interval (Plotly's symbol): hollow, where a filled point without error bars
#: read as one whose interval is very tight (an INCONCLUSIVE `ab` of 4 blocks; a run's machine_s of too few rounds)
NO_INTERVAL_SYMBOL = "circle-open"
#: the caption's words for it
NO_INTERVAL_SAID = "a hollow point has no interval (too few rounds or blocks for one), which is not a tight one"


def error_bars(found: Sequence[Series]) -> str:
    """What each point and its error bars are: a run's median (or figure) and its 95% interval; where `ab` files
    were recorded, their points too: a paired ratio, its interval at its gate's own confidence (not kept per point
    by the store, so not named: "95%" was said of them, beside intervals at 98% or 99.6%); and, where some point has
    no interval, that it is drawn hollow (NO_INTERVAL_SYMBOL)."""
    said = "Each point is a run's median (or figure), its error bars its 95% interval"
    if any(series.paired for series in found):
        said += (
            "; an ab point is the gate's paired ratio head/base (Hodges–Lehmann), its error bars its interval at "
            "the gate's own confidence (its false-alarm rate split over its cases and looks), not 95%"
        )
    if any(point.low is None and point.high is None for series in found for point in series.points):
        said += f"; {NO_INTERVAL_SAID}"
    return said + "."


def machines(found: Sequence[Series]) -> str:
    """Each machine the series ran on: its CPU, cores, GPUs and framework."""
    machines = {s.machine: s.machine_info for s in found}
    rows = "".join(
        f'<tr><td>{_e(name)}</td><td>{_e(info.get("cpu"))}</td><td class="num">{_e(info.get("cores"))}</td>'
        f"<td>{_e(', '.join(info.get('gpus') or []) or '–')}</td><td>{_e(info.get('framework'))}</td></tr>"
        for name, info in machines.items()
    )
    return f"<table><tr><th>machine</th><th>CPU</th><th>cores</th><th>GPUs</th><th>framework</th></tr>{rows}</table>"


def _expect(check: dict[str, Any]) -> str:
    """A stored check's words; an `ab` ratio the store keeps as SAME (the file's label) as `ab` words it
    (results.labels.label_cell): WITHIN MARGIN where its interval excludes no change (the page said 'SAME' beside
    2.02× [1.92–2.44], judged at a 150% margin, which the store does not keep)."""
    expect = str(check.get("expect", ""))
    same = AB_SAME.fullmatch(expect)
    bounds = check.get("bounds")
    if same is None or not isinstance(bounds, (list, tuple)) or len(bounds) != 2 or not all(map(_finite, bounds)):
        return expect  # a store's row is read as data: bounds that are no two numbers leave the words as stored
    return f"{same.group(1)} ({label_cell(Label.SAME, (float(bounds[0]), float(bounds[1])))})"


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def latest(latest: LatestRun | None) -> str:
    """The latest run's line (an `ab` run said so) and its cases' figures with their checks and timelines."""
    if latest is None:
        return '<p class="note">no run recorded</p>'
    said = " · ".join(
        _e(part)
        for part in (
            f"run {latest.run}",
            AB_RUN if latest.kind == "ab" else "",
            latest.label or "",
            f"revision {latest.revision}" if latest.revision else "",
            f"branch {latest.branch}" if latest.branch else "",
            f"host {latest.host}" if latest.host else "",
            f"{latest.created} {CLOCK_AHEAD}" if latest.clock_ahead else latest.created,
        )
        if part
    )
    rows = []
    for case in latest.cases:
        checks = "<br>".join(
            f'<span class="{_e(VERDICT_CLASSES.get(str(check.get("verdict", "")), ""))}">{_e(check.get("verdict", ""))}</span> '
            f"{_e(_expect(check))}"
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
            first, shown = index == 0, model.shown_unit(quantity, unit)  # the CPU pressure: a percentage
            rows.append(
                f"<tr><td>{_e(case.case) if first else ''}</td><td>{_e(case.status) if first else ''}</td>"
                f'<td>{_e(variant)}</td><td>{_e(quantity)}</td><td class="num">{_e(_figure(value, low, high, shown))}</td>'
                f"<td>{checks if first else ''}</td><td>{traces if first else ''}</td></tr>"
            )
    figure = FIGURE_HEADER.get(latest.kind, FIGURE_HEADER["run"])
    header = f"<tr><th>case</th><th>status</th><th>variant</th><th>quantity</th><th>{_e(figure)}</th><th>checks</th><th>timelines</th></tr>"
    return f"<p>{said}</p><table>{header}{''.join(rows)}</table>"


def recent(recent: Sequence[RecentRun]) -> str:
    """The newest runs, newest first: an `ab` run marked as one (its points are paired ratios head/base, not
    medians), a run whose file says it was made after it was recorded marked too."""
    rows = "".join(
        f'<tr{AB_ROW if run.kind == "ab" else ""}><td class="num">{_e(run.id)}</td>'
        f"<td>{_e(AB_RUN if run.kind == 'ab' else 'run')}</td>"
        f"<td>{_e(f'{run.created} {CLOCK_AHEAD}' if run.clock_ahead else run.created)}</td><td>{_e(run.label or '')}</td>"
        f"<td>{_e(run.revision or '')}</td><td>{_e(run.branch or '')}</td><td>{_e(run.host or '')}</td>"
        f"<td>{_e(run.version or '')}</td></tr>"
        for run in recent
    )
    header = (
        "<tr><th>run</th><th>kind</th><th>created</th><th>label</th><th>revision</th><th>branch</th><th>host</th><th>asyncbench</th></tr>"
    )
    return f"<table>{header}{rows}</table>"
