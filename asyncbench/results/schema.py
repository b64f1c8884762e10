"""The only JSON code: the versioned results schema, atomic saving and loading.

Files are written to a temporary file in the target's directory, flushed to
disk and renamed over the target, so a results file is always either the old
complete one or the new complete one — never half-written, also on Ctrl-C or
a full disk. Loading refuses newer schemas and foreign files with a clear
message, and reads older schema versions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping

from asyncbench.errors import InputError, read_text
from asyncbench.results.model import (
    CLOCKS,
    STATUSES,
    Check,
    Memory,
    MetricInfo,
    Report,
    Result,
    Samples,
    Sampling,
    Stats,
    Status,
    StopReason,
    VariantResult,
    Verdict,
)
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
SCHEMA_VERSION = 3


#: a line only a config has: what tells `show config.yaml` apart from a broken results file
CONFIG_LINE = re.compile(r"^experiments\s*:", re.MULTILINE)


def is_results(raw: Any) -> bool:
    """Whether parsed data is an asyncbench results file (for telling a user who passed one to `run`)."""
    return isinstance(raw, dict) and isinstance(raw.get("tool"), dict) and raw["tool"].get("name") == TOOL_NAME


class ResultsFileError(InputError):
    """A results file that cannot be read: missing, truncated, foreign or too new."""


def new_report(config: Mapping[str, Any], environment: Mapping[str, Any], results: tuple[Result, ...] = ()) -> Report:
    return Report(
        schema_version=SCHEMA_VERSION,
        tool_name=TOOL_NAME,
        tool_version=__version__,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        environment=dict(environment),
        config=dict(config),
        results=tuple(results),
    )


def _finite(value: Any) -> Any:
    """JSON has no NaN/inf: store them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _variant_to_dict(variant: VariantResult) -> dict[str, Any]:
    return {
        "samples": {clock: None if (values := getattr(variant.samples, clock)) is None else list(values) for clock in CLOCKS},
        **{clock: dataclasses.asdict(s) if (s := getattr(variant, clock)) is not None else None for clock in CLOCKS},
        "memory": dataclasses.asdict(variant.memory),
    }


def result_to_dict(result: Result) -> dict[str, Any]:
    return {
        "id": result.id,
        "experiment": result.experiment,
        "workload": result.workload,
        "backend": result.backend,
        "device": result.device,
        "params": dict(result.params),
        "status": result.status,
        "reason": result.reason,
        "variants": {name: _variant_to_dict(v) for name, v in result.variants.items()},
        "metrics": {name: _finite(value) for name, value in result.metrics.items()},
        "bounds": {name: None if b is None else [_finite(b[0]), _finite(b[1])] for name, b in result.bounds.items()},
        "checks": [check_to_dict(c) for c in result.checks],
        "note": result.note,
        "sampling": dataclasses.asdict(result.sampling) if result.sampling is not None else None,
        "unavailable": result.unavailable,
        "asynchronous": result.asynchronous,
        "warnings": list(result.warnings),
        "traces": dict(result.traces),
        "trace_detail": result.trace_detail,
        "metric_info": {name: dataclasses.asdict(info) for name, info in result.metric_info.items()},
        "reading": result.reading,
    }


def check_to_dict(check: Check) -> dict[str, Any]:
    """A check as stored: expect, verdict, value, bounds (only with an interval), detail."""
    stored: dict[str, Any] = {"expect": check.expect, "verdict": check.verdict.value, "value": _finite(check.value), "detail": check.detail}
    if check.bounds is not None:
        stored["bounds"] = [_finite(check.bounds[0]), _finite(check.bounds[1])]
    return stored


def check_from_dict(raw: Mapping[str, Any]) -> Check:
    bounds = raw.get("bounds")
    return Check(
        expect=str(raw["expect"]),
        verdict=Verdict(raw["verdict"]),
        detail=str(raw.get("detail", "")),
        value=raw.get("value"),
        bounds=(float(bounds[0]), float(bounds[1])) if bounds else None,
    )


def to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema_version": report.schema_version,
        "tool": {"name": report.tool_name, "version": report.tool_version},
        "created": report.created,
        "interrupted": report.interrupted,
        "environment": dict(report.environment),
        "config": dict(report.config),
        "results": [result_to_dict(r) for r in report.results],
    }


def dumps(report: Report) -> str:
    return json.dumps(to_dict(report), indent=1, allow_nan=False) + "\n"


