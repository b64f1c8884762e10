"""The host's busy work of a set length: `run --bound`'s host delay before each step call (HostSpin, its real length
kept) and the planted topologies' host cost per op (workloads.bound_planted), one spin for both.

A spin hashes on the calling thread until the clock passes, never sleeping: host work holds its core, and a delay
that let go of it measured something else. The tool's spin handed the core on at every turn (`time.sleep(0)`, to
hand on the GIL), and on a loaded 2-core machine each of those turns gave the core to another process: a 25 µs spin
took 65 µs, a 100 µs one 128 µs (hashing: 29 and 104 µs; a bare clock loop: 26 and 102 µs), so a run's low levels
were all longer than asked, and a delay that yields absorbed the preemption the step would have suffered — a trial's
host-bound JAX step of 12 eager ops read DEVICE-BOUND with a host slack of half its step.
"""

from __future__ import annotations

import hashlib
import time
from typing import Callable

#: what one turn of the spin hashes (about 60 µs of a 2-core CPU's time, with the GIL let go: a waiting thread wakes
#: and takes it), and near its end (SPIN_NEAR_END_S before it) a turn of 4 µs, still above the 2 KiB past which
#: CPython's hashlib lets go of the GIL
SPIN_TURN_BYTES, SPIN_LAST_BYTES = 65536, 4096
SPIN_NEAR_END_S = 100e-6
_SPIN_TURN, _SPIN_LAST = bytes(SPIN_TURN_BYTES), bytes(SPIN_LAST_BYTES)


def busy(seconds: float, clock: Callable[[], float] = time.perf_counter) -> float:
    """Busy the host for `seconds` and return the time it really took: hashing on the calling thread until the
    clock passes, never a sleep (a sleep frees the core, host work does not).

    Hashing lets go of the GIL, so a spin holds the core but not the interpreter: a device whose kernels are Python
    threads (the stream test device) starts them as a GPU would. A pure-Python loop held them off for the
    interpreter's switch interval (5 ms), and so did hashing in turns of 4 µs (a waiting thread wakes too late to
    take the GIL in between): turns of SPIN_TURN_BYTES leave it time, and near the end SPIN_LAST_BYTES keep the
    spin within a few µs of its length."""
    start = clock()
    end = start + seconds
    now = start
    while now < end:
        hashlib.sha256(_SPIN_TURN if end - now > SPIN_NEAR_END_S else _SPIN_LAST)
        now = clock()
    return now - start


class HostSpin:
    """A busy spin of `seconds` before each step call (`busy`), each spin's real length added up (`mean_s`): a spin
    stretched by a preemption is recorded as long as it was."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter):
        self.seconds, self.clock = seconds, clock
        self.spun_s = 0.0
        self.calls = 0

    def __call__(self) -> None:
        self.spun_s += busy(self.seconds, self.clock)
        self.calls += 1

    def mean_s(self) -> float:
        """The spins' mean length per step call so far (0 before any)."""
        return self.spun_s / self.calls if self.calls else 0.0
