"""Where a step waits: the census of the points where the host blocked on the device (`run --syncs`).

A census is taken in rounds of its own, interleaved with the timed rounds, so wrapping the framework's blocking
calls never touches a timed sample. Each point where the host waited is named by the user's own source line (the
first frame outside the framework and asyncbench), what was called there, and its kind; per step it says how many
times the host waited there and how long, with a 95% interval over the census rounds.

Plain frozen dataclasses, no framework: a census is read, compared and rendered without torch.

Stored in a results file (schema 9) as a result's `syncs`: {variant: census_to_dict(census)}, absent when no census
was asked for: written, checked key by key and read back here (`census_to_dict`, `check_census`, `census_from_dict`),
which results.records calls for each variant.

For the output (issue 35b): `SyncPoint.file` is the code object's own file name, as Python has it (absolute for
an imported module, a workload's file included); `call` may read "jax.numpy.nonzero → jax.Array._value" when the
user's line called a framework function that waited inside (the function the line called, then the hooked entry
point); points of kind `unattributed` come from the frame fallback (a call from the user's line that slept), their
seconds the time it was off the CPU. A census of a synchronous backend has `rounds == 0`, no points and a
`coverage` that says why.

"Per step" is per step of the user's: one call of a variant may run several (the step form runs `steps` of them a
sample; Census.steps_per_call), and every figure, the per-round ones included, is divided by them, so a `.item()`
in the user's step reads 1 wait per step whatever the sample's length.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping

from asyncbench.results import fields, recordable
from asyncbench.results.fields import At
from asyncbench.results.word import Word


class SyncKind(Word):
    """What sort of wait a sync point is: the textbook's conversion chapter names the first three."""

    CONVERSION = "conversion"  # a device value read as a host value: .item(), .numpy(), .asnumpy(), float(x), .tolist()
    PRINT = "print"  # printing or formatting a device value
    EXPLICIT = "explicit wait"  # a barrier the code asks for: block_until_ready, wait_to_read, waitall, synchronize
    TRANSFER = "transfer"  # a copy between host and device that waits (pageable memory, device_get)
    CONTROL_FLOW = "control flow"  # a device value decides a branch: bool(x), `if x:`, nonzero, masked indexing
    UNKNOWN = "unattributed"  # a blocking wait no backend hook covers, found by the frame fallback
    #: the dispatch of an op that hands back a device value waited for room in the framework's queue (backpressure:
    #: the host ran as far ahead as the framework lets it, JAX's CPU client holds some 30 computations): shown, but
    #: no sync of the step's, so the whole step's figures leave it out (a check names it as `[queue full]`)
    QUEUE_FULL = "queue full"


SYNC_KINDS = tuple(SyncKind)
#: the kinds that are the step's own syncs: every kind but backpressure (what the whole step's figures sum)
STEP_SYNC_KINDS = tuple(kind for kind in SyncKind if kind is not SyncKind.QUEUE_FULL)


