"""measure(): warm-up, the three clocks per sample, and adaptive stopping.

Every sample of a variant records, for the same run:
- issue_s: host time until the variant's callable returns (no sync);
- done_s: host time until `sync` returned (every device/stream finished);
- device_s: event time on the device between start and stop (None on CPU).

Variants are measured in rounds, one sample of each per round, so slow drift
of the machine (thermal, other load) hits every variant alike and their
ratios stay fair. Within a round the variants run in a random order (as
Google Benchmark's random interleaving and ReBench do): in a fixed order a
position effect (caches or clocks left by the variant before) would shift
one variant every round, narrowing its paired intervals around a biased
value instead of widening them. After `min_samples` rounds, measuring stops when every
variant's done_s median has a 95% CI within ±`max_rel_noise` and the case's
checks are decided (`decided`: pass or fail, not inconclusive), or when
`max_time_s` or `max_samples` is reached. The checks are only asked at the
rounds of a fixed schedule of looks (`looks`, results.budget), each with
its share of the error budget: asked after every round, a check on its
threshold would fail far more often than its stated rate.

With a `census` (`run --syncs`, census.Taker) census rounds are taken
between timed rounds, on census.due's schedule: each variant once more with
the framework's blocking calls wrapped, never inside a timed sample, and
their time is left out of the elapsed time the stopping rule reads. After a
census round each variant runs once more, untimed, as in the warm-up: the
census's slower runs leave the framework's threads as a timed round does not
(MXNet's timed item and print variants ran 3% slower after census rounds
without it; benchmarks/syncs.py overhead). Why it stopped is returned with
the samples, so a result can say when it missed its noise target.

Neither the noise target nor max_time_s stops sampling before min_samples. A
case with checks, or run against a baseline, comes here with min_samples
raised to the rounds their intervals need at the level they are judged at
(verdicts.checks.enough_rounds, spec.overrides.with_rounds), --quick's
included: fewer rounds could decide nothing, however clear the case.
"""

from __future__ import annotations

import gc
import random
import time
from typing import Any, Callable, Collection, Mapping

from asyncbench.backends.base import DeviceTimer
from asyncbench.measure import census as syncs
from asyncbench.results import stats
from asyncbench.results.model import STOPPED_BY_COUNT, STOPPED_BY_NOISE, STOPPED_BY_TIME, Progress, Samples, Sampling, Settings

Clock = Callable[[], float]
# The order of variants within rounds is random but the same in every process that measures together (comm_overlap's
# ranks take each sample at once, behind a barrier) and from run to run: a fixed seed.
ORDER_SEED = 0


def take_sample(
    run: Callable[[], Any],
    sync: Callable[[], None],
    timer: DeviceTimer | None,
    clock: Clock = time.perf_counter,
    prelude: Callable[[], None] | None = None,
) -> tuple[float, float, float | None]:
    """One run of `run`: (issue_s, done_s, device_s). The result is held until after the sync.

    `prelude` runs first, before the start event and the host clock: work it issues is in no clock's start
    but in done_s's end (sync_async's hold kernel, which the timed ops queue up behind)."""
    if prelude is not None:
        prelude()
    if timer is not None:
        timer.start()
    start = clock()
    result = run()
    issued = clock()
    if timer is not None:
        timer.stop()
    sync()
    done = clock()
    del result
    device_s = timer.elapsed_s() if timer is not None else None
    return issued - start, done - start, device_s


def _collection_due() -> bool:
    """Whether Python would have collected its youngest generation by now (its count past the threshold; never where
    the threshold is 0). Only then does measure() collect between rounds: as often as the workload's own process
    would, outside the samples. After every round, each collection freed the few arrays an MXNet step leaves in
    reference cycles, each free an engine op the next sample waited behind: +7% on 20 steps of `x + 1`, which
    collect once in about 35 samples on their own (benchmarks/fidelity_backends.py)."""
    threshold = gc.get_threshold()[0]
    return threshold > 0 and gc.get_count()[0] >= threshold


def _noise(done: list[float]) -> float:
    return stats.relative_ci_half_width(done) if len(done) >= 2 else float("inf")


