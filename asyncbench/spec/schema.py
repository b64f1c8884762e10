"""One schema for what a user may ask: the rules and the wording that YAML configs and the command line share.

A value is checked once, by the functions here, whether it came from a
config file or from `--set`/`-w`: each raises ValueError saying what was
expected, and the caller adds where the value was (file, line and key path,
or the option). Settings may carry units (max_time_s=2s, max_rel_noise=3%),
as `expect:` thresholds do.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from asyncbench.errors import InputError, suggestion
from asyncbench.results import fields
from asyncbench.results.model import Settings
from asyncbench.spec.expect import UNIT_FACTORS
from asyncbench.verdicts import margin as margin_rule
from asyncbench.workloads import BUILT_IN, plugins
from asyncbench.workloads.base import BOOL, FLOAT, INT, INTS, SHAPE, STR, Param, Workload

SETTING_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
# Shapes beyond 8 dimensions are never what a user meant for these workloads.
MAX_SHAPE_DIMS = 8
# A grid over sizes, dtypes and thread counts reaches thousands of points, and a
# case costs the same whether it is the 10th or the 10,000th (benchmarks/sweep_scale.py);
# beyond ten thousand points a sweep is a typo (a list pasted twice, a range too fine)
# that would run for days, not a plan. The cap was 1,000 while saving grew with the sweep.
MAX_SWEEP_POINTS = 10_000
# --quick is for smoke tests: cap the measurement to a few short samples. Six is the
# fewest with a 95% interval of the median: fewer would leave every figure without one.
# 0.1 s a case beyond those six rounds: at 1 s (the built-in suite's own max_time_s) --quick
# took as long as the suite (23.4 s vs 22.6 s); at 0.2 s sampling was still 0.9-1.3 s of a torch
# or jax --quick run of 10 s, at 0.1 s it is 0.65 s (torch); the rest is process starts, imports,
# JAX compilation and set-up, which --quick cannot cut (benchmarks/quick_speed.py measures it).
# A case with checks still takes the rounds they need (verdicts.checks.enough_rounds), up to
# max_samples.
QUICK_SETTINGS = Settings(warmup=1, min_samples=6, max_samples=20, max_time_s=0.1, max_rel_noise=0.05)
#: the units a float setting may carry, as `expect` thresholds do: max_time_s=2s, max_rel_noise=3%
SETTING_UNITS = {"max_time_s": "s", "timeout_s": "s", "max_rel_noise": "%", "ab_margin": "%"}
#: a number as a setting with a unit writes it (and the config's JSON Schema, spec.json_schema, says it)
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_WITH_UNIT = re.compile(rf"\s*({NUMBER})\s*([A-Za-zµ%]+)\s*")
#: how an error about a workload's name says that users' own workloads are named
YOUR_OWN = "your own: path/to/file.py:Name, package.module:Name, or an installed plugin's name"


def type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a mapping"}.get(
        type(value), type(value).__name__
    )


# An integer a run can use (a count, a size, a seed) fits in 64 bits: a framework's sizes are int64, and a longer
# one would reach it as an overflow deep inside a case instead of as one line here.
MAX_INT = 2**63 - 1


def _within_64_bits(value: int) -> None:
    if abs(value) > MAX_INT:
        raise ValueError(f"an integer of {value.bit_length()} bits is beyond 64 (at most {MAX_INT})")


def coerce_param(param: Param, value: Any) -> Any:
    """Check `value` against `param`'s kind and bounds; raise ValueError with what was expected."""
    if param.kind == BOOL:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {type_name(value)} {value!r}")
        return value
    if param.kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {type_name(value)} {value!r}")
        _within_64_bits(value)
    elif param.kind == FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"expected a number, got {type_name(value)} {value!r}")
        value = float(value)
    elif param.kind == STR:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {type_name(value)} {value!r}")
        if wrong := fields.name_problem(value):  # a param's value names its case (its id): held to the names' vocabulary
            raise ValueError(f"a value that {wrong}")
    elif param.kind == SHAPE:
        if (
            not isinstance(value, list)
            or not 1 <= len(value) <= MAX_SHAPE_DIMS
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in value)
        ):
            raise ValueError(f"expected a list of 1 to {MAX_SHAPE_DIMS} positive integers, got {value!r}")
        for dimension in value:
            _within_64_bits(dimension)
        return list(value)
    elif param.kind == INTS:
        if not isinstance(value, list) or not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            one = f": write [{value}]" if isinstance(value, int) and not isinstance(value, bool) else ""  # a list of one
            raise ValueError(f"expected a non-empty list of integers, got {value!r}{one}")
        if len(set(value)) != len(value):
            raise ValueError(f"values must be distinct, got {value!r}")
        for item in value:
            _within_64_bits(item)
            if (param.minimum is not None and item < param.minimum) or (param.maximum is not None and item > param.maximum):
                raise ValueError(f"each value must be within {param.minimum:g}..{param.maximum:g}, got {item!r}")
        return list(value)
    if param.pattern and not re.fullmatch(param.pattern, value):
        raise ValueError(f"expected {param.help}, got {value!r}")
    if param.choices and value not in param.choices:
        raise ValueError(f"expected one of {', '.join(map(str, param.choices))}, got {value!r}{suggestion(value, param.choices)}")
    if param.minimum is not None and value < param.minimum:
        raise ValueError(f"must be at least {param.minimum:g}, got {value!r}")
    if param.maximum is not None and value > param.maximum:
        raise ValueError(f"must be at most {param.maximum:g}, got {value!r}")
    return value


