"""A submission's jobs followed until they end, then gathered: one report, judged, written and recorded as `run`'s.

`run --executor slurm|local` follows the jobs it submitted (session.jobs);
`gather FOLDER` follows them from their jobs folder, from any process, as
often as wanted: gathering reads (sweep.json, each job's results and outcome
files, the scheduler's word and the tail of each job's log; never a pickle)
and changes nothing in the folder. Following is a
place on the spine (session.spine): its work is waiting for the jobs,
Ctrl-C stops waiting (cancelling the jobs this command submitted) and still
writes what ended.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import stat
import time
from pathlib import Path
from typing import Any

from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.report.view import ReportView
from asyncbench.results import merge
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import preflight, reading, spine
from asyncbench.session.requests import RunRequest
from asyncbench.session.run_conclusion import NOT_ENDED, RunConclusion
from asyncbench.session.saver import Saver
from asyncbench.spec import manifest
from asyncbench.spec.manifest import Manifest, SubmittedJob

#: the exit codes with which `asyncbench run` on a node says it was interrupted (what finished is in its file)
INTERRUPTED_CODES = (EXIT_INTERRUPTED, EXIT_TERMINATED)
#: how long after its submission a job the scheduler does not list counts as only just submitted: slurmctld hands
#: job records to slurmdbd (what sacct reads) asynchronously, seconds behind, minutes on a loaded controller; a job
#: still unlisted after this is not this cluster's (a folder from elsewhere, an id edited) or was purged from
#: accounting, and waiting longer would wait forever
UNLISTED_GRACE_S = 180.0
#: how many case ids a line about a job's unplanned rows names (the rest are "...": the line stays one line)
SAID_IDS = 3
#: how long a waiting gather keeps asking a scheduler that does not answer (sacct failing: slurmdbd restarting, the
#: controller failing over) before it says so and stops: long enough for a restart, short of hiding an outage
OUTAGE_S = 120.0


def read_manifest(folder: str | Path) -> Manifest:
    """The submission's manifest, every value checked before any is used (spec.manifest: InputError naming the key)."""
    return manifest.read(folder)


def _end(scheduler: Any, entry: SubmittedJob, state: Any, say: Say) -> merge.JobEnd:
    """What became of a job that ended: its results (whole, or what it finished before it was stopped) and why."""
    from asyncbench.engine.cluster import last_line
    from asyncbench.engine.jobs import LIMIT_CODE, Refused, requeued

    ended = scheduler.outcome(entry.job_id)
    results = entry.results
    report: Report | None = None
    unread = next((said for said in map(_not_written_by_a_job, (results, Path(f"{results}.journal"))) if said), None)
    if unread:
        say(f"asyncbench: warning: job {entry.name}: its results cannot be read ({unread}); its cases are error rows")
    elif ended is not None and isinstance(ended[1], Refused):  # its end unknown: what its results say is not taken
        say(f"asyncbench: warning: job {entry.name}: {ended[1]}; its cases are error rows")
    elif results.exists() or Path(f"{results}.journal").exists():
        try:
            report = reading.load_results(results)
        except InputError as exc:
            say(f"asyncbench: warning: job {entry.name}: its results cannot be read ({exc}); its cases are error rows")
    if report is not None:
        report = _planned_only(entry, report, say)
    failed, reason = state.phase == "failed", state.reason
    if ended is not None and not ended[0]:
        failed, reason = True, reason or last_line(ended[1])
    elif ended is not None and ended[1] in INTERRUPTED_CODES:
        failed, reason = True, reason or f"its run was interrupted (exit {ended[1]})"
    elif ended is not None and ended[1] == LIMIT_CODE:  # a local GPU job, its limit counted from when it had its GPUs
        failed, reason = True, reason or "its run reached the job's time limit and was stopped"
    if report is not None and not failed and (lost := merge.unfinished(report.results, entry.cases)):
        failed, reason = True, f"its results hold no row for {len(lost)} of its {len(entry.cases)} planned case(s)"
    if report is None and not failed:
        failed = True
        said = scheduler.stderr_tail(entry.job_id)
        code = f"asyncbench exited {ended[1]}" if ended is not None else "it left no results"
        reason = f"{code}: {said}" if said else code
    return merge.JobEnd(entry.name, entry.job_id, scheduler.kind, state.state, failed, reason, entry.cases, report, requeued(results))


