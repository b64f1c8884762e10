"""Perturbation rounds (`run --bound`, issue 52): the step timed with a delay injected before each of its calls.

A perturbation round is an extra round (measure.extra_rounds: interleaved with the timed rounds on SCHEDULE, never
inside a timed sample). In each round, per variant, one sample runs unperturbed and one per (side, level): on the
host side a busy spin of the level before each step call (its real length recorded: preemption stretches a spin),
on the device side a delay of the level queued where the step's work runs, before each step call, the host not
waiting (Backend.device_delay; its length measured in place each sample where the backend has events, else alone
each round). The round's samples run in a seeded random order, so that a position in the round (caches, clocks left
by the sample before) shifts no level every round.

Levels are fractions of the variant's own step time (LEVELS × the median of PROBE_SAMPLES untimed, unperturbed samples
taken before its first round, after the timed rounds' warm-up): a side's slack lies in [0, step], so the levels span
it and one goes past. They are fixed for the case: every round has the same levels, so a level's samples pair across
rounds (its median over rounds is one figure), and a slow probe shifts the levels, never the fit, which reads the
delays' measured lengths.

Each sample is timed as a timed sample is (timing.take_sample: its prelude, the host clock, the step, the case's
sync) and becomes a results.bound.Perturbed: its step time is the done time over the steps one call runs. What the
observations say (each side's slack and the cost past it) is verdicts.bound's.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from asyncbench.backends.base import DeviceDelay
from asyncbench.measure.extra_rounds import Schedule
from asyncbench.results.bound import Perturbed, Side

#: the delays per step call, as fractions of the step's own time: four within [0, step], where a side's slack (the
#: knee) lies, so that the fit has points on both sides of any knee but one right at a side's edge; one past the step
#: (1.5), where every side is past its slack, for the cost past it
LEVELS = (0.25, 0.5, 0.75, 1.0, 1.5)
# Ten rounds: a bootstrap over rounds (verdicts.bound) needs some ten units for its percentile interval to mean
# anything, and the order statistics of a median's 95% interval need six. A round runs 1 + 2·len(LEVELS) = 11 samples
# per variant, each longer by its delay (host delays add up to sum(LEVELS) = 4 step times, device ones at most as
# much): ten rounds cost some 150-190 samples, about what a case that samples for its 10 s max_time_s takes, and
# with a worker's start, set-up, compile and memory run a plain run of a case is rarely under its sampling time, so
# `--bound` stays within the 10× a plain run. One round after each of the first ten timed rounds (a case
# stopped at its six min_samples is topped up after its last), then one per BOUND_EVERY timed rounds: a long case
# gets narrower intervals at about the share of its time ten rounds cost a short one.
BOUND_ROUNDS = 10
BOUND_EVERY = 10
SCHEDULE = Schedule(first=BOUND_ROUNDS, every=BOUND_EVERY, least=BOUND_ROUNDS)
# A case's perturbation rounds stop once they took this many times its max_time_s (50 s by default): a round costs some
# 15-19 samples per variant, so a step of seconds would take minutes a round and pass the case's timeout_s (300 s)
# before its ten rounds. Capped, `--bound` adds at most some 5× the sampling time of a case that samples for its
# max_time_s, within the 10× a plain run; the rounds it cut are said in the bound's note.
BOUND_TIME_FACTOR = 5.0
#: the order of each round's samples is random, the same from run to run
ORDER_SEED = 52
#: the untimed samples whose median sets a variant's levels: three, so that one preempted sample does not
PROBE_SAMPLES = 3

#: a variant rebuilt with a callable run before each of the user's step calls (Prepared.perturbable)
Perturbable = Callable[[Callable[[], None]], Mapping[str, Callable[[], Any]]]


def _nothing() -> None:
    return None


class HostSpin:
    """A busy spin of `seconds` before each step call, each spin's real length added up (`mean_s`).

    It keeps the host thread on its core, as host work would, but hands the GIL on at each turn (`time.sleep(0)`):
    XLA's, MXNet's and CUDA's threads never need the GIL, but a thread that does (the test device's streams, a
    framework's Python callback) would otherwise wait up to the interpreter's switch interval behind a spin, and on
    shared cores for as long as the spinning thread is preempted holding it (a device-bound step on the test device
    took 3.7 ms a step behind 0.8 ms spins holding the GIL, 3.46 ms handing it on: its truth, 3.26 + 0.8 / 4)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter, yield_gil: Callable[[float], None] = time.sleep):
        self.seconds, self.clock, self.yield_gil = seconds, clock, yield_gil
        self.spun_s = 0.0
        self.calls = 0

    def __call__(self) -> None:
        clock, seconds, yield_gil = self.clock, self.seconds, self.yield_gil
        started = clock()
        now = started
        while now - started < seconds:
            yield_gil(0)
            now = clock()
        self.spun_s += now - started
        self.calls += 1

    def mean_s(self) -> float:
        """The spins' mean length per step call so far (0 before any)."""
        return self.spun_s / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class _Planned:
    """One sample of a round: a variant, and where and how much to delay (side None: unperturbed)."""

    variant: str
    side: Side | None
    fraction: float


