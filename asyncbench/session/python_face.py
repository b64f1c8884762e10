"""asyncbench from Python: `load` a results or `ab` file, `run` a workload or a step function (a notebook, a script).

    import asyncbench
    report = asyncbench.load("results.json")        # the typed Report (or ABReport), a table in Jupyter
    report = asyncbench.run(my_step, backend="numpy", max_time_s=2)

`load` reads with the readers `show` uses, as strictly (every file is possibly
hostile): a bad file is one InputError line naming the file and the key. The
objects are the results types themselves (results.schema.Report,
results.ab_report.ABReport), as report.notebook's subclasses that render a
table in a notebook (`_repr_html_`).

Where `run`'s cases run. A workload named by a string (a built-in such as
`matmul`, `file.py:name`, `module:name`) runs as `asyncbench run -w` runs it:
each case in a worker process, which imports it again (a hang ends at
`timeout_s`, a crash costs one row, and the run's own process, with
whatever the notebook holds, is not measured beside it). A function object
runs in this process: a function made in a notebook or a test cannot be
imported again by a worker, and pickling a closure over the caller's arrays
would copy them (and fail for a device's). Its numbers are this process's:
what it has imported and the threads it runs share the machine with the
step, as they would in the caller's own loop; a backend whose cases need
a Python of their own (MXNet's environment) is refused there (`run_plan`).
A script that runs a workload by name calls `run` under
`if __name__ == "__main__":`: the workers are spawned, and spawning imports
the script's main module again (a notebook has none to import).
"""

from __future__ import annotations

import gc
import inspect
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from asyncbench.errors import InputError

if TYPE_CHECKING:
    from asyncbench.report.notebook import NotebookABReport, NotebookReport
    from asyncbench.results.model import Expectation, Result, Settings
    from asyncbench.results.plan import Config, Experiment
    from asyncbench.workloads.base import Workload

#: the config source a run from Python is stored under (a results file's `config.source`)
SOURCE = "<python>"


def load(path: str | Path) -> NotebookReport | NotebookABReport:
    """A results file (`run -o`) or an `ab` file (`ab -o`), whichever it is, read strictly; InputError (one line,
    naming the file) for anything unusable. A results file whose run has not ended is read from its journal, and a
    warning says so."""
    from asyncbench.report import notebook
    from asyncbench.results.ab_report import ABReport
    from asyncbench.session import reading

    loaded = reading.load_any(path, lambda line: warnings.warn(line, stacklevel=3))
    return notebook.ab_report(loaded) if isinstance(loaded, ABReport) else notebook.report(loaded)


def run(
    workload: str | Workload | Callable[..., Any],
    *,
    backend: str | Sequence[str] | None = None,
    device: str | Sequence[str] = "auto",
    params: Mapping[str, Any] | None = None,
    max_time_s: float | None = None,
    expect: Sequence[str] = (),
    in_process: bool | None = None,
) -> NotebookReport:
    """Run a workload from Python and return its report, as `asyncbench run -w NAME -b BACKEND -o FILE` writes it.

    `workload`: a built-in's name, `file.py:name` (relative to the working directory) or `module:name`, a Workload,
    or a step function (`(backend, device, params) -> the callable that issues one step`: docs, your own code).
    `backend` (None: every backend the workload's code is for) and `device` (auto: each one present) as -b and -d;
    `params` as --set; `max_time_s` (None: the workload's settings, 10 s) how long each case samples; `expect` checks
    in a config's syntax. `in_process` (None: a name runs in worker processes, an object here; see the module's
    docstring). InputError (one line) for anything wrong, before anything runs; a case that fails is an error row."""
    from asyncbench.engine import environment
    from asyncbench.report import notebook
    from asyncbench.results.schema import Report

    key, found = workload_named(workload)
    here = not isinstance(workload, str) if in_process is None else in_process
    if not here and not isinstance(workload, str):
        raise InputError(
            "a workload object runs in this process (in_process=True): a worker process imports a workload again by its "
            "name, so name it ('file.py:name' or 'module:name') to run it there"
        )
    backends = (backend,) if isinstance(backend, str) else tuple(backend or backends_of(found))
    devices = (device,) if isinstance(device, str) else tuple(device)
    the_plan = plan(found, experiment(key, found, backends, devices, params or {}, settings(max_time_s), expect))
    results = run_plan(the_plan, {key: found}, here)
    return notebook.report(Report.new(the_plan.to_dict(), environment.capture(backends), tuple(results)))


def workload_named(workload: str | Workload | Callable[..., Any]) -> tuple[str, Workload]:
    """The registry key and workload of what `run` was given: a name (resolved as -w resolves it), a Workload, or a
    step function (taken as `@asyncbench.step` takes it). A function's key is `module:qualname`, a reference to where
    it was defined: an error in it is said with its place in that file, as for a workload named by its file."""
    from asyncbench.spec import named_workloads
    from asyncbench.workloads import plugins
    from asyncbench.workloads.base import Workload

    if isinstance(workload, str):
        key = named_workloads.workload_keys([workload])[0]
        return key, plugins.find(key)
    if isinstance(workload, Workload):
        function = getattr(workload, "function", None)
        return reference_of(function if function is not None else type(workload), workload.name), workload
    if inspect.isfunction(workload):
        found = plugins.as_workload(workload, f"{SOURCE}:{workload.__name__}")  # InputError: not a step function
        return reference_of(workload, found.name), found
    raise InputError(
        f"{type(workload).__name__} is not a workload: give a workload's name, a Workload, or a step function "
        "(backend, device, params) -> the callable that issues one step"
    )


