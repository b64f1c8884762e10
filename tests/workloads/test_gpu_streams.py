"""Every workload's GPU code path on the stream-semantics test device (tests/stream_device.py).

The device models what CUDA code relies on — per-stream order, events,
stream waits, a bounded launch queue, a copy engine for pinned buffers,
values that are wrong before their sync — with kernels that sleep, so
overlap is real time on threads and the assertions hold on a loaded machine.
These tests are how GPU logic is tested without a GPU.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pytest

from asyncbench.results.model import ERROR, OK, SKIPPED, Clocks
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import INT, Param, Prepared, Workload
from tests.support.stream_cases import run_on
from tests.support.stream_device import FLOPS_PER_S, LAUNCH_QUEUE_DEPTH, Span, StreamSimBackend

pytestmark = pytest.mark.streams

PRODUCT_S = 2 * 128**3 / FLOPS_PER_S  # one 128² product


@pytest.fixture
def sim():
    backend = StreamSimBackend(gpus=2, pool=4)
    yield backend
    backend.close()


# --- the device itself: what the workload tests below rely on ---------------------------------------------------


def test_a_value_read_before_its_sync_is_wrong_and_right_after(sim):
    x = sim.random((128, 128), "float32", "cuda:0")()
    y = x @ x
    assert np.isnan(y.data).all()  # issued, not yet run: the values do not exist
    sim.barrier("cuda:0")
    assert np.allclose(y.data, x.data @ x.data, rtol=1e-4)


def test_the_launch_queue_is_bounded_so_issuing_blocks_when_it_is_full(sim):
    x = sim.random((128, 128), "float32", "cuda:0")()
    sim.barrier("cuda:0")
    extra = 8
    start = time.perf_counter()
    for _ in range(LAUNCH_QUEUE_DEPTH + extra + 1):
        x @ x
    issued_s = time.perf_counter() - start
    sim.barrier("cuda:0")
    assert issued_s >= (extra - 1) * PRODUCT_S  # the host waited for room in the queue


def test_another_stream_sees_a_value_only_after_waiting_for_its_event(sim):
    # a 512² product (134 ms on the device): a 128² one (2 ms) could finish before the side stream's op was issued,
    # when the test's thread waited out a switch interval (5 ms) behind the device's threads on a loaded machine
    x = sim.random((512, 512), "float32", "cuda:0")()
    sim.barrier("cuda:0")
    side = sim.new_stream("cuda:0")
    y = x @ x
    with sim.on_stream(side):
        unordered = y + 0  # runs at once on the side stream: y is not made yet
    sim.stream_wait(side, sim.record_event("cuda:0"))
    with sim.on_stream(side):
        ordered = y + 0
    sim.barrier("cuda:0")
    assert np.isnan(unordered.data).all()
    assert np.allclose(ordered.data, y.data)


def test_a_nonblocking_copy_into_pinned_memory_returns_at_once_and_into_pageable_memory_waits(sim):
    x = sim.random((128, 128), "float32", "cuda:0")()
    sim.barrier("cuda:0")
    pinned, pageable = sim.pinned_empty((128, 128), "float32"), np.zeros((128, 128), "float32")
    for host, waits in ((pinned, False), (pageable, True)):
        y = x @ x
        start = time.perf_counter()
        sim.copy_to_host(y, host, non_blocking=True)
        returned_s = time.perf_counter() - start
        assert (returned_s >= PRODUCT_S * 0.9) == waits
        sim.barrier("cuda:0")
        assert np.array_equal(host, y.data)


# --- the workloads' GPU paths: what ran at once, from the device's own log -------------------------------------


@dataclass(frozen=True)
class Trace:
    """One run of a variant: what ran on the device, when the host got control back, when the timer stopped."""

    spans: list[Span]
    returned_s: float
    timer_stop_s: float

    def on(self, stream_kind: str, what: str = "kernel") -> list[Span]:
        return [s for s in self.spans if s.what == what and s.stream.split("/")[1].startswith(stream_kind)]

    def last_end_s(self) -> float:
        return max(s.end_s for s in self.spans)


def at_once(a: list[Span], b: list[Span]) -> bool:
    """Whether some span of `a` and some span of `b` ran at the same time (for a real stretch, not a touch)."""
    return any(min(x.end_s, y.end_s) - max(x.start_s, y.start_s) > PRODUCT_S / 4 for x in a for y in b)


def traced(sim: StreamSimBackend, workload: str, variant: str, device: str = "cuda:0", **params: Any) -> Trace:
    """Set a workload up on the test device and run one variant (after a warm-up) with the device's log on,
    bracketed by an event timer as the harness brackets a sample."""
    chosen = BUILT_IN[workload]
    prepared = chosen.setup(sim, device, {**chosen.defaults(quick=True), **params})
    run = prepared.variants[variant]
    run()
    prepared.sync()
    target = sim.device(device)
    target.log = []
    timer = sim.timer(device)
    timer.start()
    kept = run()
    returned_s = time.perf_counter()
    timer.stop()
    prepared.sync()
    timer.elapsed_s()
    spans, target.log = target.log, None
    del kept
    if prepared.close is not None:
        prepared.close()
    return Trace(spans, returned_s, timer._stop.time_s)


def test_copy_overlap_copies_run_under_the_products_on_the_copy_stream(sim):
    trace = traced(sim, "copy_overlap", "overlapped", size=128, n_matrices=8)
    assert at_once(trace.on("default"), trace.on("side", "copy"))
    assert trace.timer_stop_s >= trace.last_end_s()  # the end event comes after the last copy


def test_copy_overlap_naive_nonblocking_copies_overlap_nothing_yet_return_at_once(sim):
    trace = traced(sim, "copy_overlap", "naive_nonblocking", size=128, n_matrices=8)
    copies, products = trace.on("default", "copy"), trace.on("default")
    assert len(copies) == 8
    assert not at_once(products, copies)
    assert trace.returned_s < min(c.start_s for c in copies)  # the host did not wait for them


def test_multi_device_with_the_stream_partner_runs_both_streams_at_once(sim):
    trace = traced(sim, "multi_device", "together", size=128, n_iter=8, partner="stream")
    assert at_once(trace.on("default"), trace.on("side"))  # a fork before the side stream made "together" serial
    assert trace.timer_stop_s >= trace.last_end_s()


def test_barrier_wait_one_returns_while_the_background_work_goes_on(sim):
    trace = traced(sim, "barrier", "wait_one", size=128, background_ops=5)
    background = trace.on("side")
    assert len(background) == 5
    assert trace.returned_s < max(s.end_s for s in background)
    waitall = traced(sim, "barrier", "waitall", size=128, background_ops=5)
    assert waitall.returned_s >= max(s.end_s for s in waitall.on("side"))


def test_small_ops_parallel_streams_run_side_by_side_and_the_timer_brackets_every_stream(sim):
    trace = traced(sim, "small_ops", "parallel", size=128, n_tasks=4, ops_per_task=4, workers=4)
    streams = {s.stream for s in trace.on("side")}
    assert len(streams) == 4
    first, *others = sorted(streams)
    assert any(at_once([s for s in trace.spans if s.stream == first], [s for s in trace.spans if s.stream == other]) for other in others)
    assert trace.timer_stop_s >= trace.last_end_s()


# --- the workloads through the runner: clocks, metrics, verification and warnings -------------------------------


def test_copy_overlap_verifies_and_measures_device_time(sim):
    result = run_on(sim, "copy_overlap", size=128, n_matrices=4)
    assert result.status == OK, result.reason
    assert result.metrics["verified"] == 1.0
    assert result.warnings == ()
    assert all(v.device_s is not None for v in result.variants.values())


def test_copy_overlap_verify_catches_a_copy_that_did_not_wait_for_its_product(sim, monkeypatch):
    monkeypatch.setattr(sim, "stream_wait", lambda stream, event: None)  # the copy stream no longer waits
    # 256²: a product takes twice as long as its copy, so each copy reads its product before it is made
    result = run_on(sim, "copy_overlap", size=256, n_matrices=2)
    assert result.status == ERROR
    assert "verification failed" in result.reason
    assert "copied results differ" in result.reason


def traced_with_partner(sim: StreamSimBackend, partner: str, **params: Any) -> tuple[Trace, list[Span]]:
    """multi_device's `together` traced on cuda:0, with what ran on the partner meanwhile."""
    sim.device(partner).log = []
    trace = traced(sim, "multi_device", "together", partner=partner, **params)
    spans, sim.device(partner).log = sim.device(partner).log, None
    return trace, [s for s in spans if s.start_s >= min(t.start_s for t in trace.spans)]


