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
- sync-debug-threads: torch's sync debug warnings from a second thread reach no census witness; the measured
  thread's do (issue 53, item 10).
- bound: `run --bound` (issue 52): torch's device delay against CUDA events (0.05-20 ms), a planted chain of tiny
  kernels with and without host cost against event truth (each side's slack judged from its interval), and that
  chain in a CUDA graph against the ceiling's floor.
- nvml-identity: the GPU NVML reads for cuda:0 is torch's cuda:0 (by UUID) with CUDA_VISIBLE_DEVICES unset, a UUID,
  a UUID prefix, and (2+ GPUs) reordered; throttle reasons said unknown exactly where pynvml's own read fails.

The checks live by concept: holds.py (the hold kernel and the queued variant), bounds.py (`run --bound`), frameworks.py (TF32, pinned
memory, JAX's pool), runs.py (whole runs watched from outside), witnesses.py (what is read beside a case: NVML's GPU,
torch's sync warnings); probes.py holds what they share. Each check's comment
gives its time on an H100 (CUDA's and the frameworks' start-up included), measured by the first
check of them all on a lent H100, 2026-11-27.
"""

from __future__ import annotations

from typing import Any, Callable

from .bounds import bound
from .frameworks import jax_device_memory, pinned, tf32
from .holds import frozen_kernel, hold, hold_rescaled, queued_hot, queued_trace
from .probes import no_cuda
from .runs import ab_identical, contexts, max_connections, sweep_gpus
from .witnesses import nvml_identity, sync_debug_threads

#: the checks by name, in the order gpu_check.py runs them: shortest first (each function's comment gives its time on
#: an H100), so a lent GPU whose minutes run out has answered as many checks as its time allowed
CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "sweep-gpus": sweep_gpus,  # skips at once on one GPU
    "sync-debug-threads": sync_debug_threads,
    "tf32": tf32,
    "nvml-identity": nvml_identity,
    "frozen-kernel": frozen_kernel,
    "pinned": pinned,
    "hold": hold,
    "hold-rescaled": hold_rescaled,
    "max-connections": max_connections,
    "queued-trace": queued_trace,
    "jax-device-memory": jax_device_memory,
    "queued-hot": queued_hot,
    "bound": bound,  # about 40-60 s (not yet run on a GPU)
    "ab-identical": ab_identical,
    "contexts": contexts,
}


def run(name: str) -> dict[str, Any]:
    """One check's answer, or {"skipped": why} where there is no CUDA device for torch here."""
    why = no_cuda()
    return {"skipped": why} if why else CHECKS[name]()
