"""The hold kernel and sync_async's queued variant on a real GPU: a hold lasts what was asked, cold and hot, and
after a re-scale; a frozen process's kernel still runs; the queued rounds keep t2 hot and in a trace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .probes import HEAT_S, HOLD_S, ROOT, calibrate, events_s, heat, no_cuda, run_json

#: a hold within this ratio of what was asked is what sync_async's queued variant needs
HOLD_AGREES = (0.9, 1.1)

#: the frozen-kernel check: the kernel's length and how long its process stays stopped (longer than the kernel)
KERNEL_S, FROZEN_S = 1.0, 3.0

#: hold-rescaled: holds taken through sync_async's Hold (the first may miss: the scale is corrected after it)
RESCALED_HOLDS = 6

#: queued-hot: enough ops that the sync variant's per-op waits dominate; and how many queued rounds may lose t2
QUEUED_HOT_OPS, QUEUED_HOT_MISSED = 10_000, 1


def hold() -> dict[str, Any]:  # 14 s on an H100 (2026-11-27): CUDA start-up, HEAT_S of products, three holds
    from asyncbench.backends.torch_backend import TorchBackend

    cold = TorchBackend()
    calibrate(cold)  # on a GPU at rest
    cold_s = events_s(lambda: cold.hold("cuda:0", HOLD_S))
    heat(HEAT_S)
    hot_with_cold_calibration_s = events_s(lambda: cold.hold("cuda:0", HOLD_S))
    hot = TorchBackend()
    calibrate(hot)  # a new backend calibrates again, on the hot GPU
    hot_s = events_s(lambda: hot.hold("cuda:0", HOLD_S))
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
    calibrate(backend)
    heat(HEAT_S)


def hold_rescaled() -> dict[str, Any]:  # 15 s on an H100: start-up, HEAT_S of products, six holds
    """sync_async's Hold on a hot GPU with a cold calibration: the hold that ran short re-scales the next one."""
    why = no_cuda()
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
        ratios.append(events_s(hold) / HOLD_S)
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
    why = no_cuda()
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


#: the torch kernels the queued trace is read for, matched loosely (names differ by torch version): torch.cuda._sleep's
#: spin_kernel, and the elementwise kernels of `x + 1` (their functor names `add`)
HOLD_KERNEL, ADD_KERNEL = ("spin", "sleep"), ("add",)


def kernels(trace: dict[str, Any], words: tuple[str, ...]) -> list[dict[str, Any]]:
    """The trace's kernel events whose name holds one of `words` (case-insensitive), by start."""
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    kernels = [e for e in events if isinstance(e, dict) and str(e.get("cat", "")).lower() == "kernel" and "ts" in e]
    return sorted((e for e in kernels if any(w in str(e.get("name", "")).lower() for w in words)), key=lambda e: float(e["ts"]))


def queued_trace() -> dict[str, Any]:  # 17 s on an H100: a quick sync_async run on torch, traced
    """In the queued variant's trace the hold kernel ends at or before the first add starts: the ops were queued
    behind the hold, as the variant needs."""
    why = no_cuda()
    if why:
        return {"skipped": why}
    with tempfile.TemporaryDirectory() as folder:
        arguments = ["run", "-w", "sync_async", "-b", "torch", "-d", "cuda:0", "--quick", "--trace", str(Path(folder) / "traces")]
        done = run_json(arguments, Path(folder) / "r.json", {})
        files = sorted((Path(folder) / "traces").glob("*.queued.trace.json"))
        if not files:
            return {"exit": done["exit"], "error": "no queued trace was written", "verified": False}
        trace = json.loads(files[0].read_text())
    holds, adds = kernels(trace, HOLD_KERNEL), kernels(trace, ADD_KERNEL)
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
