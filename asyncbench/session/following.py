"""A sweep's jobs followed until they end, then gathered: one report, judged, written and recorded as `run`'s.

`run --executor slurm|local` follows the jobs it submitted (session.jobs);
`gather FOLDER` follows them from the sweep's folder, from any process, as
often as wanted: gathering reads (sweep.json, each job's results and outcome
files, the scheduler's word and the tail of each job's log; never a pickle)
and changes nothing in the folder. Following is a
place on the spine (session.spine): its work is waiting for the jobs,
Ctrl-C stops waiting (cancelling the jobs this command submitted) and still
writes what ended.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
from pathlib import Path
from typing import Any, Callable

from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.results import merge
from asyncbench.results.model import Report
from asyncbench.session import preflight, reading, recorder, spine
from asyncbench.session.requests import RunRequest
from asyncbench.session.saver import Saver
from asyncbench.spec import manifest
from asyncbench.spec.manifest import MANIFEST, Manifest, SweepJob
from asyncbench.verdicts import outcome

Say = Callable[[str], None]

#: the exit codes with which `asyncbench run` on a node says it was interrupted (what finished is in its file)
INTERRUPTED_CODES = (EXIT_INTERRUPTED, EXIT_TERMINATED)
#: how long after its submission a job the scheduler does not list counts as only just submitted: slurmctld hands
#: job records to slurmdbd (what sacct reads) asynchronously, seconds behind, minutes on a loaded controller; a job
#: still unlisted after this is not this cluster's (a folder from elsewhere, an id edited) or was purged from
#: accounting, and waiting longer would wait forever
UNLISTED_GRACE_S = 180.0
#: how long a waiting gather keeps asking a scheduler that does not answer (sacct failing: slurmdbd restarting, the
#: controller failing over) before it says so and stops: long enough for a restart, short of hiding an outage
OUTAGE_S = 120.0


def read_manifest(folder: str | Path) -> Manifest:
    """The sweep's manifest, every value checked before any is used (spec.manifest: InputError naming the key)."""
    return manifest.read(folder)


def _end(scheduler: Any, entry: SweepJob, state: Any, say: Say) -> merge.JobEnd:
    """What became of a job that ended: its results (whole, or what it finished before it was stopped) and why."""
    from asyncbench.engine.cluster import last_line
    from asyncbench.engine.jobs import LIMIT_CODE, requeued

    ended = scheduler.outcome(entry.job_id)
    results = entry.results
    report: Report | None = None
    if results.exists() or Path(f"{results}.journal").exists():
        try:
            report = reading.load_results(results)
        except InputError as exc:
            say(f"asyncbench: warning: job {entry.name}: its results cannot be read ({exc}); its cases are error rows")
    failed, reason = state.phase == "failed", state.reason
    if ended is not None and not ended[0]:
        failed, reason = True, reason or last_line(ended[1])
    elif ended is not None and ended[1] in INTERRUPTED_CODES:
        failed, reason = True, reason or f"its run was interrupted (exit {ended[1]})"
    elif ended is not None and ended[1] == LIMIT_CODE:  # a local GPU job, its limit counted from when it had its GPUs
        failed, reason = True, reason or "its run reached the job's time limit and was stopped"
    if report is None and not failed:
        failed = True
        said = scheduler.stderr_tail(entry.job_id)
        code = f"asyncbench exited {ended[1]}" if ended is not None else "it left no results"
        reason = f"{code}: {said}" if said else code
    return merge.JobEnd(entry.name, entry.job_id, scheduler.kind, state.state, failed, reason, entry.cases, report, requeued(results))


def _unlisted(sweep: Manifest, started: datetime.datetime, state: Any, ended: Any) -> Any:
    """A job the scheduler does not list: only just submitted (still queued, or ended before the scheduler's
    accounting caught up: its state is worth the wait) within UNLISTED_GRACE_S of its submission (or of this
    gathering's start, whichever came first); after it, ended where its outcome file says so (`ended`: a job purged
    from the scheduler's accounting, or a folder from another cluster), else failed — the scheduler will not say
    more, and waiting would wait forever."""
    from asyncbench.engine.cluster import JobState

    if datetime.datetime.now(datetime.timezone.utc) - min(sweep.created, started) < datetime.timedelta(seconds=UNLISTED_GRACE_S):
        return JobState("queued", "SUBMITTED")
    if ended is not None:
        return JobState("done", state.state, f"{state.reason}; its outcome file says it ended")
    return JobState("failed", "UNKNOWN", f"{state.reason}, {UNLISTED_GRACE_S:.0f} s after its submission")


def _sweeps(sweep: Manifest) -> bool:
    """Whether an experiment of the sweep's plan sweeps a param (a plot draws sweeps), as its manifest stores the
    plan: no job's config is loaded again, which would import the user's workload modules in this process."""
    experiments = sweep.config.get("experiments")
    return isinstance(experiments, list) and any(isinstance(e, dict) and e.get("sweep") for e in experiments)