def atomic_write(path: str | Path, content: str | bytes) -> None:
    """Write `content` to `path` so that readers see the old file or the new one, never a mix."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(descriptor, NEW_FILE_MODE & ~_umask())  # mkstemp's 0600 would hide results from the rest of a team
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def check_writable(path: str | Path) -> None:
    """Fail now, not after a long run, if `path` cannot be written (InputError)."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory; expected a file path for the results", location=str(path))
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"directory {str(parent)!r} does not exist", location=str(path))
    try:
        descriptor, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror}", location=str(path)) from None
    os.close(descriptor)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("the existing file is not writable", location=str(path))


#: what open() gives a new file before the umask: results are ordinary files, readable as the umask allows
NEW_FILE_MODE = 0o666


def _umask() -> int:
    """The process's umask (there is no way to read it without setting it)."""
    current = os.umask(0)
    os.umask(current)
    return current


def save(report: Report, path: str | Path) -> None:
    atomic_write(path, dumps(report))


def _stats(raw: Any) -> Stats | None:
    return None if raw is None else Stats(**raw)


def _samples(raw: Mapping[str, Any]) -> Samples:
    device = raw.get("device_s")
    return Samples(issue_s=tuple(raw["issue_s"]), done_s=tuple(raw["done_s"]), device_s=tuple(device) if device is not None else None)


def result_from_dict(raw: Mapping[str, Any]) -> Result:
    if raw["status"] not in STATUSES:
        raise ValueError(f"unknown status {raw['status']!r}")
    return Result(
        id=raw["id"],
        experiment=raw["experiment"],
        workload=raw["workload"],
        backend=raw["backend"],
        device=raw["device"],
        params=raw.get("params", {}),
        status=Status(raw["status"]),
        reason=raw.get("reason"),
        variants={
            name: VariantResult(
                samples=_samples(v["samples"]),
                issue_s=Stats(**v["issue_s"]),
                done_s=Stats(**v["done_s"]),
                device_s=_stats(v.get("device_s")),
                memory=Memory(**v.get("memory", {})),
            )
            for name, v in raw.get("variants", {}).items()
        },
        metrics=raw.get("metrics", {}),
        bounds={name: None if b is None else (float(b[0]), float(b[1])) for name, b in (raw.get("bounds") or {}).items()},
        checks=tuple(check_from_dict(c) for c in raw.get("checks", ())),
        note=raw.get("note"),
        sampling=_sampling(raw.get("sampling")),
        unavailable=bool(raw.get("unavailable", False)),
        asynchronous=raw.get("asynchronous"),
        warnings=tuple(str(w) for w in raw.get("warnings") or ()),
        traces={str(k): str(v) for k, v in (raw.get("traces") or {}).items()},
        trace_detail=raw.get("trace_detail"),
        metric_info={str(k): MetricInfo(**v) for k, v in (raw.get("metric_info") or {}).items()},
        reading=raw.get("reading"),
    )


def _sampling(raw: Mapping[str, Any] | None) -> Sampling | None:
    if not raw:
        return None
    return Sampling(**{**raw, "stopped_by": StopReason(raw["stopped_by"])})


def from_dict(raw: Any, source: str = "<results>") -> Report:
    """Build a Report from parsed JSON; ResultsFileError if it is not ours or too new."""
    if not is_results(raw):
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
    try:
        return Report(
            schema_version=version,
            tool_name=TOOL_NAME,
            tool_version=str(raw["tool"].get("version", "?")),
            created=str(raw.get("created", "")),
            environment=raw.get("environment", {}),
            config=raw.get("config", {}),
            results=tuple(result_from_dict(r) for r in raw["results"]),
            interrupted=bool(raw.get("interrupted", False)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsFileError(f"malformed results ({type(exc).__name__}: {exc})", location=source) from None


def load(path: str | Path) -> Report:
    """Read a results file; ResultsFileError (exit 2) for anything unusable."""
    path = Path(path)
    text = read_text(path, ResultsFileError, "results file")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        if CONFIG_LINE.search(text):
            raise ResultsFileError(
                "this is a config, not a results file: run it with `asyncbench run FILE` (or check it with `asyncbench validate FILE`)",
                location=str(path),
            ) from None
        raise ResultsFileError(f"not valid JSON (truncated?): {exc.msg} at line {exc.lineno}", location=str(path)) from None
    return from_dict(raw, source=str(path))
