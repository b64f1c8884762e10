"""The step form's figures as a results file holds them, held to the samples they were computed from.

A step form's case (workloads.step_form) times one variant per `sync_every` value, named `sync_every=K`, each
sample `steps` of the user's steps, and its metrics are functions of each round's clocks, summarized as the median
over the rounds (engine.rounds.figures): `step_s_kK` a sample's done time over `steps`, `slowdown_kK` variant K's done
time over variant 0's in the same round, `illusion` variant 0's done time over its issue time. The names are the
step form's own, and this module is where they are spelled (the step form and the report read them from here).

Every number a metric is made from is in the file, so a reader can recompute it: a metric moved together with its
interval (slowdown_k1 50× [40–60] where the rounds give 0.91×) passes the check that a metric lies within its own
interval (results.recordable.within_own_interval) yet is no measurement: `check` refuses it, naming the metric.
Only a result with the step form's whole signature is held to this (a `steps` count, variants named `sync_every=K`,
a `step_s_kK` metric per variant): another workload's metric of the same name means what that workload says.
"""

from __future__ import annotations

import re
import statistics
from typing import Any, Mapping, Sequence

from asyncbench.results import recordable
from asyncbench.results.fields import At
from asyncbench.results.model import OK, Result
from asyncbench.results.round_held import RELATIVE_ROOM, SAMPLE_ROUNDING_S

#: the prefix of the step form's per-step time metrics (step_s_k0, step_s_k4)
STEP_METRIC = "step_s_k"
#: the prefix of its slowdowns against the variant that never waits (slowdown_k1)
SLOWDOWN_METRIC = "slowdown_k"
#: variant 0's done time over its issue time
ILLUSION = "illusion"
#: the number a per-variant metric's name ends with: K of its variant `PARAM=K` (epoch_s_k2: 2)
PER_VARIANT_NUMBER = re.compile(r"_k(\d+)$")
#: the param a step form's (and training_memory's) variants are numbered by: one variant `sync_every=K` per value K
FAMILY_PARAM = "sync_every"


def variant_name(every: int) -> str:
    """The step form's variant that waits every `every` steps (0: never)."""
    return f"{FAMILY_PARAM}={every}"