def _planned_only(entry: SubmittedJob, report: Report, say: Say) -> Report:
    """A job's results, held to the cases the manifest planned for it (as `merge` holds a shard's): a row of a case
    it did not plan is not taken, and said; a planned case with no row is an error row (the job counts as failed)."""
    kept, unplanned = merge.planned_rows(report.results, entry.cases)
    if not unplanned:
        return report
    ids = ", ".join(row.id for row in unplanned[:SAID_IDS]) + (", ..." if len(unplanned) > SAID_IDS else "")
    say(f"asyncbench: warning: job {entry.name}: its results hold {len(unplanned)} case(s) it was not planned to run ({ids}): not taken")
    return dataclasses.replace(report, results=tuple(kept))


def _not_written_by_a_job(path: Path) -> str | None:
    """Why `path`, a job's results file or journal, is none its job wrote (a job writes a regular file there), said
    without opening it: a named pipe would block gathering until something wrote into it, a device never end (a
    user-named file may be a pipe, inputs.read_text; a file in a jobs folder never is). None: a regular file, or none."""
    try:
        mode = path.stat().st_mode  # through a link, as the job's own writes went
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror})"
    return None if stat.S_ISREG(mode) else f"{path}: not a regular file, so none its job wrote"


def _unlisted(submission: Manifest, started: datetime.datetime, state: Any, ended: Any) -> Any:
    """A job the scheduler does not list: only just submitted (still queued, or ended before the scheduler's
    accounting caught up: its state is worth the wait) within UNLISTED_GRACE_S of its submission (or of this
    gathering's start, whichever came first); after it, ended where its outcome file says so (`ended`: a job purged
    from the scheduler's accounting, or a folder from another cluster), else failed — the scheduler will not say
    more, and waiting would wait forever."""
    from asyncbench.engine.cluster import JobState

    if datetime.datetime.now(datetime.timezone.utc) - min(submission.created, started) < datetime.timedelta(seconds=UNLISTED_GRACE_S):
        return JobState("queued", "SUBMITTED")
    if ended is not None:
        return JobState("done", state.state, f"{state.reason}; its outcome file says it ended")
    return JobState("failed", "UNKNOWN", f"{state.reason}, {UNLISTED_GRACE_S:.0f} s after its submission")


def _sweeps(submission: Manifest) -> bool:
    """Whether an experiment of the submission's plan sweeps a param (a plot draws sweeps), as its manifest stores the
    plan: no job's config is loaded again, which would import the user's workload modules in this process."""
    experiments = submission.config.get("experiments")
    return isinstance(experiments, list) and any(isinstance(e, dict) and e.get("sweep") for e in experiments)


