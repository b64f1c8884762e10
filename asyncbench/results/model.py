"""Plain frozen dataclasses shared by every module: what a case is and what it yields.

Units are in the field names (`done_s`, `peak_bytes`). Nothing here imports a
framework, so results can be loaded, compared and rendered without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from asyncbench.results.reference import Reference
from asyncbench.results.word import Word

if TYPE_CHECKING:
    from asyncbench.results.bound import Bound
    from asyncbench.results.syncs import Census


class Status(Word):
    """How a case ended."""

    OK = "ok"
    SKIPPED = "skipped"
    ERROR = "error"


OK, SKIPPED, ERROR = Status.OK, Status.SKIPPED, Status.ERROR
STATUSES = tuple(Status)


class Verdict(Word):
    """The one vocabulary of conclusions: an `expect:` check, and a variant compared with a baseline."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"  # the 95% interval straddles the threshold
    NOT_MEASURED = "not measured"  # the case did not run, or the quantity does not exist there


class StopReason(Word):
    """Why sampling stopped."""

    NOISE = "max_rel_noise"  # every variant's median is known within ±max_rel_noise (and every check decided)
    TIME = "max_time_s"
    COUNT = "max_samples"
    TIMEOUT = "timeout_s"  # the case was cut short (its worker killed): the rounds it had reported are kept


CLOCKS = ("issue_s", "done_s", "device_s")


@dataclass(frozen=True)
class Settings:
    """How to measure: warm-up and adaptive stopping (nvbench-style), and how long a case may take."""

    warmup: int = 1
    # Six is the fewest samples whose order statistics give a 95% interval of
    # the median (with five, [min, max] covers only 94%): fewer would leave
    # every figure of a case without an interval.
    min_samples: int = 6
    max_samples: int = 1000
    max_time_s: float = 10.0
    # A 95% CI of the median within ±3% is tight enough to tell apart the
    # effects asyncbench shows (typically 1.2x and more) yet reachable in a few
    # seconds on a noisy 2-core CI machine.
    max_rel_noise: float = 0.03
    # A case (set-up, sampling, memory runs) that runs longer is killed and is
    # an error row; enforced when cases run in a worker process (the default).
    # Sampling stops at max_time_s (10 s); five minutes leaves room for slow
    # set-up (a framework's import, cuBLAS autotuning, big allocations) while a
    # hung case frees a CI pipeline long before the job's own limit.
    timeout_s: float = 300.0
    # This case's margin under `asyncbench ab` (how much slower head may be and still pass), where the gate's
    # --max-regression is finer than the case can resolve in a gate's time: a case whose fresh processes differ by
    # more than that (two threads' placement: blocks ±5-7%, up to ±30%, on a 2-core runner) states the change
    # it can catch instead of failing every gate INCONCLUSIVE. Read from the base side's config, so that a pull
    # request cannot loosen its own gate. None: the gate's --max-regression.
    ab_margin: float | None = None


@dataclass(frozen=True)
class Expectation:
    """One parsed `expect:` check, e.g. `speedup >= 3` or `done_s.median[async] < 10ms`.

    `quantity` is a metric name, or a clock (issue_s, done_s, device_s) whose
    `stat` is read from each variant (or only from `variant` when given).
    `threshold` is in the quantity's base unit (seconds, a ratio, a fraction).
    """

    text: str
    quantity: str
    op: str
    threshold: float
    stat: str | None = None
    variant: str | None = None
    #: a check on the census (syncs_per_step, sync_wait_s): the kind or FILE:LINE it is on; a check on the bound
    #: (verdicts.bound_checks): the side (slack_s[host]; ceiling's is host) or the reading (bound == device)
    at: str | None = None


@dataclass(frozen=True)
class CaseIdentity:
    """Which case: its id, its experiment, the workload it runs on which backend and device, with which params.
    Declared once here: a case to measure (Case), its outcome (Result), a case as planned (PlannedCase) and an `ab`
    file's case as the store reads it (results.ab_file.ABCase) each begin with these fields, in this order."""

    id: str
    experiment: str
    workload: str
    backend: str
    device: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Case(CaseIdentity):
    """One measurement to make: a workload on one backend and one device, with its settings and checks. What a run
    asks of all its cases (tracing, a census, the share of its false-alarm rate) is the run's, not the case's: it
    goes beside the case (engine.runner.RunOptions; engine.measuring.CaseOptions to the process that measures it)."""

    settings: Settings
    expect: tuple[Expectation, ...] = ()


