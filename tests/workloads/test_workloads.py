"""The workloads on the real frameworks (CPU here; GPU tests are marked `gpu`)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from asyncbench.backends import get_backend
from asyncbench.results.model import OK, Clocks
from asyncbench.results.sync_async_model import QUEUED_OPS, fit_model
from asyncbench.workloads import BUILT_IN
from tests.support.helpers import run_workload


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_matmul_on_cpu_is_synchronous(backend):
    result = run_workload("matmul", backend, "cpu", size=128, n_iter=2)
    assert result.status == OK, result.reason
    m = result.metrics
    # on the CPU the loop returns only when the products are done
    assert 0.95 < m["illusion"] < 1.05
    # the median of per-round GFLOP/s: between the rates of the two middle done times (the same one for odd n)
    done = sorted(result.variants["matmul"].samples.done_s)
    middle = done[(len(done) - 1) // 2], done[len(done) // 2]
    flops = 2 * 128**3 * 2
    assert flops / middle[1] / 1e9 <= m["gflops"] * (1 + 1e-9)
    assert m["gflops"] <= flops / middle[0] / 1e9 * (1 + 1e-9)
    low, high = result.bounds["gflops"]
    assert low <= m["gflops"] <= high
    assert result.variants["matmul"].device_s is None
    assert result.variants["matmul"].memory.host_rss_bytes > 0


@pytest.mark.parametrize("include_rng", [True, False])
def test_matmul_result_is_the_product_of_its_input(include_rng):
    """The variant's result is the square of the last matrix it drew (a fresh one per product with include_rng)."""
    import numpy

    backend = get_backend("numpy")
    drawn: list[Any] = []
    make = backend.random

    def recording(shape: tuple[int, ...], dtype: str, device: str) -> Any:
        draw = make(shape, dtype, device)
        return lambda: drawn.append(draw()) or drawn[-1]

    backend.random = recording
    prepared = BUILT_IN["matmul"].setup(backend, "cpu", {"size": 8, "n_iter": 2, "dtype": "float64", "include_rng": include_rng})
    product = prepared.variants["matmul"]()
    assert len(drawn) == (2 if include_rng else 1)  # with include_rng each of the 2 products draws; else setup drew once
    numpy.testing.assert_array_equal(product, drawn[-1] @ drawn[-1])
    assert product.dtype == numpy.float64


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_sync_async_on_cpu_has_all_metrics(backend):
    result = run_workload("sync_async", backend, "cpu", n_ops=200)
    assert result.status == OK, result.reason
    m = result.metrics
    assert set(m) == {"speedup", "t1_s", "t2_s", "t3_s", "model_error"}
    assert m["speedup"] > 0.5
    assert m["t1_s"] > 0
    # a synchronous backend runs the op inside its issue: the backlog is no execution time, so no t2 and no model
    assert result.asynchronous is False
    assert m["t2_s"] is None
    assert m["model_error"] is None
    assert "t2_s" not in result.bounds
    assert result.bounds["speedup"] is not None
    reading = BUILT_IN["sync_async"].reading(result)
    assert reading.startswith("synchronous backend")
    assert "backend runs it in" not in reading


def test_sync_async_computes_x_plus_one():
    prepared = BUILT_IN["sync_async"].setup(get_backend("torch"), "cpu", {"n_ops": 3, "shape": [2, 3], "dtype": "float32"})
    for run in prepared.variants.values():
        assert run().tolist() == [[2.0] * 3] * 2


def test_fit_model_recovers_t1_t2_t3_of_a_backend_bound_device():
    n, t1, t2, t3 = 1000, 2e-6, 5e-6, 10e-6
    sync = Clocks(done_s=n * (t1 + t2 + t3), issue_s=n * (t1 + t2 + t3))
    asynchronous = Clocks(done_s=t1 + n * t2 + t3, issue_s=n * t1, device_s=n * t2)
    hold_s = 1e-3  # the queued variant's ops start on the device after the hold: all issued by then
    queued = Clocks(done_s=hold_s + QUEUED_OPS * t2, issue_s=QUEUED_OPS * t1, device_s=QUEUED_OPS * t2)
    fitted = fit_model(n, sync, asynchronous, queued)
    assert fitted["t1_s"] == pytest.approx(t1)
    assert fitted["t2_s"] == pytest.approx(t2)
    assert fitted["t3_s"] == pytest.approx(t3)
    assert abs(fitted["model_error"]) < 0.01


def test_fit_model_without_events_uses_the_backlog():
    fitted = fit_model(10, Clocks(done_s=12.0, issue_s=12.0), Clocks(done_s=10.0, issue_s=10.0))
    assert fitted["t2_s"] == 0.0
    assert fitted["t1_s"] == 1.0
    assert fitted["t3_s"] == pytest.approx(0.2)


def test_backends_explain_what_is_absent():
    numpy, torch = get_backend("numpy"), get_backend("torch")
    assert numpy.resolve("cpu") == (["cpu"], None)
    assert numpy.resolve("cuda")[1] == "numpy runs on the CPU only"
    assert torch.resolve("cpu") == (["cpu"], None)
    import torch as torch_module

    if not torch_module.cuda.is_available():
        assert torch.resolve("cuda:0")[1]
        assert torch.resolve("auto") == (["cpu"], None)


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed here")
def test_cupy_missing_is_a_skip_reason():
    devices, reason = get_backend("cupy").resolve("auto")
    assert devices == []
    assert "cupy not installed" in reason


@pytest.mark.gpu
def test_torch_cuda_matmul_shows_the_illusion_and_device_time():
    result = run_workload("matmul", "torch", "cuda:0", size=2048, n_iter=10)
    assert result.status == OK, result.reason
    variant = result.variants["matmul"]
    assert variant.device_s is not None
    assert variant.device_s.median > 0
    assert result.metrics["illusion"] > 1.5
    assert variant.memory.device_peak_bytes > 2048 * 2048 * 4


@pytest.mark.gpu
def test_torch_cuda_sync_async_is_faster_async():
    result = run_workload("sync_async", "torch", "cuda:0", n_ops=2000)
    assert result.status == OK, result.reason
    assert result.metrics["speedup"] > 1.2
    assert result.variants["async"].device_s is not None


@pytest.mark.gpu
@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="cupy not installed")
@pytest.mark.parametrize("workload", ["matmul", "sync_async"])
def test_cupy_cuda_workloads_run(workload):
    result = run_workload(workload, "cupy", "cuda:0")
    assert result.status == OK, result.reason
    assert all(v.device_s is not None for v in result.variants.values())
