"""Everything a person reads about a run in a terminal: tables, metric lines, readings, checks, the summary, progress.

One table per experiment: a row per variant with the clocks (median and the
95% CI of the median as ±%), memory and sample count; columns that carry
nothing on this run are left out (device time without events, issue when it
equals done), so a table fits 80 columns. Under it a line per case with its
metrics and their 95% intervals, the workload's one-line reading, a note
when sampling stopped before its noise target, and the checks. A skipped
case is a line, not a row; a backend or device that is not here is one line
for the whole run. The run ends with the headline and, pytest-style, every
check that fails the gate and why the exit code is what it is. Rendering
needs only the results, so `show` renders a saved file without importing any
framework. File formats live in `export`.
"""

from __future__ import annotations

import json
import os
import sys
from itertools import groupby
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from asyncbench.report import bars

from asyncbench.verdicts import gate

from asyncbench.verdicts import outcome

from asyncbench.results import units
from asyncbench.errors import EXIT_OK
from asyncbench.results.model import ERROR, OK, SKIPPED, STOPPED_BY_NOISE, Case, Report, Result, Stats, VariantResult
from asyncbench.measure.timing import Progress as MeasureProgress
from asyncbench.workloads import WORKLOADS, Workload

# Wide enough for a table with spreads when output goes to a file or CI log.
MIN_FILE_WIDTH = 120

STATUS_STYLE = {OK: "green", SKIPPED: "yellow", ERROR: "red"}
CHECK_MARK = {gate.PASS: "[green]✓[/]", gate.FAIL: "[red]✗[/]", gate.INCONCLUSIVE: "[yellow]?[/]", gate.NOT_MEASURED: "[red]–[/]"}
SPREAD_NOTE = (
    "± is half the 95% confidence interval of the median (±? : too few samples for one); [a–b] is a metric's 95% interval; "
    "memory is the device peak (torch) or pool in use (cupy) on GPUs, the RSS growth during one run on CPUs"
)


class StdoutConsole(Console):
    """A console on stdout whose reader may stop reading (`| head`): the rest of the output goes to /dev/null and the
    run's own exit code stands (rich's default turns a broken pipe into exit 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def stdout_console() -> Console:
    """A console for the tables; not squeezed to 80 columns when piped to a file or log."""
    console = StdoutConsole()
    if not console.is_terminal:
        console = StdoutConsole(width=max(MIN_FILE_WIDTH, console.width))
    return console


def say(console: Console, text: str) -> None:
    """Print a line of prose: wrapped to a terminal, never hard-wrapped mid-phrase into a file or a pipe."""
    console.print(text, soft_wrap=not console.is_terminal)


def spread(stats: Stats | None) -> str:
    """'8.31 ms ±1.2%': the median and half the CI of the median, relative ('±?' without a CI)."""
    if stats is None:
        return "–"
    if stats.ci_low is None or stats.ci_high is None:
        return f"{units.seconds(stats.median)} ±?"
    if stats.median <= 0:
        return units.seconds(stats.median)
    return f"{units.seconds(stats.median)} ±{units.percent((stats.ci_high - stats.ci_low) / 2 / stats.median)}"


def memory_cell(variant: VariantResult) -> str:
    """The case's own memory: the device's figure on a GPU, the RSS growth during one run on a CPU."""
    memory = variant.memory
    for value in (memory.device_peak_bytes, memory.device_pool_used_bytes):
        if value is not None:
            return units.size_bytes(value)
    if memory.host_rss_peak_delta_bytes is not None:
        return "+" + units.size_bytes(memory.host_rss_peak_delta_bytes)
    return "–"


def metric_line(result: Result) -> str:
    """'speedup 1.05× [1.03–1.07] · t1 4.73 µs [4.70–4.81] · ...' in the workload's declared order and units."""
    workload = WORKLOADS.get(result.workload)
    parts = []
    for name, value in result.metrics.items():
        declared = workload.metric(name) if workload else None
        unit = declared.unit if declared else ""
        label = name.removesuffix("_s") if unit == "s" else name
        parts.append(f"{label} {units.with_bounds(value, result.bounds.get(name), unit)}")
    return " · ".join(parts)


def reading(result: Result) -> str:
    workload: Workload | None = WORKLOADS.get(result.workload)
    if workload is None or result.status != OK:
        return ""
    try:
        return workload.reading(result)
    except (KeyError, TypeError):  # a results file from another version may lack a metric
        return ""


def sampling_note(result: Result) -> str | None:
    """Said when measuring stopped before every variant's median was known within max_rel_noise."""
    sampling = result.sampling
    if sampling is None or sampling.stopped_by == STOPPED_BY_NOISE or not sampling.missed_noise_target:
        return None
    rounds = f"{sampling.rounds} round{'' if sampling.rounds == 1 else 's'}"
    reached = f"at ±{units.percent(sampling.rel_noise)}" if sampling.rel_noise is not None else "with no interval yet"
    return (
        f"stopped by {sampling.stopped_by} ({units.number(sampling.max_time_s)} s) after {rounds} {reached} on the done time, "
        f"short of the ±{units.percent(sampling.max_rel_noise)} target: a longer max_time_s narrows the intervals"
        if sampling.stopped_by == "max_time_s"
        else f"stopped by {sampling.stopped_by} after {rounds} {reached}, short of the ±{units.percent(sampling.max_rel_noise)} target"
    )


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


def _variants(results: Iterable[Result]) -> list[VariantResult]:
    return [v for r in results for v in r.variants.values()]


