"""The one owner of extra rounds (measure.extra_rounds): which follow each timed round, and how many are owed after the last."""

from __future__ import annotations

from typing import Any

from asyncbench.measure import census
from asyncbench.measure.extra_rounds import ExtraRounds, Schedule
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure
from asyncbench.results.model import Settings


class Counting:
    """A kind of extra round that only counts the rounds it took."""

    def __init__(self) -> None:
        self.taken = 0

    def round(self, variants: Any, sync: Any, order: Any = None, preludes: Any = None) -> None:
        self.taken += 1


def take(side: ExtraRounds, timed_rounds: int) -> list[list[int]]:
    """Each timed round's extra rounds, taken as measure takes them: per kind, the timed rounds one followed."""
    followed: list[list[int]] = [[] for _ in side.kinds]
    for timed in range(1, timed_rounds + 1):
        for kind in side.after(timed):
            kind.round({}, lambda: None)
            followed[[k for k, _ in side.kinds].index(kind)].append(timed)
    return followed


def test_the_census_follows_each_of_the_first_six_timed_rounds_then_every_fifth():
    kind = Counting()
    side = ExtraRounds(((kind, census.SCHEDULE),))
    assert take(side, 16) == [[1, 2, 3, 4, 5, 6, 10, 15]]
    assert kind.taken == 8
    assert side.owed() == ()  # it has its six and more: nothing owed


def test_a_case_stopped_early_is_owed_the_rest_once():
    kind = Counting()
    side = ExtraRounds(((kind, census.SCHEDULE),))
    take(side, 2)
    assert side.owed() == ((kind, census.CENSUS_ROUNDS - 2),)
    for _ in range(census.CENSUS_ROUNDS - 2):
        kind.round({}, lambda: None)
    assert side.owed() == ()  # what was taken is counted once: by the kind, never again by the owner


def test_census_checks_raise_what_is_owed_not_what_follows_each_timed_round():
    kind = Counting()
    side = ExtraRounds(((kind, census.SCHEDULE.at_least(9)),))
    assert take(side, 12) == [[1, 2, 3, 4, 5, 6, 10]]
    assert side.owed() == ((kind, 2),)


def test_each_kind_keeps_its_own_schedule():
    census_kind, other = Counting(), Counting()
    side = ExtraRounds(((census_kind, census.SCHEDULE), (other, Schedule(first=2, every=3))))
    assert take(side, 7) == [[1, 2, 3, 4, 5, 6], [1, 2, 3, 6]]
    assert side.owed() == ()


def test_measure_takes_each_extra_round_once():
    kind = Counting()
    settings = Settings(warmup=0, min_samples=3, max_samples=3, max_time_s=1e9, max_rel_noise=1.0)
    measure({"a": lambda: None}, lambda: None, lambda: None, Procedure(settings, extra_rounds=ExtraRounds(((kind, census.SCHEDULE),))))
    assert kind.taken == census.CENSUS_ROUNDS  # 3 after the timed rounds, 3 owed after the last: never more