class Following:
    """The place whose work is following a sweep's jobs until they end (`wait`; else taking what ended); what
    ended merged is its report. `submitted_here`: Ctrl-C cancels the jobs still running."""

    def __init__(self, folder: Path, sweep: Manifest, scheduler: Any, submitted_here: bool, progress: bool, wait: bool, say: Say):
        """`folder`: as the user named it (what a message tells them to gather again)."""
        self.folder, self.sweep, self.scheduler, self.say, self.wait = folder, sweep, scheduler, say, wait
        self.submitted_here, self.progress = submitted_here, progress
        self.ends: dict[str, merge.JobEnd] = {}

    def execute(self) -> None:
        try:
            self._follow()
        except KeyboardInterrupt:
            if self.submitted_here:
                left = [e.job_id for e in self.sweep.jobs if e.name not in self.ends]
                self.scheduler.cancel(left)
                self.say(f"cancelled {len(left)} job(s) this command submitted")
            raise

    def _follow(self) -> None:
        from rich.console import Console

        from asyncbench.engine import cluster
        from asyncbench.report.jobs import JobsDisplay

        entries, ends, scheduler = self.sweep.jobs, self.ends, self.scheduler
        started = datetime.datetime.now(datetime.timezone.utc)
        display = JobsDisplay(len(entries), self.progress, Console(stderr=True), self.say)
        with display:
            while True:
                pending = [e for e in entries if e.name not in ends]
                states = _states(scheduler, [e.job_id for e in pending], self.folder, self.wait)
                counts = {"done": sum(1 for e in ends.values() if not e.failed), "failed": sum(1 for e in ends.values() if e.failed)}
                unknown = []
                for entry in pending:
                    state = states[entry.job_id]
                    if state.phase == cluster.UNLISTED:
                        state = _unlisted(self.sweep, started, state, scheduler.outcome(entry.job_id))
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
        entries = self.sweep.jobs
        ordered = [self.ends[e.name] for e in entries if e.name in self.ends]
        sweep_facts = {
            "folder": str(self.folder.resolve()),
            "executor": self.sweep.executor.to_dict(),
            "jobs": [_job_fact(e, self.ends.get(e.name)) for e in entries],
        }
        report = merge.merge(self.sweep.name, self.sweep.config, ordered, sweep_facts)
        return dataclasses.replace(report, interrupted=True) if interrupted else report

    def recorded(self) -> list[tuple[Report, str | None]]:
        """Each ended job's own results, with its file: what `--record` stores (each under its own machine)."""
        return [(end.report, str(e.results)) for e in self.sweep.jobs if (end := self.ends.get(e.name)) is not None and end.report]


def gather(folder: str | Path, request: RunRequest, say: Say, *, wait: bool, scheduler: Any = None) -> spine.Session:
    """Follow a sweep's jobs until they end (`wait`; else take what ended), then one merged report, judged,
    written and recorded as `run`'s. `scheduler`: the one that submitted them, in this process (Ctrl-C then
    cancels them); else they are found from the folder and Ctrl-C leaves them running. Ctrl-C stops following
    and still writes what ended: exit 130 (143 on SIGTERM)."""
    from asyncbench.engine import cluster
    from asyncbench.engine.jobs import outcome_path

    preflight.check_names(request, "gather")  # a mistyped option is said before the folder is read
    sweep = read_manifest(folder)
    root = Path(folder).resolve()
    owned = [root / MANIFEST]
    for job in sweep.jobs:
        owned += [job.config, job.results, Path(f"{job.results}.journal"), outcome_path(job.results)]
    outputs = preflight.check_outputs(request, _sweeps(sweep), "gather", owned, root)
    recording = request.recording
    store = recorder.open_history(recording.history) if recording.record else None
    base_report = reading.load_results(request.gate.baseline, say) if request.gate.baseline else None
    submitted_here = scheduler is not None
    results = {job.job_id: job.results for job in sweep.jobs}  # beside each, the outcome file its job leaves
    scheduler = scheduler or cluster.scheduler(sweep.executor.kind, Path(folder), sweep.executor, results)
    following = Following(Path(folder), sweep, scheduler, submitted_here, request.progress, wait, say)
    saver = Saver(request.outputs.json_path, say)
    report, stopped_by = spine.drive(following, saver.finish)
    pending_count = len(sweep.jobs) - len(following.ends)
    if pending_count and stopped_by is None:
        say(f"{pending_count} job(s) still queued or running, not in this report: `asyncbench gather {folder}` again later")

    def record(verdict: outcome.Outcome) -> outcome.Outcome:
        return recorder.record(store, following.recorded(), recording.label, say, verdict, jobs=True) if store is not None else verdict

    view, verdict = spine.conclude(report, request.gate, outputs, base_report, saver.written, saver.unsaved, say, record)
    if stopped_by is not None:
        json_path = request.outputs.json_path
        say(f"interrupted: {len(report.results)} case(s) gathered" + (f" in {json_path}" if saver.written else ""))
        return spine.Session(view, stopped_by, interrupted=True)
    return spine.Session(view, verdict.code, interrupted=False)


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


def _job_fact(entry: SweepJob, end: merge.JobEnd | None) -> dict[str, Any]:
    fact = {"name": entry.name, "job_id": entry.job_id, "results": str(entry.results)}
    if end is None:
        return {**fact, "state": "not ended"}
    return {**fact, "state": end.state, "failed": end.failed, "reason": end.reason, "requeued": end.requeued}
