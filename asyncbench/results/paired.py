"""What `asyncbench ab` yields: each case measured on two sides, round by round, as paired ratios with verdicts.

A side is one worker process with its own source tree (a git revision),
interpreter and environment. In every round both sides take one sample of
each variant, so each round gives one paired ratio head/base per variant
(and per timing or rate metric); the verdict comes from the interval of
those paired ratios against the margin (verdicts.margin.label_of), never
from two separate medians; the interval's unit is the block of fresh
processes, not the round (results.blocks).
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from asyncbench.results import fields
from asyncbench.results.labels import Label
from asyncbench.results.model import Case, Verdict
from asyncbench.results.syncs import SyncPoint

# 1 — first version. 2 — `run_id` (uuid4 hex, made with the report): the run's identity in the history, so two
# `ab` runs that end in the same second are two runs (files of version 1 are keyed by their whole content).
# 3 — verdicts from blocks of fresh processes (results.blocks): `ratio` is the blocks' mean, `confidence` each
# interval's two-sided level, a case's `problems` (verification) and `needed_s`; labels add NOT SLOWER.
# 4 — each case's `workload`, `backend`, `device` and `params`, as results files state them: before, a reader
# parsed them out of the case id (whose name is the experiment's, not the workload's) and the params were lost.
# 5 — a case's `new_syncs` (`ab --syncs`): the sync points where head's step waits and base's does not, each
# {variant, point} with the point as results.syncs stores one (its file relative to head's tree); null where no
# census was asked for, as in older files.
AB_SCHEMA_VERSION = 5
VARIANT, METRIC = "variant", "metric"


@dataclass(frozen=True)
class Side:
    """One side of a comparison as the report states it: what ran, from where, under what."""

    name: str  # "base" or "head"
    revision: str  # "a1b2c3d (origin/main)" or "working tree"
    python: str
    python_version: str
    environment: Mapping[str, str] = field(default_factory=dict)  # the variables set for this side (--base-env)
    #: what the side's worker runs on: versions, threads, CPU (engine.environment, captured in the worker)
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PairedRatio:
    """One variant's done time, or one metric, head against base: the median paired ratio and its interval.

    `ratio` > 1 is slower for every kind (a rate such as GFLOP/s is
    inverted: base / head), so one rule reads them all. `base` and `head`
    are the medians on each side in `unit`.
    """

    name: str
    kind: str  # VARIANT or METRIC
    unit: str
    base: float
    head: float
    ratio: float
    ratio_ci: tuple[float, float] | None
    label: Label  # decided by verdicts.margin.label_of from `ratio_ci` and the margin
    #: each block's number, in block order: the median log paired ratio of its rounds (engine.paired), the sample
    #: `ratio` and `ratio_ci` come from; its spread is what a case's margin must allow (configs' ab_margin)
    block_log_ratios: tuple[float, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """The label's verdict (written to the file beside it: `verdict`)."""
        return self.label.verdict


@dataclass(frozen=True)
class NewSync:
    """A point where head's step waits and base's does not (`ab --syncs`): its variant, and the point as head's
    census has it (its file relative to head's tree)."""

    variant: str
    point: SyncPoint


@dataclass(frozen=True)
class PairedCase:
    """A case measured on both sides (status ok), or why it was not (error, skipped, or on one side only)."""

    id: str
    status: str  # ok, error, skipped, one-sided
    reason: str | None = None
    ratios: tuple[PairedRatio, ...] = ()
    rounds: int = 0
    elapsed_s: float = 0.0
    confidence: float | None = None  # of each interval: the case's share of the family rate, over its verdicts and looks
    lag1_autocorrelation: float | None = None  # files before blocks (schema < 3): the highest among the ratio series
    blocks: int = 0  # how many pairs of fresh worker processes the rounds were spread over: the verdicts' sample size
    #: the case ran ok on base and not on head: a gate must not pass because what it guards stopped running
    lost: bool = False
    #: what a side's own verification found wrong with its results ("head: ..."): a head that computes the wrong
    #: thing fails the gate however fast it is
    problems: tuple[str, ...] = ()
    #: undecided when the gate's time ran out: about how many more seconds its blocks' spread says would decide
    #: it (inf: no telling, the estimate sits on the margin); None when decided
    needed_s: float | None = None
    #: what the case ran (the head side's case): its workload's key, backend, device and params; None where the
    #: row was made from its id alone (a case on one side only), whose reader falls back to the id
    workload: str | None = None
    backend: str | None = None
    device: str | None = None
    params: Mapping[str, Any] | None = None
    #: `ab --syncs`: the sync points where head's step waits and base's does not (empty: none new); None: no census
    #: was asked for, or it could not be taken on both sides
    new_syncs: tuple[NewSync, ...] | None = None
    #: the margin its verdicts were judged at: the gate's max_regression, or the case's own `ab_margin` as the base
    #: side's config states it; None where nothing was judged (and in files before it was kept: the gate's)
    margin: float | None = None

    @classmethod
    def of(cls, case: Case, status: str, reason: str | None = None, **measured: Any) -> PairedCase:
        """The row of `case` (the head side's), with what it ran: its id, workload, backend, device and params."""
        return cls(
            case.id, status, reason, workload=case.workload, backend=case.backend, device=case.device, params=dict(case.params), **measured
        )


@dataclass(frozen=True)
class ABReport:
    """One `asyncbench ab` run: both sides, the gate's settings, and every case."""

    created: str
    tool_version: str
    base: Side
    head: Side
    max_regression: float
    family_error: float
    allow_inconclusive: bool
    idle_side: str  # what keeps the side that is not measuring from competing
    cases: tuple[PairedCase, ...]
    interrupted: bool = False
    schema_version: int = AB_SCHEMA_VERSION
    #: this run's own id, made with the report: what tells two runs apart in the history
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def _finite(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None


def to_dict(report: ABReport) -> dict[str, Any]:
    raw = asdict(report)
    for case in raw["cases"]:
        case["needed_s"] = _finite(case["needed_s"])
        case["reason"] = fields.storable(case["reason"])
        case["problems"] = list(case["problems"])
        case["params"] = dict(case["params"]) if case["params"] is not None else None
        for ratio in case["ratios"]:
            for key in ("base", "head", "ratio"):
                ratio[key] = _finite(ratio[key])
            ratio["ratio_ci"] = list(ratio["ratio_ci"]) if ratio["ratio_ci"] is not None else None
            ratio["label"] = str(ratio["label"])
            ratio["verdict"] = str(Label(ratio["label"]).verdict)
    return raw


def dumps(report: ABReport) -> str:
    """The report as JSON: each compared variant or metric with `ratio` (head/base), `ratio_ci` and `verdict`."""
    return json.dumps(to_dict(report), indent=1, allow_nan=False) + "\n"
