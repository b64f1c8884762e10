"""A ratio's interval against the margin: label_of, the one place a comparison's label is decided, and the margins a
gate takes (margin_problem, kept beside label_of in results.labels so that an `ab` file's reader holds the
margins it states to the same range).

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

from asyncbench.results.labels import MARGIN_MAX, label_of, margin_problem

__all__ = ["MARGIN_MAX", "label_of", "margin_problem"]
