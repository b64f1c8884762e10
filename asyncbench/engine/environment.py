"""What the numbers were measured on: versions, devices, CPU, threads, git SHA.

Captured once per run and stored in the results, so two result files can be
compared knowing what differed. Each backend says what matters about its
framework (`Backend.facts`: torch's CUDA version, threads and devices, cupy's
runtime and CUPY_TF32, JAX's GPU models); a backend that is not installed is
recorded as unavailable. The variables that change GPU results are recorded
whenever set (`gpu_variables`), and on a GPU machine with nvidia-ml-py each
GPU's model, compute mode and power limit (`gpus`, host.nvml: no CUDA context).
The CPU thread pools' sizes are in `thread_variables` (engine.thread_pools).
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any, Iterable

import psutil

from asyncbench.backends import BACKENDS, get_backend
from asyncbench.backends.base import MATMUL_PRECISION
from asyncbench.engine import thread_pools
from asyncbench.host import facts, nvml
from asyncbench.version import __version__


def capture(backends: Iterable[str] = tuple(BACKENDS)) -> dict[str, Any]:
    """Facts about this machine and the frameworks the run will use."""
    frameworks: dict[str, Any] = {}
    for name in dict.fromkeys(backends):
        backend = get_backend(name)
        reason = backend.unavailable_reason()
        if not reason:  # `run --threads N`: pinned here as in the workers, so the facts say the pools they ran in
            thread_pools.apply([name])
        frameworks[name] = {"version": backend.version(), "unavailable": reason} if reason else backend.facts()
    return {
        "asyncbench": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu": facts.cpu_model(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_cores_logical": psutil.cpu_count(logical=True),
        "cpu_affinity": facts.usable_cores(),
        "memory_bytes": psutil.virtual_memory().total,
        # with JAX's pool size (PJRT_NPROC) and ASYNCBENCH_THREADS (`run --threads N` pinned every pool) where set
        "thread_variables": {**{k: os.environ[k] for k in facts.THREAD_VARIABLES if k in os.environ}, **thread_pools.recorded()},
        "synchronizing_variables": facts.synchronizing_variables(),
        "gpu_variables": facts.gpu_variables(),
        "frameworks": frameworks,
        "matmul_precision": MATMUL_PRECISION,
        "git_sha": facts.git_sha(),
        **({"gpus": gpus} if (gpus := nvml.snapshot()) else {}),  # NVML's view of each GPU, where it can be read
    }
