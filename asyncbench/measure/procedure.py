"""How a case is sampled: one value that timing.measure follows, built once by whoever measures (engine.runner for a
case, comm_overlap's ranks for theirs, a test with a clock of its own).

It holds what decides the number of rounds (the settings; the checks asked at the budget's looks), the untimed work
around the samples (each variant's prelude; the extra rounds and the machine's reference between rounds), and the
hooks of several processes that measure together (a barrier before each sample, a common stop decision).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping

from asyncbench.backends.handles import ResultWait
from asyncbench.measure.extra_rounds import ExtraRounds
from asyncbench.results.model import Samples, Settings

Clock = Callable[[], float]


@dataclass(frozen=True)
class Procedure:
    """How a case's variants are sampled (timing.measure).

    `decided` is asked, at the rounds in `looks` and only once the noise target is met, whether the samples so far
    decide every check of the case; while it says no, sampling goes on until max_time_s or max_samples.

    `preludes`: per variant, untimed work issued before each of its samples (timing.take_sample).

    `extra_rounds`: the untimed rounds taken between timed rounds and after the last (census rounds for
    `run --syncs`), on their schedules (measure.extra_rounds).

    `between_rounds`: untimed work after each round (the machine's reference, measure.reference), its time left out
    of the elapsed time the stopping rule reads, as the extra rounds' is; it says whether it ran any work, after
    which an untimed round of the variants brings their caches and thread pools back before the next timed one.

    For several processes measuring together (comm_overlap's ranks): `before_sample` runs untimed before each sample
    (a barrier, so every rank starts it at once; the NVML guard's reading in one process) and `agree` turns this
    process's stop decision into the common one, so every rank takes the same number of samples.

    `warmup_min_s`: the warm-up goes on, untimed, until it took at least this long (where the settings ask for any
    warm-up at all): a process's first milliseconds of a fast step run slower than the rest (timing.WARMUP_MIN_S).
    0 for processes that line up each sample (their warm-ups must be as many rounds in each) and tests' clocks.

    `result_wait`: the backend's sample end on the variant's own result (backends.handles.ResultWait), where it has
    one: every timed and warm-up sample ends there (timing.take_sample); the extra rounds keep the sync, each kind's
    rounds alike.

    `clock`: the host clock every sample and the elapsed time are read from (a test's own)."""

    settings: Settings
    decided: Callable[[Mapping[str, Samples]], bool] | None = None
    looks: Collection[int] = ()
    preludes: Mapping[str, Callable[[], None]] = field(default_factory=dict)
    extra_rounds: ExtraRounds = ExtraRounds()
    between_rounds: Callable[[], bool] | None = None
    before_sample: Callable[[], None] | None = None
    agree: Callable[[bool], bool] | None = None
    warmup_min_s: float = 0.0
    result_wait: ResultWait | None = None
    clock: Clock = time.perf_counter
