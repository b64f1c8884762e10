"""A prepared case measured in this process: the procedure it is sampled by, then its memory runs, check and trace.

The procedure (measure.procedure) is made here once per case, from what the case, the run's options for it
(CaseOptions) and its process hold: the settings with rounds enough for its checks, the budget's looks, the census
rounds of `run --syncs` with as many as its census checks need, the perturbation rounds of `run --bound` and the
verification rounds of `--bound-verify` (its step captured by Backend.capture_step first) (measure.extra_rounds),
the NVML guard's reading before each sample, and the machine's reference between the rounds. After sampling, one
memory run per variant (engine.memory), the workload's verification, with --bound each variant's perturbation samples
fitted (verdicts.bound.fit) into Measured.bound (with --bound-verify, its verification pairs into Bound.verified:
verdicts.verified), and with --trace each variant's timeline (engine.trace), with --bound its perturbed calls too.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from asyncbench.backends import Backend
from asyncbench.backends.handles import DeviceTimer
from asyncbench.engine import memory, trace
from asyncbench.host import nvml
from asyncbench.measure import census, perturbation, reference, verification
from asyncbench.measure.extra_rounds import ExtraRounds, Schedule
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import WARMUP_MIN_S, measure
from asyncbench.results import budget
from asyncbench.results.bound import Bound, Injection, Perturbed, shares_host_cores
from asyncbench.results.budget import Budget
from asyncbench.results.model import Case, Progress, Samples
from asyncbench.verdicts import bound as bounds
from asyncbench.verdicts import bound_checks, checks, verified
from asyncbench.workloads.base import Measured, Prepared, Workload

#: measure()'s `decided`: whether the samples so far decide every check of the case (engine.runner makes it)
Decided = Callable[[Mapping[str, Samples]], bool]


@dataclass(frozen=True)
class CaseOptions:
    """What the run asks of one case as it is measured (engine.runner.RunOptions, made for the case): each variant
    traced into `trace_dir` after sampling (--trace; None: no tracing); the census of where its steps waited taken
    in rounds of its own (`syncs`, --syncs: Result.syncs); what bounds its step, by perturbation rounds of its own
    (`bound`, --bound: Result.bound); the share of the run's false-alarm rate its checks are
    judged at (`budget`, results.budget; None: no checks). Sent beside the case to the worker that measures it:
    plain data, as the case is."""

    trace_dir: str | None = None
    syncs: bool = False
    bound: bool = False
    #: with `bound`, the step captured and timed against the ceiling (`--bound-verify jit|compile|graph`: Bound.verified)
    bound_verify: str | None = None
    #: with `bound`, the levels the case's threshold checks on the slack are judged at (verdicts.bound_checks.
    #: injections), each injected in every perturbation round beside the sweep's
    bound_levels: tuple[Injection, ...] = ()
    budget: Budget | None = None


#: said in the note of a case run with --bound whose workload has no step to perturb (a built-in experiment)
NOT_PERTURBABLE = "--bound measures step-form workloads (@asyncbench.step, -w file.py:Name): no bound for this one"
#: a sample of one step ends with the harness's wait right after it: every delay injected before it shows in full,
#: whatever bounds the step, so perturbation rounds would cost time and tell nothing (verdicts.bound.fit)
ONE_STEP = "--bound needs several steps a sample (steps >= 2): with one, every delay shows in full, slack or not"


#: a case measured with nothing asked of it beside its settings: no trace, no census, no budget (sampling neither
#: lengthened nor stopped for its checks): what runner.run_case does for a caller outside a run (tests, benchmarks)
NOTHING_ASKED = CaseOptions()


def measure_here(
    case: Case,
    options: CaseOptions,
    workload: Workload,
    backend: Backend,
    prepared: Prepared,
    asynchronous: bool,
    on_progress: Callable[[Progress], None] | None,
    decided: Decided | None,
) -> Measured:
    """Time a prepared case in this process, then one memory run per variant, verify, and trace (--trace)."""

    def make_timer() -> DeviceTimer | None:
        return backend.timer(case.device) if prepared.device_timed else None

    def progressed(progress: Progress) -> None:  # with what the parent needs to keep the rounds of a case cut short
        assert on_progress is not None
        on_progress(dataclasses.replace(progress, asynchronous=asynchronous))

    variants = list(prepared.variants)
    settings = checks.enough_rounds(case.settings, case.expect, options.budget, variants)  # no check left without rounds
    # the budget's looks, and a first one where the checks' intervals begin (it replaces the looks before it: within budget)
    looks = (*budget.schedule(case.settings.min_samples, case.settings.max_samples), settings.min_samples) if decided is not None else ()
    taker = census.taker_for(backend, case.device, asynchronous) if options.syncs else None  # --syncs: census rounds too
    # as many census rounds by the end as its census checks need for their intervals
    census_schedule = census.SCHEDULE.at_least(checks.census_rounds_needed(case.expect, options.budget, variants))
    # as many perturbation rounds by the end as its bound checks need for their intervals
    perturbation_schedule = perturbation.SCHEDULE.at_least(bound_checks.bound_rounds_needed(case.expect, options.budget, variants))
    per_call = workload.steps_per_call(case.params)
    perturbing, no_delay = perturbation_rounds(options, backend, case, prepared, asynchronous, per_call, perturbation_schedule)
    verifier, refused = _verification(options, backend, case, prepared, per_call)
    try:
        extra_rounds = ExtraRounds(
            (((taker, census_schedule),) if taker is not None else ())
            + (((perturbing, perturbing),) if perturbing is not None else ())  # it paces itself: its stop rule
            + (((verifier, perturbation.SCHEDULE),) if verifier is not None else ())
        )
        # NVML (GPU cases where nvidia-ml-py sees the GPU): its state around sampling, and the rounds taken while it throttled
        guard = nvml.guard(case.device, settings.warmup * len(variants), len(variants))
        machine = reference.settled(backend, case.device, settings)  # a calm CPU first, then the machine between the rounds
        procedure = Procedure(
            settings,
            decided=decided,
            looks=looks,
            preludes=prepared.preludes,
            extra_rounds=extra_rounds,
            between_rounds=machine.between_rounds if machine is not None else None,
            before_sample=guard.before_sample if guard is not None else None,
            warmup_min_s=WARMUP_MIN_S,
            result_wait=backend.result_wait(case.device),
        )
        # no one listening (in-process, no display): measure() then builds no progress, nor its snapshot of the samples
        samples, sampling = measure(
            prepared.variants, prepared.sync, make_timer, procedure, progressed if on_progress is not None else None
        )
    finally:
        # the captured step's life ends (Verifier.finish): why its rounds are refused, if so; its warnings' catch ended
        # even where sampling raised
        ended = verifier.finish() if verifier is not None else None
    guarded = guard.finish() if guard is not None else None
    taken = machine.finish() if machine is not None else None
    del machine, procedure  # the reference's matrix is not held through the memory runs
    syncs = census.of_case(taker, variants, backend.name, case.device, per_call) if options.syncs else {}
    memories = {name: memory.measure_run(backend, case.device, run, prepared.sync) for name, run in prepared.variants.items()}
    problem = prepared.verify() if prepared.verify is not None else None
    found, unbound = fitted_bounds(
        options, prepared, variants, perturbing, asynchronous, no_delay, per_call, shares_cores=shares_host_cores(case.device)
    )
    if options.bound_verify is not None:
        pairs = verifier.pairs() if verifier is not None else {}
        how = options.bound_verify
        # without a verifier, why the step was not captured; with one, what its capture said of it (a caveat)
        why, caveat = (refused, None) if verifier is None else (None, refused)
        if ended is not None:  # timed, but not as what it is labelled (torch.compile past its recompile limit)
            why, caveat = ended, None
        timed = {name: statistics.median(s.done_s) / per_call for name, s in samples.items() if s.done_s}
        found = {
            name: dataclasses.replace(
                b, verified=verified.verified(how, pairs.get(name, ()), b, why, timed_step_s=timed.get(name), caveat=caveat)
            )
            for name, b in found.items()
        }
    # with --bound, each variant's perturbed calls are traced too, their delay a share of the step its levels were of
    perturbed = (
        trace.Perturbing(prepared.perturbable, perturbing.delay, dict(perturbing.scale_s))
        if perturbing is not None and prepared.perturbable is not None
        else None
    )
    traced = (
        trace.record(
            backend, case.device, case.id, prepared.variants, prepared.sync, options.trace_dir, prepared.preludes, perturbed, samples
        )
        if options.trace_dir
        else None
    )
    return Measured(
        samples,
        memories,
        sampling,
        verifies=prepared.verify is not None,
        problem=problem,
        note="; ".join(filter(None, (prepared.note, guarded.note() if guarded else None, unbound))) or None,
        traced=traced,
        syncs=syncs,
        bound=found,
        warnings=tuple(filter(None, (guarded.warning() if guarded else None,))),
        reference=taken,
    )


def perturbation_rounds(
    options: CaseOptions,
    backend: Backend,
    case: Case,
    prepared: Prepared,
    asynchronous: bool,
    per_call: int,
    schedule: Schedule,
    held_to_cost: bool = True,
) -> tuple[perturbation.Taker | None, str | None]:
    """The perturbation rounds of a case run with --bound, and why it has no device side (None: it has one). None:
    no rounds — not asked, no step to perturb, or a synchronous backend (the host is the device: rounds would cost
    time and tell nothing). `ab --bound`'s sides take theirs with it too (engine.side_process). `held_to_cost`: past
    its first rounds the Taker stops at COST_SHARE × the rest of the case's time (False: at its budget alone)."""
    if not options.bound or prepared.perturbable is None or not asynchronous:
        return None, None
    if per_call < 2:
        return None, ONE_STEP
    delay, why = backend.device_delay(case.device)
    budget_s = perturbation.BOUND_TIME_FACTOR * case.settings.max_time_s
    taker = perturbation.Taker(
        prepared.perturbable,
        delay,
        per_call,
        budget_s=budget_s,
        schedule=schedule,
        spread=_spread(per_call),
        injections=options.bound_levels,  # each threshold check's own level, in every round
        cost_share=perturbation.COST_SHARE if held_to_cost else None,
    )
    return taker, why


