"""Calls in a worker process: a hang ends at its timeout, a crash costs only that call.

Why cases run in a worker: a case that hangs in native code (a deadlocked
collective, a driver stuck on a kernel) cannot be stopped from Python in the
same process; one that dies (a segfault, the kernel's out-of-memory killer)
would take the run and its unsaved results with it; and a CUDA error such as
an illegal memory access poisons the context until the process exits, so
every later GPU case in that process would fail too. pyperf and asv run
benchmarks in worker processes for the same reasons.

One spawned worker serves calls one after another, so its imports (torch:
1-2 s) are paid once, not per call; the caller replaces it (`close`, then the
next `call` starts a fresh one) whenever a call went wrong. The worker
ignores SIGINT (Ctrl-C reaches the whole process group; the parent decides),
turns SIGTERM into SystemExit so its own `finally` blocks (comm_overlap's
ranks) run, and exits on its own if the parent disappears.

A worker can also run under another Python (MXNet's own environment) or
with environment variables a framework reads at import: then it is started
as `python -m asyncbench.engine.isolation` with one end of a socket pair, not by
multiprocessing — whose spawned children take the parent's sys.path, and
with it the parent's numpy. Calls and results are plain data either way.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Callable, Mapping

from asyncbench.errors import describe_failure
from asyncbench.host import processes

# How often a worker may send progress: often enough for a live display,
# rarely enough that the pipe costs nothing next to the samples.
PROGRESS_INTERVAL_S = 0.1
# How long an idle worker gets to exit on its own when the run is over.
EXIT_GRACE_S = 5.0


class WorkerLost(RuntimeError):
    """A call gave no result: it timed out or the worker died; the message says which.

    `last_progress` is the last progress the call reported (None: none), so
    the caller can say how far it got.
    """

    def __init__(self, message: str, last_progress: Any = None):
        super().__init__(message)
        self.last_progress = last_progress


class _ProgressSender:
    """The worker's on_progress: forwards to the parent at most every PROGRESS_INTERVAL_S."""

    def __init__(self, channel: Any):
        self._channel = channel
        self._sent_at = -PROGRESS_INTERVAL_S

    def __call__(self, progress: Any) -> None:
        now = time.monotonic()
        if now - self._sent_at >= PROGRESS_INTERVAL_S:
            processes.send_or_exit(self._channel, ("progress", progress))
            self._sent_at = now


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """The first SIGTERM ends the worker through its `finally` blocks; a second one (a group-wide signal, then the
    parent's teardown) would land in the interpreter's own shutdown and print a traceback: ignored, as the
    parent kills a worker that does not exit in time."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def _exit_when_told() -> None:
    """End the worker the parent told to stop: its exit handlers run (a temporary folder's removal, a pool's
    children joined) and its streams are flushed, and the interpreter's teardown of every module is skipped. That
    teardown is what ends a process slowly: 0.4-0.6 s of a core for one that imported torch, 0.02-0.04 s this
    way (measured on 2 cores), and `ab` ends a pair of them every block, beside the next pair's imports."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _serve(target: Callable[..., Any], channel: Any, parent: int) -> None:
    """The worker's life: for each args tuple received, send ("result", target(*args)) or ("error", message)."""
    processes.in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    processes.watch_parent(parent)
    while True:
        try:
            args = channel.recv()
        except EOFError:  # the parent closed its end
            return
        if args is None:
            _exit_when_told()
        try:
            processes.send_or_exit(channel, ("result", target(*args, on_progress=_ProgressSender(channel))))
        except Exception as exc:  # noqa: BLE001 - target's own failures are its business; this is e.g. a result that cannot be pickled
            processes.send_or_exit(channel, ("error", describe_failure(exc)))


class _Child:
    """A subprocess seen through the few methods of multiprocessing.Process that workers and teardown use."""

    def __init__(self, popen: subprocess.Popen):
        self._popen = popen
        self.pid = popen.pid

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()  # negative for a signal, as multiprocessing's

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._popen.terminate()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._popen.kill()


