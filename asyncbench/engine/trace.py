"""`--trace DIR`: after a case is measured, each variant once more under its backend's profiler.

The run is bracketed by the harness's own ranges — `asyncbench: issue`
(until the variant returned), `asyncbench: sync` (the wait for every device
and stream) and `asyncbench: done` (a mark when it is over) — so the
illusion is visible at a glance next to the framework's lanes: on an
asynchronous backend the issue range ends long before the work on the
device does. With a profiler (torch, JAX) the ranges go into the
framework's own timeline; without one the file holds the harness's ranges
alone. One Chrome-trace JSON file per case and variant, written atomically;
it opens in the Perfetto UI (ui.perfetto.dev) and in chrome://tracing.
Tracing never runs during the timed samples, and a profiler that fails is
a warning on the row: the measurement stands.

On an asynchronous backend each point where the host waited in the traced
run is marked too (the census's hooks, measure.census.timed_waits): a range
`sync FILE:LINE (KIND)` on the Python thread, as long as the wait, its call
and path in its args, placed against the harness's issue range.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping

from asyncbench.backends.base import Backend
from asyncbench.errors import InputError, describe_failure
from asyncbench.measure.census import TimedWait, timed_waits
from asyncbench.results import writing

ISSUE, SYNC, DONE = "asyncbench: issue", "asyncbench: sync", "asyncbench: done"
#: the category of the ranges that mark where the host waited (`sync train.py:42 (print)`)
SYNC_CATEGORY = "asyncbench sync"
HARNESS_RANGES = (ISSUE, SYNC, DONE)
SUFFIX = ".trace.json"


@dataclass(frozen=True)
class Traced:
    """What tracing a case produced: variant -> file, what the files hold, and what went wrong."""

    files: Mapping[str, str]
    detail: str  # "torch.profiler" / "harness ranges only: numpy has no profiler ..."
    warnings: tuple[str, ...] = ()


def file_name(case_id: str, variant: str) -> str:
    """A file name from the case id and variant: `matmul[torch,cpu,size=64].matmul.trace.json`, safe on any filesystem."""
    return re.sub(r"[^\w.,=+\[\]-]+", "_", f"{case_id}.{variant}") + SUFFIX


def check_directory(directory: str | Path) -> Path:
    """The trace directory, created and proven writable before anything runs (InputError otherwise)."""
    path = Path(directory).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".asyncbench-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"--trace {directory}: cannot write there: {exc.strerror or exc}") from None
    return path


def _harness_trace(marks: list[tuple[str, float, float]]) -> dict[str, Any]:
    """A Chrome trace of the harness's ranges alone (times in µs from the start of the run)."""
    origin = marks[0][1]
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "asyncbench harness"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "frontend (the Python thread)"}},
    ]
    for name, start, end in marks:
        event = {"name": name, "cat": "asyncbench", "pid": 1, "tid": 1, "ts": (start - origin) * 1e6}
        events.append({**event, "ph": "i", "s": "t"} if name == DONE else {**event, "ph": "X", "dur": (end - start) * 1e6})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def _mark_waits(trace: dict[str, Any], marks: list[tuple[str, float, float]], waits: list[TimedWait]) -> None:
    """Each wait the step made (in the issue range: the case's own sync after it is not the step's) as a range on
    the thread of the trace's issue range, placed by the offset between that range's timestamp and the harness's
    clock (nothing marked where the trace has no issue range)."""
    events = trace.get("traceEvents")
    issue = next((e for e in events or () if isinstance(e, dict) and e.get("name") == ISSUE and "ts" in e), None)
    if issue is None or not waits or not isinstance(events, list):
        return
    _, issued_at, returned_at = marks[0]
    offset_us = float(issue["ts"]) - issued_at * 1e6
    for wait in (w for w in waits if issued_at <= w.start <= returned_at):  # the step's, not the case's sync after it
        where = f"{Path(wait.file).name}:{wait.line}"
        args = {"file": wait.file, "line": wait.line, "kind": str(wait.kind), "call": wait.call}
        event = {"name": f"sync {where} ({wait.kind})", "cat": SYNC_CATEGORY, "ph": "X", "args": args}
        events.append(
            {**event, "pid": issue.get("pid"), "tid": issue.get("tid"), "ts": offset_us + wait.start * 1e6, "dur": wait.seconds * 1e6}
        )


def _run_once(
    run: Callable[[], Any],
    sync: Callable[[], None],
    annotate: Callable[[str], ContextManager[Any]],
    prelude: Callable[[], None] | None = None,
) -> list[tuple[str, float, float]]:
    """One traced run; `prelude` first, before the issue range, as a timed sample has it (sync_async's hold:
    without it the queued variant's trace shows ops that never waited behind anything)."""
    if prelude is not None:
        prelude()
    start = time.perf_counter()
    with annotate(ISSUE):
        result = run()
    issued = time.perf_counter()
    with annotate(SYNC):
        sync()
    done = time.perf_counter()
    with annotate(DONE):
        pass
    del result
    return [(ISSUE, start, issued), (SYNC, issued, done), (DONE, done, done)]


def record(
    backend: Backend,
    device: str,
    case_id: str,
    variants: Mapping[str, Callable[[], Any]],
    sync: Callable[[], None],
    directory: str,
    preludes: Mapping[str, Callable[[], None]] | None = None,
) -> Traced:
    """Trace every variant once (after timing), each into its own file in `directory`; `preludes`: per
    variant, the untimed work issued before each of its samples (Prepared.preludes), issued before its run."""
    files, warnings = {}, []
    hooks = backend.sync_hooks(device) if backend.is_asynchronous(device) else ()
    for name, run in variants.items():
        prelude = (preludes or {}).get(name)
        trace: dict[str, Any] | None = None
        profiler = backend.profiler(device)
        if profiler is not None:
            try:
                with profiler, timed_waits(hooks, backend.owned_modules()) as waits:
                    marks = _run_once(run, sync, profiler.annotate, prelude)
                trace = profiler.trace()
                _mark_waits(trace, marks, waits)
            except Exception as exc:  # noqa: BLE001 - the measurement stands; the row says the trace failed
                warnings.append(f"{name}: the {backend.name} profiler failed ({describe_failure(exc)}); harness ranges only")
        if trace is None:
            with timed_waits(hooks, backend.owned_modules()) as waits:
                marks = _run_once(run, sync, lambda _: contextlib.nullcontext(), prelude)
            trace = _harness_trace(marks)
            _mark_waits(trace, marks, waits)
        path = Path(directory) / file_name(case_id, name)
        try:
            writing.atomic_write(path, json.dumps(trace))
        except OSError as exc:  # a full disk loses the timeline, not the measurement
            warnings.append(f"{name}: the trace could not be written ({exc.strerror or exc})")
            continue
        files[name] = str(path)
    detail = (
        f"{backend.name}'s profiler with the harness's ranges"
        if backend.no_profiler is None
        else f"harness ranges only: {backend.name}: {backend.no_profiler}"
    )
    return Traced(files, detail, tuple(warnings))
