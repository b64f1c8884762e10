"""A model of CUDA contexts across processes, for the case workers' tests: which live process opened which GPU.

A context lives as long as its process. The case workers' target here (`serve`, in place of
runner.run_case_in_worker) opens the GPUs a case would open, as the frameworks do, by recording its pid in a
ledger folder (a file per GPU and pid; the folder from LEDGER_VARIABLE), and fails the case when another live
process, or this one for a case whose ranks need the GPU, holds one of them: what EXCLUSIVE_PROCESS compute mode
refuses. What opens which GPU: a case on cuda:N opens N; JAX's XLA opens every GPU at its first device query, a
CPU case's too, unless its worker runs with JAX_PLATFORMS=cpu; a case measured across processes (NCCL ranks)
opens its ranks' GPUs (cuda:N on) in processes of its own, which end with the case.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from asyncbench.engine.case_workers import ImportFrameworks
from asyncbench.results.model import ERROR, OK, Case, Result
from asyncbench.workloads.base import INT, Param, Prepared, Workload

#: the modelled machine's GPUs
GPUS = 2
#: where the ledger folder is named for the workers (they inherit the test's environment)
LEDGER_VARIABLE = "ASYNCBENCH_TEST_GPU_LEDGER"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has exited: its context is gone although its pid is not yet reaped
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(")")[-1].split()[0] == "Z")


def holders(ledger: Path, gpu: int) -> set[int]:
    """The live processes that opened `gpu`."""
    return {pid for path in ledger.glob(f"gpu{gpu}.*") if _alive(pid := int(path.suffix[1:]))}


def _opened(case: Case) -> tuple[set[int], set[int]]:
    """The GPUs the case opens in this process, and those its ranks open in processes of their own."""
    first = int(case.device.partition(":")[2] or 0) if case.device.startswith("cuda") else None
    if case.params.get("ranks"):
        return set(), set(range(first or 0, (first or 0) + int(case.params["ranks"]))) if first is not None else set()
    if case.backend == "jax" and os.environ.get("JAX_PLATFORMS") != "cpu":
        return set(range(GPUS)), set()  # XLA starts every platform, a context on every GPU
    return ({first} if first is not None else set()), set()


def serve(case: Case | ImportFrameworks, workload: Workload | None = None, options: Any = None, on_progress: Any = None) -> Result | None:
    """The workers' target: open the case's GPUs in the ledger; an error row when one is held by another process."""
    if isinstance(case, ImportFrameworks):
        return None
    ledger, me = Path(os.environ[LEDGER_VARIABLE]), os.getpid()
    here, ranks = _opened(case)
    shared = [f"cuda:{gpu} held by {sorted(holders(ledger, gpu) - {me})}" for gpu in sorted(here) if holders(ledger, gpu) - {me}]
    shared += [f"cuda:{gpu} (a rank's) held by {sorted(holders(ledger, gpu))}" for gpu in sorted(ranks) if holders(ledger, gpu)]
    for gpu in here:
        (ledger / f"gpu{gpu}.{me}").touch()
    fields: dict[str, Any] = {"note": f"pid {me}"}
    status, reason = (ERROR, "; ".join(shared)) if shared else (OK, None)
    return Result(case.id, case.experiment, case.workload, case.backend, case.device, case.params, status, reason=reason, **fields)


class OnGpu(Workload):
    """A case the ledger runs (its process opens what the case's device and backend open)."""

    name = "on_gpu"
    summary = "opens its GPUs in the ledger"
    variants = ("run",)

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        raise AssertionError("the ledger's target runs the case, not the runner")


class Ranks(OnGpu):
    """A case measured by ranks in processes of their own, one GPU each (comm_overlap's shape)."""

    name = "ranks"
    params = (Param("ranks", INT, 2, "ranks, one GPU each", minimum=1),)
    across_processes = True