def _with_unit(name: str, value: Any) -> Any:
    """'2s', '500ms' for a time setting, '3%' for max_rel_noise: the number in the base unit; other values unchanged."""
    if not isinstance(value, str) or name not in SETTING_UNITS:
        return value
    match = _NUMBER_WITH_UNIT.fullmatch(value)
    factors = UNIT_FACTORS[SETTING_UNITS[name]]
    if match is None or match[2] not in factors:
        raise ValueError(f"expected a number, optionally with a unit ({', '.join(factors)}), got {value!r}")
    return float(match[1]) * factors[match[2]]


# ab_margin is written as a percentage, always: a plain 5 would be 500% as a fraction (as max_rel_noise reads) and 5%
# to a reader of percentages; `--max-regression` refuses a plain number alike, and both take the margins
# verdicts.margin.margin_problem allows, up to this.
AB_MARGIN_MAX = margin_rule.MARGIN_MAX


# max_rel_noise is a fraction of the median: a plain 3 would be a 300% target, met by the first samples, so the run
# would stop at once. A target of 100% or more is never meant; it is refused saying the form a fraction takes.
NOISE_FORM = "max_rel_noise is a fraction: 0.03 for ±3%"


def least(name: str) -> int:
    """The least an integer setting may be: a warm-up may be left out, a count of samples is at least one."""
    return 0 if name == "warmup" else 1


def coerce_setting(name: str, value: Any) -> Any:
    """Check a measurement setting (warmup, min_samples...); raise ValueError if wrong."""
    if name == "ab_margin":
        written = "" if isinstance(value, bool) else str(value).strip()
        if not (isinstance(value, str) and written.endswith("%")):
            if margin_rule.plain_number(written):  # 10 or '10': the two forms it may mean, as --max-regression says
                raise ValueError(f"{margin_rule.ambiguous(written)}, got {value!r}")
            raise ValueError(f"expected a percentage such as 25% (with its %), got {value!r}")
        margin = _with_unit(name, value)
        problem = margin_rule.margin_problem(margin)
        if problem:
            raise ValueError(f"{problem}, got {value!r}")
        return margin
    value = _with_unit(name, value)
    kind = SETTING_FIELDS[name].type
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {type_name(value)} {value!r}")
        if value < least(name):
            raise ValueError(f"must be at least {least(name)}, got {value}")
        _within_64_bits(value)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    if name == "max_rel_noise" and value >= 1:
        raise ValueError(f"{NOISE_FORM}, got {value!r}")
    return float(value)


def settings_problems(settings: Settings) -> tuple[tuple[frozenset[str], str], ...]:
    """Every combination of settings that cannot work (each may be fine alone), each with the keys it involves:
    all of them, so that one `validate` says each (a caller leaves out one whose keys were themselves refused)."""
    problems = []
    if settings.max_samples < settings.min_samples:
        problems.append(
            (
                frozenset({"min_samples", "max_samples"}),
                f"max_samples ({settings.max_samples}) is below min_samples ({settings.min_samples})",
            )
        )
    if settings.timeout_s <= settings.max_time_s:
        problems.append(
            (
                frozenset({"timeout_s", "max_time_s"}),
                f"timeout_s ({settings.timeout_s:g} s) must exceed max_time_s ({settings.max_time_s:g} s): "
                "sampling alone may take max_time_s",
            )
        )
    return tuple(problems)


