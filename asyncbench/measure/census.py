"""The census of a step's hidden synchronizations (`run --syncs`): where the host waited, how often, how long.

Census rounds are rounds of their own, interleaved with the timed rounds (on SCHEDULE: measure.extra_rounds says
when), so nothing here ever runs inside a timed sample. In a census round each variant runs once as a
timed sample would (its prelude, the step, the case's sync), but with the backend's blocking entry points
(`Backend.sync_hooks`) wrapped: each call the step makes is timed with the host clock and attributed to the
user's line (frames.Frames), under the hook's kind and name. A hooked call made inside another (`item` calling
`__array__` inside the framework) counts once, at the outermost. The frame fallback (frames.SleepWatch) adds
the calls from the user's lines that slept where no hook was, from a second run of each step in the round (its
profile function slows the step: the hooked waits are timed in a run without it). The case's own sync after the step is not the
step's: nothing is recorded there.

What a wait's seconds are: the time the host thread spent blocked at that line for device work queued before it
(off the CPU on a CPU device, the call's wall time on a GPU). They are not what removing the wait would save: the
queued work still runs, and only host work that can then overlap it is saved (the step timed without the wait
says how much: the step form's slowdown_k1, or `ab`); every report that shows a census says so in its key.

The wrappers exist only while a census round runs: `installed` puts them in place and restores every entry
point after, also on an exception. A backend with nothing asynchronous on the device (NumPy; torch on a CPU)
gets no census rounds: `synchronous` says why its census is empty.

Entry points, for a backend's hooks or a test:
- `Taker(hooks, framework_roots)`: the census of a case; `round(...)` once per census round, `censuses()` at
  the end (one `Census` per variant, points sorted by time blocked, per-round vectors, medians, 95% intervals).
- `take(step, hooks, framework_roots, rounds=...)`: the census of one callable, run `rounds` times.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator, Mapping, Sequence

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import SyncHook
from asyncbench.measure.extra_rounds import Preludes, Schedule, Variants
from asyncbench.measure.frames import CAN_WATCH, Frames, SleepWatch, Where
from asyncbench.results import stats
from asyncbench.results.syncs import Census, SyncKind, SyncPoint, as_stored

# Six census rounds are the fewest whose median has a 95% interval (results.stats.order_rank: [min, max] of 6 covers
# 96.9%; of 5, 93.8%). They are taken after each of the first timed rounds, so a case stopped at its min_samples (6 by
# default) still has them; after that one census round per CENSUS_EVERY timed rounds narrows the intervals of a long
# case at a fifth of its time. A case that stops sooner (min_samples under 6) is topped up after its last timed round.
CENSUS_ROUNDS = 6
CENSUS_EVERY = 5
# A frame-fallback point is the step's when it waited in at least this share of the census rounds (5 of 6): a planted
# wait recurs every round, while a sleep on a lock that comes in 18% of rounds (MXNet's dot, 4% of 5 calls a step)
# would pass a rule of half the rounds (3 of 6) in 8% of censuses, and this one in 0.1%.
FALLBACK_RECURRENCE = 0.75
#: the kinds only the frame fallback finds
FALLBACK_KINDS = (SyncKind.UNKNOWN, SyncKind.QUEUE_FULL)
#: what a census of a backend without hooks can still see
FALLBACK_ONLY = "the frame fallback only (no hooks for this backend)"

#: a point's key within a step: where, what was called, its kind
Key = tuple[str, int, str, SyncKind]
#: a backend's own witness of synchronizing calls: given a callback, a context inside which it calls it as each
#: synchronizing call ends (torch's sync debug mode: backends/torch_syncs.debug_warnings)
Witness = Callable[[Callable[[], None]], ContextManager[Any]]


#: when a case's census rounds come among its timed rounds (measure.extra_rounds, which says it for every kind of extra round)
SCHEDULE = Schedule(first=CENSUS_ROUNDS, every=CENSUS_EVERY)


class _Recorder:
    """What one census step saw: per point, the waits and the seconds blocked."""

    def __init__(self, frames: Frames, timeline: list[TimedWait] | None = None, off_cpu: bool = False):
        self.frames = frames
        #: a hooked call's time blocked is the calling thread's time off the CPU in it, not its wall time (a CPU
        #: device, whose work runs on the framework's own threads while the caller sleeps): the call's own host
        #: work (jnp.nonzero's dispatch, a repr's formatting) is then not counted as waiting. A GPU wait may spin
        #: on the CPU (CUDA's default): wall time there.
        self.off_cpu = off_cpu
        self.points: dict[Key, list[float]] = {}
        self.hooked = 0
        self.local = threading.local()
        self.timeline = timeline  # each wait with when it ended (`timed_waits`, for --trace), where one is kept

    def add(self, where: Where | None, call: str, kind: SyncKind, seconds: float) -> None:
        if where is None:  # no user frame at all (a framework thread): not the step's line
            return
        if self.timeline is not None:
            self.timeline.append(TimedWait(where.file, where.line, kind, call, time.perf_counter() - seconds, seconds))
        key = (where.file, where.line, call, kind)
        counted = self.points.setdefault(key, [0, 0.0])
        counted[0] += 1
        counted[1] += seconds

    def unhooked(self, where: Where, call: str, seconds: float, dispatched: bool = False) -> None:
        """A wait the frame fallback found: backpressure where the call handed back a device value (it dispatched
        an op, and waited for room in the framework's queue), else a wait no hook names."""
        self.add(where, call, SyncKind.QUEUE_FULL if dispatched else SyncKind.UNKNOWN, seconds)

    def count(self) -> int:
        return self.hooked

    def inside(self) -> bool:
        return bool(getattr(self.local, "depth", False))


@dataclass(frozen=True)
class TimedWait:
    """One wait as `timed_waits` saw it: where, what, and when (perf_counter seconds; its start is read as its end
    less its seconds, the few microseconds the user's frame took to find included)."""

    file: str
    line: int
    kind: SyncKind
    call: str
    start: float
    seconds: float


@contextlib.contextmanager
def timed_waits(hooks: Sequence[SyncHook], framework_roots: frozenset[str]) -> Iterator[list[TimedWait]]:
    """Inside the block, every hooked wait the code makes, with when it happened (`--trace` marks each on its
    timeline: engine.trace); no frame fallback. The list fills as the block runs."""
    global _recording
    waits: list[TimedWait] = []
    with installed(hooks):
        _recording = _Recorder(Frames(framework_roots), waits)
        try:
            yield waits
        finally:
            _recording = None


#: the recorder of the census step running now (None: no step is being recorded; the wrappers pass calls through)
_recording: _Recorder | None = None


def _wrap(hook: SyncHook, original: Callable[..., Any]) -> Callable[..., Any]:
    """`original` timed and attributed while a census step records; a call inside another hooked call passes through."""
    kind = SyncKind(hook.kind)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        recorder = _recording
        if recorder is None or getattr(recorder.local, "depth", False) or (hook.when is not None and not hook.when(*args, **kwargs)):
            return original(*args, **kwargs)
        recorder.local.depth = True
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            blocked = time.perf_counter() - started
            if recorder.off_cpu:
                blocked = max(0.0, blocked - (time.thread_time() - cpu))
            recorder.local.depth = False
            where = recorder.frames.user_frame(sys._getframe(1))
            call = hook.call if where is None or where.entered is None else f"{where.entered} → {hook.call}"
            recorder.hooked += 1
            recorder.add(where, call, kind, blocked)

    hooked.__name__ = hooked.__qualname__ = hook.attribute
    hooked.__doc__ = getattr(original, "__doc__", None)
    return hooked


_MISSING = object()


@contextlib.contextmanager
def installed(hooks: Sequence[SyncHook]) -> Iterator[tuple[SyncHook, ...]]:
    """Every hook's entry point wrapped inside the block, each restored after (an inherited one removed again),
    also on an exception. A property's getter is wrapped in a property of its own. Yields the hooks that could not
    be wrapped (their owner lacks the attribute)."""
    done: list[tuple[Any, str, Any]] = []
    missing = []
    try:
        for hook in hooks:
            current = getattr(hook.owner, hook.attribute, _MISSING)
            if current is _MISSING:
                missing.append(hook)
                continue
            own = vars(hook.owner).get(hook.attribute, _MISSING) if hasattr(hook.owner, "__dict__") else _MISSING
            if own is not _MISSING and isinstance(own, (staticmethod, classmethod)):
                missing.append(hook)
                continue
            original: Any = own if own is not _MISSING else current
            if isinstance(original, property) and original.fget is not None:  # jax.Array._value: its getter is wrapped
                wrapped: Any = property(_wrap(hook, original.fget), original.fset, original.fdel, original.__doc__)
            else:
                wrapped = _wrap(hook, original)
            setattr(hook.owner, hook.attribute, wrapped)
            done.append((hook.owner, hook.attribute, own))
        yield tuple(missing)
    finally:
        for owner, attribute, own in reversed(done):
            if own is _MISSING:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, own)


