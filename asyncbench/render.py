"""Everything a person reads: rich tables, progress, and the markdown/CSV renderings.

One table per experiment: a row per variant with the three clocks (median
and the 95% CI of the median as ±%), memory and sample count; then a line per
case with its metrics and the workload's one-line reading. Skipped and error
cases are rows too, with their reason. Rendering needs only the results, so
`show` renders a saved file without importing any framework.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from itertools import groupby
from typing import Any, Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from asyncbench import units
from asyncbench.backends import DeviceStatus
from asyncbench.model import ERROR, OK, SKIPPED, Case, Memory, Report, Result, Stats, VariantResult
from asyncbench.timing import Progress as MeasureProgress
from asyncbench.workloads import WORKLOADS, Workload

# Wide enough for a table with spreads when output goes to a file or CI log.
MIN_FILE_WIDTH = 120

STATUS_STYLE = {OK: "green", SKIPPED: "yellow", ERROR: "red"}
SPREAD_NOTE = (
    "± is the 95% confidence interval of the median; memory is the device peak (torch) or pool in use (cupy) "
    "on GPUs, the process RSS on CPUs"
)


def stdout_console() -> Console:
    """A console for the tables; not squeezed to 80 columns when piped to a file or log."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(MIN_FILE_WIDTH, console.width))
    return console


def spread(stats: Stats | None) -> str:
    """'8.31 ms ±1.2%': the median and half the CI of the median, relative."""
    if stats is None:
        return "–"
    if stats.median <= 0:
        return units.seconds(stats.median)
    half = (stats.ci_high - stats.ci_low) / 2 / stats.median
    return f"{units.seconds(stats.median)} ±{half * 100:.2g}%"


def memory_cell(variant: VariantResult) -> str:
    memory = variant.memory
    for value in (memory.device_peak_bytes, memory.device_pool_used_bytes, memory.host_rss_bytes):
        if value is not None:
            return units.size_bytes(value)
    return "–"


def metric_line(result: Result) -> str:
    """'speedup 7.9× · t1 4.1 µs · ...' in the workload's declared order and units."""
    workload = WORKLOADS.get(result.workload)
    declared = {m.name: m.unit for m in workload.metrics} if workload else {}
    parts = []
    for name, value in result.metrics.items():
        # per-variant metrics are declared once with a K placeholder: epoch_s_k1 -> epoch_s_kK
        unit = declared.get(name, declared.get(re.sub(r"_k\d+$", "_kK", name), ""))
        label = name.removesuffix("_s") if unit == "s" else name
        parts.append(f"{label} {units.quantity(value, unit)}")
    return " · ".join(parts)


def reading(result: Result) -> str:
    workload: Workload | None = WORKLOADS.get(result.workload)
    if workload is None or result.status != OK:
        return ""
    try:
        return workload.reading(result.metrics, result.device)
    except (KeyError, TypeError):  # a results file from another version may lack a metric
        return ""


def experiment_table(name: str, results: Sequence[Result]) -> Table:
    workload = results[0].workload
    table = Table(title=f"{name} ({workload})" if name != workload else name, title_justify="left", caption_justify="left")
    for column in ("backend", "device", "variant"):
        table.add_column(column)
    for column in ("issue", "done", "device time", "memory", "n"):
        table.add_column(column, justify="right", no_wrap=True)
    for result in results:
        if result.status != OK:
            style = STATUS_STYLE[result.status]
            table.add_row(result.backend, result.device, f"[{style}]{result.status}[/]")
            table.add_section()
            continue
        for index, (variant_name, variant) in enumerate(result.variants.items()):
            table.add_row(
                result.backend if index == 0 else "",
                result.device if index == 0 else "",
                variant_name,
                spread(variant.issue_s),
                spread(variant.done_s),
                spread(variant.device_s),
                memory_cell(variant),
                str(variant.done_s.n),
            )
        table.add_section()
    return table


def by_experiment(results: Iterable[Result]) -> list[tuple[str, list[Result]]]:
    """Results grouped by experiment, in the order they ran."""
    return [(name, list(group)) for name, group in groupby(results, key=lambda r: r.experiment)]


def print_report(report: Report, console: Console) -> None:
    """The tables and metric lines of a whole report."""
    for name, results in by_experiment(report.results):
        console.print(experiment_table(name, results))
        for result in results:
            if result.status != OK:
                style = STATUS_STYLE[result.status]
                console.print(f"  [bold]{result.backend} {result.device}[/]: [{style}]{result.status}[/]: {escape(result.reason or '')}")
            elif result.metrics:
                on = f" ({escape(result.note)})" if result.note else ""
                console.print(f"  [bold]{result.backend} {result.device}[/]{on}: {escape(metric_line(result))}")
                text = reading(result)
                if text:
                    console.print(f"    [italic]{escape(text)}[/]")
        console.print()
    console.print(f"[dim]{SPREAD_NOTE}[/]")
    counts = {status: sum(1 for r in report.results if r.status == status) for status in (OK, SKIPPED, ERROR)}
    summary = ", ".join(f"[{STATUS_STYLE[s]}]{n} {s}[/]" for s, n in counts.items() if n)
    console.print(f"{len(report.results)} cases: {summary}" + (" [red](interrupted)[/]" if report.interrupted else ""))


