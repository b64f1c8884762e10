"""A ratio's interval against the margin: the one place a comparison's label (results.labels.Label) is decided.

Both comparisons of times call it: a run against a baseline
(verdicts.compare) and each paired verdict of an `ab` run
(engine.paired). The verdict is a test against the margin, never against
"no difference": testing "different from 1, and the median beyond the
margin" called a true +8% change SLOWER 11% of the time at a 10% margin.
"""

from __future__ import annotations

from asyncbench.results.labels import Label


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