@dataclass(frozen=True)
class SyncPoint:
    """One place in the user's code where the host waited, summed over a step."""

    #: the user's source file and line (the first frame outside the framework and asyncbench)
    file: str
    line: int
    kind: SyncKind
    #: what was called there, e.g. "jax.Array.item", "mxnet.nd.NDArray.asnumpy", "torch.Tensor.item"
    call: str
    #: how many times per step the host waited here (the median over the census rounds)
    calls_per_step: float
    #: time blocked here per step: median over the census rounds, with its 95% interval (None: too few rounds). The
    #: time the host waited here for work already queued, not what removing the wait saves (that work still runs)
    wait_s_per_step: float
    wait_ci_s: tuple[float, float] | None = None
    #: queued operations the wait drained per step, where the backend exposes its queue (None: not known)
    drained_per_step: float | None = None
    #: per census round (aligned with the census's rounds; 0 where this point did not wait in a round): the waits
    #: and the seconds blocked, from which any interval (a check on one line or one kind) is computed
    calls_rounds: tuple[float, ...] = ()
    wait_s_rounds: tuple[float, ...] = ()

    @property
    def where(self) -> str:
        """file:line, as an editor or a traceback writes it."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Census:
    """The sync points of one variant of one case, sorted by time blocked per step (largest first)."""

    variant: str
    #: census rounds taken (each a step run with the hooks in place, untimed)
    rounds: int
    points: tuple[SyncPoint, ...] = ()
    #: what could see the waits here: the backend's hooks and the frame fallback, or why some could not
    #: ("jax hooks and the frame fallback"; "numpy runs synchronously: nothing waits for a device")
    coverage: str = ""
    #: why the census is partial or absent, when it is (None: complete)
    note: str | None = None
    #: the user's steps one call of the variant runs (the step form's `steps`; 1 for a workload whose call is its
    #: step): what every per-step figure was divided by
    steps_per_call: int = 1

    @property
    def syncs(self) -> tuple[SyncPoint, ...]:
        """The points that are the step's own syncs: all but backpressure (SyncKind.QUEUE_FULL)."""
        return tuple(point for point in self.points if point.kind in STEP_SYNC_KINDS)

    @property
    def syncs_per_step(self) -> float:
        """Waits per step over the step's syncs (0: the step never waited for a result)."""
        return sum(point.calls_per_step for point in self.syncs)

    @property
    def wait_s(self) -> float:
        """Time blocked per step over the step's syncs (the sum of the points' medians)."""
        return sum(point.wait_s_per_step for point in self.syncs)

    def round_totals(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Per census round, the waits and the seconds blocked per step over the step's syncs: what a check on the
        whole step computes its interval from."""
        calls = [0.0] * self.rounds
        waits = [0.0] * self.rounds
        for point in self.syncs:
            for index, (count, seconds) in enumerate(zip(point.calls_rounds, point.wait_s_rounds, strict=True)):
                calls[index] += count
                waits[index] += seconds
        return tuple(calls), tuple(waits)


def _named(kind: SyncKind, *calls: str) -> dict[str, SyncKind]:
    return dict.fromkeys(calls, kind)


_C, _P, _E, _T, _F = SyncKind.CONVERSION, SyncKind.PRINT, SyncKind.EXPLICIT, SyncKind.TRANSFER, SyncKind.CONTROL_FLOW
#: the census's classification of the entry points asyncbench's own backends hook (each backend's `sync_hooks`:
#: tests/backends/test_sync_call_kinds.py holds this table to them), by the name a point's `call` gives them: a
#: point of one of them stores that kind, whatever else a file says (a `jax.Array.item` of kind "print" is an edit)
HOOKED_KINDS: dict[str, SyncKind] = {
    **_named(_C, "numpy.asarray(jax.Array)", "numpy.array(jax.Array)", "jax.Array._value"),
    **_named(_C, *(f"jax.Array.{name}" for name in ("item", "tolist", "__array__", "__float__", "__int__", "__complex__"))),
    **_named(_E, "jax.Array.block_until_ready", "jax.block_until_ready"),
    **_named(_F, "jax.Array.__bool__", "jax.Array.__index__", "jax.numpy.nonzero", "jax.Array[mask]"),
    **_named(_P, "jax.Array.__repr__", "jax.Array.__str__", "jax.Array.__format__"),
    **_named(_T, "jax.device_get"),
    **_named(_C, *(f"torch.Tensor.{name}" for name in ("item", "tolist", "__float__", "__int__", "__index__", "cpu", "numpy"))),
    **_named(_P, "torch.Tensor.__repr__", "torch.Tensor.__format__"),
    **_named(_F, "torch.Tensor.__bool__", "torch.Tensor.nonzero", "torch.nonzero", "torch.Tensor.masked_select"),
    **_named(_F, "torch.masked_select", "torch.Tensor[mask]"),
    **_named(_T, "torch.Tensor.to", "torch.Tensor.copy_", "torch.Tensor.cuda"),
    **_named(_E, "torch.cuda.synchronize", "torch.cuda.Stream.synchronize", "torch.cuda.Event.synchronize"),
    **_named(
        _C,
        "cupy.ndarray.get",
        "cupy.asnumpy",
        *(f"cupy.ndarray.{name}" for name in ("item", "tolist", "__int__", "__float__", "__complex__")),
    ),
    **_named(_P, "cupy.ndarray.__repr__", "cupy.ndarray.__str__", "cupy.ndarray.__format__"),
    **_named(_F, "cupy.ndarray.__bool__", "cupy.ndarray.nonzero", "cupy.nonzero", "cupy.argwhere", "cupy.ndarray[mask]"),
    **_named(_E, "cupy.cuda.Stream.synchronize", "cupy.cuda.Event.synchronize", "cupy.cuda.runtime.deviceSynchronize"),
    **_named(_E, "cupy.cuda.runtime.streamSynchronize", "mxnet.NDArray.wait_to_read", "mxnet.nd.waitall", "mxnet.npx.waitall"),
    **_named(_C, "mxnet.NDArray.asnumpy", "mxnet.NDArray.asscalar", "mxnet.np.ndarray.asscalar"),
    **_named(_C, *(f"mxnet.np.ndarray.{name}" for name in ("item", "tolist", "__float__", "__int__"))),
    **_named(_F, "mxnet.NDArray.__bool__", "mxnet.np.ndarray.__bool__"),
    **_named(_P, "mxnet.NDArray.__repr__", "mxnet.np.ndarray.__repr__", "mxnet.np.ndarray.__str__", "mxnet.np.ndarray.__format__"),
}
#: the kinds only the frame fallback gives (measure.census.FALLBACK_KINDS): their call is whatever the user's line
#: called (`print`, `time.sleep`), which no table names
FALLBACK_KINDS = (SyncKind.UNKNOWN, SyncKind.QUEUE_FULL)
#: how a point names a hooked call made inside a framework function its line called ("jax.numpy.nonzero →
#: jax.Array._value", measure.census): its kind is the hooked call's, the last
INSIDE = " → "


def kind_held(kind: str, call: str, at: At) -> None:
    """InputError (at `kind`) where a point's kind is not its call's as the census classifies it: a hook's kind is
    the hooked call's (HOOKED_KINDS, for asyncbench's own backends); a hook of another backend (a plugin's, the test
    device's) names its framework entry point, dotted as SyncHook.call says ("jax.Array.item"), which a bare
    builtin's name (`print`, `float`: what only the frame fallback finds) is not. Whether its line lies within the
    user's file is not held: the reader has no user's file."""
    if kind in FALLBACK_KINDS:
        return
    hooked = call.rsplit(INSIDE, 1)[-1]
    known = HOOKED_KINDS.get(hooked)
    if known is not None and known != kind:
        (at / "kind").fail(f"{kind!r}, but the census classifies {hooked!r} as {str(known)!r}: {recordable.NOT_WRITTEN}")
    if known is None and "." not in hooked:
        (at / "kind").fail(
            f"{kind!r} for a call of {hooked[:80]!r}, which no hook names (a hook names its framework entry point, "
            f"'jax.Array.item'; a builtin's wait is the frame fallback's, {str(SyncKind.UNKNOWN)!r}): {recordable.NOT_WRITTEN}"
        )


# Seconds are stored to the nanosecond, as raw samples are (results.nanoseconds.SAMPLE_DECIMALS): perf_counter's
# resolution. A census holds its per-round figures so from the start (measure.census.summarize), so that what a run
# prints is what its file shows: the trial's '11 ns [6.6–39.3]' live had read '[7–39]' from the file.
_DECIMALS = 9
# What that rounding can move a stored per-step figure by (half its last digit, with room for the float's own error):
# a median of rounded rounds, or a round's waits times its steps, agrees with the unrounded one to within this a step
COUNT_ROUNDING = 1e-9


def as_stored(value: float) -> float:
    """A census's per-round figure (waits or seconds per step) as it is kept, live and in its file: to the nanosecond."""
    return round(value, _DECIMALS)


def census_to_dict(census: Census) -> dict[str, Any]:
    """A census as a results file stores it (under its variant's name in the result's `syncs`)."""
    return {
        "rounds": census.rounds,
        "steps_per_call": census.steps_per_call,
        "coverage": census.coverage,
        "note": census.note,
        "points": [
            {
                "file": point.file,
                "line": point.line,
                "kind": point.kind.value,
                "call": point.call,
                "calls_per_step": point.calls_per_step,
                "wait_s_per_step": as_stored(point.wait_s_per_step),
                "wait_ci_s": None if point.wait_ci_s is None else [as_stored(point.wait_ci_s[0]), as_stored(point.wait_ci_s[1])],
                "drained_per_step": point.drained_per_step,
                "calls_rounds": [as_stored(value) for value in point.calls_rounds],
                "wait_s_rounds": [as_stored(value) for value in point.wait_s_rounds],
            }
            for point in census.points
        ],
    }


def census_from_dict(variant: str, raw: Mapping[str, Any]) -> Census:
    """A stored census (`census_to_dict`'s shape)."""
    points = tuple(
        SyncPoint(
            file=str(point["file"]),
            line=int(point["line"]),
            kind=SyncKind(point["kind"]),
            call=str(point["call"]),
            calls_per_step=float(point["calls_per_step"]),
            wait_s_per_step=float(point["wait_s_per_step"]),
            wait_ci_s=None if point.get("wait_ci_s") is None else (float(point["wait_ci_s"][0]), float(point["wait_ci_s"][1])),
            drained_per_step=None if point.get("drained_per_step") is None else float(point["drained_per_step"]),
            calls_rounds=tuple(float(value) for value in point.get("calls_rounds") or ()),
            wait_s_rounds=tuple(float(value) for value in point.get("wait_s_rounds") or ()),
        )
        for point in raw.get("points") or ()
    )
    return Census(
        variant=variant,
        rounds=int(raw["rounds"]),
        points=points,
        coverage=str(raw.get("coverage") or ""),
        note=raw.get("note"),
        steps_per_call=int(raw.get("steps_per_call") or 1),
    )


def check_census(raw: Any, at: At, timed_rounds: int, most_rounds: int) -> None:
    """A variant's census (schema 9, results.syncs): its rounds (no more than `most_rounds`, what a case of
    `timed_rounds` timed rounds can take with its census checks' top-up: results.records), and each point's line,
    kind, counts and waits, one per round."""
    census = fields.mapping(raw, at)
    rounds = fields.count(census.get("rounds"), at / "rounds")
    if rounds > most_rounds:
        (at / "rounds").fail(
            f"{rounds} census rounds: more than a case of {timed_rounds} timed rounds takes, its census checks' "
            f"rounds included (at most {most_rounds})"
        )
    if census.get("steps_per_call") is not None and fields.count(census["steps_per_call"], at / "steps_per_call") < 1:
        (at / "steps_per_call").fail("a call of a variant runs at least one step")
    for key in ("coverage", "note"):
        fields.optional_text(census.get(key), at / key)
    for index, point in enumerate(fields.optional_list(census.get("points"), at / "points")):
        where = at / "points" / index
        point = fields.mapping(point, where)
        fields.name(point.get("file"), where / "file")
        fields.count(point.get("line"), where / "line")
        fields.word(point.get("kind"), where / "kind", SYNC_KINDS)
        fields.name(point.get("call"), where / "call")
        kind_held(str(point["kind"]), str(point["call"]), where)
        _check_waits(point.get("calls_per_step"), where / "calls_per_step")
        recordable.duration(point.get("wait_s_per_step"), where / "wait_s_per_step")
        fields.interval(point.get("wait_ci_s"), where / "wait_ci_s")
        fields.optional_number(point.get("drained_per_step"), where / "drained_per_step")
        for per_round, held in (("calls_rounds", _check_waits), ("wait_s_rounds", recordable.duration)):
            values = fields.optional_list(point.get(per_round), where / per_round)
            if values and len(values) != rounds:
                (where / per_round).fail(f"{len(values)} values for a census of {rounds} rounds")
            if fields.all_numbers(values, least=0):  # the whole list at once; else each value, to name the one
                continue
            for number, value in enumerate(values):
                held(value, where / per_round / number)
        point_holds(point, int(census.get("steps_per_call") or 1), where)


def point_holds(point: Mapping[str, Any], steps_per_call: int | None, at: At) -> None:
    """A point's figures (each checked before) are what its census rounds give (`summarize`): a round's waits are a
    whole count of calls over the `steps_per_call` steps it ran, the point's waits and seconds per step are the
    medians of its rounds', and the seconds lie within their own 95% interval. The census's line for the whole step
    sums these rows (Census.syncs_per_step, Census.wait_s), so a row moved apart from its rounds (-5 waits, 1e6 s
    beside an interval of [2e6, 3e6] s) would be shown beside a summary it contradicts: refused instead. Where the
    steps a round ran are not stored (`steps_per_call` None: an `ab` file's new sync) a round's count is not held."""
    recordable.within_own_interval(point["wait_s_per_step"], point.get("wait_ci_s"), at / "wait_s_per_step")
    calls_rounds, wait_rounds = point.get("calls_rounds") or [], point.get("wait_s_rounds") or []
    if steps_per_call is not None:
        _counts(calls_rounds, steps_per_call, at / "calls_rounds")
    for key, per_round in (("calls_per_step", calls_rounds), ("wait_s_per_step", wait_rounds)):
        median = statistics.median(per_round) if per_round else None
        if median is not None and not math.isclose(point[key], median, rel_tol=recordable.SUMMARY_TOLERANCE, abs_tol=COUNT_ROUNDING):
            (at / key).fail(f"{point[key]:g} is not the median of its census rounds ({median:g}): {recordable.NOT_WRITTEN}")


def _counts(calls_rounds: list[float], steps_per_call: int, at: At) -> None:
    """Each round's waits per step, times the steps the round ran, is a whole count of calls (to within the rounding
    of the stored figure, to the nanosecond a step)."""
    for number, calls in enumerate(calls_rounds):
        count = calls * steps_per_call
        if abs(count - round(count)) > COUNT_ROUNDING * steps_per_call:
            said = f"{calls:g} waits a step over {steps_per_call} step(s) is {count:g} waits, not a count"
            (at / number).fail(f"{said}: {recordable.NOT_WRITTEN}")


def _check_waits(value: Any, at: At) -> None:
    """Waits per step in one census round: a number, not negative (a fraction where a wait comes every few steps)."""
    if fields.number(value, at) < 0:
        at.fail(f"a count of waits cannot be negative ({value:g})")
