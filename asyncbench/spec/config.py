"""The only YAML reader: a file becomes a validated, frozen `Config`.

YAML is composed with PyYAML's safe loader into nodes (so every key keeps its
line) and converted by hand, which lets every error name the file, the line
and the key path, and suggest a close match for a misspelling. Tags that
would construct objects are refused by the safe constructor. Nothing from a
config is ever evaluated.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import yaml

from asyncbench.backends import BACKENDS
from asyncbench.errors import InputError, read_text, suggestion
from asyncbench.results import schema
from asyncbench.results.model import Expectation, Settings
from asyncbench.results.plan import Config, ExecutorSettings, Experiment
from asyncbench.spec import executor, expect
from asyncbench.spec.schema import (
    SETTING_FIELDS,
    YOUR_OWN,
    backend_name,
    builtin_names,
    check_sweep_size,
    coerce_param,
    coerce_setting,
    device_spec,
    settings_problem,
    sweep_values,
    type_name,
    workload_key,
)
from asyncbench.workloads import WORKLOADS
from asyncbench.workloads.base import Param, Workload

TOP_KEYS = ("name", "defaults", "experiments", "executor")
DEFAULTS_KEYS = ("backends", "devices", *SETTING_FIELDS)
#: the kinds of device a `params_for:` key may name
DEVICE_KINDS = ("cpu", "cuda")
EXPERIMENT_KEYS = ("name", "workload", "params", "params_for", "sweep", "expect", *DEFAULTS_KEYS)

DEFAULT_BACKENDS = ("torch",)
DEFAULT_DEVICES = ("auto",)

# A real config has a few hundred values; YAML aliases can make a short file
# expand to billions ("billion laughs"): stop converting well before that.
MAX_CONFIG_VALUES = 100_000
# Collections may carry only the standard tags; anything else (!!python/...) is refused.
PLAIN_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


class ConfigError(InputError):
    """A config that cannot be used; says file, line and key path."""


def format_path(path: Sequence[Any]) -> str:
    """("experiments", 0, "params") -> "experiments[0].params"; an odd key is quoted: ['a b']."""
    text = ""
    for part in path:
        if isinstance(part, int) or not re.fullmatch(r"[\w-]+", str(part)):
            text += f"[{part!r}]" if not isinstance(part, int) else f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class _Document:
    """A composed YAML document turned into plain values, remembering each path's line."""

    def __init__(self, text: str, source: str):
        self.source = source
        # user workloads' file paths are relative to the config's folder (to the working directory for text)
        self.base_dir = Path(source).resolve().parent if Path(source).is_file() else Path.cwd()
        self.lines: dict[tuple, int] = {}
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise ConfigError(f"not valid YAML: {exc.problem or exc}", location=f"{source}{line}") from None
        except yaml.YAMLError as exc:  # e.g. a control character: PyYAML's message spans lines
            raise ConfigError(f"not valid YAML: {' '.join(str(exc).split())}", location=source) from None
        if node is None:
            raise ConfigError("the config is empty", location=source)
        self._constructor = yaml.SafeLoader("")
        self._values = 0
        self.value = self._convert(node, ())

    def _convert(self, node: yaml.Node, path: tuple) -> Any:
        self.lines[path] = node.start_mark.line + 1
        self._values += 1
        if self._values > MAX_CONFIG_VALUES:
            raise self.error(f"the config expands to more than {MAX_CONFIG_VALUES} values (YAML aliases?); refusing it", path)
        if not isinstance(node, yaml.ScalarNode) and node.tag not in PLAIN_TAGS:
            raise self.error(f"unsupported YAML value: tag {node.tag!r} is not allowed in a config", path)
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self._scalar(key_node, path)
                if not isinstance(key, str):
                    raise self.error(f"keys must be strings, got {key!r}", path, line=key_node.start_mark.line + 1)
                if key in result:
                    raise self.error(f"duplicate key {key!r}", path + (key,), line=key_node.start_mark.line + 1)
                result[key] = self._convert(value_node, path + (key,))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self._convert(item, path + (index,)) for index, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: tuple) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error("keys must be plain strings", path, line=node.start_mark.line + 1)
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.error(f"unsupported YAML value: {problem}", path, line=node.start_mark.line + 1) from None

    def line(self, path: tuple) -> int | None:
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)

    def error(self, message: str, path: tuple, line: int | None = None) -> ConfigError:
        line = line or self.line(path)
        location = f"{self.source}:{line}" if line else self.source
        return ConfigError(message, location=location, path=format_path(path) or None)


