"""The words a ratio's interval is labelled with against a margin, and the verdict each one is.

One vocabulary for both comparisons of times: a run against a baseline
(`compare`, `run --baseline`) and a paired `ab` run. The label is what a
person reads beside the verdict: it says why. Each member's value is the
word written in results files (`label` in an `ab` file, in `compare
--format json`), so files read the same as before the enum.

Which label a ratio gets is decided in one place only, from its interval and
the margin: label_of, here beside the words so that a reader of `ab` files
(results.paired) can hold a stored label to it; verdicts.margin, where every
comparison calls it, says why the rule is one-sided.
"""

from __future__ import annotations

import math

from asyncbench.results import stats, units
from asyncbench.results.model import Verdict
from asyncbench.results.word import Word


class Label(Word):
    """What a ratio's interval says against the margin (ratio > 1 is slower). The gate's question is one-sided: is
    it slower than 1 + margin?"""

    SAME = "SAME"  # the whole interval within the margin both ways
    FASTER = "FASTER"  # the whole interval below 1 / (1 + margin)
    SLOWER = "SLOWER"  # the whole interval above 1 + margin: fails a gate
    #: the interval excludes a slowdown beyond the margin but is too wide to call the change SAME or FASTER (a
    #: gate's pass: its question is one-sided)
    NOT_SLOWER = "NOT SLOWER"
    INCONCLUSIVE = "INCONCLUSIVE"  # the interval reaches across 1 + margin, or there is none

    @property
    def verdict(self) -> Verdict:
        """A slowdown shown beyond the margin fails, one excluded passes, anything else is undecided."""
        return _VERDICTS[self]


_VERDICTS = {
    Label.SAME: Verdict.PASS,
    Label.FASTER: Verdict.PASS,
    Label.NOT_SLOWER: Verdict.PASS,
    Label.SLOWER: Verdict.FAIL,
    Label.INCONCLUSIVE: Verdict.INCONCLUSIVE,
}


def label_of(interval: tuple[float, float] | None, margin: float) -> Label:
    """A ratio's label from its interval against the margin. The gate's question is one-sided (is it slower than
    1 + margin?): SLOWER when the whole interval lies above 1 + margin, and when the whole of it lies below, FASTER
    (below 1 / (1 + margin)), SAME (within the margin both ways) or NOT SLOWER (too wide to say which);
    INCONCLUSIVE when it reaches across 1 + margin, or there is no interval. A head 1% faster at a 1% margin, whose
    interval straddles 1/1.01, passes: a three-way rule failed such gates 91% of the time."""
    if interval is None:
        return Label.INCONCLUSIVE
    low, high = interval
    if low > 1 + margin:
        return Label.SLOWER
    if high >= 1 + margin:
        return Label.INCONCLUSIVE
    if high < 1 / (1 + margin):
        return Label.FASTER
    if low >= 1 / (1 + margin):
        return Label.SAME
    return Label.NOT_SLOWER


# The margins a gate takes, `--max-regression` and a config's `ab_margin` alike, and so the margins an `ab` file may
# state (its max_regression, a case's margin): above 0, since at 0 no interval is SAME (it would lie at or above 1
# and below 1 at once): an unchanged step, whose interval holds 1, reads INCONCLUSIVE and fails the gate; and under
# this (1000%: a step eleven times slower still passes), beyond which it guards nothing.
MARGIN_MAX = 10.0


def margin_problem(margin: float) -> str | None:
    """What is wrong with a margin (a share: 0.05 for 5%) as a gate's, in words that state the range; None if
    nothing. One rule for `--max-regression` (verdicts.margin.parse_threshold), `ab_margin`
    (spec.schema.coerce_setting) and the margins an `ab` file states (results.ab_report, results.paired)."""
    if not math.isfinite(margin) or not 0 < margin < MARGIN_MAX:
        return f"expected a percentage above 0% and under {MARGIN_MAX:.0%}"
    return None


#: the first words of the label cell of a SAME row whose interval excludes no change (a ratio of 1): a change surely
#: exists, within the margin both ways. A bare "SAME" beside +85.8% [+66.0% … +92.0%] at a margin of 150% read as "no
#: change", and so did "SAME (a change within the margin)" beside +19.2% [+14.0% … +25.9%]: the word contradicted its
#: numbers. The label itself (files, JSON, exit codes) stays SAME: only the cell a person reads says more, derived
#: from the stored interval, so every file ever written reads the same way
WITHIN_MARGIN = "WITHIN MARGIN"


def label_cell(label: Label, interval: tuple[float, float] | None, margin: float | None = None) -> str:
    """The label as a table's cell shows it: its word, or for a SAME whose interval excludes 1 (the ratio is > 1
    slower for every kind) which way it changed: 'WITHIN MARGIN (slower, by less than the 30% margin)'."""
    way = stats.side(interval, 1.0)  # the one rule: an interval that excludes no change
    if label != Label.SAME or not way:
        return str(label)
    said = f"the {units.percent(margin)} margin" if margin is not None else "the margin"
    return f"{WITHIN_MARGIN} ({'slower' if way > 0 else 'faster'}, by less than {said})"