# Traces a test takes before it says the two parts never ran at once. One trace can miss the overlap on a loaded
# runner: a host thread descheduled for the length of the case device's whole part (a CI failure on 2 cores beside
# a second test worker) issues the partner's work only after it. Code that serializes the parts misses it every time.
TRACE_TRIES = 3


def ran_at_once_with_partner(sim: StreamSimBackend, partner: str, **params: Any) -> bool:
    """Whether multi_device's `together` ran work on cuda:0 and on the partner at once in one of TRACE_TRIES traces."""
    for _ in range(TRACE_TRIES):
        trace, on_partner = traced_with_partner(sim, partner, **params)
        if at_once(trace.on("default"), on_partner):
            return True
    return False


def test_multi_device_on_two_gpus_runs_both_at_once_and_gives_no_device_time(sim):
    result = run_on(sim, "multi_device", size=128, n_iter=8, partner="cuda:1")
    assert result.status == OK, result.reason
    assert all(v.device_s is None for v in result.variants.values())  # events on cuda:0 would time cuda:0 alone
    assert "no device time" in result.note
    assert ran_at_once_with_partner(sim, "cuda:1", size=128, n_iter=8)


@pytest.mark.alone  # the CPU part's time against the simulated GPU part's: a busy second core stretches the first
def test_multi_device_gpu_plus_cpu_balances_the_parts_to_similar_times(sim):
    result = run_on(sim, "multi_device", size=128, n_iter=16, partner="cpu")
    assert result.status == OK, result.reason
    first, second = (result.variants[v].done_s.median for v in ("first", "second"))
    assert max(first, second) < 2 * min(first, second), (first, second)  # equal counts: the CPU's part 8× the GPU's
    assert "cpu's count from one product timed on each" in result.note  # how; the reading says whether they came out alike
    assert ran_at_once_with_partner(sim, "cpu", size=128, n_iter=16)  # the GPU work was issued first, then the CPU beside it