def reference_of(defined: Any, name: str) -> str:
    """`module:qualname` of a function or class, as a workload reference names one (`__main__:` in a notebook)."""
    module = getattr(defined, "__module__", None) or SOURCE
    return f"{module}:{getattr(defined, '__qualname__', name)}"


def backends_of(workload: Workload) -> tuple[str, ...]:
    """The backends `run -w NAME` without -b runs a workload on: a step's those its code is for, else every one."""
    from asyncbench.backends import BACKENDS
    from asyncbench.workloads.step_form import StepWorkload

    return workload.backends_for(tuple(BACKENDS)) if isinstance(workload, StepWorkload) else tuple(BACKENDS)


def settings(max_time_s: float | None) -> Settings:
    """The measurement settings of a run from Python: the defaults, `max_time_s` checked as a config's would be."""
    import dataclasses

    from asyncbench.results.model import Settings
    from asyncbench.spec.schema import coerce_setting, settings_problem

    chosen = Settings()
    if max_time_s is not None:
        try:
            chosen = dataclasses.replace(chosen, max_time_s=coerce_setting("max_time_s", max_time_s))
        except ValueError as exc:
            raise InputError(f"max_time_s={max_time_s!r}: {exc}") from None
    problem = settings_problem(chosen)
    if problem:
        raise InputError(problem)
    return chosen


def plan(workload: Workload, one: Experiment) -> Config:
    """The plan of one experiment (`experiment`) of `workload`, named after it."""
    from asyncbench.results.plan import Config

    return Config(name=workload.name, source=SOURCE, experiments=(one,))


def experiment(
    key: str,
    workload: Workload,
    backends: Sequence[str],
    devices: Sequence[str],
    params: Mapping[str, Any],
    chosen: Settings,
    expect: Sequence[str | Expectation] = (),
) -> Experiment:
    """One experiment of `workload` (registered as `key`), every value checked as a config's is; InputError (one
    line) naming what is wrong."""
    from asyncbench.backends import BACKENDS
    from asyncbench.results.model import Expectation
    from asyncbench.results.plan import Experiment
    from asyncbench.spec import expect as checks
    from asyncbench.spec.checks import bound_checks_of
    from asyncbench.spec.schema import backend_name, coerce_param, device_spec

    for option, values, check in (("backend", backends, backend_name), ("device", devices, device_spec)):
        if not values:
            raise InputError(f"no {option} named")
        for value in values:
            try:
                check(value)
            except ValueError as exc:
                raise InputError(f"{option}={value!r}: {exc}") from None
    if not any(BACKENDS[b].runs_on(d) for b in backends for d in devices):
        kinds = "; ".join(f"{b} runs on {' and '.join(BACKENDS[b].device_kinds)} only" for b in dict.fromkeys(backends))
        raise InputError(f"nothing to run: {kinds}, and the device is {' or '.join(devices)}")
    resolved = workload.defaults()
    for name, value in params.items():
        if name not in resolved:
            raise InputError(f"{workload.name} has no parameter {name!r}; its parameters: {', '.join(resolved) or 'none'}")
        try:
            resolved[name] = coerce_param(workload.param(name), value)
        except ValueError as exc:
            raise InputError(f"params {name}={value!r}: {exc}") from None
    problem = workload.params_problem(resolved)  # the step form's sync_every above steps, as a config's is refused
    if problem:
        raise InputError(f"params: {problem}")
    parsed = []
    for text in expect:
        try:
            parsed.append(text if isinstance(text, Expectation) else checks.parse(text, workload))
        except ValueError as exc:
            raise InputError(f"expect: {exc}") from None
    # a check on what bounds the step that no case here can perturb (a synchronous backend, one step a sample, no step
    # form) is refused before anything is measured, in validate's words (spec.checks): a test measured the whole case,
    # then failed NOT MEASURED ("synchronous: the host is the device") on `bound == device` of a numpy step
    unmeasured = bound_checks_of(workload, backends, devices, [resolved.get("steps")])
    for asked in parsed:
        why = unmeasured(asked)
        if why is not None:
            raise InputError(f"expect: {why}")
    return Experiment(
        name=workload.name,
        workload=key,
        backends=tuple(dict.fromkeys(backends)),
        devices=tuple(dict.fromkeys(devices)),
        params=resolved,
        settings=chosen,
        explicit=frozenset(params),
        expect=tuple(parsed),
    )


def run_plan(the_plan: Config, workloads: Mapping[str, Workload], in_process: bool) -> list[Result]:
    """Run a plan's cases with the engine: in worker processes, or each in this process (`in_process`). This
    process is left as it was found: the engine freezes what survives each case out of the collector's reach
    (engine.memory: a worker's next case then scans only its own objects), which here would keep the caller's
    later garbage for good, so what it froze is unfrozen again."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner

    if not in_process:
        return runner.run(the_plan, runner.RunOptions(isolate=True), workloads=workloads)
    for name in {name for e in the_plan.experiments for name in e.backends}:
        python = get_backend(name).interpreter()
        if python is not None:
            raise InputError(f"{name} runs in its own Python here ({python}), not in this process: run it with `asyncbench run -b {name}`")
    frozen = gc.get_freeze_count()
    try:
        return runner.run(the_plan, workloads=workloads, workers=_this_process())
    finally:
        if not frozen:
            gc.unfreeze()


def _this_process() -> Any:
    """The engine's case workers with every case in this process, whatever start-up variables its backend's workers
    take (JAX's, MXNet's): the process's own settings are the ones its code runs under."""
    from asyncbench.engine import runner
    from asyncbench.engine.case_workers import CaseWorkers

    class ThisProcess(CaseWorkers):
        def key(self, backend: Any, gpu: bool = False) -> None:
            return None

    return ThisProcess(runner.run_case_in_worker, isolate=False)
