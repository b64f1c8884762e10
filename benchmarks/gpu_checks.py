"""The checks only a real GPU can answer (issue 36's last bullet), one per `gpu_check.py --check NAME` process.

Each returns a JSON-able dict: what it measured and `verified` (True, False, or None where the figure is
information, not a pass or fail), or {"skipped": why} where this machine cannot answer it (no CUDA torch, no JAX
GPU, no nvidia-smi). gpu_check.py runs each in a process of its own, under --step-timeout, and writes the answers to
checks/<name>.json and README.md.

- hold: the hold kernel's length against what it was asked for, calibrated on a cold GPU and used on a hot one
  (the SM clock rises with load: a hold that counts cycles then ends early), and calibrated hot.
- contexts: the CUDA contexts (compute processes, nvidia-smi) on each GPU while a torch + JAX run measures: one
  process measures on a GPU at a time.
- pinned: the pinned host memory torch's caching host allocator still holds after a copy_overlap case.
- tf32: float32 product GFLOP/s inside the full-precision scope and with TF32 on (torch; CuPy where installed):
  the scope is real where TF32 on is faster.
- max-connections: a multi-stream workload with CUDA_DEVICE_MAX_CONNECTIONS=1 against the default, and the
  variable recorded in the results' environment.
- ab-identical: `asyncbench ab` with both sides the same code on one GPU: no change found.
- frozen-kernel: a kernel issued by a process that is then frozen (SIGSTOP, as ab freezes the side not measuring)
  runs to its end while the process is stopped.
- hold-rescaled: sync_async's Hold, calibrated cold and used hot, brings each hold after its first back into the band.
- queued-hot: a sync_async case on a hot GPU with a cold calibration still gives t2 (at most one round lost).
- jax-device-memory: JAX on cuda:0 reports its device pool for every matmul variant; multi_device's partner: stream
  says "one stream".
- queued-trace: in the queued variant's trace the hold kernel ends before the first add starts.
- sweep-gpus: a local sweep's CPU job never has a context on a GPU, and one job at a time has one (2+ GPUs).

Each check's comment gives its time on an H100 (CUDA's and the frameworks' start-up included), measured by the first
check of them all on a lent H100, 2026-11-27.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
#: the hold asked for, and how long the GPU is kept busy before the hot measurements (clocks settle in seconds)
HOLD_S, HEAT_S = 0.05, 10.0
#: a hold within this ratio of what was asked is what sync_async's queued variant needs
HOLD_AGREES = (0.9, 1.1)
#: the product timed with TF32 off and on: large enough that tensor cores, not launches, set the time
TF32_SIZE, TF32_REPEATS = 8192, 10
#: TF32 on must be at least this much faster for the scope to count as computing in float32 (an H100: about 7×)
TF32_FASTER = 1.2
#: how often nvidia-smi is asked for the compute processes during the torch + JAX run
POLL_S = 0.5
#: the frozen-kernel check: the kernel's length and how long its process stays stopped (longer than the kernel)
KERNEL_S, FROZEN_S = 1.0, 3.0
#: hold-rescaled: holds taken through sync_async's Hold (the first may miss: the scale is corrected after it)
RESCALED_HOLDS = 6
#: queued-hot: enough ops that the sync variant's per-op waits dominate; and how many queued rounds may lose t2
QUEUED_HOT_OPS, QUEUED_HOT_MISSED = 10_000, 1
#: sweep-gpus: how often nvidia-smi is asked for the compute processes while the local sweep runs
SWEEP_POLL_S = 0.2


def _no_cuda() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if torch.version.cuda is None or not torch.cuda.is_available():
        return f"no CUDA device for torch {torch.__version__}"
    return None


def _events_s(work: Callable[[], Any]) -> float:
    """Device seconds `work` kept the current stream busy, by two CUDA events."""
    import torch

    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    work()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3


def _heat(seconds: float) -> None:
    import torch

    a = torch.randn(4096, 4096, device="cuda:0")
    ends = time.perf_counter() + seconds
    while time.perf_counter() < ends:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def _no_jax_gpu() -> str | None:
    """Why JAX has no GPU here (asked in a process of its own: JAX keeps the GPU it opens), or None."""
    probe = subprocess.run([sys.executable, "-c", "import jax; print(len(jax.devices('gpu')))"], capture_output=True, text=True)
    return f"JAX has no GPU here: {(probe.stderr.strip().splitlines() or ['?'])[-1]}" if probe.returncode != 0 else None


def _calibrate(backend: Any) -> None:
    """Have `backend` count its cycles per second before a hold is timed: its first hold calibrates (two spins of
    CALIBRATION_CYCLES on the same stream), and events around that hold would time the calibration too (the first
    H100 check read 1.20× for a calibrated-hot hold, (50 + 2 × 5) ms / 50 ms, for that reason). Once per process and
    backend: its cycles per second are kept."""
    backend.hold("cuda:0", 1e-5)
    backend.barrier("cuda:0")


def hold() -> dict[str, Any]:  # 14 s on an H100 (2026-11-27): CUDA start-up, HEAT_S of products, three holds
    from asyncbench.backends.torch_backend import TorchBackend

    cold = TorchBackend()
    _calibrate(cold)  # on a GPU at rest
    cold_s = _events_s(lambda: cold.hold("cuda:0", HOLD_S))
    _heat(HEAT_S)
    hot_with_cold_calibration_s = _events_s(lambda: cold.hold("cuda:0", HOLD_S))
    hot = TorchBackend()
    _calibrate(hot)  # a new backend calibrates again, on the hot GPU
    hot_s = _events_s(lambda: hot.hold("cuda:0", HOLD_S))
    ratios = {
        "cold": cold_s / HOLD_S,
        "hot, calibrated cold": hot_with_cold_calibration_s / HOLD_S,
        "hot, calibrated hot": hot_s / HOLD_S,
    }
    return {
        "asked_s": HOLD_S,
        "held_s_over_asked": ratios,
        "verified": all(HOLD_AGREES[0] <= r <= HOLD_AGREES[1] for r in ratios.values()),
    }


def _compute_processes() -> dict[str, list[str]]:
    """GPU bus id -> the pids with a context on it (nvidia-smi --query-compute-apps)."""
    done = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=gpu_bus_id,pid", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
    )
    found: dict[str, list[str]] = {}
    for line in done.stdout.strip().splitlines():
        if "," in line:
            bus, pid = (v.strip() for v in line.split(",", 1))
            found.setdefault(bus, []).append(pid)
    return found


def contexts() -> dict[str, Any]:  # 95 s on an H100: the quick suite on torch and JAX
    if shutil.which("nvidia-smi") is None:
        return {"skipped": "nvidia-smi is not installed"}
    no_jax = _no_jax_gpu()
    if no_jax:
        return {"skipped": no_jax}
    most: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "asyncbench", "run", "-b", "torch", "-b", "jax", "-d", "cuda", "--quick", "--no-progress"]
        with subprocess.Popen([*command, "-o", str(Path(folder) / "r.json")], cwd=ROOT, stdout=subprocess.DEVNULL) as run:
            while run.poll() is None:
                for bus, pids in _compute_processes().items():
                    most[bus] = max(most.get(bus, 0), len(pids))
                time.sleep(POLL_S)
    return {"run_exit": run.returncode, "most_contexts_per_gpu": most, "verified": bool(most) and max(most.values()) == 1}


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


def _gflops(product: Callable[[], Any], size: int) -> float:
    product()  # the first call picks the kernel
    seconds = _events_s(lambda: [product() for _ in range(TF32_REPEATS)])
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


def _run_json(arguments: list[str], out: Path, extra_environment: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "asyncbench", *arguments, "--no-progress", "-o", str(out)],
        cwd=ROOT,
        env={**os.environ, **extra_environment},
        capture_output=True,
        text=True,
    )
    return {"exit": done.returncode, **(json.loads(out.read_text()) if out.exists() else {"stderr": done.stderr[-2000:]})}


def _medians(report: dict[str, Any]) -> dict[str, float]:
    return {
        f"{row['id']} {name}": variant["done_s"]["median"]
        for row in report.get("results", ())
        for name, variant in (row.get("variants") or {}).items()
        if isinstance(variant, dict) and isinstance(variant.get("done_s"), dict)
    }


def max_connections() -> dict[str, Any]:  # 15 s on an H100: two quick runs of two workloads
    arguments = ["run", "-w", "multi_device", "-w", "small_ops", "-b", "torch", "-d", "cuda", "--quick"]
    with tempfile.TemporaryDirectory() as folder:
        default = _run_json(arguments, Path(folder) / "default.json", {})
        one = _run_json(arguments, Path(folder) / "one.json", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"})
    recorded = (one.get("environment") or {}).get("gpu_variables", {}).get("CUDA_DEVICE_MAX_CONNECTIONS")
    return {
        "exits": [default["exit"], one["exit"]],
        "done_median_s": {"default": _medians(default), "CUDA_DEVICE_MAX_CONNECTIONS=1": _medians(one)},
        "recorded": recorded,
        "verified": recorded == "1",
    }


def ab_identical() -> dict[str, Any]:  # 91 s on an H100 gated at 60 s; about 150 s at ab's default 2 minutes
    """Identical sides: every ratio SAME or NOT SLOWER (a gate that passes), none SLOWER or FASTER. Gated at ab's
    default time: at 60 s the first H100 check left all three ratios INCONCLUSIVE, which verifies nothing."""
    with tempfile.TemporaryDirectory() as folder:
        arguments = ["ab", "-w", "matmul", "-w", "sync_async", "-b", "torch", "-d", "cuda", "--allow-inconclusive"]
        sides = ["--base-env", "GPU_CHECK_SIDE=base", "--head-env", "GPU_CHECK_SIDE=head"]
        found = _run_json([*arguments, *sides], Path(folder) / "ab.json", {})
    ratios = {f"{case.get('id')} {r.get('name')}": r for case in found.get("cases", ()) for r in case.get("ratios") or ()}
    labels = {name: r.get("label") for name, r in ratios.items()}
    return {
        "exit": found["exit"],
        "labels": labels,
        # why a label is what it is: the interval against the margin, and the blocks it came from
        "ratio_ci": {name: r.get("ratio_ci") for name, r in ratios.items()},
        "blocks": {name: len(r.get("block_log_ratios") or ()) for name, r in ratios.items()},
        "verified": _identical_verdict(set(labels.values())),
    }


def _identical_verdict(labels: set[str]) -> bool | None:
    """Identical sides verified: no label at all, or a wrong one (SLOWER, FASTER), fails; none decided (every label
    INCONCLUSIVE) is a figure, not a pass (README.md: "measured")."""
    if not labels or labels & {"SLOWER", "FASTER"}:
        return False
    return None if labels == {"INCONCLUSIVE"} else True


#: what the frozen process runs: a kernel of KERNEL_S, an event after it, then (once continued) whether it finished
_FROZEN_CHILD = f"""
import json, time, torch
from asyncbench.backends.torch_backend import TorchBackend
backend = TorchBackend()
backend.hold("cuda:0", 0.01)  # calibrate
torch.cuda.synchronize()
end = torch.cuda.Event()
backend.hold("cuda:0", {KERNEL_S})
end.record()
print("issued", flush=True)
started = time.perf_counter()
time.sleep(0.2)  # stopped in here
print(json.dumps({{"finished_when_continued": end.query(), "host_s": time.perf_counter() - started}}), flush=True)
"""


def frozen_kernel() -> dict[str, Any]:  # 11 s on an H100: start-up, FROZEN_S stopped
    with subprocess.Popen([sys.executable, "-c", _FROZEN_CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "issued":
            return {"verified": False, "error": f"the child exited {child.wait()} before issuing"}
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(FROZEN_S)
        os.kill(child.pid, signal.SIGCONT)
        answer = json.loads(child.stdout.readline())
    stopped = answer["host_s"] >= FROZEN_S * 0.9
    return {**answer, "kernel_s": KERNEL_S, "frozen_s": FROZEN_S, "verified": stopped and answer["finished_when_continued"]}


def _cold_then_hot(backend: Any) -> None:
    """Calibrate `backend`'s hold on cuda:0 at rest, then heat the GPU."""
    _calibrate(backend)
    _heat(HEAT_S)


