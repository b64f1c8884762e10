"""A plan run as jobs: split → submit through submitit → follow → gather → one report, judged as `run` judges.

`run --executor slurm|local` comes here; with the default executor (`here`)
the request goes on to `session.run` unchanged. Everything that would make
the jobs fail is checked before the first is submitted (exit 2). A sweep
lives in its folder (`--job-dir`, default `.asyncbench/jobs/STAMP-NAME`):
each job's config and results file, submitit's pickles and logs, and
`sweep.json`, which names every job, its id and the cases it was to run —
all that `gather FOLDER` needs to pick the sweep up, from any process, as
often as wanted (gathering reads; it changes nothing in the folder).

Each job's results file is a plain `asyncbench run` results file, measured on
its node with that node's environment; `--record` records each of them, so
the history keeps every job under its own machine's fingerprint.
"""

from __future__ import annotations

import dataclasses
import datetime
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from asyncbench import session
from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.results import merge, recordable, schema
from asyncbench.results.model import Report
from asyncbench.results.plan import Config, ExecutorSettings, Experiment
from asyncbench.spec import manifest
from asyncbench.spec.manifest import MANIFEST, Manifest, SweepJob
from asyncbench.verdicts import compare

Say = Callable[[str], None]

#: where sweeps' folders go when --job-dir is not given (beside the history store's default)
JOBS_ROOT = Path(".asyncbench") / "jobs"
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


@dataclass(frozen=True)
class SweepOptions:
    """How the jobs are followed: where their folder goes, and whether the command waits for them."""

    job_dir: str | None = None
    wait: bool = True


def run(request: session.RunRequest, options: SweepOptions, say: Say, show: Say) -> session.Session | None:
    """The request with its plan's executor: here (session.run), or as jobs. None: submitted without waiting
    (the folder's path went to `show`, on a line of its own)."""
    the_plan = session.plan(request)
    if the_plan.executor.kind == "here":
        if not options.wait or options.job_dir:
            raise InputError(f"{'--no-wait' if not options.wait else '--job-dir'} is for jobs: add --executor slurm (or local)")
        return session.run(request, say, the_plan)
    folder, scheduler = submit(request, the_plan, options, say)
    if not options.wait:
        show(str(folder))
        return None
    return gather(folder, request, say, wait=True, scheduler=scheduler)


# --- submitting -------------------------------------------------------------------------------------------------


