"""A results file held to its vocabulary before `record` stores it.

`schema.load` reads a results file to render it, and tolerates what it
need not understand. The history keeps what a file says for good and shows
it in pages and terminals, so `record` first checks the file's JSON here,
key by key (results.fields): its header (schema version, creation time,
tool, run id, environment), and each result's names, status, reason,
params, clocks and samples, metrics with their intervals and units, checks,
sampling, traces and notes. Times are finite and never negative; a NaN,
which asyncbench never writes (it writes null), is refused wherever it
stands. A field that fails is an InputError naming the file and the key,
and nothing is stored.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Mapping

from asyncbench.results import fields
from asyncbench.results.fields import At
from asyncbench.results.model import CLOCKS, MAX_SHARDS, STATUSES, StopReason, Verdict
from asyncbench.results.reference import Reference
from asyncbench.results.syncs import SYNC_KINDS

# The first results schema (schema.py's history starts at 1); a newer one than asyncbench reads is refused by
# schema.check_version, which runs first.
FIRST_SCHEMA = 1
# A container nested deeper than this in params or the environment is no benchmark's: the store writes both as
# JSON, and Python's encoder recurses once per level.
MAX_DEPTH = 32
# A count (samples, rounds) above this is no measurement's: a billion samples of the fastest op take minutes.
MAX_COUNT = 10**9
# A plan's digest: sha256 in hex (results.shards.digest).
# A census round follows a timed round, and a case stopped before six timed rounds is topped up to six
# (measure.census.CENSUS_ROUNDS): a census holds no more rounds than the larger of the two. A file that claims
# more (10**15 rounds: a check on its step would allocate a list per round) is no asyncbench file.
CENSUS_TOP_UP = 6
PLAN_DIGEST = re.compile(r"[0-9a-f]{64}")
STOP_REASONS = [str(reason) for reason in StopReason]
VERDICTS = [str(verdict) for verdict in Verdict]


def check_file(raw: Any, source: str) -> None:
    """InputError (file and key) for the first field of a results file's JSON that the store must not take."""
    at = At(source)
    top = fields.mapping(raw, at)
    version = top.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version < FIRST_SCHEMA:
        (at / "schema_version").fail(f"{version} is not a results schema (they start at {FIRST_SCHEMA})")
    created(top.get("created"), at / "created")
    tool = fields.mapping(top.get("tool"), at / "tool")
    fields.name(tool.get("version", "?"), at / "tool" / "version")
    fields.run_id(top.get("run_id"), at / "run_id")
    flag(top.get("interrupted", False), at / "interrupted")
    check_environment(top.get("environment", {}), at / "environment")
    config = fields.optional_mapping(top.get("config"), at / "config")
    nested(config, at / "config")
    names_in(config, at / "config")  # the config's names, as `validate` holds them (spec.config)
    _metric_info(top.get("metric_info"), at / "metric_info")
    shard(top.get("shard"), at / "shard")
    results = fields.listed(top.get("results"), at / "results")
    seen: dict[Any, int] = {}
    for index, result in enumerate(results):
        _result(result, at / "results" / index)
        first = seen.setdefault(result.get("id"), index)
        if first != index:  # compare, the history and merge match rows by id: a second row would be read as the first's
            (at / "results" / index / "id").fail(f"{result.get('id')!r} is also results[{first}]'s: a case is one row")


def created(value: Any, at: At) -> str:
    """An ISO 8601 time, as asyncbench writes a run's creation time."""
    text = fields.name(value, at)
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        at.fail(f"{text[:80]!r} is not a time (ISO 8601, e.g. 2026-11-23T12:00:00+00:00)")
    return text


def flag(value: Any, at: At) -> bool:
    if not isinstance(value, bool):
        at.fail(f"expected true or false, got {value!r:.80}")
    return value