def markdown(report: Report) -> str:
    """The report as GitHub-flavoured markdown (fits a CI job summary)."""
    lines = [f"## asyncbench results ({report.created})", ""]
    for name, results in by_experiment(report.results):
        lines += [f"### {name}", "", "| backend | device | variant | issue | done | device time | memory | n |", "|---|---|---|--:|--:|--:|--:|--:|"]
        for result in results:
            if result.status != OK:
                lines.append(f"| {result.backend} | {result.device} | {result.status}: {result.reason or ''} | | | | | |")
                continue
            for variant_name, v in result.variants.items():
                lines.append(
                    f"| {result.backend} | {result.device} | {variant_name} | {spread(v.issue_s)} | {spread(v.done_s)} "
                    f"| {spread(v.device_s)} | {memory_cell(v)} | {v.done_s.n} |"
                )
        lines.append("")
        for result in results:
            if result.status == OK and result.metrics:
                text = reading(result)
                on = f" ({result.note})" if result.note else ""
                lines.append(f"- **{result.backend} {result.device}**{on}: {metric_line(result)}" + (f" — {text}" if text else ""))
        lines.append("")
    lines.append(f"_{SPREAD_NOTE}._")
    return "\n".join(lines) + "\n"


def csv_text(report: Report) -> str:
    """One row per variant (or per skipped/error case), metrics as `metric_*` columns."""
    metric_names = list(dict.fromkeys(name for r in report.results for name in r.metrics))
    columns = ["id", "experiment", "workload", "backend", "device", "status", "reason", "variant"]
    for clock in ("issue_s", "done_s", "device_s"):
        columns += [f"{clock}_median", f"{clock}_iqr", f"{clock}_ci_low", f"{clock}_ci_high"]
    columns += ["n", *(f.name for f in dataclasses.fields(Memory)), *(f"metric_{m}" for m in metric_names)]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for result in report.results:
        base = {k: getattr(result, k) for k in ("id", "experiment", "workload", "backend", "device", "status", "reason")}
        base.update({f"metric_{k}": v for k, v in result.metrics.items()})
        if not result.variants:
            writer.writerow(base)
        for variant_name, v in result.variants.items():
            row = dict(base, variant=variant_name, n=v.done_s.n)
            for clock in ("issue_s", "done_s", "device_s"):
                stats = getattr(v, clock)
                if stats is not None:
                    row.update({f"{clock}_{k}": getattr(stats, k) for k in ("median", "iqr", "ci_low", "ci_high")})
            row.update(dataclasses.asdict(v.memory))
            writer.writerow(row)
    return buffer.getvalue()


def workloads_table(workloads: Iterable[Workload]) -> Table:
    table = Table(title="workloads", title_justify="left", show_lines=True)
    table.add_column("workload", style="bold")
    table.add_column("what it measures")
    table.add_column("params (default / quick)")
    table.add_column("variants")
    table.add_column("metrics")
    for w in workloads:
        params = "\n".join(
            f"{p.name} = {json.dumps(p.default)}" + (f" / {json.dumps(p.quick)}" if p.quick is not None else "") for p in w.params
        )
        table.add_row(w.name, w.summary, params, "\n".join(w.variants), "\n".join(m.name for m in w.metrics))
    return table


def workloads_json(workloads: Iterable[Workload]) -> str:
    return json.dumps(
        [
            {
                "name": w.name,
                "summary": w.summary,
                "params": [
                    {"name": p.name, "kind": p.kind, "default": p.default, "quick": p.quick, "choices": list(p.choices), "help": p.help}
                    for p in w.params
                ],
                "variants": list(w.variants),
                "metrics": [{"name": m.name, "unit": m.unit, "help": m.help} for m in w.metrics],
            }
            for w in workloads
        ],
        indent=1,
    )


def devices_table(statuses: Sequence[DeviceStatus]) -> Table:
    table = Table(title="backends × devices", title_justify="left")
    for column in ("backend", "device", "usable", "detail"):
        table.add_column(column)
    for s in statuses:
        table.add_row(s.backend, s.device, "[green]yes[/]" if s.available else "[yellow]no[/]", escape(s.detail))
    return table


class ProgressDisplay:
    """Progress on stderr while cases run: which case, how many samples, elapsed time.

    Disabled (every method a no-op) when stderr is not a terminal or the user
    passed --no-progress, so logs and CI output stay clean.
    """

    def __init__(self, enabled: bool, console: Console):
        self._progress = (
            Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            if enabled
            else None
        )
        self._task: Any = None

    def __enter__(self) -> ProgressDisplay:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, index: int, total: int, case: Case) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task(case.id, total=total, detail="")
        self._progress.update(self._task, completed=index, description=case.id, detail="")

    def update(self, progress: MeasureProgress) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, detail=f"{progress.rounds} rounds, ±{min(progress.rel_noise, 9.99) * 100:.2g}%")

    def finish(self, result: Result) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