def _folder(job_dir: str | None, name: str) -> tuple[Path, list[Path]]:
    """The sweep's folder, new or empty, and the folders this call created for it (innermost first): what to remove
    again if submitting fails, so that the folder is as it was and the same command can be given again."""
    from asyncbench.spec import executor

    if job_dir is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = JOBS_ROOT / f"{stamp}-{''.join(c if c.isascii() and (c.isalnum() or c in '-_') else '-' for c in name)[:40]}"
    else:
        folder = Path(job_dir)
    try:  # the folder is written into each job's batch script: a newline there would be a shell line of its own
        executor.plain(str(folder.absolute()), "the folder's path")
    except ValueError as exc:
        raise InputError(f"--job-dir: {exc}") from None
    if "%" in str(folder.absolute()):  # Slurm expands %j, %u... in a job's log paths: the logs would go elsewhere
        raise InputError(f"--job-dir {folder}: a '%' in the folder's path is read by Slurm as a pattern (%j: the job's id)")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"--job-dir {folder}: already holds something (another sweep?); name a new or empty folder")
    created = [parent for parent in (folder, *folder.absolute().parents) if not parent.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--job-dir {folder}: cannot create it: {exc.strerror or exc}") from None
    return folder.resolve(), [c.absolute() for c in created]


def _undo(folder: Path, created: list[Path]) -> None:
    """The sweep's folder as it was before this run: emptied (it was empty), removed with its parents if this run
    made them. Best effort: what cannot be removed stays, and the next run says it holds something."""
    for child in folder.iterdir() if folder.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
    for made in created:
        try:
            made.rmdir()
        except OSError:
            break


def submit(request: session.RunRequest, the_plan: Config, options: SweepOptions, say: Say) -> tuple[Path, Any]:
    """Check everything, write each job's config, submit them all; the sweep's folder and the scheduler that
    holds the jobs. InputError (nothing submitted) for what would make the jobs fail; a submission refused midway
    cancels those submitted."""
    from asyncbench.engine import cluster, jobs, slurm
    from asyncbench.spec import dump, executor

    settings = the_plan.executor
    if request.trace_dir:
        raise InputError("--trace does not go with --executor: trace a case in a run of its own on the machine")
    session.check_outputs(request, the_plan.experiments)
    compare.parse_threshold(request.max_regression)
    if request.record:
        session.open_history(request.history)
    if request.baseline:
        session.load_results(request.baseline, say)
    cluster.require_submitit()
    if settings.kind == "slurm":
        slurm.check_slurm(settings, {key: executor.given_as(key, request.executor, request.sets) for key in executor.KEYS})
    planned_jobs = jobs.split(the_plan, settings.per)
    folder, created = _folder(options.job_dir, the_plan.name)
    ids: list[str] = []
    scheduler = None
    try:
        sweep_jobs, runs = [], []
        for name, job_plan in planned_jobs:
            config_path, results_path = folder / f"{name}.yaml", folder / f"{name}.json"
            config_path.write_text(dump.dumps(job_plan), encoding="utf-8")
            sweep_jobs.append(SweepJob(name, "", config_path, results_path, tuple(jobs.planned(job_plan))))
            runs.append(jobs.NodeRun(str(config_path), str(results_path), str(Path.cwd())))
        scheduler = cluster.scheduler(settings.kind, folder, settings)
        submitted_at = datetime.datetime.now(datetime.timezone.utc)
        started = time.perf_counter()
        try:
            scheduler.submit(runs, ids)
        except Exception as exc:  # noqa: BLE001 - sbatch's refusal, in whatever form submitit raises it: one line
            said = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)[:300]
            raise InputError(f"submitting job {len(ids) + 1} of {len(runs)} failed ({said}); cancelled the {len(ids)} submitted") from None
        submit_s = time.perf_counter() - started
        named = tuple(dataclasses.replace(job, job_id=job_id) for job, job_id in zip(sweep_jobs, ids, strict=True))
        written = Manifest(the_plan.name, submitted_at, the_plan.to_dict(), settings, submit_s, named)
        schema.atomic_write(folder / MANIFEST, manifest.write_text(written))
    except BaseException as exc:  # refused, interrupted, or the manifest not written: no jobs, and the folder as it was
        if scheduler is not None and ids:
            scheduler.cancel(ids)
        _undo(folder, created)
        if isinstance(exc, OSError):
            why = exc.strerror or exc
            raise InputError(f"--job-dir {folder}: cannot write the sweep's files ({why}); cancelled the {len(ids)} submitted") from None
        raise
    where = f" to partition {settings.partition}" if settings.partition else ""
    say(f"submitted {len(ids)} job(s){where} through submitit ({settings.kind}) in {submit_s:.2f} s: {folder}")
    return folder, scheduler


# --- following and gathering ------------------------------------------------------------------------------------


def read_manifest(folder: str | Path) -> Manifest:
    """The sweep's manifest, every value checked before any is used (spec.manifest: InputError naming the key)."""
    return manifest.read(folder)


def _end(scheduler: Any, entry: SweepJob, state: Any, say: Say) -> merge.JobEnd:
    """What became of a job that ended: its results (whole, or what it finished before it was stopped) and why."""
    from asyncbench.engine.cluster import last_line
    from asyncbench.engine.jobs import requeued

    ended = scheduler.outcome(entry.job_id)
    results = entry.results
    report: Report | None = None
    if results.exists() or Path(f"{results}.journal").exists():
        try:
            report = session.load_results(results)
        except InputError as exc:
            say(f"asyncbench: warning: job {entry.name}: its results cannot be read ({exc}); its cases are error rows")
    failed, reason = state.phase == "failed", state.reason
    if ended is not None and not ended[0]:
        failed, reason = True, reason or last_line(ended[1])
    elif ended is not None and ended[1] in INTERRUPTED_CODES:
        failed, reason = True, reason or f"its run was interrupted (exit {ended[1]})"
    if report is None and not failed:
        failed = True
        said = scheduler.stderr_tail(entry.job_id)
        code = f"asyncbench exited {ended[1]}" if ended is not None else "it left no results"
        reason = f"{code}: {said}" if said else code
    return merge.JobEnd(entry.name, entry.job_id, scheduler.kind, state.state, failed, reason, entry.cases, report, requeued(results))


