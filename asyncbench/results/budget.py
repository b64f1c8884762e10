"""The error budget of a gate: one family-wise false-alarm rate, split over its verdicts and over its looks.

A gate states many verdicts (every `expect:` check of a run, every variant
and metric of an `ab` run, every row of a `compare`), and each of them is
looked at more than once while sampling goes on until it is decided. Both
multiply the chances of a false alarm: a check whose truth sits exactly on
its threshold, looked at after every round with plain 95% intervals, is
called wrong several times more often than 5%, and more so the longer it
samples (docs/measured.md, "Sequential stopping", has the figures and the
command that measures them).

So the run's family-wise rate (FAMILY_ERROR, 1% unless the user says
otherwise) is split with Bonferroni's inequality twice: evenly over the
verdicts, and each verdict's share evenly over a fixed geometric schedule
of looks (rounds min_samples, ×LOOK_GROWTH, ... up to max_samples, plus
one final look when time runs out between two). A verdict is only taken at
a look, from an interval at its look's confidence. Whatever the stopping
rule then does, the chance that any verdict of the run is wrong is at most
the family rate: this is alpha spending over a fixed schedule of looks
(Lan & DeMets 1983) in its simplest, conservative form. It was chosen over
a confidence sequence (Howard et al. 2021) because the libraries that
offer one either need a C++/Boost build (confseq) or bound means, not the
medians every figure here is.
Holm's step-down would be less conservative across verdicts, but it orders
p-values, and these verdicts come from intervals.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from asyncbench.results import units

# The default family-wise false-alarm rate of a gate: a CI gate that fails on unchanged code once in a hundred runs
# is noticed; one that fails once in twenty (5% per verdict, many verdicts) is switched off.
FAMILY_ERROR = 0.01
# Looks at rounds n, ⌈1.5n⌉, ...: each look has half again as many rounds, so the number of looks, and with it
# the share of the budget each one gets, grows only with the logarithm of the rounds.
LOOK_GROWTH = 1.5


@functools.lru_cache(maxsize=256)
def schedule(first: int, last: int) -> tuple[int, ...]:
    """The rounds at which verdicts are looked at: first, ⌈first·1.5⌉, ... while ≤ last."""
    looks = [max(first, 1)]
    while looks[-1] < last:
        looks.append(min(max(math.ceil(looks[-1] * LOOK_GROWTH), looks[-1] + 1), last))
    return tuple(looks)


@dataclass(frozen=True)
class Budget:
    """A family-wise false-alarm rate shared by `verdicts` verdicts, each looked at on `schedule(first, last)`."""

    family_error: float
    verdicts: int
    first: int
    last: int

    @property
    def looks(self) -> int:
        """How many looks each verdict may take: the schedule's, and one more when time runs out between two."""
        return len(schedule(self.first, self.last)) + 1

    def per_verdict(self) -> float:
        return self.family_error / max(self.verdicts, 1)

    def per_look(self, share: int = 1) -> float:
        """The error rate of one look at one verdict (of a verdict that is the worst of `share` intervals: each)."""
        return self.per_verdict() / self.looks / max(share, 1)

    def confidence(self, share: int = 1) -> float:
        """The confidence of each interval a look judges from."""
        return 1 - self.per_look(share)

    def describe(self) -> str:
        """'a 1% family-wise false-alarm rate, split over 6 verdicts and up to 14 looks each (Bonferroni): ...'"""
        verdicts = f"{self.verdicts} verdict{'' if self.verdicts == 1 else 's'}"
        return (
            f"a {units.percent(self.family_error)} family-wise false-alarm rate, split over {verdicts} and up to "
            f"{self.looks} looks each (Bonferroni): each look judged from an interval with a {units.chance(self.per_look())} "
            "chance of missing"
        )


def rounds_for_median(confidence: float) -> int:
    """The fewest rounds whose median has an order-statistic interval at `confidence` (stats.order_rank): the
    widest one, [min, max] of n values, misses the median with probability 2·½ⁿ. Fewer rounds can decide no
    check judged at that level, however clear the case; sampling takes at least these (checks.enough_rounds)."""
    rounds = 1
    while 2 * 0.5**rounds > 1 - confidence:
        rounds += 1
    return rounds
