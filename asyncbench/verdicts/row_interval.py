"""Which interval a row of two separate runs prints and is judged by, and the line that says so where it gives no
verdict.

A row prints one of three intervals (verdicts.compare._rows): the code's, where the machine's change between the
runs was read from the reference and carried (verdicts.machine.MachineChange.code_interval); the case's own at the
row's level, where the machine is not seen (files without references, CPU thread pools that differ); or the case's
own at half the row's error, with the machine's change NOT taken out, where the machine was read but gives no
verdict (a neighbour in either run, a move beyond what was measured). The last looks like the first, and once sat
under a header that described only the first: `+778.2% [+573.0% … +975.5%] INCONCLUSIVE` beside a machine 1.39×
slower read as the code's interval, far past the margin, with no verdict for no reason a reader could see; and
identical code printed `−30.5% [−32.7% … −25.9%]`, an interval that excludes no change. So each such row's line
says which interval it prints, and why even an interval far past the margin gives no verdict.

Why a neighbour's row stays INCONCLUSIVE however far past the margin: the measurements bound no neighbour's effect
on a case relative to the reference (docs/measured.md, "What decided the rules"): beside one CPU hog a case ran
2.5× slower while its reference did not move, a hog slowed a case 2.6× where a lighter job at nearly the same
pressure slowed it not at all, and a case's log change over its reference's ranged from −15 to +18. A rule that
called a change SLOWER where it exceeds what the machine's measured change could explain would need such a bound.
"""

from __future__ import annotations

from typing import Sequence

from asyncbench.results import units
from asyncbench.verdicts import ratio as ratios
from asyncbench.verdicts.machine import MachineChange

#: what a row's interval is (VariantComparison.interval_is): the code's, the machine's change carried
CODE = "code"
#: the case's own, at the row's level: the machine's change between the runs is not seen (no reference, pools differ)
CASE = "case"
#: the case's own, at half the row's error: the machine was read, but gives no verdict, and its change is not taken out
CASE_BESIDE_MACHINE = "case, machine not taken out"

#: why a neighbour's row gives no verdict however far its interval lies past the margin (the module's docstring)
NEIGHBOUR_UNBOUNDED = (
    "how much a neighbour moves a case beside the reference has no measured bound (one ran 2.5× slower while its "
    "reference did not move, docs/measured.md), so no part of the change can be told to be the code's"
)
#: why a machine that moved beyond what was measured, or could not be pinned, gives no verdict
MACHINE_UNKNOWN = (
    "how much a case follows a machine that moved this far, or whose speed is unknown, was not measured, so no "
    "part of the change can be told to be the code's"
)


def half_error(confidence: float) -> float:
    """The confidence of an interval that spends half the error of one at `confidence`."""
    return 1 - (1 - confidence) / 2


def undecided(machine: MachineChange, interval: tuple[float, float] | None, level: float) -> str:
    """The line of a row the machine gives no verdict (a neighbour, a move beyond what was measured): what the
    machine did, which interval the row prints, and why that interval decides nothing."""
    printed = (
        f"its interval is the case's own ({units.exact_confidence(level)}), not the code's: the machine's change is "
        "not taken out, and no interval decides it, however far past the margin"
        if interval is not None
        else "it has no interval, and none could decide it"
    )
    return f"{machine.why}: {printed}, as {NEIGHBOUR_UNBOUNDED if machine.neighbour else MACHINE_UNKNOWN}"


def why_none(
    old: Sequence[float], new: Sequence[float], level: float, interval: tuple[float, float] | None, confidence: float
) -> str | None:
    """Said of a row without an interval: from how many samples, and how many it needs, at the row's `confidence`
    (the header's); `level`, the samples' own, is higher where the machine is seen (verdicts.compare._rows): the
    line says why."""
    if interval is None:
        said = f"no {units.exact_confidence(confidence)} interval from {len(new)} vs {len(old)} samples"
        if level != confidence:
            said += (
                f" (their own interval is taken at {units.exact_confidence(level)}: half the row's error, the other half "
                "spent on the machine's change between the runs)"
            )
        needed = ratios.samples_needed(len(old), level)
        if needed is None or needed <= len(new):  # enough samples, but their rounds drifted together too much
            return f"{said}: their rounds drifted together (fewer effective samples)"
        return f"{said}: it needs at least {needed} current samples"
    return None
