"""Config → results: run each case the config makes (engine.expansion), record what happened.

Skips and errors are data, not exceptions: a case whose backend is missing,
whose device is absent, or that raises while running becomes a row with its
reason, and the other cases still run. `on_result` is called after every case
so the caller can save incrementally; an interrupt (KeyboardInterrupt)
propagates to the caller with every finished result already delivered.

With `isolate`, cases run in a worker process (`isolation`): a case that
hangs past its `timeout_s` or kills its process is an error row too, and a
case that errored leaves no poisoned state (a CUDA context, full caches)
behind for the next one. A backend that needs another Python (MXNet's own
environment) or start-up variables gets a worker of its own, even with
--in-process: it cannot run in this one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench.backends import Backend, get_backend
from asyncbench.engine import expansion, isolation, measuring, memory, rounds, sanity, thread_pools
from asyncbench.engine.case_workers import CaseWorkers, GpuTaken, ImportFrameworks, uses_gpu
from asyncbench.engine.measuring import NOTHING_ASKED, CaseOptions
from asyncbench.errors import InputError, describe_failure
from asyncbench.host import facts
from asyncbench.measure import census, harness_cost
from asyncbench.results import budget, stats
from asyncbench.results.model import (
    ERROR,
    OK,
    SKIPPED,
    Case,
    Memory,
    Progress,
    Result,
    Samples,
    Sampling,
    Status,
    StopReason,
    VariantResult,
)
from asyncbench.results.plan import Config
from asyncbench.verdicts import bound_checks, bound_levels, checks
from asyncbench.workloads import plugins
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_form import StepWorkload

#: said on a case traced in asyncbench's own process: there is no fresh worker for the cases after it
IN_PROCESS_TRACE = (
    "traced with --in-process: the profiler stays attached to this process (CUPTI after torch.profiler), so later "
    "cases of this run may be slower; trace without --in-process, or in a run of its own"
)


#: said on a traced case that measured itself in other processes (comm_overlap's ranks): nothing was traced here
NOT_TRACED_ACROSS_PROCESSES = "not traced: the case measured itself in other processes (its ranks)"


#: said on the census of a case that measured itself in other processes (comm_overlap's ranks), where no census round runs
NO_CENSUS_ACROSS_PROCESSES = "no census: the case measured itself in other processes (its ranks)"


def _row(case: Case, status: Status, reason: str | None = None, **fields: Any) -> Result:
    return Result(
        id=case.id,
        experiment=case.experiment,
        workload=case.workload,
        backend=case.backend,
        device=case.device,
        params=case.params,
        status=status,
        reason=reason,
        **fields,
    )


def summarize(samples: Mapping[str, Samples], memories: Mapping[str, Memory] | None = None) -> dict[str, VariantResult]:
    """Each variant's clocks summarized (median, IQR, CI), with its memory run when there was one."""
    return {
        name: VariantResult(
            samples=s,
            issue_s=stats.summarize(s.issue_s),
            done_s=stats.summarize(s.done_s),
            device_s=stats.summarize(s.device_s) if s.device_s else None,
            memory=(memories or {}).get(name, Memory()),
        )
        for name, s in samples.items()
    }


def _checks_decided(
    case: Case, options: CaseOptions, workload: Workload, asynchronous: bool
) -> Callable[[Mapping[str, Samples]], bool] | None:
    """measure()'s `decided`: whether the samples so far give every check of the case a pass or a fail, judged at
    the case's share of the run's error budget (asked only at the budget's looks)."""
    if not case.expect or options.budget is None:
        return None
    budget = options.budget

    def decided(samples: Mapping[str, Samples]) -> bool:
        variants = summarize(samples)
        metrics, bounds = rounds.figures(workload, case.params, variants, asynchronous)
        partial = workload.describe(_row(case, OK, variants=variants, metrics=metrics, bounds=bounds), reading=False)
        return checks.decided(checks.evaluate(case.expect, partial, budget, rounds.per_round(workload, case.params, variants)))

    return decided


def scope(backend: Backend, case: Case, workload: Workload) -> contextlib.ExitStack:
    """What a case runs inside: its device made current and, for built-in workloads only (plugins.is_built_in:
    by where the workload came from), float32 products in full precision (`Backend.full_precision`), so their
    GFLOP/s compare across backends; a user's workload runs at the precision the user's own process would."""
    stack = contextlib.ExitStack()
    stack.enter_context(backend.activate(case.device))
    if plugins.is_built_in(case.workload, workload):
        stack.enter_context(backend.full_precision())
    return stack


