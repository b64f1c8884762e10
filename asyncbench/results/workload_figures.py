"""The paired figures of the built-in workloads as a results file holds them, held to the samples they were made from.

Each built-in workload's per-round metrics are functions of one round's clocks (its variants ran back to back) and
the case's params, summarized as the median over the rounds with the 95% interval of that median
(engine.rounds.figures): barrier's `saved_fraction` is a round's 1 − wait_one's issue time / waitall's, conversion's
`item_cost_s` a round's (item − none) done time over `n_iter`. Every number they are made from is in the file (the
samples, the params), so a reader recomputes them: a saved_fraction edited from 74% to 99% with its interval moved
along ([98–99.5]) passes the check that a metric lies within its own interval (results.recordable.within_own_interval)
yet is no measurement, and `show` printed it, even blaming a busy machine for the medians that contradict it. The file
is refused in one line naming the figure, as matmul's figures are (results.matmul_figures).

The rules below restate each workload's `round_metrics` (the layers keep workloads out of a results reader; a test
holds each rule to its workload's own on the same clocks); sync_async's model is one function both call
(results.sync_async_model). Only a result of a built-in workload is held (its
`workload` is the built-in's name: a user's workload is named by a reference, workloads.plugins.find), only a metric
the rule knows, and only where every variant keeps its samples. sync_async's fitted model (t1_s, t2_s, t3_s,
model_error) is of one round's clocks too: a t1_s edited from 827 ns to 5 µs was shown and read as measured. Figures
not made from the rounds (copy_overlap's `verified`, training_memory's memory, sync_async's t2_missed count) and
comm_overlap's (timed by its torch.distributed ranks, its bandwidth of a bucket layout the workload computes) are
left as stored; a time among them no run can give below 0 is refused there (results.metric_names.never_negative).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from asyncbench.results import round_held, step_figures
from asyncbench.results.fields import At
from asyncbench.results.model import Clocks
from asyncbench.results.round_held import SAMPLE_ROUNDING_S
from asyncbench.results.stats import overlap_efficiency
from asyncbench.results.sync_async_model import fit_model

#: one round's clocks: variant → clock (issue_s, done_s) → seconds, as the file stores them
Round = Mapping[str, Mapping[str, float]]
#: a metric's rule: its value in one round, from the case's params and that round's clocks (None: undefined there)
Rule = Callable[[Mapping[str, Any], Round], "float | None"]
# How far a round's figure may move under the samples' rounding is taken to first order, one clock nudged at a
# time; this factor covers the second order and a rule's kinks (overlap efficiency's max)
ROUNDING_SAFETY = 4.0
#: the first schema version whose metrics are medians over the rounds (results.matmul_figures.PER_ROUND_SCHEMA)
PER_ROUND_SCHEMA = 2
#: the clocks a rule reads (device_s: sync_async's held queue, where the device had events)
_CLOCKS = ("issue_s", "done_s", "device_s")
#: bytes of an element of each dtype copy_overlap copies
_ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
#: B/s in a GB/s
_GIGA = 1e9


def _ratio(top: float, bottom: float) -> float | None:
    return top / bottom if bottom > 0 else None


def _done(variant: str) -> Callable[[Round], float]:
    return lambda clocks: clocks[variant]["done_s"]


def _barrier() -> dict[str, Rule]:
    def saved(_: Mapping[str, Any], c: Round) -> float | None:
        waitall = c["waitall"]["issue_s"]
        return 1 - c["wait_one"]["issue_s"] / waitall if waitall > 0 else None

    return {
        "waitall_s": lambda _, c: c["waitall"]["issue_s"],
        "wait_one_s": lambda _, c: c["wait_one"]["issue_s"],
        "saved_fraction": saved,
    }


def _conversion() -> dict[str, Rule]:
    def slowdown(kind: str) -> Rule:
        return lambda _, c: _ratio(c[kind]["done_s"], c["none"]["done_s"])

    def cost(kind: str) -> Rule:
        return lambda p, c: (c[kind]["done_s"] - c["none"]["done_s"]) / p["n_iter"]

    kinds = ("item", "numpy", "print")
    return {**{f"slowdown_{kind}": slowdown(kind) for kind in kinds}, **{f"{kind}_cost_s": cost(kind) for kind in kinds}}


def _small_ops() -> dict[str, Rule]:
    def efficiency(p: Mapping[str, Any], c: Round) -> float | None:
        serial, n_tasks, workers = c["serial"]["done_s"], p["n_tasks"], p["workers"]
        shares = [len(range(w, n_tasks, workers)) / n_tasks * serial for w in range(min(workers, n_tasks))]
        return overlap_efficiency(shares, c["parallel"]["done_s"])

    return {"speedup": lambda _, c: _ratio(c["serial"]["done_s"], c["parallel"]["done_s"]), "overlap_efficiency": efficiency}


def _multi_device() -> dict[str, Rule]:
    def alone(c: Round) -> list[float]:
        return [c["first"]["done_s"], c["second"]["done_s"]]

    return {
        "parallel_speedup": lambda _, c: _ratio(sum(alone(c)), c["together"]["done_s"]),
        "overlap_efficiency": lambda _, c: overlap_efficiency(alone(c), c["together"]["done_s"]),
        "parts_ratio": lambda _, c: _ratio(max(alone(c)), min(alone(c))),
    }


def _copy_overlap() -> dict[str, Rule]:
    def copy_gbps(p: Mapping[str, Any], c: Round) -> float | None:
        copied = p["n_matrices"] * p["size"] * p["size"] * _ELEMENT_BYTES[p["dtype"]]
        return float(copied / c["copy"]["done_s"] / _GIGA)

    sequential, overlapped = _done("sequential"), _done("overlapped")
    return {
        "overlap_speedup": lambda _, c: sequential(c) / overlapped(c),
        "overlap_saved_s": lambda _, c: sequential(c) - overlapped(c),
        "overlap_efficiency": lambda _, c: overlap_efficiency([c["compute"]["done_s"], c["copy"]["done_s"]], overlapped(c)),
        "copy_gbps": copy_gbps,
        "naive_speedup": lambda _, c: sequential(c) / c["naive_nonblocking"]["done_s"],
    }


def _sync_async() -> dict[str, Rule]:
    """sync_async's figures of a round: its speedup, and its textbook model's (results.sync_async_model.fit_model,
    the arithmetic the workload itself computes them with)."""

    def clocks(c: Mapping[str, float]) -> Clocks:
        return Clocks(issue_s=c["issue_s"], done_s=c["done_s"], device_s=c.get("device_s"))

    def model(name: str) -> Rule:
        def rule(p: Mapping[str, Any], c: Round) -> float | None:
            queued = c.get("queued")
            fitted = fit_model(p["n_ops"], clocks(c["sync"]), clocks(c["async"]), None if queued is None else clocks(queued))
            return fitted[name]

        return rule

    return {
        "speedup": lambda _, c: _ratio(c["sync"]["done_s"], c["async"]["done_s"]),
        **{name: model(name) for name in ("t1_s", "t2_s", "t3_s", "model_error")},
    }


def _training_memory(name: str) -> Rule | None:
    """training_memory's per-variant clocks: `epoch_s_kK` variant sync_every=K's done time, `loop_s_kK` its issue
    time (its memory figures are one measurement each, not of the rounds)."""
    for prefix, clock in (("epoch_s_k", "done_s"), ("loop_s_k", "issue_s")):
        every = name.removeprefix(prefix)
        if name.startswith(prefix) and every.isdigit():
            variant = step_figures.variant_name(int(every))
            return lambda _, c: c[variant][clock]
    return None


#: each built-in workload's metrics that are functions of a round's clocks, by the workload's name
RULES: dict[str, dict[str, Rule]] = {
    "barrier": _barrier(),
    "conversion": _conversion(),
    "small_ops": _small_ops(),
    "multi_device": _multi_device(),
    "copy_overlap": _copy_overlap(),
    "sync_async": _sync_async(),
}
#: those whose metrics are named per variant (epoch_s_k4): the rule of a metric's name, None for none
FAMILY_RULES: dict[str, Callable[[str], Rule | None]] = {"training_memory": _training_memory}


def rule_of(workload: str, metric: str) -> Rule | None:
    """The rule of a built-in workload's per-round metric; None where the metric is not one (or not the built-in's)."""
    family = FAMILY_RULES.get(workload)
    return family(metric) if family is not None else RULES.get(workload, {}).get(metric)


def check(result: Mapping[str, Any], at: At, version: Any) -> None:
    """InputError naming the metric, or its `bounds`, where a built-in workload's per-round metric (the result
    checked field by field before, in a file of schema `version`) is not the median over the rounds its own samples
    give, or its interval not one those rounds can give (stats.is_median_interval_of)."""
    if not isinstance(version, int) or version < PER_ROUND_SCHEMA:
        return  # schema 1 divided the clocks' medians: its figures are as stored
    case, metrics, bounds = result.get("id"), result.get("metrics") or {}, result.get("bounds") or {}
    for name, per_round in metric_rounds(result).items():
        round_held.hold(at, case, name, metrics.get(name), bounds.get(name), per_round)


def metric_rounds(result: Mapping[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Each per-round metric a built-in workload's result states, one (value, room) a round as the stored samples
    give it (engine.rounds.per_round: the rounds every variant has, a round where it is undefined adds none), with
    how far the samples' rounding can move it. A metric no rule knows, or whose samples are not all kept, is left out."""
    workload = str(result.get("workload"))
    variants = result.get("variants") or {}
    if workload not in RULES and workload not in FAMILY_RULES or not isinstance(variants, Mapping) or not variants:
        return {}
    kept: dict[str, dict[str, Sequence[float]]] = {}
    for name, variant in variants.items():
        samples = (variant or {}).get("samples") if isinstance(variant, Mapping) else None
        if not isinstance(samples, Mapping) or not samples.get("done_s"):
            return {}  # samples not kept: nothing to recompute from
        kept[name] = {clock: samples.get(clock) or () for clock in _CLOCKS}
    rounds = min(len(clocks["done_s"]) for clocks in kept.values())
    params = result.get("params") or {}
    found: dict[str, list[tuple[float, float]]] = {}
    for name, value in (result.get("metrics") or {}).items():
        rule = rule_of(workload, str(name))
        if rule is None or value is None:
            continue
        per_round = []
        for index in range(rounds):
            clocks = {v: {clock: float(s[index]) for clock, s in c.items() if len(s) > index} for v, c in kept.items()}
            figure = _apply(rule, params, clocks)
            if figure is not None:
                per_round.append((figure, _room(rule, params, clocks, figure)))
        if per_round:
            found[name] = per_round
    return found


def _apply(rule: Rule, params: Mapping[str, Any], clocks: Round) -> float | None:
    """The rule's finite value in this round; None where it is undefined or reads what the file does not hold."""
    try:
        figure = rule(params, clocks)
    except (KeyError, TypeError, ZeroDivisionError, ValueError):
        return None
    return float(figure) if figure is not None and math.isfinite(figure) else None


def _room(rule: Rule, params: Mapping[str, Any], clocks: Round, figure: float) -> float:
    """How far the samples' rounding (SAMPLE_ROUNDING_S each) can move this round's figure: each clock nudged either
    way in turn, the moves summed (first order), times ROUNDING_SAFETY; inf where a nudge leaves the rule undefined
    (a clock within the rounding of a denominator's 0: whether the round counted is not known)."""
    moved = 0.0
    for variant, held in clocks.items():
        for clock, seconds in held.items():
            worst = 0.0
            for step in (-SAMPLE_ROUNDING_S, SAMPLE_ROUNDING_S):
                nudged = {**clocks, variant: {**held, clock: seconds + step}}
                other = _apply(rule, params, nudged)
                if other is None:
                    return math.inf
                worst = max(worst, abs(other - figure))
            moved += worst
    return ROUNDING_SAFETY * moved