@dataclass(frozen=True)
class _Step:
    """One variant's step as a census round runs it."""

    run: Callable[[], Any]
    prelude: Callable[[], None] | None = None


class Taker:
    """The census of one case: `round` per census round, `censuses` at the end.

    `hooks`: the backend's (Backend.sync_hooks); `framework_roots`: the top-level modules that are the framework's
    (Backend.owned_modules), whose frames are never the user's line; `fallback`: the frame fallback on."""

    def __init__(
        self,
        hooks: Sequence[SyncHook],
        framework_roots: frozenset[str],
        fallback: bool = True,
        backend: str = "",
        witness: Witness | None = None,
        off_cpu: bool = False,
    ):
        """`witness`: the backend's own report of synchronizing calls (TorchBackend.sync_witness), given the frame
        fallback's `synchronized` in its watched runs. `off_cpu`: a hooked wait's time is the caller's time off the
        CPU (a CPU device: _Recorder.off_cpu)."""
        self.off_cpu = off_cpu
        self.hooks = tuple(hooks)
        self.witness = witness if fallback and CAN_WATCH else None
        self.frames = Frames(framework_roots)
        self.fallback = fallback and CAN_WATCH
        self.backend = backend
        self.rounds: dict[str, list[dict[Key, list[float]]]] = {}
        self.missing: tuple[SyncHook, ...] = ()

    def round(
        self, variants: Variants, sync: Callable[[], None], order: Sequence[str] | None = None, preludes: Preludes | None = None
    ) -> None:
        """One census round: each variant (in `order`) run with the hooks in place, recorded from its call to its
        return, then the case's `sync`, unrecorded; and with the frame fallback, run once more under it, of which
        only the fallback's own points are kept. The hooked waits are timed in the first run: the fallback's
        profile function slows the step's issue (JAX's `y[0, 0]` took some 5× longer), so the device would get
        further ahead and a wait measured under it would be short (a 1.1 ms wait read as 0.2 ms)."""
        with installed(self.hooks) as missing:
            self.missing = missing
            for name in order or list(variants):
                points = self._run(variants[name], sync, (preludes or {}).get(name), watched=False)
                if self.fallback:
                    watched = self._run(variants[name], sync, (preludes or {}).get(name), watched=True)
                    points.update({key: counted for key, counted in watched.items() if key[3] in FALLBACK_KINDS})
                self.rounds.setdefault(name, []).append(points)

    def _run(
        self, step: Callable[[], Any], sync: Callable[[], None], prelude: Callable[[], None] | None, watched: bool
    ) -> dict[Key, list[float]]:
        """One recorded run of a step (under the frame fallback when `watched`): its points."""
        global _recording
        if prelude is not None:
            prelude()
        recorder = _Recorder(self.frames, off_cpu=self.off_cpu)
        watch = SleepWatch(self.frames, recorder.unhooked, recorder.count, recorder.inside)
        _recording = recorder
        # the backend's own witness (torch's sync debug mode) tells the fallback which call synchronized
        with self.witness(watch.synchronized) if watched and self.witness is not None else contextlib.nullcontext():
            if watched:
                watch.start()
            try:
                result = step()
            finally:
                if watched:
                    watch.stop()
                _recording = None
        sync()
        del result
        return recorder.points

    @property
    def taken(self) -> int:
        """Census rounds taken so far (those of the variant with fewest)."""
        return min((len(r) for r in self.rounds.values()), default=0)

    def coverage(self) -> str:
        seen = f"{self.backend or 'the backend'}'s hooks" if self.hooks else ""
        if self.hooks and self.fallback:
            said = f"{seen} and the frame fallback"
        elif self.hooks:
            said = f"{seen} (no frame fallback on this platform)"
        else:
            said = FALLBACK_ONLY if self.fallback else "nothing: no hooks, and no frame fallback on this platform"
        if self.witness is not None:
            said += f", with {self.backend or 'the backend'}'s own sync warnings"
        if self.missing:
            said += f"; not hooked (absent in this version): {', '.join(hook.call for hook in self.missing)}"
        return said

    def censuses(self, note: str | None = None, steps_per_call: int = 1) -> dict[str, Census]:
        """One Census per variant, from every round taken; `steps_per_call`: the user's steps one call of a variant
        runs (Workload.steps_per_call), what every figure is divided by."""
        return {name: summarize(name, rounds, self.coverage(), note, steps_per_call) for name, rounds in self.rounds.items()}