def run_case(
    case: Case,
    workload: Workload,
    backend: Backend,
    options: CaseOptions = NOTHING_ASKED,
    on_progress: Callable[[Progress], None] | None = None,
) -> Result:
    """Set up, measure and summarize one case, as the run asks (`options`: trace, census, budget); any exception
    becomes an error row."""
    reason = workload.skip_reason(backend, case.device, case.params)
    if reason:
        return _row(case, SKIPPED, reason)
    started = time.perf_counter()
    asynchronous = backend.is_asynchronous(case.device)
    prepared, note, harness = None, None, None
    # the backend's pools before the case, after its set-up and after its sampling: a step may size them in code
    recorded: dict[str, int] = {}
    set_up: dict[str, int] = {}
    sampled: dict[str, int] = {}
    try:
        recorded = backend.pool_sizes(case.device)
        # a case measured in processes of its own (NCCL ranks, one per GPU) makes no device current here: a CUDA
        # context in this process would share rank 0's GPU (under EXCLUSIVE_PROCESS, rank 0 could not open it)
        with scope(backend, case, workload) if not workload.across_processes else contextlib.ExitStack():
            measured = workload.measure_itself(backend, case.device, case.params, case.settings)
            if measured is not None and options.bound:  # measured in other processes: no step here to perturb
                measured = dataclasses.replace(measured, note="; ".join(filter(None, (measured.note, measuring.NOT_PERTURBABLE))))
            if measured is None:
                # what the harness's own sync adds to every row here, before the case queues anything (results.ahead)
                harness = harness_cost.cached(
                    backend.name, case.device, lambda: backend.barrier(case.device), backend.result_wait(case.device)
                )
                prepared = workload.setup(backend, case.device, case.params)
                set_up = backend.pool_sizes(case.device)
                note = prepared.note
                decided = _checks_decided(case, options, workload, asynchronous)
                measured = measuring.measure_here(case, options, workload, backend, prepared, asynchronous, on_progress, decided)
                sampled = backend.pool_sizes(case.device)
        unmeasurable = prepared.unmeasurable if prepared is not None else {}
        said = [f"{name}: not measured, {why}" for name, why in unmeasurable.items()]
        note = "; ".join(filter(None, (measured.note, backend.describe(case.device), *said))) or None
        variants = summarize(measured.samples, measured.memory)
        metrics, bounds = rounds.figures(workload, case.params, variants, asynchronous)
        for name in unmeasurable:
            metrics[name] = None
            bounds.pop(name, None)
        if measured.verifies:
            metrics = {**metrics, "verified": 0.0 if measured.problem else 1.0}
    except Exception as exc:  # noqa: BLE001 - a failing case is a row; the run goes on
        reason = describe_failure(exc) + (plugins.place_in_user_code(exc, case.workload) if plugins.is_reference(case.workload) else "")
        return _row(case, ERROR, reason, note=note, asynchronous=asynchronous, case_s=time.perf_counter() - started)
    finally:
        if prepared is not None and prepared.close is not None:
            prepared.close()
        del prepared
        memory.release_case_objects()
        thread_pools.restore(backend, case.device, recorded)  # the next case here starts in the pool the run records
    fields: dict[str, Any] = dict(
        variants=variants,
        metrics=metrics,
        bounds=bounds,
        note=note,
        sampling=measured.sampling,
        asynchronous=asynchronous,
        case_s=time.perf_counter() - started,
        harness=harness,
        reference=measured.reference,
    )
    if measured.traced is not None:
        fields.update(traces=measured.traced.files, trace_detail=measured.traced.detail, warnings=measured.traced.warnings)
    elif options.trace_dir:
        fields.update(trace_detail=NOT_TRACED_ACROSS_PROCESSES)
    if measured.warnings:  # the NVML guard's throttled rounds
        fields.update(warnings=(*fields.get("warnings", ()), *measured.warnings))
    resized = thread_pools.set_by_step(backend.name, recorded, set_up or recorded, sampled or set_up or recorded)
    if resized:  # the step ran in a pool other than the one the run's environment records
        fields.update(warnings=(*fields.get("warnings", ()), *resized))
    if options.bound:
        fields.update(bound=measured.bound)
    if options.syncs:
        fields.update(syncs=measured.syncs or census.unmeasured(list(measured.samples), NO_CENSUS_ACROSS_PROCESSES))
    if measured.problem:
        return _row(case, ERROR, f"verification failed: {measured.problem}", **fields)
    return _row(case, OK, **fields)


