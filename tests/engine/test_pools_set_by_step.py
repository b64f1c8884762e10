"""A step whose set-up sizes torch's CPU pool in code (torch.set_num_threads): the row says the pool its timings
ran in, beside the one the run's environment records, and the next case in the same process starts from the
recorded pool again (engine.thread_pools.set_by_step, engine.runner.run_case)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import pytest

from asyncbench.backends import get_backend
from asyncbench.engine import runner, thread_pools
from asyncbench.measure import reference
from asyncbench.results.model import OK, Case, Settings
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_form import step

torch = pytest.importorskip("torch")

SETTINGS = Settings(warmup=1, min_samples=2, max_samples=2, max_time_s=30.0, max_rel_noise=1.0)


def _case(workload: Workload) -> Case:
    return Case(
        id=f"{workload.name}[torch,cpu]",
        experiment=workload.name,
        workload=workload.name,
        backend="torch",
        device="cpu",
        params=workload.defaults(quick=True) | {"steps": 3},
        settings=SETTINGS,
    )


def _sizing(count: int) -> Callable[[Any, str, Mapping[str, Any]], Callable[[], Any]]:
    def set_up(backend: Any, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
        torch.set_num_threads(count)  # the user's set-up sizes the pool in code
        x = torch.ones(8, 8)
        return lambda: x @ x

    return set_up


def test_a_pool_the_step_sized_in_code_is_said_beside_the_one_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "settled", lambda *a: None)  # no calm-CPU wait nor reference work: seconds here
    monkeypatch.setenv(thread_pools.PINNED_VARIABLE, "1")  # `run --threads 1`
    backend = get_backend("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        workload = step(_sizing(2), sync_every=(0,), steps=3)
        result = runner.run_case(_case(workload), workload, backend)
        assert result.status == OK, result.reason
        assert torch.get_num_threads() == 1  # the next case here starts from the recorded pool, not the step's
        said = [w for w in result.warnings if "pool" in w]
        assert said == ["the step set torch's pool to 2 threads (the run recorded 1, from --threads 1): its timings are of 2"]
    finally:
        torch.set_num_threads(before)


def test_a_step_that_leaves_the_pool_as_recorded_says_nothing_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "settled", lambda *a: None)
    monkeypatch.delenv(thread_pools.PINNED_VARIABLE, raising=False)
    count = torch.get_num_threads()
    workload = step(_sizing(count), sync_every=(0,), steps=3)
    result = runner.run_case(_case(workload), workload, get_backend("torch"))
    assert result.status == OK, result.reason
    assert not [w for w in result.warnings if "pool" in w]


def test_a_free_pool_the_step_resized_names_the_frameworks_own_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "settled", lambda *a: None)
    monkeypatch.delenv(thread_pools.PINNED_VARIABLE, raising=False)
    count = torch.get_num_threads()
    try:
        workload = step(_sizing(count + 1), sync_every=(0,), steps=3)
        result = runner.run_case(_case(workload), workload, get_backend("torch"))
        assert result.status == OK, result.reason
        assert torch.get_num_threads() == count
        assert f"the step set torch's pool to {count + 1} threads (the run recorded {count}, torch's own count): " in " ".join(
            result.warnings
        )
    finally:
        torch.set_num_threads(count)
