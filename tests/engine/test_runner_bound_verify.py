"""`run --bound --bound-verify` through the runner (CaseOptions.bound_verify): the step captured by the backend's
capture_step, timed in rounds of its own beside the plain step (measure.verification), and each variant's pairs
handed to verdicts.verified into Bound.verified; a refused capture keeps its line; a synchronous device still times
the capture; a real JAX step is jitted end to end."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import pytest

from asyncbench.backends import get_backend
from asyncbench.engine import runner
from asyncbench.engine.measuring import CaseOptions
from asyncbench.measure import perturbation, reference
from asyncbench.results.bound import BoundKind, VerifyHow
from asyncbench.results.model import OK, Case, Settings
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_form import step
from tests.support.stream_device import StreamSimBackend

SETTINGS = Settings(warmup=1, min_samples=2, max_samples=2, max_time_s=30.0, max_rel_noise=1.0)
VERIFY = CaseOptions(bound=True, bound_verify="jit")


@pytest.fixture(autouse=True)
def two_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two perturbation rounds and no more: none after them for precision (two rounds have no interval)."""
    monkeypatch.setattr(perturbation, "SCHEDULE", perturbation.Schedule(first=2, every=100, least=2))
    monkeypatch.setattr(perturbation, "PRECISION_SHARE", float("inf"))


def tiny_step(backend: Any, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
    def run_step() -> None:
        time.sleep(2e-4)
        backend.hold(device, 1e-4)

    return run_step


def _case(workload: Workload, backend: str, device: str) -> Case:
    return Case(
        id=f"{workload.name}[{backend},{device}]",
        experiment=workload.name,
        workload=workload.name,
        backend=backend,
        device=device,
        params=workload.defaults(quick=True) | {"steps": 3},
        settings=SETTINGS,
    )


def _streamsim(workload: Workload, device: str, options: CaseOptions) -> Any:
    backend = StreamSimBackend(gpus=1)
    try:
        return runner.run_case(_case(workload, "streamsim", device), workload, backend, options)
    finally:
        backend.close()


@pytest.mark.streams
def test_a_captured_step_is_timed_beside_the_plain_one_in_each_round(monkeypatch: pytest.MonkeyPatch) -> None:
    captured_calls: list[int] = []

    def capture(self: Any, run_step: Callable[[], Any], device: str, how: str) -> Any:
        assert how == "jit"

        def captured() -> Any:
            captured_calls.append(1)
            return run_step()

        return captured, None

    monkeypatch.setattr(StreamSimBackend, "capture_step", capture)
    result = _streamsim(step(tiny_step, sync_every=(0, 1), steps=3), "cuda:0", VERIFY)
    assert result.status == OK, result.reason
    for variant in ("sync_every=0", "sync_every=1"):
        found = result.bound[variant].verified
        assert found is not None
        assert found.how == VerifyHow.JIT
        assert len(found.pairs) == 2  # one pair a round, two rounds
        assert found.step_s is not None
        assert found.step_s > 0.0002
    assert len(captured_calls) == 2 * 2 * 3  # two variants, two rounds, three steps a sample: only its own samples
    assert all(len(v.samples.done_s) == 2 for v in result.variants.values())  # the timed samples untouched


@pytest.mark.streams
def test_a_refused_capture_is_the_bounds_line_and_nothing_is_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StreamSimBackend, "capture_step", lambda self, s, d, how: (None, "not graphed: no way"))
    result = _streamsim(step(tiny_step, sync_every=(0,), steps=3), "cuda:0", VERIFY)
    assert result.status == OK, result.reason
    found = result.bound["sync_every=0"].verified
    assert found is not None
    assert (found.step_s, found.note, found.pairs) == (None, "not graphed: no way", ())


@pytest.mark.streams
def test_a_capture_that_raises_is_refused_in_one_line_and_the_case_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: Any, s: Any, d: str, how: str) -> Any:
        raise ValueError("bad step\nsecond line")

    monkeypatch.setattr(StreamSimBackend, "capture_step", boom)
    result = _streamsim(step(tiny_step, sync_every=(0,), steps=3), "cuda:0", VERIFY)
    assert result.status == OK, result.reason
    found = result.bound["sync_every=0"].verified
    assert found is not None
    assert found.note == "--bound-verify jit: capturing the step raised ValueError: bad step"


@pytest.mark.streams
def test_on_a_synchronous_device_the_capture_is_still_timed_with_no_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StreamSimBackend, "capture_step", lambda self, s, d, how: (s, None))
    result = _streamsim(step(tiny_step, sync_every=(0,), steps=3), "cpu", CaseOptions(bound=True, bound_verify="compile"))
    assert result.status == OK, result.reason
    bound = result.bound["sync_every=0"]
    assert bound.bound == BoundKind.SYNCHRONOUS
    assert bound.verified is not None
    assert len(bound.verified.pairs) == 2
    assert bound.verified.reached is None
    assert (bound.verified.note or "").startswith("synchronous: no ceiling to compare with")


def test_the_run_options_hand_bound_verify_to_each_case_and_imply_bound() -> None:
    case = Case(id="c", experiment="e", workload="matmul", backend="numpy", device="cpu", params={}, settings=SETTINGS)
    asked = runner.RunOptions(bound_verify="graph").for_case(case, 0)
    assert (asked.bound, asked.bound_verify) == (True, "graph")


def jax_step(backend: Any, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
    x = backend.random((32, 32), "float32", device)()
    return lambda: (x @ x).sum()


def test_a_pure_jax_step_is_jitted_and_timed_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("jax")
    monkeypatch.setattr(reference, "settled", lambda *a: None)  # no calm-CPU wait nor reference work: seconds here
    workload = step(jax_step, sync_every=(0,), steps=3)
    backend = get_backend("jax")
    result = runner.run_case(_case(workload, "jax", "cpu"), workload, backend, VERIFY)
    assert result.status == OK, result.reason
    found = result.bound["sync_every=0"].verified
    assert found is not None
    assert found.step_s is not None
    assert found.step_s > 0
    assert len(found.pairs) == 2


def jax_dict_step(backend: Any, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
    """A training step that keeps its weights in a dict (the trial's form): jit would trace the store once."""
    x = backend.random((32, 32), "float32", device)()
    state = {"w": backend.random((32, 32), "float32", device)()}

    def run_step() -> Any:
        state["w"] = state["w"] * 0.5 + x
        return state["w"].sum()

    return run_step


def test_a_jax_step_that_keeps_its_state_in_a_dict_is_refused_in_one_line_and_keeps_its_timings(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("jax")
    monkeypatch.setattr(reference, "settled", lambda *a: None)
    workload = step(jax_dict_step, sync_every=(0,), steps=3)
    result = runner.run_case(_case(workload, "jax", "cpu"), workload, get_backend("jax"), VERIFY)
    assert result.status == OK, result.reason  # before: UnexpectedTracerError in the timed rounds, the case lost
    assert len(result.variants["sync_every=0"].samples.done_s) == 2
    found = result.bound["sync_every=0"].verified
    assert found is not None
    assert (found.step_s, found.pairs) == (None, ())
    assert found.note == (
        "not jitted: the step stores a traced value outside itself (state['w']); jit would trace the store once and drop it"
    )
