"""One variant of a stored result held to its vocabulary and to its own numbers: its samples, its clocks' summaries
and its memory figures, as records.check reads them before a result is built.

A variant is written by records.result_to_dict alone, so it holds that writer's keys and nothing else: a clock
renamed (`done_s` to `done_ms`) is named as the unknown key it is, with the one it replaced, not as a missing
summary. Its times are times a run took (results.recordable.measured_time: none beyond a year) and its byte counts
ones a machine holds (MAX_BYTES): a file scaled to 1e198 s throughout, every figure consistent with the others, is
still no measurement.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from asyncbench.results import case_held, fields, recordable
from asyncbench.results.fields import At
from asyncbench.results.model import CLOCKS, Memory, Stats
from asyncbench.results.sampling_held import MAX_COUNT
from asyncbench.results.stats import is_median_interval_of, median_ci

#: the keys of a stored variant (records._variant_to_dict), each of them written in every schema version
VARIANT_KEYS = frozenset({"samples", *CLOCKS, "memory"})
#: the clocks a variant always has a summary of (a device clock only where the backend has one)
NEEDED_CLOCKS = ("issue_s", "done_s")
#: the times of a clock's summary (its other field, `n`, is a count)
SUMMARY_TIMES = ("median", "iqr", "min", "max", "ci_low", "ci_high")
#: the keys of a clock's summary and of a variant's memory figures: their records' fields
STATS_KEYS = frozenset(field.name for field in dataclasses.fields(Stats))
MEMORY_KEYS = frozenset(field.name for field in dataclasses.fields(Memory))
# No machine holds more bytes than a 64-bit address reaches (16 EiB): a memory figure beyond it, either way (a host
# delta may be negative), is no reading of one.
MAX_BYTES = 2**64


def check_variant(raw: Any, at: At) -> None:
    """InputError (file and key) for the first field of a stored variant the store must not take: a key its writer
    never writes, samples that are no times a run took, a clock's summary its own samples contradict, a memory
    figure that is no byte count."""
    variant = fields.mapping(raw, at)
    case_held.known_keys(variant, VARIANT_KEYS, at, needed=NEEDED_CLOCKS)
    samples = fields.mapping(variant.get("samples"), at / "samples")
    case_held.known_keys(samples, frozenset(CLOCKS), at / "samples")
    for clock in CLOCKS:
        values = samples.get(clock)
        if values is None:
            continue
        values = fields.listed(values, at / "samples" / clock)
        if fields.all_numbers(values, least=0, most=recordable.MAX_MEASURED_S):  # the whole list at once; else each value
            continue
        for index, value in enumerate(values):
            if recordable.measured_time(value, at / "samples" / clock / index) is None:
                (at / "samples" / clock / index).fail("expected a time, got null")
    for clock in CLOCKS:
        stats = variant.get(clock)
        if stats is None and clock == "device_s":
            continue
        where = at / clock
        stats = fields.mapping(stats, where)
        case_held.known_keys(stats, STATS_KEYS, where)
        for key in ("median", "iqr", "min", "max"):
            if recordable.duration(stats.get(key), where / key) is None:
                (where / key).fail("expected a time, got null")
        low, high = recordable.duration(stats.get("ci_low"), where / "ci_low"), recordable.duration(stats.get("ci_high"), where / "ci_high")
        if low is not None and high is not None and low > high:
            (where / "ci_low").fail(f"{low:g} is above ci_high {high:g}")
        n = fields.count(stats.get("n"), where / "n")
        if n > MAX_COUNT:
            (where / "n").fail(f"{n} samples is more than any run takes ({MAX_COUNT:g})")
        recordable.summary_holds(stats, samples.get(clock), where)
        _interval_holds(stats, samples.get(clock), where)
        for key in SUMMARY_TIMES:  # after its own numbers: a summary one edit moved is refused as the edit it is
            recordable.measured_time(stats.get(key), where / key)
    memory = fields.optional_mapping(variant.get("memory"), at / "memory")
    case_held.known_keys(memory, MEMORY_KEYS, at / "memory")
    for key, value in memory.items():
        count = fields.optional_number(value, at / "memory" / key)
        if count is not None and abs(count) > MAX_BYTES:
            (at / "memory" / key).fail(f"{count:g} bytes is more than a 64-bit machine addresses ({MAX_BYTES:g})")


def _interval_holds(summary: Mapping[str, Any], samples: Any, at: At) -> None:
    """A clock's 95% interval (where the file keeps its samples) is one its samples can give (results.stats.is_median_interval_of):
    a hand-narrowed one (ci_low = ci_high = the median beside samples spread over 3.8-10.7 ms) read "±0%"."""
    low, high = summary.get("ci_low"), summary.get("ci_high")
    if low is None or high is None or not isinstance(samples, list) or not samples:
        return
    tolerance = max(recordable.SAMPLE_ROUNDING_S, recordable.SUMMARY_TOLERANCE * max(abs(low), abs(high)))
    if not is_median_interval_of(low, high, samples, tolerance):
        theirs = median_ci(samples)
        said = "none: too few for a 95% interval" if theirs is None else f"[{theirs[0]:g}, {theirs[1]:g}]"
        (at / "ci_low").fail(f"[{low:g}, {high:g}] is not an interval of the samples kept (theirs: {said}): {recordable.NOT_WRITTEN}")
