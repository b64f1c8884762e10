"""Cases run here: `asyncbench run` with the default executor, in this process's workers (or in it, --in-process).

The place (`Here`) runs the plan's cases with the engine, keeping each in
the results file's journal as it finishes; `run` takes it along the spine:
the whole request checked before anything runs (plan, outputs, trace
folder, baseline, history), the cases run and saved, judged once against
the baseline, every output written, recorded. Under torchrun this process
is one rank, and only rank 0 reports.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from asyncbench.errors import InputError
from asyncbench.results import budget, schema
from asyncbench.results.model import Report, Result
from asyncbench.results.plan import Config
from asyncbench.session import planning, preflight, reading, recorder, shards, spine
from asyncbench.session.requests import Outputs, RunRequest
from asyncbench.session.saver import Saver
from asyncbench.verdicts import compare, outcome

if TYPE_CHECKING:
    from asyncbench.engine.shards import Selected

Say = Callable[[str], None]


class Here:
    """The place that runs a plan in this process's workers: started at once (the workers import their frameworks
    while this process captures the environment), each case kept by the saver as it finishes."""

    def __init__(self, the_plan: Config, request: RunRequest, saver: Saver, trace_dir: str | None, selected: Selected | None = None):
        from asyncbench.engine import environment, runner  # after input is validated: running imports frameworks

        part = selected.config if selected is not None else the_plan  # `--shard`: one part runs, the file names the whole plan
        self.plan, self.request, self.saver, self.trace_dir = part, request, saver, trace_dir
        self.family_error = selected.family_error if selected is not None else budget.FAMILY_ERROR
        backends_used = [name for e in the_plan.experiments for name in e.backends]
        self.workers = runner.start_workers(part, request.isolate)  # importing their frameworks while this process captures
        report = schema.new_report(the_plan.to_dict(), environment.capture(backends_used))
        self.report = dataclasses.replace(report, shard=selected.shard if selected is not None else None)
        self.finished: list[Result] = []
        saver.begin(self.report)

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
                isolate=self.request.isolate,
                trace_dir=self.trace_dir,
                syncs=self.request.syncs,
                on_start=display.start,
                on_progress=display.update,
                on_result=on_result,
                workers=self.workers,
                family_error=self.family_error,
            )

    def collect(self, interrupted: bool) -> Report:
        return dataclasses.replace(self.report, results=tuple(self.finished), interrupted=interrupted)


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


def run(request: RunRequest, say: Say, the_plan: Config | None = None) -> spine.Session:
    """Run a request here (see the module's docstring); InputError for anything wrong with it, before anything runs.
    `the_plan`: the request's plan, where the caller made it already."""
    from asyncbench.engine import trace

    the_plan = the_plan or planning.plan(request.selection, request.executor)
    request, reports = _torchrun(the_plan, request)
    selected = shards.select(the_plan, request, say)  # `--shard I/N`: the part of the plan this job of a CI matrix runs
    outputs = preflight.check_outputs(request, any(e.sweep for e in the_plan.experiments))  # before the store is opened
    recording = request.recording
    store = recorder.open_history(recording.history, "run --record") if recording.record else None  # before running
    trace_dir = str(trace.check_directory(request.trace_dir)) if request.trace_dir else None
    base_report = reading.load_results(request.gate.baseline, say) if request.gate.baseline else None
    if base_report is not None:  # every row compared with the baseline gets the samples its interval needs
        from asyncbench.spec import overrides

        the_plan = overrides.with_rounds(the_plan, compare.samples_needed(base_report))
    json_path = request.outputs.json_path
    saver = Saver(json_path, say)
    report, stopped_by = spine.drive(Here(the_plan, request, saver, trace_dir, selected), saver.finish)

    def record(verdict: outcome.Outcome) -> outcome.Outcome:
        if store is None or not reports:
            return verdict
        return recorder.record(store, [(report, json_path)], recording.label, say, verdict)

    view, verdict = spine.conclude(report, request.gate, outputs, base_report, saver.written, saver.unsaved, say, record)
    if stopped_by is not None:
        kept_in = f" in {json_path}" if saver.written else ""
        say(f"interrupted: {len(report.results)} finished case(s) kept{kept_in}")
        return spine.Session(view, stopped_by, interrupted=True, reports=reports)
    return spine.Session(view, verdict.code, interrupted=False, reports=reports)