@dataclass(frozen=True)
class Stats:
    """Summary of one clock's samples.

    The CI is the distribution-free 95% CI of the median; None when there are
    too few samples for one (fewer than 6), never a narrower interval called 95%.
    """

    median: float
    iqr: float
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass(frozen=True)
class Progress:
    """Where a measurement stands: rounds taken, time spent, the widest relative CI half-width (for a progress
    display), and the samples so far with whether the backend runs ahead (what a case cut short by its
    timeout keeps: the parent builds its figures from the last progress its worker sent)."""

    rounds: int
    elapsed_s: float
    rel_noise: float
    samples: Mapping[str, Samples] | None = None
    asynchronous: bool | None = None


@dataclass(frozen=True)
class Clocks:
    """One sample's three clocks, in seconds: what a per-round metric is computed from."""

    issue_s: float
    done_s: float
    device_s: float | None = None


STOPPED_BY_NOISE, STOPPED_BY_TIME, STOPPED_BY_COUNT = StopReason.NOISE, StopReason.TIME, StopReason.COUNT


@dataclass(frozen=True)
class Sampling:
    """How a case's measurement ended: rounds taken, time spent, and why it stopped.

    `rel_noise` is the widest relative half-width of a variant's done-time CI
    at the end (None when there were too few rounds for an interval), to be
    read against `max_rel_noise`, the target. `lag1_autocorrelation` says how
    much consecutive rounds drift together; every interval is widened for it.
    """

    rounds: int
    elapsed_s: float
    stopped_by: StopReason
    rel_noise: float | None
    max_rel_noise: float
    max_time_s: float
    #: the highest lag-1 autocorrelation of a variant's done times (stats.lag1_autocorrelation; None: too few rounds)
    lag1_autocorrelation: float | None = None

    @property
    def missed_noise_target(self) -> bool:
        return self.rel_noise is None or self.rel_noise > self.max_rel_noise


@dataclass(frozen=True)
class Samples:
    """Raw per-sample clocks, in seconds; `device_s` is None where there are no events."""

    issue_s: tuple[float, ...]
    done_s: tuple[float, ...]
    device_s: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Memory:
    """Memory of one synchronized run of a variant, after warm-up; None where not measurable.

    Host deltas are against the process just before the run: the RSS peak is
    polled while the run goes on, USS is read after it. Device figures come
    from the framework: torch's peak allocated and reserved bytes, cupy's
    memory pool used and total bytes.
    """

    host_rss_bytes: int | None = None
    host_rss_peak_delta_bytes: int | None = None
    host_uss_delta_bytes: int | None = None
    device_peak_bytes: int | None = None
    device_reserved_bytes: int | None = None
    device_pool_used_bytes: int | None = None
    device_pool_total_bytes: int | None = None


@dataclass(frozen=True)
class MetricInfo:
    """A metric's declaration as stored with a result: its unit ("s", "x", "%", "GFLOP/s", "bool"...) and meaning.

    Stored so that a results file renders with units wherever it is read,
    even when the workload that declared the metric is not installed there.
    """

    unit: str
    help: str = ""


@dataclass(frozen=True)
class Check:
    """One `expect:` check and its verdict: the value checked and its interval (None: a single measurement)."""

    expect: str
    verdict: Verdict
    detail: str
    value: float | None = None
    bounds: tuple[float, float] | None = None
    #: the confidence of `bounds` (results.budget: the run's false-alarm rate split over its checks and looks), or of
    #: the reading a `bound == X` check was judged from (verdicts.bound_checks)
    confidence: float | None = None
    #: the family-wise false-alarm rate the run's checks share (None: judged alone, from a 95% interval)
    family_error: float | None = None
    #: the perturbation rounds a `bound == X` check's reading came from (None: any other check), held on reading
    #: against its confidence (results.check_rule)
    rounds: int | None = None
    #: the measured length of the delay a threshold check on the slack was judged by (verdicts.bound_levels; None: any
    #: other check, or one stored before checks were judged by the delay as run, judged again by that rule on reading)
    delay_as_run_s: float | None = None


