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
from typing import Any, Mapping

from asyncbench.results import fields
from asyncbench.results.fields import At

# A container nested deeper than this in params or the environment is no benchmark's: the store writes both as
# JSON, and Python's encoder recurses once per level.
MAX_DEPTH = 32


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


def duration(value: Any, at: At) -> float | None:
    """A time in seconds: finite and not negative (or null)."""
    seconds = fields.optional_number(value, at)
    if seconds is not None and seconds < 0:
        at.fail(f"a time cannot be negative ({seconds:g})")
    return seconds
