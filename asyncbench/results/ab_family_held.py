"""An `ab` file's `family_error` held to its cases' `confidence`: the rate their intervals were split from.

`ab` splits its family-wise false-alarm rate evenly over the cases it pairs (session.paired: each case that ran on
both sides, errored ones too), then each case's share over its verdicts and its looks (results.blocks.BlockBudget),
and stores each case's interval level as `confidence`. The rate is said under the table and in the pull-request
comment ("A 1% family-wise false-alarm rate…"): a file edited to 50% beside intervals at 98% claimed a rate its
intervals never had. So a case's level must be one that its share of the file's rate gives over its verdicts and one
a whole number of looks no more than a schedule can have (the schedule's blocks are not stored). An interrupted
run stores only the cases it looked at, so there the count it split over is unknown: its level must still be the
rate over a whole number of case-looks, at least the cases stored.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from asyncbench.results import blocks, fields, units
from asyncbench.results.fields import At
from asyncbench.results.paired import PairedCase

# How near a count worked back from a stored level must be to a whole one: the file keeps the float `ab` computed
# and JSON writes it back exactly, so only rounding in the reader's own arithmetic is allowed for.
LEVEL_TOLERANCE = 1e-9
#: the statuses of a case `ab` paired, whose share of the rate it took (a skipped or one-sided case takes none)
PAIRED = ("ok", "error")


def to_cases(value: Any, cases: Sequence[PairedCase], interrupted: bool, at: At) -> None:
    """Refuse (at `at`, the file's `family_error`) a rate that no case's `confidence` was split from; files that
    state no rate (before schema 3) and cases with no level (not compared, older files) are not held to one."""
    family = fields.optional_number(value, at)
    if family is None:
        return
    paired = sum(case.status in PAIRED for case in cases)
    for case in cases:
        if case.confidence is None:
            continue
        verdicts = max(len(case.ratios), 1)
        if not (
            _within(family, case.confidence, verdicts, paired) if interrupted else _split_from(family, case.confidence, verdicts, paired)
        ):
            at.fail(
                f"{family:g} is not the rate the cases' intervals were split from: {case.id}'s, at "
                f"{units.confidence(case.confidence)}, is no share of {units.percent(family)} over {paired} case(s), "
                f"{verdicts} verdict(s) and its looks"
            )


def _split_from(family: float, confidence: float, verdicts: int, paired: int) -> bool:
    """Whether `confidence` is the case's share of `family` over its verdicts and a whole number of looks, from one
    to the most any schedule of its share has (BlockBudget.looks, over schedules of 1 to MAX_BLOCKS blocks)."""
    share = family / max(paired, 1)
    looks = share / (verdicts * (1 - confidence) / 2)
    most = max(blocks.BlockBudget(share, verdicts, scheduled).looks for scheduled in range(1, blocks.MAX_BLOCKS + 1))
    return _whole(looks) and 1 <= round(looks) <= most


def _within(family: float, confidence: float, verdicts: int, paired: int) -> bool:
    """Whether `family` over a whole number of cases × looks (at least the `paired` stored) gives `confidence`."""
    tail = (1 - confidence) / 2
    parts = family / (tail * verdicts)
    return _whole(parts) and round(parts) >= max(paired, 1)


def _whole(count: float) -> bool:
    """Whether a count worked back from a stored level is a whole number (up to the float arithmetic's rounding)."""
    return math.isclose(count, round(count), rel_tol=LEVEL_TOLERANCE)
