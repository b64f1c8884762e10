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
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

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
    p_value: float | None  # None: within the threshold (p decides nothing there), or too few samples for the test
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


def p_values(pairs: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[float | None]:
    """Two-sided Mann-Whitney U p-values of many (baseline, current) sample pairs; None where a side has
    fewer than 2 samples.

    One scipy call per pair costs 0.6 ms of its own, which made comparing a 10,000-case sweep take 8 s; so
    pairs go to scipy in one vectorized call per group of equal sizes and equal presence of ties (what
    scipy's 'auto' method chooses the exact or the asymptotic test by), each p the same as its own call's.
    """
    import numpy as np  # imported here, as scipy: only comparisons need them
    from scipy.stats import mannwhitneyu

    found: list[float | None] = [None] * len(pairs)
    groups: dict[tuple[int, int, bool], list[int]] = defaultdict(list)
    for index, (old, new) in enumerate(pairs):
        if len(old) >= 2 and len(new) >= 2:
            tied = len({*old, *new}) < len(old) + len(new)
            groups[(len(old), len(new), tied)].append(index)
    for members in groups.values():
        result = mannwhitneyu(
            np.array([pairs[i][1] for i in members]), np.array([pairs[i][0] for i in members]), alternative="two-sided", axis=1
        )
        for index, value in zip(members, np.atleast_1d(result.pvalue).tolist(), strict=True):
            found[index] = value if math.isfinite(value) else 1.0
    return found


def _within(ratio: float, max_regression: float) -> bool:
    """Whether a change of the median is inside the threshold (SAME, whatever the noise)."""
    return 1 / (1 + max_regression) <= ratio <= 1 + max_regression


def label(ratio: float, p: float | None, max_regression: float) -> str:
    """SLOWER/FASTER only when the change is beyond the threshold and significant."""
    if _within(ratio, max_regression):
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


def _sample_pairs(base: Result, current: Result, clock: str) -> Iterator[tuple[str, Sequence[float], Sequence[float]]]:
    """(variant, baseline samples, current samples) of every variant with samples of `clock` on both sides."""
    for name, new in current.variants.items():
        old = base.variants.get(name)
        old_samples, new_samples = (getattr(v.samples, clock) if v is not None else None for v in (old, new))
        if old_samples and new_samples:
            yield name, old_samples, new_samples


def _rows(pairs: Sequence[tuple[str, str, Sequence[float], Sequence[float]]], max_regression: float) -> Iterator[VariantComparison]:
    """Each (case id, variant, baseline samples, current samples) judged.

    A p-value is computed where it decides the verdict, a change beyond the threshold (all of them at once):
    within it a row is SAME whatever p says, and a p shown there only invites reading it as a verdict.
    Comparing two runs of an unchanged 10,000-case sweep then never loads scipy.stats (a second of import).
    """
    medians = [(statistics.median(old), statistics.median(new)) for _, _, old, new in pairs]
    beyond = [i for i, (old, new) in enumerate(medians) if old > 0 and not _within(new / old, max_regression)]
    found = dict(zip(beyond, p_values([(pairs[i][2], pairs[i][3]) for i in beyond]), strict=True)) if beyond else {}
    for index, ((case_id, name, _, _), (old_median, new_median)) in enumerate(zip(pairs, medians, strict=True)):
        if old_median <= 0:
            yield VariantComparison(case_id, name, old_median, new_median, math.nan, None, INCONCLUSIVE)
            continue
        ratio, p = new_median / old_median, found.get(index)
        yield VariantComparison(case_id, name, old_median, new_median, ratio, p, label(ratio, p, max_regression))


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
    return Comparison(
        clock=clock,
        max_regression=max_regression,
        rows=tuple(_rows(pairs, max_regression)),
        only_in_baseline=tuple(i for i in old if i not in new),
        only_in_current=tuple(i for i in new if i not in old),
        not_comparable=tuple(not_comparable),
        environment_changes=environment_changes(baseline.environment, current.environment),
        lost=tuple(lost),
    )
