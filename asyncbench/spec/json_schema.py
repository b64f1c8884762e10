"""The config's JSON Schema (draft 2020-12), for editors: built from the tables the validator checks with.

yaml-language-server (VS Code's YAML extension, and other editors') completes
and checks a YAML file against a JSON Schema; `asyncbench schema` prints this
one. It is derived, not written down again: its keys are config.TOP_KEYS,
DEFAULTS_KEYS and EXPERIMENT_KEYS and executor.KEYS; the settings' types are
Settings' fields, their units schema.SETTING_UNITS, their bounds
schema.least; each built-in workload's params are its own declarations
(kind, bounds, choices, pattern, help); the backends, device kinds and
executor choices are the registries' and the validator's own. A key the
validator learns appears here; one it forgets leaves. How each key is written
in JSON Schema is `RULES` (a key without a rule is allowed with any value, and
`unruled` names it: a test keeps that list empty).

It is looser than the validator wherever JSON Schema cannot state a rule, so
that an editor never marks a config `validate` accepts: what the schema
refuses, the validator refuses, not the converse (VALIDATE_ONLY lists what
only `asyncbench validate` says).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from asyncbench.backends import BACKENDS, DEVICE_PATTERN
from asyncbench.results import fields
from asyncbench.results.bound import VERIFY_HOWS
from asyncbench.results.plan import EXECUTOR_KINDS, JOB_UNITS
from asyncbench.spec import config, executor, expect, schema
from asyncbench.version import __version__
from asyncbench.workloads import BUILT_IN, plugins
from asyncbench.workloads.base import BOOL, FLOAT, INT, INTS, SHAPE, STR, Param, Workload

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: a name for this schema, by version (yaml-language-server reads it from the file or the URL it is given; it
#: fetches nothing by $id)
SCHEMA_ID = f"urn:asyncbench:config-schema:{__version__}"

#: the refusals only `asyncbench validate` says: they span keys, depend on files or on the workload's
#: declarations in Python, or on values JSON cannot hold
VALIDATE_ONLY = (
    "max_samples below min_samples, or timeout_s not above max_time_s (two keys, one of them perhaps in defaults)",
    "two experiments with one name (duplicate names across the list)",
    "an infinite or NaN number (.inf: JSON has none)",
    f"a sweep of more than {schema.MAX_SWEEP_POINTS:,} points (the product of its lists' lengths)",
    "an expect: check's metric, variant or unit that the workload does not have (the schema checks the grammar)",
    "a bound check's side, reading or threshold that cannot be (slack_s[gpu], bound == fast, a share without its %, a ceiling below 1)",
    "a bound check that a run could only call not measured (a built-in experiment; numpy, or torch on cpu: synchronous;"
    " a step run one step a sample, steps: 1)",
    "a step-form sync_every value above steps (a wait that never comes in a sample)",
    "a user's workload file that does not exist or does not define the name, and its params",
    f"a number with a unit that is zero or out of range (ab_margin: above 0% and under {schema.AB_MARGIN_MAX:.0%})",
)
# a name holds no control character (results.fields.CONTROL): it is shown in terminals and pages, never obeyed there
_NO_CONTROL = rf"^(?:(?!{fields.CONTROL.pattern})[\s\S])*$"


def pattern_of(regex: re.Pattern[str], whole: bool = True) -> str:
    """A Python regular expression as JSON Schema's (ECMA 262) `pattern`: named groups unnamed, a verbose one's
    layout whitespace dropped, anchored at both ends where Python's fullmatch is meant (JSON Schema searches)."""
    text = regex.pattern
    if regex.flags & re.VERBOSE:
        text = re.sub(r"\s+", "", text)
    text = re.sub(r"\(\?P<\w+>", "(", text)
    return f"^(?:{text})$" if whole else text


def _number_with_unit(units: list[str]) -> dict[str, Any]:
    """A string such as '500ms' or '3%', read by schema._with_unit: a number, not negative, and one of `units`."""
    return {"type": "string", "pattern": rf"^(?!\s*-)\s*{schema.NUMBER}\s*(?:{'|'.join(map(re.escape, units))})\s*$"}


