"""The one small interface every workload implements.

A workload declares its name, its parameters (with defaults and `--quick`
values), its variants and its metrics; `setup` allocates on a device and
returns plain callables to time; `round_metrics` computes the workload's
numbers from one round's clocks (the harness takes their median and its
95% interval over the rounds), `run_metrics` those of single measurements
(memory); `reading` says in one line what a result means, stating a
difference only where its interval excludes none. Workload modules import
no framework at module level.
"""

from __future__ import annotations

import dataclasses
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from asyncbench.backends.base import Backend
from asyncbench.results import nanoseconds, units
from asyncbench.results.model import Clocks, Memory, MetricInfo, Result, Samples, Sampling, Settings, Status, VariantResult
from asyncbench.results.word import Word


class ParamKind(Word):
    """What a parameter's values are; the spec checks YAML and --set values against it."""

    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    SHAPE = "shape"  # a list of positive ints
    INTS = "ints"  # a non-empty list of ints within the param's bounds


INT, FLOAT, BOOL, STR, SHAPE, INTS = ParamKind.INT, ParamKind.FLOAT, ParamKind.BOOL, ParamKind.STR, ParamKind.SHAPE, ParamKind.INTS
PARAM_KINDS = tuple(ParamKind)


@dataclass(frozen=True)
class Param:
    """A workload parameter; `quick` is the value under --quick (None: same as default)."""

    name: str
    kind: ParamKind
    default: Any
    help: str
    quick: Any = None
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None  # a regular expression a STR value must match
    #: defaults where one size does not fit all, keyed by device kind ("cpu"), backend ("mxnet") or both
    #: ("mxnet:cpu"; the most specific wins): the textbook's GPU sizes would take minutes on a CPU. They replace
    #: `default`, not a value the config sets, and not `quick` (--quick sizes fit everywhere).
    per_backend: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def default_on(self, backend: str, device: str) -> Any:
        """The default for a case on `backend` and `device` (per_backend, else default)."""
        kind = device.split(":")[0]
        chosen = self.default
        for key in (kind, backend, f"{backend}:{kind}"):
            chosen = self.per_backend.get(key, chosen)
        return chosen


DTYPES = ("float16", "bfloat16", "float32", "float64")
#: the element-type parameter most workloads share
DTYPE = Param("dtype", STR, "float32", "element type", choices=DTYPES)

# The largest matrix side a config may ask for (2^16; one float32 matrix that size is 16 GiB): a larger side, most
# likely a typo, is refused when the config is read rather than when the workload allocates it.
MAX_MATRIX_SIDE = 65536


def matrix_side(default: int, quick: int | None = None, **more: Any) -> Param:
    """The `size` parameter of a workload on square matrices: their side, `default` (`quick` under --quick; `more`:
    Param's other fields, e.g. per_backend), the same bounds everywhere."""
    return Param("size", INT, default, "matrix side", quick=quick, minimum=1, maximum=MAX_MATRIX_SIDE, **more)


#: the chapter's matrix side (1000, 256 under --quick), which matmul, barrier and conversion share
SIDE = matrix_side(1000, quick=256)


@dataclass(frozen=True)
class Metric:
    """A number a workload derives from its variants, with its unit for rendering."""

    name: str
    unit: str  # "s", "x" (ratio), "GFLOP/s", "" (plain number), "bool", "%" (a fraction), "MiB"
    help: str
    #: defined only where ops return before they finish (e.g. a backend's execution time
    #: told apart from its issue time): None on a synchronous backend
    needs_async: bool = False
    #: a difference of two measurements (a cost, a saving, a change of memory) that may lie below 0 although its
    #: unit is a time's or a size's: a check on it may name any threshold (spec.expect refuses `t1_s < 0` on a time
    #: or a size that is not, which no measurement could pass)
    signed: bool = False


