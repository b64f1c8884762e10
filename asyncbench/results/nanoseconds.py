"""Raw samples as stored: each rounded to the nanosecond, a long list at C speed.

What each result's record (results.records) stores of its samples; a machine's reference (results.reference) and
a census's waits (results.syncs) store their seconds to the same resolution.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from asyncbench.results.model import Result, Samples

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


def nanoseconds(values: Sequence[float]) -> list[float]:
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


def as_stored(result: Result) -> Result:
    """`result` with its samples as its record stores them (`nanoseconds`): what a workload's reading is made from
    when a run describes a result, so that the reading rebuilt from the file on reading it back
    (workloads.stored_readings) is the very same line, never one a sample's rounding moved across a boundary."""
    return dataclasses.replace(
        result,
        variants={name: dataclasses.replace(variant, samples=_stored(variant.samples)) for name, variant in result.variants.items()},
    )


def _stored(samples: Samples) -> Samples:
    device = samples.device_s
    return Samples(
        tuple(nanoseconds(samples.issue_s)), tuple(nanoseconds(samples.done_s)), None if device is None else tuple(nanoseconds(device))
    )
