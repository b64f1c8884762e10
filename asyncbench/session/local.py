"""Cases run here: `asyncbench run` with the default executor, in this process's workers (or in it, --in-process).

The place (`Here`) fills the spine's hooks (session.spine): its preflight
checks the whole request before anything runs (plan, `--shard`, outputs,
history, baseline, trace folder); it starts the workers, runs the plan's
cases with the engine, keeping each in the results file's journal as it
finishes; its report concludes as every run's does (session.run_conclusion).
`run --shard I/N` runs the I-th of N parts of the plan (engine.shards cuts it
the same way on every machine), its results file saying which shard of
which plan it is, its checks each judged at the confidence they have in the
whole plan's run (`merge` puts the N files together: session.shards). Under
torchrun this process is one rank, and only rank 0 reports.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from asyncbench.errors import InputError
from asyncbench.report.view import ReportView
from asyncbench.results import budget
from asyncbench.results.model import Result
from asyncbench.results.plan import Config
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import planning, spine
from asyncbench.session.requests import Outputs, RunRequest
from asyncbench.session.run_conclusion import RunConclusion
from asyncbench.session.saver import Saver
from asyncbench.verdicts import compare

if TYPE_CHECKING:
    from asyncbench.engine.shards import Selected


def select(the_plan: Config, request: RunRequest, say: Say) -> Selected | None:
    """The part of `the_plan` that `--shard` asks for (None: no --shard, the whole plan). A shard with no case (more
    shards than the plan has cases) is said, and runs nothing: its file, empty, still tells `merge` it was there."""
    if request.shard is None:
        return None
    if request.gate.baseline:
        raise InputError(
            f"--shard {request.shard} with --baseline: compare the merged report (`asyncbench merge SHARD.json... --baseline FILE`)"
        )
    from asyncbench.engine import shards as cut  # the cut asks each backend which devices it runs on: no framework import

    selected = cut.select(the_plan, request.shard)
    if selected.empty:
        say(
            f"shard {request.shard} has no case: the plan has {selected.shard.plan_cases}, fewer than {request.shard.count} "
            "shards; nothing to measure here (the results file says so, for `asyncbench merge`)"
        )
    return selected


class Here:
    """The place that runs a plan in this process's workers: started at once (the workers import their frameworks
    while this process captures the environment), each case kept by the saver as it finishes. `the_plan`: the
    request's plan, where the caller made it already."""

    def __init__(self, request: RunRequest, say: Say, the_plan: Config | None = None):
        self.request, self.say, self.the_plan = request, say, the_plan
        #: whether this process reports (False on a torchrun rank other than 0)
        self.reports = True
        self.selected: Selected | None = None
        self.trace_dir: str | None = None
        self.finished: list[Result] = []

    def preflight(self) -> RunConclusion:
        from asyncbench.engine import trace

        the_plan = self.the_plan or planning.plan(self.request.selection, self.request.executor)
        self.request, self.reports = _torchrun(the_plan, self.request)
        self.selected = select(the_plan, self.request, self.say)  # `--shard I/N`: the part of the plan this job runs
        sweeps = any(e.sweep for e in the_plan.experiments)
        conclusion = RunConclusion.checked(self.request, sweeps, self.say, needed_by="run --record")
        if conclusion.base_report is not None:
            from asyncbench.engine import jobs  # the plan's case ids, known before anything runs

            conclusion.check_plan(jobs.planned(the_plan))
        self.trace_dir = str(trace.check_directory(self.request.trace_dir)) if self.request.trace_dir else None
        how = self.request.bound_verify or the_plan.bound_verify
        if how is not None:  # a capture the backend cannot make is refused before anything is measured
            from asyncbench.spec import checks

            refused = checks.verify_refused(the_plan.experiments, how)
            if refused is not None:
                raise InputError(refused)
        if conclusion.base_report is not None:  # every row compared with the baseline gets the samples its interval needs
            from asyncbench.spec import overrides

            the_plan = overrides.with_rounds(the_plan, compare.samples_needed(conclusion.base_report))
        self.the_plan = the_plan
        # a rank other than 0 records nothing: rank 0 records for everyone
        return conclusion if self.reports else dataclasses.replace(conclusion, store=None)

    def start(self, saver: Saver, stack: contextlib.ExitStack[Any]) -> None:
        from asyncbench.engine import environment, runner  # after input is validated: running imports frameworks

        the_plan, selected = self.the_plan, self.selected
        assert the_plan is not None  # made by the preflight
        part = selected.config if selected is not None else the_plan  # `--shard`: one part runs, the file names the whole plan
        self.plan, self.saver = part, saver
        self.family_error = selected.family_error if selected is not None else budget.FAMILY_ERROR
        backends_used = [name for e in the_plan.experiments for name in e.backends]
        self.workers = runner.start_workers(part, self.request.isolate)  # importing their frameworks while this process captures
        report = Report.new(the_plan.to_dict(), environment.capture(backends_used))
        self.report = dataclasses.replace(report, shard=selected.shard if selected is not None else None)
        saver.begin(self.report)

    @property
    def verify(self) -> str | None:
        """How each step is captured against its ceiling (--bound-verify, else the plan's `bound_verify`), or None."""
        return self.request.bound_verify or self.plan.bound_verify

    def execute(self) -> None:
        from rich.console import Console

        from asyncbench.engine import runner
        from asyncbench.report.progress import ProgressDisplay

        stderr = Console(stderr=True)
        # a live bar on a terminal, a line per case elsewhere (a CI log); nothing with -q
        display = ProgressDisplay(enabled=self.request.progress, console=stderr, verbose=self.request.verbose)

        def on_result(result: Result) -> None:
            self.finished.append(result)
            display.finish(result)
            self.saver.keep(result)

        with display:
            runner.run(
                self.plan,
                options=runner.RunOptions(
                    isolate=self.request.isolate,
                    trace_dir=self.trace_dir,
                    syncs=self.request.syncs,
                    bound=self.request.bound or self.plan.bound or self.verify is not None,
                    bound_verify=self.verify,
                    family_error=self.family_error,
                ),
                on_start=display.start,
                on_progress=display.update,
                on_result=on_result,
                workers=self.workers,
            )

    def collect(self, interrupted: bool) -> Report:
        return dataclasses.replace(self.report, results=tuple(self.finished), interrupted=interrupted)

    def recorded(self, report: Report) -> list[tuple[Report, str | None]]:
        return [(report, self.request.outputs.json_path)]

    def stopped_line(self, report: Report, kept_in: str) -> str:
        return f"interrupted: {len(report.results)} finished case(s) kept{kept_in}"


