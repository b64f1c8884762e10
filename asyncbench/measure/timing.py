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
checks are decided (`Procedure.decided`: pass or fail, not inconclusive),
or when `max_time_s` or `max_samples` is reached. The checks are only asked
at the rounds of a fixed schedule of looks (`Procedure.looks`,
results.budget), each with its share of the error budget: asked after every
round, a check on its threshold would fail far more often than its stated rate.

Extra rounds (`run --syncs`'s census rounds: measure.extra_rounds says which
follow each timed round, and how many are owed after the last) run each
variant once more, never inside a timed sample, and their time is left out
of the elapsed time the stopping rule reads. After extra rounds each variant
runs again, untimed, as in the warm-up (a few times where it is fast: REWARM_ROUNDS):
the census's slower runs leave the framework's threads as a timed round does not (MXNet's timed item and
print variants ran 3% slower after census rounds without it;
benchmarks/syncs.py overhead). Why it stopped is returned with the samples,
so a result can say when it missed its noise target.

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
from typing import Any, Callable, Mapping

from asyncbench.backends.handles import DeviceTimer, ResultWait
from asyncbench.measure.procedure import Clock, Procedure
from asyncbench.results import stats
from asyncbench.results.model import STOPPED_BY_COUNT, STOPPED_BY_NOISE, STOPPED_BY_TIME, Progress, Samples, Sampling, StopReason

# The order of variants within rounds is random but the same in every process that measures together (comm_overlap's
# ranks take each sample at once, behind a barrier) and from run to run: a fixed seed.
ORDER_SEED = 0
# The noise so far (the stopping rule's: every variant's median interval) is recomputed between rounds only once the
# sampling since the last time took 1 / NOISE_SHARE times as long as that computation did. Its cost grows with the
# samples (a sort and a pass in Python: 0.25 ms at 1000 samples), and after every round it had grown to most of a short
# sample's time: sampling time the case did not sample in (20 tiny JAX steps a sample took some 1,500 rounds in 1 s with
# it after every round, 2,100 without; docs/measured.md). At 2% the stop comes at most ~2% of the sampling late.
NOISE_SHARE = 0.02
# A variant's samples are handed to on_progress (a snapshot of every sample so far: its cost grows with them too) at
# most this often: half the worker's send interval (engine.isolation.PROGRESS_INTERVAL_S, 0.1 s), so no send waits
# for a snapshot, and a live display still moves ten times a second.
PROGRESS_EVERY_S = 0.05
# The engine's warm-up lasts at least this long (Procedure.warmup_min_s), whatever the settings' count of warm-up
# rounds: a process's first milliseconds of a fast step run slower than the rest (20 tiny steps a sample, pinned to
# one CPU, ten processes each: JAX +5.5% in the first 2 ms, +3% to 5 ms; torch +5%, +2.5%, +2% to 10 ms and +1% to
# 20 ms; the same from 50 ms on), and a case that meets its noise target in a few milliseconds reported them (JAX's
# 20 tiny steps stopped after 37-215 samples, 7-45 ms; docs/measured.md). 50 ms is one tenth of a --quick case's
# sampling and nothing beside a worker's start.
WARMUP_MIN_S = 0.05
# After untimed work between rounds (the machine's reference, extra rounds), untimed rounds until REWARM_ROUNDS of them
# ran or they took REWARM_S, before the next timed round: the work left caches and pools that were not the step's.
# After the reference's products a 16×16 product's next rounds took 3-5× its own time; 20 tiny JAX steps a sample,
# pinned to one CPU, took +35-45% in the first sample after seven reference samples, +5-9% in the second, +2-7% in the
# third, +0-4% in the fourth, a sleep in between not shortening it (the step's own work brings the caches back). With
# one untimed round the timed round after it read +2.0% over the case's median (+11.5% after a noise computation too);
# with four, −1.7% (docs/measured.md). A sample longer than REWARM_S is re-warmed by one, as before.
REWARM_ROUNDS = 4
REWARM_S = 0.002


