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
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from asyncbench.backends import Backend, get_backend
from asyncbench.engine import isolation

Key = tuple[str | None, tuple[tuple[str, str], ...]]


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
        gc.collect()
        gc.freeze()


class CaseWorkers:
    """The workers of one run, each calling `target` (which must answer an ImportFrameworks call with None)."""

    def __init__(self, target: Callable[..., Any], isolate: bool):
        self._target = target
        self._isolate = isolate
        self._workers: dict[Key, isolation.Worker] = {}
        self._importing: set[Key] = set()  # workers whose ImportFrameworks call is not answered yet

    def key(self, backend: Backend) -> Key | None:
        """Which worker runs the backend's cases; None: this process (--in-process, when the backend can)."""
        python, variables = backend.interpreter(), backend.worker_environment()
        if not self._isolate and python is None and not variables:
            return None
        return (python, tuple(sorted(variables.items())))

    def start(self, backends: Mapping[str, Backend]) -> None:
        """Start a worker for each installed backend that needs one, importing its frameworks from now on. They are
        closed at exit if no one closed them (a spawned worker waiting for a call would hold up the exit)."""
        atexit.register(self.close)
        names: dict[Key, list[str]] = {}
        for name, backend in backends.items():
            key = self.key(backend)
            if key is not None and backend.unavailable_reason() is None:
                names.setdefault(key, []).append(name)
        for key, these in names.items():
            worker = self._worker(key)
            with contextlib.suppress(isolation.WorkerLost):  # it could not start: the first case's call says why
                worker.send((ImportFrameworks(tuple(these)),))
                self._importing.add(key)

    def for_backend(self, backend: Backend, timeout_s: float) -> isolation.Worker | None:
        """The worker for the backend's next case, its imports done; None: run the case here. Imports that take
        longer than the case may (`timeout_s`) end the worker, and the case's own call starts a fresh one."""
        key = self.key(backend)
        if key is None:
            return None
        worker = self._worker(key)
        if key in self._importing:
            self._importing.discard(key)
            with contextlib.suppress(isolation.WorkerLost):  # it was replaced: the case's call starts a fresh one
                worker.receive(timeout_s)
        return worker

    def _worker(self, key: Key) -> isolation.Worker:
        if key not in self._workers:
            self._workers[key] = isolation.Worker(self._target, key[0], dict(key[1]))
        return self._workers[key]

    def close(self) -> None:
        atexit.unregister(self.close)
        for worker in self._workers.values():
            worker.close()
