"""What the history records of one result: each variant's clocks, its census, its bound, its metrics, and its machine.

A row per quantity (variant, quantity, unit, value with its interval) becomes a point of that quantity's series
(history.recording). The machine's rows (`machine_s`, `cpu_pressure`, variant "") are what history.discount reads
to take the machine's moves out of the case's times.
"""

from __future__ import annotations

from typing import Any

from asyncbench.history import discount, model
from asyncbench.results import stats
from asyncbench.results.bound import Bound, BoundKind
from asyncbench.results.model import OK, Result
from asyncbench.results.reference import Reference
from asyncbench.verdicts import syncs


def quantities(result: Result) -> list[dict[str, Any]]:
    """A result's recorded quantities: each variant's clocks (median and interval), its census's waits and time
    blocked per step (`run --syncs`: verdicts.syncs, the figures its checks read), what bounds its step (`run
    --bound`: each side's slack with its interval, and the reading), each metric with its interval."""
    if result.status != OK:
        return []
    rows = []
    for name, variant in result.variants.items():
        for clock in ("done_s", "issue_s", "device_s"):
            summary = getattr(variant, clock)
            if summary is not None:
                rows.append(
                    {
                        "variant": name,
                        "quantity": clock,
                        "unit": "s",
                        "value": summary.median,
                        "low": summary.ci_low,
                        "high": summary.ci_high,
                    }
                )
    for name, census in result.syncs.items():  # `run --syncs`: where the step waited, whole step, per variant
        for quantity in syncs.SYNC_QUANTITIES:
            found = syncs.figure(census, quantity)
            if found is not None:  # no rounds: a synchronous backend, or no census could be taken
                low, high = found.interval or (None, None)
                rows.append(
                    {
                        "variant": name,
                        "quantity": quantity,
                        "unit": syncs.SYNC_UNITS[quantity],
                        "value": found.value,
                        "low": low,
                        "high": high,
                    }
                )
    for name, bound in result.bound.items():  # `run --bound`: what bounds the step, per variant
        rows += _bound_rows(name, bound)
    if result.reference is not None:  # the machine while the case ran (history.discount takes it out of its times)
        rows += _machine_rows(result.reference)
    for metric, value in result.metrics.items():
        if value is None or value != value:  # NaN: undefined this run
            continue
        bounds = result.bounds.get(metric)
        rows.append(
            {
                "variant": "",
                "quantity": metric,
                "unit": result.unit_of(metric) or "",
                "value": float(value),
                "low": bounds[0] if bounds else None,
                "high": bounds[1] if bounds else None,
            }
        )
    return rows


def _machine_rows(reference: Reference) -> list[dict[str, Any]]:
    """The machine's reference time (median, and the interval of that median where its samples give one: none where
    they drifted together, as for any median, stats.median_ci) and the CPU pressure while the case sampled (a
    fraction, shown as a percentage: history.model.shown_unit)."""
    interval = stats.median_ci(reference.samples_s)
    rows = [
        {
            "variant": "",
            "quantity": discount.MACHINE_QUANTITY,
            "unit": "s",
            "value": reference.median_s,
            "low": interval[0] if interval else None,
            "high": interval[1] if interval else None,
        }
    ]
    if reference.cpu_pressure is not None:
        rows.append(
            {"variant": "", "quantity": discount.PRESSURE_QUANTITY, "unit": "", "value": reference.cpu_pressure, "low": None, "high": None}
        )
    return rows


def _bound_rows(variant: str, bound: Bound) -> list[dict[str, Any]]:
    """A variant's bound as the history records it (history.model.BOUND_SLACKS, BOUND_READING): each measured
    side's slack per step with its interval, and the reading's code; nothing for a synchronous step or one whose
    sides were not measured (no slack to draw). A bootstrap's percentile interval need not hold its estimate (a
    slack at the top of the levels, whose resamples fall below it): the interval is then widened to reach it, as
    every point of the history lies within its own error bar (history.reading.figures)."""
    if bound.bound == BoundKind.SYNCHRONOUS or not bound.sides or str(bound.bound) not in model.BOUND_READINGS:
        return []
    rows: list[dict[str, Any]] = []
    for side in bound.sides:
        low, high = bound_interval(side.slack_s, side.slack_ci_s)
        quantity = model.BOUND_SLACKS[str(side.side)]
        rows.append({"variant": variant, "quantity": quantity, "unit": "s", "value": side.slack_s, "low": low, "high": high})
    code = model.BOUND_READINGS.index(str(bound.bound))
    rows.append({"variant": variant, "quantity": model.BOUND_READING, "unit": model.READING_UNIT, "value": code, "low": None, "high": None})
    return rows


def bound_interval(value: float, interval: tuple[float, float] | None) -> tuple[float | None, float | None]:
    """A slack's interval as recorded: as fitted, widened to reach the slack where it does not (none: none)."""
    if interval is None:
        return None, None
    return min(interval[0], value), max(interval[1], value)