@dataclass(frozen=True)
class HarnessCost:
    """What the harness itself puts between a variant's issue and done clocks, measured with nothing queued: a no-op
    timed as every variant is (its call, the backend's sync, the clock reads), on the case's backend and device.

    A row's done − issue includes it; so a no-op "ran ahead" by it (numpy's no-op step: 1.35×). The judgment
    of running ahead (results.ahead) counts only what lies beyond `sync_high_s`.
    """

    #: the no-op's median done − issue (the sync call with nothing queued and a clock read), in the costliest of the
    #: conditions it was probed after (measure.harness_cost: back to back, after a busy spell, after an idle one)
    sync_s: float
    #: the upper end of that median's 95% interval (its upper quartile where the samples drifted): what is subtracted
    sync_high_s: float
    #: the no-op's median issue time: a call and a clock read
    issue_s: float
    #: how many no-op samples, over all the conditions
    n: int


@dataclass(frozen=True)
class VariantResult:
    """Everything measured for one variant of one case."""

    samples: Samples
    issue_s: Stats
    done_s: Stats
    device_s: Stats | None
    memory: Memory = field(default_factory=Memory)


@dataclass(frozen=True)
class Result(CaseIdentity):
    """The outcome of one case: ok with variants and metrics, or skipped/error with a reason."""

    status: Status
    reason: str | None = None
    variants: Mapping[str, VariantResult] = field(default_factory=dict)
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    #: metric -> 95% interval (low, high); None: too few rounds for one; absent: one measurement, no interval
    bounds: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    note: str | None = None  # what the case actually ran on, e.g. "cuda:0 + cpu, GPU work issued first"
    sampling: Sampling | None = None
    #: skipped because the backend is not installed or the device is absent here (not because of the workload)
    unavailable: bool = False
    #: whether the backend's ops return before they finish on this device (None: not known, e.g. skipped)
    asynchronous: bool | None = None
    #: sanity checks this result fails (sanity.py): device time above done time, ...; a trace that failed; empty when all hold
    warnings: tuple[str, ...] = ()
    #: variant -> trace file written by --trace, and what the files hold (the profiler, or why harness ranges only)
    traces: Mapping[str, str] = field(default_factory=dict)
    trace_detail: str | None = None
    #: metric -> its unit and meaning, as the workload declared them when it ran
    metric_info: Mapping[str, MetricInfo] = field(default_factory=dict)
    #: the workload's one-line reading of this result ('' or None: none)
    reading: str | None = None
    #: the whole case's wall time where it ran: set-up, sampling, memory runs, verification (None: it did not run)
    case_s: float | None = None
    #: the host it ran on, in a report gathered from jobs on several machines (None: the report's own machine)
    machine: str | None = None
    #: the harness's own cost between issue and done on this backend and device (None: not measured, files before schema 7)
    harness: HarnessCost | None = None
    #: variant -> where its step waited (`run --syncs`, results.syncs.Census); empty when no census was asked for
    syncs: Mapping[str, Census] = field(default_factory=dict)
    #: variant -> what bounds its step, measured by perturbation (`run --bound`, results.bound.Bound); empty when
    #: not asked for
    bound: Mapping[str, Bound] = field(default_factory=dict)
    #: the machine's own speed while the case sampled: a fixed work timed between its rounds (results.reference);
    #: None where none was taken (a case measured across processes, files before schema 10)
    reference: Reference | None = None

    def unit_of(self, quantity: str) -> str:
        """A metric's stored unit ('' when not declared), or "s" for a clock."""
        if quantity in CLOCKS:
            return "s"
        info = self.metric_info.get(quantity)
        return info.unit if info is not None else ""


@dataclass(frozen=True)
class PlannedCase(CaseIdentity):
    """A case a run or job was to run, as known before it ran (a device spec such as `cuda` is resolved where it runs)."""


#: the most shards a plan is cut into (`run --shard I/N`): GitHub Actions runs at most 256 jobs per matrix; more is a typo
MAX_SHARDS = 256


@dataclass(frozen=True)
class ShardOf:
    """Which part of which plan a run measured (`run --shard I/N`, one job of a CI matrix): what `merge` checks
    before it puts the N shards' files together into one report."""

    #: this shard, 1 to `count`
    index: int
    count: int
    #: sha256 (hex) of the whole plan's cases in plan order, each with its params, settings and checks: the same plan
    #: gives the same digest on every machine, so shards of different plans (another --set, --quick) are told apart
    plan: str
    #: how many cases the whole plan has (device specs unresolved, as planned before anything ran)
    plan_cases: int
    #: the cases this shard was to run (a shard cut short gets an error row for each it did not finish when merged)
    cases: tuple[PlannedCase, ...] = ()
    #: each of `cases`' place in the whole plan (from 0): the merged report's rows are in plan order, as unsharded
    positions: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
