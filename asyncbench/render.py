"""Everything a person reads in a terminal: rich tables, checks, comparisons, progress.

One table per experiment: a row per variant with the three clocks (median
and the 95% CI of the median as ±%), memory and sample count; then a line per
case with its metrics and the workload's one-line reading. Skipped and error
cases are rows too, with their reason. A swept experiment shows its swept
params as leading columns. Rendering needs only the results, so `show`
renders a saved file without importing any framework. File formats
(markdown, CSV, the benchmark-tracking JSON) live in `export`.
"""

from __future__ import annotations

import json
import math
from itertools import groupby
from typing import Any, Iterable, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from asyncbench import compare, gate, units
from asyncbench.backends import DeviceStatus
from asyncbench.model import ERROR, OK, SKIPPED, Case, Report, Result, Stats, VariantResult
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
    parts = []
    for name, value in result.metrics.items():
        declared = workload.metric(name) if workload else None
        unit = declared.unit if declared else ""
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


def swept_params(results: Sequence[Result]) -> list[str]:
    """The params whose value differs between an experiment's cases: its sweep axes."""
    names = list(dict.fromkeys(name for r in results for name in r.params))
    return [name for name in names if len({json.dumps(r.params.get(name), sort_keys=True) for r in results}) > 1]


def point_label(result: Result, swept: Sequence[str]) -> str:
    """'n_ops=100' for a sweep point ('' when nothing is swept)."""
    return ",".join(f"{name}={units.param(result.params.get(name))}" for name in swept)


def case_label(result: Result, swept: Sequence[str]) -> str:
    """'n_ops=100 torch cpu': who a metric line or a check belongs to."""
    return " ".join(filter(None, (point_label(result, swept), result.backend, result.device)))


def experiment_table(name: str, results: Sequence[Result]) -> Table:
    """One table per experiment; a swept experiment gets its swept params as leading columns."""
    workload = results[0].workload
    swept = swept_params(results)
    table = Table(title=f"{name} ({workload})" if name != workload else name, title_justify="left", caption_justify="left")
    for column in (*swept, "backend", "device", "variant"):
        table.add_column(column, justify="right" if column in swept else "left")
    for column in ("issue", "done", "device time", "memory", "n"):
        table.add_column(column, justify="right", no_wrap=True)
    for result in results:
        point = [units.param(result.params.get(p)) for p in swept]
        if result.status != OK:
            style = STATUS_STYLE[result.status]
            table.add_row(*point, result.backend, result.device, f"[{style}]{result.status}[/]")
            table.add_section()
            continue
        for index, (variant_name, variant) in enumerate(result.variants.items()):
            first = index == 0
            table.add_row(
                *(point if first else [""] * len(point)),
                result.backend if first else "",
                result.device if first else "",
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


def check_text(check: Mapping[str, Any]) -> str:
    mark = "[green]✓[/]" if not gate.failed(check) else "[red]✗[/]"
    return f"{mark} {escape(str(check.get('expect')))}: {escape(str(check.get('detail', '')))}"


def print_report(report: Report, console: Console) -> None:
    """The tables, metric lines and checks of a whole report, then a summary line."""
    for name, results in by_experiment(report.results):
        console.print(experiment_table(name, results))
        swept = swept_params(results)
        for result in results:
            who = case_label(result, swept)
            if result.status != OK:
                style = STATUS_STYLE[result.status]
                console.print(f"  [bold]{escape(who)}[/]: [{style}]{result.status}[/]: {escape(result.reason or '')}")
                continue
            if result.metrics:
                on = f" ({escape(result.note)})" if result.note else ""
                console.print(f"  [bold]{escape(who)}[/]{on}: {escape(metric_line(result))}")
                text = reading(result)
                if text:
                    console.print(f"    [italic]{escape(text)}[/]")
            for check in result.checks:
                console.print(f"    {check_text(check)}")
        console.print()
    console.print(f"[dim]{SPREAD_NOTE}[/]")
    counts = {status: sum(1 for r in report.results if r.status == status) for status in (OK, SKIPPED, ERROR)}
    summary = ", ".join(f"[{STATUS_STYLE[s]}]{n} {s}[/]" for s, n in counts.items() if n)
    checks = [c for r in report.results for c in r.checks]
    failed = sum(1 for c in checks if gate.failed(c))
    if checks:
        summary += f"; {len(checks)} check{'' if len(checks) == 1 else 's'}: " + (f"[red]{failed} failed[/]" if failed else "[green]all passed[/]")
    cases = len(report.results)
    console.print(f"{cases} case{'' if cases == 1 else 's'}: {summary}" + (" [red](interrupted)[/]" if report.interrupted else ""))


VERDICT_STYLE = {compare.SAME: "", compare.FASTER: "green", compare.SLOWER: "bold red", compare.INCONCLUSIVE: "yellow"}


def change_text(ratio: float) -> str:
    """+12.3% (slower) / −40.0% (faster) as the change of the median."""
    if math.isnan(ratio):
        return "–"
    change = (ratio - 1) * 100
    return f"{change:+.1f}%".replace("-", "−")


def p_text(p: float | None) -> str:
    return "–" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def comparison_table(comparison: compare.Comparison) -> Table:
    threshold = f"{comparison.max_regression * 100:.3g}%"
    table = Table(
        title=f"compared with the baseline ({comparison.clock}, max regression {threshold}, p < {compare.SIGNIFICANCE})",
        title_justify="left",
    )
    for column in ("case", "variant"):
        table.add_column(column)
    for column in ("baseline", "current", "change", "p", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in comparison.rows:
        style = VERDICT_STYLE[row.verdict]
        verdict = f"[{style}]{row.verdict}[/]" if style else row.verdict
        table.add_row(
            escape(row.id), row.variant, units.seconds(row.baseline_s), units.seconds(row.current_s),
            change_text(row.ratio), p_text(row.p_value), verdict,
        )
    return table


def comparison_notes(comparison: compare.Comparison) -> list[str]:
    """Plain lines: what could not be compared and how the environments differ."""
    lines = []
    if comparison.only_in_baseline:
        lines.append(f"only in the baseline ({len(comparison.only_in_baseline)}): {', '.join(comparison.only_in_baseline)}")
    if comparison.only_in_current:
        lines.append(f"only in the current run ({len(comparison.only_in_current)}): {', '.join(comparison.only_in_current)}")
    lines += [f"not compared: {case_id}: {why}" for case_id, why in comparison.not_comparable]
    lines += [f"environment differs: {key}: {old!r} → {new!r}" for key, old, new in comparison.environment_changes]
    return lines


def comparison_summary(comparison: compare.Comparison) -> str:
    counts = {v: sum(1 for r in comparison.rows if r.verdict == v) for v in VERDICT_STYLE}
    text = ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "nothing compared"
    slower = comparison.regressions
    if slower:
        text += "; slower: " + ", ".join(f"{r.id} {r.variant} ({change_text(r.ratio)})" for r in slower)
    return text


def print_comparison(comparison: compare.Comparison, console: Console) -> None:
    console.print(comparison_table(comparison))
    for line in comparison_notes(comparison):
        console.print(f"  [yellow]{escape(line)}[/]")
    style = "red" if comparison.regressions else "green"
    console.print(f"[{style}]{escape(comparison_summary(comparison))}[/]")


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
