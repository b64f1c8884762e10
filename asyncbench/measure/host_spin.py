"""The host's delay of `run --bound`: a busy spin of a set length before each step call, its real length kept."""

from __future__ import annotations

import time
from typing import Callable


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
