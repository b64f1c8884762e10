"""A case's time series on a machine that held still: runs on a moved machine discounted, the rest scaled to its usual speed.

A run's median carries the machine's state at the time (another tenant, a virtual machine's busier host), which
moves unchanged work between runs by more than the changes a history looks for, and can hide a real step from the
change-point search. Each case of a run since schema 10 also records the machine's reference (`machine_s`: fixed
work timed between its rounds, results.reference) and the CPU pressure while it sampled (`cpu_pressure`: the share
of the time some task waited for a CPU). Before change points are looked for in a case's times, a run is
*discounted* (left out of the search, and listed with why) where

- some task waited for a CPU more than verdicts.machine.BUSY of the time while the case sampled: a neighbour on
  the same cores, which moves a case by no fixed multiple of anything the tool can time beside it, read as `compare`
  reads it (which gives such a row no verdict), whatever the series' usual: a series whose every run had a neighbour
  is not a quiet one, and once searched as if it were (every run at 97%, a ×1.6 called a regression); or
- its CPU pressure stood more than verdicts.machine.OS_MOVED above the series' usual (its lower quartile): a
  lighter neighbour, beyond what the series' own quiet runs read (a run at 12% where the usual is 0%). This is the
  rule the history's figures were measured with (docs/measured.md, beside an intermittent neighbour); wherever the
  usual is below BUSY - OS_MOVED (5%; the quiet runs of the one kept in tests/history read 0-4%), every run above
  BUSY already stood more than OS_MOVED above it, so BUSY discounts nothing more there: it adds only the series
  that no quiet run anchors (most runs beside a neighbour); or
- its machine's reference took beyond ×(1 + MOVED) of the series' usual (its lower quartile: the machine's own
  speed when nothing slows it; a median fails where the machine was slow in most runs).

The other runs are searched scaled to the machine's usual speed (time × usual reference / its reference) where the
case follows the machine: where the scaled series moves less from run to run than the recorded one. With no
neighbour in sight and a machine within ×(1 + MOVED), cases of compute follow its moves about one for one, and
scaling takes a machine's drift out of their series; a case that waits (a sleep, a device, a server) does not
follow a CPU's reference at all, and scaling it would add the reference's moves to a clean series, so it is
searched as recorded. The change points' before and after are the times searched. A series with a point that has
no reference (runs recorded before schema 10, a case that took none) is searched as recorded, as before. A series
with too few runs left to search (every run beside a neighbour, say) is not searched, and says so
(history.model.Series.unsteady; the gate calls it INCONCLUSIVE: history.gate).

Figures (histories with a planted step beside a neighbour, searched with and without the machine;
benchmarks/history_machine.py): docs/measured.md, section "Separate runs: the machine beside the code", "The
history".
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from asyncbench.history import model
from asyncbench.history.model import Point
from asyncbench.results import units
from asyncbench.verdicts import machine

#: the quantities a case records for its machine (history.recorded.quantities), variant "" (history.model's)
MACHINE_QUANTITY, PRESSURE_QUANTITY = model.MACHINE_QUANTITY, model.PRESSURE_QUANTITY
# A run whose reference took beyond ×1.25 of the series' usual time is discounted. The 2-core machine here has slow
# spells that the OS does not see: its reference took 1.35-1.7 ms instead of about 1 ms in 30-40% of runs beside an
# intermittent neighbour, the cases 1.3-2.2× slower with it, by no fixed multiple. Within ×1.25 the kept runs are
# scaled (the module's docstring). Chosen on 20 histories of 12 runs (benchmarks/history_machine.py): a +30% step
# found within one run of its start in 6, 7, 8 of 10 at ×1.10, ×1.15, ×1.25 (one set), no flat series changed.
MOVED = 0.25
# The series' usual machine and pressure: their lower quartile.
USUAL = 0.25


def is_time(quantity: str, unit: str) -> bool:
    """Whether a series is one of a case's times, whose changes are looked for with the machine seen."""
    return unit == "s" and quantity != MACHINE_QUANTITY and not model.is_bound(quantity)  # a slack is no time of the case


def discounted(
    points: Sequence[Point], machine_s: Mapping[int, float], pressure: Mapping[int, float]
) -> tuple[list[Point], list[tuple[int, str]]] | None:
    """(the points kept, scaled to the machine's usual speed where that makes them agree better; the runs discounted,
    each with why), or None where a point has no reference (the series is searched as recorded)."""
    if not points or any(p.run not in machine_s for p in points):
        return None
    speed = _usual([machine_s[p.run] for p in points])
    pressures = [pressure[p.run] for p in points if p.run in pressure]
    usual = _usual(pressures) if pressures else None
    kept: list[Point] = []
    left_out: list[tuple[int, str]] = []
    for point in points:
        moved = machine_s[point.run] / speed
        waited = pressure.get(point.run)
        if waited is not None and waited > machine.BUSY:  # as `compare` reads a neighbour (verdicts.machine)
            said = f"a task waited for a CPU {waited * 100:.0f}% of the time (more than {machine.BUSY * 100:.0f}%)"
            left_out.append((point.run, said + model.BESIDE_NEIGHBOUR))
        elif usual is not None and waited is not None and waited > usual + machine.OS_MOVED:
            said = f"a task waited for a CPU {waited * 100:.0f}% of the time (usually {usual * 100:.0f}%)"
            left_out.append((point.run, said + model.BESIDE_NEIGHBOUR))
        elif not 1 / (1 + MOVED) <= moved <= 1 + MOVED:
            left_out.append((point.run, f"the machine's reference took {units.ratio(moved)} its usual time, beyond ×{1 + MOVED:.3g}"))
        else:
            kept.append(point)
    scaled = [_scaled(point, machine_s[point.run] / speed) for point in kept]
    return (scaled if _jumps(scaled) < _jumps(kept) else kept), left_out


def _usual(values: Sequence[float]) -> float:
    """The lower quartile of `values` (an order statistic: one of them)."""
    ordered = sorted(values)
    return ordered[int(USUAL * (len(ordered) - 1))]


def _scaled(point: Point, moved: float) -> Point:
    """The point as if measured at the machine's usual speed: its time and interval over the machine's move."""
    return point._replace(
        value=point.value / moved,
        low=None if point.low is None else point.low / moved,
        high=None if point.high is None else point.high / moved,
    )


def _jumps(points: Sequence[Point]) -> float:
    """How far the series moves from run to run: the sum of |log| of each run's ratio to the one before (a step in the
    code is one jump; a machine's moves that the case follows are many)."""
    pairs = zip(points, points[1:], strict=False)
    return sum(abs(math.log(after.value / before.value)) for before, after in pairs if before.value > 0 < after.value)
