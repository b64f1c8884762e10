"""measure()'s garbage collection: never inside a sample, and between rounds only as often as Python itself would have
collected (its generation-0 count past the threshold), not after every round. A collection after every round freed,
each time, the few arrays an MXNet step leaves in reference cycles: each free is an engine op, and the next sample
waited behind them (+7% on a 20-step sample of `x + 1`, where the same loop without the harness collects once in
about 35 samples; benchmarks/fidelity_backends.py)."""

from __future__ import annotations

import gc
from typing import Any, Iterator

import pytest

from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure
from asyncbench.results.model import Settings

THRESHOLD = 700
ROUNDS = 40


class _Cycle:
    """An object in a reference cycle with itself: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


class Collections:
    """Each generation-0 collection while a test runs, as 'in sample' or 'between' (`sampling`: a sample is running)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.sampling = False

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 0:
            self.seen.append("in sample" if self.sampling else "between")

    def variant(self, garbage: int) -> Any:
        """A variant that leaves `garbage` cyclic objects a call."""

        def run() -> None:
            self.sampling = True
            for _ in range(garbage):
                _Cycle()
            self.sampling = False

        return run


@pytest.fixture
def collections() -> Iterator[Collections]:
    """The collector enabled with Python's default threshold, as in a user's process, and its collections watched."""
    watched = Collections()
    was = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(THRESHOLD, 10, 10)
    gc.enable()
    gc.collect()
    gc.callbacks.append(watched.callback)
    try:
        yield watched
    finally:
        gc.callbacks.remove(watched.callback)
        gc.set_threshold(*was[0])
        if not was[1]:
            gc.disable()


def _measure(run: Any) -> None:
    measure({"v": run}, lambda: None, lambda: None, Procedure(Settings(warmup=0, min_samples=ROUNDS, max_samples=ROUNDS)))


def test_a_little_garbage_is_not_collected_after_every_round(collections: Collections) -> None:
    """10 cyclic objects a round, 400 in all: Python would not have collected yet (threshold 700), nor does measure()."""
    _measure(collections.variant(10))
    assert collections.seen == []


def test_garbage_past_the_threshold_is_collected_between_rounds_never_inside_a_sample(collections: Collections) -> None:
    """100 cyclic objects a round, 4,000 in all: collected about as often as Python would (every 7 rounds), between them."""
    _measure(collections.variant(100))
    assert set(collections.seen) == {"between"}
    assert ROUNDS * 100 // THRESHOLD - 1 <= len(collections.seen) <= ROUNDS * 100 // THRESHOLD + 1
