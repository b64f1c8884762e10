"""The planted step `run --bound` is validated against (workloads/bound_planted.py): its structure on the stream test
device (ops holds of the asked length per step, the wait after op m, the host's spin) and on JAX on a CPU, and how
its device op is calibrated."""

from __future__ import annotations

import time

import pytest

from asyncbench.measure import host_spin
from asyncbench.workloads import bound_planted
from asyncbench.workloads.bound_planted import planted
from tests.support.stream_device import StreamSimBackend


def _params(**chosen: float) -> dict[str, float]:
    return {**planted.defaults(), "steps": 1, **chosen}


def _issue_and_done(step, sync) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    step()
    issued = time.perf_counter()
    sync()
    return issued - start, time.perf_counter() - start


@pytest.fixture
def sim():  # type: ignore[no-untyped-def]
    backend = StreamSimBackend(gpus=1, pool=2)
    yield backend
    backend.close()


def test_each_step_issues_ops_holds_of_the_asked_length_on_the_test_device(sim):
    prepared = planted.setup(sim, "cuda:0", _params(host_s=0.0, device_s=0.002, ops=3))
    device = sim.device("cuda:0")
    device.log = []
    prepared.variants["sync_every=0"]()
    prepared.sync()
    holds = [span for span in device.log if span.what == "hold"]
    assert len(holds) == 3
    lengths = sorted(span.end_s - span.start_s for span in holds)
    assert lengths[0] >= 0.0019
    assert lengths[0] < 0.004  # a hold is a sleep: on a loaded machine it wakes late, not all of them
    assert "a hold kernel of 2 ms" in (prepared.note or "")


def _returned_among_holds(sim, wait_after: int) -> tuple[float, list[tuple[float, float]]]:  # type: ignore[no-untyped-def]
    """When one step returned to the host, and the holds' (start, end) on the device's clock."""
    prepared = planted.setup(sim, "cuda:0", _params(host_s=0.0, device_s=0.005, ops=4, wait_after=wait_after))
    device = sim.device("cuda:0")
    device.log = []
    prepared.variants["sync_every=0"]()
    returned = time.perf_counter()
    prepared.sync()
    holds = [(span.start_s, span.end_s) for span in device.log if span.what == "hold"]
    device.log = None
    return returned, holds


def test_without_a_wait_the_host_runs_ahead_and_with_one_it_waits_for_op_m(sim):
    returned, holds = _returned_among_holds(sim, wait_after=0)
    assert len(holds) == 4
    assert returned < holds[0][1]  # four 5 ms holds queued, none waited for
    returned, holds = _returned_among_holds(sim, wait_after=2)
    assert holds[1][1] <= returned < holds[3][1]  # the host waited for op 2; op 4 was issued after that


def test_the_host_spins_its_asked_time_before_each_op(sim, monkeypatch):
    spun: list[float] = []
    real = bound_planted.spin
    monkeypatch.setattr(bound_planted, "spin", lambda seconds: spun.append(real(seconds)))
    prepared = planted.setup(sim, "cuda:0", _params(host_s=0.002, device_s=0.0, ops=5))
    issued, _ = _issue_and_done(prepared.variants["sync_every=0"], prepared.sync)
    assert len(spun) == 5
    assert min(spun) >= 0.002
    assert min(spun) < 0.004  # a preempted spin runs over (the clock passes while it waits): not all of them
    assert issued >= 0.010


def test_a_spin_works_until_its_clock_passes_rather_than_sleeping(monkeypatch):
    turns = []
    monkeypatch.setattr(host_spin.hashlib, "sha256", lambda data: turns.append(len(data)))
    tick = 2.0**-14  # a clock of 61 µs a reading, exact in binary
    ticks = iter(range(10_000))
    spun = bound_planted.spin(50 * tick, clock=lambda: next(ticks) * tick)
    assert spun == 50 * tick
    assert len(turns) == 50  # work on every turn, never a sleep: the core stays busy
    assert turns[0] == host_spin.SPIN_TURN_BYTES
    assert turns[-1] == host_spin.SPIN_LAST_BYTES  # short turns near the end: the spin ends within µs


def test_a_wait_naming_no_op_is_refused(sim):
    with pytest.raises(ValueError, match="names no op"):
        planted.setup(sim, "cuda:0", _params(ops=2, wait_after=3))


def test_it_runs_on_jax_on_a_cpu_with_the_wait_and_the_spin():
    pytest.importorskip("jax")
    from asyncbench.backends import get_backend

    backend = get_backend("jax")
    prepared = planted.setup(backend, "cpu", _params(host_s=0.001, device_s=0.0, ops=3, wait_after=2))
    step = prepared.variants["sync_every=0"]
    step()
    prepared.sync()
    issued, done = _issue_and_done(step, prepared.sync)
    assert 0.003 <= issued < 0.02
    assert planted.last_op is not None
    assert planted.last_op.side == bound_planted.TRIVIAL_SIDE


def test_calibration_solves_for_the_side_on_a_cubic_cost(monkeypatch):
    # a device where a side² product costs side³ / 1e10 s: 0.5 ms is a side of about 171
    monkeypatch.setattr(bound_planted, "_product", lambda backend, device, side: side)
    monkeypatch.setattr(bound_planted, "op_cost_s", lambda backend, device, side: side**3 / 1e10)
    side, cost = bound_planted.calibrate(None, "cpu", 0.0005)  # type: ignore[arg-type]
    assert abs(side - 171) <= 1
    assert abs(cost - 0.0005) <= bound_planted.CALIBRATION_TOLERANCE * 0.0005
    tiny, _ = bound_planted.calibrate(None, "cpu", 1e-9)  # type: ignore[arg-type]
    assert tiny == bound_planted.SMALLEST_SIDE  # never small enough to run inline


def test_run_names_it_by_module_as_a_user_workload():
    from asyncbench.workloads import BUILT_IN, plugins

    found = plugins.find("asyncbench.workloads.bound_planted:planted")
    assert found is planted
    assert "bound_planted" not in BUILT_IN  # shipped, but not one of the experiments `asyncbench list` shows
    assert found.defaults()["sync_every"] == [0]


def test_calibration_keeps_the_size_closest_to_the_asked_cost_when_a_measurement_strays(monkeypatch):
    costs = iter([0.0001, 0.00052, 0.0009, 0.0002, 0.0011])  # the third one measured beside a neighbour's burst
    measured: dict[int, float] = {}

    def cost_of(backend, device, side):  # type: ignore[no-untyped-def]
        measured[side] = next(costs)
        return measured[side]

    monkeypatch.setattr(bound_planted, "_product", lambda backend, device, side: side)
    monkeypatch.setattr(bound_planted, "op_cost_s", cost_of)
    side, cost = bound_planted.calibrate(None, "cpu", 0.0005)  # type: ignore[arg-type]
    assert cost == 0.00052
    assert measured[side] == 0.00052
