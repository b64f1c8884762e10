"""An `asyncbench ab` results file read back, every field checked: what `record` stores of one.

`ab -o FILE` writes results.paired.ABReport as JSON (paired.dumps). Reading
one back for the history takes only what the store records (the head side's
revision and facts, the cases with what they ran, their paired ratios and
labels), each field held to its vocabulary (results.fields,
results.labels): a file from elsewhere may say anything, and what it says
ends up in the store, the terminal and a web page. Anything off is an
InputError naming the file and the key, raised before anything is stored.

A case's workload, backend, device and params are the file's own (schema 4
on); older files state only the case id, whose backend and device are read
from it and whose name stands for the workload (it is the experiment's
name: the best such a file says), with no params.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results import fields, recordable
from asyncbench.results.fields import At
from asyncbench.results.labels import Label
from asyncbench.results.model import Verdict
from asyncbench.results.paired import AB_SCHEMA_VERSION, METRIC, VARIANT
from asyncbench.results.plan import case_parts

#: the keys that make a JSON file an `asyncbench ab` results file (paired.ABReport's)
KEYS = ("base", "head", "cases", "max_regression")
#: how many of KEYS make a JSON object an `ab` file that is missing the others
LOOKS_AB = 2
#: how a compared case ended (paired.PairedCase.status)
STATUSES = ("ok", "error", "skipped", "one-sided")
#: what a compared quantity is
KINDS = (VARIANT, METRIC)
#: what the head side's revision says where it is no commit
WORKING_TREE = "working tree"


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


@dataclass(frozen=True)
class ABCase:
    """A case of the comparison: its id (`name[backend,device,...]`), what it ran, how it ended, its ratios."""

    id: str
    workload: str
    backend: str
    device: str
    status: str
    reason: str | None
    ratios: tuple[Ratio, ...]
    #: the case's params (empty in files before schema 4, which do not state them)
    params: Mapping[str, Any] = field(default_factory=dict)


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


def is_ab(raw: Any) -> bool:
    """Whether parsed JSON looks like an `ab` results file, then read as one, strictly: it is no results file and
    has most of an `ab` file's keys (one without its cases or its head is a broken `ab` file, and said so)."""
    return isinstance(raw, dict) and "tool" not in raw and sum(key in raw for key in KEYS) >= LOOKS_AB


def read(path: str | Path) -> ABFile:
    """The `ab` file at `path`; InputError naming the file (and the key) for anything unusable."""
    text = inputs.read_text(path, InputError, "results file")
    try:
        raw = inputs.read_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON (truncated?): {exc.msg} at line {exc.lineno}", location=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not a results file: {exc}", location=str(path)) from None
    return from_dict(raw, str(path))