def take_sample(
    run: Callable[[], Any],
    sync: Callable[[], None],
    timer: DeviceTimer | None,
    clock: Clock = time.perf_counter,
    prelude: Callable[[], None] | None = None,
    result_wait: ResultWait | None = None,
) -> tuple[float, float, float | None]:
    """One run of `run`: (issue_s, done_s, device_s). The result is held until after the sync.

    `prelude` runs first, before the start event and the host clock: work it issues is in no clock's start
    but in done_s's end (sync_async's hold kernel, which the timed ops queue up behind).

    `result_wait` (the backend's, where it has one): the sample ends when the result `run` returned is done, where
    after the clock the backend proves nothing else was left to run; otherwise, and without it, at `sync`."""
    if prelude is not None:
        prelude()
    if timer is not None:
        timer.start()
    start = clock()
    result = run()
    issued = clock()
    if timer is not None:
        timer.stop()
    if result_wait is not None and timer is None and result_wait.wait(result):  # a timer's events are read after a sync
        done = clock()
        if not result_wait.settled():
            sync()
            done = clock()
    else:
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
    procedure: Procedure,
    on_progress: Callable[[Progress], None] | None = None,
) -> tuple[dict[str, Samples], Sampling]:
    """Measure every variant with the three clocks, as `procedure` says, until the stopping rule holds; each round
    is told to `on_progress`."""
    sampler = _Sampler(variants, sync, {name: make_timer() for name in variants}, procedure)
    sampler.warm_up()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection inside a sample is not the workload's cost
    try:
        stopped_by: StopReason | None = None
        told_at = -float("inf")
        while stopped_by is None:
            sampler.timed_round()
            sampler.between_rounds(collect=gc_was_enabled)
            if on_progress is not None and (now := procedure.clock()) - told_at >= PROGRESS_EVERY_S:
                on_progress(Progress(sampler.rounds, sampler.elapsed_s, sampler.noise, sampler.samples()))
                told_at = now
            stopped_by = sampler.agreed(sampler.stop_reason())
        sampler.owed_extra_rounds()
    finally:
        if gc_was_enabled:
            gc.enable()
    return sampler.samples(), sampler.sampling(stopped_by)