def clock_columns(results: Sequence[Result]) -> list[tuple[str, Callable[[VariantResult], str]]]:
    """The value columns worth showing for these results: each (header, cell of a variant)."""
    variants = _variants(results)
    columns: list[tuple[str, Callable[[VariantResult], str]]] = []
    if any(bars.issue_differs(v) for v in variants):
        columns.append(("issue", lambda v: spread(v.issue_s)))
    columns.append(("done", lambda v: spread(v.done_s)))
    if any(v.device_s is not None for v in variants):
        columns.append(("device time", lambda v: spread(v.device_s)))
    if any(memory_cell(v) != "–" for v in variants):
        columns.append(("memory", memory_cell))
    columns.append(("n", lambda v: str(v.done_s.n)))
    return columns


def tabled(results: Iterable[Result]) -> list[Result]:
    """The cases that are table rows: those that ran (ok, or an error), not the skipped ones."""
    return [r for r in results if r.status != SKIPPED]


def experiment_table(name: str, results: Sequence[Result]) -> Table:
    """One table per experiment; a swept experiment gets its swept params as leading columns."""
    workload = results[0].workload
    swept = swept_params(results)
    rows = tabled(results)
    table = Table(title=f"{name} ({workload})" if name != workload else name, title_justify="left", caption_justify="left")
    for column in (*swept, "backend", "device", "variant"):
        table.add_column(column, justify="right" if column in swept else "left")
    columns = clock_columns(rows)
    for header, _ in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for result in rows:
        point = [units.param(result.params.get(p)) for p in swept]
        if not result.variants:
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
                *(cell(variant) for _, cell in columns),
            )
        table.add_section()
    return table


def by_experiment(results: Iterable[Result]) -> list[tuple[str, list[Result]]]:
    """Results grouped by experiment, in the order they ran."""
    return [(name, list(group)) for name, group in groupby(results, key=lambda r: r.experiment)]


def check_text(check: Mapping[str, Any]) -> str:
    mark = CHECK_MARK.get(str(check.get("verdict")), CHECK_MARK[gate.FAIL])
    return f"{mark} {escape(str(check.get('expect')))}: {escape(str(check.get('detail', '')))}"


def trace_files(result: Result) -> str:
    """The trace files of a case: the folder once, then each file's name."""
    paths = [Path(p) for p in result.traces.values()]
    folder = paths[0].parent
    return f"{folder}/" + (paths[0].name if len(paths) == 1 else "{" + ", ".join(p.name for p in paths) + "}")


def print_case(console: Console, result: Result, swept: Sequence[str]) -> None:
    """The lines under a table for one case: metrics, reading, sampling note, checks (or why it did not run)."""
    who = case_label(result, swept)
    if result.status != OK:
        style = STATUS_STYLE[result.status]
        say(console, f"  [bold]{escape(who)}[/]: [{style}]{result.status}[/]: {escape(result.reason or '')}")
    elif result.metrics:
        on = f" ({escape(result.note)})" if result.note else ""
        say(console, f"  [bold]{escape(who)}[/]{on}: {escape(metric_line(result))}")
        text = reading(result)
        if text:
            say(console, f"    [italic]{escape(text)}[/]")
    for line in bars.clock_bars(result):
        console.print(f"      [dim]{escape(line)}[/]", soft_wrap=True, highlight=False)
    note = sampling_note(result)
    if note:
        say(console, f"    [yellow]{escape(note)}[/]")
    if result.traces:
        say(console, f"    [cyan]traced ({escape(result.trace_detail or '')}): {escape(trace_files(result))} — open in ui.perfetto.dev[/]")
    elif result.trace_detail:
        say(console, f"    [cyan]{escape(result.trace_detail)}[/]")
    for warning in result.warnings:
        say(console, f"    [bold yellow]⚠ {escape(warning)}[/]")
    for check in result.checks:
        say(console, f"    {check_text(check)}")


def print_report(report: Report, console: Console, verdict: outcome.Outcome | None = None) -> None:
    """The tables and lines of a whole report, then the headline and (given the run's outcome) why it exits as it does."""
    for name, results in by_experiment(report.results):
        shown = [r for r in results if not (r.status == SKIPPED and r.unavailable)]
        if not shown:
            continue
        swept = swept_params(results)
        if tabled(shown):
            console.print(experiment_table(name, shown))
        else:
            console.print(f"[italic]{escape(name)}[/]")
        for result in shown:
            print_case(console, result, swept)
        console.print()
    for line in outcome.unavailable_lines(report.results):
        say(console, f"[yellow]{escape(line)}[/]")
    say(console, f"[dim]{escape(SPREAD_NOTE)}[/]")
    say(console, outcome.headline(report))
    if verdict is not None:
        print_outcome(console, verdict)


def print_outcome(console: Console, verdict: outcome.Outcome) -> None:
    """pytest's short summary: every check that fails the gate, then each reason for the exit code."""
    if verdict.code == EXIT_OK:
        return
    for case_id, check in verdict.failing_checks:
        say(console, f"  {CHECK_MARK.get(check['verdict'], '')} {escape(case_id)}: {escape(str(check.get('expect')))} — {escape(str(check.get('detail', '')))}")
    say(console, f"[red]exit {verdict.code}[/] because:")
    for reason in verdict.reasons:
        say(console, f"  - {escape(reason)}")


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
            noise = "±?" if progress.rel_noise == float("inf") else f"±{units.percent(progress.rel_noise)}"
            rounds = f"{progress.rounds} round{'' if progress.rounds == 1 else 's'}"
            self._progress.update(self._task, detail=f"{rounds}, {noise}")

    def finish(self, result: Result) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
