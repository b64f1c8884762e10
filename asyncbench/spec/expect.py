"""`expect:` checks: a tiny grammar for "speedup >= 3", checked against a workload's declarations.

    check    := quantity [ "." stat ] [ "[" variant "]" ] op number [ unit ]
    quantity := a metric of the workload (speedup, epoch_s_k2...) | issue_s | done_s | device_s
    stat     := median | min | max | iqr | ci_low | ci_high          (clocks only; default median)
    op       := <  <=  >  >=
    unit     := ns us µs ms s (seconds) · x (ratios) · % (fractions)

A regular expression splits the text; nothing is ever evaluated. A clock
without `[variant]` must hold for every variant of the case. Errors are
ValueErrors whose message says what was expected; the config loader adds the
file, line and key.
Their verdicts are `verdicts.checks`'s.
"""

from __future__ import annotations

import re
from typing import Any

from asyncbench.errors import suggestion
from asyncbench.results.model import CLOCKS, Expectation
from asyncbench.workloads.base import Workload

CLOCK_STATS = ("median", "min", "max", "iqr", "ci_low", "ci_high")
#: the units a threshold may carry, by the quantity's declared unit, as factors to the base unit
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "s": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9},
    "x": {"x": 1.0, "×": 1.0},
    "%": {"%": 0.01},
}

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
