"""The one view model: what a person reads about a run, built once from a report, formatted by every writer.

`build` turns a report (with its baseline comparison and the run's outcome,
when there are) into plain frozen data: per experiment a table (columns
that carry something on this run, a group of rows per case), and under it
a line per case with its metrics and their 95% intervals, its reading, its
clock bars, a note when sampling stopped short of its noise target, its
traces, warnings and checks (in a report of more than CASE_LINES_MAX cases,
only for the cases that need a look); then the lines for whole backends that
are not here, the headline and the outcome (the comparison with a baseline
is `compared`). Writers (terminal, markdown, CSV,
github-benchmark, plot) only lay this out; none decides what to say. It
reads the results alone: units and readings are stored in them, so a file
from another machine or a workload that is gone renders as `run` did. Its
strings hold names and words from data as they are (any character a file
can hold): every writer writes them through report.escaping, never as
markup, an escape, markdown that renders or a formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from asyncbench.report import bars
from asyncbench.report.bound import BOUND_NOTE, BoundView, bound_view
from asyncbench.report.case_labels import by_experiment, case_label, swept_params
from asyncbench.report.cells import (
    MIN_SAMPLES,
    NO_VALUE,
    environment_line,
    memory_cell,
    metric_line,
    sampling_note,
    spread,
    steps_per_sample,
    stopping_note,
    trace_files,
)
from asyncbench.report.compared import ComparisonView, comparison
from asyncbench.report.ran_ahead import highlights, unjudged
from asyncbench.report.syncs import BLOCKED_NOTE, CensusView, census_view
from asyncbench.results import stats, units
from asyncbench.results.model import Check, Result, Status, VariantResult, Verdict
from asyncbench.results.schema import Report
from asyncbench.verdicts import compare, machine, outcome

SPREAD_NOTE = (
    "± is half the 95% confidence interval of the median ([a–b]: the interval itself, where it is lopsided); [a–b] is a "
    f"metric's 95% interval; ±? and [?]: no interval, for too few samples (under {MIN_SAMPLES}) or, from "
    f"{stats.MIN_ROUNDS_FOR_DEPENDENCE} on, rounds that drifted together so far that too few were independent (the "
    "case's lines say which); "
    f"{units.ZERO_NOTE}; "
    "memory is the device peak (torch) or pool in use (cupy, jax) on GPUs, the RSS growth during one run on CPUs"
)
#: what '[≤1.00–1.05]' is, said where an illusion's interval was floored (results.ahead.Judged.figure; a trial found
#: '≤' inside a ratio's interval, which ZERO_NOTE explains only for a time)
FLOORED_MARK = "[≤1.00"  # results.ahead.Judged.figure's floored lower end (a time's '[≤ 5 µs]' has a space)
FLOORED_NOTE = (
    "[≤1.00–x] beside an illusion: its interval reached below 1× beyond the harness's own sync (done, less it, before "
    "the issue returned), which the rule floors at 1×"
)
# A report of more cases than this is read as tables (scrolled, grepped, plotted), not case by case: a line
# or five per case would bury the tables, and printing them took most of `show`'s 27 s on 10,000 cases.
# Past it, lines are kept for the cases that need a look (not ok, a warning, a check that did not pass), and
# a line under each table says what was left out and where every figure is.
CASE_LINES_MAX = 200


@dataclass(frozen=True)
class Column:
    """A table column: its header, and whether it holds figures (right-aligned, never wrapped)."""

    header: str
    figures: bool = False


@dataclass(frozen=True)
class RowGroup:
    """One case's rows in its experiment's table: a row per variant, or one status row when nothing was measured."""

    status: Status
    rows: tuple[tuple[str, ...], ...]
    measured: bool


@dataclass(frozen=True)
class CaseView:
    """The lines under a table for one case."""

    id: str
    who: str  # 'n_ops=100 torch cpu': the sweep point, backend and device
    status: Status
    reason: str
    note: str | None
    metrics: str  # 'speedup 1.05× [1.03–1.07] · ...' ('' when none)
    reading: str
    bars: tuple[str, ...]
    sampling_note: str | None
    traces: str | None  # 'DIR/{a, b}' when --trace wrote files
    trace_detail: str | None
    warnings: tuple[str, ...]
    checks: tuple[Check, ...]
    syncs: CensusView | None = None  # where the step waited (`run --syncs`; None: no census taken)
    bound: BoundView | None = None  # what bounds the step (`run --bound`; None: not measured)


@dataclass(frozen=True)
class ExperimentView:
    name: str
    title: str
    swept: tuple[str, ...]
    columns: tuple[Column, ...]
    groups: tuple[RowGroup, ...]  # empty: nothing ran (every case skipped)
    cases: tuple[CaseView, ...]  # the lines under the table: every case shown, or past CASE_LINES_MAX those that need a look
    results: tuple[Result, ...]  # the experiment's results, for writers of figures (plot)
    left_out: str | None = None  # what a long experiment's lines leave out, and where every figure is

    @property
    def shown(self) -> bool:
        """Whether there is anything to lay out (not when every case is on a backend or device that is not here)."""
        return bool(self.groups or self.cases)


@dataclass(frozen=True)
class OutcomeView:
    code: int
    reasons: tuple[str, ...]
    failing: tuple[tuple[str, Check], ...]  # (case id, check) of every check that fails the gate
    #: a file read back (`show`, which exits 0 itself): the code is said as the gate's on its checks, not as an exit
    read_back: bool = False

    @property
    def exits(self) -> str:
        """'exit 1', or read back 'a gate on these checks exits 1': what the writers put before 'because:'."""
        return f"a gate on these checks exits {self.code}" if self.read_back else f"exit {self.code}"


@dataclass(frozen=True)
class ReportView:
    report: Report  # the data, for writers of data (JSON, CSV, github-benchmark)
    headline: str
    highlights: tuple[str, ...]  # what leads the report: a line per row that ran ahead, with its reading
    unjudged: tuple[str, ...]  # under it: a line per row whether it ran ahead could not be judged, with why
    environment: str
    created: str
    experiments: tuple[ExperimentView, ...]
    unavailable: tuple[str, ...]
    spread_note: str
    comparison: ComparisonView | None
    outcome: OutcomeView | None
    #: one line where some cases sampled beside a neighbour (verdicts.machine.beside_neighbour): as a baseline, or
    #: against one, they give no verdict ("": none did)
    neighbour: str = ""


def clock_columns(results: Sequence[Result]) -> list[tuple[str, Callable[[VariantResult], str]]]:
    """The value columns worth showing for these results: each (header, cell of a variant)."""
    variants = [v for r in results for v in r.variants.values()]
    per = per_sample(results)
    columns: list[tuple[str, Callable[[VariantResult], str]]] = []
    if any(bars.issue_differs(v) for v in variants):
        columns.append((f"issue{per}", lambda v: spread(v.issue_s)))
    columns.append((f"done{per}", lambda v: spread(v.done_s)))
    if any(v.device_s is not None for v in variants):
        columns.append((f"device time{per}", lambda v: spread(v.device_s)))
    if any(memory_cell(v) != NO_VALUE for v in variants):
        columns.append(("memory", memory_cell))
    columns.append(("n", lambda v: str(v.done_s.n)))
    return columns


def per_sample(results: Sequence[Result]) -> str:
    """What a clock column's header adds where a sample is several of the user's steps (the step form, whose
    step_s_kK and census are per step): ' per 20 steps', or ' per sample' where the rows' `steps` differ (a sweep
    of it, shown in its own column); '' where each sample is one step."""
    counts = {steps_per_sample(r) for r in results}
    if counts <= {1}:
        return ""
    return f" per {counts.pop()} steps" if len(counts) == 1 else " per sample"


def _case(result: Result, swept: Sequence[str]) -> CaseView:
    measured = result.status == Status.OK or bool(result.variants)  # in full, or up to a timeout
    return CaseView(
        id=result.id,
        who=case_label(result, swept),
        status=result.status,
        reason=result.reason or "",
        note=result.note,
        metrics=metric_line(result) if measured else "",
        reading=(result.reading or "") if measured else "",
        bars=_bars(result),
        sampling_note=sampling_note(result),
        traces=trace_files(result) if result.traces else None,
        trace_detail=result.trace_detail,
        warnings=tuple(result.warnings),
        checks=tuple(result.checks),
        syncs=census_view(case_label(result, swept), result.syncs, list(result.variants)),
        bound=bound_view(case_label(result, swept), result.bound, list(result.variants), result.syncs, result.variants),
    )


def _bars(result: Result) -> tuple[str, ...]:
    """The case's clock bars, under a line that says they are per sample of its steps where a sample is several."""
    drawn = bars.clock_bars(result)
    steps = steps_per_sample(result)
    return tuple([f"per sample of {steps} steps:", *drawn] if drawn and steps > 1 else drawn)


