"""How `run`'s report concludes (`run`, `run --executor`, `gather`, `merge`), and what it needs checked first.

`RunConclusion.checked` is the family's preflight: every output proven
writable (session.preflight), the history store opened and proven writable
where the command records, the baseline read (and, where a plan runs, held
to it: check_plan), all before anything runs.
The conclusion then compares the finished report with the baseline, judges
it once against the gate, writes each writer's file from the view
(report.writers) and records the report, or each job's or shard's, into
the history (session.recorder). The spine (session.spine) calls it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from asyncbench.errors import EXIT_GATE, InputError
from asyncbench.report import view as views
from asyncbench.report.view import ReportView
from asyncbench.report.writers import Writer
from asyncbench.results.model import PlannedCase
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import preflight, reading, recorder
from asyncbench.session.requests import Gate, RunRequest
from asyncbench.verdicts import compare, outcome

#: a submission's job that had not ended when it was gathered, as the report's `sweep.jobs` facts say it
NOT_ENDED = "not ended"


def nothing_gathered(report: Report) -> str | None:
    """Why a gathered report fails the gate where it holds no case while some of its jobs are still queued or running
    (`gather --no-wait` before any ended: nothing measured, as a run whose cases all skipped); None otherwise (a CI
    matrix's shard with no case of the plan passes, so that the matrix goes on to merge)."""
    if report.results:
        return None
    gathered = report.environment.get("sweep")
    jobs = gathered.get("jobs") if isinstance(gathered, Mapping) else None
    pending = sum(1 for job in jobs if isinstance(job, Mapping) and job.get("state") == NOT_ENDED) if isinstance(jobs, (list, tuple)) else 0
    return f"nothing was measured: {pending} job(s) still queued or running, none ended" if pending else None


@dataclass(frozen=True)
class RunConclusion:
    """A run's report concluded: compared with `base_report`, judged against `gate`, each writer's file written, and
    recorded into `store` (None: not recorded) under `label`; `by_job`: what is recorded is a submission's jobs' or a
    matrix's shards' own reports, each from its file, said as a count of jobs."""

    gate: Gate
    writers: Sequence[tuple[Writer, str]]
    base_report: Report | None = None
    store: Any = None
    label: str | None = None
    by_job: bool = False

    @classmethod
    def checked(
        cls,
        request: RunRequest,
        sweeps: bool,
        say: Say,
        command: str = "run",
        owned: Iterable[Path] = (),
        owner: Path | None = None,
        needed_by: str = "--record",
        by_job: bool = False,
    ) -> RunConclusion:
        """Everything the conclusion needs, checked before anything runs (InputError: exit 2): the outputs
        (preflight.check_outputs, with `sweeps`, `command`, `owned` and `owner` as it takes them), the history store
        where the command records (`needed_by`: the option named where its packages are missing), the baseline (one
        that holds no case refused: the whole plan would run for a comparison of nothing)."""
        writers = preflight.check_outputs(request, sweeps, command, owned, owner)  # before the store is opened
        recording = request.recording
        baseline = request.gate.baseline
        base_report = reading.load_results(baseline, say) if baseline else None
        if baseline and base_report is not None and (empty := reading.no_case(baseline, base_report.results, base_report.interrupted)):
            raise InputError(f"--baseline {empty}: nothing to compare this run with")  # said before the plan runs, not after
        store = recorder.open_history(recording.history, needed_by) if recording.record else None
        return cls(request.gate, writers, base_report, store, recording.label, by_job)

    def check_plan(self, planned: Sequence[PlannedCase]) -> None:
        """InputError (exit 2) before anything runs where the baseline shares no case with the `planned` cases
        (verdicts.compare.planned_problem): the comparison after the whole plan ran would only say so then."""
        if self.base_report is not None:
            problem = compare.planned_problem(self.base_report, planned)
            if problem:
                raise InputError(problem)

    @property
    def dumps(self) -> Callable[[Report], str] | None:
        return None  # a results file, journaled as its cases finish (session.saver)

    def judge(self, report: Report, unsaved: Sequence[str], stopped: int | None) -> tuple[ReportView, outcome.Outcome]:
        """Compared with the baseline and judged once; a run cut short is judged as what finished (its exit code is
        the signal's, and the outcome is not printed)."""
        gate, base_report = self.gate, self.base_report
        comparison = (
            compare.compare(
                base_report, report, gate.max_regression, allow_inconclusive=gate.allow_inconclusive, names=("the baseline", "this run")
            )
            if base_report is not None
            else None
        )
        verdict = outcome.judge(
            report, strict=gate.strict, allow_inconclusive=gate.allow_inconclusive, comparison=comparison, unsaved=unsaved
        )
        if stopped is None and (nothing := nothing_gathered(report)):  # a gather before any job ended is no pass
            verdict = dataclasses.replace(verdict, code=max(verdict.code, EXIT_GATE), reasons=(*verdict.reasons, nothing))
        return views.build(report, comparison, verdict), verdict

    def files(self, report: Report, view: ReportView) -> list[tuple[str, Callable[[], str | bytes]]]:
        """Each writer's file, rendered from the view; a picture of sweeps only where something swept ran."""
        swept = any(e.swept for e in view.experiments)
        # nothing ran that was swept (every point skipped): no empty picture
        return [(path, functools.partial(writer.render, view, path)) for writer, path in self.writers if swept or not writer.needs_sweep]

    def unwritten(self, path: str, exc: OSError) -> str:
        return f"asyncbench: error: cannot write an output: {exc.strerror or exc} ({exc.filename or path})"

    def record(self, recorded: Sequence[tuple[Report, str | None]], verdict: outcome.Outcome, say: Say) -> outcome.Outcome:
        if self.store is None:
            return verdict
        return recorder.record(self.store, recorded, self.label, say, verdict, jobs=self.by_job)

    def with_outcome(self, report: Report, view: ReportView, verdict: outcome.Outcome) -> ReportView:
        return dataclasses.replace(view, outcome=views.outcome_view(verdict))
