"""What every `expect:` check is judged with: the verdicts, the comparison of an interval with a threshold, the level
an interval is taken at, and the phrases an INCONCLUSIVE detail says why with (verdicts.checks reads them back).
Shared by verdicts.checks and verdicts.bound_checks (which checks dispatches to), so neither imports the other's
pieces back."""

from __future__ import annotations

from dataclasses import dataclass

from asyncbench.results import stats, units
from asyncbench.results.budget import Budget
from asyncbench.results.check_detail import NEEDS as NEEDS  # written here, read back from a file (results.check_detail)
from asyncbench.results.check_detail import STRADDLES as STRADDLES
from asyncbench.results.check_rule import OPERATORS as OPERATORS  # the rule is the results' (a file's checks are held to it)
from asyncbench.results.check_rule import verdict_of as verdict_of
from asyncbench.results.model import Verdict

PASS, FAIL, INCONCLUSIVE, NOT_MEASURED = Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE, Verdict.NOT_MEASURED
#: worst first: a clock check over several variants takes the worst verdict among them
SEVERITY = (FAIL, NOT_MEASURED, INCONCLUSIVE, PASS)
# The words an INCONCLUSIVE check's detail says why with, each in no other cause's detail (results.check_detail and
# verdicts.checks have the rest, and inconclusive_why, which reads them back from a stored check).
UNDECIDED = "the reading is INCONCLUSIVE"  # `bound == X` (verdicts.bound_checks)


@dataclass(frozen=True)
class Level:
    """The confidence a check's intervals are taken at, and the family-wise rate it comes from (None: alone, 95%)."""

    confidence: float = stats.CONFIDENCE
    family_error: float | None = None

    @property
    def name(self) -> str:
        """'95%', '99.98%': as many digits as it takes to tell the level from 100%."""
        return units.confidence(self.confidence)


def level_of(budget: Budget | None, share: int = 1) -> Level:
    """The level a check is judged at: its share of `budget` (split again over `share` intervals), or 95% alone."""
    return Level() if budget is None else Level(budget.confidence(share), budget.family_error)


#: the level of a check judged alone (a result without a run's budget): the stored 95% intervals
ALONE = Level()