def hold_rescaled() -> dict[str, Any]:  # 15 s on an H100: start-up, HEAT_S of products, six holds
    """sync_async's Hold on a hot GPU with a cold calibration: the hold that ran short re-scales the next one."""
    why = _no_cuda()
    if why:
        return {"skipped": why}
    import torch

    from asyncbench.backends.torch_backend import TorchBackend
    from asyncbench.workloads.sync_async import Hold

    backend = TorchBackend()
    _cold_then_hot(backend)
    hold = Hold(backend, "cuda:0", HOLD_S)
    ratios = []
    for _ in range(RESCALED_HOLDS):
        ratios.append(_events_s(hold) / HOLD_S)
        torch.cuda.synchronize()
    return {
        "asked_s": HOLD_S,
        "held_s_over_asked": ratios,
        "final_scale": hold.scale,
        "verified": all(HOLD_AGREES[0] <= r <= HOLD_AGREES[1] for r in ratios[1:]),
    }


def _queued_case(backend: Any) -> dict[str, Any]:
    """One sync_async case of QUEUED_HOT_OPS on `backend`, cuda:0, in this process: what the queued rounds gave."""
    from asyncbench.engine import runner
    from asyncbench.results.model import Case, Settings
    from asyncbench.workloads import BUILT_IN

    case = Case(
        id="queued-hot",
        experiment="queued-hot",
        workload="sync_async",
        backend=backend.name,
        device="cuda:0",
        params={**BUILT_IN["sync_async"].defaults(), "n_ops": QUEUED_HOT_OPS},
        settings=Settings(warmup=1, min_samples=20, max_samples=20),
    )
    result = runner.run_case(case, BUILT_IN["sync_async"], backend)
    queued = result.variants.get("queued")
    missed = result.metrics.get("t2_missed")
    return {
        "status": f"{result.status}{': ' + result.reason if result.reason else ''}",
        "t2_missed": missed,
        "rounds": len(queued.samples.done_s) if queued is not None else 0,
        "t2_s": result.metrics.get("t2_s"),
        "reading": result.reading,
        "verified": result.metrics.get("t2_s") is not None and missed is not None and missed <= QUEUED_HOT_MISSED,
    }