def _check_keys(doc: _Document, mapping: Any, allowed: Sequence[str], path: tuple, what: str) -> dict[str, Any]:
    if not isinstance(mapping, dict):
        raise doc.error(f"{what} must be a mapping, got {type_name(mapping)}", path)
    for key in mapping:
        if key not in allowed:
            raise doc.error(f"unknown key {key!r} in {what}{suggestion(key, allowed)}; allowed: {', '.join(allowed)}", path + (key,))
    return mapping


def _each(doc: _Document, value: Any, path: tuple[Any, ...], what: str, check: Callable[[Any], str]) -> tuple[str, ...]:
    """A name or a non-empty list of names, each passed through `check` (the schema's rule and wording)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise doc.error(f"expected a non-empty list of {what}", path)
    for index, item in enumerate(items):
        try:
            check(item)
        except ValueError as exc:
            raise doc.error(str(exc), path + (index,)) from None
    return tuple(items)


def _settings(doc: _Document, mapping: Mapping[str, Any], base: Settings, path: tuple) -> Settings:
    changes = {}
    for name in SETTING_FIELDS:
        if name in mapping:
            try:
                changes[name] = coerce_setting(name, mapping[name])
            except ValueError as exc:
                raise doc.error(str(exc), path + (name,)) from None
    settings = dataclasses.replace(base, **changes)
    problem = settings_problem(settings)
    if problem:
        raise doc.error(problem, path)
    return settings


def _experiment(doc: _Document, raw: Any, index: int, defaults: Mapping[str, Any], base: Settings) -> Experiment:
    path = ("experiments", index)
    raw = _check_keys(doc, raw, EXPERIMENT_KEYS, path, "an experiment")
    if "workload" not in raw:
        raise doc.error(f"missing key 'workload' (one of: {', '.join(builtin_names())}, or {YOUR_OWN})", path)
    try:
        workload_name = workload_key(raw["workload"], doc.base_dir)
    except ValueError as exc:
        raise doc.error(str(exc), path + ("workload",)) from None
    workload = WORKLOADS[workload_name]
    name = raw.get("name", workload.name)
    if not isinstance(name, str) or not name.strip():
        raise doc.error("an experiment name must be a non-empty string", path + ("name",))
    params = _params(doc, workload, raw.get("params", {}), path + ("params",))
    sweep = _sweep(doc, workload, raw.get("sweep", {}), path + ("sweep",))
    params_for = _params_for(doc, workload, raw.get("params_for", {}), path + ("params_for",))
    expect = _expectations(doc, workload, raw.get("expect", []), path + ("expect",))
    merged = {**defaults, **raw}
    return Experiment(
        name=name,
        workload=workload_name,
        backends=_each(doc, merged.get("backends", list(DEFAULT_BACKENDS)), _where(raw, path, "backends"), "backends", backend_name),
        devices=_each(doc, merged.get("devices", list(DEFAULT_DEVICES)), _where(raw, path, "devices"), "devices", device_spec),
        params={**workload.defaults(), **params},
        settings=_settings(doc, raw, base, path),
        explicit=frozenset(params),
        sweep=sweep,
        expect=expect,
        params_for=params_for,
    )


def _params_for(doc: _Document, workload: Workload, raw: Any, path: tuple) -> dict[str, dict[str, Any]]:
    """`params_for: {mxnet: {n_ops: 1000}, cpu: {size: 500}}`: params for one backend, device kind or both (mxnet:cpu)."""
    if not isinstance(raw, dict):
        raise doc.error(f"params_for must be a mapping of backend or device kind -> params, got {type_name(raw)}", path)
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
            raise doc.error(f"params_for key {key!r}: {exc}", path + (key,)) from None
        chosen[key] = _params(doc, workload, params, path + (key,))
    return chosen


def _where(raw: Mapping[str, Any], path: tuple, key: str) -> tuple:
    """The path of `key`: in the experiment if it sets it, else in defaults."""
    return path + (key,) if key in raw else ("defaults", key)


def _per_param(doc: _Document, workload: Workload, raw: Any, path: tuple, what: str, check: Callable[[Param, Any], Any]) -> dict[str, Any]:
    """A mapping keyed by `workload`'s param names, each value passed through `check`."""
    raw = _check_keys(doc, raw, [p.name for p in workload.params], path, what)
    values = {}
    for name, value in raw.items():
        try:
            values[name] = check(workload.param(name), value)
        except ValueError as exc:
            raise doc.error(str(exc), path + (name,)) from None
    return values


def _params(doc: _Document, workload: Workload, raw: Any, path: tuple) -> dict[str, Any]:
    return _per_param(doc, workload, raw, path, f"params of {workload.name}", coerce_param)


