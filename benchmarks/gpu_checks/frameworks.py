"""What the frameworks compute and keep on a real GPU: float32 products inside the full-precision scope against TF32,
the pinned host memory a copy_overlap case leaves behind, and JAX's device pool and single stream."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

from .probes import events_s, no_cuda, no_jax_gpu, run_json

#: the product timed with TF32 off and on: large enough that tensor cores, not launches, set the time
TF32_SIZE, TF32_REPEATS = 8192, 10

#: TF32 on must be at least this much faster for the scope to count as computing in float32 (an H100: about 7×)
TF32_FASTER = 1.2


def _gflops(product: Callable[[], Any], size: int) -> float:
    product()  # the first call picks the kernel
    seconds = events_s(lambda: [product() for _ in range(TF32_REPEATS)])
    return 2 * size**3 * TF32_REPEATS / seconds / 1e9


def tf32() -> dict[str, Any]:  # 6 s on an H100: four timed products of 8192², torch and CuPy
    import torch

    from asyncbench.backends.torch_backend import TorchBackend

    a = torch.randn(TF32_SIZE, TF32_SIZE, device="cuda:0")
    with TorchBackend().full_precision():
        off = _gflops(lambda: a @ a, TF32_SIZE)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        on = _gflops(lambda: a @ a, TF32_SIZE)
    finally:
        torch.set_float32_matmul_precision(before)
    found: dict[str, Any] = {"torch_gflops": {"full precision": off, "TF32": on}}
    try:
        import cupy

        from asyncbench.backends.cupy_backend import CupyBackend

        x = cupy.random.standard_normal((TF32_SIZE, TF32_SIZE), dtype="float32")
        with CupyBackend().full_precision():
            cupy_off = _gflops(lambda: x @ x, TF32_SIZE)
        previous = cupy._core.get_compute_type("float32")
        cupy._core.set_compute_type("float32", cupy._core._routines_linalg.COMPUTE_TYPE_TF32)
        try:
            cupy_on = _gflops(lambda: x @ x, TF32_SIZE)
        finally:
            cupy._core.set_compute_type("float32", previous)
        found["cupy_gflops"] = {"full precision": cupy_off, "TF32": cupy_on}
    except ImportError:
        found["cupy_gflops"] = "cupy not installed"
    # where TF32 is faster the scope really computed in float32 (a GPU before Ampere has no TF32: both alike)
    measured = [g for g in (found["torch_gflops"], found["cupy_gflops"]) if isinstance(g, dict)]
    found["verified"] = all(g["TF32"] > TF32_FASTER * g["full precision"] for g in measured)
    return found


def _copy_overlap(backend: str) -> str:
    """Run one copy_overlap case in this process on `backend`, cuda:0; its status."""
    import gc

    from asyncbench.backends import get_backend
    from asyncbench.engine import runner
    from asyncbench.results.model import Case, Settings
    from asyncbench.workloads import BUILT_IN

    settings = Settings(warmup=1, min_samples=5, max_samples=5, max_time_s=5.0)
    params = {"size": 4096, "n_matrices": 16, "dtype": "float32"}
    case = Case(
        id="pinned", experiment="pinned", workload="copy_overlap", backend=backend, device="cuda:0", params=params, settings=settings
    )
    result = runner.run_case(case, BUILT_IN["copy_overlap"], get_backend(backend))
    gc.collect()
    return f"{result.status}{': ' + result.reason if result.reason else ''}"


def pinned() -> dict[str, Any]:  # 12 s on an H100: two copy_overlap cases of 5 samples
    """Pinned host memory a copy_overlap case still holds once it is over: torch's caching host allocator's bytes
    against what it held before the case (bytes pinned elsewhere are not the case's), and the free blocks CuPy's
    pinned pool keeps (each a pinned buffer) where CuPy is installed."""
    import torch

    if not hasattr(torch.cuda, "host_memory_stats"):
        return {"skipped": f"torch {torch.__version__} has no torch.cuda.host_memory_stats"}
    # the allocator's statistics are absent until it first pins memory (an empty dict on torch 2.11): none pinned
    found: dict[str, Any] = {"torch_pinned_bytes_before": torch.cuda.host_memory_stats().get("allocated_bytes.current", 0)}
    found["torch_case"] = _copy_overlap("torch")
    stats = torch.cuda.host_memory_stats()
    found["torch_pinned_bytes_held"] = stats.get("allocated_bytes.current", 0)
    found["torch_pinned_bytes_peak"] = stats.get("allocated_bytes.peak", 0)
    released = [found["torch_pinned_bytes_held"] == found["torch_pinned_bytes_before"]]
    try:
        import cupy

        found["cupy_case"] = _copy_overlap("cupy")
        found["cupy_pinned_free_blocks"] = cupy.get_default_pinned_memory_pool().n_free_blocks()
        released.append(found["cupy_pinned_free_blocks"] == 0)
    except ImportError:
        found["cupy_case"] = "cupy not installed"
    found["verified"] = all(released)
    return found


def jax_device_memory() -> dict[str, Any]:  # 20 s on an H100: two quick JAX runs (XLA's start-up and compiles)
    """JAX on cuda:0 reports its device pool for every matmul variant, and multi_device's partner: stream says that
    both parts ran on one stream."""
    why = no_cuda() or no_jax_gpu()
    if why:
        return {"skipped": why}
    with tempfile.TemporaryDirectory() as folder:
        matmul = run_json(["run", "-w", "matmul", "-b", "jax", "-d", "cuda:0", "--quick"], Path(folder) / "m.json", {})
        arguments = ["run", "-w", "multi_device", "-b", "jax", "-d", "cuda:0", "--quick", "--set", "partner=stream"]
        stream = run_json(arguments, Path(folder) / "s.json", {})
    pools = {
        f"{row['id']} {name}": {k: (variant.get("memory") or {}).get(k) for k in ("device_pool_used_bytes", "device_pool_total_bytes")}
        for row in matmul.get("results", ())
        for name, variant in (row.get("variants") or {}).items()
    }
    notes = [row.get("note") or "" for row in stream.get("results", ())]
    pooled = bool(pools) and all(None not in pool.values() for pool in pools.values())
    one_stream = bool(notes) and all(note.startswith("one stream on cuda:0") for note in notes)
    return {"exits": [matmul["exit"], stream["exit"]], "pools": pools, "notes": notes, "verified": pooled and one_stream}
