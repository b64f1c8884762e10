"""What `asyncbench ab` yields: each case measured on two sides, round by round, as paired ratios with verdicts.

A side is one worker process with its own source tree (a git revision),
interpreter and environment. In every round both sides take one sample of
each variant, so each round gives one paired ratio head/base per variant
(and per timing or rate metric); the verdict comes from the interval of
those paired ratios against the margin (verdicts.margin.label_of), never
from two separate medians; the interval's unit is the block of fresh
processes, not the round (results.blocks).

Each type here reads itself back from an `ab` file (`from_dict`), every
field held to its vocabulary (results.fields, results.labels) before it is
taken: a file from elsewhere may say anything, and what it says reaches the
store, the terminal and a pull-request comment. The file itself (the run,
both sides, the cases) is results.ab_report.ABReport.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, Mapping

from asyncbench.results import case_held, fields, judged_names, recordable, units
from asyncbench.results import paired_held as held
from asyncbench.results.bound_change import BoundChange
from asyncbench.results.fields import At
from asyncbench.results.labels import Label, margin_problem
from asyncbench.results.model import Case, Verdict
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.new_syncs import read_all as read_new_syncs
from asyncbench.results.plan import case_parts

VARIANT, METRIC = "variant", "metric"
#: how a compared case ended (PairedCase.status)
STATUSES = ("ok", "error", "skipped", "one-sided")
#: what a compared quantity is (PairedRatio.kind)
KINDS = (VARIANT, METRIC)
#: what a side's revision says where it is no commit
WORKING_TREE = "working tree"
#: how a case's `problems` begin: the side whose results failed their verification (engine.paired)
PROBLEM_SIDES = ("base: ", "head: ")
#: a side's Python version as platform.python_version() gives it ("3.12.1", "3.13.0rc1", "3.14.0a1+")
PYTHON_VERSION = re.compile(r"\d+\.\d+(\.\d+)?[0-9A-Za-z.+]*")


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

    @classmethod
    def from_dict(cls, raw: Any, name: str, at: At) -> Side:
        """The side `name` of an `ab` file: its names, revision, variables and facts checked."""
        side = fields.mapping(raw, at)
        case_held.known_keys(side, SIDE_KEYS, at)
        for key in ("name", "python", "python_version", "revision"):
            fields.optional_name(side.get(key), at / key)
        version = side.get("python_version")
        if version and not PYTHON_VERSION.fullmatch(version):  # platform.python_version(), as `ab` probes each side's
            (at / "python_version").fail(f"{version!r} is not a Python version (3.12.1, 3.13.0rc1)")
        revision_sha(side.get("revision"), at / "revision")
        for key, value in fields.optional_mapping(side.get("environment"), at / "environment").items():
            fields.name(key, at / "environment" / key)
            fields.text(value, at / "environment" / key)
        if side.get("facts") is not None:
            recordable.check_environment(side["facts"], at / "facts")
        return cls(
            # the side's name is the key it is read from (`ab` writes base and head there): a stored name shown
            # in its place read as the tool's words ("head: ✅ …")
            name=name,
            revision=str(side.get("revision") or WORKING_TREE),
            python=str(side.get("python") or ""),
            python_version=str(side.get("python_version") or ""),
            environment=dict(side.get("environment") or {}),
            facts=dict(side.get("facts") or {}),
        )


def revision_sha(value: Any, at: At) -> str | None:
    """The commit of "a1b2c3d4e5 (origin/main)" (what `ab` writes), None for "working tree" or none."""
    if value is None or value == "" or value == WORKING_TREE:
        return None
    stated = fields.name(value, at)
    return fields.sha(stated.split(" ")[0], at)


@dataclass(frozen=True)
class PairedRatio:
    """One variant's done time, or one metric, head against base: the median paired ratio and its interval.

    `ratio` > 1 is slower for every kind (a rate such as GFLOP/s is
    inverted: base / head), so one rule reads them all. `base` and `head`
    are the medians of each side's pooled samples in `unit`: taken at other
    moments, so their ratio may lie far from `ratio` on a loaded machine (the
    pairs cancel the moment, the pooled medians do not; results.paired_held).
    """

    name: str
    kind: str  # VARIANT or METRIC
    unit: str
    base: float
    head: float
    ratio: float
    ratio_ci: tuple[float, float] | None
    label: Label  # decided by label_of (results.labels, called by verdicts.margin) from `ratio_ci` and the margin
    #: each block's number, in block order: the median log paired ratio of its rounds (engine.paired), the sample
    #: `ratio` and `ratio_ci` come from; its spread is what a case's margin must allow (configs' ab_margin)
    block_log_ratios: tuple[float, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """The label's verdict (written to the file beside it: `verdict`)."""
        return self.label.verdict

    @classmethod
    def from_dict(cls, raw: Any, at: At) -> PairedRatio:
        """A compared variant or metric, checked: a ratio above 0 within its interval, the label's verdict."""
        ratio = fields.mapping(raw, at)
        case_held.known_keys(ratio, RATIO_KEYS, at)
        value, interval = _positive(ratio.get("ratio"), at / "ratio"), fields.interval(ratio.get("ratio_ci"), at / "ratio_ci")
        if interval is not None and interval[0] <= 0:
            (at / "ratio_ci").fail(f"a ratio of times is above 0, not {interval[0]:g}")
        kind = fields.word(ratio.get("kind"), at / "kind", KINDS)
        unit = _unit(ratio.get("unit", ""), kind, at / "unit")
        for side in ("base", "head"):
            median = recordable.duration(ratio.get(side), at / side)
            if median is not None and median <= 0:
                # a median of times (or of rates, each above 0: engine.paired_ratios drops the rest) is above 0; a 0
                # beside a ratio would be a side that took no time (the table shows base's, and head's at the ratio)
                (at / side).fail(f"a median of {'a time' if kind == VARIANT else 'a rate'} is above 0, not {median:g}")
            if median is not None and kind == VARIANT and median > MAX_MEASURED_S:
                (at / side).fail(f"{median:g} s is longer than any time `ab` measures (a year, {MAX_MEASURED_S:g} s)")
            if median is not None and kind == METRIC and median > MAX_RATE:
                (at / side).fail(f"{median:g} a second is above any rate `ab` measures ({MAX_RATE:g})")
        blocks = fields.optional_list(ratio.get("block_log_ratios"), at / "block_log_ratios")
        held.to_most_blocks(len(blocks), at / "block_log_ratios")  # before anything is computed of them
        for index, block in enumerate(blocks):
            fields.number(block, at / "block_log_ratios" / index)  # not `value`: that is the ratio (it was the last block's)
        if value is not None and interval is not None and not interval[0] <= value <= interval[1]:
            # `ab` never writes one (its estimate lies within the intervals it is bounded by): the history would draw
            # the point outside its own error bar
            (at / "ratio").fail(f"{value:g} lies outside its interval [{interval[0]:g}, {interval[1]:g}] (ratio_ci)")
        label = Label(fields.word(ratio.get("label"), at / "label", [str(label) for label in Label]))
        verdict = fields.word(ratio.get("verdict"), at / "verdict", [str(v) for v in Verdict])
        if verdict != label.verdict:
            (at / "verdict").fail(f"{verdict!r} is not the verdict of {str(label)!r} ({label.verdict})")
        return cls(
            name=fields.name(ratio.get("name"), at / "name"),
            kind=kind,
            unit=unit,
            base=_number(ratio.get("base")),
            head=_number(ratio.get("head")),
            ratio=_number(value),
            ratio_ci=interval,
            label=label,
            block_log_ratios=tuple(float(block) for block in blocks),
        )