def summarize(
    variant: str, rounds: Sequence[Mapping[Key, Sequence[float]]], coverage: str, note: str | None = None, steps_per_call: int = 1
) -> Census:
    """A variant's Census from its census rounds: each point's waits and seconds per step in each round (0 where it
    did not wait in a round; a round's call of the variant ran `steps_per_call` of the user's steps), their medians,
    the 95% interval of the seconds' median (stats.median_ci over the rounds, as independent: the rounds are spread
    over the case), sorted by time blocked, largest first. Each round's figure is kept to the nanosecond, as the
    results file keeps it, so the census a run prints is the one `show` reads back.

    A point of the frame fallback that waited in under FALLBACK_RECURRENCE of the rounds is left out (and counted in
    the note): a step that syncs at a line does so step after step, while a framework's call that now and then sleeps
    on a lock its worker threads hold (MXNet's `dot` did, in 4% of calls on a loaded 2-core machine, for up to 7 ms)
    does not."""
    keys = sorted({key for points in rounds for key in points}, key=lambda k: (k[0], k[1], k[2]))
    found = []
    occasional = 0
    for file, line, call, kind in keys:
        # kept as its file keeps them (results.syncs.as_stored): the medians and intervals are then the file's own
        calls = tuple(as_stored(points.get((file, line, call, kind), (0, 0.0))[0] / steps_per_call) for points in rounds)
        waits = tuple(as_stored(points.get((file, line, call, kind), (0, 0.0))[1] / steps_per_call) for points in rounds)
        if kind in FALLBACK_KINDS and sum(1 for count in calls if count) < FALLBACK_RECURRENCE * len(rounds):
            occasional += 1  # the frame fallback's, in too few rounds: the machine's (a lock, a preemption), not the step's
            continue
        found.append(
            SyncPoint(
                file=file,
                line=line,
                kind=kind,
                call=call,
                calls_per_step=statistics.median(calls),
                wait_s_per_step=as_stored(statistics.median(waits)),
                wait_ci_s=_as_stored(stats.median_ci(waits, independent=True)),
                calls_rounds=calls,
                wait_s_rounds=waits,
            )
        )
    found.sort(key=lambda p: (-p.wait_s_per_step, p.file, p.line))
    if occasional:
        left_out = f"{occasional} occasional wait(s) the frame fallback saw in under 3/4 of the census rounds left out"
        note = f"{note}; {left_out}" if note else left_out
    return Census(variant=variant, rounds=len(rounds), points=tuple(found), coverage=coverage, note=note, steps_per_call=steps_per_call)


