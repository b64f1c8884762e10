"""What this host is: usable cores, the CPU, the git checkout, and variables that change how frameworks run.

A leaf: backends (thread counts), workloads (cores to split), the engine
(start-up variables) and the environment capture all read these facts, and
it imports none of them, so no import cycle runs through it.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from asyncbench.host import git

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "MXNET_CPU_WORKER_NTHREADS",
    "MXNET_ENGINE_TYPE",
    "XLA_FLAGS",
    "JAX_PLATFORMS",
)
#: variables that make GPU work synchronous: every launch (CUDA_LAUNCH_BLOCKING) or every NCCL wait
#: (TORCH_NCCL_BLOCKING_WAIT, its older name NCCL_BLOCKING_WAIT) returns only when the work is done
SYNCHRONIZING_VARIABLES = ("CUDA_LAUNCH_BLOCKING", "TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT")


#: variables that change what GPU work computes or how fast it runs, recorded whenever set (two runs that differ in
#: one show it in `compare` and `ab`): the hardware queues a process's streams share (CUDA_DEVICE_MAX_CONNECTIONS=1
#: serializes them), TF32 forced or refused for every library (NVIDIA_TF32_OVERRIDE) or for torch's cuBLAS
#: (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE) or CuPy's products (CUPY_TF32), CuPy's accelerated kernels (CUPY_ACCELERATORS),
#: kernels loaded at first launch rather than at start (CUDA_MODULE_LOADING), the order GPUs are numbered in
#: (CUDA_DEVICE_ORDER), and torch's allocator and cuBLAS workspace settings
GPU_VARIABLES = (
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "CUPY_TF32",
    "CUPY_ACCELERATORS",
    "CUDA_MODULE_LOADING",
    "CUDA_DEVICE_ORDER",
    "PYTORCH_CUDA_ALLOC_CONF",
    "CUBLAS_WORKSPACE_CONFIG",
)
#: JAX's GPU memory settings (XLA_PYTHON_CLIENT_PREALLOCATE, _MEM_FRACTION, _ALLOCATOR), recorded whichever are set
GPU_VARIABLE_PREFIXES = ("XLA_PYTHON_CLIENT_",)


def gpu_variables() -> dict[str, str]:
    """Those of GPU_VARIABLES, and every variable named with a GPU_VARIABLE_PREFIXES prefix, set in this process."""
    named = {k: os.environ[k] for k in GPU_VARIABLES if k in os.environ}
    prefixed = {k: v for k, v in os.environ.items() if k.startswith(GPU_VARIABLE_PREFIXES)}
    return dict(sorted({**named, **prefixed}.items()))


def synchronizing_variables() -> dict[str, str]:
    """Those of SYNCHRONIZING_VARIABLES set to something other than off in this process's environment."""
    return {k: os.environ[k] for k in SYNCHRONIZING_VARIABLES if os.environ.get(k, "0").strip().lower() not in ("", "0", "false")}


def cpu_model() -> str:
    """The CPU's marketing name from /proc/cpuinfo, else what platform knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def git_sha(directory: str | Path = ".") -> str | None:
    """HEAD's SHA when run inside a git work tree (with '-dirty' if modified), else None (host.git)."""
    return git.checkout_sha(directory)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity), which is what thread counts should split."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
