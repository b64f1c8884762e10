"""Device delays (`run --bound`, Backend.device_delay): the CUDA kind (a spin kernel between timing events, each
delay's length read from its events) with a model of torch's and CuPy's calls, the CPU kind (an op of calibrated size,
measured alone) with a fake op and clock, and JAX's and MXNet's real ones on a CPU: queued, not run inline, and ahead
of the work issued after them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from asyncbench.backends import device_delays
from asyncbench.backends.device_delays import EventDelay, QueuedOpDelay
from asyncbench.backends.numpy_backend import NumpyBackend
from asyncbench.backends.torch_backend import TorchBackend

ROOT = Path(__file__).resolve().parents[2]


class FakeStream:
    """A stream as events see it: a device clock that a kernel moves on by its length."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.kernels: list[int] = []


class FakeEvent:
    def __init__(self, stream: FakeStream) -> None:
        self.stream = stream
        self.at_s: float | None = None

    def record(self) -> None:
        self.at_s = self.stream.now_s


def fake_elapsed(start: FakeEvent, stop: FakeEvent) -> float:
    assert start.at_s is not None
    assert stop.at_s is not None
    return stop.at_s - start.at_s


def test_an_event_delay_reads_each_delays_length_from_its_events_not_from_the_calibration() -> None:
    stream = FakeStream()
    clock_ratio = [1.0]  # the SM clock against the calibrated one: a boost makes the same cycles pass sooner

    def kernel(seconds: float) -> Any:
        cycles = int(seconds * 1e9)

        def spin() -> None:
            stream.kernels.append(cycles)
            stream.now_s += cycles / 1e9 / clock_ratio[0]

        return spin

    delay = EventDelay(kernel, lambda: FakeEvent(stream), fake_elapsed)
    assert delay.in_place
    assert delay.measured_s() is None
    before = delay.before_step(0.002)
    before()
    clock_ratio[0] = 2.0  # the clock rose: the second delay took half as long
    before()
    assert stream.kernels == [2_000_000, 2_000_000]
    assert delay.measured_s() == pytest.approx((0.002 + 0.001) / 2)
    assert delay.measured_s() is None  # forgotten once read
    before()  # the next sample reuses the events
    assert delay.measured_s() == pytest.approx(0.001)
    assert delay.alone_s(0.004) == pytest.approx(0.002)


