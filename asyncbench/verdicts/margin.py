"""A ratio's interval against the margin: label_of, the one place a comparison's label is decided, and the margins a
gate takes (margin_problem).

Both comparisons of times call label_of: a run against a baseline
(verdicts.compare) and each paired verdict of an `ab` run
(engine.paired). The verdict is a test against the margin, never against
"no difference": testing "different from 1, and the median beyond the
margin" called a true +8% change SLOWER 11% of the time at a 10% margin.
The rule itself lives beside the words it decides (results.labels.label_of),
so that an `ab` file's reader, a layer below this one, holds a stored label
to the very rule that wrote it; it is the same function here.
"""

from __future__ import annotations

import math

from asyncbench.results.labels import label_of

__all__ = ["MARGIN_MAX", "label_of", "margin_problem"]

# The margins a gate takes, `--max-regression` and a config's `ab_margin` alike: above 0, since at 0 no interval is
# SAME (it would lie at or above 1 and below 1 at once): an unchanged step, whose interval holds 1, reads INCONCLUSIVE
# and fails the gate; and under this (1000%: a step eleven times slower still passes), beyond which it guards nothing.
MARGIN_MAX = 10.0


def margin_problem(margin: float) -> str | None:
    """What is wrong with a margin (a share: 0.05 for 5%) as a gate's, in words that state the range; None if
    nothing. One rule for `--max-regression` (verdicts.compare.parse_threshold) and `ab_margin`
    (spec.schema.coerce_setting)."""
    if not math.isfinite(margin) or not 0 < margin < MARGIN_MAX:
        return f"expected a percentage above 0% and under {MARGIN_MAX:.0%}"
    return None
