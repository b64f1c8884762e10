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

Verdicts follow the 95% interval of what is checked (a metric's bounds, a
clock median's CI): PASS when the whole interval satisfies the check, FAIL
when the whole interval violates it, INCONCLUSIVE when it straddles the
threshold (or there were too few rounds for an interval), NOT_MEASURED when
the case did not run or the quantity does not exist. Single measurements
(memory) and sample statistics (min, max, ...) are compared as they are.
"""

from __future__ import annotations

import operator
import re
from typing import Any, Callable, Iterable, Mapping

from asyncbench.results import units
from asyncbench.errors import suggestion
from asyncbench.results.model import CLOCKS, ERROR, OK, Expectation, Result
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
INCONCLUSIVE = "inconclusive"  # the 95% interval straddles the threshold
NOT_MEASURED = "not measured"  # the case did not run, or the quantity does not exist there
#: worst first: a clock check over several variants takes the worst verdict among them
SEVERITY = (FAIL, NOT_MEASURED, INCONCLUSIVE, PASS)
# A value this many times the threshold away is said as a multiple, not a percentage.
FAR_MISS = 10.0

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


def verdict_of(op: str, interval: tuple[float, float], threshold: float) -> str:
    """PASS when the whole interval satisfies the comparison, FAIL when the whole of it violates it, else INCONCLUSIVE."""
    holds = OPERATORS[op]
    low, high = interval
    if holds(low, threshold) and holds(high, threshold):
        return PASS
    if not holds(low, threshold) and not holds(high, threshold):
        return FAIL
    return INCONCLUSIVE


def _by_how_much(value: float, threshold: float) -> str:
    """'over by 40%', 'short by 20%', or '3761× the threshold' for a far miss (never '3.76e+05%')."""
    if not threshold:
        return ""
    off = abs(value - threshold) / abs(threshold)
    if off >= FAR_MISS:
        return f" ({units.number(value / threshold)}× the threshold)"
    return f" ({'over' if value > threshold else 'short'} by {units.percent(off, 3)})"


def _judge(expectation: Expectation, value: float | None, interval: tuple[float, float] | None, point: bool,
           label: str, unit: str, rounds: int | None) -> dict[str, Any]:
    """One check's verdict on one measured quantity: its value and 95% interval (or a single measurement: `point`)."""
    wanted = f"expected {expectation.op} {units.quantity(expectation.threshold, unit)}"
    if value is None:
        return {"verdict": NOT_MEASURED, "value": None, "detail": f"{label} was not measured"}
    if point:
        verdict = verdict_of(expectation.op, (value, value), expectation.threshold)
        shown = f"{label} = {units.quantity(value, unit)} (one measurement, no interval), {wanted}"
    elif interval is None:
        verdict = INCONCLUSIVE
        few = f"{rounds} round{'' if rounds == 1 else 's'}" if rounds is not None else "too few rounds"
        shown = f"{label} = {units.quantity(value, unit)}, {wanted}: no 95% interval from {few} (6 are needed)"
    else:
        verdict = verdict_of(expectation.op, interval, expectation.threshold)
        shown = f"{label} = {units.with_bounds(value, interval, unit)}, {wanted}"
        if verdict == INCONCLUSIVE:
            shown += ": the 95% interval straddles the threshold; more rounds (max_time_s) may decide it"
    if verdict == FAIL:
        shown += _by_how_much(value, expectation.threshold)
    check = {"verdict": verdict, "value": value, "detail": shown}
    if interval is not None and not point:
        check["bounds"] = list(interval)
    return check


def _clock_check(expectation: Expectation, result: Result) -> dict[str, Any]:
    """A clock's statistic must hold for every variant (or the named one): the verdict of the worst."""
    names = [expectation.variant] if expectation.variant else list(result.variants)
    judged = []
    for name in names:
        variant = result.variants.get(name)
        stats = getattr(variant, expectation.quantity) if variant is not None else None
        label = f"{expectation.quantity}.{expectation.stat}[{name}]"
        if stats is None:
            judged.append(_judge(expectation, None, None, True, label, "s", None))
            continue
        value = getattr(stats, expectation.stat)
        if expectation.stat == "median":
            interval = (stats.ci_low, stats.ci_high) if stats.ci_low is not None and stats.ci_high is not None else None
            judged.append(_judge(expectation, value, interval, False, label, "s", stats.n))
        else:  # min, max, iqr, ci_low, ci_high: facts about this run's samples, not estimates
            judged.append(_judge(expectation, value, None, True, label, "s", stats.n))
    if not judged:
        return {"verdict": NOT_MEASURED, "value": None, "detail": f"{expectation.quantity} was not measured"}
    return min(judged, key=lambda check: SEVERITY.index(check["verdict"]))


def evaluate(expectations: tuple[Expectation, ...], result: Result, workload: Workload) -> tuple[dict[str, Any], ...]:
    """Each check's verdict, as stored in the JSON: expect, verdict, value, bounds (when there is an interval), detail.

    A check on a case that did not run, or on a quantity that was not
    measured, is NOT_MEASURED: a gate that cannot be evaluated must not pass.
    """
    checks = []
    for expectation in expectations:
        if result.status != OK:
            what = "errored" if result.status == ERROR else "was skipped"
            check = {"verdict": NOT_MEASURED, "value": None, "detail": f"the case {what}: {result.reason or 'no reason given'}"}
        elif expectation.stat is None:
            rounds = result.sampling.rounds if result.sampling is not None else None
            check = _judge(
                expectation,
                result.metrics.get(expectation.quantity),
                result.bounds.get(expectation.quantity),
                expectation.quantity not in result.bounds,
                expectation.quantity,
                unit_of(workload, expectation.quantity),
                rounds,
            )
        else:
            check = _clock_check(expectation, result)
        checks.append({"expect": expectation.text, **check})
    return tuple(checks)


def failed(check: Mapping[str, Any], allow_inconclusive: bool = False) -> bool:
    """Whether a check fails the gate: failed or not measured; inconclusive too unless allowed."""
    verdict = check.get("verdict")
    return verdict != PASS and not (allow_inconclusive and verdict == INCONCLUSIVE)


def decided(checks: Iterable[Mapping[str, Any]]) -> bool:
    """Whether more samples cannot change any verdict's kind: none is inconclusive."""
    return all(check.get("verdict") != INCONCLUSIVE for check in checks)
