"""Issue 36, finding 9 (36d's part): multi_device's `partner: stream` on JAX labelled for what it ran, the
queued variant traced behind its hold, and JAX's device memory read from `Device.memory_stats()`.

Each test failed on the code before: the note said "two streams" where JAX ran both parts on XLA's one, the
trace ran the queued ops with nothing holding the device, and JAX reported no device memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.backends.jax_backend import JaxBackend
from asyncbench.engine import trace
from asyncbench.results.model import OK
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.sync_async import QUEUED
from tests.support.stream_cases import run_on
from tests.support.stream_device import StreamSimBackend, StreamSimJaxBackend

#: the held device in the traced queued run: its ops wait this long behind the hold before the sync returns
HOLD_SHARE = 0.8


@pytest.mark.streams
def test_multi_device_stream_partner_on_jax_says_both_parts_ran_on_one_stream():
    backend = StreamSimJaxBackend(gpus=1)
    try:
        result = run_on(backend, "multi_device", size=128, n_iter=4, partner="stream")
    finally:
        backend.close()
    assert result.status == OK
    assert "two streams" not in (result.note or "")
    assert "one stream on cuda:0" in (result.note or "")


@pytest.mark.streams
def test_multi_device_stream_partner_with_side_streams_is_still_two_streams():
    backend = StreamSimBackend(gpus=1, pool=4)
    try:
        result = run_on(backend, "multi_device", size=128, n_iter=4, partner="stream")
    finally:
        backend.close()
    assert result.status == OK
    assert "two streams on cuda:0" in (result.note or "")


@pytest.mark.streams
def test_the_traced_queued_run_waits_behind_its_hold(tmp_path):
    backend = StreamSimBackend(gpus=1, pool=4)
    try:
        workload = BUILT_IN["sync_async"]
        prepared = workload.setup(backend, "cuda:0", {**workload.defaults(quick=True), "n_ops": 200})
        hold = prepared.preludes[QUEUED]
        variants = {QUEUED: prepared.variants[QUEUED]}
        traced = trace.record(backend, "cuda:0", "case", variants, prepared.sync, str(tmp_path), prepared.preludes)
    finally:
        backend.close()
    events = json.loads(Path(traced.files[QUEUED]).read_text())["traceEvents"]
    issue = next(e for e in events if e["name"] == trace.ISSUE)
    sync = next(e for e in events if e["name"] == trace.SYNC)
    # the ops queued behind the hold: the run is over only once the hold is, well after their issue began
    assert (sync["ts"] + sync["dur"] - issue["ts"]) / 1e6 > HOLD_SHARE * hold.seconds  # type: ignore[attr-defined]


def test_trace_runs_each_variants_prelude_once_before_its_run(tmp_path):
    calls: list[str] = []
    backend = StreamSimBackend(gpus=1, pool=4)
    try:
        trace.record(
            backend,
            "cpu",
            "case",
            {"held": lambda: calls.append("run"), "plain": lambda: calls.append("plain")},
            lambda: None,
            str(tmp_path),
            {"held": lambda: calls.append("prelude")},
        )
    finally:
        backend.close()
    assert calls == ["prelude", "run", "plain"]


class _Device:
    """A jax.Device as XLA's GPU client has it: memory_stats() a dict of allocator figures (-1: unavailable)."""

    def __init__(self, stats: dict[str, int] | None):
        self.stats = stats

    def memory_stats(self) -> dict[str, int] | None:
        return None if self.stats is None else dict(self.stats)


def _backend(device: _Device) -> JaxBackend:
    backend = JaxBackend()
    backend._device = lambda name: device  # type: ignore[method-assign]
    return backend


def test_jax_reports_device_memory_where_xla_keeps_it():
    device = _Device({"bytes_in_use": 100, "pool_bytes": 400, "peak_bytes_in_use": 500, "bytes_limit": 1000})
    backend = _backend(device)
    with backend.memory_window("cuda:0"):
        device.stats = {**device.stats, "bytes_in_use": 300, "peak_bytes_in_use": 900}  # type: ignore[dict-item]
        figures = backend.device_memory("cuda:0")
    assert figures == {"device_pool_used_bytes": 300, "device_pool_total_bytes": 400, "device_peak_bytes": 900}


def test_jax_reports_no_peak_the_window_did_not_raise_and_nothing_the_platform_lacks():
    device = _Device({"bytes_in_use": 100, "pool_bytes": -1, "peak_bytes_in_use": 500})
    backend = _backend(device)
    with backend.memory_window("cuda:0"):
        figures: dict[str, Any] = backend.device_memory("cuda:0")
    assert figures == {"device_pool_used_bytes": 100}  # the peak of 500 was an earlier run's
    assert _backend(_Device(None)).device_memory("cpu") == {}  # XLA's CPU client keeps none
