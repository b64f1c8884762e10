"""An experiment's checks (`expect:`): each parsed (spec.expect) and held to the variants its cases have; and, as
`asyncbench validate` reads a config, refused where a run could only call it not measured: a check on what bounds
the step (`bound == device`, `slack_s[host] >= 1ms`, ...) of a case `--bound` cannot perturb — a workload with no
step (a built-in experiment, a Workload class), or a backend that runs synchronously on its device (the host is the
device). A run finds that out only after it measured; `validate` says it up front, in one line a check."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from asyncbench.backends import BACKENDS
from asyncbench.results.model import Expectation
from asyncbench.results.plan import Experiment
from asyncbench.spec import expect
from asyncbench.spec.document import Document
from asyncbench.spec.schema import type_name
from asyncbench.verdicts import bound_checks
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_form import StepWorkload

# One step a sample: each perturbation's delay shows in full whatever bounds the step, so --bound takes no rounds
# and every bound check of such a case ends "not measured" (docs/guides/bound.md, verdicts.bound).
ONE_STEP = 1
#: why a check cannot be measured in a run of this experiment (None: it can)
Why = Callable[[Expectation], str | None]


def bound_checks_of(workload: Workload, backends: Sequence[str], devices: Sequence[str], steps: Sequence[Any] = ()) -> Why:
    """Why each check of an experiment on `workload`, `backends` and `devices` would not be measured: None for any
    check but one on what bounds the step, and for those where every case can be perturbed. `steps`: the values
    its cases' `steps` take (params, sweep, params_for): a case of one step a sample takes no perturbation rounds."""
    if not isinstance(workload, StepWorkload):
        kind = "a built-in experiment" if BUILT_IN.get(workload.name) is workload else "not a step-form workload"
        said = (
            f"{workload.name} is {kind}: it has no step to perturb (a run would say 'not measured'); --bound measures "
            "step-form workloads (@asyncbench.step: -w FILE.py:Name, module:attr)"
        )
    else:
        # the first case whose backend runs synchronously on its device
        case = next((f"{b} on {d}" for b in backends for d in devices if BACKENDS[b].synchronous_on(d)), None)
        if case is not None:
            said = (
                f"{case} runs synchronously (the host is the device): a run would say 'not measured'; --bound tells host "
                "from device on a backend that runs ahead (jax, torch on cuda)"
            )
        elif ONE_STEP in steps:
            said = (
                f"a case of it runs steps={ONE_STEP}: with one step a sample every delay shows in full, so nothing can be "
                "told (a run would say 'not measured'); give it steps 2 or more"
            )
        else:
            return lambda check: None

    def why(check: Expectation) -> str | None:
        if not bound_checks.is_bound_check(check):
            return None
        return f"{check.text!r} is a check on what bounds the step, and {said}"

    return why


def of_experiment(
    doc: Document,
    workload: Workload,
    raw: Any,
    path: tuple,
    variants: list[str] | None,
    unmeasured: Why | None = None,
) -> tuple[Expectation, ...]:
    """The checks; one naming a variant the experiment's cases do not have (`variants`: None, not known before a
    run) is a mistake that lists those it has; so is one `unmeasured` says a run could not measure (validate)."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        doc.add(f"expected a list of checks like 'speedup >= 1.5', got {type_name(raw)}", path)
        return ()
    expectations = []
    for index, item in enumerate(items):
        try:
            parsed = expect.parse(item, workload)
        except ValueError as exc:
            doc.add(str(exc), path + (index,))
            continue
        why = unmeasured(parsed) if unmeasured is not None else None
        if why is not None:
            doc.add(why, path + (index,))
            continue
        if variants is not None and parsed.variant is not None and parsed.variant not in variants:
            doc.add(
                f"{workload.name} has no variant {parsed.variant!r} in this experiment; its variants: {', '.join(variants)}",
                path + (index,),
            )
            continue
        lacked = _lacked(workload, parsed, variants)
        if lacked is not None:
            doc.add(lacked, path + (index,))
            continue
        expectations.append(parsed)
    return tuple(expectations)


def _lacked(workload: Workload, check: Expectation, variants: list[str] | None) -> str | None:
    """Why a check on a metric computed from variants the experiment's cases do not have (slowdown_k1 of a step whose
    sync_every is [0]) could only be called not measured, naming what is missing; None where nothing is (or the
    variants are not known before a run)."""
    if variants is None:
        return None
    missing = [name for name in workload.variants_needed(check.quantity) if name not in variants]
    if not missing:
        return None
    param = missing[0].partition("=")[0]
    values = [name.partition("=")[2] for name in variants if name.partition("=")[0] == param]
    needed = " and ".join(name.partition("=")[2] for name in missing)
    return (
        f"{check.text!r}: {check.quantity} needs {param} {needed}, which this experiment's {param} "
        f"[{', '.join(values)}] lacks (a run would say '{check.quantity} was not measured')"
    )


def verify_refused(experiments: Sequence[Experiment], how: str) -> str | None:
    """Why `--bound-verify HOW` (or `bound_verify:`) cannot run on these experiments, in one line, known from each
    case's backend and device as written (Backend.capture_refused, no framework imported); None where every case of
    a step may be captured that way. A built-in experiment has no step to capture (its row says so) and is not
    asked. A run found this out only after it measured (`graph` on JAX: 68 s, then 'not timed'); a run's
    preflight and `validate` refuse it before anything runs."""
    for experiment in experiments:
        if experiment.workload in BUILT_IN:
            continue
        for backend in experiment.backends:
            for device in experiment.devices:
                if backend not in BACKENDS or not BACKENDS[backend].runs_on(device):
                    continue
                why = BACKENDS[backend].capture_refused(how, device)
                if why is not None:
                    return f"{why} ({experiment.name}: {backend} on {device}); nothing was measured"
    return None
