"""The short form of a workload: one function that issues one step of the user's own work.

    @asyncbench.step
    def train_step(backend, device, params):
        x = backend.random((2048, 2048), "float32", device)()
        return lambda: x @ x

The function sets up (outside any timing) and returns a callable that issues
one step without waiting. It becomes a workload whose variants run `steps`
steps with a device-wide wait every k of them, one per `sync_every` value —
0 (only the harness's sync at the end), every few steps, and every step: the
barrier experiment on the user's code. Its metrics: the time per step for
each k, each k's slowdown against never waiting, and the illusion of the
unsynchronized variant (done / issue: how much a timer without a sync
under-reports the step).

Where it runs: `@asyncbench.step(backends=("torch",))` names the backends
the step's code is written for, and a case on any other is skipped with the
reason. Undeclared, the step runs on the backends whose framework its code
names, and on each when it names none (it works through `backend`, numpy
at most converting the backend's arrays); a framework it holds but does not
name is refused at set-up (step_reach). A row is never labelled with a
backend the step's code does not touch, and `run -w` without -b plans it
only where its code runs (backends_for): a skipped row is for a backend
someone asked for.

What it prints while measured (warm-up, timed and census rounds): the first
lines shown, the rest written to a sink, so that each print still runs and
is timed (step_output).

What a gate judges (`gated`): one question per case, the step's time — the
unsynchronized variant — unless the user set `sync_every` themselves.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, overload

from asyncbench.backends import BACKENDS
from asyncbench.backends.base import Backend
from asyncbench.results.model import Clocks
from asyncbench.results.step_figures import (
    ILLUSION,
    SLOWDOWN_METRIC,
    variant_name,
)  # the step form's names, spelled where a file's are checked
from asyncbench.workloads import step_output, step_reach
from asyncbench.workloads.base import INT, INTS, Param, Prepared
from asyncbench.workloads.step_reading import StepForm

#: the waits the short form compares by default: never (only at the end), every 4th step, every step
DEFAULT_SYNC_EVERY = (0, 4, 1)
DEFAULT_STEPS = 20

StepFunction = Callable[[Backend, str, Mapping[str, Any]], Callable[[], Any]]


def _declared(backends: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """The backends a step declares, checked against the registry; ValueError (said where the file is imported)
    for an unknown name or none at all."""
    if backends is None:
        return None
    names = (backends,) if isinstance(backends, str) else tuple(backends)
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        given = f"unknown backend {unknown[0]!r}" if unknown else "no backend named"
        raise ValueError(f"@asyncbench.step(backends=...): {given}; the backends are {', '.join(BACKENDS)}")
    return tuple(dict.fromkeys(names))


def _declaration(names: frozenset[str] | tuple[str, ...]) -> str:
    """How the step would declare these backends: `@asyncbench.step(backends=("torch",))`."""
    listed = ", ".join(f'"{name}"' for name in sorted(names))
    return f"@asyncbench.step(backends=({listed},))" if len(names) == 1 else f"@asyncbench.step(backends=({listed}))"


def _beyond(steps: int, sync_every: Sequence[int]) -> str | None:
    """Why `sync_every` has a wait that never comes in a sample of `steps` steps (one every k > steps), with the fix;
    None where each comes."""
    beyond = [every for every in sync_every if every > steps]
    if not beyond:
        return None
    kept = [every for every in sync_every if every <= steps]
    fix = f"sync_every=[{','.join(map(str, kept))}]" if kept else f"sync_every=[0,{steps}]"
    return (
        f"sync_every {beyond[0]} is above steps {steps}: a wait every {beyond[0]} steps never comes in a sample of "
        f"{steps}, so that variant would be sync_every=0 under another name; set {fix}, or steps={max(beyond)}"
    )


class StepWorkload(StepForm):
    """A workload made from a step function (see the module docstring); its metrics and reading are the step
    form's (step_reading.StepForm), which a reader rebuilds a stored step result's reading with."""

    def __init__(
        self,
        function: StepFunction,
        *,
        name: str | None = None,
        params: Sequence[Param] = (),
        sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
        steps: int = DEFAULT_STEPS,
        summary: str | None = None,
        backends: str | Sequence[str] | None = None,
    ):
        self.function = function
        #: the backends the step's code is written for (None: undeclared, found from its code: step_reach)
        self.backends = _declared(backends)
        self._reach: step_reach.Reach | None = None
        self.name = name or function.__name__
        doc = (function.__doc__ or "").strip().splitlines()
        self.summary = summary or (doc[0] if doc else f"your step {self.name}, with a wait every k steps")
        if sync_every is DEFAULT_SYNC_EVERY:  # not the step's choice: a wait every k steps of a sample of fewer never comes
            sync_every = tuple(every for every in sync_every if every <= steps)
        elif beyond := _beyond(steps, sync_every):
            raise ValueError(f"@asyncbench.step(...): {beyond}")
        self.params = (
            Param("steps", INT, steps, "steps per sample", quick=max(1, min(steps, 5)), minimum=1, maximum=10_000_000),
            Param(
                "sync_every",
                INTS,
                list(sync_every),
                "wait for the device every k steps; 0 = only at the end",
                minimum=0,
                maximum=10_000_000,
            ),
            *params,
        )

    def reach(self) -> step_reach.Reach:
        """What the step's code reaches (step_reach.reach), read once."""
        if self._reach is None:
            self._reach = step_reach.reach(self.function)
        return self._reach

    def named_backends(self) -> frozenset[str]:
        """The backends the step's code is for (step_reach.Reach.backends); empty: each."""
        return self.reach().backends

    def not_for(self, backend: str) -> str | None:
        """Why the step's code is not for this backend (its declaration, the frameworks it names, numpy misreading
        the backend's arrays), or None: the part of skip_reason that needs neither a device nor params."""
        if backend in (self.backends or ()):
            return None
        if self.backends is not None:
            return f"{self.name} declares {_declaration(self.backends)}: not run on {backend}"
        named = self.named_backends()
        if named and backend not in named:
            frameworks = " and ".join(sorted(named))
            return (
                f"{self.name}'s code names {frameworks}, not {backend}: not run on {backend}, whose row would "
                f"time {frameworks} code (a step that does run there says so: {_declaration(named | {backend})})"
            )
        if backend in step_reach.NUMPY_MISREADS and self.reach().converts_with_numpy:
            return (
                f"{self.name} converts with numpy, which misreads {backend}'s arrays (no __array__: element by element "
                f"into an object array): not run on {backend}; backend.to_host(x) converts on every backend, and a step "
                f"that does run there says so: {_declaration(frozenset(BACKENDS))}"
            )
        return None

    def backends_for(self, names: Sequence[str]) -> tuple[str, ...]:
        """Those of `names` the step's code is for (not_for): where `run -w` without -b plans it, so that a step
        has no skipped row on a backend nobody asked for; a backend named with -b keeps its row and its reason."""
        return tuple(name for name in names if self.not_for(name) is None)

    def params_problem(self, params: Mapping[str, Any]) -> str | None:
        """A wait every k steps with k above `steps` never comes in a sample: that variant would be sync_every=0 under
        another name (a slowdown_kK of 1 that no wait made), so it is refused with the fix."""
        return _beyond(params["steps"], params["sync_every"])

    def quick_params(self, params: Mapping[str, Any], sweep: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
        """--quick's few steps, never fewer than the largest wait asked for (capped at the experiment's own steps): a
        wait every 8 steps still comes under --quick."""
        quick = super().quick_params(params, sweep)
        waits = [every for values in (params["sync_every"], *sweep.get("sync_every", ())) for every in values]
        quick["steps"] = max(quick["steps"], min(params["steps"], max(waits, default=0)))
        return quick

    def steps_per_call(self, params: Mapping[str, Any]) -> int:
        """A sample runs `steps` of the user's steps: the census counts per step of theirs, not per sample."""
        return int(params["steps"])

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        """Besides the dtype: a backend the step's code is not for (not_for) — its row would time other code under
        this label."""
        return super().skip_reason(backend, device, params) or self.not_for(backend.name)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        run_step = self.function(backend, device, params)
        if not callable(run_step):
            raise TypeError(f"{self.name} must return the callable that issues one step, not {type(run_step).__name__}")
        held = step_reach.held(run_step) if self.backends is None else frozenset()
        if held and backend.name not in held:
            raise TypeError(
                f"{self.name}'s step holds {' and '.join(sorted(held))} objects and none of {backend.name}'s, so its "
                f"time is not {backend.name}'s: declare the backends it runs on, e.g. {_declaration(held)}"
            )
        steps, barrier = params["steps"], backend.barrier
        backend.barrier(device)

        def variant(every: int, run_step: Callable[[], Any] = run_step) -> Callable[[], Any]:
            # a wait after each k steps, none after the remainder (the harness's sync ends the sample), in loops that
            # run nothing per step but the user's call: a check of the step's index there cost 17 ns a step, 2-3%
            # of a 0.65 µs numpy op (benchmarks/fidelity_backends.py). A step's result is dropped as it returns, as
            # timeit's and pyperf's loops drop it, only the last of each run of steps held (returned: the harness
            # holds it through its sync): holding each until the next step returned kept two outputs alive, a
            # working set past a core's cache for a 512² product. `run_step`: the user's, or its capture (`run --bound-verify`)
            waits, rest = divmod(steps, every) if every else (0, steps)

            def run() -> Any:
                result = None
                for _ in range(waits):
                    result = None
                    for _ in range(every - 1):
                        run_step()
                    result = run_step()
                    barrier(device)
                if rest:
                    result = None
                    for _ in range(rest - 1):
                        run_step()
                    result = run_step()
                return result

            return run

        def perturbed(every: int, before_step: Callable[[], None]) -> Callable[[], Any]:
            # the variant's loops with `before_step` before each of the user's calls (`run --bound`'s delays): a loop
            # of its own, so that the timed variants above run nothing more per step
            waits, rest = divmod(steps, every) if every else (0, steps)

            def run() -> Any:
                result = None
                for _ in range(waits):
                    result = None
                    for _ in range(every - 1):
                        before_step()
                        run_step()
                    before_step()
                    result = run_step()
                    barrier(device)
                if rest:
                    result = None
                    for _ in range(rest - 1):
                        before_step()
                        run_step()
                    before_step()
                    result = run_step()
                return result

            return run

        def perturbable(before_step: Callable[[], None]) -> dict[str, Callable[[], Any]]:
            return {variant_name(k): perturbed(k, before_step) for k in params["sync_every"]}

        def stepped(captured: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
            return {variant_name(k): variant(k, captured) for k in params["sync_every"]}

        output = step_output.install(self.name)  # its prints while measured: a few shown, the rest to a sink
        return Prepared(
            variants={variant_name(k): variant(k) for k in params["sync_every"]},
            sync=lambda: barrier(device),
            close=output.close,
            perturbable=perturbable,
            step=run_step,
            stepped=stepped,
        )

    def variants_needed(self, name: str) -> tuple[str, ...]:
        """A slowdown is also of the variant that never waits (slowdown_k4: sync_every=0 and sync_every=4), as the
        illusion is of it alone (round_metrics)."""
        if name == ILLUSION:
            return (variant_name(0),)
        own = super().variants_needed(name)
        return (variant_name(0), *own) if name.startswith(SLOWDOWN_METRIC) and own else own

    def gated(self, params: Mapping[str, Any], names: Sequence[str]) -> tuple[str, ...]:
        """One question per case: the step's time, its unsynchronized variant (`sync_every=0`), the one a user
        means by "did my step get slower"; the waits every k steps are the barrier experiment, shown but not
        gated. Every variant asked for is gated when the user chose `sync_every` themselves (a config's params,
        --set): the params alone tell that only as a value other than the step's default (`@step(sync_every=...)`
        or DEFAULT_SYNC_EVERY), so the default given explicitly still gates one variant. Without a 0 among the
        values, all are gated: there is no unsynchronized one to stand for the step."""
        names = super().gated(params, names)
        unsynchronized = variant_name(0)
        chosen = list(params.get("sync_every", ())) != list(self.param("sync_every").default)
        return names if chosen or unsynchronized not in names else (unsynchronized,)

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        metrics: dict[str, float | None] = {}
        never = clocks.get(variant_name(0))
        for every in params["sync_every"]:
            if variant_name(every) not in clocks:
                continue  # not measured (`ab` samples only the variants it gates)
            done = clocks[variant_name(every)].done_s
            metrics[f"step_s_k{every}"] = done / params["steps"]
            if never is not None and every != 0:
                metrics[f"slowdown_k{every}"] = done / never.done_s if never.done_s > 0 else None
        if never is not None:
            metrics["illusion"] = never.done_s / never.issue_s if never.issue_s > 0 else None
        return metrics


#: what `@step` accepts, as a user's type checker sees it: any function (its parameters may be annotated as the user
#: likes, e.g. `params: dict[str, int]`, which a Mapping-typed signature would refuse under mypy --strict)
UserStepFunction = Callable[..., Any]


@overload
def step(
    function: UserStepFunction,
    *,
    name: str | None = None,
    params: Sequence[Param] = (),
    sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
    steps: int = DEFAULT_STEPS,
    summary: str | None = None,
    backends: str | Sequence[str] | None = None,
) -> StepWorkload: ...


@overload
def step(
    function: None = None,
    *,
    name: str | None = None,
    params: Sequence[Param] = (),
    sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
    steps: int = DEFAULT_STEPS,
    summary: str | None = None,
    backends: str | Sequence[str] | None = None,
) -> Callable[[UserStepFunction], StepWorkload]: ...


def step(
    function: UserStepFunction | None = None,
    *,
    name: str | None = None,
    params: Sequence[Param] = (),
    sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
    steps: int = DEFAULT_STEPS,
    summary: str | None = None,
    backends: str | Sequence[str] | None = None,
) -> StepWorkload | Callable[[UserStepFunction], StepWorkload]:
    """Turn a step function into a workload: `@step` or `@step(sync_every=(0, 1), params=(Param(...),))`.
    `backends=("torch",)`: the backends the step's code is written for; elsewhere its cases are skipped, with the
    reason. Undeclared, they are found from its code (see the module's docstring). Typed (two overloads), so that a
    user's `mypy --strict` sees a StepWorkload, not an untyped decorator."""

    def wrap(f: UserStepFunction) -> StepWorkload:
        return StepWorkload(f, name=name, params=params, sync_every=sync_every, steps=steps, summary=summary, backends=backends)

    return wrap(function) if function is not None else wrap