def _plan_of(sweep: Manifest) -> Config:
    """The sweep's plan again, from its jobs' configs (what output checks need: which experiments sweep)."""
    from asyncbench.spec import config

    experiments: list[Experiment] = []
    for entry in sweep.jobs:
        try:
            experiments.extend(config.load(entry.config).experiments)
        except InputError:
            continue  # a job whose config is gone still has its results and its planned cases
    return Config(name=sweep.name, source=MANIFEST, experiments=tuple(experiments), executor=ExecutorSettings())


def _leave_its_files(folder: str | Path, sweep: Manifest, request: session.RunRequest) -> None:
    """Gathering changes none of the sweep's own files: an output that would overwrite one (its sweep.json, a job's
    config, results or journal, submitit's logs) is refused (InputError) before anything is read."""
    from asyncbench.report.writers import WRITERS

    root = Path(folder).resolve()
    owned = {root / MANIFEST, *(path for job in sweep.jobs for path in (job.config, job.results, Path(f"{job.results}.journal")))}
    named = [("-o", request.json_path), *((WRITERS[name].option or name, path) for name, path in request.outputs.items())]
    for option, path in named:
        if not path:
            continue
        target = Path(path).resolve()
        if target in owned or target.is_relative_to(root / "logs"):
            raise InputError(f"{option} {path}: is one of the sweep's own files ({target.name}); gathering leaves them as they are")


def _unlisted(sweep: Manifest, started: datetime.datetime, state: Any) -> Any:
    """A job the scheduler does not list: only just submitted (still queued) within UNLISTED_GRACE_S of its
    submission (or of this gathering's start, whichever came first), failed after it — the scheduler will not say
    more, and waiting would wait forever."""
    from asyncbench.engine.cluster import JobState

    if datetime.datetime.now(datetime.timezone.utc) - min(sweep.created, started) < datetime.timedelta(seconds=UNLISTED_GRACE_S):
        return JobState("queued", "SUBMITTED")
    return JobState("failed", "UNKNOWN", f"{state.reason}, {UNLISTED_GRACE_S:.0f} s after its submission")


