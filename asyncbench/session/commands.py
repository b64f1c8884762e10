"""Which place runs a request: `run` here (session.local) or as jobs (session.jobs, then session.following).

The CLI hands every measuring command's typed request here or to its own
place's module (`gather`: session.following, `merge`: session.shards,
`ab`: session.paired, `record`: session.recorder). Each command's request is
checked once: `run --executor` checks it before it submits the jobs, and
hands that preflight to the gathering that follows them.
"""

from __future__ import annotations

from asyncbench.errors import InputError
from asyncbench.report.view import ReportView
from asyncbench.say import Say
from asyncbench.session import following, jobs, local, planning, spine
from asyncbench.session.jobs import JobOptions
from asyncbench.session.requests import RunRequest


def run(request: RunRequest, options: JobOptions, say: Say, show: Say) -> spine.Ended[ReportView] | None:
    """The request with its plan's executor: here (local.run), or as jobs submitted, then followed and gathered.
    None: submitted without waiting (the folder's path went to `show`, on a line of its own)."""
    the_plan = planning.plan(request.selection, request.executor)
    if request.shard is not None and the_plan.executor.kind != "here":
        raise InputError(
            f"--shard {request.shard} runs one part of the plan here; --executor {the_plan.executor.kind} cuts it into jobs itself"
        )
    if the_plan.executor.kind == "here":
        if not options.wait or options.job_dir:
            raise InputError(f"{'--no-wait' if not options.wait else '--job-dir'} is for jobs: add --executor slurm (or local)")
        return local.run(request, say, the_plan)
    folder, scheduler, conclusion = jobs.submit(request, the_plan, options, say)
    if not options.wait:
        show(str(folder))
        return None
    return following.gather(folder, request, say, wait=True, scheduler=scheduler, conclusion=conclusion)