def run_case_in_worker(
    case: Case | ImportFrameworks,
    workload: Workload | None = None,
    options: CaseOptions = NOTHING_ASKED,
    on_progress: Callable[[Progress], None] | None = None,
) -> Result | None:
    """run_case as a worker process calls it, with the case and what the run asks of it (`options`): the backend is
    looked up there (backends hold modules, not picklable), and so is a user's workload (None here): it is imported
    again from its file or module.
    An ImportFrameworks call (a worker's first, while the parent plans: case_workers) answers None."""
    if isinstance(case, ImportFrameworks):
        return case()
    if workload is None:
        try:
            workload = plugins.find(case.workload)
        except InputError as exc:  # the user's file changed or vanished since the run started
            return _row(case, ERROR, f"cannot load the workload in the worker: {exc}")
    return run_case(case, workload, get_backend(case.backend), options, on_progress)


def _run_isolated(
    worker: isolation.Worker, case: Case, options: CaseOptions, workload: Workload, on_progress: Callable[[Progress], None] | None
) -> Result:
    sent = None if plugins.is_reference(case.workload) else workload  # a user's class may not be importable by name there
    try:
        result = worker.call((case, sent, options), case.settings.timeout_s, on_progress)
    except isolation.WorkerLost as lost:
        progress = lost.last_progress
        if progress is None:
            return _row(case, ERROR, f"{lost} (setting up or in its first samples)")
        return _kept_rounds(case, workload, f"{lost} (measuring, at least {progress.rounds} round(s) done)", progress)
    if result.status == ERROR:
        worker.close()  # the error may have left the process unusable (a poisoned CUDA context): the next case gets a fresh one
    elif _traced_here(result):
        # a profiler stays attached after its block (Kineto leaves CUPTI on: pytorch#144455, 10-20% slower later
        # kernels; jax.profiler keeps its tracer), so the next case is measured in a fresh process
        worker.close()
    return result


def _traced_here(result: Result) -> bool:
    """Whether the case was traced in the process that ran it, whatever became of its files: a profiler attached
    there stays attached when every file failed to write (a full disk), as when they were written."""
    return result.trace_detail is not None and result.trace_detail != NOT_TRACED_ACROSS_PROCESSES


def _kept_rounds(case: Case, workload: Workload, reason: str, progress: Progress) -> Result:
    """An error row for a case whose worker was lost while measuring, with the rounds it had reported: its
    clocks and figures with their intervals, marked cut short. (The worker reports at most every
    isolation.PROGRESS_INTERVAL_S, so rounds of the last 0.1 s before a hang may be missing; slow rounds,
    where timeouts happen, are each reported.) No memory run: the case never got there."""
    if not progress.samples or progress.rounds < 1:
        return _row(case, ERROR, reason)
    variants = summarize(progress.samples)
    metrics, bounds = rounds.figures(workload, case.params, variants, progress.asynchronous)
    sampling = Sampling(
        rounds=progress.rounds,
        elapsed_s=progress.elapsed_s,
        stopped_by=StopReason.TIMEOUT,
        rel_noise=progress.rel_noise if progress.rel_noise != float("inf") else None,
        max_rel_noise=case.settings.max_rel_noise,
        max_time_s=case.settings.max_time_s,
    )
    kept = f"; the {progress.rounds} round(s) it reported are kept"
    return _row(
        case, ERROR, reason + kept, variants=variants, metrics=metrics, bounds=bounds, sampling=sampling, asynchronous=progress.asynchronous
    )


def start_workers(config: Config, isolate: bool) -> CaseWorkers:
    """The workers of `config`'s cases, started now, importing their frameworks (case_workers), for `run`: what the
    caller does before it (capturing the environment imports torch in this process too: 1.5 s) overlaps their start."""
    workers = CaseWorkers(run_case_in_worker, isolate)
    workers.start(
        (name, get_backend(name), spec.startswith("cuda")) for e in config.experiments for name in e.backends for spec in e.devices
    )
    return workers


