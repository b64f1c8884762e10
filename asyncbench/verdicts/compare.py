"""Baseline comparison: match two reports' cases by id and give each variant a verdict.

Verdicts are the one vocabulary of `expect:` checks (pass, fail,
inconclusive); the label a person reads says why: SAME (within the
threshold: pass), FASTER (beyond it and significant: pass), SLOWER (beyond
it and significant: fail), INCONCLUSIVE (beyond it, but the samples cannot
tell it from noise: never a failure here). Significance is a test on the
raw samples (Mann-Whitney U, two-sided: distribution-free, so skewed timing
distributions and outliers do not fool it). Only SLOWER fails a gate, and so does a case that ran ok in the baseline but
errored or was skipped now (`lost`: a gate must not pass because the thing
it guards stopped running). Two reports with no case in common are an input
error. Cases on one side only, and environment differences, are listed.

What the p-value can and cannot see: it treats every sample of both runs as
drawn from one fixed machine, so it sees the noise within each run. It
cannot see the machine changing speed between the runs (another tenant, a
clock change, a different host), which on a shared CI runner moved medians
by up to 91% between identical runs while each run's CI was ±1–3%. A tiny p
there says the runs differ, not that the code did: compare runs from one
quiet, dedicated machine, and gate shared runners with ratios measured
within one run (`expect:`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from asyncbench.errors import InputError
from asyncbench.results.model import CLOCKS, OK, Report, Result, Verdict

#: what a row's label says, beside its verdict
SAME, FASTER, SLOWER, INCONCLUSIVE = "SAME", "FASTER", "SLOWER", "INCONCLUSIVE"
LABELS = (SAME, FASTER, SLOWER, INCONCLUSIVE)
#: each label's verdict: only a significant slowdown beyond the threshold fails
VERDICTS = {SAME: Verdict.PASS, FASTER: Verdict.PASS, SLOWER: Verdict.FAIL, INCONCLUSIVE: Verdict.INCONCLUSIVE}

# 10%: above the run-to-run drift of a quiet, dedicated machine and below the
# regressions worth stopping a merge for. Shared CI runners drift far more
# (up to 91% measured on a 2-core one, README "Use in CI"): gate with ratios there.
DEFAULT_MAX_REGRESSION = 0.10
# A gate is run on every commit, so a false alarm is expensive: demand p < 1%.
SIGNIFICANCE = 0.01
#: said wherever a p-value is shown
P_VALUE_SEES = (
    "p is the chance of a difference this large from the noise within the runs; it cannot see the machine changing "
    "speed between them, so on a shared machine a small p does not mean the code changed"
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
    p_value: float | None  # None: too few samples for the test to decide anything
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

    @property
    def regressions(self) -> tuple[VariantComparison, ...]:
        """The rows that fail: significantly slower beyond the threshold."""
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


def p_value(baseline: tuple[float, ...], current: tuple[float, ...]) -> float | None:
    """Two-sided Mann-Whitney U p-value of the raw samples; None if it cannot be computed."""
    from scipy.stats import mannwhitneyu  # imported here: only comparisons need scipy

    if len(baseline) < 2 or len(current) < 2:
        return None
    result = mannwhitneyu(current, baseline, alternative="two-sided")
    value = float(result.pvalue)
    return value if math.isfinite(value) else 1.0


def label(ratio: float, p: float | None, max_regression: float) -> str:
    """SLOWER/FASTER only when the change is beyond the threshold and significant."""
    if ratio <= 1 + max_regression and ratio >= 1 / (1 + max_regression):
        return SAME
    if p is None or p >= SIGNIFICANCE:
        return INCONCLUSIVE
    return SLOWER if ratio > 1 else FASTER


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


def _variants(base: Result, current: Result, clock: str, max_regression: float) -> Iterator[VariantComparison]:
    for name, new in current.variants.items():
        old = base.variants.get(name)
        old_samples, new_samples = (getattr(v.samples, clock) if v is not None else None for v in (old, new))
        if not old_samples or not new_samples:
            continue
        old_median, new_median = statistics.median(old_samples), statistics.median(new_samples)
        if old_median <= 0:
            yield VariantComparison(current.id, name, old_median, new_median, math.nan, None, INCONCLUSIVE)
            continue
        ratio = new_median / old_median
        p = p_value(tuple(old_samples), tuple(new_samples))
        yield VariantComparison(current.id, name, old_median, new_median, ratio, p, label(ratio, p, max_regression))


def dumps(comparison: Comparison) -> str:
    """The comparison as JSON (NaN ratios as null)."""
    raw = dataclasses.asdict(comparison)
    for row, compared in zip(raw["rows"], comparison.rows, strict=True):
        row["ratio"] = row["ratio"] if math.isfinite(row["ratio"]) else None
        row["verdict"] = compared.verdict.value
    raw["regressions"] = [f"{r.id} {r.variant}" for r in comparison.regressions]
    raw["p_value_sees"] = P_VALUE_SEES
    return json.dumps(raw, indent=1, allow_nan=False) + "\n"


def compare(baseline: Report, current: Report, max_regression: float = DEFAULT_MAX_REGRESSION, clock: str = "done_s") -> Comparison:
    """Every case present on both sides, variant by variant, plus what could not be compared."""
    if clock not in CLOCKS:
        raise InputError(f"unknown clock {clock!r}; one of {', '.join(CLOCKS)}")
    old = {r.id: r for r in baseline.results}
    new = {r.id: r for r in current.results}
    if old and new and not old.keys() & new.keys():
        raise InputError(
            f"the two results files have no case in common (baseline: {', '.join(list(old)[:3])}...; current: "
            f"{', '.join(list(new)[:3])}...): compare runs of the same config, both with or both without --quick"
        )
    rows: list[VariantComparison] = []
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
        compared = list(_variants(base, result, clock, max_regression))
        if not compared:
            not_comparable.append((case_id, f"no {clock} samples on both sides"))
        missing = sorted(set(base.variants) ^ set(result.variants))
        if missing:
            not_comparable.append((case_id, f"variants on one side only: {', '.join(missing)}"))
        rows += compared
    return Comparison(
        clock=clock,
        max_regression=max_regression,
        rows=tuple(rows),
        only_in_baseline=tuple(i for i in old if i not in new),
        only_in_current=tuple(i for i in new if i not in old),
        not_comparable=tuple(not_comparable),
        environment_changes=environment_changes(baseline.environment, current.environment),
        lost=tuple(lost),
    )