def _groups(
    rows: Sequence[Result], swept: Sequence[str], columns: Sequence[tuple[str, Callable[[VariantResult], str]]], machines: bool = False
) -> tuple[RowGroup, ...]:
    groups = []
    for result in rows:
        point = [units.param(result.params.get(p)) for p in swept]
        machine = (result.machine or "",) if machines else ()
        if not result.variants:
            row = (*point, result.backend, result.device, *machine, str(result.status), *[""] * len(columns))
            groups.append(RowGroup(result.status, (row,), measured=False))
            continue
        lines = []
        for index, (variant_name, variant) in enumerate(result.variants.items()):
            first = index == 0
            lines.append(
                (
                    *(point if first else [""] * len(point)),
                    result.backend if first else "",
                    result.device if first else "",
                    *(machine if first else ("",) * len(machine)),
                    variant_name,
                    *(cell(variant) for _, cell in columns),
                )
            )
        groups.append(RowGroup(result.status, tuple(lines), measured=True))
    return tuple(groups)


def needs_a_look(result: Result) -> bool:
    """Whether a case's lines must be shown however long its experiment: not ok, a warning, a check not passed."""
    return result.status != Status.OK or bool(result.warnings) or any(c.verdict != Verdict.PASS for c in result.checks)


def left_out_line(results: Sequence[Result], lined: int) -> str:
    """What a long experiment's lines leave out: how many cases, how many stopped short of their noise target."""
    short = sum(1 for r in results if r.sampling is not None and stopping_note(r.sampling) is not None)
    stopped = f"; {short} of them stopped short of their noise target" if short else ""
    return (
        f"{len(results) - lined} of {len(results)} cases have no lines here (a report of more than {CASE_LINES_MAX} cases: "
        f"lines only for those that need a look){stopped}; every metric with its interval is in the results JSON and `--csv`"
    )