# No time `ab` measured is longer than a run's (recordable.MAX_MEASURED_S, a year): its gate spends minutes
# (--gate-time, --gate-time-max), and a case's blocks, their medians and its time all lie within it. A median or a
# case's time beyond it is an edit (a file's base and head set to 1e300 printed a 300-digit median whose width pushed
# the case's name out of the table).
MAX_MEASURED_S = recordable.MAX_MEASURED_S
# No rate `ab` judged is above 1e24 a second, in any unit: the fastest machines do about 1e18 operations a second
# (an exaFLOP/s), counted in the smallest unit (FLOP/s, items/s, B/s), and one benchmark's process runs on a few of
# their devices; a million times that is an edit, not a reading.
MAX_RATE = 1e24


def _unit(value: Any, kind: str, at: At) -> str:
    """A compared quantity's unit, as `ab` writes it (engine.paired): a variant's time in seconds ("s"), a metric's
    rate (a unit ending in /s, such as GFLOP/s: the only metrics `ab` judges, engine.paired_ratios). Any other (a
    "parsecs", or an "ms" that would read the medians, stored in seconds, a thousand times off) is no `ab` file's."""
    stated = fields.unit(value, at)
    if kind == VARIANT and stated != units.SECONDS:
        at.fail(f"{stated!r} is not the unit of a variant's time in an `ab` file ({units.SECONDS!r}: medians in seconds)")
    if kind == METRIC and not units.is_rate(stated):
        at.fail(
            f"{stated!r} is not the unit of a rate (a unit ending in {units.RATE_SUFFIX}, such as GFLOP/s), the only metric `ab` judges"
        )
    return stated