def _as_stored(interval: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if interval is None else (as_stored(interval[0]), as_stored(interval[1]))


def taker_for(backend: Backend, device: str, asynchronous: bool) -> Taker | None:
    """The census of a case on `backend` and `device`: its hooks, its modules as the framework's; None where the
    backend runs synchronously there (`synchronous` says why its census is empty)."""
    if not asynchronous:
        return None
    witness = getattr(backend, "sync_witness", None)  # torch's; a Backend method once base.py has one
    return Taker(
        backend.sync_hooks(device),
        backend.owned_modules(),
        backend=backend.name,
        witness=witness(device) if witness else None,
        off_cpu=device == "cpu",
    )


def of_case(taker: Taker | None, variants: Sequence[str], backend: str, device: str, steps_per_call: int = 1) -> dict[str, Census]:
    """A case's censuses: the taker's, or those of a synchronous backend (no taker)."""
    return taker.censuses(steps_per_call=steps_per_call) if taker is not None else synchronous(variants, backend, device)


def synchronous(variants: Sequence[str], backend: str, device: str) -> dict[str, Census]:
    """The census of a backend that runs synchronously on `device`: no rounds, no points, and why."""
    why = f"{backend} runs synchronously on {device}: nothing waits for a device"
    if backend == "numpy":
        why = "numpy runs synchronously: nothing waits for a device"
    return {name: Census(variant=name, rounds=0, coverage=why) for name in variants}


def unmeasured(variants: Sequence[str], why: str) -> dict[str, Census]:
    """The census of a case where no census round could run, saying why."""
    return {name: Census(variant=name, rounds=0, note=why) for name in variants}


def take(
    step: Callable[[], Any],
    hooks: Sequence[SyncHook],
    framework_roots: frozenset[str] = frozenset(),
    rounds: int = CENSUS_ROUNDS,
    sync: Callable[[], None] = lambda: None,
    fallback: bool = True,
    witness: Witness | None = None,
) -> Census:
    """The census of one callable run `rounds` times (after one unrecorded run: compiling is not a wait), for a
    test or a backend's own check of its hooks."""
    step()
    sync()
    taker = Taker(hooks, framework_roots, fallback, witness=witness)
    for _ in range(rounds):
        taker.round({"step": step}, sync)
    return taker.censuses()["step"]