def shown_cases(results: Iterable[Result]) -> list[Result]:
    """The cases a report shows: all but those on a backend or device that is not here (said once, per backend)."""
    return [r for r in results if not (r.status == Status.SKIPPED and r.unavailable)]


def experiment(name: str, results: Sequence[Result], every_line: bool = True) -> ExperimentView:
    """One experiment: its table (skipped cases are lines, not rows) and the lines of each case shown (with
    `every_line` False, a long report's, of those that need a look)."""
    cases = shown_cases(results)
    swept = swept_params(results)
    rows = [r for r in cases if r.status != Status.SKIPPED]
    columns = clock_columns(rows)
    workload = results[0].workload
    machines = any(r.machine for r in results)  # gathered from jobs: each row names the host it ran on
    lined = cases if every_line else [r for r in cases if needs_a_look(r)]
    return ExperimentView(
        name=name,
        title=f"{name} ({workload})" if name != workload else name,
        swept=tuple(swept),
        columns=(
            *(Column(p, figures=True) for p in swept),
            Column("backend"),
            Column("device"),
            *((Column("machine"),) if machines else ()),
            Column("variant"),
            *(Column(header, figures=True) for header, _ in columns),
        ),
        groups=_groups(rows, swept, columns, machines) if rows else (),
        cases=tuple(_case(r, swept) for r in lined),
        results=tuple(results),
        left_out=left_out_line(cases, len(lined)) if len(lined) < len(cases) else None,
    )


def build(report: Report, result: compare.Comparison | None = None, verdict: outcome.Outcome | None = None) -> ReportView:
    """The presentation of `report` (with its comparison and the run's outcome when given), for every writer."""
    every_line = len(shown_cases(report.results)) <= CASE_LINES_MAX
    led, not_judged = highlights(report.results), unjudged(report.results)
    experiments = tuple(experiment(name, group, every_line) for name, group in by_experiment(report.results))
    readings = (case.reading for shown in experiments for case in shown.cases)
    return ReportView(
        report=report,
        headline=outcome.headline(report),
        highlights=led,
        unjudged=not_judged,
        environment=environment_line(report.environment),
        created=report.created,
        experiments=experiments,
        unavailable=tuple(outcome.unavailable_lines(report.results)),
        # the key to the tables' notation, where there is a table with a figure (not under an empty shard's one line),
        # and to a census's time blocked where one is shown
        spread_note=legend(report.results, (*led, *not_judged, *readings)),
        comparison=comparison(result) if result is not None else None,
        outcome=outcome_view(verdict) if verdict is not None else None,
        neighbour=machine.beside_neighbour([r.reference for r in report.results]) or "",
    )


def legend(results: Sequence[Result], lines: Iterable[str] = ()) -> str:
    """The key to the tables (SPREAD_NOTE) where a case has a figure, what an illusion's floored interval is
    (FLOORED_NOTE) where one of the report's `lines` shows one, what a census's time blocked is and is not
    (syncs.BLOCKED_NOTE) where a case's census has a row, and what a bound's slack and cost past are (bound.BOUND_NOTE)
    where a case has one measured ('' for a report with nothing measured)."""
    if not any(r.status == Status.OK for r in results):
        return ""
    waited = any(census.points for r in results for census in r.syncs.values())
    bounded = any(bound.sides for r in results for bound in r.bound.values())
    floored = any(FLOORED_MARK in line for line in lines)  # read from what is shown: nothing judged twice
    notes = [SPREAD_NOTE, *([FLOORED_NOTE] if floored else []), *([BLOCKED_NOTE] if waited else []), *([BOUND_NOTE] if bounded else [])]
    return "; ".join(notes)


def outcome_view(verdict: outcome.Outcome) -> OutcomeView:
    return OutcomeView(verdict.code, verdict.reasons, verdict.failing_checks)
