"""The headline of an `asyncbench ab` gate: its verdict in a line, one rule for every writer that has one.

The terminal (report.paired.print_view), the pull-request comment (report.paired.markdown) and the notebook
(report.notebook.ab_html) all say it from the exit code and the rows' labels together, never the code alone: a gate
that passed with INCONCLUSIVE rows let through (--allow-inconclusive) says it passed undecided, where "no slowdown
beyond the margin" beside an undecided +88% row claimed what no interval showed (a new user's trial).
"""

from __future__ import annotations

from asyncbench.results.labels import Label

#: the headline of a gate that passed with every verdict decided: each row's interval lies below 1 + margin
NO_SLOWDOWN = "no slowdown beyond the margin"


#: why a gate cut short fails, whatever its rows say (its "1 SAME" is what its blocks had measured when it stopped)
INTERRUPTED = "interrupted before every case finished"


def gate_exit(code: int) -> str:
    """'ab exits 1': the exit said as `ab`'s, so that `show`, which re-renders an `ab` file and exits 0 itself, and
    the comment `ab --markdown` wrote read the same and neither claims an exit of its own."""
    return f"ab exits {code}"


def gate_headline(code: int, labels: tuple[Label, ...], interrupted: bool = False) -> str:
    """'the gate fails (ab exits 1)'; one cut short, 'the gate fails (interrupted before every case finished)' (its
    exit was its signal's, said among the reasons where known); a pass with every row decided, NO_SLOWDOWN; a pass
    that let INCONCLUSIVE rows through, that it passed undecided and how many."""
    if interrupted:
        return f"the gate fails ({INTERRUPTED})"
    if code:
        return f"the gate fails ({gate_exit(code)})"
    undecided = labels.count(Label.INCONCLUSIVE)
    if undecided:
        return f"passes (--allow-inconclusive): {undecided} INCONCLUSIVE, not shown either way"
    return NO_SLOWDOWN


def counts_beside(headline: str, summary: str) -> str:
    """What follows the headline on its line: ': ' and the verdicts' counts ('1 SAME, 1 INCONCLUSIVE'), or nothing
    where those counts are all the headline says already: a gate let through undecided read 'passes
    (--allow-inconclusive): 1 INCONCLUSIVE, not shown either way: 1 INCONCLUSIVE' (a new user's trial)."""
    return "" if f": {summary}," in headline else f": {summary}"


def headline_mark(code: int) -> str:
    """The mark a comment or notebook puts before the headline: a pass, or a failure."""
    return "❌" if code else "✅"
