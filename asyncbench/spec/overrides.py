"""The command line's say over a config: -w, -b, -d, --set and --quick.

`run` loads a config (or the built-in suite), then applies these: keep the
named workloads, replace backends and devices, set params or settings (a
comma list sweeps a param), and shrink sizes and sampling for a smoke test.
Every value is checked as a config's would be, and each mistake is one
line (exit 2) naming the option.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Collection, Mapping, Sequence

import yaml

from asyncbench.backends import BACKENDS
from asyncbench.errors import InputError, suggestion
from asyncbench.results.model import Settings
from asyncbench.results.plan import ExecutorSettings, Experiment
from asyncbench.spec import executor, key_value, schema
from asyncbench.spec.config import Config
from asyncbench.spec.document import ConfigLoader
from asyncbench.workloads import plugins
from asyncbench.workloads.base import INTS, SHAPE, Param, Workload

#: the scope of --set keys that are the executor's (executor.partition=gpu), not an experiment's
EXECUTOR_SCOPE = "executor"


def _executor(
    config: Config, parsed_sets: Sequence[tuple[str, str | None, str, list[Any]]], options: Mapping[str, Any]
) -> ExecutorSettings:
    settings = config.executor
    for text, scope, name, values in parsed_sets:
        if scope != EXECUTOR_SCOPE:
            continue
        try:
            if len(values) > 1:
                raise ValueError("an executor setting takes one value")
            settings = executor.apply(settings, name, values[0])
        except ValueError as exc:
            raise InputError(f"--set {text!r}: {exc}") from None
    for key, value in options.items():
        # each --sbatch on its own, so that the error names the one the user typed (--sbatch qos, not a mapping)
        given = [({k: v}, f"{k}={v}" if v is not True else k) for k, v in value.items()] if key == "sbatch" else [(value, value)]
        for one, typed in given:
            try:
                settings = executor.apply(settings, key, one)
            except ValueError as exc:
                raise InputError(f"{executor.option(key)} {typed!r}: {exc}") from None
    return settings


def _params_for(experiment: Experiment, workload: Workload, quick: bool, overridden: set[str]) -> dict[str, dict[str, Any]]:
    """The config's `params_for:` less what the command line decided for every backend: a param set or swept
    by --set, and under --quick each param that has a quick value (quick sizes fit every backend), unless the
    backend's own value is below it (--quick never raises a size the config set)."""
    if not quick:
        return {
            key: {name: value for name, value in params.items() if name not in overridden} for key, params in experiment.params_for.items()
        }
    quick_values = {p.name: p.quick for p in workload.params if p.quick is not None}
    return {
        key: {
            name: value
            for name, value in params.items()
            if name not in overridden and (name not in quick_values or _below(value, quick_values[name]))
        }
        for key, params in experiment.params_for.items()
    }


def _not_raising(quick: Mapping[str, Any], params: Mapping[str, Any], explicit: Collection[str]) -> dict[str, Any]:
    """The quick values (`quick`) that --quick sets: each but where the config set the param (`explicit`) to less
    than its quick value. --quick makes a run smaller, never larger: a config's `n_ops: 100` ran at the quick 1000."""
    return {name: value for name, value in quick.items() if not (name in explicit and _below(params.get(name), value))}