def _setting(name: str) -> dict[str, Any]:
    """A measurement setting as schema.coerce_setting reads it: an integer from schema.least, a positive number
    (or one with its unit, SETTING_UNITS), or ab_margin's percentage, always with its %."""
    unit = schema.SETTING_UNITS.get(name)
    units = list(expect.UNIT_FACTORS[unit]) if unit else []
    if name == "ab_margin":  # as coerce_setting reads it: a plain 5 would be 500% to one reader and 5% to another
        return _number_with_unit(units)
    if schema.SETTING_FIELDS[name].type == "int":
        return {"type": "integer", "minimum": schema.least(name), "maximum": schema.MAX_INT}
    positive: dict[str, Any] = {"type": "number", "exclusiveMinimum": 0}
    if name == "max_rel_noise":  # a fraction (coerce_setting refuses 1 and more: a plain 3 meant 3%)
        positive["exclusiveMaximum"] = 1
    return {"anyOf": [positive, _number_with_unit(units)]} if units else positive


def _name(non_empty: bool) -> dict[str, Any]:
    """A name as results.fields.name_problem holds it: bounded, no control character (an experiment's not blank)."""
    rule: dict[str, Any] = {"type": "string", "maxLength": fields.MAX_NAME, "pattern": _NO_CONTROL}
    if non_empty:
        rule["allOf"] = [{"pattern": r"\S"}]
    return rule


def _one_or_list(item: dict[str, Any]) -> dict[str, Any]:
    """config._each: one value, or a non-empty list of them."""
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1}]}


def param_rule(param: Param) -> dict[str, Any]:
    """A workload param as schema.coerce_param checks it, with its help as the description."""
    rule: dict[str, Any]
    within = {"minimum": -schema.MAX_INT, "maximum": schema.MAX_INT}
    bounds = {k: v for k, v in (("minimum", param.minimum), ("maximum", param.maximum)) if v is not None}
    if param.kind == BOOL:
        rule = {"type": "boolean"}
    elif param.kind == INT:
        rule = {"type": "integer", **within, **bounds}
    elif param.kind == FLOAT:
        rule = {"type": "number", **bounds}
    elif param.kind == STR:
        rule = _name(non_empty=False)
        if param.pattern:
            rule["allOf"] = [{"pattern": pattern_of(re.compile(param.pattern))}]
    elif param.kind == SHAPE:
        dimension = {"type": "integer", "minimum": 1, "maximum": schema.MAX_INT}
        rule = {"type": "array", "items": dimension, "minItems": 1, "maxItems": schema.MAX_SHAPE_DIMS}
    elif param.kind == INTS:
        rule = {"type": "array", "items": {"type": "integer", **within, **bounds}, "minItems": 1, "uniqueItems": True}
    else:  # a kind this module does not know yet: any value (never refuse what the validator may accept)
        rule = {}
    if param.choices:
        rule["enum"] = list(param.choices)
    return {"description": param.help, **rule, "default": param.default}


def _swept(param: Param) -> dict[str, Any]:
    """schema.sweep_values: a non-empty list of distinct values; a list param's values may be plain integers."""
    item = param_rule(param)
    if param.kind == INTS:
        item = {"anyOf": [item, item["items"]]}
    return {"type": "array", "items": item, "minItems": 1, "maxItems": schema.MAX_SWEEP_POINTS, "uniqueItems": True}


def _params_of(workload: Workload) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"params of {workload.name}: {workload.summary}",
        "properties": {p.name: param_rule(p) for p in workload.params},
        "additionalProperties": False,
    }


def _sweep_of(workload: Workload) -> dict[str, Any]:
    return {"type": "object", "properties": {p.name: _swept(p) for p in workload.params}, "additionalProperties": False}


def _for_workload(name: str) -> dict[str, Any]:
    """An experiment of a built-in workload: its params, params_for and sweep are that workload's."""
    params = {"$ref": f"#/$defs/{name}.params"}
    return {
        "if": {"properties": {"workload": {"const": name}}, "required": ["workload"]},
        "then": {
            "properties": {
                "params": params,
                "params_for": {"additionalProperties": params},
                "sweep": {"$ref": f"#/$defs/{name}.sweep"},
            }
        },
    }


def params_for_keys() -> list[str]:
    """What a `params_for:` key may name (config._params_for): a backend, a device kind, or both (mxnet:cpu)."""
    return [*BACKENDS, *config.DEVICE_KINDS, *(f"{b}:{k}" for b in BACKENDS for k in config.DEVICE_KINDS)]


def _sbatch() -> dict[str, Any]:
    """executor.sbatch_options: an option's long name (not one asyncbench sets or one that subverts the job) -> a plain
    value; `true` only for sbatch's flags."""
    refused = "|".join(map(re.escape, (*executor.OWN_SBATCH, *executor.SUBVERTING_SBATCH)))
    plain = {"anyOf": [{"type": "string", "pattern": _NO_CONTROL}, {"type": "number"}]}
    flags = "|".join(map(re.escape, executor.SBATCH_FLAGS))
    return {
        "type": "object",
        "propertyNames": {"pattern": rf"^-*{pattern_of(executor._SBATCH_NAME, whole=False)}$", "not": {"pattern": rf"^-*(?:{refused})$"}},
        "patternProperties": {rf"^-*(?:{flags})$": {"anyOf": [plain, {"const": True}]}},
        "additionalProperties": plain,
    }


