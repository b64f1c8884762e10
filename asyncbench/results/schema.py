"""The results file: its versioned schema, and the Report that writes and reads it.

A Report writes itself (`to_dict`, `to_json`, `save`) and reads itself back
(`load`, `from_dict`) here, its header checked key by key (`check_file`)
before anything is built, so `show`, `compare`, `merge` and `record` read a
file one way. A result's own record (written, checked, read) is `records`; a
run's journal of records is `journal`, the one lenient reader: it drops
records a kill cut short, then holds what it kept to the same checks. A file
is saved whole or not at all (results.writing.atomic_write), also on Ctrl-C
or a full disk. Loading refuses newer schemas and foreign files with a clear
message, and reads older schema versions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import gc
import json
import re
import shlex
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results import (
    ab_report,
    case_held,
    check_detail,
    fields,
    matmul_figures,
    recordable,
    records,
    reference,
    workload_figures,
    writing,
)
from asyncbench.results.fields import At
from asyncbench.results.model import MAX_SHARDS, PlannedCase, Result, ShardOf
from asyncbench.version import __version__

TOOL_NAME = "asyncbench"
# History: 1 — first version (2026-11). 2 — `bounds` (95% intervals of metrics), `sampling`
# (why measuring stopped), `unavailable`, `asynchronous`; a clock's ci_low/ci_high is null
# when there were too few samples for a 95% CI (version 1 called [min, max] one); `warnings` (sanity checks
# a result fails; absent in files written before it, read as none), `traces` and `trace_detail` (--trace).
# 3 — results describe themselves: `metric_info` {metric: {unit, help}} and `reading` (the workload's
# one-line reading), so a file renders with units and its reading where its workload is not installed;
# `checks` are typed (expect, verdict, detail, value, bounds) in the one verdict vocabulary.
# Versions 1 and 2 are read: their checks load as they are; they carry no units or readings, which
# `asyncbench show` fills in from the installed workloads where it finds them (workloads.describe).
# 4 — `case_s` (each case's whole wall time where it ran); samples stored to the nanosecond; one result
# per line; `metric_info` once per workload at the top level ({workload: {metric: {unit, help}}}), on a
# result only where it differs from its workload's; `sampling.stopped_by` may be `timeout_s` (an error row
# that keeps the rounds measured before its worker was lost). A run that did not end leaves its cases in a
# journal beside the file (journal.py).
# 5 — `machine` on a result (the host it ran on) in a report gathered from cluster jobs (`run --executor`,
# `gather`), whose `environment` then holds `machines` {host: that job's environment} and `sweep` (the jobs folder,
# the executor, each job's id and state); absent elsewhere.
# 6 — `run_id` (uuid4 hex, made with the report): the run's identity in the history, so two runs that end in the
# same second are two runs. Files before it have none; the history keys them by their whole content.
# 7 — `harness` on a measured result ({sync_s, sync_high_s, issue_s, n}): a no-op's issue and done on its backend and
# device, what the harness's own sync adds to every row (model.HarnessCost); "ran ahead" counts only what lies beyond
# it. Older files have none: their rows are judged without it, and say so.
# 8 — `shard` at the top level of a file written by `run --shard I/N` ({index, count, plan, plan_cases, cases, positions}:
# part of which plan it measured, model.ShardOf), what `merge` checks before it puts a CI matrix's shards together.
# Absent elsewhere, and in older files.
# 9 — `syncs` on a result measured with `run --syncs`: {variant: {rounds, coverage, note, points: [{file, line, kind,
# call, calls_per_step, wait_s_per_step, wait_ci_s, drained_per_step, calls_rounds, wait_s_rounds}]}}, where the step
# waited (results.syncs). Absent without --syncs, and in older files (read as no census).
# 10 — `reference` on a measured result ({work, samples_s, load_per_core, others_cpu, steal}): a fixed work timed between
# the case's rounds, the machine's own speed while it ran, and what the OS said (results.reference); `compare`, `run
# --baseline` and the history take the machine's change between runs out of the code's with it. Older files have
# none: compared as before, with the caveat that the machine's change is not seen.
# 11 — `bound` on a result measured with `run --bound`: {variant: {bound, step_s, rounds, sides: {host|device: {slack_s,
# slack_ci_s, cost_past, cost_past_ci, levels_s}}, ceiling, ceiling_ci, note, observations: [[round, side, level_s,
# injected_s, step_s]]}}, what bounds the step, measured by perturbation (results.bound, verdicts.bound). Absent without
# --bound, and in older files (read as none). With --bound-verify a variant's bound also has `verified`: {how, step_s,
# step_ci_s, reached, reached_ci, note, pairs: [[plain_s, captured_s]], past_floor} (absent without it: read as none).
# A ceiling whose interval has no upper end (the device's slack may reach the whole step) stores `ceiling_ci: null` and
# `ceiling_ci_low` (a reader of 11 without that key reads it as a ceiling without an interval).
# 12 — no new field: a check's `detail` is held to its stored fields, in this version's words (results.check_detail):
# a file of 12 whose detail is not the sentence its figures give (a hand-edited claim beside them) is refused. Older
# files' details are in older words, shown as stored. Changing a detail's words is a schema change: a file of the
# version before keeps its own words (tests/results/test_check_detail_words.py reads one written in 12's).
SCHEMA_VERSION = 12

# The first results schema (the history above starts at 1); a newer one than asyncbench reads is refused by
# check_version, which runs first.
FIRST_SCHEMA = 1
# A plan's digest: sha256 in hex (results.shards.digest).
PLAN_DIGEST = re.compile(r"[0-9a-f]{64}")

#: a line only a config has: what tells `show config.yaml` apart from a broken results file
CONFIG_LINE = re.compile(r"^experiments\s*:", re.MULTILINE)


def is_results(raw: Any) -> bool:
    """Whether parsed data is an asyncbench results file (for telling a user who passed one to `run`)."""
    return isinstance(raw, dict) and isinstance(raw.get("tool"), dict) and raw["tool"].get("name") == TOOL_NAME


class ResultsFileError(InputError):
    """A results file that cannot be read: missing, truncated, foreign or too new."""


@dataclass(frozen=True)
class Report:
    """One run of asyncbench: environment, resolved config and every case's result; it writes its results file
    (`to_json`, `save`) and reads it back (`load`, `from_dict`), so every reader reads a file one way."""

    schema_version: int
    tool_name: str
    tool_version: str
    created: str
    environment: Mapping[str, Any]
    config: Mapping[str, Any]
    results: tuple[Result, ...]
    interrupted: bool = False
    #: this run's own id (uuid4 hex), made with the report and kept in its file and journal: what tells two runs
    #: apart in the history, whenever they ended ('' in files older than schema 6)
    run_id: str = ""
    #: the part of a plan this run measured (`run --shard I/N`); None: the whole plan (files before schema 8 have none)
    shard: ShardOf | None = None

    @classmethod
    def new(cls, config: Mapping[str, Any], environment: Mapping[str, Any], results: tuple[Result, ...] = ()) -> Report:
        """A report made now, by this asyncbench, in the current schema, with a run id of its own."""
        return cls(
            schema_version=SCHEMA_VERSION,
            tool_name=TOOL_NAME,
            tool_version=__version__,
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            environment=dict(environment),
            config=dict(config),
            results=tuple(results),
            run_id=uuid.uuid4().hex,
        )

    def header_to_dict(self) -> dict[str, Any]:
        """Everything of a report but its results: what a journal's first record holds."""
        return {
            "schema_version": self.schema_version,
            "tool": {"name": self.tool_name, "version": self.tool_version},
            "created": self.created,
            "run_id": self.run_id,
            "interrupted": self.interrupted,
            "environment": dict(self.environment),
            "config": dict(self.config),
            **({"shard": shard_to_dict(self.shard)} if self.shard is not None else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        """The results file's JSON as parsed: the header, each workload's metric declarations and every result."""
        declared = records.declared_by(self.results)
        return {
            **self.header_to_dict(),
            "metric_info": records.declared_to_dict(declared),
            "results": [records.result_to_dict(r, declared) for r in self.results],
        }

    def to_json(self, lines: Sequence[str] | None = None, declared: records.Declared | None = None) -> str:
        """The results file: the header indented for reading, each workload's metric declarations, then one
        result per line (compact: a 10,000-case sweep stays a few tens of MB, and `grep`/`diff` still work line
        by line). `lines` and `declared`: the results already serialized by `result_line` with these declarations
        (a run's journal did), so they are not serialized twice."""
        if lines is None or declared is None:
            declared = records.declared_by(self.results)
            lines = [records.result_line(r, declared) for r in self.results]
        head = {**self.header_to_dict(), "metric_info": records.declared_to_dict(declared)}
        header = json.dumps(head, indent=1, allow_nan=False).removesuffix("\n}")
        results = ",\n".join(lines)
        return f'{header},\n "results": [\n{results}\n ]\n}}\n' if results else f'{header},\n "results": []\n}}\n'

    def save(self, path: str | Path, lines: Sequence[str] | None = None, declared: records.Declared | None = None) -> None:
        """The results file written to `path` whole or not at all (`lines`, `declared`: as to_json takes them)."""
        writing.atomic_write(path, self.to_json(lines, declared))

    @classmethod
    def load(cls, path: str | Path) -> Report:
        """Read a results file; ResultsFileError (exit 2) for anything unusable."""
        with bulk_loading():
            return cls.from_dict(_read(Path(path)), str(path))

    @classmethod
    def from_dict(cls, raw: Any, source: str = "<results>") -> Report:
        """A results file's parsed JSON as a Report, held first to the vocabulary the store holds it to (check_file):
        every reader (show, compare, --baseline, merge, record) refuses the same file the same way; ResultsFileError
        naming the file and the key, or saying it is not ours or too new."""
        check_version(raw, source)
        try:
            check_file(raw, source)
        except InputError as exc:
            raise ResultsFileError(exc.message, location=exc.location, path=exc.path) from None
        try:
            declared = records.declared_from_dict(raw.get("metric_info"))
            return cls.from_header(raw, results=tuple(records.result_from_dict(r, declared) for r in raw["results"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResultsFileError(f"malformed results ({type(exc).__name__}: {exc})", location=source) from None

    @classmethod
    def from_header(cls, raw: Mapping[str, Any], results: tuple[Result, ...]) -> Report:
        """A report from its header (a results file's top level, or a journal's first record) and its results."""
        return cls(
            schema_version=raw["schema_version"],
            tool_name=TOOL_NAME,
            tool_version=str(raw["tool"].get("version", "?")),
            created=str(raw.get("created", "")),
            environment=raw.get("environment", {}),
            config=raw.get("config", {}),
            results=results,
            interrupted=bool(raw.get("interrupted", False)),
            run_id=str(raw.get("run_id") or ""),
            shard=shard_from_dict(raw.get("shard")),
        )


def shard_to_dict(shard: ShardOf) -> dict[str, Any]:
    return {
        "index": shard.index,
        "count": shard.count,
        "plan": shard.plan,
        "plan_cases": shard.plan_cases,
        "cases": [{**dataclasses.asdict(case), "params": dict(case.params)} for case in shard.cases],
        "positions": list(shard.positions),
    }


def shard_from_dict(raw: Any) -> ShardOf | None:
    """A file's `shard` (None: not a shard's); TypeError for one of another shape (the loader says it is malformed)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(raw.get(key), int) for key in ("index", "count", "plan_cases")):
        raise TypeError("shard: expected {index, count, plan, plan_cases, cases}")
    cases = tuple(PlannedCase(**{**case, "params": dict(case["params"])}) for case in raw.get("cases", []))
    positions = tuple(int(position) for position in raw.get("positions", []))
    return ShardOf(raw["index"], raw["count"], str(raw["plan"]), raw["plan_cases"], cases, positions)


def check_file(raw: Any, source: str) -> None:
    """InputError (file and key) for the first field of a results file's JSON that the store must not take: its
    header (schema version, creation time, tool, run id, environment, config, metric declarations, shard), then
    each result (results.records.check), each case one row."""
    at = At(source)
    top = fields.mapping(raw, at)
    case_held.known_keys(top, case_held.TOP_KEYS, at)
    version = top.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version < FIRST_SCHEMA:
        (at / "schema_version").fail(f"{version} is not a results schema (they start at {FIRST_SCHEMA})")
    recordable.created(top.get("created"), at / "created")
    tool = fields.mapping(top.get("tool"), at / "tool")
    fields.name(tool.get("version", "?"), at / "tool" / "version")
    fields.run_id(top.get("run_id"), at / "run_id")
    recordable.flag(top.get("interrupted", False), at / "interrupted")
    recordable.check_environment(top.get("environment", {}), at / "environment")
    config = fields.optional_mapping(top.get("config"), at / "config")
    recordable.nested(config, at / "config")
    recordable.names_in(config, at / "config")  # the config's names, as `validate` holds them (spec.config)
    records.check_metric_info(top.get("metric_info"), at / "metric_info")
    check_shard(top.get("shard"), at / "shard")
    results = fields.listed(top.get("results"), at / "results")
    seen: dict[Any, int] = {}
    for index, result in enumerate(results):
        records.check(result, at / "results" / index)
        reference_in_schema(result, at / "results" / index, version)
        matmul_figures.check(result, at / "results" / index, version)  # matmul's clocks, illusion and gflops its samples'
        workload_figures.check(result, at / "results" / index, version)  # the other built-ins' paired figures too
        if version == SCHEMA_VERSION:  # each check's detail its figures' (older files' are in older words: as stored)
            check_detail.details_held(result, at / "results" / index, top.get("metric_info"))
            case_held.intervals_recomputed(result, at / "results" / index)  # each interval the one its rounds give
        first = seen.setdefault(result.get("id"), index)
        if first != index:  # compare, the history and merge match rows by id: a second row would be read as the first's
            (at / "results" / index / "id").fail(f"{result.get('id')!r} is also results[{first}]'s: a case is one row")
    case_held.family_error_shared(results, at / "results")  # one run's checks share one false-alarm rate


def reference_in_schema(result: Any, at: At, version: Any) -> None:
    """A result's machine reference only in a file of a schema that writes one (results.reference.FIRST_SCHEMA): a
    file relabelled to an older schema keeps the reference its verdicts would then be judged with."""
    if (
        isinstance(version, int)
        and version < reference.FIRST_SCHEMA
        and isinstance(result, Mapping)
        and result.get("reference") is not None
    ):
        (at / "reference").fail(
            f"a machine reference in a file of results schema {version}: references arrived in schema {reference.FIRST_SCHEMA}, "
            f"and asyncbench never wrote one in an older file"
        )


def check_shard(raw: Any, at: At) -> None:
    """Which shard of which plan a run measured (`run --shard I/N`; absent: the whole plan): 1 <= index <= count,
    the plan's digest in hex, and the cases the shard was to run, each named as a result's are."""
    if raw is None:
        return
    facts = fields.mapping(raw, at)
    index, count = fields.count(facts.get("index"), at / "index"), fields.count(facts.get("count"), at / "count")
    if not 1 <= count <= MAX_SHARDS:
        (at / "count").fail(f"{count} shards: a plan is cut into 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        (at / "index").fail(f"shard {index} of {count}: shards count from 1 to {count}")
    plan = facts.get("plan")
    if not isinstance(plan, str) or not PLAN_DIGEST.fullmatch(plan):
        (at / "plan").fail(f"{str(plan)[:80]!r} is not a plan's digest (64 hex digits)")
    planned = fields.count(facts.get("plan_cases"), at / "plan_cases")
    cases = fields.listed(facts.get("cases", []), at / "cases")
    if len(cases) > planned:
        (at / "cases").fail(f"{len(cases)} cases in a shard of a plan of {planned}")
    for number, case in enumerate(cases):
        where = at / "cases" / number
        recordable.identity(fields.mapping(case, where), where)
    positions = fields.listed(facts.get("positions", []), at / "positions")
    if len(positions) != len(cases):
        (at / "positions").fail(f"{len(positions)} positions for {len(cases)} cases")
    for number, position in enumerate(positions):
        if fields.count(position, at / "positions" / number) >= planned:
            (at / "positions" / number).fail(f"{position} is beyond the plan's {planned} cases")


def check_version(raw: Any, source: str) -> None:
    """ResultsFileError unless `raw` is ours, with a schema version this asyncbench reads."""
    if not is_results(raw):
        if ab_report.is_ab(raw):
            raise ResultsFileError(
                "an `asyncbench ab` file, not a results file: `ab` printed its verdicts when it ran (`--markdown` keeps "
                f"them as a page), and `asyncbench show {shlex.quote(source)}` prints them again; `asyncbench record` "
                "keeps it in the history, where `asyncbench history` shows it",
                location=source,
            )
        raise ResultsFileError("not an asyncbench results file", location=source)
    version = raw.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ResultsFileError("missing or malformed schema_version", location=source)
    if version > SCHEMA_VERSION:
        raise ResultsFileError(
            f"written with results schema {version}, newer than this asyncbench ({__version__}) reads "
            f"(schema {SCHEMA_VERSION}); upgrade asyncbench to read it",
            location=source,
        )


@contextlib.contextmanager
def bulk_loading() -> Iterator[None]:
    """No cycle collection while a file becomes objects: parsing builds hundreds of thousands of containers,
    none in a cycle, and the collector (run every 700 allocations) walked them again and again: 40% of the
    time to load a 10,000-case file."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read(path: Path) -> Any:
    """A results file's parsed JSON; ResultsFileError for a file that is missing, no JSON, or a config."""
    text = inputs.read_text(path, ResultsFileError, "results file")
    try:
        raw = inputs.read_json(text)
    except json.JSONDecodeError as exc:
        if CONFIG_LINE.search(text):
            raise ResultsFileError(
                "this is a config, not a results file: run it with `asyncbench run FILE` (or check it with `asyncbench validate FILE`)",
                location=str(path),
            ) from None
        raise ResultsFileError(inputs.malformed(text, exc), location=str(path)) from None
    except ValueError as exc:
        raise ResultsFileError(f"not a results file: {exc}", location=str(path)) from None
    return raw