def _below(value: Any, quick: Any) -> bool:
    """Whether a config's `value` is a number below the param's `quick` one (kept under --quick: quick never raises)."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, quick))
    return numbers and value < quick


def parse_set(text: str) -> tuple[str | None, str, list[Any]]:
    """'sync_async.n_ops=100,1000' -> ('sync_async', 'n_ops', [100, 1000]).

    The values are read (safely) as the items of a YAML flow list, so commas
    separate sweep values while brackets keep a list value whole:
    shape=[64,64],[128,128] is two values.
    """
    key, value = key_value.split(text, "--set", "n_ops=100 or sync_async.n_ops=10,100", expected="KEY=VALUE or KEY=V1,V2,...")
    raw_value = value or ""  # never None: without `bare`, a KEY without =VALUE is refused
    scope, _, name = key.rpartition(".")
    if not raw_value.strip():
        raise InputError(f"--set {text!r}: no value after '='")
    try:
        values = yaml.load(f"[{raw_value}]", Loader=ConfigLoader)  # noqa: S506 - a safe loader (spec.document)
    except yaml.YAMLError:
        values = [raw_value]
    except (ValueError, RecursionError) as exc:  # an integer over Python's 4300 digits; brackets nested past its stack
        said = "nested too deeply" if isinstance(exc, RecursionError) else "an integer too long to read"
        raise InputError(f"--set {key}: {said}") from None
    if not isinstance(values, list) or not values:
        values = [raw_value]
    return scope or None, name, values


def _setting(name: str, values: list[Any]) -> Any:
    """A measurement setting's one value as --set gives it, read as a config's would be (ValueError: wrong in
    itself, whatever config or experiment it is set on)."""
    if len(values) > 1:
        raise ValueError("a measurement setting takes one value; only params can be swept")
    return schema.coerce_setting(name, values[0])


class NothingToRun(InputError):
    """No backend of an experiment runs on any of its devices, after -b/-d: `ab` tells by its type whether both
    sides refuse the command line's choice (session.paired), which is then said without a side."""


def check_sets(sets: Sequence[str]) -> None:
    """Refuse (InputError, naming the --set) what is wrong in each --set whatever config it meets: one that is no
    KEY=VALUE, and a measurement setting's value (ab_margin=5, min_samples=many, max_time_s=1,2). `ab` calls it
    before either side is planned: --set sets both sides, so such a fault is the command line's, and naming one
    side's revision as its source misled (a param's value stays each side's to judge: a side's workload may lack
    the param, or take it in another form)."""
    for text in sets:
        scope, name, values = parse_set(text)
        if scope == EXECUTOR_SCOPE or name not in schema.SETTING_FIELDS:
            continue
        try:
            _setting(name, values)
        except ValueError as exc:
            raise InputError(f"--set {text!r}: {exc}") from None


def _quick_settings(settings: Settings) -> Settings:
    return dataclasses.replace(
        settings,
        warmup=min(settings.warmup, schema.QUICK_SETTINGS.warmup),
        min_samples=min(settings.min_samples, schema.QUICK_SETTINGS.min_samples),
        max_samples=min(settings.max_samples, schema.QUICK_SETTINGS.max_samples),
        max_time_s=min(settings.max_time_s, schema.QUICK_SETTINGS.max_time_s),
        max_rel_noise=max(settings.max_rel_noise, schema.QUICK_SETTINGS.max_rel_noise),
    )


def _say_list_form(param: Param, value: Any) -> None:
    """A list param (sync_every) given one plain number: ValueError saying the list form, and what commas do."""
    if param.kind == INTS and isinstance(value, int) and not isinstance(value, bool):
        raise ValueError(
            f"{param.name} is a list: write {param.name}=[{value}] for one case ({param.name}=[0,1] for several values "
            f"in it; {param.name}=0,1 sweeps [0] and [1])"
        )