def _words() -> dict[str, Any]:
    """executor._name: a name without spaces, or null for the cluster's default."""
    return {"anyOf": [{"type": "string", "pattern": rf"^(?:(?!{fields.CONTROL.pattern})\S)+$"}, {"type": "null"}]}


#: key -> (how it is written in JSON Schema, what it means); the settings are Settings' fields (SETTINGS says what each means)
RULES: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "name": (lambda: _name(non_empty=False), "The config's name: its results are named after it [default: the file's name]."),
    "defaults": (lambda: {"$ref": "#/$defs/defaults"}, "Backends, devices and settings for every experiment unless it says otherwise."),
    "experiments": (
        lambda: {"type": "array", "items": {"$ref": "#/$defs/experiment"}, "minItems": 1},
        "What to run: each a workload with its params, sweep and checks.",
    ),
    "executor": (lambda: {"$ref": "#/$defs/executor"}, "Where the cases run: here, or as jobs (local, slurm) through submitit."),
    "bound": (
        lambda: {"type": "boolean"},
        "Also measure what bounds each step-form workload's step, host or device, by injected delays (as `run --bound`) [default: false].",
    ),
    "bound_verify": (
        lambda: {"enum": list(VERIFY_HOWS)},
        "Also capture each step (jit: JAX; compile, graph: torch) and time it against the ceiling of cutting host work "
        "(as `run --bound-verify`; implies bound).",
    ),
    "backends": (lambda: _one_or_list({"$ref": "#/$defs/backend"}), "The backends to run on [default: torch]."),
    "devices": (
        lambda: _one_or_list({"type": "string", "pattern": DEVICE_PATTERN.pattern}),
        "auto (every device the backend sees), cpu, cuda or cuda:N [default: auto].",
    ),
    "experiment.name": (lambda: _name(non_empty=True), "The experiment's name, unique in the config [default: the workload's]."),
    "workload": (
        lambda: {
            "anyOf": [
                {"enum": [*BUILT_IN, *(name for name in plugins.plugins() if name not in BUILT_IN)]},
                {"type": "string", "pattern": r"^.+:[^\s:]+$"},
            ]
        },
        f"A built-in workload's name, or {schema.YOUR_OWN}.",
    ),
    "params": (lambda: {"type": "object"}, "The workload's params (asyncbench list shows them, with their defaults)."),
    "params_for": (
        lambda: {"type": "object", "propertyNames": {"enum": params_for_keys()}, "additionalProperties": {"type": "object"}},
        "Params for one backend, device kind or both (mxnet: {n_ops: 1000}, cuda: {size: 2000}, mxnet:cpu: ...).",
    ),
    "sweep": (lambda: {"type": "object"}, "Params to sweep: param -> list of values; one case per point of their product."),
    # an empty list is no check, which `validate` accepts (the validator reads `expect` as a list, not as config._each)
    "expect": (
        lambda: {"anyOf": [{"$ref": "#/$defs/check"}, {"type": "array", "items": {"$ref": "#/$defs/check"}}]},
        f"Checks each case must pass, {expect.EXAMPLES}.",
    ),
}
#: what each measurement setting means (its rule is its Settings field's: _setting)
SETTINGS = {
    "warmup": (
        "Untimed runs per variant before sampling (lazy init, allocator, cuBLAS handles), then more until the warm-up took 50 ms; 0: none."
    ),
    "min_samples": "The fewest samples per variant (6: the fewest with a 95% interval of the median).",
    "max_samples": "The most samples per variant (at least min_samples).",
    "max_time_s": "Stop sampling after this long: seconds, or with a unit (10s, 500ms).",
    "max_rel_noise": "Or stop once every variant's 95% interval is within this fraction of its median (0.03, or 3%).",
    "timeout_s": "A case still running after this long is killed, an error row (must exceed max_time_s).",
    "ab_margin": "Under `asyncbench ab`: this case's margin instead of --max-regression, with its % (10%).",
}
#: how each executor key (executor.KEYS) is written in JSON Schema, and what it means
EXECUTOR_RULES: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "kind": (lambda: {"enum": list(EXECUTOR_KINDS)}, "here (default), or jobs through submitit: local or slurm (--executor)."),
    "per": (lambda: {"enum": list(JOB_UNITS)}, "What one job runs [default: experiment] (--per)."),
    "partition": (_words, "Slurm partition [default: the cluster's] (--partition)."),
    "gpus_per_node": (lambda: {"type": "integer", "minimum": 0}, "GPUs each job asks for [default: 0] (--gpus-per-node)."),
    "time_min": (
        lambda: {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": executor.MAX_TIME_MIN},
                {"type": "string", "pattern": pattern_of(executor._TIME, whole=False)},
            ]
        },
        "Each job's time limit: minutes, or Slurm's D-HH:MM:SS quoted (\"1:30:00\") [default: 60] (--time-limit).",
    ),
    "account": (_words, "Slurm account to charge (--account)."),
    "exclusive": (lambda: {"type": "boolean"}, "Each job alone on its node [default: true] (--exclusive/--shared)."),
    "sbatch": (_sbatch, "More sbatch options: option -> value (qos: high); true for a flag (requeue: true) (--sbatch)."),
}


