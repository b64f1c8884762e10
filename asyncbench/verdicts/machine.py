"""Whether the machine itself changed speed between two runs, and the code's change with the machine's taken out.

Each case of a run times a reference (results.reference): fixed work, the same in every run, sampled between the
case's rounds in the case's own process. Between a baseline and a current run, the ratio of the two references
(Hodges–Lehmann with its rank interval, as every ratio of two runs here: verdicts.ratio) is the machine's change of
speed while that case ran; the OS's account (other processes' share of the CPU, steal) says why.

The rules were decided by measurement (benchmarks/separate_runs.py). How much a case feels the machine's change is
no fixed multiple of what the reference feels, and beside a neighbour not even bounded: a case and the reference
take a CPU hog's time slices in turn, so either may be slowed while the other is not. With no neighbour in sight it
stayed within bounds. So:

- **A neighbour gives no verdict.** Where some task waited for a CPU more than BUSY of the time while the case
  sampled, in either run (Linux's pressure stall information), and other processes used at least OTHERS of the CPU
  or what they used was not read, the row is INCONCLUSIVE with the line that says so: a neighbour's effect on a case
  is unknown, and two runs beside two neighbours are no better (the pressure says a neighbour is there, not what it
  does). A wait with other processes under OTHERS is the case's own threads beyond the cores (`run --threads 4` on 2
  cores): the reference runs in the same pools and feels it as the case does, so the verdict stands, and the line
  says whose the wait was. Where the kernel reports no pressure, other processes' share of the CPU,
  and the hypervisor's steal, may not differ by more than OS_MOVED.
- **A machine whose change is unknown, or beyond ×(1 + MAX_MOVE), gives no verdict** either, with the line "the
  machine ran 2.3× [2.2–2.4] slower during current.json".
- **Otherwise the machine's change is carried, never divided out**: the code's ratio is the case's over machine^s,
  for every machine ratio in its interval and every s from 0 to MAX_SENSITIVITY (a case that does not feel the
  machine at all, up to one that feels it twice as much), and the verdict is judged on the widest interval those
  allow. Identical code on a machine that ran much slower is then INCONCLUSIVE, while a change far beyond the
  machine's is still SLOWER. Each of the two intervals is taken at half the row's error, so the label is still
  wrong at most at the row's share of the family rate.

What it cannot see: a change of speed that only the case feels, with the machine steady (a worker process that drew
a worse thread placement), which a 10% margin mostly absorbs; a smaller margin on a shared machine needs `ab`. Files
without references (before schema 10) are compared as before, and say that the machine's change is not seen; a
neighbour the OS saw in the run that has one still gives no verdict. A file of schema 10 or later without the
reference of a case that takes one, where the other run has it (taken out by hand, or the fixed work could not be
set up there), gives that case no verdict: nothing tells it apart from a reference deleted to turn an INCONCLUSIVE
row into a pass. Missing from both runs, it is what a backend the fixed work cannot run on leaves: judged as a file
before schema 10. Where
the reference's speed is not the machine's (the runs timed different reference work, or ran a CPU case in thread
pools of different sizes, in which the reference runs too), its speed is not read, and each row is judged on its
own interval; the OS's account of a neighbour is the machine's whatever the pools, so a neighbour in either run
still gives no verdict.

Figures (how cases followed the machine, beside a neighbour and without; what the rules decided):
docs/measured.md, section "Separate runs: the machine beside the code"; worked examples:
docs/concepts/intervals.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

from asyncbench.results import units
from asyncbench.results.reference import Reference
from asyncbench.verdicts import ratio as ratios

# Said "held its speed" within ±5%: two quiet runs a minute apart put the references' ratio within ±2-3% when
# neither moved.
STEADY = 0.05
# The most a case may feel the machine's change, as a power of the machine's ratio (0: not at all): twice what the
# reference feels. With no neighbour in sight, cases followed the machine's moves of ×1.5-1.8 with 0.77-1.22; at moves
# of 5-8% the case's own run-to-run difference spread the measured power from -0.7 to 2.4 (docs/measured.md).
MAX_SENSITIVITY = 2.0
# A machine that moved by more than this between the runs (×2 either way) is beyond what was measured: no verdict.
# The quiet machine here moved up to ×1.83.
MAX_MOVE = 1.0
# A case that sampled while some task waited for a CPU more than this share of the time had a neighbour on its
# cores (Linux's pressure stall information, exact over a 30 ms window): on 2 cores, quiet runs read 0.00-0.14
# (0.00-0.10 since each case waits for a calm CPU first), runs beside one CPU hog 0.50-0.82.
BUSY = 0.15
# And other processes (not the case's own) used at least this share of all cores' time, where the OS said (the
# reference's `others_cpu`): below it the wait is the case's own threads beyond the cores (`run --threads 4` on 2
# cores, alone on the machine, read pressure 0.26 and others 0.00), not a neighbour. The reference runs in the
# case's own thread pools (measure.reference), so it feels that wait as the case does, and two runs in the same
# pools are compared as any others; a different pool size is told apart by the runs' thread variables (`_unread`).
# One CPU hog on 4 cores is an eighth of them, on 2 cores a half; the system's own daemons a few hundredths. Where
# others_cpu was not read (a file without it, the history's series), a wait past BUSY is a neighbour, as before.
# The one rule: the run's line (`beside_neighbour`), compare's and --baseline's verdicts (`_waited`), the history's
# discount and the row's own warning (engine.thread_pools.shared) all read it through `neighbour`.
OTHERS = 0.10
# Where the kernel reports no pressure: other processes' share of all cores' time (or the hypervisor's steal) may
# differ by no more than this between the runs (one CPU hog on 2 cores is 0.5; a quiet machine's background under
# 0.02).
OS_MOVED = 0.10


@dataclass(frozen=True)
class MachineChange:
    """The machine's change of speed between two runs while one case ran, and whether a verdict can be given."""

    ratio: float  # current reference / baseline reference (Hodges–Lehmann); > 1: the machine ran slower now
    interval: tuple[float, float] | None  # its interval (None: too few reference samples for one)
    moved: bool  # a neighbour in either run, a move beyond MAX_MOVE, or none known: no verdict
    why: str  # the line that says what the machine did and what that means for the verdict
    #: the OS saw a neighbour in either run: no verdict, and no more rounds of either run can give one
    neighbour: bool = False
    #: a run whose file should hold the case's reference holds none (taken out of it, or not taken there): no verdict
    missing: bool = False

    def code_interval(self, case: tuple[float, float] | None) -> tuple[float, float] | None:
        """The code's ratio interval: the case's over machine^s for every machine ratio in its interval and every s
        from 0 to MAX_SENSITIVITY (None where either has none, or the machine moved beyond a verdict)."""
        if self.moved:
            return None
        return carried(case, self.interval)