class Taker:
    """The perturbation rounds of one case: `round` per round (an ExtraKind), `observations` at the end.

    `perturbable`: the case's Prepared.perturbable; `delay`: the backend's device delay (None: host side only);
    `steps_per_call`: the user's steps one call of a variant runs (what a sample's done time is divided by)."""

    def __init__(
        self,
        perturbable: Perturbable,
        delay: DeviceDelay | None,
        steps_per_call: int = 1,
        levels: Sequence[float] = LEVELS,
        clock: Callable[[], float] = time.perf_counter,
        seed: int = ORDER_SEED,
        budget_s: float | None = None,
    ):
        """`budget_s`: the time after which no more round is taken (None: no limit; the engine gives
        BOUND_TIME_FACTOR × the case's max_time_s)."""
        self.perturbable, self.delay, self.steps_per_call = perturbable, delay, steps_per_call
        self.budget_s, self.spent_s, self.skipped = budget_s, 0.0, 0
        self.levels, self.clock = tuple(levels), clock
        self._shuffle = random.Random(seed).shuffle
        self.samples: dict[str, list[Perturbed]] = {}
        self._rounds: dict[str, int] = {}
        self.sides = (Side.HOST, Side.DEVICE) if delay is not None else (Side.HOST,)
        self.scale_s: dict[str, float] = {}  # each variant's step time the levels are fractions of (PROBE_SAMPLES)

    @property
    def taken(self) -> int:
        """Perturbation rounds taken so far (those of the variant with fewest)."""
        return min(self._rounds.values(), default=0)

    def round(
        self,
        variants: Mapping[str, Callable[[], Any]],
        sync: Callable[[], None],
        order: Sequence[str] | None = None,
        preludes: Mapping[str, Callable[[], None]] | None = None,
    ) -> None:
        """One perturbation round: each variant's unperturbed sample and one per (side, level), in a random order.
        `variants` are the timed ones, by name: the samples run the perturbable ones of the same names."""
        if self.budget_s is not None and self.spent_s >= self.budget_s:
            self.skipped += 1  # out of time: the rounds taken are what the fit gets
            return
        started = self.clock()
        names = list(order or variants)
        preludes = preludes or {}
        for name in names:
            if name not in self.scale_s:  # the levels' scale, before the variant's first round
                probes = [self._sample(name, _nothing, sync, preludes.get(name)) for _ in range(PROBE_SAMPLES)]
                self.scale_s[name] = statistics.median(probes)
        planned = [_Planned(name, None, 0.0) for name in names]
        planned += [_Planned(name, side, fraction) for name in names for side in self.sides for fraction in self.levels]
        self._shuffle(planned)
        for plan in planned:
            self._take(plan, sync, preludes.get(plan.variant))
        for name in names:
            self._rounds[name] = self._rounds.get(name, 0) + 1
        self.spent_s += self.clock() - started

    def cut_short(self) -> str | None:
        """What the bound's note says when rounds were skipped for time (None: none were)."""
        if not self.skipped:
            return None
        return (
            f"{self.taken} perturbation round(s) only, the rest skipped: they had taken {self.spent_s:.3g} s, past their "
            f"budget of {self.budget_s:.3g} s ({BOUND_TIME_FACTOR:g}× max_time_s; fewer steps a sample make rounds shorter)"
        )

    def _take(self, plan: _Planned, sync: Callable[[], None], prelude: Callable[[], None] | None) -> None:
        """One sample of a round, kept as a Perturbed."""
        level_s = plan.fraction * self.scale_s[plan.variant]
        if plan.side is None:
            step_s, injected_s = self._sample(plan.variant, _nothing, sync, prelude), 0.0
        elif plan.side == Side.HOST:
            spin = HostSpin(level_s, self.clock)
            step_s = self._sample(plan.variant, spin, sync, prelude)
            injected_s = spin.mean_s()
        else:
            delay = self.delay
            assert delay is not None
            alone_s = None if delay.in_place else delay.alone_s(level_s)  # after the last sample's sync: an idle device
            step_s = self._sample(plan.variant, delay.before_step(level_s), sync, prelude)
            measured = delay.measured_s()
            injected_s = measured if measured is not None else alone_s if alone_s is not None else level_s
        number = self._rounds.get(plan.variant, 0)
        self.samples.setdefault(plan.variant, []).append(Perturbed(number, plan.side, level_s, injected_s, step_s))

    def _sample(self, variant: str, before_step: Callable[[], None], sync: Callable[[], None], prelude: Callable[[], None] | None) -> float:
        """One sample of `variant` with `before_step` before each step call, timed as timing.take_sample times one:
        its done time per step."""
        run = self.perturbable(before_step)[variant]
        if prelude is not None:
            prelude()
        start = self.clock()
        result = run()
        sync()
        done = self.clock()
        del result
        return (done - start) / self.steps_per_call

    def observations(self) -> dict[str, tuple[Perturbed, ...]]:
        """Every variant's samples, in the order taken."""
        return {name: tuple(samples) for name, samples in self.samples.items()}