def from_dict(raw: Any, source: str) -> ABFile:
    """An `ab` file from its parsed JSON, every field the store takes checked."""
    at = At(source)
    top = fields.mapping(raw, at)
    missing = [key for key in KEYS if key not in top]
    if missing:
        at.fail(f"not an asyncbench `ab` results file: it has no {', '.join(missing)}")
    version = top.get("schema_version", AB_SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= AB_SCHEMA_VERSION:
        (at / "schema_version").fail(f"{version!r} is not an `ab` schema this asyncbench reads (at most {AB_SCHEMA_VERSION})")
    recordable.created(top.get("created"), at / "created")
    _settings(top, at)
    base = _side(top["base"], at / "base")
    head = _side(top["head"], at / "head")
    environment = dict(
        recordable.check_environment(fields.optional_mapping(head.get("facts"), at / "head" / "facts"), at / "head" / "facts")
    )
    revision = _revision(head.get("revision"), at / "head" / "revision")
    if revision is None:
        revision = fields.sha(environment.get("git_sha"), at / "head" / "facts" / "git_sha")
    cases = fields.listed(top["cases"], at / "cases")
    return ABFile(
        source=source,
        schema_version=version,
        run_id=fields.run_id(top.get("run_id"), at / "run_id"),
        created=top["created"],
        tool_version=fields.name(top.get("tool_version", ""), at / "tool_version"),
        revision=revision,
        environment=environment,
        cases=tuple(_case(case, at / "cases" / index) for index, case in enumerate(cases)),
        base_revision=_revision(base.get("revision"), at / "base" / "revision"),
    )


def _settings(top: Mapping[str, Any], at: At) -> None:
    """The gate's settings: read by no store, still held to their meaning (a file that says otherwise is not one)."""
    margin = fields.number(top["max_regression"], at / "max_regression")
    if margin < 0:
        (at / "max_regression").fail(f"a margin cannot be negative ({margin:g})")
    family = fields.optional_number(top.get("family_error"), at / "family_error")
    if family is not None and not 0 < family < 1:
        (at / "family_error").fail(f"a false-alarm rate is between 0 and 1, not {family:g}")
    for key in ("allow_inconclusive", "interrupted"):
        recordable.flag(top.get(key, False), at / key)
    fields.optional_name(top.get("idle_side"), at / "idle_side")


def _side(raw: Any, at: At) -> Mapping[str, Any]:
    side = fields.mapping(raw, at)
    for key in ("name", "python", "python_version", "revision"):
        fields.optional_name(side.get(key), at / key)
    for key, value in fields.optional_mapping(side.get("environment"), at / "environment").items():
        fields.name(key, at / "environment" / key)
        fields.text(value, at / "environment" / key)
    if side.get("facts") is not None:
        recordable.check_environment(side["facts"], at / "facts")
    return side


def _revision(value: Any, at: At) -> str | None:
    """The commit of "a1b2c3d4e5 (origin/main)" (what `ab` writes), None for "working tree" or none."""
    if value is None or value == "" or value == WORKING_TREE:
        return None
    stated = fields.name(value, at)
    return fields.sha(stated.split(" ")[0], at)


def _case(raw: Any, at: At) -> ABCase:
    case = fields.mapping(raw, at)
    case_id = fields.name(case.get("id"), at / "id")
    workload, backend, device = _ran(case, case_id, at)
    params = recordable.params(case.get("params"), at / "params")
    ratios = fields.optional_list(case.get("ratios"), at / "ratios")
    for key in ("rounds", "blocks"):
        if case.get(key) is not None:
            fields.count(case[key], at / key)
    recordable.duration(case.get("elapsed_s"), at / "elapsed_s")
    for key in ("confidence", "lag1_autocorrelation"):
        fields.optional_number(case.get(key), at / key)
    recordable.flag(case.get("lost", False), at / "lost")
    recordable.duration(case.get("needed_s"), at / "needed_s")
    margin = fields.optional_number(case.get("margin"), at / "margin")
    if margin is not None and margin < 0:
        (at / "margin").fail(f"a margin cannot be negative ({margin:g})")
    for index, problem in enumerate(fields.optional_list(case.get("problems"), at / "problems")):
        fields.optional_text(problem, at / "problems" / index)
    return ABCase(
        id=case_id,
        workload=workload,
        backend=backend,
        device=device,
        status=fields.word(case.get("status"), at / "status", STATUSES),
        reason=fields.optional_text(case.get("reason"), at / "reason"),
        ratios=tuple(_ratio(ratio, at / "ratios" / index) for index, ratio in enumerate(ratios)),
        params=dict(params),
    )


def _ran(case: Mapping[str, Any], case_id: str, at: At) -> tuple[str, str, str]:
    """(workload, backend, device): the case's own (schema 4 on: all three, each held to its vocabulary, where the
    file states any), else read from its id as older files allow."""
    if any(case.get(key) is not None for key in ("workload", "backend", "device")):
        return (
            fields.name(case.get("workload"), at / "workload", empty=False),
            fields.identifier(case.get("backend"), at / "backend"),
            fields.identifier(case.get("device"), at / "device"),
        )
    return case_parts(case_id)


def _ratio(raw: Any, at: At) -> Ratio:
    ratio = fields.mapping(raw, at)
    value, interval = _positive(ratio.get("ratio"), at / "ratio"), fields.interval(ratio.get("ratio_ci"), at / "ratio_ci")
    if interval is not None and interval[0] <= 0:
        (at / "ratio_ci").fail(f"a ratio of times is above 0, not {interval[0]:g}")
    fields.unit(ratio.get("unit", ""), at / "unit")
    for side in ("base", "head"):
        recordable.duration(ratio.get(side), at / side)
    for index, block in enumerate(fields.optional_list(ratio.get("block_log_ratios"), at / "block_log_ratios")):
        fields.number(block, at / "block_log_ratios" / index)  # not `value`: that is the ratio (it was the last block's)
    if value is not None and interval is not None and not interval[0] <= value <= interval[1]:
        # `ab` never writes one (its estimate lies within the intervals it is bounded by): the history would draw the
        # point outside its own error bar
        (at / "ratio").fail(f"{value:g} lies outside its interval [{interval[0]:g}, {interval[1]:g}] (ratio_ci)")
    label = Label(fields.word(ratio.get("label"), at / "label", [str(label) for label in Label]))
    verdict = fields.word(ratio.get("verdict"), at / "verdict", [str(v) for v in Verdict])
    if verdict != label.verdict:
        (at / "verdict").fail(f"{verdict!r} is not the verdict of {str(label)!r} ({label.verdict})")
    return Ratio(
        name=fields.name(ratio.get("name"), at / "name"),
        kind=fields.word(ratio.get("kind"), at / "kind", KINDS),
        label=label,
        ratio=value,
        ratio_ci=interval,
    )


def _positive(value: Any, at: At) -> float | None:
    """A paired ratio: above 0 (a time or a rate over another), or null where it was not finite."""
    ratio = fields.optional_number(value, at)
    if ratio is not None and ratio <= 0:
        at.fail(f"a ratio of times is above 0, not {ratio:g}")
    return ratio