def queued_hot() -> dict[str, Any]:  # 41 s on an H100: HEAT_S and a 20-round case of 10 000 ops, twice (torch, CuPy)
    """The queued variant on a hot GPU whose hold was calibrated cold: the rounds that lose t2 stay at one or none."""
    why = _no_cuda()
    if why:
        return {"skipped": why}
    from asyncbench.backends.torch_backend import TorchBackend

    torch_backend = TorchBackend()
    _cold_then_hot(torch_backend)
    found: dict[str, Any] = {"torch": _queued_case(torch_backend)}
    try:
        import cupy  # noqa: F401 - only whether it is installed

        from asyncbench.backends.cupy_backend import CupyBackend

        cupy_backend = CupyBackend()
        _cold_then_hot(cupy_backend)
        found["cupy"] = _queued_case(cupy_backend)
    except ImportError:
        found["cupy"] = "cupy not installed"
    found["verified"] = all(v["verified"] for v in found.values() if isinstance(v, dict))
    return found


def jax_device_memory() -> dict[str, Any]:  # 20 s on an H100: two quick JAX runs (XLA's start-up and compiles)
    """JAX on cuda:0 reports its device pool for every matmul variant, and multi_device's partner: stream says that
    both parts ran on one stream."""
    why = _no_cuda() or _no_jax_gpu()
    if why:
        return {"skipped": why}
    with tempfile.TemporaryDirectory() as folder:
        matmul = _run_json(["run", "-w", "matmul", "-b", "jax", "-d", "cuda:0", "--quick"], Path(folder) / "m.json", {})
        arguments = ["run", "-w", "multi_device", "-b", "jax", "-d", "cuda:0", "--quick", "--set", "partner=stream"]
        stream = _run_json(arguments, Path(folder) / "s.json", {})
    pools = {
        f"{row['id']} {name}": {k: (variant.get("memory") or {}).get(k) for k in ("device_pool_used_bytes", "device_pool_total_bytes")}
        for row in matmul.get("results", ())
        for name, variant in (row.get("variants") or {}).items()
    }
    notes = [row.get("note") or "" for row in stream.get("results", ())]
    pooled = bool(pools) and all(None not in pool.values() for pool in pools.values())
    one_stream = bool(notes) and all(note.startswith("one stream on cuda:0") for note in notes)
    return {"exits": [matmul["exit"], stream["exit"]], "pools": pools, "notes": notes, "verified": pooled and one_stream}