def carried(case: tuple[float, float] | None, machine: tuple[float, float] | None) -> tuple[float, float] | None:
    """A case's ratio interval with the machine's change carried (`machine`: the reference's ratio interval over the
    same two sides): the case's over machine^s for every machine ratio in its interval and every s from 0 to
    MAX_SENSITIVITY, since how much a case follows its reference is not known (None where either has none). The rule
    of MachineChange.code_interval, and of the history's change at the run its machine moved (history.at_move)."""
    if case is None or machine is None:
        return None
    felt = [1.0, *(m**MAX_SENSITIVITY for m in machine)]
    return case[0] / max(felt), case[1] / min(felt)


def change(
    baseline: Reference | None,
    current: Reference | None,
    confidence: float,
    names: tuple[str, str],
    pools: str | None = None,
    owed: tuple[bool, bool] = (False, False),
) -> MachineChange | str:
    """The machine's change between two runs' references of one case at `confidence`, or why there is none (a
    file without references). `names`: the two runs as the line names them (baseline, current). `pools`: how the
    runs' CPU thread pools differ (verdicts.environments.pools_changed), where they do for this case: the reference
    ran in them, so its speed is not read, and as with different reference work only a neighbour is judged: a
    MachineChange that gives no verdict where the OS saw one in either run, else why the machine is not seen.
    `owed`: whether each run's file should hold the case's reference (schema 10 or later, an ok case of a workload
    that takes one: verdicts.compare). One missing there while the other run has one gives no verdict (`missing`): a
    reference taken out of a baseline by hand must not turn a row the machine leaves undecided into one judged on its
    own interval. Missing from both, it is what a backend the fixed work cannot run on leaves (measure.reference.
    taker_for), and the rows are judged on their own intervals, as a file before schema 10's are.
    A run whose case waited for a CPU with other processes under OTHERS (its own threads beyond the cores: `own_threads`)
    is no neighbour: the line says so, and the verdict stands as between any two runs."""
    found = _change(baseline, current, confidence, names, pools, owed)
    own = [f"{said} in {name}" for name, r in zip(names, (baseline, current), strict=True) if (said := own_threads(r))]
    if not own:
        return found
    if isinstance(found, str):
        return f"{found}; {'; '.join(own)}"
    return dataclasses.replace(found, why=f"{found.why}; {'; '.join(own)}")


