"""Baseline comparison: match two reports' cases by id and give each variant a verdict against a margin.

Verdicts are the one vocabulary of `expect:` checks (pass, fail,
inconclusive); the label a person reads says why. Each variant's change is
the ratio of the medians (current / baseline) with its interval, and the
verdict is a test against the margin (`--max-regression`), never against
"no difference": SLOWER when the whole interval lies above 1 + margin,
FASTER when it lies below 1 / (1 + margin), SAME when it lies inside, and
INCONCLUSIVE otherwise (the samples cannot tell). Testing "different from
1, and the median beyond the margin" called a true +8% change SLOWER 11% of
the time at a 10% margin; against the margin it is SLOWER at most at the
stated rate.

The interval of the ratio comes from the two medians' distribution-free
intervals (stats.median_ci), each at half the row's error rate: [low of
current / high of baseline, high of current / low of baseline] holds when
both hold. Every row of a comparison shares one family-wise false-alarm
rate (results.budget, 1%), split evenly over the rows (Bonferroni).

Only SLOWER fails a gate, and so does a case that ran ok in the baseline but
errored or was skipped now (`lost`: a gate must not pass because the thing
it guards stopped running). Two reports with no case in common are an input
error. Cases on one side only, and environment differences, are listed.

What the interval can and cannot see: it treats every sample of both runs
as drawn from one fixed machine, so it sees the noise within each run. It
cannot see the machine changing speed between the runs (another tenant, a
clock change, a different host), which on a shared CI runner moved medians
by up to 178% between identical runs while each run's CI was ±1–3%. There,
gate with `asyncbench ab`, which pairs base and head round by round in one
run.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from asyncbench.errors import InputError
from asyncbench.results import budget, stats
from asyncbench.results.model import CLOCKS, OK, Report, Result, Verdict

#: what a row's label says, beside its verdict
SAME, FASTER, SLOWER, INCONCLUSIVE = "SAME", "FASTER", "SLOWER", "INCONCLUSIVE"
LABELS = (SAME, FASTER, SLOWER, INCONCLUSIVE)
#: each label's verdict: only a slowdown shown beyond the margin fails
VERDICTS = {SAME: Verdict.PASS, FASTER: Verdict.PASS, SLOWER: Verdict.FAIL, INCONCLUSIVE: Verdict.INCONCLUSIVE}

# 10%: above the run-to-run drift of a quiet, dedicated machine and below the
# regressions worth stopping a merge for. Shared CI runners drift far more between
# runs (up to 178% measured on a 2-core one, README "Use in CI"): gate with `ab` there.
DEFAULT_MAX_REGRESSION = 0.10
#: said under every comparison of two runs
INTERVAL_SEES = (
    "the intervals see the noise within each run, not the machine changing speed between the runs: on a shared machine "
    "gate with `asyncbench ab`, which pairs base and head round by round in one run"
)
# Environment facts that differ between any two commits and say nothing about the machine.
IGNORED_ENVIRONMENT = ("git_sha",)


@dataclass(frozen=True)
class VariantComparison:
    """One variant of one case, baseline against current, on one clock."""

    id: str
    variant: str
    baseline_s: float  # medians
    current_s: float
    ratio: float  # current / baseline; > 1 is slower
    ratio_ci: tuple[float, float] | None  # its interval at the row's share of the family rate; None: too few samples
    label: str  # SAME, FASTER, SLOWER or INCONCLUSIVE: the verdict and why

    @property
    def verdict(self) -> Verdict:
        return VERDICTS[self.label]


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
    #: the family-wise false-alarm rate the rows share, and the confidence of each row's interval
    family_error: float = budget.FAMILY_ERROR
    confidence: float = 1 - budget.FAMILY_ERROR

    @property
    def regressions(self) -> tuple[VariantComparison, ...]:
        """The rows that fail: slower beyond the margin, the whole interval."""
        return tuple(row for row in self.rows if row.verdict == Verdict.FAIL)

    @property
    def failed(self) -> bool:
        """Whether the comparison fails a gate: a significant slowdown, or a case lost since the baseline."""
        return bool(self.regressions or self.lost)


def parse_threshold(text: str) -> float:
    """'10%', '10' or '7.5%' -> 0.10, 0.10, 0.075 (InputError otherwise)."""
    raw = str(text).strip().removesuffix("%").strip()
    try:
        value = float(raw) / 100
    except ValueError:
        raise InputError(f"--max-regression {text!r}: expected a percentage such as 10% or 5") from None
    if not math.isfinite(value) or not 0 <= value < 10:
        raise InputError(f"--max-regression {text!r}: expected a percentage from 0% to 1000%")
    return value


def label_of(interval: tuple[float, float] | None, margin: float) -> str:
    """A ratio's label from its interval against the margin: SLOWER / FASTER only when the whole interval lies
    beyond it, SAME when the whole of it lies within, INCONCLUSIVE otherwise (and without an interval)."""
    if interval is None:
        return INCONCLUSIVE
    low, high = interval
    if low > 1 + margin:
        return SLOWER
    if high < 1 / (1 + margin):
        return FASTER
    if low >= 1 / (1 + margin) and high <= 1 + margin:
        return SAME
    return INCONCLUSIVE


def ratio_interval(old: Sequence[float], new: Sequence[float], confidence: float) -> tuple[float, float] | None:
    """The interval of median(new) / median(old) from two independent samples: each median's interval at half
    the error; None when either has too few samples for it or the baseline's reaches 0."""
    each = 1 - (1 - confidence) / 2
    old_ci, new_ci = stats.median_ci(old, each), stats.median_ci(new, each)
    if old_ci is None or new_ci is None or old_ci[0] <= 0:
        return None
    return new_ci[0] / old_ci[1], new_ci[1] / old_ci[0]


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def environment_changes(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    old, new = dict(_flatten(baseline)), dict(_flatten(current))
    return tuple(
        (key, old.get(key), new.get(key))
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key) and key not in IGNORED_ENVIRONMENT
    )