def identity(case: Mapping[str, Any], at: At) -> None:
    """What a row or a shard's planned case says it is: its id, experiment and workload (names), its backend and
    device (identifiers), its params (params())."""
    for key in ("id", "experiment", "workload"):
        fields.name(case.get(key), at / key, empty=False)
    for key in ("backend", "device"):
        fields.identifier(case.get(key), at / key)
    params(case.get("params"), at / "params")


def params(raw: Any, at: At) -> Mapping[str, Any]:
    """A case's params as the store takes them: a mapping (or none), named by names, nested no deeper than MAX_DEPTH."""
    found = fields.optional_mapping(raw, at)
    nested(found, at)
    for name in found:
        fields.name(name, at / name)
    names_in(found, at)  # a param's value names its case: held to the names' rule, as `validate` holds it
    return found


def nested(value: Any, at: At) -> None:
    """Refuse containers nested deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            at.fail(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, Mapping):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def names_in(value: Any, at: At) -> None:
    """Every string in `value` (nested no deeper than MAX_DEPTH: `nested` first) held to the names' rule."""
    stack = [(value, at)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            fields.name(item, where)
        elif isinstance(item, Mapping):
            stack.extend((child, where / str(key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, where / index) for index, child in enumerate(item))


def check_environment(raw: Any, at: At) -> Mapping[str, Any]:
    """The facts the store reads from a run's environment: its revision, host, CPU and frameworks."""
    environment = fields.mapping(raw, at)
    nested(environment, at)
    fields.sha(environment.get("git_sha"), at / "git_sha")
    fields.optional_name(environment.get("hostname"), at / "hostname")
    fields.optional_name(environment.get("cpu"), at / "cpu")
    cores = environment.get("cpu_cores_logical")
    if cores is not None:
        fields.count(cores, at / "cpu_cores_logical")
    frameworks = fields.optional_mapping(environment.get("frameworks"), at / "frameworks")
    for framework, facts in frameworks.items():
        fields.name(framework, at / "frameworks" / framework)
        if not isinstance(facts, Mapping):
            continue
        version = facts.get("version")
        if version is not None:
            fields.name(version, at / "frameworks" / framework / "version")
        devices = fields.optional_mapping(facts.get("devices"), at / "frameworks" / framework / "devices")
        for device, detail in devices.items():
            where = at / "frameworks" / framework / "devices" / device
            fields.name(device, where)
            shown = detail.get("name", detail) if isinstance(detail, Mapping) else detail
            fields.name(str(shown), where)  # as machine.describe names it
    return environment


def shard(raw: Any, at: At) -> None:
    """Which shard of which plan a run measured (`run --shard I/N`; absent: the whole plan): 1 <= index <= count,
    the plan's digest in hex, and the cases the shard was to run, each named as a result's are."""
    if raw is None:
        return
    facts = fields.mapping(raw, at)
    index, count = fields.count(facts.get("index"), at / "index"), fields.count(facts.get("count"), at / "count")
    if not 1 <= count <= MAX_SHARDS:
        (at / "count").fail(f"{count} shards: a plan is cut into 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        (at / "index").fail(f"shard {index} of {count}: shards count from 1 to {count}")
    plan = facts.get("plan")
    if not isinstance(plan, str) or not PLAN_DIGEST.fullmatch(plan):
        (at / "plan").fail(f"{str(plan)[:80]!r} is not a plan's digest (64 hex digits)")
    planned = fields.count(facts.get("plan_cases"), at / "plan_cases")
    cases = fields.listed(facts.get("cases", []), at / "cases")
    if len(cases) > planned:
        (at / "cases").fail(f"{len(cases)} cases in a shard of a plan of {planned}")
    for number, case in enumerate(cases):
        where = at / "cases" / number
        identity(fields.mapping(case, where), where)
    positions = fields.listed(facts.get("positions", []), at / "positions")
    if len(positions) != len(cases):
        (at / "positions").fail(f"{len(positions)} positions for {len(cases)} cases")
    for number, position in enumerate(positions):
        if fields.count(position, at / "positions" / number) >= planned:
            (at / "positions" / number).fail(f"{position} is beyond the plan's {planned} cases")


def _metric_info(raw: Any, at: At) -> None:
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


def _result(raw: Any, at: At) -> None:
    result = fields.mapping(raw, at)
    identity(result, at)
    fields.word(result.get("status"), at / "status", STATUSES)
    fields.optional_text(result.get("reason"), at / "reason")
    for name, variant in fields.optional_mapping(result.get("variants"), at / "variants").items():
        fields.name(name, at / "variants" / name)
        _variant(variant, at / "variants" / name)
    for name, value in fields.optional_mapping(result.get("metrics"), at / "metrics").items():
        fields.name(name, at / "metrics" / name)
        if value is not None and not isinstance(value, bool):  # null: undefined this run; bool: a yes/no metric
            fields.number(value, at / "metrics" / name)
    for name, bounds in fields.optional_mapping(result.get("bounds"), at / "bounds").items():
        fields.interval(bounds, at / "bounds" / name)
    for index, check in enumerate(fields.optional_list(result.get("checks"), at / "checks")):
        _check(check, at / "checks" / index)
    _sampling(result.get("sampling"), at / "sampling")
    for variant, path in fields.optional_mapping(result.get("traces"), at / "traces").items():
        fields.name(variant, at / "traces" / variant)
        fields.name(path, at / "traces" / variant)
    for index, warning in enumerate(fields.optional_list(result.get("warnings"), at / "warnings")):
        fields.text(warning, at / "warnings" / index)
    for key in ("note", "reading", "trace_detail"):
        fields.optional_text(result.get(key), at / key)
    flag(result.get("unavailable", False), at / "unavailable")
    if result.get("asynchronous") is not None:
        flag(result["asynchronous"], at / "asynchronous")
    duration(result.get("case_s"), at / "case_s")
    fields.optional_name(result.get("machine"), at / "machine")
    _metric_info(result.get("metric_info"), at / "metric_info")
    Reference.check(result.get("reference"), at / "reference")
    timed = max((_timed_rounds(variant) for variant in fields.optional_mapping(result.get("variants"), at).values()), default=0)
    for variant, census in fields.optional_mapping(result.get("syncs"), at / "syncs").items():
        fields.name(variant, at / "syncs" / variant)
        _census(census, at / "syncs" / variant, max(timed, CENSUS_TOP_UP))


def _timed_rounds(variant: Mapping[str, Any]) -> int:
    """The timed rounds a variant's samples hold (checked by _variant before)."""
    return len((variant.get("samples") or {}).get("done_s") or ())


def _census(raw: Any, at: At, most_rounds: int) -> None:
    """A variant's census (schema 9, results.syncs): its rounds (no more than the case's timed rounds allow), and
    each point's line, kind, counts and waits, one per round."""
    census = fields.mapping(raw, at)
    rounds = fields.count(census.get("rounds"), at / "rounds")
    if rounds > most_rounds:
        (at / "rounds").fail(f"{rounds} census rounds in a case of at most {most_rounds} timed rounds")
    if census.get("steps_per_call") is not None and fields.count(census["steps_per_call"], at / "steps_per_call") < 1:
        (at / "steps_per_call").fail("a call of a variant runs at least one step")
    for key in ("coverage", "note"):
        fields.optional_text(census.get(key), at / key)
    for index, point in enumerate(fields.optional_list(census.get("points"), at / "points")):
        where = at / "points" / index
        point = fields.mapping(point, where)
        fields.name(point.get("file"), where / "file")
        fields.count(point.get("line"), where / "line")
        fields.word(point.get("kind"), where / "kind", SYNC_KINDS)
        fields.name(point.get("call"), where / "call")
        fields.number(point.get("calls_per_step"), where / "calls_per_step")
        duration(point.get("wait_s_per_step"), where / "wait_s_per_step")
        fields.interval(point.get("wait_ci_s"), where / "wait_ci_s")
        fields.optional_number(point.get("drained_per_step"), where / "drained_per_step")
        for per_round, check in (("calls_rounds", _waits), ("wait_s_rounds", duration)):
            values = fields.optional_list(point.get(per_round), where / per_round)
            if values and len(values) != rounds:
                (where / per_round).fail(f"{len(values)} values for a census of {rounds} rounds")
            if fields.all_numbers(values, least=0):  # the whole list at once; else each value, to name the one
                continue
            for number, value in enumerate(values):
                check(value, where / per_round / number)


def _waits(value: Any, at: At) -> None:
    """Waits per step in one census round: a number, not negative (a fraction where a wait comes every few steps)."""
    if fields.number(value, at) < 0:
        at.fail(f"a count of waits cannot be negative ({value:g})")


def duration(value: Any, at: At) -> float | None:
    """A time in seconds: finite and not negative (or null)."""
    seconds = fields.optional_number(value, at)
    if seconds is not None and seconds < 0:
        at.fail(f"a time cannot be negative ({seconds:g})")
    return seconds


def _variant(raw: Any, at: At) -> None:
    variant = fields.mapping(raw, at)
    samples = fields.mapping(variant.get("samples"), at / "samples")
    for clock in CLOCKS:
        values = samples.get(clock)
        if values is None:
            continue
        values = fields.listed(values, at / "samples" / clock)
        if fields.all_numbers(values, least=0):  # the whole list at once; else each value, to name the one
            continue
        for index, value in enumerate(values):
            if duration(value, at / "samples" / clock / index) is None:
                (at / "samples" / clock / index).fail("expected a time, got null")
    for clock in CLOCKS:
        stats = variant.get(clock)
        if stats is None and clock == "device_s":
            continue
        where = at / clock
        stats = fields.mapping(stats, where)
        for key in ("median", "iqr", "min", "max"):
            if duration(stats.get(key), where / key) is None:
                (where / key).fail("expected a time, got null")
        low, high = duration(stats.get("ci_low"), where / "ci_low"), duration(stats.get("ci_high"), where / "ci_high")
        if low is not None and high is not None and low > high:
            (where / "ci_low").fail(f"{low:g} is above ci_high {high:g}")
        n = fields.count(stats.get("n"), where / "n")
        if n > MAX_COUNT:
            (where / "n").fail(f"{n} samples is more than any run takes ({MAX_COUNT:g})")
    for key, value in fields.optional_mapping(variant.get("memory"), at / "memory").items():
        fields.optional_number(value, at / "memory" / key)


def _check(raw: Any, at: At) -> None:
    check = fields.mapping(raw, at)
    fields.text(check.get("expect"), at / "expect")
    fields.word(check.get("verdict"), at / "verdict", VERDICTS)
    fields.text(check.get("detail", ""), at / "detail")
    if not isinstance(check.get("value"), bool):  # a yes/no metric's check holds its yes or no
        fields.optional_number(check.get("value"), at / "value")
    fields.interval(check.get("bounds"), at / "bounds")
    for key in ("confidence", "family_error"):
        fields.optional_number(check.get(key), at / key)


def _sampling(raw: Any, at: At) -> None:
    if not raw:
        return
    sampling = fields.mapping(raw, at)
    rounds = fields.count(sampling.get("rounds"), at / "rounds")
    if rounds > MAX_COUNT:
        (at / "rounds").fail(f"{rounds} rounds is more than any run takes ({MAX_COUNT:g})")
    fields.word(sampling.get("stopped_by"), at / "stopped_by", STOP_REASONS)
    for key in ("elapsed_s", "max_time_s"):
        duration(sampling.get(key), at / key)
    for key in ("rel_noise", "max_rel_noise", "lag1_autocorrelation"):
        fields.optional_number(sampling.get(key), at / key)
