"""The only config reader: a file becomes a validated, frozen `Config`.

The YAML is read by `document` (values that remember their lines, so every
error names the file, the line and the key path); the checks here suggest a
close match for a misspelling. Every mistake of a file is said at once, in
line order (`ConfigErrors`, one line each): each check keeps its mistake and
the checks go on with what can still be read, so a config with three
mistakes needs one `validate`, not three. A mistake that leaves nothing to
read beyond it stops there alone: YAML that does not parse, a config that is
not a mapping, a results file.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from asyncbench import inputs
from asyncbench.errors import closest, suggestion
from asyncbench.results import fields, schema
from asyncbench.results.bound import VERIFY_HOWS
from asyncbench.results.model import Settings
from asyncbench.results.plan import Config, ExecutorSettings, Experiment
from asyncbench.spec import checks, executor, suites
from asyncbench.spec.document import ConfigError, ConfigErrors, Document  # noqa: F401 - ConfigErrors: callers catch config.ConfigError(s)
from asyncbench.spec.schema import (
    SETTING_FIELDS,
    YOUR_OWN,
    backend_name,
    builtin_names,
    check_sweep_size,
    coerce_param,
    coerce_setting,
    device_spec,
    points_problem,
    settings_problems,
    sweep_values,
    type_name,
    workload_of,
)
from asyncbench.workloads.base import INTS, Param, Workload

TOP_KEYS = ("name", "defaults", "experiments", "executor", "bound", "bound_verify")
DEFAULTS_KEYS = ("backends", "devices", *SETTING_FIELDS)
#: the kinds of device a `params_for:` key may name
DEVICE_KINDS = ("cpu", "cuda")
EXPERIMENT_KEYS = ("name", "workload", "params", "params_for", "sweep", "expect", *DEFAULTS_KEYS)

#: a declared variant family whose K is a list param's values: "sync_every=K (one per sync_every value)"
VARIANT_FAMILY = re.compile(r"(?P<param>[A-Za-z_]\w*)=K")

DEFAULT_BACKENDS = ("torch",)
DEFAULT_DEVICES = ("auto",)


def _check_keys(doc: Document, mapping: Any, allowed: Sequence[str], path: tuple, what: str) -> dict[str, Any]:
    """`mapping`'s known keys; each unknown one is a mistake of its own (kept), the others are still read.
    ConfigError if it is no mapping: nothing under it can be read."""
    if not isinstance(mapping, dict):
        raise doc.error(f"{what} must be a mapping, got {type_name(mapping)}", path)
    known = {}
    for key, value in mapping.items():
        if key in allowed:
            known[key] = value
        else:
            doc.add(f"unknown key {key!r} in {what}{suggestion(key, allowed)}; allowed: {', '.join(allowed)}", path + (key,))
            meant = closest(key, allowed)
            if meant is not None:
                doc.misspelt.add(path + (meant,))
    return known


def _each(doc: Document, value: Any, path: tuple[Any, ...], what: str, check: Callable[[Any], str]) -> tuple[str, ...]:
    """A name or a non-empty list of names, each passed through `check` (the schema's rule and wording); each
    bad one is kept as a mistake, the good ones returned."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        doc.add(f"expected a non-empty list of {what}", path)
        return ()
    good = []
    for index, item in enumerate(items):
        try:
            good.append(check(item))
        except ValueError as exc:
            doc.add(str(exc), path + (index,))
    return tuple(good)


def _settings(
    doc: Document, mapping: Mapping[str, Any], base: Settings, path: tuple, refused_above: frozenset[str] = frozenset()
) -> tuple[Settings, frozenset[str]]:
    """`base` with the settings `mapping` gives, and the names of those refused; a bad value is kept as a mistake
    and left out. A combination that cannot work is said where it is made: not again by each experiment that only
    inherits it, and not where one of its keys was refused, here or in `base` (`refused_above`: the defaults' refused
    keys this mapping does not set): `base` holds the built-in default in place of a refused value, and a check
    judged on that default would say what the config never wrote."""
    changes = {}
    refused = {name for name in refused_above if name not in mapping}
    for name in SETTING_FIELDS:
        if name in mapping:
            try:
                changes[name] = coerce_setting(name, mapping[name])
            except ValueError as exc:
                doc.add(str(exc), path + (name,))
                refused.add(name)
    settings = dataclasses.replace(base, **changes)
    inherited = {text for _, text in settings_problems(base)}
    for keys, problem in settings_problems(settings):  # each one said, beside the keys' own mistakes
        if not keys & refused and problem not in inherited:
            doc.add(problem, path)
    return settings, frozenset(refused)


def _experiment(
    doc: Document,
    raw: Any,
    index: int,
    defaults: Mapping[str, Any],
    base: Settings,
    validating: bool = False,
    refused: frozenset[str] = frozenset(),
) -> Experiment | None:
    """One experiment, or None where its workload is unknown (its params, sweep and checks cannot be read
    then); every mistake is kept in `doc`. `validating`: as `validate` reads it (loads). `refused`: the settings
    refused in defaults (`base` holds the built-in default in their place)."""
    path = ("experiments", index)
    raw = _check_keys(doc, raw, EXPERIMENT_KEYS, path, "an experiment")
    merged = {**defaults, **raw}
    backends = _each(doc, merged.get("backends", list(DEFAULT_BACKENDS)), _where(raw, path, "backends"), "backends", backend_name)
    devices = _each(doc, merged.get("devices", list(DEFAULT_DEVICES)), _where(raw, path, "devices"), "devices", device_spec)
    settings, _ = _settings(doc, raw, base, path, refused)
    name = raw.get("name")
    if "name" in raw and (not isinstance(name, str) or not name.strip()):
        doc.add("an experiment name must be a non-empty string", path + ("name",))
        name = None
    elif isinstance(name, str) and (wrong := fields.name_problem(name)):
        doc.add(f"an experiment name {wrong}", path + ("name",))
        name = None
    if "workload" not in raw:
        if path + ("workload",) not in doc.misspelt:
            doc.add(f"missing key 'workload' (one of: {', '.join(builtin_names())}, or {YOUR_OWN})", path)
        return None
    try:
        workload_name, workload = workload_of(raw["workload"], doc.base_dir)
    except ValueError as exc:
        doc.add(str(exc), path + ("workload",))
        return None
    params = _params(doc, workload, raw.get("params", {}), path + ("params",))
    sweep = _sweep(doc, workload, raw.get("sweep", {}), path + ("sweep",))
    params_for = _params_for(doc, workload, raw.get("params_for", {}), path + ("params_for",))
    problem = points_problem(workload, {**workload.defaults(), **params}, sweep, params_for)
    if problem:
        doc.add(problem, path)
    variants = _variants_of(workload, [{**workload.defaults(), **params}, *params_for.values()], sweep)
    # the steps its cases run: a sweep's values, else the params' (the workload's default), and a device kind's own
    steps = list(sweep.get("steps", ())) or [{**workload.defaults(), **params}.get("steps")]
    steps += [kind["steps"] for kind in params_for.values() if "steps" in kind]
    unmeasured = checks.bound_checks_of(workload, backends, devices, steps) if validating else None
    expect = checks.of_experiment(doc, workload, raw.get("expect", []), path + ("expect",), variants, unmeasured)
    return Experiment(
        name=name or workload.name,
        workload=workload_name,
        backends=backends,
        devices=devices,
        params={**workload.defaults(), **params},
        settings=settings,
        explicit=frozenset(params),
        sweep=sweep,
        expect=expect,
        params_for=params_for,
    )


def _given_name(raw: Any) -> str | None:
    """The name an experiment that could not be read gives itself, where it gives a usable one (else None: its
    default is its workload's, unknown then)."""
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name.strip() and not fields.name_problem(name) else None


def _params_for(doc: Document, workload: Workload, raw: Any, path: tuple) -> dict[str, dict[str, Any]]:
    """`params_for: {mxnet: {n_ops: 1000}, cpu: {size: 500}}`: params for one backend, device kind or both (mxnet:cpu)."""
    if not isinstance(raw, dict):
        doc.add(f"params_for must be a mapping of backend or device kind -> params, got {type_name(raw)}", path)
        return {}
    chosen = {}
    for key, params in raw.items():
        if ":" in key:
            backend, kind = key.split(":", 1)
        else:
            backend, kind = ("", key) if key in DEVICE_KINDS else (key, "")
        try:
            if backend:
                backend_name(backend)
            if kind and kind not in DEVICE_KINDS:
                raise ValueError(f"unknown device kind {kind!r}; one of: {', '.join(DEVICE_KINDS)}")
        except ValueError as exc:
            doc.add(f"params_for key {key!r}: {exc}", path + (key,))
            continue
        chosen[key] = _params(doc, workload, params, path + (key,))
    return chosen


def _where(raw: Mapping[str, Any], path: tuple, key: str) -> tuple:
    """The path of `key`: in the experiment if it sets it, else in defaults."""
    return path + (key,) if key in raw else ("defaults", key)


def _per_param(doc: Document, workload: Workload, raw: Any, path: tuple, what: str, check: Callable[[Param, Any], Any]) -> dict[str, Any]:
    """A mapping keyed by `workload`'s param names, each value passed through `check`; each bad name or value is
    kept as a mistake (not a mapping at all: one mistake, nothing read)."""
    try:
        raw = _check_keys(doc, raw, [p.name for p in workload.params], path, what)
    except ConfigError as exc:
        doc.errors.append(exc)
        return {}
    values = {}
    for name, value in raw.items():
        try:
            values[name] = check(workload.param(name), value)
        except ValueError as exc:
            doc.add(str(exc), path + (name,))
    return values


def _params(doc: Document, workload: Workload, raw: Any, path: tuple) -> dict[str, Any]:
    return _per_param(doc, workload, raw, path, f"params of {workload.name}", coerce_param)


def _sweep(doc: Document, workload: Workload, raw: Any, path: tuple) -> dict[str, tuple[Any, ...]]:
    sweep = _per_param(doc, workload, raw, path, f"sweep of {workload.name} (a mapping of param -> list of values)", sweep_values)
    try:
        check_sweep_size(sweep)
    except ValueError as exc:
        doc.add(str(exc), path)
    return sweep


def _variants_of(workload: Workload, params: Sequence[Mapping[str, Any]], sweep: Mapping[str, Sequence[Any]]) -> list[str] | None:
    """The variant names an experiment's cases have, where its workload declares a family whose K is a list param
    ("sync_every=K (one per sync_every value)": K from each sweep point's sync_every where it is swept, else from its
    params and params_for); None where
    the names are known only as the declared pattern (expect.parse checks that)."""
    names: list[str] = []
    for declared in workload.variants:
        head = declared.split()[0]
        family = VARIANT_FAMILY.fullmatch(head)
        if family is None:
            names.append(head)
            continue
        param = next((p for p in workload.params if p.name == family["param"]), None)
        if param is None or param.kind != INTS:
            return None
        # a swept value replaces the params' and params_for's at every point (engine.expansion): those never run
        values = list(sweep[param.name]) if param.name in sweep else [given[param.name] for given in params if param.name in given]
        names += [f"{param.name}={k}" for k in dict.fromkeys(k for value in values if isinstance(value, list) for k in value)]
    return names


def loads(text: str, source: str = "<config>", default_name: str = "config", validating: bool = False) -> Config:
    """Parse and validate config text; raise ConfigError naming source, line and key (ConfigErrors: every
    mistake of the text, in line order). `validating` (`asyncbench validate`): also what a run would only find it
    cannot evaluate (a check on what bounds the step of a workload with no step to perturb)."""
    doc = Document(text, source)
    if schema.is_results(doc.value):
        raise ConfigError(
            "this is a results file, not a config: use `asyncbench show FILE` to see it, or `asyncbench compare BASELINE FILE`",
            location=source,
        )
    top = _check_keys(doc, doc.value, TOP_KEYS, (), "the config")  # not a mapping: nothing else can be read
    name = top.get("name", default_name)
    if not isinstance(name, str):
        doc.add("name must be a string", ("name",))
        name = default_name
    elif wrong := fields.name_problem(name):  # a config's name becomes its results' name, held to the same vocabulary
        doc.add(f"the config's name {wrong}", ("name",))
        name = default_name
    no_defaults: dict[str, Any] = {}
    defaults = doc.attempt(no_defaults, _check_keys, doc, top.get("defaults", {}), DEFAULTS_KEYS, ("defaults",), "defaults")
    base, refused_defaults = _settings(doc, defaults, Settings(), ("defaults",))
    raw_experiments = top.get("experiments")
    experiments: list[Experiment] = []
    if not isinstance(raw_experiments, list) or not raw_experiments:
        if raw_experiments is not None or ("experiments",) not in doc.misspelt:
            doc.add("expected a non-empty list under 'experiments'", ("experiments",))
        raw_experiments = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_experiments):
        experiment = doc.attempt(None, _experiment, doc, raw, index, defaults, base, validating, refused_defaults)
        # an experiment that could not be read (an unknown workload) still has the name it gives: a duplicate is
        # said with its other mistakes, not on the next try (every mistake of a config at once)
        named = experiment.name if experiment is not None else _given_name(raw)
        if named is not None and named in seen:
            doc.add(
                f"duplicate experiment name {named!r} (also experiments[{seen[named]}]); give each a distinct 'name'",
                ("experiments", index),
            )
        if named is not None:
            seen.setdefault(named, index)
        if experiment is not None:
            experiments.append(experiment)
    executor_settings = _executor(doc, top.get("executor", {}))
    bound = top.get("bound", False)
    if not isinstance(bound, bool):
        doc.add(f"bound must be true or false (as `run --bound`), got {type_name(bound)}", ("bound",))
        bound = False
    verify = top.get("bound_verify")
    if verify is not None and verify not in VERIFY_HOWS:
        doc.add(f"bound_verify must be one of {', '.join(VERIFY_HOWS)} (as `run --bound-verify`), got {verify!r}", ("bound_verify",))
        verify = None
    refused = checks.verify_refused(experiments, verify) if validating and verify is not None else None
    if refused is not None:  # a run's preflight refuses it too (session.local), on the plan its options make
        doc.add(refused, ("bound_verify",))
    doc.raise_errors()
    return Config(
        name=name,
        source=source,
        experiments=tuple(experiments),
        executor=executor_settings,
        bound=bound or verify is not None,
        bound_verify=verify,
    )


