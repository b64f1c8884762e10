"""Results files read back: for show, compare, --baseline and gather, a journal read where a run has not ended.

`load_any` reads a file that may be either kind, a results file or an `ab` file (show, asyncbench.load).

`load_results` reads a results file; where the run writing it has not
ended (still running, or killed), its journal is read instead and `say`
tells so. Every result's reading is rebuilt from its stored figures
(workloads.stored_readings), never taken from the file, and so is every
`--bound-verify` verification (`reverified`: verdicts.verified.rebuilt, which
lives above results/, so it is done here), and so is a bound read host- or
device-bound (`_rekinded`: its rule reads the interval of the resampled
difference of the sides' slacks, which a file does not store, so the results
layer can hold that kind only to a condition it implies; verdicts.bound.fit
makes it again from the stored observations); files older than schema 3 get their
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
from asyncbench.results.bound import Bound, BoundKind
from asyncbench.results.model import Result
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.verdicts import bound as fitting
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
    # built-ins only: rendering never imports a user's module
    from asyncbench.workloads import BUILT_IN

    report = _read(Path(path), say or (lambda _: None), raw)
    if report.schema_version < 3:
        described = [BUILT_IN[r.workload].describe(r) if r.workload in BUILT_IN else r for r in report.results]
        report = dataclasses.replace(report, results=tuple(described))
    return rebuilt(report)


def rebuilt(report: Report) -> Report:
    """`report` as every reader shows it: its readings (workloads.stored_readings), its verifications and its host- or
    device-bound readings (`reverified`) made again from its stored figures, never taken from the file (`merge` reads
    its shards through this too)."""
    from asyncbench.workloads import stored_readings  # built-ins and the step form: no user module imported

    return reverified(stored_readings.reread(report))


def reverified(report: Report) -> Report:
    """`report` with every host- or device-bound reading made again from its observations (`_rekinded`), and every
    bound's `--bound-verify` verification from its stored pairs, bound and samples (verdicts.verified.rebuilt): its
    note, share and floor are the tool's words on those figures, never the file's. A genuine file's rebuilt
    verification and reading are the ones it stores, and it renders as it did."""
    results = tuple(_reverified(result) for result in report.results)
    changed = any(new is not old for new, old in zip(results, report.results, strict=True))
    return dataclasses.replace(report, results=results) if changed else report


def _reverified(result: Result) -> Result:
    bounds = {name: _rebuilt(_rekinded(bound), result) for name, bound in result.bound.items()}
    changed = any(bounds[name] is not bound for name, bound in result.bound.items())
    return dataclasses.replace(result, bound=bounds) if changed else result


#: the readings a file's slack intervals cannot hold exactly (results.bound_rule.check_reading holds them to a condition
#: they imply): refitted on reading. Synchronous, one side, balanced and too few rounds are held exactly there, and
#: inconclusive claims nothing; a refit costs 34-59 ms a variant (docs/measured.md), so only these pay it
_REFITTED = (BoundKind.HOST, BoundKind.DEVICE)


def _rekinded(bound: Bound) -> Bound:
    """`bound` with a host- or device-bound reading made again by verdicts.bound.fit from its stored observations, as
    `run` fits it (the default confidence, its steps a sample, its cores): an inconclusive bound edited to `host`
    beside a host slack of 88% of the step shows as the rule reads it. Only the kind is replaced: the bound's note is
    its fit's and the engine's words (results.bound_held leaves it unheld), and its figures are held on reading."""
    if bound.bound not in _REFITTED or len(bound.sides) < 2 or not bound.observations:
        return bound
    refit = fitting.fit(
        bound.variant,
        bound.observations,
        True,
        steps_per_call=bound.steps_per_call,
        scale_s=bound.scale_s,
        shares_cores=bound.shares_cores,
    )
    return bound if refit.bound == bound.bound else dataclasses.replace(bound, bound=refit.bound)


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
