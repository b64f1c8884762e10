"""What the GPU-only checks share: whether CUDA (and JAX's GPU) is here, timing on the GPU by CUDA events, heating
the GPU, calibrating a backend's hold, and running asyncbench in a process of its own for its results file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent

#: the hold asked for, and how long the GPU is kept busy before the hot measurements (clocks settle in seconds)
HOLD_S, HEAT_S = 0.05, 10.0


def no_cuda() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if torch.version.cuda is None or not torch.cuda.is_available():
        return f"no CUDA device for torch {torch.__version__}"
    return None


def events_s(work: Callable[[], Any]) -> float:
    """Device seconds `work` kept the current stream busy, by two CUDA events."""
    import torch

    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    work()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3


def heat(seconds: float) -> None:
    import torch

    a = torch.randn(4096, 4096, device="cuda:0")
    ends = time.perf_counter() + seconds
    while time.perf_counter() < ends:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def no_jax_gpu() -> str | None:
    """Why JAX has no GPU here (asked in a process of its own: JAX keeps the GPU it opens), or None."""
    probe = subprocess.run([sys.executable, "-c", "import jax; print(len(jax.devices('gpu')))"], capture_output=True, text=True)
    return f"JAX has no GPU here: {(probe.stderr.strip().splitlines() or ['?'])[-1]}" if probe.returncode != 0 else None


def calibrate(backend: Any) -> None:
    """Have `backend` count its cycles per second before a hold is timed: its first hold calibrates (two spins of
    CALIBRATION_CYCLES on the same stream), and events around that hold would time the calibration too (the first
    H100 check read 1.20× for a calibrated-hot hold, (50 + 2 × 5) ms / 50 ms, for that reason). Once per process and
    backend: its cycles per second are kept."""
    backend.hold("cuda:0", 1e-5)
    backend.barrier("cuda:0")


def run_json(arguments: list[str], out: Path, extra_environment: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "asyncbench", *arguments, "--no-progress", "-o", str(out)],
        cwd=ROOT,
        env={**os.environ, **extra_environment},
        capture_output=True,
        text=True,
    )
    return {"exit": done.returncode, **(json.loads(out.read_text()) if out.exists() else {"stderr": done.stderr[-2000:]})}


def medians(report: dict[str, Any]) -> dict[str, float]:
    return {
        f"{row['id']} {name}": variant["done_s"]["median"]
        for row in report.get("results", ())
        for name, variant in (row.get("variants") or {}).items()
        if isinstance(variant, dict) and isinstance(variant.get("done_s"), dict)
    }
