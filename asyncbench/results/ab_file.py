"""What `record` stores of an `asyncbench ab` results file: a read model of results.ab_report.ABReport.

The file is read one way, strictly (ABReport.load / ABReport.from_dict:
every field checked, an InputError naming the file and the key for anything
off, raised before anything is stored). The store keys and compares what
it records by values the file states only in passing, so they are derived
here, once, from the checked report: the head side's commit (its revision
"a1b2c3d (origin/main)", else its facts' git_sha), the base side's, the
head's facts as the machine the run is recorded on, each case's experiment
(the name its id begins with), workload, backend and device (read from its id
in files before schema 4) and its
ratios with a ratio that was not finite as None. Kept apart from ABReport
because these are the store's questions of a run, not what the file says:
`show` renders the revision and the figures as written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from asyncbench.results import fields
from asyncbench.results.ab_report import ABReport
from asyncbench.results.fields import At
from asyncbench.results.labels import Label
from asyncbench.results.model import CaseIdentity, Verdict
from asyncbench.results.paired import PairedCase, PairedRatio, revision_sha
from asyncbench.results.plan import case_parts


@dataclass(frozen=True)
class Ratio:
    """One compared variant or metric: its paired ratio head/base (None: not finite), interval and label."""

    name: str
    kind: str
    label: Label
    ratio: float | None
    ratio_ci: tuple[float, float] | None

    @property
    def verdict(self) -> Verdict:
        """The label's verdict (a file's `verdict` is held to it)."""
        return self.label.verdict

    @classmethod
    def of(cls, ratio: PairedRatio) -> Ratio:
        return cls(ratio.name, ratio.kind, ratio.label, None if math.isnan(ratio.ratio) else ratio.ratio, ratio.ratio_ci)


@dataclass(frozen=True)
class ABCase(CaseIdentity):
    """A case of the comparison: which case (the identity a results file's Result has: `experiment` is the name its
    id (`name[backend,device,...]`) begins with, which Experiment.case_id put there; params empty in files before
    schema 4, which do not state them), how it ended, its ratios.

    A read model: nothing writes it, so its fields' order is free. The file's own case (results.paired.PairedCase)
    does not share the identity: its file is asdict of its fields in their order, the identity's would come first,
    and it states neither `experiment` nor, in a row made from its id alone or a file before schema 4, the rest."""

    status: str
    reason: str | None
    ratios: tuple[Ratio, ...]

    @classmethod
    def of(cls, case: PairedCase) -> ABCase:
        workload, backend, device = case.ran()
        ratios = tuple(Ratio.of(ratio) for ratio in case.ratios)
        experiment = case_parts(case.id)[0]
        return cls(case.id, experiment, workload, backend, device, dict(case.params or {}), case.status, case.reason, ratios)


@dataclass(frozen=True)
class ABFile:
    """What the store records of an `ab` file: a run of the head side, on the head's machine."""

    source: str
    schema_version: int
    #: the run's own id (hex; '' in files of schema 1, which are keyed by their content)
    run_id: str
    created: str
    tool_version: str
    #: the head side's commit (hex), else its facts' git_sha, else None (a working tree outside git)
    revision: str | None
    #: the head side's facts (engine.environment, captured in its worker): the machine the run is recorded on
    environment: Mapping[str, Any]
    cases: tuple[ABCase, ...]
    #: the base side's commit (hex), None when the file does not say: a ratio is head against this base
    base_revision: str | None = None

    @classmethod
    def of(cls, report: ABReport, source: str) -> ABFile:
        """What the store records of `report` (read and checked from `source`)."""
        at = At(source)
        revision = revision_sha(report.head.revision, at / "head" / "revision")
        if revision is None:
            revision = fields.sha(report.head.facts.get("git_sha"), at / "head" / "facts" / "git_sha")
        return cls(
            source=source,
            schema_version=report.schema_version,
            run_id=report.run_id,
            created=report.created,
            tool_version=report.tool_version,
            revision=revision,
            environment=dict(report.head.facts),
            cases=tuple(ABCase.of(case) for case in report.cases),
            base_revision=revision_sha(report.base.revision, at / "base" / "revision"),
        )


def read(path: str | Path) -> ABFile:
    """What the store records of the `ab` file at `path`; InputError naming the file (and the key) for anything
    unusable."""
    return ABFile.of(ABReport.load(path), str(path))


def from_dict(raw: Any, source: str) -> ABFile:
    """What the store records of an `ab` file's parsed JSON, every field checked first (ABReport.from_dict)."""
    return ABFile.of(ABReport.from_dict(raw, source), source)
