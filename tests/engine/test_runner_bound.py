"""`run --bound` through the runner (CaseOptions.bound): the perturbation rounds taken beside the timed ones and each
variant's observations handed to verdicts.bound.fit, whose Bounds become Result.bound; a built-in workload gets no
bound and a note saying why; a synchronous device is fitted as such, without a perturbation round.

verdicts.bound.fit is replaced here by one that keeps what it was given (tests/verdicts/test_bound.py tests the fit)."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import pytest

from asyncbench.engine import measuring, runner
from asyncbench.engine.measuring import CaseOptions
from asyncbench.measure import perturbation
from asyncbench.results.bound import Bound, BoundKind, Injection, Perturbed, Side
from asyncbench.results.model import OK, Case, Settings
from asyncbench.verdicts import bound as bounds
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_form import step
from tests.support.stream_device import StreamSimBackend

pytestmark = pytest.mark.streams

SETTINGS = Settings(warmup=1, min_samples=2, max_samples=2, max_time_s=30.0, max_rel_noise=1.0)


@pytest.fixture
def fitted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Perturbed, ...], bool, str | None]]:
    """verdicts.bound.fit replaced: each call kept, a Bound returned with its observations."""
    calls: list[tuple[str, tuple[Perturbed, ...], bool, str | None]] = []

    def fit(
        variant: str,
        observations: Sequence[Perturbed],
        asynchronous: bool,
        confidence: float = 0.95,
        note: str | None = None,
        steps_per_call: int = 1,
        scale_s: float | None = None,
        shares_cores: bool = False,
    ) -> Bound:
        assert steps_per_call == 3  # every test's step runs 3 steps a sample: the fit is told, to take off the edge
        assert scale_s is None or scale_s > 0  # the probe's step, where rounds were taken: a check's share is of it
        calls.append((variant, tuple(observations), asynchronous, note))
        kind = BoundKind.INCONCLUSIVE if asynchronous else BoundKind.SYNCHRONOUS
        return Bound(variant, kind, 0.0, len({o.round for o in observations}), note=note, observations=tuple(observations), scale_s=scale_s)

    monkeypatch.setattr(bounds, "fit", fit)
    monkeypatch.setattr(perturbation, "SCHEDULE", perturbation.Schedule(first=2, every=100, least=2))  # two rounds, not ten
    # the stop rule's looks fit too: here they find every interval narrow, and the rounds stop after the two
    monkeypatch.setattr(measuring, "_spread", lambda per_call: lambda observed: perturbation.Look(0.0, {}))
    return calls


def tiny_step(backend: Any, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
    def run_step() -> None:
        time.sleep(2e-4)
        backend.hold(device, 3e-4)

    return run_step


def run(workload: Workload, device: str, options: CaseOptions, params: dict[str, Any] | None = None) -> Any:
    backend = StreamSimBackend(gpus=1)
    try:
        case = Case(
            id=f"{workload.name}[streamsim,{device}]",
            experiment=workload.name,
            workload=workload.name,
            backend="streamsim",
            device=device,
            params={**workload.defaults(quick=True), **(params or {})},
            settings=SETTINGS,
        )
        return runner.run_case(case, workload, backend, options)
    finally:
        backend.close()


def test_a_step_run_with_bound_has_each_variants_perturbation_samples_fitted_into_its_result(fitted: list[Any]) -> None:
    workload = step(tiny_step, sync_every=(0, 1), steps=3)
    result = run(workload, "cuda:0", CaseOptions(bound=True))
    assert result.status == OK, result.reason
    assert set(result.bound) == {"sync_every=0", "sync_every=1"}
    for variant, observations, asynchronous, note in fitted:
        assert asynchronous
        assert note is None
        assert {o.round for o in observations} == {0, 1}
        per_round = 1 + 2 * len(perturbation.LEVELS)
        assert len(observations) == 2 * per_round
        assert {o.side for o in observations} == {None, Side.HOST, Side.DEVICE}
        assert result.bound[variant].observations == observations
    # the timed samples are the timed rounds' alone
    assert all(len(v.samples.done_s) == 2 for v in result.variants.values())


def test_a_case_run_without_bound_takes_no_perturbation_round(fitted: list[Any]) -> None:
    result = run(step(tiny_step, sync_every=(0,), steps=3), "cuda:0", CaseOptions())
    assert result.status == OK, result.reason
    assert result.bound == {}
    assert fitted == []


def test_a_synchronous_device_is_fitted_as_such_without_a_perturbation_round(fitted: list[Any]) -> None:
    result = run(step(tiny_step, sync_every=(0,), steps=3), "cpu", CaseOptions(bound=True))
    assert result.status == OK, result.reason
    assert fitted == [("sync_every=0", (), False, None)]
    assert result.bound["sync_every=0"].bound == BoundKind.SYNCHRONOUS


def test_a_built_in_workload_has_no_bound_and_its_note_says_what_bound_measures(fitted: list[Any]) -> None:
    result = run(BUILT_IN["matmul"], "cuda:0", CaseOptions(bound=True), params={"size": 32, "n_iter": 2})
    assert result.status == OK, result.reason
    assert result.bound == {}
    assert fitted == []
    assert measuring.NOT_PERTURBABLE in (result.note or "")
    assert "@asyncbench.step" in measuring.NOT_PERTURBABLE


def test_a_device_without_a_delay_is_perturbed_on_the_host_alone_and_the_fit_is_told_why(
    fitted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(StreamSimBackend, "device_delay", lambda self, device: (None, "no delay here"))
    result = run(step(tiny_step, sync_every=(0,), steps=3), "cuda:0", CaseOptions(bound=True))
    assert result.status == OK, result.reason
    ((variant, observations, asynchronous, note),) = fitted
    assert asynchronous
    assert note == "no delay here"
    assert {o.side for o in observations} == {None, Side.HOST}


def test_the_run_options_hand_bound_to_each_case() -> None:
    case = Case(id="c", experiment="e", workload="matmul", backend="numpy", device="cpu", params={}, settings=SETTINGS)
    assert runner.RunOptions(bound=True).for_case(case, 0).bound is True
    assert runner.RunOptions().for_case(case, 0).bound is False


def test_a_step_of_one_step_a_sample_takes_no_perturbation_round_and_says_why() -> None:
    """With one step a sample every delay shows in full, slack or not: no rounds, and the bound's note says why."""
    result = run(step(tiny_step, sync_every=(0,), steps=1), "cuda:0", CaseOptions(bound=True))
    assert result.status == OK, result.reason
    fitted = result.bound["sync_every=0"]
    assert (fitted.rounds, fitted.observations, fitted.bound) == (0, (), BoundKind.INCONCLUSIVE)
    assert fitted.note is not None
    assert measuring.ONE_STEP in fitted.note


def test_a_threshold_checks_level_reaches_the_perturbation_rounds_through_the_case_options(fitted: list[Any]) -> None:
    options = CaseOptions(bound=True, bound_levels=(Injection(Side.HOST, level_s=0.00031), Injection(Side.DEVICE, share=0.4)))
    result = run(step(tiny_step, sync_every=(0,), steps=3), "cuda:0", options)
    assert result.status == OK, result.reason
    ((variant, observations, _, _),) = fitted
    scale = result.bound[variant].scale_s
    assert scale is not None
    assert scale > 0
    for number in (0, 1):
        mine = [o for o in observations if o.round == number]
        assert len(mine) == 1 + 2 * len(perturbation.LEVELS) + 2  # the sweep, and each check's level once
        assert [o.level_s for o in mine if o.side == Side.HOST].count(0.00031) == 1
        assert [o.level_s for o in mine if o.side == Side.DEVICE].count(0.4 * scale) == 1