#: the torch kernels the queued trace is read for, matched loosely (names differ by torch version): torch.cuda._sleep's
#: spin_kernel, and the elementwise kernels of `x + 1` (their functor names `add`)
HOLD_KERNEL, ADD_KERNEL = ("spin", "sleep"), ("add",)


def _kernels(trace: dict[str, Any], words: tuple[str, ...]) -> list[dict[str, Any]]:
    """The trace's kernel events whose name holds one of `words` (case-insensitive), by start."""
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    kernels = [e for e in events if isinstance(e, dict) and str(e.get("cat", "")).lower() == "kernel" and "ts" in e]
    return sorted((e for e in kernels if any(w in str(e.get("name", "")).lower() for w in words)), key=lambda e: float(e["ts"]))


def queued_trace() -> dict[str, Any]:  # 17 s on an H100: a quick sync_async run on torch, traced
    """In the queued variant's trace the hold kernel ends at or before the first add starts: the ops were queued
    behind the hold, as the variant needs."""
    why = _no_cuda()
    if why:
        return {"skipped": why}
    with tempfile.TemporaryDirectory() as folder:
        arguments = ["run", "-w", "sync_async", "-b", "torch", "-d", "cuda:0", "--quick", "--trace", str(Path(folder) / "traces")]
        done = _run_json(arguments, Path(folder) / "r.json", {})
        files = sorted((Path(folder) / "traces").glob("*.queued.trace.json"))
        if not files:
            return {"exit": done["exit"], "error": "no queued trace was written", "verified": False}
        trace = json.loads(files[0].read_text())
    holds, adds = _kernels(trace, HOLD_KERNEL), _kernels(trace, ADD_KERNEL)
    found: dict[str, Any] = {
        "exit": done["exit"],
        "file": files[0].name,
        "hold_kernels_matched": sorted({e["name"] for e in holds}),
        "add_kernels_matched": sorted({e["name"] for e in adds})[:3],
        "add_kernels": len(adds),
    }
    if not holds or not adds:
        return {**found, "error": f"no kernel named like {HOLD_KERNEL if not holds else ADD_KERNEL}", "verified": False}
    hold_end_us = float(holds[0]["ts"]) + float(holds[0].get("dur", 0))
    found["first_add_after_hold_end_us"] = float(adds[0]["ts"]) - hold_end_us
    found["verified"] = hold_end_us <= float(adds[0]["ts"])
    return found