def _sample_pairs(base: Result, current: Result, clock: str) -> Iterator[tuple[str, Sequence[float], Sequence[float]]]:
    """(variant, baseline samples, current samples) of every variant with samples of `clock` on both sides."""
    for name, new in current.variants.items():
        old = base.variants.get(name)
        old_samples, new_samples = (getattr(v.samples, clock) if v is not None else None for v in (old, new))
        if old_samples and new_samples:
            yield name, old_samples, new_samples


def _rows(
    pairs: Sequence[tuple[str, str, Sequence[float], Sequence[float]]], max_regression: float, confidence: float
) -> Iterator[VariantComparison]:
    """Each (case id, variant, baseline samples, current samples) judged against the margin."""
    for case_id, name, old, new in pairs:
        old_median, new_median = statistics.median(old), statistics.median(new)
        if old_median <= 0:
            yield VariantComparison(case_id, name, old_median, new_median, math.nan, None, INCONCLUSIVE)
            continue
        interval = ratio_interval(old, new, confidence)
        yield VariantComparison(
            case_id, name, old_median, new_median, new_median / old_median, interval, label_of(interval, max_regression)
        )


def dumps(comparison: Comparison) -> str:
    """The comparison as JSON (NaN ratios as null)."""
    raw = dataclasses.asdict(comparison)
    for row, compared in zip(raw["rows"], comparison.rows, strict=True):
        row["ratio"] = row["ratio"] if math.isfinite(row["ratio"]) else None
        row["verdict"] = compared.verdict.value
    raw["regressions"] = [f"{r.id} {r.variant}" for r in comparison.regressions]
    raw["interval_sees"] = INTERVAL_SEES
    return json.dumps(raw, indent=1, allow_nan=False) + "\n"


def compare(
    baseline: Report,
    current: Report,
    max_regression: float = DEFAULT_MAX_REGRESSION,
    clock: str = "done_s",
    family_error: float = budget.FAMILY_ERROR,
) -> Comparison:
    """Every case present on both sides, variant by variant, plus what could not be compared; the rows share
    `family_error`."""
    if clock not in CLOCKS:
        raise InputError(f"unknown clock {clock!r}; one of {', '.join(CLOCKS)}")
    old = {r.id: r for r in baseline.results}
    new = {r.id: r for r in current.results}
    if old and new and not old.keys() & new.keys():
        raise InputError(
            f"the two results files have no case in common (baseline: {', '.join(list(old)[:3])}...; current: "
            f"{', '.join(list(new)[:3])}...): compare runs of the same config, both with or both without --quick"
        )
    pairs: list[tuple[str, str, Sequence[float], Sequence[float]]] = []
    not_comparable: list[tuple[str, str]] = []
    lost: list[tuple[str, str]] = []
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
        compared = [(case_id, name, old_samples, new_samples) for name, old_samples, new_samples in _sample_pairs(base, result, clock)]
        if not compared:
            not_comparable.append((case_id, f"no {clock} samples on both sides"))
        missing = sorted(set(base.variants) ^ set(result.variants))
        if missing:
            not_comparable.append((case_id, f"variants on one side only: {', '.join(missing)}"))
        pairs += compared
    confidence = 1 - family_error / max(len(pairs), 1)
    return Comparison(
        clock=clock,
        max_regression=max_regression,
        rows=tuple(_rows(pairs, max_regression, confidence)),
        family_error=family_error,
        confidence=confidence,
        only_in_baseline=tuple(i for i in old if i not in new),
        only_in_current=tuple(i for i in new if i not in old),
        not_comparable=tuple(not_comparable),
        environment_changes=environment_changes(baseline.environment, current.environment),
        lost=tuple(lost),
    )
