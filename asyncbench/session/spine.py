"""The spine every command's session follows: preflight → execute → save → conclude (→ record).

What differs between `run`, `run --executor slurm|local` (and `gather`)
and `ab` is where the cases run, a `Place`: here, in this process's
workers (session.local), as jobs through submitit (session.jobs), or on
two paired sides (session.paired). Each is checked by the one preflight
(session.preflight) before anything runs; `drive` then executes it under
the one interrupt policy (session.interrupts) and saves what finished,
however the work ended, with the one saver (session.saver); `conclude`
judges a report once, writes every output and records it with the one
recorder (session.recorder). Things said along the way go through `say`, so
the CLI alone prints.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, TypeVar

from asyncbench.errors import InputError
from asyncbench.report import view as views
from asyncbench.report.view import ReportView
from asyncbench.report.writers import Writer
from asyncbench.results import schema
from asyncbench.results.model import Report
from asyncbench.session.interrupts import Interrupts
from asyncbench.session.requests import Gate
from asyncbench.verdicts import compare, outcome

Say = Callable[[str], None]
ReportT = TypeVar("ReportT", covariant=True)
SavedT = TypeVar("SavedT")


class Place(Protocol[ReportT]):
    """Where a session's cases run. `execute` runs them, keeping each as it finishes; Ctrl-C or SIGTERM may cut it
    short anywhere (KeyboardInterrupt), and it tears down what it started (workers, jobs it submitted) as it
    unwinds. `collect` is what finished, as one report, marked interrupted where the work was cut short."""

    def execute(self) -> None: ...

    def collect(self, interrupted: bool) -> ReportT: ...


@dataclass(frozen=True)
class Session:
    """What a request ended with: the view to print (with the outcome), the exit code, and whether it was cut short."""

    view: ReportView
    code: int
    interrupted: bool
    #: whether this process reports (False on a torchrun rank other than 0: rank 0 reports for everyone)
    reports: bool = True


def drive(place: Place[SavedT], save: Callable[[SavedT], None]) -> tuple[SavedT, int | None]:
    """Execute the place, then save what finished however the work ended: by itself, by Ctrl-C or SIGTERM (a second
    SIGTERM ignored while it is saved), or by a bug (what finished saved, marked interrupted, then the bug goes on;
    an InputError goes on at once, nothing written).
    Returns the report and the exit code to end with when it was cut short (130 or 143), else None."""
    interrupts = Interrupts()
    try:
        with interrupts.running():
            place.execute()
    except InputError:
        raise  # said in one line, writing nothing (a scheduler that cannot be asked: the jobs are left as they are)
    except BaseException:
        with contextlib.suppress(Exception):  # the bug is what to say; a save that fails as well must not hide it
            save(place.collect(interrupted=True))
        raise
    report = place.collect(interrupts.interrupted)
    with interrupts.saving():
        save(report)
    return report, interrupts.code


def conclude(
    report: Report,
    gate: Gate,
    outputs: Sequence[tuple[Writer, str]],
    base_report: Report | None,
    written: list[str],
    unsaved: list[str],
    say: Say,
    record: Callable[[outcome.Outcome], outcome.Outcome],
) -> tuple[ReportView, outcome.Outcome]:
    """What a finished report comes to: compared with the baseline, judged once, every output written (`written`
    and `unsaved`: how the results file fared), recorded (`record`), and the view to print."""
    comparison = (
        compare.compare(
            base_report, report, gate.max_regression, allow_inconclusive=gate.allow_inconclusive, names=("the baseline", "this run")
        )
        if base_report is not None
        else None
    )
    verdict = outcome.judge(report, strict=gate.strict, allow_inconclusive=gate.allow_inconclusive, comparison=comparison, unsaved=unsaved)
    view = views.build(report, comparison, verdict)
    written = list(written)
    for writer, path in outputs:
        if writer.needs_sweep and not any(e.swept for e in view.experiments):
            continue  # nothing ran that was swept (every point skipped): no empty picture
        try:
            schema.atomic_write(path, writer.render(view, path))
            written.append(path)
        except OSError as exc:
            say(f"asyncbench: error: cannot write an output: {exc.strerror or exc} ({exc.filename or path})")
            verdict = verdict.with_unsaved(path)
    if written:
        say(f"written: {', '.join(written)}")
    verdict = record(verdict)
    return dataclasses.replace(view, outcome=views.outcome_view(verdict)), verdict
