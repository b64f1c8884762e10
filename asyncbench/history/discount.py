"""A case's time series on a machine that held still: runs on a moved machine discounted, the rest scaled to its usual speed.

A run's median carries the machine's state at the time (another tenant, a virtual machine's busier host), which
moves unchanged work between runs by more than the changes a history looks for, and can hide a real step from the
change-point search. Each case of a run since schema 10 also records the machine's reference (`machine_s`: fixed
work timed between its rounds, results.reference) and the CPU pressure while it sampled (`cpu_pressure`: the share
of the time some task waited for a CPU). Before change points are looked for in a case's times, a run is
*discounted* (left out of the search, and listed with why) where

- some task waited for a CPU more than verdicts.machine.BUSY of the time while the case sampled: a neighbour on
  the same cores, which moves a case by no fixed multiple of anything the tool can time beside it, read as `compare`
  reads it (verdicts.machine.neighbour, which gives such a row no verdict), whatever the series' usual (the history
  records no other processes' share, so a wait from the case's own threads beyond the cores, `run --threads` above
  them, cannot be told from a neighbour's here and is discounted too, as `compare` does in a file without others_cpu:
  record such a series with the pools within the cores): a series whose every run had a neighbour
  is not a quiet one, and once searched as if it were (every run at 97%, a ×1.6 called a regression); or
- its CPU pressure stood more than verdicts.machine.OS_MOVED above the series' usual (its lower quartile): a
  lighter neighbour, beyond what the series' own quiet runs read (a run at 12% where the usual is 0%). This is the
  rule the history's figures were measured with (docs/measured.md, beside an intermittent neighbour); wherever the
  usual is below BUSY - OS_MOVED (5%; the quiet runs of the one kept in tests/history read 0-4%), every run above
  BUSY already stood more than OS_MOVED above it, so BUSY discounts nothing more there: it adds only the series
  that no quiet run anchors (most runs beside a neighbour); or
- its machine's reference took beyond ×(1 + MOVED) of the series' usual or under ×1/(1 + MOVED) of it (a faster
  machine moves the cases too; usual: its lower quartile, the machine's own speed when nothing slows it; a median
  fails where the machine was slow in most runs; where the runner moved for good, the usual of the newest runs'
  machine: _newest_machine); or, before any of these,
- it ran a CPU case in thread pools sized otherwise than the newest run's (`run --threads`; the runs'
  `thread_variables`, read as `compare` reads them: verdicts.environments.pools_changed). The reference runs in the
  case's pools (measure.reference), so its speed there is the pools' as much as the machine's: a pool change once read
  as a machine that moved ×1.7, and a code change across it was judged against that machine. `compare` reads no
  machine from such a pair; here the runs in other pools are left out, and the machine's usual and the other rules
  are read among the runs in the newest run's pools, the ones the newest run is judged against. A series whose pools
  changed shortly before its newest run thus has too few runs left to search (Series.unsteady: the gate's
  INCONCLUSIVE) until runs enough in the new pools are recorded, rather than being judged against another pool's
  runs, or its newest runs discounted as a moved machine's.

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
from typing import Any, Mapping, Sequence

from asyncbench.history import model
from asyncbench.history.model import Point
from asyncbench.results import units
from asyncbench.verdicts import environments, machine

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
# The newest runs whose machines all lie outside MOVED of the series' usual say the runner moved for good, and the
# series is judged on the newest runs' machine (_newest_machine): as many runs as a change needs on a side
# (model.MIN_SIDE_RUNS), so that a slow spell of a run or two (30-40% of the runs on the 2-core machine above, rarely
# three in a row) is not taken for a new machine.
LASTING = model.MIN_SIDE_RUNS


def follows_machine(quantity: str, unit: str) -> bool:
    """Whether a series is one of a case's times, or a rate of its work (GFLOP/s: work over a time), whose changes
    are looked for with the machine seen: a rate moves with the machine as its time does (a trial's machine ×1.5
    slower discounted every time series' runs and left `gflops` to call its ×0.663 a regression)."""
    if units.is_rate(unit):
        return True
    return unit == units.SECONDS and quantity != MACHINE_QUANTITY and not model.is_bound(quantity)  # a slack is no time


def judged(
    quantity: str,
    unit: str,
    points: Sequence[Point],
    read: tuple[Mapping[int, float], Mapping[int, float], Mapping[int, Mapping[str, Any]]],
) -> tuple[list[Point], list[tuple[int, str]]] | None:
    """What a series is searched in, and the runs it discounts with why, by what history.reading.machine_of read of
    its machine (reference, pressure, each run's environment): a case's time as `discounted` says; the reference itself
    (MACHINE_QUANTITY, of a CPU case) with only the runs in other pools than the newest's left out (its own moves are
    the machine's, told as such: history.gate), None where nothing is read of its machine."""
    machine_s, pressure, pools = read
    if quantity == MACHINE_QUANTITY:
        left_out = other_pools(points, pools)
        elsewhere = {run for run, _ in left_out}
        return [point for point in points if point.run not in elsewhere], left_out
    return discounted(points, machine_s, pressure, pools, rate=units.is_rate(unit))


def discounted(
    points: Sequence[Point],
    machine_s: Mapping[int, float],
    pressure: Mapping[int, float],
    pools: Mapping[int, Mapping[str, Any]] | None = None,
    rate: bool = False,
) -> tuple[list[Point], list[tuple[int, str]]] | None:
    """(the points kept, scaled to the machine's usual speed where that makes them agree better; the runs discounted,
    each with why), or None where a point has no reference (the series is searched as recorded). `pools`: each run's
    environment, for a CPU case (whose reference runs in its thread pools); None or empty for any other. `rate`: the
    series is a rate of the case's work (scaled by the machine's move, not over it)."""
    if not points or any(p.run not in machine_s for p in points):
        return None
    left_out = list(other_pools(points, pools or {}))
    elsewhere = {run for run, _ in left_out}
    alike = [point for point in points if point.run not in elsewhere]  # the runs in the newest run's pools
    speed, elsewhere_said = _newest_machine([machine_s[p.run] for p in alike])
    pressures = [pressure[p.run] for p in alike if p.run in pressure]
    usual = _usual(pressures) if pressures else None
    kept: list[Point] = []
    for point in alike:
        moved = machine_s[point.run] / speed
        waited = pressure.get(point.run)
        # as `compare` reads a neighbour (verdicts.machine.neighbour); the history records no other processes' share,
        # so a wait past BUSY is read as a neighbour's, as in a file without others_cpu
        if waited is not None and machine.neighbour(waited, None):
            said = f"a task waited for a CPU {waited * 100:.0f}% of the time (more than {machine.BUSY * 100:.0f}%)"
            left_out.append((point.run, said + model.BESIDE_NEIGHBOUR))
        elif usual is not None and waited is not None and waited > usual + machine.OS_MOVED:
            said = f"a task waited for a CPU {waited * 100:.0f}% of the time (usually {usual * 100:.0f}%)"
            left_out.append((point.run, said + model.BESIDE_NEIGHBOUR))
        elif not _within(moved):
            # both ways: a machine faster than its usual moves the cases as a slower one does
            bounds = f"×{1 / (1 + MOVED):.3g}–×{1 + MOVED:.3g}"
            said = (
                f"the machine's reference took {units.ratio(moved)} its usual time{elsewhere_said}, outside {bounds}: "
                "the machine itself changed speed"
            )
            left_out.append((point.run, said))
        else:
            kept.append(point)
    left_out.sort(key=lambda one: one[0])  # in run order, as the points are
    scaled = [_scaled(point, (speed / machine_s[point.run]) if rate else (machine_s[point.run] / speed)) for point in kept]
    return (scaled if _jumps(scaled) < _jumps(kept) else kept), left_out


def other_pools(points: Sequence[Point], pools: Mapping[int, Mapping[str, Any]]) -> list[tuple[int, str]]:
    """The runs among `points` whose CPU thread pools were sized otherwise than the newest run's, each with how
    (verdicts.environments.pools_changed, the words `compare` says of such a pair, from that run to the newest), by
    `pools`: each run's environment (a run not in it is taken as the newest's)."""
    newest = pools.get(points[-1].run) if points else None
    if newest is None:
        return []
    found = []
    for point in points[:-1]:
        said = environments.pools_changed(pools[point.run], newest) if point.run in pools else None
        if said is not None:
            found.append((point.run, said + model.OTHER_POOLS))
    return found


def _within(moved: float) -> bool:
    """Whether a machine that took `moved` times its usual time held still (within ×(1 + MOVED) both ways)."""
    return 1 / (1 + MOVED) <= moved <= 1 + MOVED


def _newest_machine(references: Sequence[float]) -> tuple[float, str]:
    """The machine's usual reference time the runs are judged at (and words for a discounted run's line): the
    series' usual; or, where the newest LASTING runs all lie outside MOVED of it (the runner changed for good, not a
    passing slow spell), the usual among the runs whose machine lies within MOVED of the newest run's. A runner that
    turned ×1.5 slower for good had every run after the move discounted against the old machine's usual, and a ×2
    change of the code on the new machine was never searched (a trial's 8 runs on it: "no change found", exit 0);
    now the old machine's runs are the ones left out, and until MIN_RUNS runs lie on the new machine too few are
    left to search (the gate's INCONCLUSIVE: Series.unsteady). A newest run or two on a slow spell is discounted
    against the usual, as before: no change is found that soon after its start in any case (MIN_SIDE_RUNS)."""
    speed = _usual(references)
    newest = references[-LASTING:]
    if len(newest) < LASTING or any(_within(one / speed) for one in newest):
        return speed, ""
    return _usual([one for one in references if _within(one / references[-1])]), " on the newest runs' machine"


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