def is_step_form(result: Result) -> bool:
    """Whether `result` has the step form's whole signature (a `steps` count among its params, variants all named
    `sync_every=K`, a `step_s_kK` metric for each): what a reader tells a step's result by, with no step to import
    (workloads.stored_readings rebuilds its reading from the step form's own rule)."""
    steps = result.params.get("steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1 or not result.variants:
        return False
    family = [name.partition("=") for name in result.variants]
    return all(param == FAMILY_PARAM and every.isdigit() and f"{STEP_METRIC}{int(every)}" in result.metrics for param, _, every in family)


def _every(name: str, prefix: str) -> int | None:
    digits = name.removeprefix(prefix)
    return int(digits) if name.startswith(prefix) and digits.isdigit() else None


def check(result: Mapping[str, Any], at: At) -> None:
    """InputError naming the metric where a step form's `step_s_kK`, `slowdown_kK` or `illusion` (the result
    checked field by field before) is not the median over the rounds of what its variants' samples give."""
    for name, per_round in metric_rounds(result).items():
        value = (result.get("metrics") or {}).get(name)
        if value is not None and not isinstance(value, bool):
            _holds(value, per_round, at / "metrics" / name)


def metric_rounds(result: Mapping[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Each of a stored step form's `step_s_kK`, `slowdown_kK` and `illusion` metrics, one value a round as its
    variants' stored samples give it (engine.rounds.per_round), with how far the samples' rounding can move it:
    the rounds its median and every interval of it are taken from. A metric of no step form, or one whose rounds
    the samples do not give (a variant without samples, a round whose bottom rounds to 0), is left out."""
    steps = (result.get("params") or {}).get("steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        return {}  # no step form (records.check refuses a step form's own `steps` that is no count)
    done: dict[int, Sequence[float]] = {}
    issue: dict[int, Sequence[float]] = {}
    metrics = result.get("metrics") or {}
    for name in metrics:
        every = _every(name, STEP_METRIC)
        samples = ((result.get("variants") or {}).get(variant_name(every)) or {}).get("samples") if every is not None else None
        if every is None or not samples:
            continue
        done[every], issue[every] = samples.get("done_s") or (), samples.get("issue_s") or ()
    if not done:
        return {}
    variants = (result.get("variants") or {}).values()  # engine.rounds.per_round: the rounds every variant has
    rounds = min(len((variant.get("samples") or {}).get("done_s") or ()) for variant in variants)
    found: dict[str, list[tuple[float, float]]] = {}
    for name in metrics:
        if (every := _every(name, STEP_METRIC)) is not None and every in done:
            per_round = [(done[every][i] / steps, SAMPLE_ROUNDING_S / steps) for i in range(rounds)]
        elif (every := _every(name, SLOWDOWN_METRIC)) is not None and every in done and 0 in done:
            per_round = round_ratios(done[every], done[0], rounds)
        elif name == ILLUSION and 0 in done and len(issue[0]) >= rounds:
            per_round = round_ratios(done[0], issue[0], rounds)
        else:
            continue
        if per_round:
            found[name] = per_round
    return found


def measured(result: Mapping[str, Any], variants: Mapping[str, Any], at: At) -> None:
    """InputError naming the key where a result's figures are of variants it does not hold: a result of status ok
    with none (every figure of a case is of its variants' samples), or a per-variant metric (`epoch_s_k2`,
    `slowdown_k4`) whose variant is not among a family's (`sync_every=2`); a step form's slowdown or illusion
    without the variant that never waits (`sync_every=0`) they are measured against; a variant of a family its
    params list (`sync_every: [0, 4, 1]`) other than those they give, or one they give missing (a run measures one
    variant per value: spec.config, the workloads' `setup`). Such a file is edited: a variant renamed (`x`) beside
    metrics still named for it (`step_s_k4`) would be shown as measured."""
    if result.get("status") == OK and not variants:
        (at / "variants").fail(f"a result of status ok with no variants, so its figures are of none: {recordable.NOT_WRITTEN}")
    params = result.get("params") or {}
    metrics = result.get("metrics") or {}
    param = _family(variants, params, metrics)
    if param is None:
        return  # no numbered family of variants (sync_every=K): a metric's name says nothing of them
    step_form = param == FAMILY_PARAM and isinstance(params.get("steps"), int)
    for name in metrics:
        number = PER_VARIANT_NUMBER.search(name)
        needed = [f"{param}={int(number[1])}"] if number else []
        if step_form and (name.startswith(SLOWDOWN_METRIC) or name == ILLUSION):
            needed.insert(0, variant_name(0))
        for variant in needed:
            if variant not in variants:
                (at / "metrics" / name).fail(
                    f"a figure of variant {variant!r}, which the result does not have (its variants: {', '.join(variants) or 'none'}): "
                    f"{recordable.NOT_WRITTEN}"
                )
    listed = _numbers(params.get(param))
    if variants and listed is not None:
        given = [f"{param}={every}" for every in dict.fromkeys(listed)]
        said = f"its params' {param}: {listed} gives {', '.join(given)}"
        for name in variants:
            if name not in given:
                (at / "variants" / name).fail(f"a variant its params do not give ({said}): {recordable.NOT_WRITTEN}")
        for name in given:
            if name not in variants:
                (at / "variants").fail(f"no variant {name!r}, which its params give ({said}): {recordable.NOT_WRITTEN}")


def _family(variants: Mapping[str, Any], params: Mapping[str, Any], metrics: Mapping[str, Any]) -> str | None:
    """The param a result's numbered variants are named by (`sync_every` of `sync_every=4`), where they share one;
    where none is numbered, `sync_every` if its params list it and a per-variant metric names one of its values (the
    step form's and training_memory's family, its variants renamed all); None else (several families, or none)."""
    numbered = {param for param, equals, every in (name.partition("=") for name in variants) if equals and every.isdigit()}
    if numbered:
        return numbered.pop() if len(numbered) == 1 else None
    listed = _numbers(params.get(FAMILY_PARAM))
    if listed is None:
        return None
    numbers = (PER_VARIANT_NUMBER.search(name) for name in metrics)
    return FAMILY_PARAM if any(number is not None and int(number[1]) in listed for number in numbers) else None


def _numbers(value: Any) -> list[int] | None:
    """`value` where it is a list param's values, as a family's are (a list of whole numbers >= 0); None else."""
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return value
    return None


def round_ratios(top: Sequence[float], bottom: Sequence[float], rounds: int) -> list[tuple[float, float]]:
    """Each round's top / bottom (a round whose bottom is 0 adds none, as the step form's round_metrics gives
    None there), with how far the samples' rounding can move it."""
    found = []
    for i in range(rounds):
        if bottom[i] <= SAMPLE_ROUNDING_S:  # 0, or within the rounding of 0: whether it counted is not known
            return []
        ratio = top[i] / bottom[i]
        found.append((ratio, SAMPLE_ROUNDING_S * (1 + ratio) / (bottom[i] - SAMPLE_ROUNDING_S)))
    return found


def _holds(value: float, per_round: list[tuple[float, float]], at: At) -> None:
    """A median moves no further than the furthest any one value can: refused when `value` lies beyond that (the
    step form's own wording; results.round_held holds the other workloads' figures and their intervals)."""
    if not per_round:
        return
    found = statistics.median(figure for figure, _ in per_round)
    room = max(error for _, error in per_round) + RELATIVE_ROOM * abs(found)
    if abs(value - found) > room:
        at.fail(f"{value:g} is not what its variants' samples give (their rounds' median is {found:g}): {recordable.NOT_WRITTEN}")