def gather(folder: str | Path, request: session.RunRequest, say: Say, *, wait: bool, scheduler: Any = None) -> session.Session:
    """Follow a sweep's jobs until they end (`wait`; else take what ended), then one merged report, judged,
    written and recorded as `run`'s. `scheduler`: the one that submitted them, in this process (Ctrl-C then
    cancels them); else they are found from the folder and Ctrl-C leaves them running. Ctrl-C stops following
    and still writes what ended: exit 130 (143 on SIGTERM)."""
    from rich.console import Console

    from asyncbench.engine import cluster
    from asyncbench.report.jobs import JobsDisplay

    session.check_names(request, "gather")  # a mistyped option is said before the folder is read
    sweep = read_manifest(folder)
    settings = sweep.executor
    entries = sweep.jobs
    _leave_its_files(folder, sweep, request)
    outputs = session.check_outputs(request, _plan_of(sweep).experiments, "gather")
    compare.parse_threshold(request.max_regression)  # before waiting: a typo must not cost the wait
    store = session.open_history(request.history) if request.record else None
    base_report = session.load_results(request.baseline, say) if request.baseline else None
    submitted_here = scheduler is not None
    scheduler = scheduler or cluster.scheduler(settings.kind, Path(folder), settings)
    ends: dict[str, merge.JobEnd] = {}
    stopped_by: int | None = None
    started = datetime.datetime.now(datetime.timezone.utc)
    stderr = Console(stderr=True)
    display = JobsDisplay(len(entries), request.progress, stderr, say)
    previous_handler = signal.signal(signal.SIGTERM, session.raise_terminated)
    try:
        with display:
            while True:
                pending = [e for e in entries if e.name not in ends]
                states = _states(scheduler, [e.job_id for e in pending], folder, wait)
                counts = {"done": sum(1 for e in ends.values() if not e.failed), "failed": sum(1 for e in ends.values() if e.failed)}
                unknown = []
                for entry in pending:
                    state = states[entry.job_id]
                    if state.phase == cluster.UNLISTED:
                        state = _unlisted(sweep, started, state)
                        unknown += [entry.job_id] if state.phase == "failed" else []
                    if state.phase in ("done", "failed"):
                        end = _end(scheduler, entry, state, say)
                        ends[entry.name] = end
                        counts["failed" if end.failed else "done"] += 1
                    else:
                        counts[state.phase] = counts.get(state.phase, 0) + 1
                if unknown:
                    say(
                        f"asyncbench: warning: {scheduler.kind} does not know job(s) {', '.join(unknown)} "
                        f"{UNLISTED_GRACE_S:.0f} s after their submission (not this cluster's, or purged from its accounting): "
                        "their cases are error rows"
                    )
                display.update(counts)
                if len(ends) == len(entries) or not wait:
                    break
                time.sleep(scheduler.poll_s)
    except KeyboardInterrupt as stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the save short
        stopped_by = EXIT_TERMINATED if isinstance(stop, session.Terminated) else EXIT_INTERRUPTED
        if submitted_here:
            left = [e.job_id for e in entries if e.name not in ends]
            scheduler.cancel(left)
            say(f"cancelled {len(left)} job(s) this command submitted")
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
    ordered = [ends[e.name] for e in entries if e.name in ends]
    sweep_facts = {
        "folder": str(Path(folder).resolve()),
        "executor": settings.to_dict(),
        "jobs": [_job_fact(e, ends.get(e.name)) for e in entries],
    }
    report = merge.merge(sweep.name, sweep.config, ordered, sweep_facts)
    if stopped_by is not None:
        report = dataclasses.replace(report, interrupted=True)
    pending_count = len(entries) - len(ordered)
    if pending_count and stopped_by is None:
        say(f"{pending_count} job(s) still queued or running, not in this report: `asyncbench gather {folder}` again later")
    written, unsaved = _save(report, request.json_path, say)

    def record(verdict: Any) -> Any:
        kept = [
            (end.report, str(entry.results)) for entry in entries if (end := ends.get(entry.name)) is not None and end.report is not None
        ]
        return _record(store, kept, request.label, say, verdict) if store is not None else verdict

    view, verdict = session.conclude(report, request, outputs, base_report, written, unsaved, say, record)
    if stopped_by is not None:
        say(f"interrupted: {len(report.results)} case(s) gathered" + (f" in {request.json_path}" if written else ""))
        return session.Session(view, stopped_by, interrupted=True)
    return session.Session(view, verdict.code, interrupted=False)


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


def _save(report: Report, path: str | None, say: Say) -> tuple[list[str], list[str]]:
    if not path:
        return [], []
    try:
        schema.save(report, path)
    except OSError as exc:
        say(f"asyncbench: error: cannot write {path}: {exc.strerror or exc}")
        return [], [path]
    return [path], []


def _record(store: Any, reports: list[tuple[Report, str]], label: str | None, say: Say, verdict: Any) -> Any:
    """Each job's own results file into the history (its machine's fingerprint comes with it); a job already
    recorded (gathered before) is said so, not stored twice. The job folder may have been edited by anyone who can
    write to it: every file is checked as `record` checks it (results.recordable) before any is stored."""
    from asyncbench.history.store import StoreError

    try:
        for report, path in reports:
            recordable.check_file(schema.to_dict(report), path)
    except InputError as exc:
        say(f"asyncbench: error: {exc}; no job recorded")
        return verdict.with_unsaved(f"the history ({store.target.shown})")
    recorded = again = 0
    for report, path in reports:
        if not report.results:
            continue
        try:
            done = store.record(report, label=label, source=path)
        except StoreError as exc:
            say(f"asyncbench: error: {exc}")
            return verdict.with_unsaved(f"the history ({store.target.shown})")
        recorded, again = recorded + done.new, again + (not done.new)
    say(f"recorded in {store.target.shown}: {recorded} job(s)" + (f", {again} already there" if again else ""))
    return verdict
