"""One CUDA context per GPU at a time: the run's processes hand a GPU over before another process measures on it.

Driven through runner.run with real worker processes, each case run by the context ledger's target
(tests/support/gpu_ledger.py: which live process opened which GPU) in place of a measurement.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asyncbench.backends.handles import DeviceStatus
from asyncbench.backends.jax_backend import JaxBackend
from asyncbench.backends.torch_backend import TorchBackend
from asyncbench.engine import case_workers, runner
from asyncbench.engine.case_workers import CaseWorkers
from asyncbench.results.model import OK, SKIPPED, Case, Settings
from asyncbench.spec import config
from tests.support import gpu_ledger

FAST = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1.0, timeout_s=60.0)


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Path:
    """A machine with GPUS GPUs as torch and JAX see them (probed here only), and the workers' ledger."""
    gpus = tuple(DeviceStatus("x", f"cuda:{i}", True, "modelled GPU") for i in range(gpu_ledger.GPUS))
    for backend in (TorchBackend, JaxBackend):
        monkeypatch.setattr(backend, "probe", lambda self: (DeviceStatus(self.name, "cpu", True, "host"), *gpus))
        monkeypatch.setattr(backend, "unavailable_reason", lambda self: None)
    folder = tmp_path / "ledger"
    folder.mkdir()
    monkeypatch.setenv(gpu_ledger.LEDGER_VARIABLE, str(folder))
    return folder


def _experiment(name: str, backend: str, device: str, workload: str = "on_gpu") -> config.Experiment:
    params = {"ranks": 2} if workload == "ranks" else {}
    return config.Experiment(name=name, workload=workload, backends=(backend,), devices=(device,), params=params, settings=FAST)


def _run(*experiments: config.Experiment, isolate: bool = True, modes: dict[int, str] | None = None) -> list:
    workers = CaseWorkers(gpu_ledger.serve, isolate, compute_modes=lambda: modes or {})
    workloads = {"on_gpu": gpu_ledger.OnGpu(), "ranks": gpu_ledger.Ranks()}
    return runner.run(config.Config("c", "<t>", experiments), runner.RunOptions(isolate=isolate), workers=workers, workloads=workloads)


def test_torch_then_jax_then_torch_on_one_gpu_never_share_it(ledger):
    """The default worker that measured on cuda:0 is retired before JAX's worker opens it, and JAX's before torch's
    next case: before, both workers lived for the whole run, two contexts on cuda:0 (three with a JAX CPU case)."""
    results = _run(_experiment("a", "torch", "cuda:0"), _experiment("b", "jax", "cuda:0"), _experiment("c", "torch", "cuda:0"))
    assert [(r.status, r.reason) for r in results] == [(OK, None)] * 3
    assert len({r.note for r in results}) == 3  # three processes, one after the other


def test_a_jax_cpu_case_opens_no_gpu_and_retires_no_one(ledger):
    """JAX's worker for CPU cases runs with JAX_PLATFORMS=cpu: XLA would otherwise open every GPU for it."""
    results = _run(_experiment("a", "torch", "cuda:0"), _experiment("b", "jax", "cpu"), _experiment("c", "torch", "cuda:0"))
    assert [(r.status, r.reason) for r in results] == [(OK, None)] * 3
    assert results[0].note == results[2].note  # the torch worker kept its GPU: nothing else needed one
    assert not list(ledger.glob(f"gpu*.{results[1].note.split()[-1]}"))


def test_nccl_ranks_start_from_a_process_that_holds_no_context(ledger):
    """comm_overlap's ranks take cuda:0 and cuda:1: the worker that launches them is a fresh one, not the one that
    measured on cuda:0 (and the one that did is gone)."""
    first, ranks, after = _run(
        _experiment("a", "torch", "cuda:0"), _experiment("r", "torch", "cuda:0", "ranks"), _experiment("c", "torch", "cuda:0")
    )
    assert [(r.status, r.reason) for r in (first, ranks, after)] == [(OK, None)] * 3
    assert ranks.note != first.note
    assert after.note == ranks.note  # the launcher opened nothing, so it goes on with the next case


def test_the_ranks_launcher_makes_no_device_current():
    """runner.run_case enters the case's device (a CUDA context, with torch) for every workload but one measured
    by processes of its own."""
    from tests.support.helpers import FakeBackend

    entered: list[str] = []

    class Recording(FakeBackend):
        def activate(self, device):
            entered.append(device)
            return super().activate(device)

    class Measured(gpu_ledger.Ranks):
        def measure_itself(self, backend, device, params, settings):
            raise RuntimeError("the ranks ran")

    case = Case("r", "r", "ranks", "fake", "cuda:0", {"ranks": 2}, FAST)
    result = runner.run_case(case, Measured(), Recording(devices=("cuda:0",)))
    assert result.reason == "RuntimeError: the ranks ran"
    assert entered == []


def test_in_process_cases_keep_their_gpu_and_an_exclusive_one_is_refused_to_another_process_in_one_line(ledger, monkeypatch):
    """--in-process: this process cannot be retired. In default mode JAX's worker shares the GPU with it; in
    EXCLUSIVE_PROCESS mode its case is a skip saying why."""
    monkeypatch.setattr(runner, "run_case", lambda case, *args: gpu_ledger.serve(case))
    torch_here, jax_there = _run(_experiment("a", "torch", "cuda:0"), _experiment("b", "jax", "cuda:0"), isolate=False)
    assert torch_here.note == f"pid {os.getpid()}"
    assert jax_there.status != OK  # shared, as the ledger says
    assert f"held by [{os.getpid()}]" in jax_there.reason
    _, refused = _run(_experiment("a", "torch", "cuda:0"), _experiment("b", "jax", "cuda:0"), isolate=False, modes={0: "exclusive_process"})
    assert refused.status == SKIPPED
    assert refused.reason.startswith("cuda:0 admits one process at a time (compute mode EXCLUSIVE_PROCESS)")
    assert "\n" not in refused.reason


def test_a_cpu_case_with_a_gpu_partner_uses_the_gpu():
    case = Case("m", "m", "multi_device", "jax", "cpu", {"partner": "cuda:1"}, FAST)
    assert case_workers.uses_gpu(case)
    assert case_workers.environment_for(JaxBackend(), False) == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "JAX_PLATFORMS": "cpu"}
    assert case_workers.environment_for(JaxBackend(), True) == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert case_workers.environment_for(TorchBackend(), False) == {}
