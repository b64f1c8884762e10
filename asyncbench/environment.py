"""What the numbers were measured on: versions, devices, CPU, threads, git SHA.

Captured once per run and stored in the results, so two result files can be
compared knowing what differed. Framework versions come from package
metadata; torch is imported (it is about to run anyway) to read its CUDA
version, thread count and device names, cupy only if a cupy case is planned.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable

import psutil

from asyncbench import __version__
from asyncbench.backends import BACKENDS, get_backend
from asyncbench.cuda_devices import cuda_devices

THREAD_VARIABLES = (
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
    "MXNET_CPU_WORKER_NTHREADS", "MXNET_ENGINE_TYPE", "XLA_FLAGS", "JAX_PLATFORMS",
)
#: variables that make GPU work synchronous: every launch (CUDA_LAUNCH_BLOCKING) or every NCCL wait
#: (TORCH_NCCL_BLOCKING_WAIT, its older name NCCL_BLOCKING_WAIT) returns only when the work is done
SYNCHRONIZING_VARIABLES = ("CUDA_LAUNCH_BLOCKING", "TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT")


def synchronizing_variables() -> dict[str, str]:
    """Those of SYNCHRONIZING_VARIABLES set to something other than off in this process's environment."""
    return {k: os.environ[k] for k in SYNCHRONIZING_VARIABLES if os.environ.get(k, "0").strip().lower() not in ("", "0", "false")}
# A git query is a courtesy; never let a slow filesystem hold up a run.
GIT_TIMEOUT_S = 2.0


def cpu_model() -> str:
    """The CPU's marketing name from /proc/cpuinfo, else what platform knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def git_sha(directory: str | Path = ".") -> str | None:
    """HEAD's SHA when run inside a git work tree (with '-dirty' if modified), else None."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty else sha


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity), which is what thread counts should split."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _torch_facts() -> dict[str, Any]:
    import torch

    facts: dict[str, Any] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
    }
    if torch.version.cuda and torch.cuda.is_available():
        facts["cudnn"] = torch.backends.cudnn.version()  # the library's version: no context
        facts["devices"] = {f"cuda:{i}": dataclasses.asdict(device) for i, device in enumerate(cuda_devices())}
    return facts


def _cupy_facts() -> dict[str, Any]:
    import cupy

    backend = get_backend("cupy")
    facts: dict[str, Any] = {"version": backend.version()}

    facts["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    facts["devices"] = {s.device: s.detail for s in backend.probe() if s.available}
    return facts


def capture(backends: Iterable[str] = tuple(BACKENDS)) -> dict[str, Any]:
    """Facts about this machine and the frameworks the run will use."""
    frameworks: dict[str, Any] = {}
    for name in dict.fromkeys(backends):
        backend = get_backend(name)
        reason = backend.unavailable_reason()
        if reason:
            frameworks[name] = {"version": backend.version(), "unavailable": reason}
        elif name == "torch":
            frameworks[name] = _torch_facts()
        elif name == "cupy":
            frameworks[name] = _cupy_facts()
        else:
            frameworks[name] = {"version": backend.version()}
            if backend.interpreter() is not None:
                frameworks[name]["python"] = backend.interpreter()
            if backend.worker_environment():
                frameworks[name]["worker_environment"] = backend.worker_environment()
    return {
        "asyncbench": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu": cpu_model(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_cores_logical": psutil.cpu_count(logical=True),
        "cpu_affinity": usable_cores(),
        "memory_bytes": psutil.virtual_memory().total,
        "thread_variables": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ},
        "synchronizing_variables": synchronizing_variables(),
        "frameworks": frameworks,
        "git_sha": git_sha(),
    }