def _spread(per_call: int) -> perturbation.Spread:
    """The perturbation rounds' look (measure.perturbation may not import the fit): each variant's observations
    fitted as the bound will be; the widest slack interval's half-width over the step, and each side's slack."""

    def look(observed: Mapping[str, Sequence[Perturbed]]) -> perturbation.Look:
        fitted = [bounds.fit(name, found, True, steps_per_call=per_call) for name, found in observed.items()]
        return perturbation.Look(
            widest=max((bounds.widest_slack_share(bound) for bound in fitted), default=float("inf")),
            slack_s={(bound.variant, side.side): side.slack_s for bound in fitted for side in bound.sides},
        )

    return look


def _verification(
    options: CaseOptions, backend: Backend, case: Case, prepared: Prepared, per_call: int
) -> tuple[verification.Verifier | None, str | None]:
    """The verification rounds of a case run with --bound-verify, or None with why the step was not captured (the
    backend's capture_step refused it, or capturing raised), or the rounds with what the capture said of the step it
    captured (torch.compile's graph breaks), or None. None, None: not asked, or no step to capture."""
    how = options.bound_verify
    if not options.bound or how is None or prepared.step is None or prepared.stepped is None:
        return None, None
    try:
        captured, why = backend.capture_step(prepared.step, case.device, how)
    except Exception as error:  # noqa: BLE001 - the step's own failure shows in its timed rounds; here it only stops the capture
        return (
            None,
            f"--bound-verify {how}: capturing the step raised {type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:160]}",
        )
    if captured is None:
        return None, why
    return verification.Verifier(prepared.stepped, captured, per_call), why


