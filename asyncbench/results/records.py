"""One result as one JSON record: a line of the results file, a record of the journal, and back.

Raw samples are kept to the nanosecond; each workload's metric declarations
(unit and meaning) are stored once per file, not on each of its results.
A stored result is checked here too, key by key (`check`), before it is read
back (`result_from_dict`): the writer, the checks and the reader of one
result's JSON side by side, so a new field of a result is added in one place.
Nothing here knows about files: `schema` writes and reads whole reports,
`journal` appends records one by one.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from asyncbench.results import case_held, fields, metric_names, recordable, step_figures, traces_held
from asyncbench.results.bound import bound_from_dict, bound_to_dict
from asyncbench.results.bound_rule import check_derived
from asyncbench.results.bound_shape import check_bound, check_shares_cores
from asyncbench.results.budget import rounds_for_median
from asyncbench.results.check_rule import held_to_its_rule
from asyncbench.results.fields import At
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
from asyncbench.results.nanoseconds import nanoseconds
from asyncbench.results.reference import Reference
from asyncbench.results.sampling_held import check_harness, check_rounds_taken, check_sampling, check_steps, timed_rounds
from asyncbench.results.syncs import census_from_dict, census_to_dict, check_census
from asyncbench.results.variant_held import check_variant

# A census round follows a timed round, and a case stopped before six timed rounds is topped up to six
# (measure.census.CENSUS_ROUNDS); a case with census checks is topped up to the rounds their intervals need
# (verdicts.checks.census_rounds_needed: 14 for four checks at a 1% family rate, so a 2-second case of 9 timed rounds
# holds 14). A census holds no more rounds than the largest of the three. A file that claims more (10**15 rounds: a
# check on its step would allocate a list per round) is no asyncbench file.
CENSUS_TOP_UP = 6
# The most census rounds any check's interval can need: a confidence is a float below 1, so a check's miss rate is at
# least 2⁻⁵³ (one below 1 by the float's step), which the median of 54 rounds meets (budget.rounds_for_median). Not a
# count a census takes unasked: a bound the reader holds a file to, whatever budget the run that wrote it had.
CENSUS_CHECK_MOST = rounds_for_median(math.nextafter(1.0, 0.0))
VERDICTS = [str(verdict) for verdict in Verdict]


def _finite(value: Any) -> Any:
    """JSON has no NaN/inf: store them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _figure(value: Any) -> Any:
    """A metric's figure (or an end of its interval, or a check's value) as stored: a number, or null. A user's
    workload may answer a yes or no (True from run_metrics, a median of True rounds): stored as the 1 or 0 it
    counts as, as the runner's own `verified` is, since the reader refuses a bool where a number goes (`true` is no
    measurement: an edit of one was shown as `1 GFLOP/s`, outside its own interval)."""
    return float(value) if isinstance(value, bool) else _finite(value)


def _flat(record: Any) -> dict[str, Any]:
    """A dataclass of plain fields (Stats, Memory, Sampling, MetricInfo) as a dict: what dataclasses.asdict
    gives, without its recursive deep copy, which made serializing a result three times slower."""
    return dict(vars(record))


