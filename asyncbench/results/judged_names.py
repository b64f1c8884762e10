"""What `ab` judges of a case of a built-in workload, by name: an `ab` file's ratios held to it.

engine.paired names each ratio of a case after what it judged: a variant both
sides have that its workload gates (Workload.gated: not an instrumentation
variant such as sync_async's `queued`), or a rate metric of its workload
(engine.paired_ratios.directed_metrics). A file from elsewhere may name a
ratio anything (`<img src=x onerror=alert(1)>`), and what it names is shown as
a row of the comparison and recorded as a series of the history: escaped
there, but a measurement of nothing. Where a case states its workload (schema
4 on) and that workload ships with asyncbench, its names are known without
running anything, and each ratio is held to them. A user's workload (a file, a
module, a plugin) is not imported to read a file: its ratios' names are held
only to what every name is (results.fields), each once (results.paired_held).

The names are kept here, not asked of workloads.BUILT_IN: results are read
without the workloads, which import the frameworks (the layers and "Reading
results imports no framework" in pyproject.toml). tests/results/test_judged_names.py
holds this table to the workloads' own declarations.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from asyncbench.results.fields import At

#: how a declared family of variants is named: one variant per value of a list param ("sync_every=K": training_memory's
#: sync_every=1, sync_every=4, from its params' sync_every: [1, 4])
FAMILY_END = "=K"

#: each built-in workload's variants a gate judges (a family as PARAM=K) and its rate metrics, by workload name
BUILT_IN: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "matmul": (("matmul",), ("gflops",)),
    "sync_async": (("sync", "async"), ()),
    "barrier": (("waitall", "wait_one"), ()),
    "conversion": (("none", "item", "numpy", "print"), ()),
    "copy_overlap": (("compute", "copy", "sequential", "overlapped", "naive_nonblocking"), ("copy_gbps",)),
    "multi_device": (("first", "second", "together"), ()),
    "training_memory": (("sync_every=K",), ()),
    "small_ops": (("serial", "parallel"), ()),
    "comm_overlap": (("compute_only", "comm_only", "blocking", "overlapped"), ("allreduce_gbps",)),
}


def variants(declared: Sequence[str], params: Mapping[str, Any]) -> tuple[str, ...]:
    """The variant names `declared` gives a case of `params`: each as declared, a family one per value of its param."""
    names: list[str] = []
    for name in declared:
        if name.endswith(FAMILY_END):
            param = name[: -len(FAMILY_END)]
            values = params.get(param)
            names += [f"{param}={value}" for value in values] if isinstance(values, list) else []
        else:
            names.append(name)
    return tuple(names)


def hold(workload: str | None, params: Mapping[str, Any] | None, named: Sequence[tuple[str, str]], at: At) -> None:
    """Each of a case's ratios (`named`: its (kind, name) pairs, in order) names what `ab` judges of its `workload`
    where that is built in: a variant it gates, or a rate metric of it; a refusal at ratios[i].name otherwise. A case
    of a user's workload, or of a file before schema 4 (no workload stated), is left as read."""
    judged = BUILT_IN.get(workload or "")
    if judged is None:
        return
    known = {"variant": variants(judged[0], params or {}), "metric": judged[1]}
    for index, (kind, name) in enumerate(named):
        names = known.get(kind, ())
        if name not in names:
            (at / index / "name").fail(f"{name!r} is no {kind} of {workload} that `ab` judges ({', '.join(names) or 'none'})")
