"""Memory of one run: host RSS peak (polled), USS delta, and the framework's device figures; a case's objects freed.

Run-ahead costs memory while the run is in flight, not after it, so the host
RSS is polled from a thread during the run; USS (what freeing the process
would return) is read before and after, as it is too slow to poll.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
from typing import Any, Callable

import psutil

from asyncbench.backends.base import Backend
from asyncbench.results.model import Memory

# Fine enough to catch a minibatch's worth of run-ahead, coarse enough not to steal a core.
POLL_INTERVAL_S = 0.002


class RssPeak:
    """Polls this process's RSS in a thread while the `with` block runs; `.peak_bytes` after."""

    def __init__(self, interval_s: float = POLL_INTERVAL_S):
        self._process = psutil.Process()
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="asyncbench-rss", daemon=True)
        self.peak_bytes = self._process.memory_info().rss

    def _poll(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.peak_bytes = max(self.peak_bytes, self._process.memory_info().rss)

    def __enter__(self) -> RssPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_bytes = max(self.peak_bytes, self._process.memory_info().rss)


def _libc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, where the C library has it (None elsewhere: musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


_TRIM = _libc_trim()


def _settled() -> None:
    """Free what is garbage now and hand the allocator's free pages back before USS is read: freed memory that
    malloc keeps is returned at some later variant's time (a k2 of −11.4 MiB, k0's +11.4 MiB given back during
    k2's run), so a delta read without it is the order of the variants', not the run's."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def _uss_bytes(process: psutil.Process) -> int | None:
    try:
        return process.memory_full_info().uss
    except (psutil.AccessDenied, AttributeError):  # USS needs /proc/PID/smaps
        return None


def measure_run(backend: Backend, device: str, run: Callable[[], Any], sync: Callable[[], None]) -> Memory:
    """One synchronized run of `run` in a fresh device-memory window (caches emptied, peaks reset
    before it, so each variant's figures are its own); host and device memory."""
    process = psutil.Process()
    _settled()  # what the rounds before (timed, census, an earlier variant) left: theirs, not this run's
    with backend.memory_window(device):
        rss_before = process.memory_info().rss
        uss_before = _uss_bytes(process)
        with RssPeak() as rss:
            result = run()
            sync()
        device_figures = backend.device_memory(device)
        del result
    _settled()  # this run's own garbage, freed before its USS is read (else the next variant's delta frees it)
    uss_after = _uss_bytes(process)
    return Memory(
        host_rss_bytes=process.memory_info().rss,
        host_rss_peak_delta_bytes=rss.peak_bytes - rss_before,
        host_uss_delta_bytes=uss_after - uss_before if uss_after is not None and uss_before is not None else None,
        **device_figures,
    )


def release_case_objects() -> None:
    """Free what the case left in reference cycles (its arrays may sit in one) before the next case is measured,
    then freeze what survives: the next case's collection scans only the objects that case makes.

    Without the freeze each collection walks every object the process holds — 170,000 with torch imported,
    about 0.1 s, and in --in-process every finished result too, so the cost per case grew with the sweep.
    What survives a case is module state and finished results: long-lived, so the cycle collector has
    nothing to find there.
    """
    gc.collect()
    gc.freeze()
