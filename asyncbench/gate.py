"""`expect:` checks: a tiny grammar for "speedup >= 3", and their verdicts on a result.

    check    := quantity [ "." stat ] [ "[" variant "]" ] op number [ unit ]
    quantity := a metric of the workload (speedup, epoch_s_k2...) | issue_s | done_s | device_s
    stat     := median | min | max | iqr | ci_low | ci_high          (clocks only; default median)
    op       := <  <=  >  >=
    unit     := ns us µs ms s (seconds) · x (ratios) · % (fractions)

A regular expression splits the text; nothing is ever evaluated. A clock
without `[variant]` must hold for every variant of the case. Errors are
ValueErrors whose message says what was expected; the config loader adds the
file, line and key.
"""

from __future__ import annotations

import operator
import re
from typing import Any, Callable, Mapping

from asyncbench import units
from asyncbench.errors import suggestion
from asyncbench.model import CLOCKS, OK, Expectation, Result
from asyncbench.workloads.base import Workload

OPERATORS: dict[str, Callable[[float, float], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
CLOCK_STATS = ("median", "min", "max", "iqr", "ci_low", "ci_high")
#: the units a threshold may carry, by the quantity's declared unit, as factors to the base unit
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "s": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9},
    "x": {"x": 1.0, "×": 1.0},
    "%": {"%": 0.01},
}
PASS = "pass"
FAIL = "fail"

_CHECK = re.compile(
    r"""\s*(?P<quantity>[A-Za-z_]\w*)
        (?:\.(?P<stat>\w+))?
        (?:\[(?P<variant>[^\[\]]+)\])?
        \s*(?P<op><=|>=|<|>)\s*
        (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
        \s*(?P<unit>[A-Za-zµ×%]+)?\s*""",
    re.VERBOSE,
)
EXAMPLES = "e.g. 'speedup >= 1.5', 'overlap_efficiency > 0.5' or 'done_s.median < 10ms'"


def _variant_known(workload: Workload, name: str) -> bool:
    """Declared variants are names, or a pattern with K for a number ("sync_every=K (one per ...)")."""
    for declared in workload.variants:
        pattern = re.escape(declared.split()[0]).replace("K", r"\d+")
        if re.fullmatch(pattern, name):
            return True
    return False


def unit_of(workload: Workload, quantity: str) -> str:
    """The declared unit of a metric, or "s" for a clock."""
    declared = workload.metric(quantity)
    return declared.unit if declared else "s"


def parse(text: Any, workload: Workload) -> Expectation:
    """Parse one check against `workload`'s metrics, clocks and variants; ValueError if it does not fit."""
    if not isinstance(text, str):
        raise ValueError(f"expected a check as a string, {EXAMPLES}; got {text!r}")
    match = _CHECK.fullmatch(text)
    if match is None:
        hint = " (comparisons are <, <=, > and >=)" if re.search(r"==|!=|=>|=<|(?<![<>])=", text) else ""
        raise ValueError(f"malformed check {text!r}{hint}: expected QUANTITY OP NUMBER, {EXAMPLES}")
    quantity, stat, variant = match["quantity"], match["stat"], match["variant"]
    is_metric = workload.metric(quantity) is not None and stat is None and variant is None
    if not is_metric:
        if quantity not in CLOCKS:
            metrics = [m.name for m in workload.metrics]
            raise ValueError(
                f"unknown metric {quantity!r} for {workload.name}{suggestion(quantity, metrics + list(CLOCKS))}; "
                f"metrics: {', '.join(metrics)}; clocks: {', '.join(CLOCKS)} (with .median, .min, ...)"
            )
        stat = stat or "median"
        if stat not in CLOCK_STATS:
            raise ValueError(f"unknown statistic {stat!r}{suggestion(stat, list(CLOCK_STATS))}; one of: {', '.join(CLOCK_STATS)}")
        if variant is not None and not _variant_known(workload, variant.strip()):
            raise ValueError(
                f"{workload.name} has no variant {variant.strip()!r}{suggestion(variant.strip(), list(workload.variants))}; "
                f"variants: {', '.join(workload.variants)}"
            )
    threshold = float(match["number"])
    unit = match["unit"]
    if unit is not None:
        declared_unit = unit_of(workload, quantity) if is_metric else "s"
        factors = UNIT_FACTORS.get(declared_unit, {})
        if unit not in factors:
            allowed = f"one of {', '.join(factors)} or none" if factors else "a plain number"
            raise ValueError(f"unit {unit!r} does not fit {quantity} (unit {declared_unit or 'none'}): use {allowed}")
        threshold *= factors[unit]
    return Expectation(
        text=text.strip(),
        quantity=quantity,
        op=match["op"],
        threshold=threshold,
        stat=None if is_metric else stat,
        variant=None if is_metric or variant is None else variant.strip(),
    )


def _measured(expectation: Expectation, result: Result) -> tuple[float | None, str]:
    """The value a check compares, and what it is; for clocks the worst variant's value."""
    if expectation.stat is None:
        return result.metrics.get(expectation.quantity), expectation.quantity
    names = [expectation.variant] if expectation.variant else list(result.variants)
    values = []
    for name in names:
        variant = result.variants.get(name)
        stats = getattr(variant, expectation.quantity) if variant is not None else None
        if stats is None:
            return None, f"{expectation.quantity}.{expectation.stat}[{name}]"
        values.append((getattr(stats, expectation.stat), name))
    if not values:
        return None, expectation.quantity
    worst = max if expectation.op in ("<", "<=") else min
    value, name = worst(values)
    return value, f"{expectation.quantity}.{expectation.stat}[{name}]"


def evaluate(expectations: tuple[Expectation, ...], result: Result, workload: Workload) -> tuple[dict[str, Any], ...]:
    """Each check's verdict on an ok result, as stored in the JSON: expect, verdict, value, detail.

    A check whose quantity was not measured fails: a gate that cannot be
    evaluated must not pass silently.
    """
    if result.status != OK:
        return ()
    checks = []
    for expectation in expectations:
        value, label = _measured(expectation, result)
        shown_unit = unit_of(workload, expectation.quantity) if expectation.stat is None else "s"
        wanted = f"{expectation.op} {units.quantity(expectation.threshold, shown_unit)}"
        if value is None:
            checks.append({"expect": expectation.text, "verdict": FAIL, "value": None, "detail": f"{label} was not measured"})
            continue
        passed = OPERATORS[expectation.op](value, expectation.threshold)
        detail = f"{label} = {units.quantity(value, shown_unit)}, expected {wanted}"
        if not passed and expectation.threshold:
            off = abs(value - expectation.threshold) / abs(expectation.threshold)
            detail += f" ({'over' if value > expectation.threshold else 'short'} by {off * 100:.3g}%)"
        checks.append({"expect": expectation.text, "verdict": PASS if passed else FAIL, "value": value, "detail": detail})
    return tuple(checks)


def failed(check: Mapping[str, Any]) -> bool:
    return check.get("verdict") != PASS
