"""One result as one JSON record: a line of the results file, a record of the journal, and back.

Raw samples are kept to the nanosecond; each workload's metric declarations
(unit and meaning) are stored once per file, not on each of its results.
Nothing here knows about files: `schema` writes and reads whole reports,
`journal` appends records one by one.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from asyncbench.results import fields
from asyncbench.results.model import (
    CLOCKS,
    STATUSES,
    Check,
    HarnessCost,
    Memory,
    MetricInfo,
    Result,
    Samples,
    Sampling,
    Stats,
    Status,
    StopReason,
    VariantResult,
    Verdict,
)
from asyncbench.results.reference import Reference
from asyncbench.results.syncs import census_from_dict, census_to_dict

# Raw samples are stored to the nanosecond: the resolution of perf_counter (and finer than CUDA events'
# 0.5 µs), so nothing measured is lost, while the 17 digits of a float's repr would double the file.
SAMPLE_DECIMALS = 9


# From this many samples on, a list is rounded in one numpy operation rather than value by value: round() took more
# time than anything else in writing a merged report of long cases (1000 samples a clock); below it, numpy's
# call costs more than it saves.
VECTOR_FROM = 64
# rint(v * 1e9) / 1e9 is round(v, 9) (the double nearest the same whole number of nanoseconds) unless v * 1e9 lies
# within the product's rounding error of a half: below 1000 s that error is under 6e-5 ns, so a value within 1e-3 ns
# of a half, or of 1000 s or more (or not finite), is rounded one by one, and the file is the very same either way.
NEAR_HALF = 1e-3
VECTOR_BELOW_S = 1e3


def _nanoseconds(values: Sequence[float]) -> list[float]:
    """Raw samples as stored: each exactly round(v, SAMPLE_DECIMALS), a long list at C speed."""
    if len(values) < VECTOR_FROM or not {float}.issuperset(map(type, values)):
        return [round(v, SAMPLE_DECIMALS) for v in values]
    import numpy  # a dependency of asyncbench; imported where a long list is first written, never at start-up

    given = numpy.asarray(values, dtype=float)
    doubtful = ~(numpy.abs(given) < VECTOR_BELOW_S)  # NaN and infinities too: rounded one by one below
    scaled = numpy.where(doubtful, 0.0, given) * 10**SAMPLE_DECIMALS
    whole = numpy.rint(scaled)
    stored: list[float] = (whole / 10**SAMPLE_DECIMALS).tolist()
    doubtful |= numpy.abs(scaled - whole) > 0.5 - NEAR_HALF
    for index in numpy.flatnonzero(doubtful).tolist():
        stored[index] = round(values[index], SAMPLE_DECIMALS)
    return stored


def _finite(value: Any) -> Any:
    """JSON has no NaN/inf: store them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _flat(record: Any) -> dict[str, Any]:
    """A dataclass of plain fields (Stats, Memory, Sampling, MetricInfo) as a dict: what dataclasses.asdict
    gives, without its recursive deep copy, which made serializing a result three times slower."""
    return dict(vars(record))


def _variant_to_dict(variant: VariantResult) -> dict[str, Any]:
    return {
        "samples": {clock: None if (values := getattr(variant.samples, clock)) is None else _nanoseconds(values) for clock in CLOCKS},
        **{clock: _flat(s) if (s := getattr(variant, clock)) is not None else None for clock in CLOCKS},
        "memory": _flat(variant.memory),
    }


#: workload -> its metrics' units and meanings: stored once per file (and once per journal), not on each of
#: 10,000 results (where it was 14% of the file and of the time to load it)
Declared = dict[str, Mapping[str, MetricInfo]]


def declare(declared: Declared, result: Result) -> Mapping[str, MetricInfo] | None:
    """Note `result`'s metric declarations in `declared`; return them if they are new there (to be stored)."""
    if result.workload in declared or not result.metric_info:
        return None
    declared[result.workload] = result.metric_info
    return result.metric_info


def declared_to_dict(declared: Declared) -> dict[str, Any]:
    return {workload: {name: _flat(info) for name, info in infos.items()} for workload, infos in declared.items()}


def declared_from_dict(raw: Mapping[str, Any] | None) -> Declared:
    return {str(w): {str(k): MetricInfo(**v) for k, v in infos.items()} for w, infos in (raw or {}).items()}


def result_to_dict(result: Result, declared: Declared | None = None) -> dict[str, Any]:
    """A result as stored; its `metric_info` left out where `declared` holds the same for its workload."""
    stored = {
        "id": result.id,
        "experiment": result.experiment,
        "workload": result.workload,
        "backend": result.backend,
        "device": result.device,
        "params": dict(result.params),
        "status": result.status,
        "reason": fields.storable(result.reason),
        "variants": {name: _variant_to_dict(v) for name, v in result.variants.items()},
        "metrics": {name: _finite(value) for name, value in result.metrics.items()},
        "bounds": {name: None if b is None else [_finite(b[0]), _finite(b[1])] for name, b in result.bounds.items()},
        "checks": [check_to_dict(c) for c in result.checks],
        "note": fields.storable(result.note),
        "sampling": _flat(result.sampling) if result.sampling is not None else None,
        "unavailable": result.unavailable,
        "asynchronous": result.asynchronous,
        "warnings": list(result.warnings),
        "traces": dict(result.traces),
        "trace_detail": result.trace_detail,
        "metric_info": {name: _flat(info) for name, info in result.metric_info.items()},
        "reading": result.reading,
        "case_s": _finite(result.case_s),
    }
    if result.machine is not None:
        stored["machine"] = result.machine
    if result.harness is not None:
        stored["harness"] = {name: _finite(value) for name, value in _flat(result.harness).items()}
    if result.reference is not None:
        stored["reference"] = result.reference.to_dict()
    if result.syncs:
        stored["syncs"] = {variant: census_to_dict(census) for variant, census in result.syncs.items()}
    if declared is not None and declared.get(result.workload) == result.metric_info:
        del stored["metric_info"]
    return stored