def _positive(value: Any, at: At) -> float | None:
    """A paired ratio: above 0 (a time or a rate over another), or null where it was not finite."""
    ratio = fields.optional_number(value, at)
    if ratio is not None and ratio <= 0:
        at.fail(f"a ratio of times is above 0, not {ratio:g}")
    return ratio


def _number(value: Any) -> float:
    """A checked figure, null (not finite when written) as NaN: shown as no value."""
    return math.nan if value is None else float(value)


@dataclass(frozen=True)
class PairedCase:
    """A case measured on both sides (status ok), or why it was not (error, skipped, or on one side only).

    Not a results.model.CaseIdentity, though it names a case too: the file is `asdict` of these fields in this order
    (ABReport.to_dict), where the identity's fields would come first; the file states no `experiment`; and its
    workload, backend, device and params are None in a row made from the id alone (a case on one side only) and in
    files before schema 4. Its read model, results.ab_file.ABCase, is one (`ran` and the id supply the rest)."""

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
    #: with needed_s inf, why no look would decide it (results.blocks.never_reason): "margin" (its estimate sits on
    #: the margin) or "spread" (its blocks are too wild for any look to); None otherwise and in older files
    never_why: str | None = None
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
    #: `ab --bound`: each variant's bound on base and on head and whether it flipped (results.bound_change); None:
    #: not asked for, or not taken on both sides. Information only: it never changes the gate's verdict
    bound_changes: tuple[BoundChange, ...] | None = None
    #: the ab_margin head's config states where it is another than `margin`, which judged the case (the base side's:
    #: a pull request cannot loosen its own gate until that change is merged); None otherwise and in older files
    head_margin: float | None = None

    @classmethod
    def of(cls, case: Case, status: str, reason: str | None = None, **measured: Any) -> PairedCase:
        """The row of `case` (the head side's), with what it ran: its id, workload, backend, device and params."""
        return cls(
            case.id, status, reason, workload=case.workload, backend=case.backend, device=case.device, params=dict(case.params), **measured
        )

    @classmethod
    def from_dict(cls, raw: Any, at: At, gate_margin: float | None = None) -> PairedCase:
        """A case of an `ab` file, every field checked; its workload, backend and device as the file states them
        (schema 4 on), else None (results.ab_file reads them from the id, as older files allow). Each ratio is held
        to what `ab` would have written beside its blocks and its margin (its own, else `gate_margin`, the file's
        max_regression): results.paired_held."""
        case = fields.mapping(raw, at)
        case_held.known_keys(case, CASE_KEYS, at)
        case_id = fields.name(case.get("id"), at / "id", False)  # a store refuses a series without one (history.row_rules)
        params = recordable.params(case.get("params"), at / "params")
        _ran(case, at)  # after its params are held: the id is held to them
        ratios = fields.optional_list(case.get("ratios"), at / "ratios")
        for key in ("rounds", "blocks"):
            if case.get(key) is not None:
                fields.count(case[key], at / key)
        if case.get("blocks") is not None:
            held.to_most_blocks(case["blocks"], at / "blocks")
        held.to_rounds(case.get("rounds"), case.get("blocks"), at / "rounds")
        elapsed = recordable.duration(case.get("elapsed_s"), at / "elapsed_s")
        if elapsed is not None and elapsed > MAX_MEASURED_S:
            (at / "elapsed_s").fail(f"{elapsed:g} s is longer than any time `ab` measures (a year, {MAX_MEASURED_S:g} s)")
        for key in ("confidence", "lag1_autocorrelation"):
            fields.optional_number(case.get(key), at / key)
        if case.get("confidence") is not None and not 0 < case["confidence"] < 1:
            # each interval's two-sided level: its chance of holding the truth, never 0 or 1 (nor -1, nor 2)
            (at / "confidence").fail(f"a confidence level lies between 0 and 1, not {case['confidence']:g}")
        recordable.flag(case.get("lost", False), at / "lost")
        needed = recordable.duration(case.get("needed_s"), at / "needed_s")
        if needed is not None and needed > MAX_MEASURED_S:
            # the time its blocks would take at their pace (engine.paired.seconds_needed): a time `ab` would measure
            (at / "needed_s").fail(f"{needed:g} s is longer than any time `ab` measures (a year, {MAX_MEASURED_S:g} s)")
        margin = fields.optional_number(case.get("margin"), at / "margin")
        if margin is not None and (problem := margin_problem(margin)) is not None:
            (at / "margin").fail(f"{problem}, as `ab` takes one (ab_margin, --max-regression), not {units.percent(margin)}")
        head_margin = _head_margin(case.get("head_margin"), margin, at / "head_margin")
        problems = fields.optional_list(case.get("problems"), at / "problems")
        for index, problem in enumerate(problems):
            fields.optional_text(problem, at / "problems" / index)
            if problem is not None and not problem.startswith(PROBLEM_SIDES):
                # engine.paired writes "head: <what the side's verification said>": a line without its side (a "✅ all
                # verified" shown as the tool's own words) is no `ab` file's
                (at / "problems" / index).fail(f"{problem!r} names no side its verification ran on (base: … or head: …)")
        status = fields.word(case.get("status"), at / "status", STATUSES)
        reason = fields.optional_text(case.get("reason"), at / "reason")
        held.to_status(status, len(ratios), at / "ratios")
        read = tuple(PairedRatio.from_dict(ratio, at / "ratios" / index) for index, ratio in enumerate(ratios))
        held.to_each_once(read, at / "ratios")
        judged_names.hold(case.get("workload"), params, [(ratio.kind, ratio.name) for ratio in read], at / "ratios")
        confidence = None if case.get("confidence") is None else float(case["confidence"])
        judged_at = margin if margin is not None else gate_margin
        for index, ratio in enumerate(read):
            held.to_count(ratio, case.get("blocks"), at, index)
            held.to_blocks(ratio, confidence, at / "ratios" / index)
            if judged_at is not None:
                held.to_margin(ratio, judged_at, at / "ratios" / index)
        workload, backend, device = (case.get(key) for key in ("workload", "backend", "device"))
        return cls(
            id=case_id,
            status=status,
            reason=reason,
            ratios=read,
            rounds=int(case.get("rounds") or 0),
            elapsed_s=float(case.get("elapsed_s") or 0.0),
            confidence=confidence,
            lag1_autocorrelation=None if case.get("lag1_autocorrelation") is None else float(case["lag1_autocorrelation"]),
            blocks=int(case.get("blocks") or 0),
            lost=bool(case.get("lost", False)),
            problems=tuple(str(problem) for problem in problems if problem is not None),
            needed_s=None if case.get("needed_s") is None else float(case["needed_s"]),
            never_why=case["never_why"] if case.get("never_why") in ("margin", "spread") else None,
            workload=None if workload is None else str(workload),
            backend=None if backend is None else str(backend),
            device=None if device is None else str(device),
            params=None if case.get("params") is None else dict(params),
            new_syncs=read_new_syncs(case.get("new_syncs"), at / "new_syncs"),
            margin=margin,
            bound_changes=_bound_changes(case.get("bound_changes"), at / "bound_changes"),
            head_margin=head_margin,
        )

    def ran(self) -> tuple[str, str, str]:
        """(workload, backend, device): the case's own (schema 4 on), else read from its id as older files allow
        (its name stands for the workload: it is the experiment's, the best such a file says)."""
        if self.workload is None and self.backend is None and self.device is None:
            return case_parts(self.id)
        return str(self.workload), str(self.backend), str(self.device)


