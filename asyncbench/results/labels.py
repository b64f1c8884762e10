"""The words a ratio's interval is labelled with against a margin, and the verdict each one is.

One vocabulary for both comparisons of times: a run against a baseline
(`compare`, `run --baseline`) and a paired `ab` run. The label is what a
person reads beside the verdict: it says why. Each member's value is the
word written in results files (`label` in an `ab` file, in `compare
--format json`), so files read the same as before the enum.

Which label a ratio gets is decided in one place only, from its interval and
the margin: verdicts.margin.label_of. This module holds the words and what
each means for a gate; it decides nothing.
"""

from __future__ import annotations

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