def check_to_dict(check: Check) -> dict[str, Any]:
    """A check as stored: expect, verdict, value, bounds and their confidence (only with an interval), detail, and
    the false-alarm rate it shared with the run's other checks."""
    stored: dict[str, Any] = {"expect": check.expect, "verdict": check.verdict.value, "value": _finite(check.value), "detail": check.detail}
    if check.bounds is not None:
        stored["bounds"] = [_finite(check.bounds[0]), _finite(check.bounds[1])]
    if check.confidence is not None:
        stored["confidence"] = check.confidence
    if check.family_error is not None:
        stored["family_error"] = check.family_error
    return stored


def check_from_dict(raw: Mapping[str, Any]) -> Check:
    bounds = raw.get("bounds")
    return Check(
        expect=str(raw["expect"]),
        verdict=Verdict(raw["verdict"]),
        detail=str(raw.get("detail", "")),
        value=raw.get("value"),
        bounds=(float(bounds[0]), float(bounds[1])) if bounds else None,
        confidence=raw.get("confidence"),
        family_error=raw.get("family_error"),
    )


def declared_by(results: Sequence[Result]) -> Declared:
    """The metric declarations of these results' workloads (the first result of each declares)."""
    declared: Declared = {}
    for result in results:
        declare(declared, result)
    return declared


# One encoder for every line: json.dumps with options builds a new one per call (half the time of a line),
# and a result's dict, made here, holds no cycles to check for.
_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


def result_line(result: Result, declared: Declared | None = None) -> str:
    """One result as one line of compact JSON: a record of the journal, a line of the results file."""
    return _LINE_ENCODER.encode(result_to_dict(result, declared))


def _stats(raw: Any) -> Stats | None:
    return None if raw is None else Stats(**raw)


def _samples(raw: Mapping[str, Any]) -> Samples:
    device = raw.get("device_s")
    return Samples(issue_s=tuple(raw["issue_s"]), done_s=tuple(raw["done_s"]), device_s=tuple(device) if device is not None else None)


def result_from_dict(raw: Mapping[str, Any], declared: Declared | None = None) -> Result:
    """A stored result; its metric declarations from itself, else from its workload's in `declared`."""
    if raw["status"] not in STATUSES:
        raise ValueError(f"unknown status {raw['status']!r}")
    return Result(
        id=raw["id"],
        experiment=raw["experiment"],
        workload=raw["workload"],
        backend=raw["backend"],
        device=raw["device"],
        params=raw.get("params", {}),
        status=Status(raw["status"]),
        reason=raw.get("reason"),
        variants={
            name: VariantResult(
                samples=_samples(v["samples"]),
                issue_s=Stats(**v["issue_s"]),
                done_s=Stats(**v["done_s"]),
                device_s=_stats(v.get("device_s")),
                memory=Memory(**v.get("memory", {})),
            )
            for name, v in raw.get("variants", {}).items()
        },
        metrics=raw.get("metrics", {}),
        bounds={name: None if b is None else (float(b[0]), float(b[1])) for name, b in (raw.get("bounds") or {}).items()},
        checks=tuple(check_from_dict(c) for c in raw.get("checks", ())),
        note=raw.get("note"),
        sampling=_sampling(raw.get("sampling")),
        unavailable=bool(raw.get("unavailable", False)),
        asynchronous=raw.get("asynchronous"),
        warnings=tuple(str(w) for w in raw.get("warnings") or ()),
        traces={str(k): str(v) for k, v in (raw.get("traces") or {}).items()},
        trace_detail=raw.get("trace_detail"),
        metric_info=(
            {str(k): MetricInfo(**v) for k, v in raw["metric_info"].items()}
            if raw.get("metric_info") is not None
            else (declared or {}).get(raw["workload"], {})
        ),
        reading=raw.get("reading"),
        case_s=raw.get("case_s"),
        machine=raw.get("machine"),
        harness=_harness(raw.get("harness")),
        syncs={str(variant): census_from_dict(str(variant), census) for variant, census in (raw.get("syncs") or {}).items()},
        reference=Reference.from_dict(raw.get("reference")),
    )


def _harness(raw: Mapping[str, Any] | None) -> HarnessCost | None:
    """The harness's own cost as stored (schema 7); None in older files and where it was not measured."""
    if not raw:
        return None
    return HarnessCost(sync_s=float(raw["sync_s"]), sync_high_s=float(raw["sync_high_s"]), issue_s=float(raw["issue_s"]), n=int(raw["n"]))


def _sampling(raw: Mapping[str, Any] | None) -> Sampling | None:
    if not raw:
        return None
    return Sampling(**{**raw, "stopped_by": StopReason(raw["stopped_by"])})