def measure(
    variants: Mapping[str, Callable[[], Any]],
    sync: Callable[[], None],
    make_timer: Callable[[], DeviceTimer | None],
    settings: Settings,
    on_progress: Callable[[Progress], None] | None = None,
    clock: Clock = time.perf_counter,
    before_sample: Callable[[], None] | None = None,
    agree: Callable[[bool], bool] | None = None,
    decided: Callable[[Mapping[str, Samples]], bool] | None = None,
    looks: Collection[int] = (),
    preludes: Mapping[str, Callable[[], None]] | None = None,
    census: syncs.Taker | None = None,
    between_rounds: Callable[[], None] | None = None,
) -> tuple[dict[str, Samples], Sampling]:
    """Measure every variant with the three clocks until the stopping rule holds.

    `decided` is asked, at the rounds in `looks` and only once the noise
    target is met, whether the samples so far decide every check of the
    case; while it says no, sampling goes on until max_time_s or max_samples.

    For several processes measuring together (comm_overlap's ranks):
    `before_sample` runs untimed before each sample (a barrier, so every rank
    starts it at once) and `agree` turns this process's stop decision into the
    common one, so every rank takes the same number of samples.

    `preludes`: per variant, untimed work issued before each of its samples (take_sample).

    `census`: where the census rounds go (`run --syncs`), taken after the timed rounds census.due names, and
    after the last one until it has census.CENSUS_ROUNDS.

    `between_rounds`: untimed work after each round (the machine's reference, measure.reference), its time left out
    of the elapsed time the stopping rule reads, as the census's is.
    """
    timers = {name: make_timer() for name in variants}
    prelude = dict(preludes or {})
    for _ in range(settings.warmup):
        for name, run in variants.items():
            if before_sample is not None:
                before_sample()
            take_sample(run, sync, timers[name], clock, prelude.get(name))

    issue: dict[str, list[float]] = {name: [] for name in variants}
    done: dict[str, list[float]] = {name: [] for name in variants}
    device: dict[str, list[float]] = {name: [] for name in variants}
    started = clock()
    rounds = 0
    census_s = 0.0  # time in census rounds and between_rounds: not sampling time
    order = list(variants)
    shuffle = random.Random(ORDER_SEED).shuffle
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection inside a sample is not the workload's cost
    try:
        while True:
            shuffle(order)
            for name in order:
                if before_sample is not None:
                    before_sample()
                issue_s, done_s, device_s = take_sample(variants[name], sync, timers[name], clock, prelude.get(name))
                issue[name].append(issue_s)
                done[name].append(done_s)
                if device_s is not None:
                    device[name].append(device_s)
            rounds += 1
            if gc_was_enabled and _collection_due():
                gc.collect(0)  # between rounds, outside every sample
            if between_rounds is not None:
                aside_started = clock()
                between_rounds()
                census_s += clock() - aside_started
            if census is not None and syncs.due(rounds, census.taken):
                census_started = clock()
                census.round(variants, sync, order, prelude)
                for name in order:  # untimed, as a warm-up: the timed round after a census starts where a timed one left off
                    take_sample(variants[name], sync, None, clock, prelude.get(name))
                census_s += clock() - census_started
            elapsed = clock() - started - census_s
            noise = max(_noise(done[name]) for name in variants)
            if on_progress is not None:
                on_progress(Progress(rounds, elapsed, noise, _samples(issue, done, device)))
            stopped_by = None
            if rounds >= settings.max_samples:
                stopped_by = STOPPED_BY_COUNT
            elif rounds >= settings.min_samples:
                quiet = noise <= settings.max_rel_noise
                if quiet and (decided is None or (rounds in looks and decided(_samples(issue, done, device)))):
                    stopped_by = STOPPED_BY_NOISE
                elif elapsed >= settings.max_time_s:
                    stopped_by = STOPPED_BY_TIME
            if agree is not None:
                stop = agree(stopped_by is not None)
                if stop and stopped_by is None:  # another rank (rank 0) decided
                    stopped_by = STOPPED_BY_TIME if elapsed >= settings.max_time_s else STOPPED_BY_NOISE
                elif not stop:
                    stopped_by = None
            if stopped_by is not None:
                break
        while census is not None and census.taken < syncs.CENSUS_ROUNDS:
            census.round(variants, sync, order, prelude)
    finally:
        if gc_was_enabled:
            gc.enable()
    sampling = Sampling(
        rounds=rounds,
        elapsed_s=elapsed,
        stopped_by=stopped_by,
        rel_noise=noise if noise != float("inf") else None,
        max_rel_noise=settings.max_rel_noise,
        max_time_s=settings.max_time_s,
        lag1_autocorrelation=_dependence(done),
    )
    return _samples(issue, done, device), sampling


def _dependence(done: Mapping[str, list[float]]) -> float | None:
    """The highest lag-1 autocorrelation among the variants' done times (None: too few rounds for any)."""
    values = [rho for series in done.values() if (rho := stats.lag1_autocorrelation(series)) is not None]
    return round(max(values), 3) if values else None


def _samples(issue: Mapping[str, list[float]], done: Mapping[str, list[float]], device: Mapping[str, list[float]]) -> dict[str, Samples]:
    return {
        name: Samples(issue_s=tuple(issue[name]), done_s=tuple(done[name]), device_s=tuple(device[name]) if device[name] else None)
        for name in issue
    }
