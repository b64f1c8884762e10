"""Verification rounds (`run --bound --bound-verify`, issue 52): the captured step timed beside the plain one.

A verification round is an extra round (measure.extra_rounds, on the perturbation rounds' schedule): per variant, one
sample of the plain step and one of the captured step (the variant's loops with the user's step replaced by what
Backend.capture_step made of it), in a seeded random order, each timed as a timed sample is (its prelude, the host
clock, the run, the case's sync). The two samples of a round pair: the saving T0 − T_verify is read per round, so a
machine that drifts between rounds cancels out (verdicts.verified).
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable, Mapping, Sequence

from asyncbench.measure.extra_rounds import Preludes, Variants
from asyncbench.measure.perturbation import ORDER_SEED
from asyncbench.measure.timing import take_sample

#: a case's variants with the user's step replaced by another callable (Prepared.stepped)
Stepped = Callable[[Callable[[], Any]], Mapping[str, Callable[[], Any]]]


class Verifier:
    """The verification rounds of one case: `round` per round (an ExtraKind), `pairs` at the end."""

    def __init__(
        self,
        stepped: Stepped,
        captured: Callable[[], Any],
        steps_per_call: int = 1,
        clock: Callable[[], float] = time.perf_counter,
        seed: int = ORDER_SEED,
    ):
        self.captured = captured
        self.captured_variants = stepped(captured)
        self.steps_per_call, self.clock = steps_per_call, clock
        self._order = random.Random(seed)
        self._pairs: dict[str, list[tuple[float, float]]] = {}
        self._taken = 0

    @property
    def taken(self) -> int:
        """Verification rounds taken so far."""
        return self._taken

    def round(
        self, variants: Variants, sync: Callable[[], None], order: Sequence[str] | None = None, preludes: Preludes | None = None
    ) -> None:
        """One round: each variant's plain and captured sample, the two in a random order."""
        preludes = preludes or {}
        for name in list(order or variants):
            runs = {False: variants[name], True: self.captured_variants[name]}
            first = self._order.random() < 0.5
            times = {kind: self._sample(runs[kind], sync, preludes.get(name)) for kind in (first, not first)}
            self._pairs.setdefault(name, []).append((times[False], times[True]))
        self._taken += 1

    def _sample(self, run: Callable[[], Any], sync: Callable[[], None], prelude: Callable[[], None] | None) -> float:
        """One sample's done time per step, timed as a timed sample is (timing.take_sample)."""
        return take_sample(run, sync, None, self.clock, prelude)[1] / self.steps_per_call

    def finish(self) -> str | None:
        """The captured step's life ended, after the rounds: a capture that watches itself (torch.compile's,
        backends.compile_watch.CompiledStep: its warnings kept off the terminal until now) says here why its times
        are not the capture's (it hit dynamo's recompile limit and ran eagerly), and the rounds are refused; or None."""
        finish = getattr(self.captured, "finish", None)
        return finish() if callable(finish) else None

    def pairs(self) -> dict[str, tuple[tuple[float, float], ...]]:
        """Per variant, each round's (plain, captured) time per step."""
        return {name: tuple(pairs) for name, pairs in self._pairs.items()}