def _torchrun(the_plan: Config, request: RunRequest) -> tuple[RunRequest, bool]:
    """Under torchrun this process is one rank: only workloads that measure themselves across processes run, the
    rank is its own worker, and only rank 0 reports and writes. Returns the request as this rank runs it."""
    from asyncbench.measure import distributed
    from asyncbench.workloads import BUILT_IN, plugins

    launched = distributed.torchrun_rank()
    if launched is None:
        return request, True
    alone = sorted({e.workload for e in the_plan.experiments if not plugins.find(e.workload).across_processes})
    if alone:
        across = ", ".join(name for name, w in BUILT_IN.items() if w.across_processes)
        raise InputError(
            f"under torchrun only {across} runs (it measures itself across the ranks; each rank would run "
            f"{', '.join(alone)} on its own): add -w {across.split(', ')[0]}"
        )
    rank_zero = launched[0] == 0
    request = dataclasses.replace(request, isolate=False)  # torchrun started this process to be a rank: it is the worker
    if not rank_zero:
        request = dataclasses.replace(request, outputs=Outputs(), gate=dataclasses.replace(request.gate, baseline=None), progress=False)
    return request, rank_zero


def run(request: RunRequest, say: Say, the_plan: Config | None = None) -> spine.Ended[ReportView]:
    """Run a request here (see the module's docstring); InputError for anything wrong with it, before anything runs.
    `the_plan`: the request's plan, where the caller made it already."""
    here = Here(request, say, the_plan)
    return dataclasses.replace(spine.run(here, say), reports=here.reports)
