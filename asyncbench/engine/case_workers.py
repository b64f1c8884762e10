"""The run's case workers: one process per interpreter and start-up environment, its frameworks imported early.

A case runs in a worker (engine.isolation) of its backend's interpreter and
start-up variables (MXNet's own Python, JAX's allocator setting), or in this
process with --in-process where the backend can. Each worker is started at
the beginning of the run and asked first to import its backends'
frameworks (ImportFrameworks), while this process plans the cases: planning
lists the devices (JAX in a child process of its own: 0.8 s on a 2-core
CPU), and a worker started only for the first case would begin its own
start and imports (JAX 1 s, torch 1.5 s) after that; the run's caller may
start them before it captures the environment (which imports torch in this
process too: 1.5 s). A case is handed to a worker only once its imports are
done, so nothing is measured beside them.

One CUDA context per GPU at a time: a process that measured on a GPU keeps
its context (and its framework's cached device memory) until it exits, and
under EXCLUSIVE_PROCESS compute mode a second process cannot open the GPU at
all. So the process of the run that last measured on a GPU is its holder,
and before a case on a GPU goes to another process the holder is retired
(closed; its next case starts a fresh one): torch, then JAX, then torch on
cuda:0 is three processes one after the other, never two at once. Which
GPUs a holder opened is not guessed (JAX's XLA opens every GPU it sees, a
multi_device partner another, a user's workload any): holding any, it is
retired before a GPU case of any other process. A CPU case's worker never
opens a GPU: a framework that would (JAX) starts it with its
`cpu_only_environment`, in a worker of its own. A case that measures
itself in other processes (comm_overlap's NCCL ranks) starts them from a
process that holds no context, a fresh one if need be. This process, with
--in-process, cannot be retired: a GPU case elsewhere then shares the GPU
with it, and where that GPU admits one process it is refused in one line.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from asyncbench.backends import Backend, cuda_devices, get_backend
from asyncbench.engine import isolation, thread_pools
from asyncbench.results.model import Case

Key = tuple[str | None, tuple[tuple[str, str], ...]]
#: the GPU holder that is this process (--in-process cases): it cannot be retired
HERE = None


class GpuTaken(Exception):
    """A GPU case cannot run in its process now: the one line says why (a GPU that admits one process, held here)."""


def uses_gpu(case: Case) -> bool:
    """Whether a case measures on a GPU: its device is one, or a param names one (multi_device's partner)."""
    return case.device.startswith("cuda") or any(isinstance(value, str) and value.startswith("cuda") for value in case.params.values())


def environment_for(backend: Backend, gpu: bool) -> dict[str, str]:
    """The variables a worker of `backend`'s cases starts with: the backend's own, and for CPU cases (`gpu` false)
    what keeps its framework off the GPUs (JAX_PLATFORMS=cpu for JAX: Backend.cpu_only_environment)."""
    return backend.worker_environment() if gpu else {**backend.worker_environment(), **backend.cpu_only_environment()}


def import_frameworks(backends: Sequence[str]) -> None:
    """Import these backends' frameworks; one that fails is left to its cases, which say why as a skip or an error."""
    for name in backends:
        with contextlib.suppress(Exception):
            importlib.import_module(get_backend(name).module)


@dataclass(frozen=True)
class ImportFrameworks:
    """A worker's first call: import these backends' frameworks (one that fails is left to its cases' rows), then
    collect and freeze what they made, as runner does after each case: the first case's collection then walks only
    its own objects, not torch's 170,000 (0.1 s), and this one overlaps the parent's work."""

    backends: tuple[str, ...]

    def __call__(self) -> None:
        import_frameworks(self.backends)
        thread_pools.apply(self.backends)  # `run --threads N`: torch.set_num_threads too (the variables sized the rest)
        gc.collect()
        gc.freeze()


class CaseWorkers:
    """The workers of one run, each calling `target` (which must answer an ImportFrameworks call with None)."""

    def __init__(
        self, target: Callable[..., Any], isolate: bool, compute_modes: Callable[[], Mapping[int, str]] = cuda_devices.compute_modes
    ):
        self._target = target
        self._isolate = isolate
        self._workers: dict[Key, isolation.Worker] = {}
        self._importing: set[Key] = set()  # workers whose ImportFrameworks call is not answered yet
        self._holders: dict[Key | None, int] = {}  # the processes that may hold a GPU context: key (HERE: this one) -> pid
        self._compute_modes = compute_modes  # asked only when a GPU would be shared

    def key(self, backend: Backend, gpu: bool = False) -> Key | None:
        """Which worker runs the backend's cases on a GPU (`gpu`) or a CPU; None: this process (--in-process, when
        the backend can)."""
        python, variables = backend.interpreter(), environment_for(backend, gpu)
        if not self._isolate and python is None and not variables:
            return None
        return (python, tuple(sorted(variables.items())))

    def start(self, backends: Iterable[tuple[str, Backend, bool]]) -> None:
        """Start a worker for each installed backend (name, backend, whether its cases are on a GPU) that needs one,
        importing its frameworks from now on. They are closed at exit if no one closed them (a spawned worker
        waiting for a call would hold up the exit)."""
        atexit.register(self.close)
        names: dict[Key, list[str]] = {}
        for name, backend, gpu in backends:
            key = self.key(backend, gpu)
            if key is not None and backend.unavailable_reason() is None and name not in names.get(key, []):
                names.setdefault(key, []).append(name)
        for key, these in names.items():
            worker = self._worker(key)
            with contextlib.suppress(isolation.WorkerLost):  # it could not start: the first case's call says why
                worker.send((ImportFrameworks(tuple(these)),))
                self._importing.add(key)

    def for_case(self, backend: Backend, case: Case, across_processes: bool, timeout_s: float) -> isolation.Worker | None:
        """The worker for the case, its imports done, after any other process holding a GPU was retired if the case
        uses one; None: run the case here. `across_processes`: the case measures itself in processes it starts
        (NCCL ranks), so its own process must hold no GPU either. Imports that take longer than the case may
        (`timeout_s`) end the worker, and the case's own call starts a fresh one. GpuTaken: the case cannot run now."""
        gpu = uses_gpu(case)
        key = self.key(backend, gpu)
        if gpu:
            self._hand_over(key, across_processes)
        if key is None:
            if gpu and not across_processes:
                self._holders[HERE] = os.getpid()
            return None
        worker = self._worker(key)
        if key in self._importing:
            self._importing.discard(key)
            with contextlib.suppress(isolation.WorkerLost):  # it was replaced: the case's call starts a fresh one
                worker.receive(timeout_s)
        if gpu and not across_processes:
            with contextlib.suppress(isolation.WorkerLost):  # it could not start: the case's call says why
                self._holders[key] = worker.start()
        return worker

    def _hand_over(self, key: Key | None, across_processes: bool) -> None:
        """Retire every process of the run that may hold a GPU context, but the one the case runs in (that one too
        when the case starts processes of its own on the GPUs); GpuTaken when one that cannot be retired (this
        process) holds a GPU that admits one process at a time."""
        for holder, pid in list(self._holders.items()):
            if holder == key and not across_processes:
                continue
            if holder is HERE:
                shared = sorted(i for i, mode in self._compute_modes().items() if mode in cuda_devices.ONE_PROCESS)
                if shared:
                    raise GpuTaken(
                        f"cuda:{shared[0]} admits one process at a time (compute mode EXCLUSIVE_PROCESS) and asyncbench's own "
                        "process holds the GPUs since a case ran there with --in-process; this case runs in another process: "
                        "run without --in-process"
                    )
                continue  # a GPU in default mode is shared: --in-process keeps this process's context
            worker = self._workers[holder]
            if worker.pid == pid:  # the same process that measured on a GPU (not a fresh one started since)
                worker.close()
            del self._holders[holder]

    def _worker(self, key: Key) -> isolation.Worker:
        if key not in self._workers:
            self._workers[key] = isolation.Worker(self._target, key[0], dict(key[1]))
        return self._workers[key]

    def close(self) -> None:
        atexit.unregister(self.close)
        for worker in self._workers.values():
            worker.close()