def _change(
    baseline: Reference | None,
    current: Reference | None,
    confidence: float,
    names: tuple[str, str],
    pools: str | None = None,
    owed: tuple[bool, bool] = (False, False),
) -> MachineChange | str:
    """`change`, before the line says where a case's own threads made it wait."""
    if (baseline is None) != (current is None) and owed[0 if baseline is None else 1]:
        return _missing(names[0 if baseline is None else 1], (baseline, current), names)
    if baseline is None or current is None:
        which = "either run" if baseline is None and current is None else names[0] if baseline is None else names[1]
        missing = f"no machine reference in {which} (a file before schema 10, or a backend the fixed work cannot run on)"
        # the other run's pressure is the OS's own account: a neighbour it saw there is one, reference or not
        waited = _waited((baseline, current), names)
        if waited is None:
            return f"{missing}: each row is judged on its own interval"
        return MachineChange(math.nan, None, True, f"{waited}; no verdict on this evidence ({missing})", neighbour=True)
    neighbour = _neighbour(baseline, current, names)
    if baseline.work == current.work and tuple(baseline.samples_s) == tuple(current.samples_s):
        # one run's reference on both sides (a file against itself): every sample is its own counterpart, so the
        # machine's ratio is exactly 1, [1, 1], whatever the rank interval of the two as independent runs says
        # (none, where the reference drifted: `reference t1.json/t1.json 1.00× [?]` read as a machine not pinned).
        # A neighbour in that run still gives no verdict: what it did to the case is unknown, whatever the reference.
        same = "the same reference samples in both runs: the machine's ratio is 1.00× [1.00–1.00]"
        if neighbour is not None:
            return MachineChange(1.0, (1.0, 1.0), True, f"{neighbour} ({same}); no verdict on this evidence", neighbour=True)
        return MachineChange(1.0, (1.0, 1.0), False, same)
    unread = _unread(baseline, current, pools)
    if unread is not None:
        said, means = unread
        if neighbour is None:
            return f"{said}: {means}"
        why = f"{neighbour}; no verdict on this evidence (the reference's speed is not read: {said})"
        return MachineChange(math.nan, None, True, why, neighbour=True)
    estimate, interval = ratios.hodges_lehmann(baseline.samples_s, current.samples_s, confidence)
    speed = _speed(estimate, interval, names)
    if neighbour is not None:
        return MachineChange(estimate, interval, True, f"{neighbour} ({speed}); no verdict on this evidence", neighbour=True)
    if interval is None:
        # 40 samples a side give an interval unless their rounds drifted together (verdicts.ratio counts them fewer)
        drifted = ratios.hodges_lehmann(baseline.samples_s, current.samples_s, confidence, independent=True)[1] is not None
        few = "its rounds drifted together, too few independent ones" if drifted else "too few reference samples"
        return MachineChange(estimate, interval, True, f"the machine's speed could not be pinned ({speed}: {few})")
    if interval[0] < 1 / (1 + MAX_MOVE) or interval[1] > 1 + MAX_MOVE:
        # the interval, not necessarily the estimate, reaches past the bound: `1.00× [0.895–13.9]` is not "beyond ×2"
        beyond = "beyond" if interval[0] > 1 + MAX_MOVE or interval[1] < 1 / (1 + MAX_MOVE) else "reaching beyond"
        return MachineChange(estimate, interval, True, f"{speed}: {beyond} ×{1 + MAX_MOVE:.3g}, no verdict on this evidence")
    if held(interval):
        return MachineChange(estimate, interval, False, f"the machine held its speed ({speed})")
    return MachineChange(estimate, interval, False, f"{speed}: carried by the code's interval")