@dataclass
class Prepared:
    """What `setup` returns: the callables to time, and how to finish them.

    Each variant callable issues the variant's work and returns without a
    device-wide sync (so the harness can read the issue clock); `sync` then
    waits for every device and stream the case touched.
    """

    variants: dict[str, Callable[[], Any]]
    sync: Callable[[], None]
    #: after timing: None if the results are right, else what is wrong (an error row)
    verify: Callable[[], str | None] | None = None
    #: releases what setup took (thread pools, thread counts); always called
    close: Callable[[], None] | None = None
    #: what the case really ran on, when the device name alone does not say it
    note: str | None = None
    #: whether events on the case device's current stream bracket all of the work; False when the
    #: work spans devices (events on one device would time that one alone): no device time then
    device_timed: bool = True
    #: per variant, untimed work issued before each sample, ahead of its start event (measure.timing.take_sample)
    preludes: dict[str, Callable[[], None]] = dataclasses.field(default_factory=dict)
    #: metrics this setup cannot measure on this backend and device, with why: dropped from the result, the
    #: why added to its note (a figure that would be wrong is no figure)
    unmeasurable: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the variants again, with `before_step` called before each of the user's step calls (`run --bound`'s delays,
    #: measure.perturbation); None where the workload has no step to perturb (a built-in experiment)
    perturbable: Callable[[Callable[[], None]], dict[str, Callable[[], Any]]] | None = None
    #: the user's step callable, one step issued (`run --bound-verify` captures it: Backend.capture_step), and the
    #: variants again with it replaced by another callable (the captured step); None: no step (a built-in experiment)
    step: Callable[[], Any] | None = None
    stepped: Callable[[Callable[[], Any]], dict[str, Callable[[], Any]]] | None = None


@dataclass(frozen=True)
class Measured:
    """A case's raw measurement: what the runner summarizes into a result."""

    samples: Mapping[str, Samples]
    memory: Mapping[str, Memory]
    sampling: Sampling | None = None
    verifies: bool = False  # the workload checked its results: a `verified` metric is added
    problem: str | None = None  # what verification found wrong, if anything
    note: str | None = None
    traced: Any = None  # trace.Traced, when --trace asked for timelines
    syncs: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # variant -> results.syncs.Census (--syncs)
    warnings: tuple[str, ...] = ()  # what the harness saw go wrong while sampling (the NVML guard's throttled rounds)
    reference: Any = None  # results.reference.Reference: the machine's speed while the case sampled (None: not taken)
    bound: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # variant -> results.bound.Bound (--bound)


#: per-variant metrics are declared once with a K placeholder: epoch_s_k1, epoch_s_k2 -> epoch_s_kK
PER_VARIANT_SUFFIX = re.compile(r"_k\d+$")