def apply_overrides(
    config: Config,
    *,
    workloads: Sequence[str] = (),
    backends: Sequence[str] = (),
    devices: Sequence[str] = (),
    sets: Sequence[str] = (),
    quick: bool = False,
    executor_options: Mapping[str, Any] | None = None,
) -> Config:
    """The command line's say over a config: keep the workloads with these registry keys (-w, resolved once by
    `named_workloads.workload_keys`), replace backends/devices, --set params or settings, and --quick (small sizes, few
    samples; --set still wins); then the executor's settings: --set executor.KEY=VALUE, then `executor_options`
    (--executor, --partition...: key -> value as in a config's `executor:`)."""
    for option, values, check in (("-b", backends, schema.backend_name), ("-d", devices, schema.device_spec)):
        for value in values:
            try:
                check(value)
            except ValueError as exc:
                raise InputError(f"{option} {value!r}: {exc}") from None
    parsed_sets = [(text, *parse_set(text)) for text in sets]
    used = [scope == EXECUTOR_SCOPE for _, scope, _, _ in parsed_sets]
    config = dataclasses.replace(config, executor=_executor(config, parsed_sets, executor_options or {}))

    experiments = []
    for experiment in config.experiments:
        if workloads and experiment.workload not in workloads:
            continue
        workload = plugins.find(experiment.workload)
        params = dict(experiment.params)
        sweep = dict(experiment.sweep)
        settings = _quick_settings(experiment.settings) if quick else experiment.settings
        explicit = set(experiment.explicit)
        commanded: set[str] = set()  # params --set decided for every backend
        for index, (text, scope, name, values) in enumerate(parsed_sets):
            if scope not in (None, experiment.name, experiment.workload) or scope == EXECUTOR_SCOPE:
                continue
            try:
                if name in schema.SETTING_FIELDS:
                    settings = dataclasses.replace(settings, **{name: _setting(name, values)})
                elif name in params and len(values) > 1:
                    if workload.param(name).kind == SHAPE and not any(isinstance(v, list) for v in values):
                        joined = ",".join(map(str, values))
                        raise ValueError(
                            f"commas separate sweep values; for one shape write {name}=[{joined}] "
                            f"(and {name}=[64,64],[128,128] to sweep shapes)"
                        )
                    sweep[name] = schema.sweep_values(workload.param(name), values)
                    schema.check_sweep_size(sweep)
                    commanded.add(name)
                elif name in params:
                    _say_list_form(workload.param(name), values[0])
                    params[name] = schema.coerce_param(workload.param(name), values[0])
                    sweep.pop(name, None)
                    explicit.add(name)
                    commanded.add(name)
                else:
                    continue
            except ValueError as exc:
                raise InputError(f"--set {text!r}: {exc}") from None
            used[index] = True
        if quick:  # after --set, so that its values are what quick's follow (a step's steps cover a wait --set asked for)
            quick_values = _not_raising(workload.quick_params(params, sweep), params, experiment.explicit)
            params.update({name: value for name, value in quick_values.items() if name not in commanded})
        params_for = _params_for(experiment, workload, quick, commanded)
        problem = schema.settings_problem(settings) or schema.points_problem(workload, params, sweep, params_for)
        if problem:
            raise InputError(f"{problem}, after --set/--quick")
        experiments.append(
            dataclasses.replace(
                experiment,
                backends=tuple(backends) or experiment.backends,
                devices=tuple(devices) or experiment.devices,
                params=params,
                settings=settings,
                explicit=frozenset(explicit),
                sweep=sweep,
                params_for=params_for,
            )
        )
    if not experiments:
        raise InputError(f"no experiment in {config.source} uses workload {', '.join(workloads)}")
    for experiment in experiments:
        if not any(BACKENDS[b].runs_on(d) for b in experiment.backends for d in experiment.devices):
            kinds = "; ".join(f"{b} runs on {' and '.join(BACKENDS[b].device_kinds)} only" for b in experiment.backends)
            raise NothingToRun(
                f"nothing to run in experiment {experiment.name!r}: {kinds}, and the devices are {', '.join(experiment.devices)}"
            )
    known = sorted({*schema.SETTING_FIELDS, *(k for e in experiments for k in e.params)})
    for (text, _, name, _), was_used in zip(parsed_sets, used, strict=True):
        if not was_used:
            raise InputError(f"--set {text!r}: no selected experiment has that parameter or setting{suggestion(name, known)}")
    return dataclasses.replace(config, experiments=tuple(experiments))


def with_rounds(config: Config, rounds: int) -> Config:
    """Every experiment taking at least `rounds` rounds (its min_samples raised, up to max_samples: a hard cap),
    past max_time_s (--quick's too) if it must: what a comparison with a baseline needs for each row to have an
    interval (verdicts.compare.samples_needed)."""
    experiments = []
    for experiment in config.experiments:
        settings = experiment.settings
        floor = min(rounds, settings.max_samples)
        if settings.min_samples < floor:
            settings = dataclasses.replace(settings, min_samples=floor)
        experiments.append(dataclasses.replace(experiment, settings=settings))
    return dataclasses.replace(config, experiments=tuple(experiments))
