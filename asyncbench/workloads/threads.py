"""Thread pools whose workers all exist before anything is timed.

`ThreadPoolExecutor` starts a worker only when no idle one is left, so with
short tasks the second task of a "run these at once" batch may queue behind
the first on the same worker and nothing runs in parallel. Starting every
worker up front (each waits at a barrier until all exist) makes "together"
mean together, whatever the task size.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any, Callable

# Starting a thread takes microseconds; a pool that cannot start in this long is broken.
START_TIMEOUT_S = 30.0


def started_pool(
    workers: int, name: str, initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = ()
) -> concurrent.futures.ThreadPoolExecutor:
    """A pool of `workers` threads, every one of them started (and initialized) on return."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name, initializer=initializer, initargs=initargs)
    everyone = threading.Barrier(workers)
    started = [pool.submit(everyone.wait, START_TIMEOUT_S) for _ in range(workers)]
    for future in started:
        future.result()
    return pool