def _job_of(pid: str) -> tuple[str | None, str | None]:
    """A compute process's local-executor job (its SUBMITIT_LOCAL_JOB_ID, which a job's workers inherit; None for a
    process of no job) and its CUDA_VISIBLE_DEVICES (None where unset or unreadable)."""
    try:
        pairs = (entry.split("=", 1) for entry in Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0"))
        environment = dict(pair for pair in pairs if len(pair) == 2)
    except OSError:
        return None, None
    return environment.get("SUBMITIT_LOCAL_JOB_ID"), environment.get("CUDA_VISIBLE_DEVICES")


def sweep_gpus() -> dict[str, Any]:  # 3 s to skip on one GPU: a local sweep of two quick jobs, one after the other on the GPU
    """A local sweep of a cuda:0 torch job and a CPU job: the CPU job's processes never open a GPU, and at most one
    job has processes on a GPU at a time (nvidia-smi polled every SWEEP_POLL_S)."""
    why = _no_cuda()
    if why:
        return {"skipped": why}
    import torch

    if torch.cuda.device_count() < 2:
        return {"skipped": f"one GPU here ({torch.cuda.device_count()}): the sweep's GPU isolation needs 2 or more"}
    if shutil.which("nvidia-smi") is None:
        return {"skipped": "nvidia-smi is not installed"}
    query = ["nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader"]
    cpu_job_on_gpu: set[str] = set()
    most_jobs, seen_jobs, others = 0, set[str](), set[str]()
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "asyncbench", "run", "-w", "sync_async", "-b", "torch", "-d", "cuda:0", "-d", "cpu"]
        command += ["--quick", "--per", "case", "--executor", "local", "--gpus-per-node", "1", "--no-progress"]
        command += ["--job-dir", str(Path(folder) / "sweep"), "-o", str(Path(folder) / "r.json")]
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as run:
            while run.poll() is None:
                rows = subprocess.run(query, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
                jobs: set[str] = set()
                for pid in {row.split(",", 1)[0].strip() for row in rows if "," in row} - {str(os.getpid())}:
                    job, visible = _job_of(pid)
                    if job is None:  # the sweep's own process, or another user's: not a job's
                        others.add(pid)
                        continue
                    jobs.add(job)
                    if visible == "":  # the local executor hides every GPU from a CPU job
                        cpu_job_on_gpu.add(job)
                most_jobs, seen_jobs = max(most_jobs, len(jobs)), seen_jobs | jobs
                time.sleep(SWEEP_POLL_S)
    return {
        "run_exit": run.returncode,
        "jobs_seen_on_a_gpu": sorted(seen_jobs),
        "cpu_jobs_on_a_gpu": sorted(cpu_job_on_gpu),
        "most_jobs_on_gpus_at_once": most_jobs,
        "other_pids_on_a_gpu": sorted(others),
        "verified": bool(seen_jobs) and not cpu_job_on_gpu and most_jobs <= 1,
    }


#: the checks by name, in the order gpu_check.py runs them: shortest first (each function's comment gives its time on
#: an H100), so a lent GPU whose minutes run out has answered as many checks as its time allowed
CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "sweep-gpus": sweep_gpus,  # skips at once on one GPU
    "tf32": tf32,
    "frozen-kernel": frozen_kernel,
    "pinned": pinned,
    "hold": hold,
    "hold-rescaled": hold_rescaled,
    "max-connections": max_connections,
    "queued-trace": queued_trace,
    "jax-device-memory": jax_device_memory,
    "queued-hot": queued_hot,
    "ab-identical": ab_identical,
    "contexts": contexts,
}


def run(name: str) -> dict[str, Any]:
    """One check's answer, or {"skipped": why} where there is no CUDA device for torch here."""
    why = _no_cuda()
    return {"skipped": why} if why else CHECKS[name]()
