"""A variant's USS delta is its own run's: not the garbage or the allocator's free pages that work before it left."""

from __future__ import annotations

import ctypes
import gc

import pytest

from asyncbench.backends.numpy_backend import NumpyBackend
from asyncbench.engine import memory

MIB = 2**20
#: what a run leaves behind in each test: far above the few pages psutil and the interpreter move between readings
LEFT_MIB = 48


def _uss_delta_mib(run) -> float:
    measured = memory.measure_run(NumpyBackend(), "cpu", run, lambda: None)
    if measured.host_uss_delta_bytes is None:
        pytest.skip("USS not readable here (/proc/PID/smaps)")
    return measured.host_uss_delta_bytes / MIB


def test_a_run_s_cyclic_garbage_is_not_counted_as_memory_it_kept():
    """A run whose data sit in a reference cycle freed only by the next collection: counted as kept (+48 MiB) where
    the collection came after the reading, and given back in whichever later variant's run it came (a −11.4 MiB
    k2 beside k0's +11.4 MiB in `training-memory`)."""

    def run() -> None:
        cycle: list = [bytearray(LEFT_MIB * MIB)]
        cycle.append(cycle)

    was = gc.isenabled()
    gc.disable()  # the cycle waits for a collection, as between two variants' runs
    try:
        assert abs(_uss_delta_mib(run)) < LEFT_MIB / 4
    finally:
        if was:
            gc.enable()


@pytest.mark.skipif(memory._TRIM is None, reason="glibc's malloc_trim: the allocator this checks")
def test_free_pages_the_allocator_keeps_are_not_counted_as_memory_the_run_kept():
    """Small blocks malloc'd and freed by a run stay in glibc's arena (resident, so in USS) until a trim: the delta
    counted them as the run's, and the variant whose run trimmed them read as a negative."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]

    kept = []

    def run() -> None:
        blocks = [libc.malloc(1024) for _ in range(LEFT_MIB * 1024)]
        for block in blocks:
            ctypes.memset(block, 1, 1024)
        kept.append(libc.malloc(1024))  # a block above the freed ones: the heap's top cannot shrink past it
        for block in blocks:
            libc.free(block)

    try:
        assert abs(_uss_delta_mib(run)) < LEFT_MIB / 4
    finally:
        libc.free(kept[0])