def _sweep(doc: _Document, workload: Workload, raw: Any, path: tuple) -> dict[str, tuple[Any, ...]]:
    sweep = _per_param(doc, workload, raw, path, f"sweep of {workload.name} (a mapping of param -> list of values)", sweep_values)
    try:
        check_sweep_size(sweep)
    except ValueError as exc:
        raise doc.error(str(exc), path) from None
    return sweep


def _expectations(doc: _Document, workload: Workload, raw: Any, path: tuple) -> tuple[Expectation, ...]:
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise doc.error(f"expected a list of checks like 'speedup >= 1.5', got {type_name(raw)}", path)
    expectations = []
    for index, item in enumerate(items):
        try:
            expectations.append(expect.parse(item, workload))
        except ValueError as exc:
            raise doc.error(str(exc), path + (index,)) from None
    return tuple(expectations)


def loads(text: str, source: str = "<config>", default_name: str = "config") -> Config:
    """Parse and validate config text; raise ConfigError naming source, line and key."""
    doc = _Document(text, source)
    if schema.is_results(doc.value):
        raise ConfigError(
            "this is a results file, not a config: use `asyncbench show FILE` to see it, or `asyncbench compare BASELINE FILE`",
            location=source,
        )
    top = _check_keys(doc, doc.value, TOP_KEYS, (), "the config")
    name = top.get("name", default_name)
    if not isinstance(name, str):
        raise doc.error("name must be a string", ("name",))
    defaults = _check_keys(doc, top.get("defaults", {}), DEFAULTS_KEYS, ("defaults",), "defaults")
    base = _settings(doc, defaults, Settings(), ("defaults",))
    raw_experiments = top.get("experiments")
    if not isinstance(raw_experiments, list) or not raw_experiments:
        raise doc.error("expected a non-empty list under 'experiments'", ("experiments",))
    experiments = [_experiment(doc, raw, index, defaults, base) for index, raw in enumerate(raw_experiments)]
    seen: dict[str, int] = {}
    for index, experiment in enumerate(experiments):
        if experiment.name in seen:
            raise doc.error(
                f"duplicate experiment name {experiment.name!r} (also experiments[{seen[experiment.name]}]); give each a distinct 'name'",
                ("experiments", index),
            )
        seen[experiment.name] = index
    return Config(name=name, source=source, experiments=tuple(experiments), executor=_executor(doc, top.get("executor", {})))


def _executor(doc: _Document, raw: Any) -> ExecutorSettings:
    """`executor: {kind: slurm, partition: gpu, gpus_per_node: 1, time: "0:30:00", sbatch: {qos: high}}`."""
    if not isinstance(raw, dict):
        raise doc.error(f"executor must be a mapping (kind: slurm, partition: ...), got {type_name(raw)}", ("executor",))
    settings = ExecutorSettings()
    for key, value in raw.items():
        try:
            settings = executor.apply(settings, key, value)
        except ValueError as exc:
            raise doc.error(str(exc), ("executor", key)) from None
    return settings


def load(path: str | Path) -> Config:
    """Read and validate a config file."""
    path = Path(path)
    text = read_text(path, ConfigError, "config file")
    return loads(text, source=str(path), default_name=path.stem)


DEFAULT_SUITE = "default.yaml"


def default_suite() -> Config:
    """The built-in suite `asyncbench run` uses without a CONFIG (shipped in the package)."""
    resource = importlib.resources.files("asyncbench") / "suites" / DEFAULT_SUITE
    return loads(resource.read_text(encoding="utf-8"), source=f"<built-in {DEFAULT_SUITE}>", default_name="default")


def for_workloads(keys: Sequence[str]) -> Config:
    """A config that runs the workloads with these registry keys (already resolved: `workload_keys`) with their
    defaults on every backend (`run -w NAME` without CONFIG)."""
    experiments = []
    for key in keys:
        workload = WORKLOADS[key]
        experiments.append(
            Experiment(
                name=workload.name,
                workload=key,
                backends=tuple(BACKENDS),
                devices=DEFAULT_DEVICES,
                params=workload.defaults(),
                settings=Settings(),
            )
        )
    names = [e.name for e in experiments]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"-w names two workloads called {', '.join(map(repr, repeated))}: run them from a config with distinct names")
    return Config(name="workloads", source="<command line>", experiments=tuple(experiments))


def workload_keys(names: Iterable[str]) -> list[str]:
    """The registry keys of `-w` names (built-in, file, module or plugin; a file relative to the working
    directory), each loaded once; InputError naming the option for a bad one."""
    keys = []
    for name in dict.fromkeys(names):
        try:
            keys.append(workload_key(name, Path.cwd()))
        except ValueError as exc:
            raise InputError(f"-w {name!r}: {exc}") from None
    return list(dict.fromkeys(keys))