def fitted_bounds(
    options: CaseOptions,
    prepared: Prepared,
    variants: list[str],
    taker: perturbation.Taker | None,
    asynchronous: bool,
    no_delay: str | None,
    per_call: int,
    shares_cores: bool = False,
) -> tuple[dict[str, Bound], str | None]:
    """Each variant's bound (verdicts.bound.fit of its perturbation samples), and what the case's note says of
    --bound (a workload without a step to perturb). `shares_cores`: the case's device is the host's CPU (its
    backend's threads share the host's cores: verdicts.bound.fit reads no slack on either side as inconclusive)."""
    if not options.bound:
        return {}, None
    if prepared.perturbable is None:
        return {}, NOT_PERTURBABLE
    observed = taker.observations() if taker is not None else {}
    scales = taker.scale_s if taker is not None else {}
    fitted = {}
    for name in variants:
        bound = bounds.fit(
            name,
            observed.get(name, ()),
            asynchronous,
            note=no_delay,
            steps_per_call=per_call,
            scale_s=scales.get(name),
            shares_cores=shares_cores,
        )
        # what the rounds' stop left open, said of this variant's own final intervals (a look's widest, over every
        # variant and rounds before, read ±104% beside a table whose widest was ±18%)
        cut = taker.cut_short(bounds.widest_slack_share(bound)) if taker is not None else None
        unread = taker.unread_said(name) if taker is not None else None
        said = [part for part in (cut, unread) if part]
        fitted[name] = dataclasses.replace(bound, note="; ".join(filter(None, (*said, bound.note)))) if said else bound
    return fitted, None
