"""What a file says about a run, held to its vocabulary: the checks a results file and an `ab` file share.

The history keeps what a file says for good and shows it in pages and
terminals, so every reader holds a file's JSON to its vocabulary key by key
(results.fields) before it builds anything from it. Here are the checks both
file formats make of a run: its creation time, its environment (revision,
host, CPU, frameworks), a case's identity and params, flags and times (finite
and never negative; a NaN, which asyncbench never writes, is refused wherever
it stands). A results file's own checks live with its reader and writer
(results.schema for the file, results.records for each result; results.ab_file
for an `ab` file). A field that fails is an InputError naming the file and the
key, and nothing is stored.
"""

from __future__ import annotations

import datetime
import math
import statistics
from typing import Any, Mapping

from asyncbench.results import fields
from asyncbench.results.fields import At

# A container nested deeper than this in params or the environment is no benchmark's: the store writes both as
# JSON, and Python's encoder recurses once per level.
MAX_DEPTH = 32
# A string (or a key) in params, the environment or the config longer than this is no value a run wrote: the
# longest text a writer stores is fields.MAX_TEXT (20,000 characters: fields.storable cuts an error's message to it),
# a framework's error quoted in the environment a few lines, a run's config names and paths; 64 Ki characters leaves
# room above all of them. The store keeps these for good: one colleague's 50 MB environment string grew it to 52.5 MB.
MAX_STRING_CHARS = 64 * 2**10
# Values (each number, string, list and mapping) in params, the environment or the config past this many are no run's:
# a run's environment holds 18 on NumPy alone and a few hundred with every framework and eight GPUs, a gathered
# sweep's one per host it ran on (`machines`), a config its sweeps' values; 200,000 is some four hundred such hosts.
# Each is read, compared and stored whole: a trial's 5 MB list of 1.5s in the environment took `compare` 44 s and
# 1.28 GB (printed whole as a difference), a 200 MB one `show` 102 s and 8.6 GB, and `record` stored it for good.
MAX_ITEMS = 200_000


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
    """Refuse containers nested deeper than MAX_DEPTH (walked without recursion), more than MAX_ITEMS values, and a
    string or a key longer than MAX_STRING_CHARS, naming its key."""
    stack = [(value, 0, at)]
    seen = 0
    while stack:
        item, depth, where = stack.pop()
        seen += 1
        if seen > MAX_ITEMS:
            at.fail(f"more than {MAX_ITEMS:,} values, more than any run writes")
        if depth > MAX_DEPTH:
            at.fail(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str) and len(item) > MAX_STRING_CHARS:
            where.fail(f"a string of {len(item):,} characters, longer than any value a run writes (at most {MAX_STRING_CHARS:,})")
        if isinstance(item, Mapping):
            for key, child in item.items():
                if len(str(key)) > MAX_STRING_CHARS:
                    where.fail(f"a key of {len(str(key)):,} characters, longer than any a run writes (at most {MAX_STRING_CHARS:,})")
                stack.append((child, depth + 1, where / str(key)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, where / index) for index, child in enumerate(item))


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


def duration(value: Any, at: At) -> float | None:
    """A time in seconds: finite and not negative (or null)."""
    seconds = fields.optional_number(value, at)
    if seconds is not None and seconds < 0:
        at.fail(f"a time cannot be negative ({seconds:g})")
    return seconds


# No time a run measured is longer than a year. A case is killed at its timeout_s (300 s unless set) and its samples stop
# at max_time_s (10 s unless set); a run on a cluster lives within its job's time limit, which sites cap at days. Neither
# setting has a ceiling of its own (Slurm's largest time limit, 0xFFFFFFFD minutes, is 8,000 years), but no machine
# runs a benchmark's case for a year: a sample, a clock's summary or a case's time beyond it is an edit (a file scaled
# to 1e198 s throughout, every figure consistent with the others, printed a 200-digit table and a +1000000…% shift).
# What a user set (sampling.max_time_s) is not held to it: only what was measured.
MAX_MEASURED_S = 365.25 * 24 * 3600


def measured_time(value: Any, at: At) -> float | None:
    """A time a run measured, in seconds (or null): a duration no longer than MAX_MEASURED_S."""
    seconds = duration(value, at)
    if seconds is not None and seconds > MAX_MEASURED_S:
        at.fail(f"{seconds:g} s is longer than any time a run measures (a year, {MAX_MEASURED_S:g} s)")
    return seconds


# A stored summary is recomputed from its samples to within this share, or SAMPLE_ROUNDING_S: the samples are written
# to the nanosecond and the summary from the unrounded ones, so only an edit moves a median by more
SUMMARY_TOLERANCE = 1e-9
SAMPLE_ROUNDING_S = 1e-9
#: what a summary its own numbers contradict is (the history's damaged rows say it the same way)
NOT_WRITTEN = "not what asyncbench writes"


def summary_holds(stats: Mapping[str, Any], samples: Any, at: At) -> None:
    """A clock's summary (checked field by field before) is one its numbers allow: its median within its extremes and
    within its own 95% interval, and the median, extremes and count of the samples the file keeps (none kept beside
    a count said is an edit: `compare` and `--baseline` left such a variant out without a word while `show` showed
    it). An edit that moved one without the other (a median of 1e9 s beside an interval of 14 ms, samples ×1000
    under the old summary) would be shown as measured: refused instead."""
    median, least, most = stats["median"], stats["min"], stats["max"]
    low, high = stats.get("ci_low"), stats.get("ci_high")
    if low is not None and high is not None and not low <= median <= high:
        (at / "median").fail(f"{median:g} lies outside its own interval [{low:g}, {high:g}]: {NOT_WRITTEN}")
    if not least <= median <= most:
        (at / "median").fail(f"{median:g} lies outside its own extremes [{least:g}, {most:g}]: {NOT_WRITTEN}")
    if not isinstance(samples, list) or not samples:
        if stats["n"]:  # a summary of samples the file does not keep (compare and --baseline read the samples)
            (at / "n").fail(f"{stats['n']} samples said, none kept: {NOT_WRITTEN}")
        return
    if stats["n"] != len(samples):
        (at / "n").fail(f"{stats['n']} samples said, {len(samples)} kept: {NOT_WRITTEN}")
    for key, value in (("median", statistics.median(samples)), ("min", min(samples)), ("max", max(samples))):
        if not math.isclose(stats[key], value, rel_tol=SUMMARY_TOLERANCE, abs_tol=SAMPLE_ROUNDING_S):
            (at / key).fail(f"{stats[key]!r} is not the {key} of the samples kept ({value!r}): {NOT_WRITTEN}")


def within_own_interval(value: Any, bounds: Any, at: At) -> None:
    """A metric (checked before) lies within its own 95% interval: each is the median of the rounds' values and the
    interval of that median (engine.rounds.figures), which always holds it. An illusion of −3× beside [14.8–61.1]
    is an edit, never a measurement."""
    if bounds is None or value is None or isinstance(value, bool):
        return
    low, high = bounds
    slack = SUMMARY_TOLERANCE * max(abs(low), abs(high))
    if not low - slack <= value <= high + slack:
        at.fail(f"{value:g} lies outside its own interval [{low:g}, {high:g}]: {NOT_WRITTEN}")