def settings_problem(settings: Settings) -> str | None:
    """What makes a combination of settings unusable, every such combination in one line, or None."""
    return "; ".join(text for _, text in settings_problems(settings)) or None


def points_problem(
    workload: Workload, params: Mapping[str, Any], sweep: Mapping[str, Sequence[Any]], params_for: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """What makes a point of an experiment measure other than its names say (`Workload.params_problem`: the step
    form's sync_every above steps), the first found over its sweep's points and its params_for; None where none."""
    for base in (params, *({**params, **own} for own in params_for.values())):
        for point in itertools.product(*sweep.values()):
            problem = workload.params_problem({**base, **dict(zip(sweep, point, strict=True))})
            if problem:
                return problem
    return None


def sweep_values(param: Param, values: Sequence[Any]) -> tuple[Any, ...]:
    """Check the values a param is swept over; raise ValueError with what was expected.

    A list param (sync_every) may be swept over plain numbers: each point then
    has the one-element list, e.g. sync_every: [1, 2, 4] runs [1], [2], [4].
    """
    if not isinstance(values, list) or not values:
        raise ValueError(f"expected a non-empty list of values to sweep {param.name} over, got {values!r}")
    checked = []
    for value in values:
        if param.kind == INTS and isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        checked.append(coerce_param(param, value))
    if any(checked.count(v) > 1 for v in checked):
        raise ValueError(f"values must be distinct, got {values!r}")
    return tuple(checked)


def check_sweep_size(sweep: Mapping[str, Sequence[Any]]) -> None:
    points = math.prod(len(v) for v in sweep.values())
    if points > MAX_SWEEP_POINTS:
        raise ValueError(f"the sweep has {points} points, more than {MAX_SWEEP_POINTS}; sweep fewer values")


def backend_name(value: Any) -> str:
    """A backend's name as a config or -b gives it; ValueError naming the known ones (and a close match)."""
    from asyncbench.backends import BACKENDS  # names and device kinds only: no framework is imported

    if not isinstance(value, str) or value not in BACKENDS:
        raise ValueError(f"unknown backend {value!r}{suggestion(str(value), BACKENDS)}; known: {', '.join(BACKENDS)}")
    return value


def device_spec(value: Any) -> str:
    """A device as a config or -d gives it (auto, cpu, cuda, cuda:N); ValueError for a malformed one."""
    from asyncbench.backends import DEVICE_PATTERN

    if not isinstance(value, str) or not DEVICE_PATTERN.match(value):
        raise ValueError(f"malformed device {value!r}: expected auto, cpu, cuda or cuda:N{_second_cpu_note(value)}")
    return value


def _second_cpu_note(value: Any) -> str:
    """Why `cpu:N` is no device to run on, where one was written: the docs name `cpu:1` as the second CPU device
    (JAX's, MXNet's) that only `multi_device` pairs with `cpu`, picked by the workload itself."""
    if not isinstance(value, str) or not re.fullmatch(r"cpu:\d+", value):
        return ""
    return " (only multi_device uses a second CPU device, cpu:1, and it pairs it with cpu on its own: give cpu)"


def builtin_names() -> list[str]:
    return list(BUILT_IN)


def workload_of(value: Any, base_dir: Path) -> tuple[str, Workload]:
    """A workload name's key and the workload it names: a built-in's name, or a user workload's canonical
    reference (a file relative to `base_dir`, a module, or a plugin), loaded and validated here; ValueError if
    none. The key is what experiments and cases carry (a worker loads a user's workload again by it)."""
    if isinstance(value, str) and value in BUILT_IN:
        return value, BUILT_IN[value]
    if isinstance(value, str) and (wrong := fields.name_problem(value)):
        # before anything is imported or run: the reference is stored in the results (config.experiments[].workload),
        # whose readers refuse such a name (results.recordable.names_in), so a run would write a file none reads
        raise ValueError(f"a workload reference {wrong}")
    if isinstance(value, str) and (plugins.is_reference(value) or value in plugins.plugins()):
        try:
            key = plugins.canonical(value, base_dir)
            if wrong := fields.name_problem(key):  # the file as resolved: its folder's name too
                raise ValueError(f"a workload reference {wrong}")
            return key, plugins.load(key)
        except InputError as exc:
            raise ValueError(exc.message) from None
    names = builtin_names()
    raise ValueError(f"unknown workload {value!r}{suggestion(str(value), names)}; known: {', '.join(names)}; or {YOUR_OWN}")
