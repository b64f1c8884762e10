"""Device delays (`run --bound`, Backend.device_delay): device work of a chosen length, queued where the step's work
runs, before each step call, the host not waiting; and how long each really took.

Two kinds, one per way of measuring them:
- `EventDelay` (CUDA: torch's `torch.cuda._sleep`, CuPy's clock-spin kernel): a kernel that spins for a number of
  clock cycles on the current stream, bracketed by two timing events each call, so that every delay's real length is
  read after the sample's sync (the cycles per second drift with the clocks: a calibration once is not its length).
- `QueuedOpDelay` (JAX on a CPU): an op whose cost grows with its size, issued asynchronously to the one queue the
  step's work goes to. Its size is calibrated once (two sizes timed alone: fixed cost and cost per unit);
  it cannot be timed in place (no events on a CPU), so the perturbation rounds time it apart from the step each round
  (`alone_s`), as what it adds to a busy queue: the time to a short filler op's end with and without a few of the
  delay's ops queued behind it, per op. One op timed alone from an idle device also pays its fixed cost, its dispatch and the wake-up of the
  worker thread (100+ µs under load), which in place, queued before the step's work on a busy device, it does not:
  read so, a JAX user's 25-153 µs delays were stored as 185-227 µs and the device's slack read as the whole step.
  Where it runs beside the step instead of before it, it would read as slack: jax_backend says why its
  op is ordered before the step's. MXNet had one too (a `sin` per engine worker) until it was measured costing
  0.36-0.93x its alone length beside a step: it has none now (mxnet_backend).
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any, Callable

#: timings of each calibration size (their fastest: on shared cores a timing is stretched by other jobs, never shortened,
#: and a stretched calibration makes every delay short: a 5 ms delay ran 1.8 ms from medians on the loaded 2-core machine)
CALIBRATION_REPEATS = 5
#: timings of a level's own size (`QueuedOpDelay.queued_s`: the median of its paired differences), once per level and
#: once a round: one pair stretched by another job is outvoted by the other two; the cost per unit measured at the
#: calibration's sizes did not hold at every size on MXNet, when it had a delay (two engine workers run two delays side
#: by side at some sizes, one after the other at others: a 2 ms delay ran 0.63 ms), so each level's size is corrected
#: once by its own timing
LEVEL_REPEATS = 3
# The most a level's own timing may correct its calibrated size, either way: the correction it exists for was 3.2x (a
# 2 ms MXNet delay that ran 0.63 ms). A timing that would correct it by more is no cost per unit at that size but a
# timing of the op's fixed cost (its work done before the clock read it, or the fixed cost read high; now, a pair of
# timings one of which another job stretched): one such timing on a busy 2-core machine made a 142 µs JAX delay 2.83 s
# (x20,000), its round past the case's whole budget.
MAX_LEVEL_CORRECTION = 4.0
#: the most pairs `QueuedOpDelay.queued_s` takes for a level whose median still reads below UNREAD_SHARE of its
#: length: three times LEVEL_REPEATS, so that up to LEVEL_REPEATS stretched filler timings (a 0.92 ms JAX level read
#: 0.0-5.6 ms round to round on a saturated 2-core machine) can be outvoted by the pairs after them
MAX_LEVEL_PAIRS = 3 * LEVEL_REPEATS
#: below this share of the length a level was sized for, a reading is no reading of the delay but of the machine's
#: noise: the size was corrected (`size`) by at most MAX_LEVEL_CORRECTION so that the op adds the length asked, so a
#: delay that ran cannot add less than 1/MAX_LEVEL_CORRECTION of it unless its filler alone was stretched by another
#: job (the pair's difference ≤ 0: a JAX user's 0.92 ms level was stored as lasting 0.0 s)
UNREAD_SHARE = 1 / MAX_LEVEL_CORRECTION
#: the device work queued ahead of a level's ops when they are timed (`QueuedOpDelay.queued_s`), so that they land on a
#: busy worker as in place: it must outlast their dispatch behind it, 30-70 µs an op on JAX (docs/measured.md), or an
#: op would find the worker idle and pay its wake-up again (with 150 µs, a 25 µs op read a median 137 µs, at load 3.5)
FILLER_S = 300e-6
#: at most this many of a level's ops are timed behind the filler, as many as make up QUEUED_TOTAL_S: a timing's jitter
#: is tens of µs whatever it times, so a short op is read from several (on this project's loaded 2-core machine a 50 µs
#: JAX op read 5-115 µs, the middle half of 30 readings, alone behind the filler; 49-59 µs four at a time)
QUEUED_OPS = 4
#: the device time a level's ops behind the filler should make up, where QUEUED_OPS allow (see QUEUED_OPS)
QUEUED_TOTAL_S = 400e-6


class EventDelay:
    """A spin kernel between two timing events per call: its lengths measured in place (CUDA).

    `kernel(seconds)`: a callable queuing one spin of about `seconds` on the current stream (its cycles computed
    once, not per call); `new_event()`: a timing event, with `record()` on the current stream; `elapsed_s(start,
    stop)`: seconds between two recorded events, waiting for `stop` first."""

    in_place = True

    def __init__(
        self,
        kernel: Callable[[float], Callable[[], None]],
        new_event: Callable[[], Any],
        elapsed_s: Callable[[Any, Any], float],
    ):
        self._kernel, self._new_event, self._elapsed_s = kernel, new_event, elapsed_s
        self._pairs: list[tuple[Any, Any]] = []  # reused from sample to sample: read (and so complete) before reuse
        self._used = 0

    def before_step(self, seconds: float) -> Callable[[], None]:
        spin = self._kernel(seconds)

        def delay() -> None:
            index = self._used
            if index == len(self._pairs):
                self._pairs.append((self._new_event(), self._new_event()))
            start, stop = self._pairs[index]
            start.record()
            spin()
            stop.record()
            self._used = index + 1

        return delay

    def measured_s(self) -> float | None:
        if not self._used:
            return None
        lengths = [self._elapsed_s(start, stop) for start, stop in self._pairs[: self._used]]
        self._used = 0
        return statistics.fmean(lengths)

    def alone_s(self, seconds: float) -> float:
        start, stop = self._new_event(), self._new_event()
        spin = self._kernel(seconds)
        start.record()
        spin()
        stop.record()
        return self._elapsed_s(start, stop)


class QueuedOpDelay:
    """An asynchronous op of calibrated size on a CPU backend's queue: measured apart from the step, each round, as
    what it adds to a busy queue (see the module).

    `issue(units)`: issues the op (or ops) of `units` units and returns what to wait on; `wait(handle)`: waits for it;
    `calibration_units`: a size long enough to time (a few ms), the other calibration size its tenth."""

    in_place = False

    def __init__(
        self,
        issue: Callable[[int], Any],
        wait: Callable[[Any], None],
        calibration_units: int,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self._issue, self._wait, self._clock = issue, wait, clock
        small, large = max(1, calibration_units // 10), calibration_units
        self._wait(self._issue(small))  # the first call compiles (JAX) or allocates
        t_small, t_large = self._timed(small), self._timed(large)
        #: seconds per unit and the fixed cost of one op (dispatch, wake-up), from the two sizes
        self.per_unit_s = max((t_large - t_small) / (large - small), 1e-12)
        self.fixed_s = max(t_small - self.per_unit_s * small, 0.0)
        self._sizes: dict[float, int] = {}  # each level's size, corrected by its own timing
        self._filler: int | None = None  # the filler's size (FILLER_S), once the calibration has set the cost per unit

    def _timed(self, units: int) -> float:
        return min(self._alone(units) for _ in range(CALIBRATION_REPEATS))

    def _alone(self, *sizes: int) -> float:
        """Seconds from issuing ops of `sizes`, one after another, on an idle device to the last one's end."""
        started = self._clock()
        handle = None
        for units in sizes:
            handle = self._issue(units)
        self._wait(handle)
        return self._clock() - started

    def units(self, seconds: float) -> int:
        """The size whose op adds about `seconds` to a busy queue, from the calibration's cost per unit (its fixed
        cost, a dispatch and a wake-up, is paid alone, not queued behind the step's work)."""
        return max(1, round(seconds / self.per_unit_s))

    def queued_s(self, units: int, least_s: float = 0.0) -> float | None:
        """What an op of `units` adds to a busy queue: the time to the end of a filler op (FILLER_S) issued to an
        idle device with k ops of `units` queued behind it (as many as make up QUEUED_TOTAL_S, 1 to QUEUED_OPS),
        less the time to the filler's end alone, per op; the median of LEVEL_REPEATS such pairs, never negative. The
        fixed cost of the wait and the worker's wake-up is in both timings of a pair and cancels. It costs
        LEVEL_REPEATS·(2·(FILLER_S + fixed_s) + k ops): ~3.7 ms for a 100 µs level (k = 4) where the fixed cost is
        0.12 ms, ~2.5 ms + 3× the op for a level past 400 µs, against the one op alone (and its fixed cost) it
        replaces.

        `least_s` (> 0: `alone_s`): while the median reads below it, more pairs are taken, MAX_LEVEL_PAIRS in all,
        their median over all taken; None if it still does (no reading of the op's length, only of the machine's
        noise: UNREAD_SHARE)."""
        filler = self._filler
        if filler is None:
            filler = self._filler = self.units(FILLER_S)
        ops = min(QUEUED_OPS, max(1, math.ceil(QUEUED_TOTAL_S / max(units * self.per_unit_s, 1e-9))))
        behind = (filler,) + (units,) * ops

        def pair() -> float:
            return (self._alone(*behind) - self._alone(filler)) / ops

        added = [pair() for _ in range(LEVEL_REPEATS)]
        if least_s <= 0:
            return max(statistics.median(added), 0.0)
        while statistics.median(added) < least_s and len(added) < MAX_LEVEL_PAIRS:
            added.append(pair())
        found = statistics.median(added)
        return found if found >= least_s else None

    def size(self, seconds: float) -> int:
        """The size for a delay of `seconds`: the calibration's, corrected once by what it adds to a queue
        (`queued_s`, by at most MAX_LEVEL_CORRECTION either way), kept for the level (a case's levels are the same in
        every round)."""
        found = self._sizes.get(seconds)
        if found is None:
            first = self.units(seconds)
            correction = seconds / max(self.queued_s(first) or 0.0, 1e-9)
            correction = min(max(correction, 1 / MAX_LEVEL_CORRECTION), MAX_LEVEL_CORRECTION)
            found = self._sizes[seconds] = max(1, round(first * correction))
        return found

    def before_step(self, seconds: float) -> Callable[[], None]:
        units, issue = self.size(seconds), self._issue

        def delay() -> None:
            issue(units)

        return delay

    def measured_s(self) -> float | None:
        return None

    def alone_s(self, seconds: float) -> float | None:
        """What a delay of `seconds` adds to a busy queue, timed apart from the step (`queued_s`): once a round, the
        machine's load moves it. None where it read below UNREAD_SHARE of `seconds` after MAX_LEVEL_PAIRS pairs: a
        delay that ran did not last ~0 s (the round leaves that sample out: measure.perturbation)."""
        return self.queued_s(self.size(seconds), UNREAD_SHARE * seconds)


def unread_said(count: int) -> str | None:
    """What a bound's note says of `count` device samples left out of the fit because their delay's length read ~0 s
    (QueuedOpDelay.alone_s None: UNREAD_SHARE, MAX_LEVEL_PAIRS); None for none."""
    if not count:
        return None
    return (
        f"{count} device delay reading(s) left out of the fit: each read ~0 s (below {UNREAD_SHARE:.0%} of its "
        f"level after {MAX_LEVEL_PAIRS} timings), the machine's noise, not the length of a delay that ran"
    )
