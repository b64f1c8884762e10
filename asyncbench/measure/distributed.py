"""Run one function on several ranks: spawned worker processes, or the processes torchrun started.

`launch` spawns `world_size` processes (spawn, never fork: a forked child
would inherit the parent's framework state and threads) that meet on a free
loopback port, and returns every rank's result — or raises `RankError` with
the failing rank's message when one raises, dies or stays silent past the
timeout. Whatever happens, including Ctrl-C in the parent, every worker is
terminated, then killed, and joined before `launch` returns: no process is
left behind. Workers ignore SIGINT (the parent decides) and exit on their own
if the parent disappears.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import time
from multiprocessing.connection import Connection
from typing import Any, Callable, cast

from asyncbench.errors import describe_failure
from asyncbench.host import processes

LOOPBACK = "127.0.0.1"
# After the first rank fails, how long to wait for the others' messages (they say what followed).
FAILURE_GRACE_S = 1.0
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
# free_port finds a port nothing listens on, but another process may take it before rank 0 binds it: the ranks
# then fail with "address already in use", and a new port is tried, this many times in all.
PORT_ATTEMPTS = 3
PORT_TAKEN = ("address already in use", "eaddrinuse", "errno: 98")


class RankError(RuntimeError):
    """A rank failed, died or timed out; the message says which and why."""


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def torchrun_rank() -> tuple[int, int] | None:
    """(rank, world_size) when this process was started by torchrun (or any env:// launcher), else None."""
    if not all(name in os.environ for name in TORCHRUN_VARIABLES):
        return None
    try:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except ValueError:
        return None


def _rank_entry(
    target: Callable[..., Any], rank: int, world_size: int, init_method: str, args: tuple[Any, ...], channel: Any, parent: int
) -> None:
    """A worker's life: run target, send ("ok", result) or ("error", message) to the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    processes.watch_parent(parent)
    try:
        result = target(rank, world_size, init_method, *args)
        processes.send_or_exit(channel, ("ok", result))
    except BaseException as exc:  # noqa: BLE001 - everything a rank can raise becomes its message
        processes.send_or_exit(channel, ("error", describe_failure(exc)))
    finally:
        channel.close()


def launch(target: Callable[..., Any], world_size: int, args: tuple[Any, ...], timeout_s: float) -> list[Any]:
    """Run `target(rank, world_size, init_method, *args)` on `world_size` spawned ranks; their results by rank.

    `target` must be importable (a module-level function) and its results
    picklable. Raises RankError naming the first rank that failed or the
    ranks that were still silent at `timeout_s`. A port lost to another
    process before the ranks bound it is replaced (PORT_ATTEMPTS).
    """
    for attempt in range(1, PORT_ATTEMPTS + 1):
        try:
            return _launch_once(target, world_size, args, timeout_s, f"tcp://{LOOPBACK}:{free_port()}")
        except RankError as exc:
            if attempt == PORT_ATTEMPTS or not any(words in str(exc).lower() for words in PORT_TAKEN):
                raise
    raise AssertionError("unreachable")


def _launch_once(target: Callable[..., Any], world_size: int, args: tuple[Any, ...], timeout_s: float, init_method: str) -> list[Any]:
    workers, channels = [], {}
    try:
        for rank in range(world_size):
            receiver, sender = processes.SPAWN.Pipe(duplex=False)
            process = processes.SPAWN.Process(
                target=_rank_entry,
                args=(target, rank, world_size, init_method, args, sender, os.getpid()),
                name=f"asyncbench-rank{rank}",
                daemon=True,
            )
            process.start()
            sender.close()
            workers.append(process)
            channels[receiver] = rank
        results: dict[int, Any] = {}
        failures: list[str] = []
        deadline = time.monotonic() + timeout_s
        while channels:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if failures:
                    break
                silent = ", ".join(map(str, sorted(channels.values())))
                raise RankError(f"timed out after {timeout_s:g} s: no result from rank(s) {silent}")
            for ready in multiprocessing.connection.wait(list(channels), timeout=min(remaining, processes.WAIT_POLL_S)):
                receiver = cast(Connection, ready)
                rank = channels.pop(receiver)
                try:
                    status, payload = receiver.recv()
                except EOFError:
                    workers[rank].join(processes.TERMINATE_GRACE_S)
                    status, payload = "died", f"died without a result ({processes.describe_exit(workers[rank].exitcode)})"
                if status == "ok":
                    results[rank] = payload
                    continue
                failures.append(f"rank {rank} {payload}" if status == "died" else f"rank {rank} failed: {payload}")
                # the other ranks usually fail too, as a consequence: collect them briefly, root cause first
                deadline = min(deadline, time.monotonic() + FAILURE_GRACE_S)
        if failures:
            raise RankError("; ".join(failures))
        return [results[rank] for rank in range(world_size)]
    finally:
        for receiver in channels:
            receiver.close()
        processes.teardown(workers)