def _rule(key: str, table: dict[str, tuple[Callable[[], dict[str, Any]], str]]) -> dict[str, Any]:
    if key in schema.SETTING_FIELDS and table is RULES:
        return {"description": SETTINGS.get(key, ""), **_setting(key)}
    make, description = table.get(key, (dict, ""))
    return {"description": description, **make()}


def _object(keys: tuple[str, ...], description: str, prefix: str = "", required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object of exactly `keys` (config._check_keys refuses any other): each key's rule, `prefix.key`'s first."""
    properties = {key: _rule(f"{prefix}{key}" if f"{prefix}{key}" in RULES else key, RULES) for key in keys}
    rule: dict[str, Any] = {"type": "object", "description": description, "properties": properties, "additionalProperties": False}
    if required:
        rule["required"] = list(required)
    return rule


def build() -> dict[str, Any]:
    """The config's JSON Schema, as a JSON-ready mapping."""
    experiment = _object(
        config.EXPERIMENT_KEYS, "One experiment: a workload, where it runs, its params and checks.", "experiment.", ("workload",)
    )
    experiment["allOf"] = [_for_workload(name) for name in BUILT_IN]
    defs: dict[str, Any] = {
        "defaults": _object(config.DEFAULTS_KEYS, "Backends, devices and settings for every experiment unless it says otherwise."),
        "experiment": experiment,
        "executor": {
            "type": "object",
            "description": "Where a plan's jobs run (the command line's --executor, --partition... win over it).",
            "properties": {key: _rule(key, EXECUTOR_RULES) for key in executor.KEYS},
            "additionalProperties": False,
        },
        "backend": {"enum": list(BACKENDS)},
        "check": {
            "type": "string",
            # a threshold check, or the reading of what bounds the step (bound == device): the parser's two grammars
            "pattern": f"^(?:{pattern_of(expect._CHECK, whole=False)}|{pattern_of(expect._READING, whole=False)})$",
            "description": f"A check, {expect.EXAMPLES}; on what bounds the step, {expect.READING_EXAMPLES}.",
        },
    }
    for name, workload in BUILT_IN.items():
        defs[f"{name}.params"] = _params_of(workload)
        defs[f"{name}.sweep"] = _sweep_of(workload)
    top = _object(config.TOP_KEYS, "", required=("experiments",))
    return {
        "$schema": DIALECT,
        "$id": SCHEMA_ID,
        "title": "asyncbench config",
        "description": (
            f"An asyncbench {__version__} config (asyncbench run CONFIG). Derived from the validator's own tables; "
            "`asyncbench validate CONFIG` also checks what a schema cannot: " + "; ".join(VALIDATE_ONLY) + "."
        ),
        "type": "object",
        "properties": top["properties"],
        "required": top["required"],
        "additionalProperties": False,
        "$defs": defs,
    }


def unruled() -> list[str]:
    """The keys of the validator's tables that have no rule or no description here (each allowed with any value),
    and the rules here for keys the validator no longer has."""
    keys = {*config.TOP_KEYS, *config.DEFAULTS_KEYS, *config.EXPERIMENT_KEYS}
    missing = [key for key in keys - set(schema.SETTING_FIELDS) if key not in RULES]
    missing += [key for key in schema.SETTING_FIELDS if key not in SETTINGS]
    missing += [f"executor.{key}" for key in executor.KEYS if key not in EXECUTOR_RULES]
    stale = [f"{key} (no such key)" for key in [*RULES, *SETTINGS] if key.removeprefix("experiment.") not in keys]
    stale += [f"executor.{key} (no such key)" for key in EXECUTOR_RULES if key not in executor.KEYS]
    return sorted(missing + stale)