class Worker:
    """A process that runs `target(*args, on_progress=...)` for each `call`, with a timeout.

    `target` must be importable (a module-level function); args and results
    must be picklable (and plain data when `python` is another interpreter).
    `python` and `environment` start the worker under another Python or
    with extra environment variables.
    """

    def __init__(self, target: Callable[..., Any], python: str | None = None, environment: Mapping[str, str] | None = None):
        self._target = target
        self._python = python
        self._environment = dict(environment or {})
        self._process: Any = None
        self._channel: Any = None
        self._busy = False
        self._paused = False
        self._asked_to_exit = False

    def call(self, args: tuple[Any, ...], timeout_s: float, on_progress: Callable[[Any], None] | None = None) -> Any:
        """`target(*args)` in the worker; raises WorkerLost when it takes over timeout_s or the worker dies."""
        self.send(args)
        return self.receive(timeout_s, on_progress)

    def ready(self) -> bool:
        """Whether the call handed over with `send` has its answer waiting (a worker starting up in the background)."""
        return self._channel is not None and self._channel.poll(0)

    @property
    def pid(self) -> int | None:
        """The worker's process while it runs (None: none yet, or closed)."""
        return self._process.pid if self._process is not None and self._process.is_alive() else None

    def start(self) -> int:
        """Start the worker's process if none runs (a dead one is cleaned up first); its pid. WorkerLost if it cannot."""
        if self._process is None or not self._process.is_alive():
            self.close()
            self._start()
        return int(self._process.pid)

    def send(self, args: tuple[Any, ...]) -> None:
        """Hand `target(*args)` to the worker (started first if need be) without waiting: `receive` gets its answer."""
        self.start()
        self.resume()
        self._busy = True  # from here on, closing terminates: an interrupt may come while the worker already runs the call
        try:
            self._channel.send(args)
        except Exception as exc:  # noqa: BLE001 - unpicklable args, or a pipe that broke under us
            self.close()
            raise WorkerLost(f"could not hand the call to the worker process: {describe_failure(exc)}") from None

    def receive(self, timeout_s: float, on_progress: Callable[[Any], None] | None = None) -> Any:
        """The answer to the call handed over with `send`; WorkerLost when it takes over timeout_s or the worker dies."""
        deadline = time.monotonic() + timeout_s
        last_progress = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise WorkerLost(f"timed out after {timeout_s:g} s (timeout_s); the worker process was killed", last_progress)
            if not self._channel.poll(min(remaining, processes.WAIT_POLL_S)):
                continue
            try:
                kind, payload = self._channel.recv()
            except (EOFError, ConnectionResetError):  # an exit with our call unread resets the connection
                raise self._died(last_progress) from None
            if kind == "progress":
                last_progress = payload
                if on_progress is not None:
                    on_progress(payload)
                continue
            self._busy = False
            if kind == "error":
                self.close()
                raise WorkerLost(payload, last_progress)
            return payload

    def pause(self) -> None:
        """Freeze the whole worker (SIGSTOP) between calls: a stopped process cannot spin a thread pool, collect
        garbage or run an engine thread while another process measures. Its state stays as it is."""
        if self._process is not None and self._process.is_alive() and not self._paused:
            os.kill(self._process.pid, signal.SIGSTOP)
            self._paused = True

    def resume(self) -> None:
        """Let a paused worker run again (SIGCONT); `call` and `close` resume it first themselves."""
        if self._process is not None and self._paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._process.pid, signal.SIGCONT)
        self._paused = False

    def ask_to_exit(self) -> None:
        """The first half of `close`, which does not wait: an idle worker is asked to exit (a busy one is left for
        `close` to terminate), so its exit runs while the caller goes on; `close` then waits for it."""
        if self._process is None or self._asked_to_exit:
            return
        self.resume()  # a stopped process would hold a SIGTERM, or the request, until continued
        if not self._busy and self._process.is_alive():
            with contextlib.suppress(OSError):
                self._channel.send(None)
            self._asked_to_exit = True

    def close(self) -> None:
        """Stop the worker: an idle one is asked to exit, a busy one terminated, then killed; always joined."""
        if self._process is None:
            return
        self.ask_to_exit()
        if self._asked_to_exit:
            self._process.join(EXIT_GRACE_S)
        processes.teardown([self._process])
        self._channel.close()
        self._process = self._channel = None
        self._busy = self._asked_to_exit = False

    def _start(self) -> None:
        if self._python is not None or self._environment:
            self._start_python()
            return
        parent_end, child_end = processes.SPAWN.Pipe(duplex=True)
        # not a daemon: daemonic processes may not start children, and comm_overlap's ranks are children
        process = processes.SPAWN.Process(
            target=_serve, args=(self._target, child_end, os.getpid()), name="asyncbench-worker", daemon=False
        )
        try:
            process.start()
        except OSError as exc:
            parent_end.close()
            raise WorkerLost(f"could not start a worker process: {exc}") from None
        finally:
            child_end.close()
        self._process, self._channel = process, parent_end

    def _start_python(self) -> None:
        """`python -m asyncbench.engine.isolation` with one end of a socket pair: another interpreter, or extra variables."""
        parent_end, child_end = socket.socketpair()
        target = f"{self._target.__module__}:{self._target.__qualname__}"
        command = [self._python or sys.executable, "-m", "asyncbench.engine.isolation", str(child_end.fileno()), str(os.getpid()), target]
        try:
            popen = subprocess.Popen(command, pass_fds=[child_end.fileno()], env={**os.environ, **self._environment})
        except OSError as exc:
            parent_end.close()
            raise WorkerLost(f"could not start a worker process ({command[0]}): {exc.strerror or exc}") from None
        finally:
            child_end.close()
        self._process, self._channel = _Child(popen), multiprocessing.connection.Connection(parent_end.detach())

    def _died(self, last_progress: Any) -> WorkerLost:
        self._process.join(processes.TERMINATE_GRACE_S)
        how = processes.describe_exit(self._process.exitcode)
        self._busy = False
        self.close()
        return WorkerLost(f"the worker process died ({how})", last_progress)


def _main(argv: list[str]) -> None:
    """The worker under another Python: serve calls on the inherited socket until the parent says stop."""
    descriptor, parent, target = int(argv[0]), int(argv[1]), argv[2]
    module, _, name = target.partition(":")
    function = getattr(importlib.import_module(module), name)
    _serve(function, multiprocessing.connection.Connection(descriptor), parent)


if __name__ == "__main__":
    _main(sys.argv[1:])
