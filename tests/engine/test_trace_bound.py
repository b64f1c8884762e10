"""--trace with --bound: each variant's perturbed calls traced into one more file (`VARIANT.bound.trace.json`), a
call per side perturbed, each delay in a range `asyncbench: host delay` / `asyncbench: device delay` inside its
call's issue range, at DELAY_SHARE of the step; a failure is a warning, the measurement and the plain trace stand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.engine import trace
from asyncbench.engine.measuring import CaseOptions
from asyncbench.results.model import OK
from asyncbench.workloads.step_form import step
from tests.engine.test_runner_bound import fitted, run, tiny_step  # noqa: F401 - `fitted`: a fixture (usefixtures)

pytestmark = pytest.mark.streams

VARIANT = "sync_every=0"
STEPS = 3


def _events(path: str) -> list[dict[str, Any]]:
    return [event for event in json.loads(Path(path).read_text())["traceEvents"] if isinstance(event, dict)]


def _ranges(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return sorted((e for e in events if e.get("name") == name and e.get("ph") == "X"), key=lambda e: e["ts"])


@pytest.mark.usefixtures("fitted")
def test_a_traced_bound_run_writes_the_perturbed_calls_with_a_range_around_each_delay(tmp_path):
    result = run(step(tiny_step, sync_every=(0,), steps=STEPS), "cuda:0", CaseOptions(bound=True, trace_dir=str(tmp_path)))
    assert result.status == OK, result.reason
    assert set(result.traces) == {VARIANT, f"{VARIANT}{trace.BOUND_KEY}"}
    path = Path(result.traces[f"{VARIANT}{trace.BOUND_KEY}"])
    assert path.name == trace.file_name(result.id, VARIANT, trace.BOUND_SUFFIX)
    assert path.name.endswith(".sync_every=0.bound.trace.json")
    assert not [w for w in result.warnings if "perturbed" in w]
    events = _events(str(path))
    issues = _ranges(events, trace.ISSUE)
    assert len(issues) == 2  # one call per side: the host's, then the device's
    host, device = _ranges(events, trace.HOST_DELAY), _ranges(events, trace.DEVICE_DELAY)
    assert len(host) == len(device) == min(STEPS, trace.TRACED_DELAYS)  # a delay before each of the first step calls
    for delays, call in ((host, issues[0]), (device, issues[1])):
        for delay in delays:
            assert call["ts"] <= delay["ts"]
            assert delay["ts"] + delay["dur"] <= call["ts"] + call["dur"] + 1
    # the host's spin runs its length (DELAY_SHARE of the step the levels were of); queueing the device's is short
    assert min(e["dur"] for e in host) > 0
    assert not _ranges(_events(result.traces[VARIANT]), trace.HOST_DELAY)  # the plain trace is the plain call's


@pytest.mark.usefixtures("fitted")
def test_without_bound_no_perturbed_trace_is_written(tmp_path):
    result = run(step(tiny_step, sync_every=(0,), steps=STEPS), "cuda:0", CaseOptions(trace_dir=str(tmp_path)))
    assert set(result.traces) == {VARIANT}
    assert not list(tmp_path.glob(f"*{trace.BOUND_SUFFIX}"))


def test_a_perturbed_call_that_fails_is_a_warning_and_the_rest_stands(tmp_path):
    from asyncbench.backends import get_backend

    backend = get_backend("numpy")

    def perturbable(before: Any) -> dict[str, Any]:
        def call() -> None:
            before()
            raise RuntimeError("step broke")

        return {"v": call}

    perturbing = trace.Perturbing(perturbable, None, {"v": 1e-4})
    traced = trace.record(backend, "cpu", "c[numpy,cpu]", {"v": lambda: None}, lambda: None, str(tmp_path), perturbing=perturbing)
    assert set(traced.files) == {"v"}
    assert traced.warnings == ("v: the perturbed call could not be traced (RuntimeError: step broke)",)


def test_a_perturbed_trace_that_cannot_be_written_is_a_warning(tmp_path, monkeypatch):
    from asyncbench.backends import get_backend
    from asyncbench.results import writing

    real = writing.atomic_write

    def full_for_bound(path: Any, content: str) -> None:
        if str(path).endswith(trace.BOUND_SUFFIX):
            raise OSError(28, "No space left on device")
        real(path, content)

    monkeypatch.setattr(writing, "atomic_write", full_for_bound)
    perturbing = trace.Perturbing(lambda before: {"v": before}, None, {"v": 1e-4})
    backend = get_backend("numpy")
    traced = trace.record(backend, "cpu", "c[numpy,cpu]", {"v": lambda: None}, lambda: None, str(tmp_path), perturbing=perturbing)
    assert set(traced.files) == {"v"}
    assert traced.warnings == ("v: the perturbed call's trace could not be written (No space left on device)",)


@pytest.mark.jax
def test_in_jaxs_profiler_the_delays_are_ranges_of_its_own_timeline(tmp_path):
    """JAX on a CPU: a device delay (a jit'd op) and a host spin, each in its range in jax.profiler's trace."""
    from asyncbench.backends import get_backend

    backend = get_backend("jax")
    jnp = backend.namespace()
    x = jnp.ones((64, 64))
    delay, why = backend.device_delay("cpu")
    assert delay is not None, why

    def perturbable(before: Any) -> dict[str, Any]:
        def call() -> Any:
            y = x
            for _ in range(2 * trace.TRACED_DELAYS):  # more steps than delays traced
                before()
                y = y @ x
            return y

        return {"v": call}

    perturbing = trace.Perturbing(perturbable, delay, {"v": 2e-3})
    traced = trace.record(
        backend,
        "cpu",
        "c[jax,cpu]",
        {"v": perturbable(lambda: None)["v"]},
        lambda: backend.barrier("cpu"),
        str(tmp_path),
        perturbing=perturbing,
    )
    assert not traced.warnings
    events = _events(traced.files[f"v{trace.BOUND_KEY}"])
    assert len(_ranges(events, trace.HOST_DELAY)) == trace.TRACED_DELAYS
    assert len(_ranges(events, trace.DEVICE_DELAY)) == trace.TRACED_DELAYS
    assert len(_ranges(events, trace.ISSUE)) == 2
    # the spin is a few calls to the profiler, and the device delay's loop one range, not its trips: no bigger than
    # a plain trace many times over
    assert len(events) < 20 * len(_events(traced.files["v"]))
    loops = [e for e in events if e.get("cat") == trace.COLLAPSED_CATEGORY]
    assert len(loops) >= trace.TRACED_DELAYS  # a delay on each thread its trips ran on
    assert all("a loop of" in e["name"] for e in loops)


def _op(name: str, ts: float, run_id: int | None, tid: int = 7) -> dict[str, Any]:
    args = {"hlo_module": "jit_spin", "hlo_op": name, **({"run_id": str(run_id)} if run_id is not None else {})}
    return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": 0.5, "name": name, "args": args}


def test_a_loop_traced_trip_by_trip_becomes_one_range_and_the_rest_stays():
    trips = trace.LOOP_REPEATS + 10
    loop = [_op(name, 100 + trip + offset, 5) for trip in range(trips) for offset, name in ((0, "compare"), (0.6, "add"))]
    marks = [{**_op("end: compare", 100 + trip + 0.55, None)} for trip in range(trips)]  # no run_id, within the span
    step = [_op("dot", 10.0, 6), _op("dot", 20.0, 6), _op("dot", 500.0, 6)]  # another execution: two ops, kept
    other_thread = [_op("copy", 120.0, 9, tid=8)]
    ours = {"ph": "X", "pid": 1, "tid": 7, "ts": 101.0, "dur": 1.0, "name": trace.DEVICE_DELAY, "cat": "asyncbench"}
    data = {"traceEvents": [*loop, *marks, *step, *other_thread, ours, {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7}]}
    assert trace.collapse_loops(data) == 1
    events = data["traceEvents"]
    [collapsed] = [e for e in events if e.get("cat") == trace.COLLAPSED_CATEGORY]
    assert collapsed["name"] == f"jit_spin: a loop of {trips} trips (collapsed)"
    assert (collapsed["ts"], collapsed["dur"]) == (100, pytest.approx(trips - 1 + 1.1))
    assert collapsed["args"]["ops"] == ["add", "compare"]
    assert [e["name"] for e in events if e.get("args", {}).get("run_id") == "6"] == ["dot", "dot", "dot"]
    assert ours in events
    assert other_thread[0] in events
    assert not [e for e in events if e.get("name") in ("compare", "add", "end: compare")]
    assert trace.collapse_loops({"traceEvents": step}) == 0
    assert trace.collapse_loops({"traceEvents": "not a list"}) == 0


def test_the_traced_spin_runs_its_length_in_a_few_calls():
    clock = FakeClock()
    spin = trace.TracedSpin(0.001, clock)
    calls_before = clock.calls
    spin()
    assert clock.now >= 0.001
    assert clock.calls - calls_before <= 0.001 / trace.SPIN_CHUNK_S + 3


class FakeClock:
    """A host clock that advances by SPIN_CHUNK_S at each reading (a chunk's length), counting its readings."""

    def __init__(self) -> None:
        self.now, self.calls = 0.0, 0

    def __call__(self) -> float:
        self.calls += 1
        self.now += trace.SPIN_CHUNK_S
        return self.now