def _missing(absent: str, references: tuple[Reference | None, Reference | None], names: tuple[str, str]) -> MachineChange:
    """No verdict where a run's file that should hold the case's reference holds none while the other run's has one:
    the machine's change is unknown, and unlike a file before schema 10 nothing says it was never taken (a neighbour
    the OS saw in the other run is said too)."""
    other = names[1] if absent == names[0] else names[0]
    why = (
        f"no machine reference in {absent}, though its schema stores one for each case of this workload and {other} "
        "has one (taken out of the file, or the fixed work could not be set up there): the machine's change between "
        "the runs is unknown"
    )
    waited = _waited(references, names)
    if waited is not None:
        return MachineChange(math.nan, None, True, f"{waited}; {why}; no verdict on this evidence", neighbour=True, missing=True)
    return MachineChange(math.nan, None, True, f"{why}; no verdict on this evidence", missing=True)


def _unread(baseline: Reference, current: Reference, pools: str | None) -> tuple[str, str] | None:
    """Why the references' speed is not the machine's, and what that means for the rows; None where it is."""
    if pools is not None:
        return pools, (
            "the reference ran in those pools too, so its speed is theirs as much as the machine's and the machine's "
            "change is not read from it: each row compares the code and its pools together, on its own interval, and a "
            "neighbour the OS saw in either run still gives no verdict"
        )
    if baseline.work != current.work:
        return f"the runs timed different reference work ({baseline.work!r}, {current.work!r})", (
            "each row is judged on its own interval, and a neighbour the OS saw in either run still gives no verdict"
        )
    return None


def held(interval: tuple[float, float] | None) -> bool:
    """Whether a machine's ratio interval lies within ±STEADY: it held its speed."""
    return interval is not None and interval[0] >= 1 / (1 + STEADY) and interval[1] <= 1 + STEADY


def _speed(estimate: float, interval: tuple[float, float] | None, names: tuple[str, str]) -> str:
    """'the machine ran 1.38× [1.33–1.43] slower during current.json': the references' ratio in words."""
    if interval is not None and interval[1] < 1:
        return f"the machine ran {units.ratio(1 / estimate)} {_bracket((1 / interval[1], 1 / interval[0]))} slower during {names[0]}"
    if interval is not None and interval[0] > 1:
        return f"the machine ran {units.ratio(estimate)} {_bracket(interval)} slower during {names[1]}"
    return f"reference {names[1]}/{names[0]} {units.ratio(estimate)} {_bracket(interval)}"


def _neighbour(baseline: Reference, current: Reference, names: tuple[str, str]) -> str | None:
    """What the OS saw of a neighbour while the case sampled, in either run, in words; None where it saw none. CPU
    pressure where both runs report it; else other processes' share of the CPU, and the hypervisor's steal, that
    differ between the runs."""
    if baseline.cpu_pressure is not None and current.cpu_pressure is not None:
        waited = _waited((baseline, current), names)
        if waited is not None:
            return waited
    elif _differ(baseline.others_cpu, current.others_cpu):
        return f"other processes used {_shares(baseline.others_cpu, current.others_cpu, names)} of the CPU"
    if _differ(baseline.steal, current.steal):
        return f"the hypervisor stole {_shares(baseline.steal, current.steal, names)} of the CPU"
    return None