def test_torchs_device_delay_sleeps_the_calibrated_cycles_on_the_current_stream_between_events(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    stream = FakeStream()

    def sleep(cycles: int) -> None:
        stream.kernels.append(cycles)
        stream.now_s += cycles / 1.5e9  # the clock runs at 1.5 GHz now, not the calibrated 2

    class Event(FakeEvent):
        def __init__(self, enable_timing: bool = False) -> None:
            assert enable_timing
            super().__init__(stream)

        def synchronize(self) -> None:
            pass

        def elapsed_time(self, stop: FakeEvent) -> float:
            return fake_elapsed(self, stop) * 1e3  # milliseconds, as torch's

    monkeypatch.setattr(torch.cuda, "_sleep", sleep)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(TorchBackend, "_cycles_per_s", lambda self, device: 2e9)
    delay, why = TorchBackend().device_delay("cuda:0")
    assert why is None
    assert delay is not None
    delay.before_step(0.001)()
    assert stream.kernels == [2_000_000]
    assert delay.measured_s() == pytest.approx(2_000_000 / 1.5e9)


def test_synchronous_backends_have_no_device_delay_and_say_why() -> None:
    delay, why = TorchBackend().device_delay("cpu")
    assert delay is None
    assert why is not None
    assert "synchronous" in why
    delay, why = NumpyBackend().device_delay("cpu")
    assert delay is None
    assert why == "numpy runs synchronously: the host is the device"


class FakeOp:
    """An op of `units` costing 0.1 ms fixed and 1 µs a unit, on a fake clock that only waiting moves."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.issued: list[int] = []
        self.waited = 0

    def clock(self) -> float:
        return self.now_s

    def issue(self, units: int) -> int:
        self.issued.append(units)
        return units

    def wait(self, units: int) -> None:
        self.waited += 1
        self.now_s += 1e-4 + units * 1e-6


def test_a_queued_op_delay_is_calibrated_to_its_fixed_cost_and_cost_per_unit_and_issues_without_waiting() -> None:
    op = FakeOp()
    delay = QueuedOpDelay(op.issue, op.wait, 1000, clock=op.clock)
    assert not delay.in_place
    assert delay.per_unit_s == pytest.approx(1e-6)
    assert delay.fixed_s == pytest.approx(1e-4)
    assert delay.units(0.0021) == 2000
    before = delay.before_step(0.0021)  # its size timed alone once, then kept
    waited, issued = op.waited, len(op.issued)
    before()
    before()
    assert op.issued[issued:] == [2000, 2000]
    assert op.waited == waited
    assert delay.measured_s() is None  # not measured in place: alone, each round
    assert delay.alone_s(0.0021) == pytest.approx(0.0021)


def test_a_queued_op_delays_size_is_corrected_once_by_its_own_timing_where_the_calibration_does_not_hold() -> None:
    op = FakeOp()
    delay = QueuedOpDelay(op.issue, op.wait, 1000, clock=op.clock)
    linear_wait = op.wait

    def faster_when_large(units: int) -> None:  # past 1500 units the op runs twice as fast (two workers side by side)
        linear_wait(units if units <= 1500 else units // 2)

    delay._wait = faster_when_large
    size = delay.size(0.0041)
    assert delay.units(0.0041) == 4000  # the calibration's
    assert size == pytest.approx(8000, rel=0.02)  # corrected: it takes what was asked
    assert delay.alone_s(0.0041) == pytest.approx(0.0041, rel=0.02)
    timed = op.waited
    delay.before_step(0.0041)
    assert op.waited == timed  # kept: a level's size is timed once


def test_a_level_timed_at_the_ops_fixed_cost_corrects_its_size_by_a_bounded_factor_only() -> None:
    """A trial's 142 µs JAX delay ran 2.83 s: its one timing came in at the op's fixed cost, and the correction
    `(seconds - fixed) / (took - fixed)` grew its size 20,000-fold. A correction is held to MAX_LEVEL_CORRECTION."""
    op = FakeOp()
    delay = QueuedOpDelay(op.issue, op.wait, 1000, clock=op.clock)
    linear_wait = op.wait

    def done_at_once(units: int) -> None:  # the level's timing: its work already done, the fixed cost alone
        linear_wait(0)

    delay._wait = done_at_once
    size = delay.size(0.000142)
    assert size == round(delay.units(0.000142) * device_delays.MAX_LEVEL_CORRECTION), size


@pytest.mark.jax
def test_jaxs_delay_on_a_cpu_is_queued_and_runs_before_the_work_issued_after_it() -> None:
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    from asyncbench.backends.jax_backend import JaxBackend

    delay, why = JaxBackend().device_delay("cpu")
    assert why is None
    assert delay is not None
    small = jax.jit(lambda a: jnp.tanh(a) * 2.0 + a)
    b = jnp.ones((128, 128), jnp.float32)
    small(b).block_until_ready()
    before = delay.before_step(0.005)
    ready_s, issue_s = [], []
    for _ in range(3):
        started = time.perf_counter()
        before()
        issued = time.perf_counter()
        small(b).block_until_ready()
        ready_s.append(time.perf_counter() - started)
        issue_s.append(issued - started)
    alone_s = delay.alone_s(0.005)
    small_s = []
    for _ in range(3):
        started = time.perf_counter()
        small(b).block_until_ready()
        small_s.append(time.perf_counter() - started)
    # about what was asked (its calibration and this timing are stretched by other jobs on shared cores), queued,
    # not run inline: the host got back long before the delay's end; and the op issued after it waited for it, by
    # much of the 5 ms asked beyond its own time (held to the asked length, not to `alone_s`: timed apart, under a CI
    # run's load the two read 2.5 and 6.4 ms)
    assert 0.002 < alone_s < 0.04
    assert min(issue_s) < 0.3 * alone_s
    assert sorted(ready_s)[1] - sorted(small_s)[1] > 0.3 * 0.005


def test_mxnet_says_why_it_has_no_device_delay() -> None:
    """MXNet's queued delay cost 0.36-0.93x its length alone beside a step: no delay, and the bound's note says why."""
    from asyncbench.backends.mxnet_backend import NO_DEVICE_DELAY, MxnetBackend

    backend = MxnetBackend()
    assert backend.device_delay("cpu") == (None, NO_DEVICE_DELAY)


def test_the_device_delay_hook_has_a_safe_default() -> None:
    from asyncbench.backends.base import Backend

    class Bare(NumpyBackend):
        name = "bare"

    assert Backend.device_delay(Bare(), "cpu") == (None, "bare has no device delay")


def test_jax_says_why_it_has_no_device_delay_on_a_gpu_or_without_async_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    from asyncbench.backends.jax_backend import JaxBackend

    delay, why = JaxBackend().device_delay("cuda:0")  # decided before JAX is asked anything
    assert delay is None
    assert why is not None
    assert "GPU" in why
    monkeypatch.setattr(JaxBackend, "_async_dispatch", staticmethod(lambda: False))
    delay, why = JaxBackend().device_delay("cpu")
    assert delay is None
    assert why is not None
    assert "synchronously" in why