def _variant_to_dict(variant: VariantResult) -> dict[str, Any]:
    return {
        "samples": {clock: None if (values := getattr(variant.samples, clock)) is None else nanoseconds(values) for clock in CLOCKS},
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
        "metrics": {name: _figure(value) for name, value in result.metrics.items()},
        "bounds": {name: None if b is None else [_figure(b[0]), _figure(b[1])] for name, b in result.bounds.items()},
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
    if result.bound:
        stored["bound"] = {variant: bound_to_dict(bound) for variant, bound in result.bound.items()}
    if declared is not None and declared.get(result.workload) == result.metric_info:
        del stored["metric_info"]
    return stored


def check_to_dict(check: Check) -> dict[str, Any]:
    """A check as stored: expect, verdict, value, bounds, the confidence it was judged at (of its interval, or of the
    one it had too few rounds for), detail, the false-alarm rate it shared with the run's other checks, and a check on
    the slack's delay as run it was judged by."""
    stored: dict[str, Any] = {"expect": check.expect, "verdict": check.verdict.value, "value": _figure(check.value), "detail": check.detail}
    if check.bounds is not None:
        stored["bounds"] = [_figure(check.bounds[0]), _figure(check.bounds[1])]
    if check.confidence is not None:
        stored["confidence"] = check.confidence
    if check.family_error is not None:
        stored["family_error"] = check.family_error
    if check.rounds is not None:
        stored["rounds"] = check.rounds
    if check.delay_as_run_s is not None:
        stored["delay_as_run_s"] = check.delay_as_run_s
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
        rounds=raw.get("rounds"),
        delay_as_run_s=raw.get("delay_as_run_s"),
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
        bound={str(variant): bound_from_dict(str(variant), bound) for variant, bound in (raw.get("bound") or {}).items()},
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


# --- a stored result held to its vocabulary before it is read (what `show`, `compare` and `record` take) ---


def check_metric_info(raw: Any, at: At) -> None:
    """{workload: {metric: {unit, help}}} (schema 4 on) or a result's own {metric: {unit, help}}."""
    for workload, infos in fields.optional_mapping(raw, at).items():
        infos = fields.mapping(infos, at / workload)
        if "unit" in infos and not isinstance(infos["unit"], Mapping):  # a result's own: one level
            fields.unit(infos["unit"], at / workload / "unit")
            fields.text(infos.get("help", ""), at / workload / "help")
            continue
        for metric, info in infos.items():
            info = fields.mapping(info, at / workload / metric)
            fields.unit(info.get("unit"), at / workload / metric / "unit")
            fields.text(info.get("help", ""), at / workload / metric / "help")


def check(raw: Any, at: At) -> None:
    """InputError (file and key) for the first field of a stored result that the store must not take: its names,
    status, reason, params, clocks and samples, metrics with their intervals and units, checks (each held to the
    rule that judged it: results.check_rule), sampling, traces, notes, reference, census and bound."""
    result = fields.mapping(raw, at)
    case_held.known_keys(result, case_held.CASE_KEYS, at)
    recordable.identity(result, at)
    case_held.identity_held(result, at)
    fields.word(result.get("status"), at / "status", STATUSES)
    fields.optional_text(result.get("reason"), at / "reason")
    case_held.status_held(result, at)
    for name, variant in fields.optional_mapping(result.get("variants"), at / "variants").items():
        fields.name(name, at / "variants" / name)
        check_variant(variant, at / "variants" / name)
    for name, value in fields.optional_mapping(result.get("metrics"), at / "metrics").items():
        fields.name(name, at / "metrics" / name)
        if value is not None:  # null: undefined this run; a bool is no number (a yes/no is stored as 1 or 0: _figure)
            fields.number(value, at / "metrics" / name)
    metrics = fields.optional_mapping(result.get("metrics"), at / "metrics")
    for name, bounds in fields.optional_mapping(result.get("bounds"), at / "bounds").items():
        fields.interval(bounds, at / "bounds" / name)
        recordable.within_own_interval(metrics.get(name), bounds, at / "metrics" / name)
    metric_names.held(result, at)  # a built-in workload's (or the step form's) metrics are those it writes
    metric_names.never_negative(result, at)  # and a duration of theirs is not below 0
    check_steps(result, at)
    step_figures.measured(result, fields.optional_mapping(result.get("variants"), at / "variants"), at)
    step_figures.check(result, at)  # a step form's metrics are what its variants' samples give
    bounded = list(fields.optional_mapping(result.get("bounds"), at / "bounds"))  # judged from an interval, null or not
    for index, stored in enumerate(fields.optional_list(result.get("checks"), at / "checks")):
        _check_verdict(stored, at / "checks" / index, metrics, bounded)
        case_held.check_figures_held(stored, at / "checks" / index, result)
    check_sampling(result.get("sampling"), at / "sampling")
    for variant, path in fields.optional_mapping(result.get("traces"), at / "traces").items():
        fields.name(variant, at / "traces" / variant)
        fields.name(path, at / "traces" / variant)
    traces_held.check(result, at)  # each a file `--trace` wrote: one of its variants', an absolute path, its name
    for index, warning in enumerate(fields.optional_list(result.get("warnings"), at / "warnings")):
        fields.text(warning, at / "warnings" / index)
    for key in ("note", "reading", "trace_detail"):
        fields.optional_text(result.get(key), at / key)
    recordable.flag(result.get("unavailable", False), at / "unavailable")
    if result.get("asynchronous") is not None:
        recordable.flag(result["asynchronous"], at / "asynchronous")
    case_s = recordable.measured_time(result.get("case_s"), at / "case_s")
    fields.optional_name(result.get("machine"), at / "machine")
    check_metric_info(result.get("metric_info"), at / "metric_info")
    Reference.check(result.get("reference"), at / "reference", case_s)
    check_harness(result.get("harness"), at / "harness")
    timed = max((timed_rounds(variant) for variant in fields.optional_mapping(result.get("variants"), at).values()), default=0)
    check_rounds_taken(result.get("sampling"), timed, at, fields.optional_mapping(result.get("variants"), at))
    for variant, census in fields.optional_mapping(result.get("syncs"), at / "syncs").items():
        fields.name(variant, at / "syncs" / variant)
        check_census(census, at / "syncs" / variant, timed, max(timed, CENSUS_TOP_UP, CENSUS_CHECK_MOST))
    measured = fields.optional_mapping(result.get("variants"), at / "variants")
    for variant, bound in fields.optional_mapping(result.get("bound"), at / "bound").items():
        fields.name(variant, at / "bound" / variant)
        if variant not in measured:  # each variant's bound is fitted from rounds interleaved with its timed ones
            named = ", ".join(sorted(measured)) or "none"
            (at / "bound" / variant).fail(f"a bound of variant {variant!r}, which the result does not have (its variants: {named})")
        check_bound(bound, at / "bound" / variant)
        check_shares_cores(bound, result.get("device"), at / "bound" / variant)  # what the device says it must be
        check_derived(bound, at / "bound" / variant)  # its reading and ceiling are what its own slacks give


def _check_verdict(raw: Any, at: At, metrics: Mapping[str, Any], bounded: list[str]) -> None:
    """A stored check: its vocabulary, then its verdict and its detail's threshold held to what its own interval and
    its text's threshold give (results.check_rule): `show`, `record` and the report would otherwise say a gate its
    numbers contradict (a "pass" beside an interval wholly above the threshold). `metrics`: its result's;
    `bounded`: those of them stored with an interval (one judged from it; null: it had none, INCONCLUSIVE)."""
    check = fields.mapping(raw, at)
    fields.text(check.get("expect"), at / "expect")
    fields.word(check.get("verdict"), at / "verdict", VERDICTS)
    fields.text(check.get("detail", ""), at / "detail")
    fields.optional_number(check.get("value"), at / "value")  # a bool is no number: a yes/no is stored as 1 or 0 (_figure)
    fields.interval(check.get("bounds"), at / "bounds")
    for key in ("confidence", "family_error", "delay_as_run_s"):
        fields.optional_number(check.get(key), at / key)
    if check.get("rounds") is not None:
        fields.count(check["rounds"], at / "rounds")
    held_to_its_rule(check, at, metrics, bounded)