class _Sampler:
    """One case's sampling as measure() runs it: the clocks so far, the rounds, the time spent outside sampling."""

    def __init__(
        self,
        variants: Mapping[str, Callable[[], Any]],
        sync: Callable[[], None],
        timers: Mapping[str, DeviceTimer | None],
        procedure: Procedure,
    ):
        self.variants, self.sync, self.timers, self.how = variants, sync, timers, procedure
        self.issue: dict[str, list[float]] = {name: [] for name in variants}
        self.done: dict[str, list[float]] = {name: [] for name in variants}
        self.device: dict[str, list[float]] = {name: [] for name in variants}
        self.rounds = 0
        self.aside_s = 0.0  # time in extra rounds and between_rounds: not sampling time
        self.elapsed_s = 0.0
        self.noise = float("inf")
        self.order = list(variants)
        self._shuffle = random.Random(ORDER_SEED).shuffle
        self._started = 0.0
        self._noise_at_s = -float("inf")  # the elapsed time when the noise was last computed
        self._noise_cost_s = 0.0  # how long that took
        self._noise_rounds = 0  # the rounds it was computed from

    def _sample(self, name: str) -> tuple[float, float, float | None]:
        """A warm-up or timed sample of one variant, after `before_sample`."""
        if self.how.before_sample is not None:
            self.how.before_sample()
        how = self.how
        return take_sample(self.variants[name], self.sync, self.timers[name], how.clock, how.preludes.get(name), how.result_wait)

    def warm_up(self) -> None:
        """The warm-up rounds, in the variants' declared order: the settings' `warmup`, then more, untimed and outside
        `before_sample` (whose count of warm-up samples is the settings'), until they took `warmup_min_s` in all;
        the sampling's clock starts after them."""
        clock, settings = self.how.clock, self.how.settings
        started = clock()
        for _ in range(settings.warmup):
            for name in self.variants:
                self._sample(name)
        rounds = settings.warmup
        # none where the settings ask for none (a user timing the cold start)
        while rounds > 0 and clock() - started < self.how.warmup_min_s:
            for name in self.variants:
                take_sample(self.variants[name], self.sync, None, clock, self.how.preludes.get(name), self.how.result_wait)
            rounds += 1
        self._started = clock()

    def timed_round(self) -> None:
        """One sample of each variant, in a random order."""
        self._shuffle(self.order)
        for name in self.order:
            issue_s, done_s, device_s = self._sample(name)
            self.issue[name].append(issue_s)
            self.done[name].append(done_s)
            if device_s is not None:
                self.device[name].append(device_s)
        self.rounds += 1

    def between_rounds(self, collect: bool) -> None:
        """The untimed work after a round (a due collection, the machine's reference, the extra rounds that follow
        it, and an untimed round after either), then the elapsed time without it and the noise so far."""
        clock = self.how.clock
        if collect and _collection_due():
            gc.collect(0)  # between rounds, outside every sample
        disturbed = False
        if self.how.between_rounds is not None:
            aside_started = clock()
            disturbed = self.how.between_rounds()
            self.aside_s += clock() - aside_started
        due = self.how.extra_rounds.after(self.rounds)
        if due or disturbed:
            extra_started = clock()
            for kind in due:
                kind.round(self.variants, self.sync, self.order, self.how.preludes)
            self._rewarm()
            self.aside_s += clock() - extra_started
        self.elapsed_s = clock() - self._started - self.aside_s
        first_stop = self.rounds == self.how.settings.min_samples  # the first round a noise stop may come: a fresh look
        if first_stop or self.rounds in self.how.looks or self.elapsed_s - self._noise_at_s >= self._noise_cost_s / NOISE_SHARE:
            self._update_noise()

    def _rewarm(self) -> None:
        """Untimed rounds after other work (the reference's products, extra rounds), as in the warm-up, so that the
        timed round after it starts where a timed one left off: at least one, then more until REWARM_ROUNDS ran or
        they took REWARM_S."""
        clock, how = self.how.clock, self.how
        started, rounds = clock(), 0
        while rounds < REWARM_ROUNDS and (rounds == 0 or clock() - started < REWARM_S):
            for name in self.order:
                take_sample(self.variants[name], self.sync, None, clock, how.preludes.get(name), how.result_wait)
            rounds += 1

    def _update_noise(self) -> None:
        """The noise of the samples so far (the widest variant's), and when and at what cost it was computed (its
        time counts as sampling time, as it did when it came after every round)."""
        started = self.how.clock()
        self.noise = max(_noise(self.done[name]) for name in self.variants)
        self._noise_cost_s = self.how.clock() - started
        self._noise_at_s = self.elapsed_s
        self._noise_rounds = self.rounds

    def stop_reason(self) -> StopReason | None:
        """Why this process would stop now (None: it would go on)."""
        settings, decided = self.how.settings, self.how.decided
        if self.rounds >= settings.max_samples:
            return STOPPED_BY_COUNT
        if self.rounds < settings.min_samples:
            return None
        quiet = self.noise <= settings.max_rel_noise
        if quiet and self._noise_rounds != self.rounds:  # a stop on the noise is taken on all the samples, never a stale look
            self._update_noise()
            quiet = self.noise <= settings.max_rel_noise
        if quiet and (decided is None or (self.rounds in self.how.looks and decided(self.samples()))):
            return STOPPED_BY_NOISE
        return STOPPED_BY_TIME if self.elapsed_s >= settings.max_time_s else None

    def agreed(self, stopped_by: StopReason | None) -> StopReason | None:
        """This process's stop decision turned into the common one (`agree`: every rank takes the same rounds)."""
        if self.how.agree is None:
            return stopped_by
        stop = self.how.agree(stopped_by is not None)
        if not stop:
            return None
        if stopped_by is None:  # another rank (rank 0) decided
            return STOPPED_BY_TIME if self.elapsed_s >= self.how.settings.max_time_s else STOPPED_BY_NOISE
        return stopped_by

    def owed_extra_rounds(self) -> None:
        """After the last timed round, the extra rounds still owed (a case that stopped before its census had them),
        one of each kind owed at a time, asked again after each (a kind that paces itself, as --bound's rounds do,
        may owe one more)."""
        while owed := self.how.extra_rounds.owed():
            for kind, _ in owed:
                kind.round(self.variants, self.sync, self.order, self.how.preludes)

    def samples(self) -> dict[str, Samples]:
        return _samples(self.issue, self.done, self.device)

    def sampling(self, stopped_by: StopReason) -> Sampling:
        self._update_noise()  # of every sample: the last rounds may have come after the last computation
        return Sampling(
            rounds=self.rounds,
            elapsed_s=self.elapsed_s,
            stopped_by=stopped_by,
            rel_noise=self.noise if self.noise != float("inf") else None,
            max_rel_noise=self.how.settings.max_rel_noise,
            max_time_s=self.how.settings.max_time_s,
            lag1_autocorrelation=_dependence(self.done),
        )


def _dependence(done: Mapping[str, list[float]]) -> float | None:
    """The highest lag-1 autocorrelation among the variants' done times (None: too few rounds for any)."""
    values = [rho for series in done.values() if (rho := stats.lag1_autocorrelation(series)) is not None]
    return round(max(values), 3) if values else None


def _samples(issue: Mapping[str, list[float]], done: Mapping[str, list[float]], device: Mapping[str, list[float]]) -> dict[str, Samples]:
    return {
        name: Samples(issue_s=tuple(issue[name]), done_s=tuple(done[name]), device_s=tuple(device[name]) if device[name] else None)
        for name in issue
    }
