"""The metrics each built-in workload, and the step form, writes: what a stored result of theirs may hold.

`records.check` holds a metric's value to a number and its interval to it; a hand edit can still add a metric no
run writes (`"bogus": 1.0` in a sync_async result), which `show` printed, `record` stored and the report charted as
measured. A result of a built-in workload (its `workload` is the built-in's name: a config's `workload:` finds the
built-in first, so no plugin goes by it) or of the step form (step_figures' whole signature) holds only the metrics
that workload declares, per-variant ones named by their K (`epoch_s_k2` of `epoch_s_kK`).

The results layer reads files with no workload imported, so the names are written here: the workloads are above it
(docs/architecture.md), and tests/results/test_metric_names.py holds this table to their declarations. A user's
own workload (a file, a module, a plugin) declares its own metrics, which this file cannot know: those are left as
they are.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.results import recordable, step_figures
from asyncbench.results.fields import At

#: a per-variant metric's declared name ends with this in place of its K (workloads.base.PER_VARIANT_SUFFIX)
PER_VARIANT = "_kK"

#: what a run adds to any workload whose setup checks its own results (engine.runner: Prepared.verify), declared or not
VERIFIED = "verified"
#: each built-in workload's declared metrics (workloads.BUILT_IN[name].metrics), with those an earlier version wrote
BUILT_IN_METRICS: Mapping[str, frozenset[str]] = {
    "matmul": frozenset({"issue_s", "done_s", "illusion", "gflops"}),
    # speedup_ci_low/high: sync_async's own interval of its speedup, before results kept every metric's (`bounds`)
    "sync_async": frozenset({"speedup", "t1_s", "t2_s", "t3_s", "model_error", "t2_missed", "speedup_ci_low", "speedup_ci_high"}),
    "barrier": frozenset({"waitall_s", "wait_one_s", "saved_fraction"}),
    "conversion": frozenset({"slowdown_item", "slowdown_numpy", "slowdown_print", "item_cost_s", "numpy_cost_s", "print_cost_s"}),
    "copy_overlap": frozenset({"overlap_speedup", "overlap_saved_s", "overlap_efficiency", "copy_gbps", "naive_speedup", "verified"}),
    "multi_device": frozenset({"parallel_speedup", "overlap_efficiency", "parts_ratio"}),
    "training_memory": frozenset(
        {
            "epoch_s_kK",
            "loop_s_kK",
            "host_rss_delta_mb_kK",
            "host_uss_delta_mb_kK",
            "device_peak_mb_kK",
            "device_reserved_mb_kK",
            "pool_used_mb_kK",
            "pool_total_mb_kK",
        }
    ),
    "small_ops": frozenset({"speedup", "overlap_efficiency"}),
    "comm_overlap": frozenset({"speedup", "overlap_efficiency", "allreduce_gbps", "verified"}),
}
#: the step form's metrics (workloads.step_reading), spelled by step_figures
STEP_FORM_METRICS = frozenset({f"{step_figures.STEP_METRIC}K", f"{step_figures.SLOWDOWN_METRIC}K", step_figures.ILLUSION})
#: the built-in (and step form) time metrics (unit `s`, named `…_s` or `…_s_kK`) declared `signed`: a difference of two
#: times, which may lie below 0 (a wait that cost nothing, an overlap that cost); every other one is a duration
SIGNED_TIMES = frozenset({"t3_s", "item_cost_s", "numpy_cost_s", "print_cost_s", "overlap_saved_s"})
#: how a time metric's declared name ends (results.units: a metric's unit is its name's suffix)
TIME_SUFFIXES = ("_s", f"_s{PER_VARIANT}")


def declared_name(name: str) -> str:
    """A metric's name as declared: `epoch_s_k2` -> `epoch_s_kK`; any other as it is."""
    number = step_figures.PER_VARIANT_NUMBER.search(name)
    return name[: number.start()] + PER_VARIANT if number else name


def written_by(result: Mapping[str, Any]) -> tuple[str, frozenset[str]] | None:
    """(what wrote it, the metrics it writes) for a stored result of a built-in workload or of the step form; None
    for a user's own workload, whose metrics are its own."""
    workload = result.get("workload")
    if isinstance(workload, str) and workload in BUILT_IN_METRICS:
        return f"workload {workload!r}", BUILT_IN_METRICS[workload]
    if _is_step_form(result):
        return "the step form", STEP_FORM_METRICS
    return None


def held(result: Mapping[str, Any], at: At) -> None:
    """InputError naming the first metric (or a metric's interval) of `result` (checked field by field before)
    that its workload never writes, where that workload is known here (`written_by`)."""
    known = written_by(result)
    if known is None:
        return
    who, names = known
    for key in ("metrics", "bounds"):
        for name in result.get(key) or {}:
            if declared_name(str(name)) not in names | {VERIFIED}:
                (at / key / str(name)).fail(
                    f"{str(name)[:80]!r} is no metric {who} writes ({', '.join(sorted(names))}): {recordable.NOT_WRITTEN}"
                )


def never_negative(result: Mapping[str, Any], at: At) -> None:
    """InputError naming the first time metric of `result` (checked field by field before) below 0 where its
    built-in workload (or the step form) declares it a duration, not a difference (SIGNED_TIMES): an edited
    `t1_s: -1e-6` was shown as "below 0 by 1.00 µs", recorded and charted. Held also where the samples are not
    kept to recompute it from (results.workload_figures), and for figures no rule restates."""
    if written_by(result) is None:
        return
    for name, value in (result.get("metrics") or {}).items():
        declared = declared_name(str(name))
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if declared.endswith(TIME_SUFFIXES) and declared not in SIGNED_TIMES and is_number and value < 0:
            (at / "metrics" / str(name)).fail(f"{value:g}: a time below 0, where {declared!r} is a duration: {recordable.NOT_WRITTEN}")


def _is_step_form(result: Mapping[str, Any]) -> bool:
    """step_figures.is_step_form of a stored result: a `steps` count, variants all `sync_every=K`, a `step_s_kK`
    metric for each."""
    steps = (result.get("params") or {}).get("steps")
    variants, metrics = result.get("variants") or {}, result.get("metrics") or {}
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1 or not variants:
        return False
    family = [str(name).partition("=") for name in variants]
    return all(
        param == step_figures.FAMILY_PARAM and every.isdigit() and f"{step_figures.STEP_METRIC}{int(every)}" in metrics
        for param, _, every in family
    )
