"""What `ab --syncs` adds to a gate's view: the sync points new on head, the line where no census could see a wait
(a synchronous backend on the CPU), and without a census, the hint that `--syncs` may name a SLOWER case's cause.
The gate's view (report.paired) puts them after its table; its writers print them."""

from __future__ import annotations

from asyncbench.report import syncs
from asyncbench.report.gate_settings import device
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase
from asyncbench.results.plan import case_parts

#: the table of sync points new on head (`ab --syncs`)
SYNC_TITLE = "sync points new on head (its step waits there, base's does not)"
SYNC_HEADERS = ("case", *syncs.HEADERS)
NO_NEW_SYNCS = "no sync point new on head: every point where head's step waits, base's waits there too"
# The backends whose steps run synchronously on the CPU: a census there finds no wait (measure.census.synchronous:
# nothing waits for a device), so a SLOWER case of theirs on the CPU is not sent to `--syncs` for its cause.
SYNCHRONOUS_ON_CPU = ("numpy", "torch")
# How many SLOWER cases the hint names before it counts the rest.
HINT_NAMES = 3


def hint(report: ABReport) -> list[str]:
    """One line when a case turned SLOWER with no census taken (no `--syncs`) on a backend and device where a step
    can wait for the device: a wait new on head is a common cause, and `--syncs` names its FILE:LINE."""
    slower = [
        case.id
        for case in report.cases
        if case.new_syncs is None and any(r.label == Label.SLOWER for r in case.ratios) and not synchronous(case)
    ]
    if not slower:
        return []
    named = ", ".join(slower[:HINT_NAMES]) + (f" and {len(slower) - HINT_NAMES} more" if len(slower) > HINT_NAMES else "")
    return [
        f"SLOWER: {named}: `ab --syncs` lists the sync points new on head (where head's step waits and base's does not), "
        "a common cause of a slowdown"
    ]


def synchronous(case: PairedCase) -> bool:
    """Whether the case's backend runs each call before it returns on its device (numpy; torch on the CPU): its census
    finds no wait on either side, whatever the code does (measure.census.synchronous)."""
    return device(case) == "cpu" and (case.backend or case_parts(case.id)[1]) in SYNCHRONOUS_ON_CPU


def synchronous_notes(report: ABReport) -> list[str]:
    """A line per case whose census could find no wait: "no sync point new on head" would claim what it never saw."""
    return [
        f"{case.id}: no sync point compared: {case.backend or case_parts(case.id)[1]} on the CPU runs each call before "
        "it returns, so neither side's step waits for a device (a host wait such as float(loss) costs nothing extra there)"
        for case in report.cases
        if case.new_syncs is not None and synchronous(case)
    ]


def new_on_head(report: ABReport) -> tuple[tuple[str, ...], ...] | None:
    """A row per sync point new on head, case by case; None when no case has a census of both sides that could see
    a wait (a synchronous backend's census sees none: synchronous_notes says so instead)."""
    if all(case.new_syncs is None or synchronous(case) for case in report.cases):
        return None
    return tuple(
        (
            case.id,
            new.variant,
            syncs.where(new.point),
            str(new.point.kind),
            new.point.call,
            syncs.waits(new.point.calls_per_step),
            syncs.blocked(new.point),
        )
        for case in report.cases
        for new in case.new_syncs or ()
    )