@dataclass(frozen=True)
class RunOptions:
    """What a run asks of all its cases, beside the config: each in a worker process (`isolate`); each variant traced
    into `trace_dir` after it is measured (--trace); the census of where its steps waited (`syncs`, --syncs:
    Result.syncs, measure.census; a case with a census check takes it without); what bounds each step (`bound`,
    --bound: Result.bound, measure.perturbation); one false-alarm rate shared by every `expect:` check of the run
    (`family_error`, results.budget)."""

    isolate: bool = False
    trace_dir: str | None = None
    syncs: bool = False
    bound: bool = False
    #: with `bound`, the step captured and timed against the ceiling (--bound-verify jit|compile|graph)
    bound_verify: str | None = None
    family_error: float = budget.FAMILY_ERROR

    def for_case(self, case: Case, verdicts: int) -> CaseOptions:
        """What the run asks of `case`, one of cases with `verdicts` checks in all: its checks' share of the run's
        false-alarm rate, over the looks its settings allow (none for a case without checks)."""
        shared = budget.Budget(self.family_error, verdicts, case.settings.min_samples, case.settings.max_samples) if case.expect else None
        # a check on what bounds the step takes the perturbation rounds it is judged from, --bound or not;
        # --bound-verify implies --bound
        bound = self.bound or self.bound_verify is not None or bound_checks.asks_bound(case.expect)
        # a check on where the step waits takes the census rounds it is judged from, --syncs or not (its table shown
        # as --syncs shows it: the check names the points it sums, the table shows them among the rest)
        syncs = self.syncs or checks.asks_census(case.expect)
        return CaseOptions(
            trace_dir=self.trace_dir,
            syncs=syncs,
            bound=bound,
            bound_verify=self.bound_verify,
            # a threshold check on the slack is judged at its own level: injected in every perturbation round
            bound_levels=bound_levels.injections(case.expect),
            budget=shared,
        )


def run(
    config: Config,
    options: RunOptions = RunOptions(),
    *,
    on_start: Callable[[int, int, Case], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    workers: CaseWorkers | None = None,
    workloads: Mapping[str, Workload] | None = None,
) -> list[Result]:
    """Run every case of `config` in order, as `options` say; return (and stream through on_result) the results.

    `workers`: from `start_workers(config, options.isolate)`, when the caller started them earlier; `run` closes
    them. `workloads`: the workload objects the caller holds, by key (expansion.workloads_of: the others are built in
    or loaded by reference)."""
    backends = {name: get_backend(name) for e in config.experiments for name in e.backends}
    harness_cost.forget()  # the harness's cost is measured once per backend and device in each run (workers start empty)
    results = []
    try:
        found = expansion.workloads_of(config, workloads)
        if workers is None:
            workers = start_workers(config, options.isolate)  # importing their frameworks while this process plans
        planned = list(expansion.expand(config, backends, found))
        verdicts = sum(len(case.expect) for case, _ in planned)
        cases = [(case, options.for_case(case, verdicts), skip) for case, skip in planned]
        synchronizing = facts.synchronizing_variables()
        pools = thread_pools.Pools.of_run((case.experiment, case.backend, case.device) for case, _, skip in cases if not skip)
        for index, (case, asked, skip) in enumerate(cases):
            if on_start is not None:
                on_start(index, len(cases), case)
            workload = found[case.workload]
            try:  # a case on a GPU gets it from the process of the run that held it (case_workers)
                worker = (
                    None if skip else workers.for_case(backends[case.backend], case, workload.across_processes, case.settings.timeout_s)
                )
            except GpuTaken as taken:
                skip, worker = str(taken), None
            if skip:
                result = _row(case, SKIPPED, skip, unavailable=True)
            elif worker is None:
                result = run_case(case, workload, backends[case.backend], asked, on_progress)
                if _traced_here(result) and uses_gpu(case):
                    result = dataclasses.replace(result, warnings=(*result.warnings, IN_PROCESS_TRACE))
            elif isinstance(workload, StepWorkload) and (reason := workload.skip_reason(backends[case.backend], case.device, case.params)):
                # a step's skip is read from its code, so it is decided here: a worker in another environment
                # (MXNet's) may not even import a torch step's file, and an import error there is no reason to skip
                result = _row(case, SKIPPED, reason)
            else:
                result = _run_isolated(worker, case, asked, workload, on_progress)
            result = thread_pools.noted(workload.describe(result), pools)  # a CPU row beside other backends': their pools
            result = dataclasses.replace(result, warnings=(*result.warnings, *sanity.warnings_of(result, workload, synchronizing, pools)))
            if case.expect:
                per_round = rounds.per_round(workload, case.params, result.variants) if result.status == OK else {}
                result = dataclasses.replace(result, checks=checks.evaluate(case.expect, result, asked.budget, per_round))
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        if workers is not None:
            workers.close()
    return results
