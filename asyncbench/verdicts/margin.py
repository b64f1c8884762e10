"""A ratio's interval against the margin: the one place a comparison's label (results.labels.Label) is decided.

Both comparisons of times call it: a run against a baseline
(verdicts.compare) and each paired verdict of an `ab` run
(engine.paired). The verdict is a test against the margin, never against
"no difference": testing "different from 1, and the median beyond the
margin" called a true +8% change SLOWER 11% of the time at a 10% margin.
"""

from __future__ import annotations

import math

from asyncbench.results.labels import Label

# The margins a gate takes, `--max-regression` and a config's `ab_margin` alike: above 0, since at 0 no interval is
# SAME (it would lie at or above 1 and below 1 at once) and every change of none reads INCONCLUSIVE or worse; and
# under this (1000%: a step eleven times slower still passes), beyond which a margin guards nothing.
MARGIN_MAX = 10.0


def margin_problem(margin: float) -> str | None:
    """What is wrong with a margin (a share: 0.05 for 5%) as a gate's, in words that state the range; None if
    nothing. One rule for `--max-regression` (verdicts.compare.parse_threshold) and `ab_margin`
    (spec.schema.coerce_setting)."""
    if not math.isfinite(margin) or not 0 < margin < MARGIN_MAX:
        return f"expected a percentage above 0% and under {MARGIN_MAX:.0%}"
    return None


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
