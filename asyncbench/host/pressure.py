"""What the OS says about the machine over a window of time: CPU pressure, other processes' CPU, steal, load.

A `Window` opened when a case starts sampling and read when it ends tells
whether the case shared its cores (results.reference keeps the figures;
verdicts.machine and history.discount read them). The process that
measures and its parent (the run's own process) are not "other processes".
"""

from __future__ import annotations

import os
import time

# Linux's pressure stall information: the microseconds in which some runnable task waited for a CPU, since boot.
# Exact to the microsecond over any window (30 ms included): on 2 cores it read 0.00-0.05 of the time quiet, 0.50
# beside one CPU hog and 1.00 beside two, where the CPU times of /proc/stat, counted in 10 ms ticks, cannot tell a
# 30 ms case's neighbour from noise.
PRESSURE = "/proc/pressure/cpu"


def stalled_us() -> int | None:
    """PSI's cumulative CPU stall time ('some', µs); None where the kernel does not report it."""
    try:
        with open(PRESSURE, encoding="ascii") as stream:
            some = stream.readline().split()
        return int(some[-1].split("=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


class Window:
    """What the OS says about the machine between its making and `read`: load per core, the share of the time some
    task waited for a CPU (PSI), other processes' share of the CPU, the hypervisor's steal (None where not
    reported). Other processes are those outside this one and its parent (the run's own process)."""

    def __init__(self) -> None:
        import psutil

        self._psutil = psutil
        self._process = psutil.Process()
        try:
            self._parent = self._process.parent()
        except psutil.Error:
            self._parent = None
        self._wall = time.monotonic()
        self._stalled = stalled_us()
        self._system = psutil.cpu_times()
        self._own = self._own_cpu()

    def _own_cpu(self) -> float:
        used = 0.0
        for process in (self._process, self._parent):
            if process is None:
                continue
            try:
                times = process.cpu_times()
            except self._psutil.Error:  # the parent went away: its share is no longer ours to subtract
                continue
            used += float(times.user + times.system)
        return used

    def read(self) -> tuple[float | None, float | None, float | None, float | None]:
        """(load per core, CPU pressure, other processes' share of the CPU, steal), each 0-1 but the load."""
        psutil = self._psutil
        cores = psutil.cpu_count() or 1
        try:
            load: float | None = os.getloadavg()[0] / cores
        except (AttributeError, OSError):
            load = None
        wall = time.monotonic() - self._wall
        stalled = stalled_us()
        pressure = None
        if stalled is not None and self._stalled is not None and wall > 0:
            pressure = max(0.0, min(1.0, (stalled - self._stalled) / 1e6 / wall))
        now, own = psutil.cpu_times(), self._own_cpu() - self._own
        total = sum(now) - sum(self._system)
        if wall <= 0 or total <= 0:
            return load, pressure, None, None
        idle = (now.idle - self._system.idle) + (getattr(now, "iowait", 0.0) - getattr(self._system, "iowait", 0.0))
        steal = getattr(now, "steal", None)
        stolen = None if steal is None else max(0.0, min(1.0, (steal - self._system.steal) / total))
        busy = total - idle - (0.0 if steal is None else steal - self._system.steal)
        others = max(0.0, min(1.0, (busy - own) / total))
        return load, pressure, others, stolen
