"""A step measured for a test (the pytest plugin's `asyncbench(fn)`): its clocks per step, its checks judged per step.

    def test_matmul(asyncbench):
        result = asyncbench(my_step, backend="numpy", expect=["done_s < 1ms"])
        assert result.done_s.median < 1e-3

`fn` is a step function, `(backend, device, params) -> the callable that
issues one step` (the step form, workloads.step_form; `@asyncbench.step`
ones too), or a callable of no arguments that is the step itself (its
arrays made by the test, on the backend named). It is measured as `run`
measures a step — issue, done and device clocks of samples of `steps`
steps (20) with one sync at the end of each, adaptive stopping within
`max_time_s`, 95% intervals — but only its unsynchronized variant
(`sync_every=[0]`: the step's time; the waits every k steps are the
barrier experiment, which a test rarely asks: `params={"sync_every": [0, 1]}`
measures it).

Per step: a test asks what one call of its step costs, so the clocks handed
back are a sample's divided by the steps it ran (every statistic of a
sample, its median and interval too, scales with it), and a clock check
(`done_s < 1ms`) is judged per step as well: sampling stops on the check
as `run` does (the threshold times the steps, per sample: the same
verdict), then the verdict is taken again from the per-step clocks, so that
its words say the per-step figures it was judged by. The result the run
made (`Measurement.result`) keeps its clocks per sample, as a results file
holds them; its checks are these per-step ones, each saying so.

It runs in this process (python_face: a test's function, its closures and
arrays, cannot go to a worker); a workload named by a string runs in a
worker as `run` runs it.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from asyncbench.errors import InputError
from asyncbench.results import spreads
from asyncbench.results.model import CLOCKS, Check, Result, Stats, Status

if TYPE_CHECKING:
    from asyncbench.results.bound import Bound
    from asyncbench.results.model import Expectation, VariantResult
    from asyncbench.workloads.base import Workload

#: the variant a test's step is measured in, and whose clocks it gets: no wait but the sample's own (step_form)
STEP_VARIANT = "sync_every=0"
#: what a clock check's per-step words start with (its value and interval are a sample's divided by its steps)
PER_STEP = "per step"


class NotMeasured(Exception):
    """The step's case did not run: skipped (its backend or device is not here, its code is for another backend) or
    errored (its set-up or step raised: the reason has its place in the user's file). `result` is its row."""

    def __init__(self, result: Result):
        self.result = result
        self.skipped = result.status == Status.SKIPPED
        super().__init__(f"{result.id}: {result.status}: {result.reason or 'no reason given'}")


@dataclass(frozen=True)
class Measurement:
    """A step measured: each variant's clocks per step of the user's (a sample's, divided by `steps`), with their
    95% intervals (results.model.Stats: median, ci_low, ci_high, iqr, min, max, n), and the checks judged on them."""

    #: the case as the run made it: clocks per sample of `steps` steps, the workload's metrics (step_s_k0: per step;
    #: illusion: done / issue) with their intervals, its reading and warnings; its checks are `checks`
    result: Result
    steps: int
    #: each variant's clocks per step (samples and Stats divided by `steps`); memory as measured, for one sample
    variants: Mapping[str, VariantResult]
    checks: tuple[Check, ...] = ()

    @property
    def variant(self) -> str:
        """The variant `issue_s`, `done_s` and `device_s` are of: the unsynchronized one where measured, else the first."""
        return STEP_VARIANT if STEP_VARIANT in self.variants else next(iter(self.variants))

    @property
    def issue_s(self) -> Stats:
        """Host time until one step's call returned, without waiting for the device."""
        return self.variants[self.variant].issue_s

    @property
    def done_s(self) -> Stats:
        """Host time until one step's work was done (the sample's sync included, shared by its steps)."""
        return self.variants[self.variant].done_s

    @property
    def device_s(self) -> Stats | None:
        """The device's own time for one step (None where the backend has no device timer: numpy, a CPU)."""
        return self.variants[self.variant].device_s

    @property
    def bound(self) -> Bound | None:
        """What bounds the step of `variant` (results.bound.Bound: its reading `.bound`, each side's slack in
        `.sides`, the `.ceiling`), measured where a check on it (`bound == device`, `slack_s[host] >= 1ms`) asked
        for perturbation rounds; None where none did. The same as `result.bound[variant]`."""
        return self.result.bound.get(self.variant)

    @property
    def metrics(self) -> Mapping[str, float | None]:
        return self.result.metrics

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.result.warnings

    def failing(self, allow_inconclusive: bool = False) -> tuple[Check, ...]:
        """The checks that fail a test, as they fail a gate (verdicts.checks.failed): FAIL and NOT MEASURED, and
        INCONCLUSIVE unless allowed."""
        from asyncbench.verdicts import checks

        return tuple(check for check in self.checks if checks.failed(check, allow_inconclusive))

    def __str__(self) -> str:
        """'my_step[numpy,cpu] per step: done 5.68 µs ±1%, issue 5.61 µs ±1% (108 samples of 20 steps, sync_every=0)'."""

        def shown(stats: Stats) -> str:
            return spreads.spread(stats.median, stats.ci_low, stats.ci_high)

        device = f", device {shown(self.device_s)}" if self.device_s else ""
        each = f"{self.done_s.n} samples of {self.steps} steps" if self.steps > 1 else f"{self.done_s.n} samples"
        per = " per step" if self.steps > 1 else ""
        return f"{self.result.id}{per}: done {shown(self.done_s)}, issue {shown(self.issue_s)}{device} ({each}, {self.variant})"


def _takes(function: Callable[..., Any], count: int) -> bool:
    try:
        inspect.signature(function).bind(*([None] * count))
    except (TypeError, ValueError):
        return False
    return True


def step_workload(fn: Any, backend: str | None) -> tuple[str, Workload]:
    """The registry key and workload of what a test gave: a workload's name, a Workload (`@asyncbench.step`'s), a
    step function (its step's time only: STEP_VARIANT), or a callable of no arguments, the step itself, declared
    for the backend named (numpy if none): its arrays are the test's, and only the test knows which framework made
    them."""
    from asyncbench.session import python_face
    from asyncbench.workloads.base import Workload
    from asyncbench.workloads.step_form import StepWorkload

    if isinstance(fn, (str, Workload)):
        return python_face.workload_named(fn)
    if inspect.isfunction(fn) and _takes(fn, 3):
        return python_face.reference_of(fn, fn.__name__), StepWorkload(fn, sync_every=(0,))
    if callable(fn) and _takes(fn, 0):
        name = getattr(fn, "__name__", "") or "step"
        workload = StepWorkload(
            lambda backend, device, params: fn,
            name="step" if name == "<lambda>" else name,
            backends=(backend or _held_backend(fn),),
            sync_every=(0,),
        )
        return python_face.reference_of(fn, workload.name), workload
    raise InputError(
        f"{fn!r} is not a step: give a step function (backend, device, params) -> the callable that issues one step, "
        "or a callable of no arguments that is the step itself"
    )


def _held_backend(fn: Any) -> str:
    """The backend of the arrays a step of no arguments holds (its closure, defaults, bound instance: a test's
    `lambda: f(a)`), numpy where it holds none. Arrays of two frameworks: the test must say which it measures (before,
    JAX arrays were timed as numpy, whose clocks hid their asynchrony: issue = done)."""
    from asyncbench.workloads import step_reach

    held = sorted(step_reach.held(fn))
    if len(held) > 1:
        raise InputError(f"the step holds {' and '.join(held)} arrays: say which backend it measures, e.g. backend={held[0]!r}")
    return held[0] if held else "numpy"


def _backend_for(workload: Workload, backend: str | None) -> str:
    """The backend named, else the one the step's code is for (numpy where its code is for each, or several)."""
    from asyncbench.session import python_face

    if backend is not None:
        return backend
    candidates = python_face.backends_of(workload)
    return "numpy" if "numpy" in candidates or not candidates else candidates[0]


def _device_for(backend: str, device: str | None) -> str:
    """The device named, else the backend's first GPU here, else its CPU ('auto' where it has none: the row says why)."""
    from asyncbench.backends import BACKENDS, get_backend

    if device is not None:
        return device
    present, reason = get_backend(backend).resolve("auto") if backend in BACKENDS else ([], "unknown")
    if reason or not present:
        return "auto"
    return next((name for name in present if name.startswith("cuda")), present[0])


def per_step(variant: VariantResult, steps: int) -> VariantResult:
    """A variant's clocks per step: each sample's divided by the steps it ran, summarized again (every statistic,
    the interval of the median too, scales with them)."""
    from asyncbench.engine import runner
    from asyncbench.results.model import Samples

    samples = variant.samples

    def each(values: tuple[float, ...] | None) -> tuple[float, ...] | None:
        return tuple(value / steps for value in values) if values is not None else None

    scaled = Samples(issue_s=each(samples.issue_s) or (), done_s=each(samples.done_s) or (), device_s=each(samples.device_s))
    return runner.summarize({"v": scaled}, {"v": variant.memory})["v"]


def _per_sample(expectation: Expectation, steps: int) -> Expectation:
    """A per-step clock check as a sample's (its threshold times the steps): what sampling stops on."""
    if expectation.quantity not in CLOCKS:
        return expectation
    return dataclasses.replace(expectation, threshold=expectation.threshold * steps)


def measure(
    fn: Any,
    *,
    backend: str | None = None,
    device: str | None = None,
    params: Mapping[str, Any] | None = None,
    max_time_s: float | None = None,
    expect: Sequence[str] = (),
) -> Measurement:
    """Measure a test's step (the module's docstring); InputError (one line) for anything wrong with the call,
    NotMeasured when its case was skipped or errored."""
    from asyncbench.engine import rounds
    from asyncbench.results import budget
    from asyncbench.results.plan import Config
    from asyncbench.session import python_face
    from asyncbench.verdicts import checks
    from asyncbench.workloads.step_form import StepWorkload

    key, workload = step_workload(fn, backend)
    chosen = _backend_for(workload, backend)
    if isinstance(workload, StepWorkload) and workload.param("sync_every").default != [0]:
        params = {"sync_every": [0], **(params or {})}  # the step's time only, unless the test asks for the waits
    settings = python_face.settings(max_time_s)
    asked = python_face.experiment(key, workload, [chosen], [_device_for(chosen, device)], params or {}, settings, expect)
    steps = workload.steps_per_call(asked.params)
    sampled = dataclasses.replace(asked, expect=tuple(_per_sample(e, steps) for e in asked.expect))
    the_plan = Config(name=workload.name, source=python_face.SOURCE, experiments=(sampled,))
    results = python_face.run_plan(the_plan, {key: workload}, in_process=not isinstance(fn, str))
    result = results[0]
    if result.status != Status.OK:
        raise NotMeasured(result)
    variants = {name: per_step(variant, steps) for name, variant in result.variants.items()}
    judged: tuple[Check, ...] = ()
    if asked.expect:  # judged again on the per-step clocks, at the run's own level (runner.run's budget)
        shared = budget.Budget(budget.FAMILY_ERROR, len(asked.expect), settings.min_samples, settings.max_samples)
        per_round = rounds.per_round(workload, result.params, result.variants)
        judged = checks.evaluate(asked.expect, dataclasses.replace(result, variants=variants), shared, per_round)
        judged = tuple(
            dataclasses.replace(check, detail=f"{PER_STEP} ({steps} steps a sample): {check.detail}")
            if e.quantity in CLOCKS and steps > 1
            else check
            for check, e in zip(judged, asked.expect, strict=True)
        )
        result = dataclasses.replace(result, checks=judged)
    return Measurement(result=result, steps=steps, variants=variants, checks=judged)


def verdict_line(check: Check) -> str:
    """'FAIL done_s < 1ns: per step (20 steps a sample): done_s.median[...] = ...': one check, as a test says it."""
    return f"{str(check.verdict).upper()} {check.expect}: {check.detail}"
