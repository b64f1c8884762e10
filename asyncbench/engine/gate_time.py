"""A gate's time, given to its cases by how far each is from a decision (`asyncbench ab`'s one time budget).

A fixed time per case wastes a gate's minutes twice over: a fast case that
decides in 4 s leaves its share unused, and a noisy one stops undecided
although the gate has time. Cases here are measured in independent blocks
(engine.paired), so a case can stop and go on later without harm: each
first gets an even share of what is left, and then the time left goes to
the undecided case nearest to a decision, by the time its blocks' spread
says it needs.
"""

from __future__ import annotations

import time
from typing import Callable

from asyncbench.engine.paired import Pairing
from asyncbench.results.paired import PairedCase

# A case undecided after its first share gets more time only if at least this much is left: a slice shorter than
# a block or two decides nothing.
MIN_SLICE_S = 2.0


def gate(pairings: list[Pairing], budget_s: float, on_case: Callable[[int, Pairing], None] | None = None) -> list[PairedCase]:
    """Give a gate's time to its cases by how far each is from a decision, and return their rows in order.

    First each case in turn gets an even share of what is left (a case that decides early leaves its rest to the
    ones after it); then, while time is left, the undecided case nearest to a decision (by the time its blocks'
    spread says it needs) gets the rest, and so on. Each case's last look is taken at the end."""
    started = time.perf_counter()
    for index, pairing in enumerate(pairings):
        if on_case is not None:
            on_case(index, pairing)
        remaining = budget_s - (time.perf_counter() - started)
        pairing.advance(time.perf_counter() + remaining / (len(pairings) - index))
    while True:
        remaining = budget_s - (time.perf_counter() - started)
        undecided = [p for p in pairings if p.open]
        if not undecided or remaining < MIN_SLICE_S:
            break
        nearest = min(undecided, key=Pairing.seconds_needed)
        if on_case is not None:
            on_case(pairings.index(nearest), nearest)
        nearest.advance(time.perf_counter() + remaining)
    return [pairing.finish() for pairing in pairings]
