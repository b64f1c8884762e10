"""Device delays (`run --bound`, Backend.device_delay): device work of a chosen length, queued where the step's work
runs, before each step call, the host not waiting; and how long each really took.

Two kinds, one per way of measuring them:
- `EventDelay` (CUDA: torch's `torch.cuda._sleep`, CuPy's clock-spin kernel): a kernel that spins for a number of
  clock cycles on the current stream, bracketed by two timing events each call, so that every delay's real length is
  read after the sample's sync (the cycles per second drift with the clocks: a calibration once is not its length).
- `QueuedOpDelay` (JAX on a CPU): an op whose cost grows with its size, issued asynchronously to the one queue the
  step's work goes to. Its size is calibrated once (two sizes timed alone: fixed cost and cost per unit);
  it cannot be timed in place (no events on a CPU), so the perturbation rounds time one alone each round
  (`alone_s`). Where it runs beside the step instead of before it, it would read as slack: jax_backend says why its
  op is ordered before the step's. MXNet had one too (a `sin` per engine worker) until it was measured costing
  0.36-0.93x its alone length beside a step: it has none now (mxnet_backend).
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

#: timings of each calibration size (their fastest: on shared cores a timing is stretched by other jobs, never shortened,
#: and a stretched calibration makes every delay short: a 5 ms delay ran 1.8 ms from medians on the loaded 2-core machine)
CALIBRATION_REPEATS = 5
#: timings of a level's own size (their fastest), once per level: the cost per unit measured at the calibration's sizes
#: did not hold at every size on MXNet, when it had a delay (two engine workers run two delays side by side at some sizes, one after the
#: other at others: a 2 ms delay ran 0.63 ms), so each level's size is corrected once by its own timing
LEVEL_REPEATS = 2
# The most a level's own timing may correct its calibrated size, either way: the correction it exists for was 3.2x (a
# 2 ms MXNet delay that ran 0.63 ms). A timing that would correct it by more is no cost per unit at that size but a
# timing of the op's fixed cost (its work done before the clock read it, or the fixed cost read high): one such timing
# on a busy 2-core machine made a 142 µs JAX delay 2.83 s (x20,000), its round past the case's whole budget.
MAX_LEVEL_CORRECTION = 4.0


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
    """An asynchronous op of calibrated size on a CPU backend's queue: measured alone, each round (see the module).

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

    def _timed(self, units: int) -> float:
        return min(self._alone(units) for _ in range(CALIBRATION_REPEATS))

    def _alone(self, units: int) -> float:
        started = self._clock()
        self._wait(self._issue(units))
        return self._clock() - started

    def units(self, seconds: float) -> int:
        """The size whose op takes about `seconds` alone, from the calibration."""
        return max(1, round((seconds - self.fixed_s) / self.per_unit_s))

    def size(self, seconds: float) -> int:
        """The size for a delay of `seconds`: the calibration's, corrected once by its own timing (LEVEL_REPEATS, by
        at most MAX_LEVEL_CORRECTION either way), kept for the level (a case's levels are the same in every round)."""
        found = self._sizes.get(seconds)
        if found is None:
            first = self.units(seconds)
            took = min(self._alone(first) for _ in range(LEVEL_REPEATS))
            correction = max(seconds - self.fixed_s, 0.0) / max(took - self.fixed_s, 1e-9)
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

    def alone_s(self, seconds: float) -> float:
        return self._alone(self.size(seconds))
