"""Extra rounds: the untimed rounds a case takes beside its timed ones, and the one place that says when.

A extra round runs each variant once, never inside a timed sample, for something other than the case's times: a
census round (`run --syncs`, measure.census: the step with its blocking calls wrapped) and, from issue 52, a
perturbation round (`run --bound`: the step with a delay injected before it). Each kind keeps its own count of the
rounds it took (`ExtraKind.taken`) and comes with a `Schedule`; `ExtraRounds` holds a case's kinds and answers the two
questions timing.measure asks: after each timed round, which extra rounds follow (`after`), and after the last, how
many more each kind is owed (`owed`). A new kind of extra round is one more (kind, schedule) pair here, not one more
place that counts rounds. `ab --syncs` takes a census's rounds all at once, in its sides' processes: as many as
`Schedule.owed` says a kind with none taken is owed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Protocol, Sequence

#: a case's variants as a round runs them, by name (workloads.base.Prepared.variants); the kinds of extra round share it
Variants = Mapping[str, Callable[[], Any]]
#: per variant, the untimed work issued before each of its runs (workloads.base.Prepared.preludes)
Preludes = Mapping[str, Callable[[], None]]


@dataclass(frozen=True)
class Schedule:
    """When a kind's extra rounds come: one after each timed round while fewer than `first` are taken (a case stopped
    at its min_samples then has them), then one after every `every`-th timed round; by the end at least `least`
    (never fewer than `first`: a case that stopped sooner is topped up after its last timed round)."""

    first: int
    every: int
    least: int = 0

    def due(self, timed_rounds: int, taken: int) -> bool:
        """Whether an extra round follows timed round `timed_rounds` (counted from 1), `taken` taken so far."""
        return taken < self.first or timed_rounds % self.every == 0

    def at_least(self, rounds: int) -> Schedule:
        """This schedule with at least `rounds` extra rounds by the end (a census check's interval needs them:
        verdicts.checks.census_rounds_needed)."""
        return replace(self, least=max(self.least, rounds))

    def owed(self, taken: int) -> int:
        """The extra rounds still owed after the last timed round, `taken` taken so far."""
        return max(max(self.first, self.least) - taken, 0)


class Pace(Protocol):
    """When a kind's extra rounds come: a Schedule, or a kind that paces itself (measure.perturbation.Taker stops once
    its intervals are narrow enough)."""

    def due(self, timed_rounds: int, taken: int) -> bool:
        """Whether an extra round follows timed round `timed_rounds` (counted from 1), `taken` taken so far."""
        ...

    def owed(self, taken: int) -> int:
        """The extra rounds still owed after the last timed round, `taken` taken so far (asked again after each)."""
        ...


class ExtraKind(Protocol):
    """One kind of extra round, as measure runs it (census.Taker is one)."""

    @property
    def taken(self) -> int:
        """Extra rounds of this kind taken so far."""
        ...

    def round(
        self, variants: Variants, sync: Callable[[], None], order: Sequence[str] | None = None, preludes: Preludes | None = None
    ) -> None:
        """One extra round: each variant (in `order`) once, with its prelude, then the case's `sync`."""
        ...


@dataclass(frozen=True)
class ExtraRounds:
    """A case's kinds of extra round, each with its schedule. It counts nothing itself: each kind says how many it took."""

    kinds: tuple[tuple[ExtraKind, Pace], ...] = ()

    def after(self, timed_rounds: int) -> tuple[ExtraKind, ...]:
        """The kinds whose extra round follows timed round `timed_rounds` (counted from 1)."""
        return tuple(kind for kind, schedule in self.kinds if schedule.due(timed_rounds, kind.taken))

    def owed(self) -> tuple[tuple[ExtraKind, int], ...]:
        """After the last timed round: each kind with the extra rounds it is still owed (those owed none left out).
        Asked again after each round taken: a kind that paces itself may owe one more."""
        return tuple((kind, owed) for kind, schedule in self.kinds if (owed := schedule.owed(kind.taken)))