def test_small_ops_refuses_more_workers_than_distinct_streams(sim):
    result = run_on(sim, "small_ops", workers=5)  # the test device hands out 4 distinct side streams
    assert result.status == SKIPPED
    assert "at most 4 distinct streams" in result.reason


def test_sync_async_runs_ahead_on_an_asynchronous_device(sim):
    result = run_on(sim, "sync_async", n_ops=200)
    assert result.status == OK, result.reason
    assert result.asynchronous is True
    assert result.warnings == ()
    assert result.metrics["t2_s"] is not None  # defined only where ops return before they finish


def test_matmul_device_time_is_the_products_time(sim):
    result = run_on(sim, "matmul", size=128, n_iter=8, include_rng=False)
    assert result.status == OK, result.reason
    assert result.warnings == ()
    variant = next(iter(result.variants.values()))
    assert variant.device_s is not None
    assert 8 * PRODUCT_S * 0.9 <= variant.device_s.median <= variant.done_s.median * 1.05


def test_conversion_runs_and_each_conversion_waits(sim):
    result = run_on(sim, "conversion", size=128, n_iter=4)
    assert result.status == OK, result.reason
    assert result.warnings == ()
    item = result.variants["item"]
    assert item.issue_s.median >= 4 * PRODUCT_S * 0.9  # .item() waits: the loop cannot return before the products


def test_training_memory_reports_a_device_peak_per_sync_every(sim):
    result = run_on(sim, "training_memory", n_batches=3, batch_size=16, sync_every=[1, 0])
    assert result.status == OK, result.reason
    assert result.warnings == ()
    assert result.metrics["device_peak_mb_k1"] > 0
    assert result.metrics["device_peak_mb_k0"] > 0


class _BigThenSmall(Workload):
    """Variant `big` holds 8 arrays until the sync, `small` one: their device memory must differ."""

    name = "big_then_small"
    params = (Param("size", INT, 128, "side"),)
    variants = ("big", "small")

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        x = backend.random((params["size"],) * 2, "float32", device)()
        backend.barrier(device)
        return Prepared(
            variants={"big": lambda: [x + 1 for _ in range(8)], "small": lambda: x + 1},
            sync=lambda: backend.barrier(device),
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        return {}


def test_each_variant_gets_its_own_device_memory_window(sim):
    result = run_on(sim, _BigThenSmall())
    assert result.status == OK, result.reason
    big, small = result.variants["big"].memory, result.variants["small"].memory
    array_bytes = 128 * 128 * 4
    assert big.device_peak_bytes - small.device_peak_bytes >= 6 * array_bytes
    # reserved is emptied before each variant: small's is not big's cache left behind
    assert big.device_reserved_bytes - small.device_reserved_bytes >= 6 * array_bytes


class _SyncsTheWrongStream(Workload):
    """Its work is on the default stream but its sync waits for a side stream: the events outlast done."""

    name = "syncs_the_wrong_stream"
    variants = ("run",)

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        x = backend.random((128, 128), "float32", device)()
        side = backend.new_stream(device)
        backend.barrier(device)
        return Prepared(variants={"run": lambda: [x @ x for _ in range(4)]}, sync=side.synchronize)


def test_device_time_beyond_done_time_is_a_warning_on_the_row(sim):
    result = run_on(sim, _SyncsTheWrongStream())
    assert result.status == OK, result.reason
    assert any("device time exceeds done time" in w for w in result.warnings)
    assert math.isfinite(result.variants["run"].device_s.median)
