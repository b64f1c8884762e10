"""A plan run as jobs: split → submit through submitit → follow → gather → one report, judged as `run` judges.

`run --executor slurm|local` comes here (session.commands); everything
that would make the jobs fail is checked before the first is submitted
(exit 2). The jobs one command submits (a submission) live in their jobs
folder (`--job-dir`, default `.asyncbench/jobs/STAMP-NAME`): each job's
config and results file, submitit's pickles and logs, and `sweep.json` (the
manifest, under its old name), which names every job, its id and the cases
it was to run — all that `gather FOLDER` needs to pick the submission up
(session.following), from any process, as often as wanted.

Each job's results file is a plain `asyncbench run` results file, measured on
its node with that node's environment; `--record` records each of them, so
the history keeps every job under its own machine's fingerprint.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncbench.errors import InputError
from asyncbench.host import own_folder
from asyncbench.results import writing
from asyncbench.results.plan import Config
from asyncbench.say import Say
from asyncbench.session import preflight
from asyncbench.session.requests import RunRequest
from asyncbench.session.run_conclusion import RunConclusion
from asyncbench.spec import manifest
from asyncbench.spec.manifest import MANIFEST, Manifest, SubmittedJob

#: where jobs folders go when --job-dir is not given (beside the history store's default)
JOBS_ROOT = own_folder.OWN_FOLDER / "jobs"


@dataclass(frozen=True)
class JobOptions:
    """How the jobs are followed: where their folder goes, and whether the command waits for them."""

    job_dir: str | None = None
    wait: bool = True


def _folder(job_dir: str | None, name: str) -> tuple[Path, list[Path]]:
    """The jobs folder, new or empty, and the folders this call created for it (innermost first): what to remove
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
        raise InputError(f"--job-dir {folder}: already holds something (another submission?); name a new or empty folder")
    created = [parent for parent in (folder, *folder.absolute().parents) if not parent.exists()]
    try:
        if job_dir is None:  # asyncbench's own folder, made on first use, ignoring itself in git
            own_folder.make()
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--job-dir {folder}: cannot create it: {exc.strerror or exc}") from None
    return folder.resolve(), [c.absolute() for c in created]


def _undo(folder: Path, created: list[Path]) -> None:
    """The jobs folder as it was before this run: emptied (it was empty), removed with its parents if this run
    made them. Best effort: what cannot be removed stays, and the next run says it holds something."""
    for child in folder.iterdir() if folder.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
    for made in created:
        try:
            if made == own_folder.OWN_FOLDER.absolute():  # made by this run: its .gitignore too
                (made / ".gitignore").unlink(missing_ok=True)
            made.rmdir()
        except OSError:
            break


def submit(request: RunRequest, the_plan: Config, options: JobOptions, say: Say) -> tuple[Path, Any, RunConclusion]:
    """Check everything, write each job's config, submit them all; the jobs folder, the scheduler that holds the
    jobs, and how their gathered report concludes (the command's one preflight, handed to following.gather).
    InputError (nothing submitted) for what would make the jobs fail; a submission refused midway cancels those
    submitted."""
    from asyncbench.engine import cluster, jobs, slurm
    from asyncbench.spec import dump, executor

    settings = the_plan.executor
    if request.trace_dir:
        raise InputError("--trace does not go with --executor: trace a case in a run of its own on the machine")
    if request.syncs:
        raise InputError("--syncs does not go with --executor: take the census of a case in a run of its own on the machine")
    if request.bound or the_plan.bound or request.bound_verify:
        raise InputError("--bound does not go with --executor: measure what bounds a step in a run of its own on the machine")
    conclusion = RunConclusion.checked(request, any(e.sweep for e in the_plan.experiments), say, by_job=True)
    conclusion.check_plan(jobs.planned(the_plan))
    cluster.require_submitit()
    given_as = {key: executor.given_as(key, request.executor, request.selection.sets) for key in executor.KEYS}
    warning = jobs.check_gpus(jobs.gpus_named(the_plan), settings, given_as)  # the plan alone: before Slurm is asked
    if settings.kind == "slurm":
        slurm.check_slurm(settings, given_as)
    else:
        cluster.local_gpus(settings.gpus_per_node, os.environ, given_as["gpus_per_node"])
    if warning:
        say(warning)
    planned_jobs = jobs.split(the_plan, settings.per)
    if len(planned_jobs) > manifest.MAX_JOBS:  # its manifest would be refused by gather, as no submission's
        raise InputError(
            f"{len(planned_jobs)} jobs: more than a submission may have ({manifest.MAX_JOBS}); `executor: {{per: experiment}}` makes fewer"
        )
    folder, created = _folder(options.job_dir, the_plan.name)
    ids: list[str] = []
    scheduler = None
    try:
        entries, runs = [], []
        for name, job_plan in planned_jobs:
            config_path, results_path = folder / f"{name}.yaml", folder / f"{name}.json"
            entries.append(SubmittedJob(name, "", config_path, results_path, tuple(jobs.planned(job_plan))))
        # an output that is one of the submission's own files: said now, not when the submitted jobs are gathered
        preflight.check_not_owned(request, preflight.submission_files(folder, entries), folder)
        for (_, job_plan), job in zip(planned_jobs, entries, strict=True):
            job.config.write_text(dump.dumps(job_plan), encoding="utf-8")
            uses_gpu = jobs.gpus_named(job_plan).any  # on the local executor, such a job is given GPUs
            runs.append(jobs.NodeRun(str(job.config), str(job.results), str(Path.cwd()), uses_gpu=uses_gpu))
        scheduler = cluster.scheduler(settings.kind, folder, settings)
        submitted_at = datetime.datetime.now(datetime.timezone.utc)
        started = time.perf_counter()
        try:
            scheduler.submit(runs, ids)
        except Exception as exc:  # noqa: BLE001 - sbatch's refusal, in whatever form submitit raises it: one line
            said = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)[:300]
            raise InputError(f"submitting job {len(ids) + 1} of {len(runs)} failed ({said}); cancelled the {len(ids)} submitted") from None
        submit_s = time.perf_counter() - started
        named = tuple(dataclasses.replace(job, job_id=job_id) for job, job_id in zip(entries, ids, strict=True))
        written = Manifest(the_plan.name, submitted_at, the_plan.to_dict(), settings, submit_s, named)
        writing.atomic_write(folder / MANIFEST, manifest.write_text(written))
    except BaseException as exc:  # refused, interrupted, or the manifest not written: no jobs, and the folder as it was
        if scheduler is not None and ids:
            scheduler.cancel(ids)
        _undo(folder, created)
        if isinstance(exc, OSError):
            why = exc.strerror or exc
            raise InputError(
                f"--job-dir {folder}: cannot write the submission's files ({why}); cancelled the {len(ids)} submitted"
            ) from None
        raise
    where = f" to partition {settings.partition}" if settings.partition else ""
    say(f"submitted {len(ids)} job(s){where} through submitit ({settings.kind}) in {submit_s:.2f} s: {folder}")
    return folder, scheduler, conclusion
