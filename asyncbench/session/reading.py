"""Results files read back: for show, compare, --baseline and gather, a journal read where a run has not ended.

`load_any` reads a file that may be either kind, a results file or an `ab` file (show, asyncbench.load).

`load_results` reads a results file; where the run writing it has not
ended (still running, or killed), its journal is read instead and `say`
tells so. Every result's reading is rebuilt from its stored figures
(workloads.stored_readings), never taken from the file, and so is every
`--bound-verify` verification (`reverified`: verdicts.verified.rebuilt, which
lives above results/, so it is done here); files older than schema 3 get their
units from the built-in workloads too.
"""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path
from typing import Any

from asyncbench.errors import InputError
from asyncbench.results import ab_report, journal, schema
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import Bound
from asyncbench.results.model import Result
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.verdicts import verified


def load_any(path: str | Path, say: Say | None = None) -> Report | ABReport:
    """The file at `path`, whichever it is: an `ab` file (`ab -o`) or a results file (`run -o`; its journal where
    the run has not ended, told through `say`), parsed once and held to every field its reader checks."""
    with schema.bulk_loading():  # parsed once, whichever kind of file it is
        try:
            raw = ab_report.read_raw(path)
        except InputError:
            raw = None  # missing (a journal may stand for it), unreadable or not JSON: the results reader says which
        if ab_report.is_ab(raw):
            return ABReport.from_dict(raw, str(path))
        return load_results(path, say, raw=raw)


def load_results(path: str | Path, say: Say | None = None, raw: Any = None) -> Report:
    """A results file, ready to render. Where a run writing it has not ended (still running, or killed), its
    journal is read instead, and `say` tells so. Every result's reading is made again from its stored figures
    (workloads.stored_readings: a built-in's, a step's; a user's own Workload class's stored words are dropped),
    never shown as the file wrote it. Files older than schema 3 store no units either, so those are taken from
    the built-in workloads (a user's workload is not imported to render a file: its old results stay bare)."""
    # built-ins and the step form only: rendering never imports a user's module
    from asyncbench.workloads import BUILT_IN, stored_readings

    report = _read(Path(path), say or (lambda _: None), raw)
    if report.schema_version < 3:
        described = [BUILT_IN[r.workload].describe(r) if r.workload in BUILT_IN else r for r in report.results]
        report = dataclasses.replace(report, results=tuple(described))
    return reverified(stored_readings.reread(report))


def reverified(report: Report) -> Report:
    """`report` with every bound's `--bound-verify` verification made again from its stored pairs, bound and samples
    (verdicts.verified.rebuilt): its note, share and floor are the tool's words on those figures, never the file's.
    A genuine file's rebuilt verification is the one it stores, and it renders as it did."""
    results = tuple(_reverified(result) for result in report.results)
    changed = any(new is not old for new, old in zip(results, report.results, strict=True))
    return dataclasses.replace(report, results=results) if changed else report


def _reverified(result: Result) -> Result:
    bounds = {name: _rebuilt(bound, result) for name, bound in result.bound.items()}
    changed = any(bounds[name] is not bound for name, bound in result.bound.items())
    return dataclasses.replace(result, bound=bounds) if changed else result


def _rebuilt(bound: Bound, result: Result) -> Bound:
    """`bound` with its verification rebuilt; the plain step's median in the timed rounds as `run` takes it (its
    variant's done times over the steps a sample ran), which the note compares the verification rounds' with."""
    if bound.verified is None:
        return bound
    timed = result.variants.get(bound.variant)
    done = timed.samples.done_s if timed is not None else ()
    timed_step_s = statistics.median(done) / max(bound.steps_per_call, 1) if done else None
    found = verified.rebuilt(bound.verified, bound, timed_step_s)
    return bound if found == bound.verified else dataclasses.replace(bound, verified=found)


def _read(path: Path, say: Say, raw: Any) -> Report:
    """The report at `path`: the results file (`raw`: its JSON, parsed already), or the journal of a run writing it
    that has not ended (or the journal itself, named directly)."""
    left = path if path.name.endswith(journal.SUFFIX) else journal.path_for(path)
    if not left.exists():
        return Report.from_dict(raw, str(path)) if schema.is_results(raw) else Report.load(path)
    recovered = journal.read(left)
    torn = f"; {recovered.torn} unreadable record(s) (cut short by the interruption, or damaged) left out" if recovered.torn else ""
    say(
        f"{path}: the run writing it has not ended (still running, or killed): "
        f"{len(recovered.report.results)} finished case(s) read from its journal {left}{torn}"
    )
    return recovered.report