def _waited(references: tuple[Reference | None, Reference | None], names: tuple[str, str]) -> str | None:
    """'a task waited for a CPU 99% of the time in now.json: a neighbour shared the cores', from each run's own CPU
    pressure where it reports one (a share of its own time: read without the other run's); None where none passed
    BUSY."""
    busy = [(name, share) for name, r in zip(names, references, strict=True) if (share := busy_share(r)) is not None]
    if not busy:
        return None
    said = " and ".join(f"{share * 100:.0f}% of the time in {name}" for name, share in busy)
    return f"a task waited for a CPU {said}: a neighbour shared the cores"


def busy_share(reference: Reference | None) -> float | None:
    """The share of the time some task waited for a CPU while the case sampled, where that was a neighbour by
    `neighbour`, so that this run gives no verdict against any other, as baseline or as current (`_waited`); None
    where it was not (its CPU pressure did not pass BUSY, was not read, or other processes used under OTHERS: the
    case's own threads). The one rule a run is judged alone by: other processes' share of the CPU and steal count
    only as a difference between two runs where no pressure was read."""
    if reference is None or not neighbour(reference.cpu_pressure, reference.others_cpu):
        return None
    return reference.cpu_pressure


def neighbour(cpu_pressure: float | None, others_cpu: float | None) -> bool:
    """Whether the OS saw a neighbour while a case sampled: some task waited for a CPU more than BUSY of the time,
    and other processes used at least OTHERS of the CPU, or what they used was not read. A wait with other
    processes under OTHERS is the case's own threads beyond the cores (`own_threads`), which the reference feels as
    the case does: no neighbour."""
    return cpu_pressure is not None and cpu_pressure > BUSY and (others_cpu is None or others_cpu >= OTHERS)


def own_threads(reference: Reference | None) -> str | None:
    """'some task waited for a CPU 26% of the time, other processes 0%: the case's own threads beyond the cores',
    where the wait passed BUSY but other processes used under OTHERS (no neighbour by `neighbour`); None otherwise."""
    if reference is None or reference.cpu_pressure is None or reference.others_cpu is None:
        return None
    if reference.cpu_pressure <= BUSY or neighbour(reference.cpu_pressure, reference.others_cpu):
        return None
    return (
        f"some task waited for a CPU {reference.cpu_pressure * 100:.0f}% of the time, other processes "
        f"{reference.others_cpu * 100:.0f}%: the case's own threads beyond the cores"
    )


def beside_neighbour(references: Sequence[Reference | None]) -> str | None:
    """One line for a whole run where some of its cases' references saw a neighbour by `busy_share`, the rule
    `compare` and `run --baseline` give no verdict by (None: none did): 'some cases ran beside a neighbour …: as a
    baseline they can give no verdict; rerun on a quiet machine'. `references`: each case's (None: it has none)."""
    seen = [r for r in references if r is not None]
    shares = [share for r in seen if (share := busy_share(r)) is not None]
    if not shares:
        return None
    low, high = min(shares), max(shares)
    how = f"{high * 100:.0f}%" if f"{low * 100:.0f}" == f"{high * 100:.0f}" else f"{low * 100:.0f}–{high * 100:.0f}%"
    return (
        f"{len(shares)} of {len(seen)} cases ran beside a neighbour (some task waited for a CPU {how} of the time, "
        f"more than {BUSY * 100:.0f}%, with other processes on {OTHERS * 100:.0f}% of the CPU or more): as a baseline, "
        "or against one, they can give no verdict (compare, run --baseline); rerun on a quiet machine"
    )


def _differ(old: float | None, new: float | None) -> bool:
    return old is not None and new is not None and abs(new - old) > OS_MOVED


def _shares(old: float | None, new: float | None, names: tuple[str, str]) -> str:
    return f"{(new or 0) * 100:.0f}% in {names[1]} and {(old or 0) * 100:.0f}% in {names[0]}"


def _bracket(interval: tuple[float, float] | None) -> str:
    return "[?]" if interval is None else f"[{units.ratio_end(interval[0])}–{units.ratio_end(interval[1])}]"
