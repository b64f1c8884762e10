"""The harness's own cost between a variant's issue and done clocks: a no-op timed as every variant is.

Every sample's done time ends after the backend's sync, called whether or
not anything is queued, and a clock read (timing.take_sample). On a
backend whose work is done when its call returns (NumPy), or whose sync
is itself work (JAX's barrier waits on a small product), that alone puts
done above issue: a no-op numpy step "ran ahead" 1.35× by it. `probe` times
a no-op with the backend's sync on the case's device, nothing queued, after
each of the conditions a sample meets (BUSY_S, IDLE_S), and `cached` does so
once per backend and device in a run, so that "ran ahead" (results.ahead)
counts only what lies beyond the costliest. Where the backend may end a
sample on its result (backends.handles.ResultWait), the no-op still returns
nothing, so it pays the sync: the costlier end, which any sample whose step
returns nothing of the backend's pays (a JAX step of no work read "ran
ahead" 4-10× against a probe of the cheaper end).
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Callable

from asyncbench.backends.handles import ResultWait
from asyncbench.measure.timing import Clock, take_sample
from asyncbench.results import stats
from asyncbench.results.model import HarnessCost

# The no-op samples per condition: enough for a 95% interval of their median gap (its 6th and 15th of 20), yet cheap.
NOOP_SAMPLES = 20
# The first sync may set up what later ones reuse (JAX compiles its barrier's product on first use): untimed.
NOOP_WARMUP = 2
# What ran just before a sync changes its cost: a thread pool that had time to sleep wakes slower. JAX's CPU sync with
# nothing queued measured 11 µs back to back, 30 µs after 0.1 ms of Python, 45-57 µs after 1 ms idle (80 µs after
# 5 ms), and a variant's samples come after other variants' Python, syncs and gc. So the no-op is probed back to
# back, after a busy spell and after an idle one, and the costliest is taken: about 25 ms per backend and device.
BUSY_S = 1e-4
IDLE_S = 1e-3
#: how many times a probe calls the sync: its warm-up, then its samples after each of the three conditions
SYNCS_PER_PROBE = NOOP_WARMUP + 3 * NOOP_SAMPLES

_measured: dict[tuple[str, str], HarnessCost] = {}


def _noop() -> None:
    """The work of the probe: none."""


def _spin(seconds: float, clock: Clock) -> None:
    """Keep this thread busy for `seconds`, as the harness's own Python between samples does."""
    end = clock() + seconds
    while clock() < end:
        pass


def _conditions(clock: Clock) -> tuple[Callable[[], None] | None, ...]:
    return None, lambda: _spin(BUSY_S, clock), lambda: time.sleep(IDLE_S)


def _upper(gaps: list[float]) -> float:
    """The upper end of the 95% interval of the gaps' median; without one (the samples drifted together), the upper
    quartile: still above the median, as a bound must be, without the one preempted sample a maximum would take."""
    interval = stats.median_ci(gaps)
    return interval[1] if interval is not None else statistics.quantiles(gaps, n=4)[2]


def probe(
    sync: Callable[[], None], clock: Clock = time.perf_counter, samples: int = NOOP_SAMPLES, result_wait: ResultWait | None = None
) -> HarnessCost:
    """A no-op's issue and done with `sync` (and `result_wait`) as the harness ends every sample, nothing queued:
    `samples` after each of the conditions, the costliest condition's figures kept. The no-op returns nothing of
    the backend's: it ends at the sync, never on a result (see the module's docstring)."""
    for _ in range(NOOP_WARMUP):
        take_sample(_noop, sync, None, clock, result_wait=result_wait)
    was_enabled = gc.isenabled()
    gc.disable()  # as measure() samples: a collection inside a sample is not the harness's cost
    taken: list[list[tuple[float, float, float | None]]] = []
    try:
        for before in _conditions(clock):
            series = []
            for _ in range(samples):
                if before is not None:
                    before()
                series.append(take_sample(_noop, sync, None, clock, result_wait=result_wait))
            taken.append(series)
    finally:
        if was_enabled:
            gc.enable()
    gaps = [[done - issue for issue, done, _ in series] for series in taken]
    costliest = max(gaps, key=_upper)
    return HarnessCost(
        sync_s=statistics.median(costliest),
        sync_high_s=_upper(costliest),
        issue_s=statistics.median(issue for series in taken for issue, _, _ in series),
        n=sum(len(series) for series in taken),
    )


def forget() -> None:
    """Measure afresh from now on: a new run probes again (a worker process starts empty; this one may not)."""
    _measured.clear()


def cached(backend: str, device: str, sync: Callable[[], None], result_wait: ResultWait | None = None) -> HarnessCost:
    """`probe` once per backend and device in this process (a worker runs many cases on the same ones)."""
    key = (backend, device)
    if key not in _measured:
        _measured[key] = probe(sync, result_wait=result_wait)
    return _measured[key]