class Workload(ABC):
    name: str = ""
    summary: str = ""
    params: tuple[Param, ...] = ()
    variants: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = ()
    #: whether the workload measures itself across processes (`measure_itself`: comm_overlap's ranks): under
    #: torchrun only such workloads run, since every rank would run any other workload on its own
    across_processes: bool = False
    #: whether a case of it stores the machine's reference (results.reference): every workload measured through
    #: engine.measuring does, where the fixed work can be set up; one that measures itself (comm_overlap's ranks,
    #: with their own Procedure) takes none, and is named in results.reference.WITHOUT_REFERENCE. `compare` reads a
    #: missing one, in a file of schema 10 or later whose other run has one, as the machine's change unknown
    takes_reference: bool = True
    #: variants whose samples start behind a hold on purpose (`Prepared.preludes`): their device time is a part
    #: of their done time by design, not a sign of events that missed work (engine.sanity)
    held_variants: tuple[str, ...] = ()
    #: variants that instrument the harness rather than time the user's work (sync_async's `queued`: mostly a
    #: calibrated hold kernel): shown and used by the workload's own metrics, never gated (ab, compare, expect:,
    #: the history's change detection), since a "regression" there is the hold, not the code
    instrumentation: tuple[str, ...] = ()

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def metric(self, name: str) -> Metric | None:
        """The declaration of metric `name` (epoch_s_k2 finds epoch_s_kK), or None if undeclared."""
        declared = {m.name: m for m in self.metrics}
        return declared.get(name) or declared.get(PER_VARIANT_SUFFIX.sub("_kK", name))

    def variants_needed(self, name: str) -> tuple[str, ...]:
        """The variants metric `name` is computed from, where a config can tell them: a per-variant metric of a
        family declared by a param (epoch_s_k2 of "sync_every=K (...)": sync_every=2); () for any other. A check on a
        metric whose variant the experiment lacks could only be called not measured (spec.checks says so up front)."""
        number = PER_VARIANT_SUFFIX.search(name)
        declared = self.metric(name)
        if number is None or declared is None or not declared.name.endswith("_kK"):
            return ()
        family = next((head for head in (v.split()[0] for v in self.variants) if head.endswith("=K")), None)
        return () if family is None else (family.removesuffix("K") + number[0].removeprefix("_k"),)

    def figure(self, result: Result, name: str) -> str:
        """A metric of `result` with its 95% interval, in the metric's unit: '1.21× [1.03–1.60]'."""
        declared = self.metric(name)
        return units.with_bounds(result.metrics.get(name), result.bounds.get(name), declared.unit if declared else "")

    def gated(self, params: Mapping[str, Any], names: Sequence[str]) -> tuple[str, ...]:
        """The variants among `names` a gate judges (ab): all but the instrumentation ones."""
        return tuple(name for name in names if name not in self.instrumentation)

    def defaults(self, quick: bool = False) -> dict[str, Any]:
        """Default parameter values (the textbook's sizes, or the quick ones)."""
        return {p.name: (p.quick if quick and p.quick is not None else p.default) for p in self.params}

    def params_problem(self, params: Mapping[str, Any]) -> str | None:
        """What makes one point's params, each fine alone, measure something other than what their names say (the
        step form's sync_every above steps), with the fix; None where nothing does. Refused before anything runs."""
        return None

    def quick_params(self, params: Mapping[str, Any], sweep: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
        """The params --quick sets (each param's quick value) for an experiment of `params` and `sweep`."""
        return {p.name: p.quick for p in self.params if p.quick is not None}

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        """Why this case cannot mean anything on this backend/device, or None."""
        dtype = params.get("dtype")
        if dtype is not None and dtype not in backend.dtypes:
            return backend.missing_dtype(dtype)
        return None

    def measure_itself(self, backend: Backend, device: str, params: Mapping[str, Any], settings: Settings) -> Measured | None:
        """Measure the case outside this process (torch.distributed ranks), or None for the usual path:
        `setup` here, then the runner times the variants."""
        return None

    def steps_per_call(self, params: Mapping[str, Any]) -> int:
        """How many of the user's steps one call of a variant runs: the census's "per step" (`run --syncs`) divides
        by it. 1: the call is the step (a built-in workload's loop, a Workload of the user's)."""
        return 1

    @abstractmethod
    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        """Allocate inputs on `device` (outside the timed region) and build the variants."""

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        """The metrics of one round, from each variant's clocks in that round.

        A round's variants ran back to back, so its values are paired: the
        harness reports each metric as the median over the rounds, with the
        distribution-free 95% interval of that median. None: undefined in
        this round (a zero denominator).
        """
        return {}

    def run_metrics(self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]) -> dict[str, float | None]:
        """Metrics of single measurements (the memory run after timing): reported as measured, without an interval."""
        return {}

    def describe(self, result: Result, reading: bool = True) -> Result:
        """`result` made self-describing: each metric's declared unit and meaning, and (`reading`) the one-line
        reading of an ok result, stored with it so that it renders wherever it is read. The reading is made from the
        result as its file stores it (samples to the nanosecond: nanoseconds.as_stored), so that reading the file
        back rebuilds the very same line from the stored figures (workloads.stored_readings)."""
        info = {name: MetricInfo(declared.unit, declared.help) for name in result.metrics if (declared := self.metric(name))}
        described = dataclasses.replace(result, metric_info=info)
        return dataclasses.replace(described, reading=self.stored_reading(described) if reading else None)

    def stored_reading(self, result: Result) -> str | None:
        """The reading of `result` as its file stores it (None: none, or a result not ok): `reading`, made from the
        stored samples (nanoseconds.as_stored)."""
        if result.status != Status.OK:
            return None
        try:
            return self.reading(nanoseconds.as_stored(result)) or None
        except (KeyError, TypeError):  # a result from another version may lack a metric the reading names
            return None

    def reading(self, result: Result) -> str:
        """One line saying what an ok result means ('' for none).

        State a difference only when its interval (`result.bounds`) excludes
        "no difference"; say "no difference shown" otherwise.
        """
        return ""
