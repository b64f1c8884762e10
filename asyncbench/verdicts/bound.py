"""What bounds a step, from its perturbation rounds: each side's slack and cost past it, with intervals, and the
reading (`run --bound`; the observations and the types are results.bound's).

The fit per side: T(d) = a + b·max(0, d − s) over the injected lengths d, rounds as the paired unit (each round's
unperturbed sample is its own a, so drift between rounds cancels); intervals by a bootstrap over rounds.
"""

from __future__ import annotations

from typing import Sequence

from asyncbench.results import stats
from asyncbench.results.bound import Bound, Perturbed


def fit(variant: str, observations: Sequence[Perturbed], asynchronous: bool, confidence: float = stats.CONFIDENCE, note: str | None = None) -> Bound:
    """The bound of one variant from its perturbation rounds' samples. A synchronous backend (`asynchronous`
    False) gets BoundKind.SYNCHRONOUS and no sides; `note` says what could not be measured (a side without a
    delay on this backend)."""
    raise NotImplementedError("issue 52: the fit")