class Following:
    """The place whose work is following a submission's jobs until they end (`wait`; else taking what ended); what
    ended merged is its report. `scheduler`: the one that submitted them, in this process (Ctrl-C then cancels the
    jobs still running), else found from the folder. `conclusion`: the preflight `run --executor` made before it
    submitted them (None: `gather`'s own)."""

    def __init__(
        self,
        folder: str | Path,
        request: RunRequest,
        say: Say,
        wait: bool,
        scheduler: Any = None,
        conclusion: RunConclusion | None = None,
    ):
        """`folder`: as the user named it (what a message tells them to gather again)."""
        self.given, self.folder, self.request, self.say, self.wait = folder, Path(folder), request, say, wait
        self.scheduler, self.submitted_here, self.conclusion = scheduler, scheduler is not None, conclusion
        self.ends: dict[str, merge.JobEnd] = {}

    def preflight(self) -> RunConclusion:
        if self.conclusion is not None:  # checked once, before the jobs were submitted
            self.submission = read_manifest(self.given)
            return self.conclusion
        preflight.check_names(self.request, "gather")  # a mistyped option is said before the folder is read
        self.submission = read_manifest(self.given)
        root = self.folder.resolve()
        owned = preflight.submission_files(root, self.submission.jobs)
        return RunConclusion.checked(self.request, _sweeps(self.submission), self.say, "gather", owned, root, by_job=True)

    def start(self, saver: Saver, stack: contextlib.ExitStack[Any]) -> None:
        from asyncbench.engine import cluster

        if self.scheduler is None:
            results = {job.job_id: job.results for job in self.submission.jobs}  # beside each, the outcome file its job leaves
            self.scheduler = cluster.scheduler(self.submission.executor.kind, self.folder, self.submission.executor, results)

    def execute(self) -> None:
        try:
            self._follow()
        except KeyboardInterrupt:
            if self.submitted_here:
                left = [e.job_id for e in self.submission.jobs if e.name not in self.ends]
                self.scheduler.cancel(left)
                self.say(f"cancelled {len(left)} job(s) this command submitted")
            raise
        pending_count = len(self.submission.jobs) - len(self.ends)
        if pending_count:
            self.say(f"{pending_count} job(s) still queued or running, not in this report: `asyncbench gather {self.given}` again later")

    def _follow(self) -> None:
        from rich.console import Console

        from asyncbench.engine import cluster
        from asyncbench.report.jobs import JobsDisplay

        entries, ends, scheduler = self.submission.jobs, self.ends, self.scheduler
        started = datetime.datetime.now(datetime.timezone.utc)
        display = JobsDisplay(len(entries), self.request.progress, Console(stderr=True), self.say)
        with display:
            while True:
                pending = [e for e in entries if e.name not in ends]
                states = _states(scheduler, [e.job_id for e in pending], self.folder, self.wait)
                counts = {"done": sum(1 for e in ends.values() if not e.failed), "failed": sum(1 for e in ends.values() if e.failed)}
                unknown = []
                for entry in pending:
                    state = states[entry.job_id]
                    if state.phase == cluster.UNLISTED:
                        state = _unlisted(self.submission, started, state, scheduler.outcome(entry.job_id))
                        unknown += [entry] if state.phase == "failed" else []
                    if state.phase in ("done", "failed"):
                        end = _end(scheduler, entry, state, self.say)
                        ends[entry.name] = end
                        counts["failed" if end.failed else "done"] += 1
                    else:
                        counts[state.phase] = counts.get(state.phase, 0) + 1
                if unknown:
                    lost = sum(len(merge.missing(ends[entry.name])) for entry in unknown)
                    self.say(
                        f"asyncbench: warning: {scheduler.kind} does not know job(s) {', '.join(e.job_id for e in unknown)} "
                        f"{UNLISTED_GRACE_S:.0f} s after their submission (not this cluster's, or purged from its accounting): "
                        + (f"the {lost} case(s) they left no results for are error rows" if lost else "the results they left are kept")
                    )
                display.update(counts)
                if len(ends) == len(entries) or not self.wait:
                    break
                time.sleep(scheduler.poll_s)

    def collect(self, interrupted: bool) -> Report:
        entries = self.submission.jobs
        ordered = [self.ends[e.name] for e in entries if e.name in self.ends]
        submission_facts = {
            "folder": str(self.folder.resolve()),
            "executor": self.submission.executor.to_dict(),
            "jobs": [_job_fact(e, self.ends.get(e.name)) for e in entries],
        }
        report = merge.merge(self.submission.name, self.submission.config, ordered, submission_facts)
        return dataclasses.replace(report, interrupted=True) if interrupted else report

    def recorded(self, report: Report) -> list[tuple[Report, str | None]]:
        """Each ended job's own results, with its file: what `--record` stores (each under its own machine)."""
        return [(end.report, str(e.results)) for e in self.submission.jobs if (end := self.ends.get(e.name)) is not None and end.report]

    def stopped_line(self, report: Report, kept_in: str) -> str:
        return f"interrupted: {len(report.results)} case(s) gathered{kept_in}"


def gather(
    folder: str | Path, request: RunRequest, say: Say, *, wait: bool, scheduler: Any = None, conclusion: RunConclusion | None = None
) -> spine.Ended[ReportView]:
    """Follow a submission's jobs until they end (`wait`; else take what ended), then one merged report, judged,
    written and recorded as `run`'s. `scheduler`: the one that submitted them, in this process (Ctrl-C then
    cancels them); else they are found from the folder and Ctrl-C leaves them running. Ctrl-C stops following
    and still writes what ended: exit 130 (143 on SIGTERM). `conclusion`: `run --executor`'s preflight, made
    before it submitted the jobs (None: gather checks its request itself)."""
    return spine.run(Following(folder, request, say, wait, scheduler, conclusion), say)


def _states(scheduler: Any, job_ids: list[str], folder: str | Path, wait: bool) -> dict[str, Any]:
    """Where each job stands. A scheduler that cannot be asked (its controller or accounting down) is asked again
    for OUTAGE_S while waiting (a restart of slurmdbd must not end hours of following), then it is one line, exit 2,
    the jobs left as they are; at once without waiting."""
    first_failure = time.monotonic()
    while True:
        try:
            return dict(scheduler.states(job_ids))
        except InputError as exc:
            if not wait or time.monotonic() - first_failure >= OUTAGE_S:
                raise InputError(f"{exc}; the jobs are left as they are: `asyncbench gather {folder}` when it answers") from None
        time.sleep(scheduler.poll_s)


def _job_fact(entry: SubmittedJob, end: merge.JobEnd | None) -> dict[str, Any]:
    fact = {"name": entry.name, "job_id": entry.job_id, "results": str(entry.results)}
    if end is None:
        return {**fact, "state": NOT_ENDED}
    return {**fact, "state": end.state, "failed": end.failed, "reason": end.reason, "requeued": end.requeued}
