"""The lines under "What ran ahead", which lead a report: each row that ran ahead with the figure that judged it,
and each row whether it did could not be judged, with why (every writer prints them as the view holds them).
"""

from __future__ import annotations

from typing import Sequence

from asyncbench.report.case_labels import by_experiment, case_label, swept_params
from asyncbench.report.cells import metric_line
from asyncbench.results import ahead, units
from asyncbench.results.model import Result
from asyncbench.verdicts import outcome

# The rows that ran ahead lead a report (what differs from a synchronous run is what the tool is for); past this
# many, the rest are counted and found in their tables.
HIGHLIGHTS_MAX = 12
#: what the heading "What ran ahead" means, and what its lines for rows that could not be judged are (every writer)
AHEAD_NOTE = "(the call returned before the work was done, beyond the harness's own sync; every row is below)"
NONE_AHEAD = "(none shown: no row's call was shown to return before its work was done, beyond the harness's own sync)"
NOT_JUDGED = "not judged, for want of an interval (more rounds via max_time_s may give one)"


def highlights(results: Sequence[Result]) -> tuple[str, ...]:
    """'matmul jax cpu (ran ahead: done / issue 29.4× [21.1–51.2] beyond the harness's own 66.4 µs sync): the loop
    returns after 319 µs but ...': each row that ran ahead beyond the harness's own sync (outcome.ran_ahead), with
    the figure that judged it, named as what it is (a reading's own illusion is another figure, with its own
    interval), and its reading; at most HIGHLIGHTS_MAX, then how many more. A row of several variants names the one
    whose figure it is ('multi_device jax cpu (ran ahead in first: ...)'), as the lines not judged do: a user who
    recomputed the figure from another variant got another number."""
    lines = [
        f"{name} {case_label(r, swept)} (ran ahead{_in_variant(r, judged)}: {ahead_figure(judged)}): {r.reading or metric_line(r)}"
        for name, group in by_experiment(results)
        for swept in [swept_params(group)]
        for r in group
        if outcome.ran_ahead(r) and (judged := ahead.judge(r)) is not None
    ]
    return _at_most(lines, "more rows that ran ahead, in the tables below")


def _in_variant(result: Result, judged: ahead.Judged) -> str:
    """' in first': the variant a row's figure is of, where the row has more than one ('' where it has one)."""
    return f" in {judged.variant}" if len(result.variants) > 1 else ""


def ahead_figure(judged: ahead.Judged) -> str:
    """'done / issue 29.4× [21.1–51.2] beyond the harness's own 66.4 µs sync': the figure a row was judged by, named."""
    shown = f"done / issue {units.with_bounds(judged.illusion, judged.bounds, 'x')}"
    if judged.harness_s is None:
        return f"{shown}, the harness's own sync not measured"
    return f"{shown} beyond the harness's own {units.seconds(judged.harness_s)} sync"


def unjudged(results: Sequence[Result]) -> tuple[str, ...]:
    """'matmul jax cpu (matmul): no 95% interval at n = 20 (...); its done / issue 39.0× beyond ...': each row that could
    not be judged (results.ahead.not_judged), with why: said under "What ran ahead", never left out of it silently.
    The figure is the variant's done / issue, named so: not "its illusion", which beside a step form's `illusion`
    metric (done / issue of sync_every=0) read as that metric with another value."""
    lines = [
        f"{name} {case_label(r, swept)} ({judged.variant}): {judged.why}; its done / issue {judged.figure()}"
        for name, group in by_experiment(results)
        for swept in [swept_params(group)]
        for r in group
        if (judged := ahead.not_judged(r)) is not None
    ]
    return _at_most(lines, "more rows not judged, in the tables below")


def _at_most(lines: list[str], more: str) -> tuple[str, ...]:
    """The first HIGHLIGHTS_MAX lines, then how many more."""
    shown = lines[:HIGHLIGHTS_MAX]
    if len(lines) > HIGHLIGHTS_MAX:
        shown.append(f"... and {len(lines) - HIGHLIGHTS_MAX} {more}")
    return tuple(shown)
