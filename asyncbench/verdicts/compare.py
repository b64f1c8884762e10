"""Baseline comparison: match two reports' cases by id and give each variant a verdict against a margin.

Verdicts are the one vocabulary of `expect:` checks (pass, fail,
inconclusive); the label a person reads says why. Each variant's change is
the ratio current / baseline of its times, estimated as Hodges–Lehmann on
log times with its exact rank interval (verdicts.ratio), and the verdict is
a test against the margin (`--max-regression`), never against "no
difference", decided where `ab`'s verdicts are (verdicts.margin.label_of,
in the words of results.labels.Label): SLOWER when the whole interval lies
above 1 + margin, a pass (SAME, FASTER or NOT SLOWER) when it lies below,
and INCONCLUSIVE when it reaches across (or there is none: too few
samples).

The ratio shown is exp(Hodges–Lehmann), not the ratio of the two medians:
it lies within the interval it is judged by, though not always at its
centre (the medians' ratio can lie outside that interval when one side has
few samples), and it uses every pair of samples, so it moves less from run
to run.

The error budget. Every row of a comparison shares one family-wise rate
(results.budget, 1%), split evenly over the rows (Bonferroni): a row's
share is α = family / rows. The gate's question is one-sided (is it slower
than 1 + margin?), and so is every label: each says the ratio lies on one
side of a bound (SLOWER: above 1 + margin; NOT SLOWER: below it; FASTER:
below 1 / (1 + margin); SAME: between the two), and for any true ratio a
label is wrong only when the interval misses it on one particular side. So
each row's interval is two-sided at 1 − 2α, α in each tail, and the chance
that any row of the comparison says something wrong is at most the family
rate. (Before, the interval was two-sided at 1 − α: half of its budget
guarded a side no label needed.)

SLOWER fails a gate, and so does a case that ran ok in the baseline but
errored or was skipped now (`lost`: a gate must not pass because the thing
it guards stopped running), and INCONCLUSIVE unless the caller allows it
(`allow_inconclusive`): a gate that cannot tell must not pass silently, in
`compare`, `run --baseline`, `run`'s checks and `ab` alike. Two reports
with no case in common are an input error. Cases on one side only, and
environment differences, are listed.

What the interval can and cannot see: a case's own interval treats every
sample of both runs as drawn from one fixed machine (rounds that drift
together widen it), so it sees the noise within each run. It cannot see the
machine changing speed between the runs (another tenant, a clock change, a
neighbour that came and went), which on a shared CI runner moves medians
between identical runs far more than each run's own interval is wide. So each
case also times a fixed reference work between its rounds (schema 10), and
verdicts.machine judges the machine's change between the runs from it (and
from the CPU pressure each run saw): the machine's change is carried by the
row's interval (each interval at half the row's error), and a neighbour in
one run only, or a machine beyond what was measured, makes the row
INCONCLUSIVE with a line that says what the machine did, that the interval it
prints is the case's own (the machine's not taken out), and why no interval,
however far past the margin, decides it (verdicts.row_interval).
Files without references are compared as before, with that caveat, and so are
CPU cases of runs whose thread pools differ (`run --threads`: the reference ran
in those pools too, so its speed is not the machine's), except that a
neighbour the OS saw in either run still makes the row INCONCLUSIVE. `asyncbench
ab`, which pairs base and head round by round in one run, still gates
finer margins than separate runs can.

Figures (how far identical runs moved, and each gate's false failures):
docs/measured.md, section "How flaky is each gate".
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from asyncbench.errors import InputError
from asyncbench.results import budget, reference
from asyncbench.results.labels import Label
from asyncbench.results.model import CLOCKS, OK, CaseIdentity, Result, Verdict
from asyncbench.results.schema import Report
from asyncbench.verdicts import environments, row_interval
from asyncbench.verdicts import machine as machines
from asyncbench.verdicts import ratio as ratios
from asyncbench.verdicts.margin import label_of

# 10%: above the run-to-run drift of a quiet, dedicated machine and below the
# regressions worth stopping a merge for. Shared CI runners drift far more between
# runs (up to 178% measured on a 2-core one, docs/guides/ci.md): gate with `ab` there.
DEFAULT_MAX_REGRESSION = 0.10
#: said under every comparison of two runs
INTERVAL_SEES = (
    "each case's interval sees the noise within each run; the machine's change between the runs is judged from a "
    "fixed reference work timed beside each case and the CPU pressure it saw, and carried by each row's interval; "
    "files without it do not see the machine change: for margins under 10% gate with `asyncbench ab`, which pairs "
    "base and head round by round in one run"
)


@dataclass(frozen=True)
class VariantComparison:
    """One variant of one case, baseline against current, on one clock."""

    id: str
    variant: str
    baseline_s: float  # medians
    current_s: float
    ratio: float  # current / baseline (exp of Hodges–Lehmann on log times); > 1 is slower
    ratio_ci: tuple[float, float] | None  # its interval at the row's share of the family rate; None: too few samples
    label: Label  # the verdict and why
    note: str | None = None  # why there is no interval (too few samples: how many it needs), where there is none
    #: the case's own ratio and interval, before the machine's change is carried (= ratio, ratio_ci without a reference)
    case_ratio: float = math.nan
    case_ci: tuple[float, float] | None = None
    #: the machine's change between the runs while the case ran (verdicts.machine): its reference ratio, interval,
    #: whether it moved, and the line that says so; None without references on both sides
    machine_ratio: float | None = None
    machine_ci: tuple[float, float] | None = None
    machine_moved: bool | None = None
    machine: str | None = None
    #: the OS saw a neighbour in either run while the case sampled: INCONCLUSIVE, and more rounds cannot decide it
    machine_neighbour: bool = False
    #: a file that should hold the case's machine reference holds none (verdicts.machine): INCONCLUSIVE
    machine_missing: bool = False
    #: INCONCLUSIVE where the machine's change, carried, reaches across 1 + margin by itself (the code's interval of
    #: the case's point alone does): more rounds of the case cannot decide it, a steadier machine may
    machine_carried: bool = False
    #: which interval ratio_ci is (verdicts.row_interval): the code's (CODE), the case's own with the machine unseen
    #: (CASE), or the case's own beside a machine read but not taken out, which gives no verdict (CASE_BESIDE_MACHINE)
    interval_is: str = row_interval.CASE
    #: both sides' samples are the very same measurement (one file's samples read twice: a shard and the file merged
    #: from it, a run and a copy with a new run_id): the row compares them with themselves, as a same run's rows do
    same_samples: bool = False

    @property
    def verdict(self) -> Verdict:
        return self.label.verdict


@dataclass(frozen=True)
class Comparison:
    clock: str
    max_regression: float
    rows: tuple[VariantComparison, ...]
    only_in_baseline: tuple[str, ...]
    only_in_current: tuple[str, ...]
    not_comparable: tuple[tuple[str, str], ...]  # (id, why)
    environment_changes: tuple[tuple[str, Any, Any], ...]  # (key, baseline, current)
    lost: tuple[tuple[str, str], ...] = ()  # (id, why): ok in the baseline, not ok now — fails the gate
    #: the family-wise false-alarm rate the rows share, and the confidence of each row's (two-sided) interval:
    #: 1 − 2 × the row's share, each one-sided label wrong at most at the share (the module's docstring)
    family_error: float = budget.FAMILY_ERROR
    confidence: float = 1 - 2 * budget.FAMILY_ERROR
    #: whether an INCONCLUSIVE row lets the gate pass (--allow-inconclusive)
    allow_inconclusive: bool = False
    #: both files are one run (the same run_id: a file compared with itself or its copy): the rows compare its samples
    #: with themselves, so their verdicts show what the method gives, never a change. The verdicts stand as judged
    same_run: bool = False
    #: the cases that ran ok in both files with no samples of `clock` to pair (a CPU run's device_s): no row of theirs
    without_clock: tuple[str, ...] = ()

    @property
    def same_samples(self) -> bool:
        """Whether every row compares samples identical on both sides (the same measurement read twice, under two
        run_ids: a shard and the file `merge` made of it): its verdicts, as a same run's, show what the method gives,
        never a change. False where no row was compared."""
        return bool(self.rows) and all(row.same_samples for row in self.rows)

    @property
    def regressions(self) -> tuple[VariantComparison, ...]:
        """The rows that fail: slower beyond the margin, the whole interval."""
        return tuple(row for row in self.rows if row.verdict == Verdict.FAIL)

    @property
    def inconclusive(self) -> tuple[VariantComparison, ...]:
        """The rows whose interval reaches across 1 + margin, or that have none."""
        return tuple(row for row in self.rows if row.verdict == Verdict.INCONCLUSIVE)

    @property
    def failed(self) -> bool:
        """Whether the comparison fails a gate: a significant slowdown, a case lost since the baseline, a row
        that cannot tell (unless allowed), or no row at all (a clock neither file has, every case skipped): a gate
        that compared nothing has passed nothing."""
        return bool(self.regressions or self.lost or (self.inconclusive and not self.allow_inconclusive) or not self.rows)


# The device specs a planned case's id keeps as it runs: another (auto, cuda) names the device the case resolves to on
# the machine (cuda:0, or cpu where there is no GPU), and its params may follow that device, so its planned id may
# not be the id it is saved under.
EXACT_DEVICES = ("cpu",)


def planned_problem(baseline: Report, planned: Sequence[CaseIdentity]) -> str | None:
    """Why a run of the `planned` cases cannot be compared with `baseline`, known before anything runs: none of them
    can be a case of the baseline (compare's 'no case in common', else said only after the whole plan ran). A planned
    case on a device resolved where it runs (not EXACT_DEVICES) may be any baseline case of its experiment and backend.
    None where some case may be compared (or either side has none)."""
    old = [result.id for result in baseline.results]
    if not old or not planned:
        return None
    loose = {(result.experiment, result.backend) for result in baseline.results}
    for case in planned:
        if case.id in old or (case.device not in EXACT_DEVICES and (case.experiment, case.backend) in loose):
            return None
    return (
        f"--baseline has no case in common with this run's plan (baseline: {_some(list(old))}; "
        f"planned: {_some([case.id for case in planned])}): "
        "compare runs of the same config, both with or both without --quick"
    )


#: the case ids an error names of a side before it says how many more there are
SOME_IDS = 3


def _some(ids: Sequence[str]) -> str:
    """The first SOME_IDS ids, and how many more (never '...' after a whole list: a trial read three of three so)."""
    more = len(ids) - SOME_IDS
    return ", ".join(ids[:SOME_IDS]) + (f" and {more} more" if more > 0 else "")


def ratio_interval(old: Sequence[float], new: Sequence[float], confidence: float) -> tuple[float, float] | None:
    """The interval of the ratio new / old of two independent samples of times (verdicts.ratio: Hodges–Lehmann on
    log times, its exact rank interval, widened for rounds that drift together); None when there are too few
    samples for one at `confidence`, or a time is not positive."""
    try:
        return ratios.hodges_lehmann(old, new, confidence)[1]
    except ValueError:
        return None


def _sample_pairs(base: Result, current: Result, clock: str) -> Iterator[tuple[str, Sequence[float], Sequence[float]]]:
    """(variant, baseline samples, current samples) of every variant with samples of `clock` on both sides."""
    for name, new in current.variants.items():
        old = base.variants.get(name)
        old_samples, new_samples = (getattr(v.samples, clock) if v is not None else None for v in (old, new))
        if old_samples and new_samples:
            yield name, old_samples, new_samples


def _without(base: Result, current: Result, clock: str) -> str:
    """Which side of a case has no samples of `clock`: 'neither file has any', 'the baseline has none'."""
    has = [any(getattr(v.samples, clock) for v in side.variants.values()) for side in (base, current)]
    if not any(has):
        return "neither file has any"
    if has == [False, True]:
        return "the baseline has none"
    if has == [True, False]:
        return "the current run has none"
    return "no variant has them on both sides"


Pair = tuple[str, str, Sequence[float], Sequence[float], "machines.MachineChange | str"]


def _rows(pairs: Sequence[Pair], max_regression: float, confidence: float) -> Iterator[VariantComparison]:
    """Each (case id, variant, baseline samples, current samples, the machine's change or why it is not seen) judged
    against the margin: on the case's own interval where the machine is not seen; where it is (or a neighbour is, its
    speed unread), INCONCLUSIVE if it moved beyond a verdict, else on the code's interval, which carries its change
    (verdicts.machine), each of the two intervals at half the row's error."""
    for case_id, name, old, new, machine in pairs:
        old_median, new_median = statistics.median(old), statistics.median(new)
        same = tuple(old) == tuple(new)  # one measurement read twice (a shard and its merge): said, verdict kept
        if min(old) <= 0 or min(new) <= 0:
            why = "a time of 0 or less (below the clock's resolution) has no ratio"
            yield VariantComparison(case_id, name, old_median, new_median, math.nan, None, Label.INCONCLUSIVE, why, same_samples=same)
            continue
        seen = None if isinstance(machine, str) else machine
        level = confidence if seen is None else row_interval.half_error(confidence)
        estimate, interval = ratios.hodges_lehmann(old, new, level)
        judged, note = interval, row_interval.why_none(old, new, level, interval, confidence)
        printed, carried = row_interval.CASE, False
        if seen is not None and seen.moved:
            judged, note, printed = None, row_interval.undecided(seen, interval, level), row_interval.CASE_BESIDE_MACHINE
        elif seen is not None:
            judged, printed = seen.code_interval(interval), row_interval.CODE
            straddles = label_of(judged, max_regression) == Label.INCONCLUSIVE
            carried = straddles and label_of(seen.code_interval((estimate, estimate)), max_regression) == Label.INCONCLUSIVE
        yield VariantComparison(
            case_id,
            name,
            old_median,
            new_median,
            estimate,
            judged if judged is not None else interval,
            label_of(judged, max_regression),
            note,
            case_ratio=estimate,
            case_ci=interval,
            machine_ratio=seen.ratio if seen is not None and math.isfinite(seen.ratio) else None,
            machine_ci=seen.interval if seen is not None else None,
            machine_moved=seen.moved if seen is not None else None,
            machine=seen.why if seen is not None else str(machine),
            machine_neighbour=seen is not None and seen.neighbour,
            machine_missing=seen is not None and seen.missing,
            machine_carried=carried,
            interval_is=printed,
            same_samples=same,
        )


def _owes_reference(report: Report, result: Result) -> bool:
    """Whether `report`'s file should hold `result`'s machine reference: a file of schema 10 or later stores one for
    each ok case of a workload that takes one (results.reference.takes_reference)."""
    return report.schema_version >= reference.FIRST_SCHEMA and result.status == OK and reference.takes_reference(result.workload)


def samples_needed(baseline: Report, family_error: float = budget.FAMILY_ERROR) -> int:
    """The fewest samples a run compared with `baseline` must take for every row to have an interval (at the
    confidence of a comparison with as many rows as the baseline has variants; at least 1)."""
    counts = [len(v.samples.done_s) for r in baseline.results if r.status == OK for v in r.variants.values() if v.samples.done_s]
    if not counts:
        return 1
    confidence = 1 - 2 * family_error / len(counts)
    return ratios.samples_needed(min(counts), confidence) or 1


def dumps(comparison: Comparison) -> str:
    """The comparison as JSON (NaN ratios as null)."""
    raw = dataclasses.asdict(comparison)
    for row, compared in zip(raw["rows"], comparison.rows, strict=True):
        for key in ("ratio", "case_ratio", "machine_ratio"):
            row[key] = row[key] if row[key] is not None and math.isfinite(row[key]) else None
        row["verdict"] = compared.verdict.value
    raw["regressions"] = [f"{r.id} {r.variant}" for r in comparison.regressions]
    raw["inconclusive"] = [f"{r.id} {r.variant}" for r in comparison.inconclusive]
    raw["failed"] = comparison.failed
    raw["same_samples"] = comparison.same_samples
    raw["interval_sees"] = INTERVAL_SEES
    return json.dumps(raw, indent=1, allow_nan=False) + "\n"


def compare(
    baseline: Report,
    current: Report,
    max_regression: float = DEFAULT_MAX_REGRESSION,
    clock: str = "done_s",
    family_error: float = budget.FAMILY_ERROR,
    allow_inconclusive: bool = False,
    names: tuple[str, str] = ("the baseline", "the current run"),
) -> Comparison:
    """Every case present on both sides, variant by variant, plus what could not be compared; the rows share
    `family_error`, each row's interval at 1 − 2 × its share (the module's docstring). An INCONCLUSIVE row fails
    the comparison unless `allow_inconclusive`. `names`: the two runs as the machine's line names them (files)."""
    if clock not in CLOCKS:
        raise InputError(f"unknown clock {clock!r}; one of {', '.join(CLOCKS)}")
    old = {r.id: r for r in baseline.results}
    new = {r.id: r for r in current.results}
    if old and new and not old.keys() & new.keys():
        raise InputError(
            f"the two results files have no case in common (baseline: {_some(list(old))}; current: {_some(list(new))}): "
            "compare runs of the same config, both with or both without --quick"
        )
    compared_cases: list[tuple[Result, Result, list[tuple[str, Sequence[float], Sequence[float]]]]] = []
    not_comparable: list[tuple[str, str]] = []
    lost: list[tuple[str, str]] = []
    without_clock: list[str] = []
    for case_id, result in new.items():
        base = old.get(case_id)
        if base is None:
            continue
        if base.status == OK and result.status != OK:
            lost.append((case_id, f"ok in the baseline, {result.status} now: {result.reason or 'no reason given'}"))
            continue
        if base.status != OK or result.status != OK:
            not_comparable.append((case_id, f"baseline {base.status}, current {result.status}"))
            continue
        compared = list(_sample_pairs(base, result, clock))
        if not compared:
            not_comparable.append((case_id, f"no {clock} samples to pair: {_without(base, result, clock)}"))
            without_clock.append(case_id)
        missing = sorted(set(base.variants) ^ set(result.variants))
        if missing:
            not_comparable.append((case_id, f"variants on one side only: {', '.join(missing)}"))
        compared_cases.append((base, result, compared))
    rows = sum(len(compared) for _, _, compared in compared_cases)
    confidence = 1 - 2 * family_error / max(rows, 1)
    pairs: list[Pair] = []
    pools = environments.pools_changed(baseline.environment, current.environment)
    for base, result, compared in compared_cases:
        # a CPU case's reference ran in the case's pools: its speed is theirs as much as the machine's, and only a
        # neighbour is read from it
        unread = pools if result.device.startswith("cpu") else None
        owed = (_owes_reference(baseline, base), _owes_reference(current, result))
        machine = machines.change(base.reference, result.reference, row_interval.half_error(confidence), names, unread, owed)
        pairs += [(result.id, name, old_samples, new_samples, machine) for name, old_samples, new_samples in compared]
    return Comparison(
        clock=clock,
        max_regression=max_regression,
        rows=tuple(_rows(pairs, max_regression, confidence)),
        family_error=family_error,
        confidence=confidence,
        only_in_baseline=tuple(i for i in old if i not in new),
        only_in_current=tuple(i for i in new if i not in old),
        not_comparable=tuple(not_comparable),
        environment_changes=environments.changes(baseline.environment, current.environment),
        lost=tuple(lost),
        allow_inconclusive=allow_inconclusive,
        same_run=bool(baseline.run_id) and baseline.run_id == current.run_id,
        without_clock=tuple(without_clock),
    )
