"""The CSV writer: one row per case and variant (or per skipped/error case), for spreadsheets and pandas.

Clocks as median, IQR and 95% CI columns, memory figures, params as
`param_*`, metrics as `metric_*` with their interval as `metric_*_low/high`,
what bounds each variant's step (`--bound`: `bound`, each side's `*_slack_s` with its 95% interval, the ceiling
with its interval; blank where it was not measured), and the checks in one column. Every cell and header goes through
escaping.csv_cell: text from data has its controls shown and is never a
formula; numbers are written as they are, but for a time whose interval
reaches below 0 (the table's `~0 [≤ x]`): its low end is 0, and a median
below 0 is 0 (units.time_as_shown), as a time cannot be below 0; the results
file keeps the figures as measured.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math

from asyncbench.report import escaping
from asyncbench.report.view import ReportView
from asyncbench.results import units
from asyncbench.results.bound import Bound, Side
from asyncbench.results.model import CLOCKS, Memory
from asyncbench.verdicts.bound_readings import no_ceiling

#: the columns of what bounds a variant's step, present where any case took `--bound`
BOUND_COLUMNS = (
    "bound",
    *(f"{side}_slack_{part}" for side in Side for part in ("s", "ci_low_s", "ci_high_s")),
    "ceiling",
    "ceiling_ci_low",
    "ceiling_ci_high",
)


def _bound_cells(bound: Bound | None) -> dict[str, object]:
    """A variant's bound as BOUND_COLUMNS' cells (none without one)."""
    if bound is None:
        return {}
    cells: dict[str, object] = {"bound": bound.bound.value}
    if no_ceiling(bound):  # empty cells where the table's ceiling reads '–' (the results file keeps the arithmetic one)
        return {**cells, **_slack_cells(bound)}
    cells["ceiling"] = bound.ceiling
    if bound.ceiling_ci is not None:
        high = bound.ceiling_ci[1]  # no upper bound (math.inf): an empty cell
        cells.update(ceiling_ci_low=bound.ceiling_ci[0], ceiling_ci_high=high if math.isfinite(high) else None)
    return {**cells, **_slack_cells(bound)}


def _slack_cells(bound: Bound) -> dict[str, object]:
    """Each measured side's slack and its interval, as BOUND_COLUMNS' cells."""
    cells: dict[str, object] = {}
    for fit in bound.sides:
        cells[f"{fit.side}_slack_s"] = fit.slack_s
        if fit.slack_ci_s is not None:  # a slack reaching 0: from 0, as the table's '~0 [≤ x]'
            shown = units.time_as_shown(fit.slack_s, *fit.slack_ci_s)
            cells.update(zip((f"{fit.side}_slack_{part}" for part in ("s", "ci_low_s", "ci_high_s")), shown, strict=True))
    return cells


def csv_text(view: ReportView, path: str = "-") -> str:
    """One row per variant (or per skipped/error case), metrics as `metric_*` columns, checks in one column."""
    report = view.report
    metric_names = list(dict.fromkeys(name for r in report.results for name in r.metrics))
    param_names = list(dict.fromkeys(name for r in report.results for name in r.params))
    machines = ["machine"] if any(r.machine for r in report.results) else []  # gathered from jobs on several hosts
    columns = ["id", "experiment", "workload", "backend", "device", *machines, "status", "reason", "variant"]
    columns += [f"param_{p}" for p in param_names]
    for clock in CLOCKS:
        columns += [f"{clock}_median", f"{clock}_iqr", f"{clock}_ci_low", f"{clock}_ci_high"]
    bounded = list(dict.fromkeys(name for r in report.results for name in r.bounds))
    columns += ["n", *(f.name for f in dataclasses.fields(Memory)), *(f"metric_{m}" for m in metric_names)]
    columns += [f"metric_{m}_{side}" for m in bounded for side in ("low", "high")]
    columns += list(BOUND_COLUMNS) if any(r.bound for r in report.results) else []
    columns += ["checks"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([escaping.csv_cell(column) for column in columns])

    def writerow(row: dict[str, object]) -> None:
        writer.writerow([escaping.csv_cell(row.get(column, "")) for column in columns])

    for result in report.results:
        base = {k: getattr(result, k) for k in ("id", "experiment", "workload", "backend", "device", *machines, "status", "reason")}
        base.update({f"param_{k}": json.dumps(v) if isinstance(v, list) else v for k, v in result.params.items()})
        base.update({f"metric_{k}": v for k, v in result.metrics.items()})
        for name, interval in result.bounds.items():
            if interval is not None:
                value = result.metrics.get(name)
                shown: tuple[float | None, float | None, float | None] = (value, *interval)
                if result.unit_of(name) == units.SECONDS and value is not None:  # reaching 0: from 0, as '~0 [≤ x]'
                    shown = units.time_as_shown(value, *interval)
                    base[f"metric_{name}"] = shown[0]
                base.update({f"metric_{name}_low": shown[1], f"metric_{name}_high": shown[2]})
        base["checks"] = "; ".join(f"{c.verdict}: {c.expect}" for c in result.checks)
        if not result.variants:
            writerow(base)
        for variant_name, v in result.variants.items():
            row = dict(base, variant=variant_name, n=v.done_s.n)
            for clock in CLOCKS:
                stats = getattr(v, clock)
                if stats is not None:
                    row.update({f"{clock}_{k}": getattr(stats, k) for k in ("median", "iqr", "ci_low", "ci_high")})
                    as_shown = units.time_as_shown(stats.median, stats.ci_low, stats.ci_high)
                    row.update(zip((f"{clock}_median", f"{clock}_ci_low", f"{clock}_ci_high"), as_shown, strict=True))
            row.update(dataclasses.asdict(v.memory))
            row.update(_bound_cells(result.bound.get(variant_name)))
            writerow(row)
    return buffer.getvalue()