#: every key an `ab` file's side, ratio and case have held, in any `ab` schema version: the fields each is written
#: from (ABReport.to_dict is asdict of them), a ratio's `verdict` beside its label; the schema documents no extra
#: keys, so another is an edit, refused as a results file's is (results.case_held.known_keys)
SIDE_KEYS = frozenset(entry.name for entry in dataclass_fields(Side))
RATIO_KEYS = frozenset({*(entry.name for entry in dataclass_fields(PairedRatio)), "verdict"})
CASE_KEYS = frozenset(entry.name for entry in dataclass_fields(PairedCase))


def _head_margin(value: Any, margin: float | None, at: At) -> float | None:
    """The ab_margin head's config states beside the `margin` that judged the case: a margin `ab` takes, and another
    than that one (`ab` keeps it only where they differ, and only beside a margin that judged something)."""
    head_margin = fields.optional_number(value, at)
    if head_margin is None:
        return None
    if (problem := margin_problem(head_margin)) is not None:
        at.fail(f"{problem}, as ab_margin takes one, not {units.percent(head_margin)}")
    if margin is None:
        at.fail("a case judged at no margin has no head's margin to set aside: `ab` keeps one only beside the case's `margin`")
    if math.isclose(head_margin, margin):
        at.fail(f"{units.percent(head_margin)} is the margin that judged the case: `ab` keeps head's only where it is another")
    return float(head_margin)


