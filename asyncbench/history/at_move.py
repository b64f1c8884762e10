"""A change of a case at the run its machine moved: its interval carries the machine's change, as `compare`'s does.

The history searches a case's times scaled to its machine's usual speed where the case follows the machine
(history.discount): that takes a machine's drift out of a case that moves with it one for one. Where the machine
itself changed at the very run the case did (a change point of its reference, `machine_s`, at that run or within
the runs two changes cannot be told apart in), that scaling is an assumption the same data cannot check: how much a
case follows its reference is not known (verdicts.machine: from not at all to twice). A user's series, the reference
×1.2 and the case ×1.5 both from run 7 of 14, was told `1.02 ms → 1.28 ms, ×1.25 [1.24–1.26]` (scaled, and nothing
said so) and failed the gate, beside its own note that a change of the code at the same run cannot be told from the
machine's; `compare` of its first and last runs said `+49.6% [+1.4% … +51.5%] INCONCLUSIVE`.

So such a change is told as `compare` tells it: its figures as measured, its ratio's interval the case's over the
machine's raised to a power from 0 to verdicts.machine.MAX_SENSITIVITY (verdicts.machine.carried), each of the two
intervals at half the change's error (verdicts.row_interval.half_error, as compare's are). The gate judges that
interval as any other (history.gate): it fails only where the interval lies wholly past the margin, and one that
straddles it is INCONCLUSIVE. A change away from the machine's move (the machine steady on both sides of it) keeps
the interval of the times searched, and says where those are scaled (ChangePoint.scaled).
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Mapping, Sequence

from asyncbench.history import changes, discount, model
from asyncbench.history.model import ChangePoint, Point, Series
from asyncbench.results import units

# A case's change and its machine's that lie fewer than this many runs apart are taken for one: the history calls
# no two changes that close in one series (the segment between them would hold fewer than MIN_SIDE_RUNS runs:
# history.changes), and a split of a step moves by a run or two with the noise, so which of the two moved first
# cannot be told from the runs.
APART = model.MIN_SIDE_RUNS


def told(found: Sequence[Series]) -> list[Series]:
    """`found` with each change of a case's time (or rate) that lies at its machine's move carrying the machine's
    change (the module's rule), and each other change of a series searched scaled marked as such (ChangePoint.scaled).
    The machine's move is a change point of the reference series of the same case and machine among `found`."""
    references = {(one.machine, one.case): one for one in found if one.quantity == model.MACHINE_QUANTITY and not one.variant}
    return [_told(one, references.get((one.machine, one.case))) for one in found]


def level() -> float:
    """The confidence each of the two intervals a carried change is made of is taken at: half the change's error, as
    `compare` takes the case's and the machine's (verdicts.row_interval.half_error), so that the carried interval is
    wrong at most as often as a change's own."""
    from asyncbench.verdicts import row_interval

    return row_interval.half_error(changes.CONFIDENCE)


def _told(one: Series, reference: Series | None) -> Series:
    """`one` with its changes told against its machine's `reference` series (told's rule)."""
    if not one.change_points or not one.machine_seen or not discount.follows_machine(one.quantity, one.unit):
        return one
    order = {point.run: at for at, point in enumerate(one.points)}
    moves = [order[change.run] for change in (reference.change_points if reference else ()) if change.run in order]
    machine_s = {point.run: point.value for point in reference.points} if reference else {}
    left_out = {run for run, _ in one.discounted}
    searched = [point for point in one.points if point.run not in left_out]
    made = []
    for change in one.change_points:
        here = order.get(change.run)
        if here is None:  # before the points read: as stored
            made.append(change)
            continue
        at_move = any(abs(here - move) < APART for move in moves)
        carried = _carried(one, change, searched, machine_s) if at_move else None
        made.append(carried if carried is not None else dataclasses.replace(change, scaled=one.scaled))
    return dataclasses.replace(one, change_points=tuple(made))


def _carried(one: Series, change: ChangePoint, searched: Sequence[Point], machine_s: Mapping[int, float]) -> ChangePoint | None:
    """`change` told from the times as measured on its two sides (the runs searched, from the change before it to the
    change after it), its interval carrying the machine's change across the same runs; None where a run on a side has
    no reference (then nothing is read of the machine there)."""
    from asyncbench.verdicts import compare, machine

    runs = [point.run for point in searched]
    if change.run not in runs:
        return None
    at = runs.index(change.run)
    others = [runs.index(other.run) for other in one.change_points if other.run != change.run and other.run in runs]
    start = max((other for other in others if other < at), default=0)
    end = min((other for other in others if other > at), default=len(runs))
    before, after = searched[start:at], searched[at:end]
    if not before or not after or any(point.run not in machine_s for point in (*before, *after)):
        return None
    old, new = [point.value for point in before], [point.value for point in after]
    old_machine, new_machine = [machine_s[point.run] for point in before], [machine_s[point.run] for point in after]
    case = compare.ratio_interval(old, new, level())
    moved = compare.ratio_interval(old_machine, new_machine, level())
    # a rate of the work moves against its machine's time (history.discount scales it by the move, not over it)
    felt = (1 / moved[1], 1 / moved[0]) if moved is not None and units.is_rate(one.unit) else moved
    interval = machine.carried(case, felt)
    middle_before, middle_after = statistics.median(old), statistics.median(new)
    return dataclasses.replace(
        change,
        before=middle_before,
        after=middle_after,
        ratio=middle_after / middle_before if middle_before else float("inf"),
        ratio_low=interval[0] if interval else None,
        ratio_high=interval[1] if interval else None,
        machine_ratio=statistics.median(new_machine) / statistics.median(old_machine),
        machine_low=moved[0] if moved else None,
        machine_high=moved[1] if moved else None,
        scaled=False,
    )
