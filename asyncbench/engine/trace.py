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
a warning on the row: the measurement stands. The traced sample is taken as
a timed one is: after a warm-up call (under the profiler, in its own range
`asyncbench: warm-up`: the first call under a freshly started profiler pays
for its start) and with Python's collector off. Its lengths are still the
profiler's: where its issue or done lies outside every timed sample's, the
row's trace note says so in numbers (trace_sample).

On an asynchronous backend each point where the host waited in the traced
run is marked too (the census's hooks, measure.census.timed_waits): a range
`sync FILE:LINE (KIND)` on the Python thread, as long as the wait, its call
and path in its args, placed against the harness's issue range.

With `--bound` too, each variant gets one more file (`VARIANT.bound.trace.json`, its key in the result's traces
`VARIANT (bound)`): one perturbed call per side that was perturbed (the host, and the device where the backend
has a delay), each at one level, DELAY_SHARE of the step, before each of its first TRACED_DELAYS step calls, with
a range `asyncbench: host delay` or `asyncbench: device delay` around each delay (for the device, around queueing it: the delay's own
work shows in the framework's device lanes), so the delay is seen against what the framework does around it. A loop
the profiler recorded trip by trip (JAX's device delay) is one range (`collapse_loops`); recording each trip made it
run 12-23× its length there (16-44 ms for 1.3-1.9 ms on the 2-core machine), which the trace shows as it ran. As the plain
trace: after the timed and perturbation rounds, written atomically, and a failure is a warning.
"""

from __future__ import annotations

import contextlib
import gc
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceDelay
from asyncbench.engine import trace_sample
from asyncbench.errors import InputError, describe_failure
from asyncbench.measure.census import TimedWait, timed_waits
from asyncbench.measure.perturbation import Perturbable
from asyncbench.results import writing
from asyncbench.results.bound import Side
from asyncbench.results.model import Samples
from asyncbench.results.traces_held import BOUND_KEY, BOUND_SUFFIX, file_name

ISSUE, SYNC, DONE = "asyncbench: issue", "asyncbench: sync", "asyncbench: done"
#: the category of the ranges that mark where the host waited (`sync train.py:42 (print)`)
SYNC_CATEGORY = "asyncbench sync"
HARNESS_RANGES = (ISSUE, SYNC, DONE)
#: the range of the untimed call under the profiler before the traced one (trace_sample.warm_up)
WARM_UP = trace_sample.WARM_UP
#: the ranges around each delay of a traced perturbed call (`--trace` with `--bound`)
HOST_DELAY, DEVICE_DELAY = "asyncbench: host delay", "asyncbench: device delay"
DELAY_RANGES = {Side.HOST: HOST_DELAY, Side.DEVICE: DEVICE_DELAY}
#: the traced perturbed call's delay, as a share of the variant's step: the middle of --bound's levels
#: (measure.perturbation.LEVELS), where a side with that much slack absorbs it and one without shows the step grow
DELAY_SHARE = 0.5
#: the traced call's delays come before its first this many step calls, not before each: the first shows a delay
#: that always shows (the one before any of the call's work), the next ones a side's slack absorbing it or the step
#: growing by it. More cost a JAX file dearly: its device delay is a loop that jax.profiler records trip by trip
#: (some 5,500 trips, 80,000 events, for a delay of 2 ms; collapsed after, LOOP_REPEATS): before each of 20 steps, a
#: million events, the profiler's cap, which cut the device's call off (the file: 226 MB)
TRACED_DELAYS = 3
#: the traced host delay spins in C loops of about this long (sum over a range), handing the GIL on between them:
#: the rounds' spin (measure.host_spin.HostSpin) is a Python loop of calls, and under jax.profiler's Python tracer
#: 20 of its spins of 2.8 ms made a million events (the tracer's cap: the file 226 MB, the device's call cut off)
SPIN_CHUNK_S = 100e-6
#: in a perturbed call's profiler trace, one execution of a compiled computation (XLA's `run_id`) on one thread whose
#: ops repeat more than this many times each is a loop traced trip by trip, and becomes one range: JAX's device
#: delay is a fori_loop XLA's profiler records as three ops and three "end:" marks a trip (2 ms: ~80,000 events; three
#: delays made a 56 MB file of the 1 MB a plain call takes)
LOOP_REPEATS = 50
#: the category of such a range
COLLAPSED_CATEGORY = "asyncbench collapsed"


@dataclass(frozen=True)
class Perturbing:
    """What tracing a perturbed call needs of `--bound`'s rounds: the case's step rebuilt with a call before each step
    call (Prepared.perturbable), the backend's device delay (None: the host side only), and each variant's step
    time the delay is DELAY_SHARE of (a variant without one is not traced perturbed)."""

    perturbable: Perturbable
    delay: DeviceDelay | None
    step_s: Mapping[str, float]


@dataclass(frozen=True)
class Traced:
    """What tracing a case produced: variant -> file, what the files hold, and what went wrong."""

    files: Mapping[str, str]
    detail: str  # "torch.profiler" / "harness ranges only: numpy has no profiler ..."
    warnings: tuple[str, ...] = ()


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
    origin = min(start for _, start, _ in marks)
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
    without it the queued variant's trace shows ops that never waited behind anything), and Python's collector off
    as in the timed samples (measure.timing: a collection inside a sample is not the workload's cost)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
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
    finally:
        if collecting:
            gc.enable()
    return [(ISSUE, start, issued), (SYNC, issued, done), (DONE, done, done)]


def record(
    backend: Backend,
    device: str,
    case_id: str,
    variants: Mapping[str, Callable[[], Any]],
    sync: Callable[[], None],
    directory: str,
    preludes: Mapping[str, Callable[[], None]] | None = None,
    perturbing: Perturbing | None = None,
    timed: Mapping[str, Samples] | None = None,
) -> Traced:
    """Trace every variant once (after timing), each into its own file in `directory`; `preludes`: per
    variant, the untimed work issued before each of its samples (Prepared.preludes), issued before its run;
    `perturbing` (`--bound`): each variant's perturbed calls too, into a file of their own; `timed`: the timed
    samples, each variant's traced call compared with them (trace_sample) in the detail."""
    files, warnings = {}, []
    clocks: dict[str, tuple[float, float]] = {}
    hooks = backend.sync_hooks(device) if backend.is_asynchronous(device) else ()
    for name, run in variants.items():
        prelude = (preludes or {}).get(name)
        trace: dict[str, Any] | None = None
        profiler = backend.profiler(device)
        if profiler is not None:
            try:
                with profiler, timed_waits(hooks, backend.owned_modules()) as waits:
                    trace_sample.warm_up(run, sync, profiler.annotate, prelude)
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
        clocks[name] = trace_sample.clocks(marks)
        path = Path(directory) / file_name(case_id, name)
        try:
            writing.atomic_write(path, json.dumps(trace))
        except OSError as exc:  # a full disk loses the timeline, not the measurement
            warnings.append(f"{name}: the trace could not be written ({exc.strerror or exc})")
            continue
        files[name] = str(path)
        if perturbing is not None and perturbing.step_s.get(name):
            written, warning = _record_perturbed(backend, device, case_id, name, sync, directory, prelude, perturbing)
            files.update({f"{name}{BOUND_KEY}": written} if written else {})
            warnings.extend([warning] if warning else [])
    detail = (
        f"{backend.name}'s profiler with the harness's ranges"
        if backend.no_profiler is None
        else f"harness ranges only: {backend.name}: {backend.no_profiler}"
    )
    differs = trace_sample.differences({name: clocks[name] for name in files if name in clocks}, timed)
    return Traced(files, f"{detail}; {differs}" if differs else detail, tuple(warnings))


def _record_perturbed(
    backend: Backend,
    device: str,
    case_id: str,
    name: str,
    sync: Callable[[], None],
    directory: str,
    prelude: Callable[[], None] | None,
    perturbing: Perturbing,
) -> tuple[str | None, str | None]:
    """One variant's perturbed calls (a host spin, then a device delay where there is one, DELAY_SHARE of its step
    before each step call, each delay in its range) in the backend's profiler, else with the harness's ranges alone,
    written atomically: the file's path, or None and the warning that says why not (the measurement stands)."""
    level_s = DELAY_SHARE * perturbing.step_s[name]
    sides = (Side.HOST, Side.DEVICE) if perturbing.delay is not None else (Side.HOST,)
    trace: dict[str, Any] | None = None
    warning = None
    profiler = backend.profiler(device)
    if profiler is not None:
        try:
            with profiler:
                _run_perturbed(perturbing, name, sides, level_s, sync, profiler.annotate, prelude)
            trace = profiler.trace()
            collapse_loops(trace)
        except Exception as exc:  # noqa: BLE001 - the measurement stands; the row says the trace failed
            warning = f"{name}: the {backend.name} profiler failed on the perturbed call ({describe_failure(exc)}); harness ranges only"
    try:
        if trace is None:
            trace = _harness_trace(_run_perturbed(perturbing, name, sides, level_s, sync, lambda _: contextlib.nullcontext(), prelude))
        path = Path(directory) / file_name(case_id, name, BOUND_SUFFIX)
        writing.atomic_write(path, json.dumps(trace))
    except OSError as exc:  # a full disk loses the timeline, not the measurement
        return None, f"{name}: the perturbed call's trace could not be written ({exc.strerror or exc})"
    except Exception as exc:  # noqa: BLE001 - a step that fails perturbed here ran in the rounds: the measurement stands
        return None, f"{name}: the perturbed call could not be traced ({describe_failure(exc)})"
    return str(path), warning


def _run_perturbed(
    perturbing: Perturbing,
    name: str,
    sides: tuple[Side, ...],
    level_s: float,
    sync: Callable[[], None],
    annotate: Callable[[str], ContextManager[Any]],
    prelude: Callable[[], None] | None,
) -> list[tuple[str, float, float]]:
    """One call of the variant per side, each with a delay of `level_s` before each of its first TRACED_DELAYS step
    calls, in its range: the harness's marks of every call and every delay, in the order they ran."""
    marks: list[tuple[str, float, float]] = []
    for side in sides:
        label = DELAY_RANGES[side]
        if side == Side.HOST:
            inject: Callable[[], None] = TracedSpin(level_s)
        else:
            assert perturbing.delay is not None
            inject = perturbing.delay.before_step(level_s)

        injected = [0]

        def delayed(inject: Callable[[], None] = inject, label: str = label, injected: list[int] = injected) -> None:
            if injected[0] >= TRACED_DELAYS:
                return
            injected[0] += 1
            started = time.perf_counter()
            with annotate(label):
                inject()
            marks.append((label, started, time.perf_counter()))

        run = perturbing.perturbable(delayed)[name]
        marks.extend(_run_once(run, sync, annotate, prelude))
        if side == Side.DEVICE and perturbing.delay is not None:
            perturbing.delay.measured_s()  # its events read and forgotten: the next sample starts with none
    return marks


class TracedSpin:
    """A busy spin of `seconds` that a profiler sees as a few calls: C loops of SPIN_CHUNK_S (sum over a range,
    sized once from a timed loop), the GIL handed on between them, until the host clock says it ran its length."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter):
        self.seconds, self.clock = seconds, clock
        probe = 20_000
        started = clock()
        sum(range(probe))
        took = max(clock() - started, 1e-9)
        self.chunk = max(1, int(probe * SPIN_CHUNK_S / took))

    def __call__(self) -> None:
        clock, seconds, chunk = self.clock, self.seconds, self.chunk
        started = clock()
        while clock() - started < seconds:
            sum(range(chunk))
            time.sleep(0)


def collapse_loops(trace: dict[str, Any]) -> int:
    """Each loop traced trip by trip (an execution, by XLA's `run_id`, on one thread whose ops repeat more than
    LOOP_REPEATS times each) made one range over it, every event of that thread within its span dropped (the
    trips' ops and their "end:" marks; asyncbench's own ranges stay): how many loops were collapsed."""
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        return 0
    runs: dict[tuple[Any, Any, Any], list[dict[str, Any]]] = {}
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        args = event.get("args")
        if isinstance(args, dict) and args.get("run_id") is not None:
            runs.setdefault((event.get("pid"), event.get("tid"), args["run_id"]), []).append(event)
    spans: dict[tuple[Any, Any], list[tuple[float, float]]] = {}
    collapsed = []
    for (pid, tid, run_id), ops in runs.items():
        names = {op.get("name") for op in ops}
        if len(ops) <= LOOP_REPEATS * len(names):
            continue
        start = min(float(op["ts"]) for op in ops)
        end = max(float(op["ts"]) + float(op.get("dur", 0)) for op in ops)
        spans.setdefault((pid, tid), []).append((start, end))
        module = ops[0].get("args", {}).get("hlo_module", "")
        collapsed.append(
            {
                "name": f"{module}: a loop of {len(ops) // len(names)} trips (collapsed)",
                "cat": COLLAPSED_CATEGORY,
                "ph": "X",
                "pid": pid,
                "tid": tid,
                "ts": start,
                "dur": end - start,
                "args": {"run_id": run_id, "hlo_module": module, "ops": sorted(str(n) for n in names), "events": len(ops)},
            }
        )
    if not collapsed:
        return 0

    def inside(event: Any) -> bool:
        if not isinstance(event, dict) or event.get("ph") != "X" or str(event.get("cat", "")).startswith("asyncbench"):
            return False
        if str(event.get("name", "")).startswith("asyncbench:"):
            return False
        found = spans.get((event.get("pid"), event.get("tid")))
        if not found:
            return False
        ts = float(event.get("ts", 0))
        return any(start <= ts and ts + float(event.get("dur", 0)) <= end for start, end in found)

    trace["traceEvents"] = [event for event in events if not inside(event)] + collapsed
    return len(collapsed)
