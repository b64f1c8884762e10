"""A check's mark is one per verdict and the same verdict's in every writer: a check that could not be evaluated is
marked as such, never as a failure it was not."""

from __future__ import annotations

from asyncbench.report.markdown import MARKDOWN_MARK
from asyncbench.report.terminal import CHECK_MARK
from asyncbench.results.model import Verdict


def test_each_verdict_has_a_mark_of_its_own_in_markdown_as_in_the_terminal() -> None:
    """A trial: `ceiling[host] <= 1.10` on shared cores printed `–` (not measured) in the terminal and ❌ in the
    markdown, the mark of a check that measured and failed."""
    assert set(MARKDOWN_MARK) == set(Verdict) == set(CHECK_MARK)
    assert len(set(MARKDOWN_MARK.values())) == len(Verdict)
    assert len(set(CHECK_MARK.values())) == len(Verdict)