def _ran(case: Mapping[str, Any], at: At) -> None:
    """Where the file states any of workload, backend and device (schema 4 on), all three, each held to its
    vocabulary (older files state none: PairedCase.ran reads them from the id), and its id the one its experiment,
    backend, device and params make (case_held.identity_held, as a results file's is), the experiment being what
    the id names (an `ab` file states none: the workload's key is not the experiment's name). A trial's ids of three
    spaces, and `totally-other[jax,cuda]` on a torch case on a CPU, were recorded and gated as those cases."""
    if any(case.get(key) is not None for key in ("workload", "backend", "device")):
        fields.name(case.get("workload"), at / "workload", empty=False)
        backend = fields.identifier(case.get("backend"), at / "backend")
        device = fields.identifier(case.get("device"), at / "device")
        case_id = str(case.get("id"))
        experiment = case_id.partition("[")[0]
        if not experiment.strip():  # a config's name may hold spaces, never only those (spec.config)
            (at / "id").fail(f"{case_id[:120]!r} names no experiment before its [backend,device]: {recordable.NOT_WRITTEN}")
        identity = {"id": case_id, "experiment": experiment, "backend": backend, "device": device, "params": case.get("params")}
        case_held.identity_held(identity, at)


def _bound_changes(raw: Any, at: At) -> tuple[BoundChange, ...] | None:
    """A case's bounds on both sides (`ab --bound`, schema 6); None where none were taken, as in older files."""
    if raw is None:
        return None
    return tuple(BoundChange.from_dict(entry, at / index) for index, entry in enumerate(fields.listed(raw, at)))