def _executor(doc: Document, raw: Any) -> ExecutorSettings:
    """`executor: {kind: slurm, partition: gpu, gpus_per_node: 1, time: "0:30:00", sbatch: {qos: high}}`."""
    if not isinstance(raw, dict):
        doc.add(f"executor must be a mapping (kind: slurm, partition: ...), got {type_name(raw)}", ("executor",))
        return ExecutorSettings()
    settings = ExecutorSettings()
    for key, value in raw.items():
        try:
            settings = executor.apply(settings, key, value)
        except ValueError as exc:
            doc.add(str(exc), ("executor", key))
    return settings


def load(path: str | Path, validating: bool = False) -> Config:
    """Read and validate a config file, or the packaged suite a name that is no file names (`async-computation`:
    spec.suites); a file of that name wins. `validating`: as `asyncbench validate` reads it (loads)."""
    named = os.fspath(path)  # as given: `./ci-gate` is a path, which Path would shorten to the name `ci-gate`
    suite = None if os.path.lexists(named) else suites.name_of(named)
    if suite is not None:
        return _suite(suite, validating)
    path = Path(path)
    try:
        text = inputs.read_text(path, ConfigError, "config file", limit_bytes=inputs.MAX_CONFIG_BYTES)
    except ConfigError as exc:
        if exc.message == "no such file" and suites.NAME.fullmatch(named.removesuffix(suites.SUFFIX)):
            raise ConfigError("no such file, nor a suite of that name (asyncbench list names them)", location=named) from None
        raise
    return loads(text, source=str(path), default_name=path.stem, validating=validating)


DEFAULT_SUITE = "default.yaml"


def _suite(name: str, validating: bool = False) -> Config:
    return loads(suites.text(name), source=f"<built-in {name}{suites.SUFFIX}>", default_name=name, validating=validating)


def default_suite() -> Config:
    """The built-in suite `asyncbench run` uses without a CONFIG (shipped in the package)."""
    return _suite(DEFAULT_SUITE.removesuffix(suites.SUFFIX))
