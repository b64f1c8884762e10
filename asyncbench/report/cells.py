"""What one cell or one line about a case says: a median with its interval, a memory figure, a case's metrics,
why its sampling stopped where it did, its trace files, the machine it ran on. The view model (view.py) puts
these in their places; every writer shows them as they are."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

from asyncbench.report import bars
from asyncbench.results import spreads, stats, step_figures, units
from asyncbench.results.model import Result, Sampling, Stats, StopReason, VariantResult
from asyncbench.results.paired import PairedCase

NO_VALUE = units.NO_VALUE
# Lag-1 autocorrelation from which a case's note says its rounds drifted: at 0.3 plain intervals covered only 89-91%.
DRIFTING = 0.3
#: the fewest samples whose median has a 95% interval (stats.order_rank: [min, max] of 6 covers 96.9%, of 5 93.8%)
MIN_SAMPLES = next(n for n in range(1, 100) if stats.order_rank(n) is not None)
#: the clocks as the timings table names them (view.clock_columns)
CLOCK_NAMES = (("issue_s", "issue"), ("done_s", "done"), ("device_s", "device time"))
#: the step form's metrics (step_s_k0, ...), per step of the user's: what marks its samples as `steps` steps each, in a
#: results file read without the workload (spelled where a file's step-form figures are checked)
STEP_METRIC = step_figures.STEP_METRIC
#: the params that make a case the step form's (workloads.step_form): its sample is `steps` of the user's steps, and
#: a side's median is per that many, as `run`'s "done per 20 steps" column says (report.view.per_sample); read from
#: the params because an `ab` file keeps a case's params, not its metrics
STEP_FORM_PARAMS = ("steps", "sync_every")


def spread(stats: Stats | None) -> str:
    """'8.31 ms ±1.2%': the median and half the CI of the median, relative ('±?' without a CI: the case's
    `interval_note` says why); '8.31 ms [8.2–9.9]' where the interval is lopsided, so that a ± would misstate it
    (spreads.spread)."""
    if stats is None:
        return NO_VALUE
    return spreads.spread(stats.median, stats.ci_low, stats.ci_high)


def memory_cell(variant: VariantResult) -> str:
    """The case's own memory: the device's figure on a GPU, the RSS growth during one run on a CPU. The pool in use
    first where there is one (CuPy, JAX): JAX reports a peak only for the variants whose run raised XLA's unresettable
    peak, so a column of peaks there would mix two figures."""
    memory = variant.memory
    for value in (memory.device_pool_used_bytes, memory.device_peak_bytes):
        if value is not None:
            return units.size_bytes(value)
    if memory.host_rss_peak_delta_bytes is not None:
        return units.signed_bytes(memory.host_rss_peak_delta_bytes)
    return NO_VALUE


def metric_line(result: Result) -> str:
    """'speedup 1.05× [1.03–1.07] · t1 4.73 µs [4.70–4.81] · ...' in the stored order and units ('[?]': no interval,
    the case's `interval_note` says why; none: a single measurement, which has none)."""
    parts = []
    for name, value in result.metrics.items():
        unit = result.unit_of(name)
        label = name.removesuffix("_s") if unit == "s" else name
        unknown = value is not None and name in result.bounds and result.bounds[name] is None  # interval_note says why
        parts.append(f"{label} {units.with_bounds(value, result.bounds.get(name), unit)}{' [?]' if unknown else ''}")
    return " · ".join(parts)


def sampling_note(result: Result) -> str | None:
    """Said when measuring stopped before every variant's median was known within max_rel_noise, or was cut short,
    when consecutive rounds drifted together (their intervals are then wider than independent rounds'), and which
    figures have no interval, with why (`interval_note`)."""
    sampling = result.sampling
    timing = [stopping_note(sampling, last_round_s(result), _widest(result)), _dependence_note(sampling)] if sampling is not None else []
    notes = [note for note in (*timing, interval_note(result)) if note]
    return "; ".join(notes) or None


def no_interval_why(n: int) -> str:
    """Why the median of `n` samples has no 95% interval: too few of them, or (from stats.MIN_ROUNDS_FOR_DEPENDENCE
    on, where intervals are widened for dependent rounds) rounds that drifted together so far that too few were
    independent. Below that and from MIN_SAMPLES on a median always has one: a metric without one there had fewer
    rounds that gave it a value."""
    if stats.order_rank(n) is None:
        return f"only {n} sample{'' if n == 1 else 's'} (a median's 95% interval takes {MIN_SAMPLES})"
    if n >= stats.MIN_ROUNDS_FOR_DEPENDENCE:
        return f"its {n} rounds drifted together, leaving too few independent ones (a quieter machine may give one)"
    return f"too few of its {n} rounds gave it a value"


def interval_note(result: Result) -> str | None:
    """'no 95% interval (±?, [?]) for issue, illusion: its 47 rounds drifted together ...': each figure of a case's
    table and metric line that has no interval, grouped by why (`no_interval_why`); None when every one has one."""
    why: dict[str, list[str]] = {}
    lacking: dict[tuple[str, str], list[str]] = {}  # (clock's name, why) -> the variants without an interval
    # the issue clock is a column of its own only where it differs from done (view.clock_columns)
    shown = [clock for clock, _ in CLOCK_NAMES if clock != "issue_s" or any(map(bars.issue_differs, result.variants.values()))]
    for variant_name, variant in result.variants.items():
        for clock, name in CLOCK_NAMES:
            summary = getattr(variant, clock) if clock in shown else None
            if summary is not None and (summary.ci_low is None or summary.ci_high is None):
                lacking.setdefault((name, no_interval_why(summary.n)), []).append(variant_name)
    for (name, cause), variants in lacking.items():
        of = "" if len(variants) == len(result.variants) else f" of {', '.join(variants)}"
        why.setdefault(cause, []).append(name + of)
    rounds = result.sampling.rounds if result.sampling is not None else min((v.done_s.n for v in result.variants.values()), default=0)
    for name, value in result.metrics.items():
        if value is not None and name in result.bounds and result.bounds[name] is None:
            label = name.removesuffix("_s") if result.unit_of(name) == "s" else name
            names = why.setdefault(no_interval_why(rounds), [])
            if label not in names:
                names.append(label)
    return "; ".join(f"no 95% interval (±?, [?]) for {', '.join(names)}: {cause}" for cause, names in why.items()) or None


def case_steps_per_sample(case: PairedCase) -> int:
    """How many of the user's steps one sample of an `ab` case runs: the step form's `steps` (STEP_FORM_PARAMS); 1 for
    any other workload, whose sample is one call of its step."""
    params = case.params or {}
    steps = params.get("steps")
    if not all(name in params for name in STEP_FORM_PARAMS) or not isinstance(steps, int) or isinstance(steps, bool):
        return 1
    return max(steps, 1)


def steps_per_sample(result: Result) -> int:
    """The user's steps one sample of a variant runs: the step form's `steps` (its census says so where one was
    taken), 1 for a workload whose sample is one call of its step. Read from the result alone (a file renders
    without its workload): a census's steps_per_call, else the `steps` param of a result with the step form's
    per-step metrics."""
    counts = {census.steps_per_call for census in result.syncs.values()}
    if counts and max(counts) > 1:
        return max(counts)
    steps = result.params.get("steps")
    stepped = any(name.startswith(STEP_METRIC) for name in result.metrics)
    return steps if stepped and isinstance(steps, int) and not isinstance(steps, bool) and steps > 1 else 1


def _dependence_note(sampling: Sampling) -> str | None:
    return drift_note(sampling.lag1_autocorrelation, sampling.rounds)


def drift_note(rho: float | None, rounds: int) -> str | None:
    """Said of a case whose consecutive rounds drifted together (`run`'s clocks, `ab`'s paired ratios)."""
    if rho is None or rho < DRIFTING or rounds < stats.MIN_ROUNDS_FOR_DEPENDENCE:
        return None
    return (
        f"consecutive rounds drifted together (lag-1 autocorrelation {rho:.2f}): the intervals are widened for it; "
        "a quieter machine narrows them"
    )


def last_round_s(result: Result) -> float | None:
    """The time the last timed round's samples took (each variant's last done time; the round's samples run one
    after another), or None where a variant kept no samples."""
    lasts = [variant.samples.done_s[-1] for variant in result.variants.values() if variant.samples.done_s]
    return sum(lasts) if lasts and len(lasts) == len(result.variants) else None


def held_by_minimum(sampling: Sampling, last_s: float | None) -> bool:
    """Whether a case was held past max_time_s by its minimum rounds, whatever it stopped by: sampling stops at the
    first round past max_time_s once the minimum (min_samples, raised for the rounds its checks or a baseline need) is
    taken, so where max_time_s had already passed before the last round (`last_s`: its samples' time) the minimum,
    not the limit, set the length (6 rounds of 10.95 s under max_time_s=2 s) — also where the last of those rounds
    met the noise target (stopped_by max_rel_noise after 12 s under max_time_s=0.05 s). A case cut short by its
    timeout is not (its note says so). None: not known, not said."""
    if sampling.stopped_by == StopReason.TIMEOUT or sampling.rounds < 2 or last_s is None:
        return False
    return sampling.elapsed_s - last_s > sampling.max_time_s


def _widest(result: Result) -> Stats | None:
    """The done time of the variant whose interval is the widest relative to its median (the one `rel_noise` is),
    None where none has an interval."""
    held = [
        v.done_s for v in result.variants.values() if v.done_s.ci_low is not None and v.done_s.ci_high is not None and v.done_s.median > 0
    ]
    return max(held, key=lambda d: (d.ci_high - d.ci_low) / d.median, default=None)  # type: ignore[operator]


# The most significant figures the noise reached takes to read apart from the target it missed: 0.0500155 against
# 0.05 reads '±5.002%' (four), never '±5%, short of the ±5% target'; a noise nearer the target than six figures tell
# is said at them, with the target's own figures.
NOISE_APART_DIGITS = 6


def _noise_and_target(rel_noise: float | None, target: float) -> tuple[str, str]:
    """The noise reached and the target as a stopping note says them: two figures each (units.percent), more, for
    both, where the noise missed the target but two print it as the target ('±5.002%' beside '±5%'). Both are rounded
    to the nearest at the same figures, which keeps their order: the noise never reads below the target it missed."""
    shown = units.percent(rel_noise), units.percent(target)
    if rel_noise is None or not math.isfinite(rel_noise) or rel_noise <= target:
        return shown
    for digits in range(3, NOISE_APART_DIGITS + 1):
        if shown[0] != shown[1]:
            break
        shown = units.percent(rel_noise, digits), units.percent(target, digits)
    return shown


def stopping_note(sampling: Sampling, last_s: float | None = None, widest: Stats | None = None) -> str | None:
    """Why sampling stopped short of its noise target (a timeout, max_time_s, its minimum rounds past max_time_s:
    `last_s`, the last round's time, held_by_minimum), or None where it did not. `widest`, the done time whose
    interval is the widest, says what was reached as the table's cell does (spreads.relative_spread: '[−13% … +1535%]'
    where the cell shows bounds); elsewhere, the ± of `rel_noise`."""
    rounds = f"{sampling.rounds} round{'' if sampling.rounds == 1 else 's'}"
    noise, target_noise = _noise_and_target(sampling.rel_noise, sampling.max_rel_noise)
    reached = f"at ±{noise}" if sampling.rel_noise is not None else "with no interval yet"
    if (
        sampling.rel_noise is not None
        and widest is not None
        and widest.ci_low is not None
        and widest.ci_high is not None
        and spreads.shows_bounds(widest.median, widest.ci_low, widest.ci_high)
    ):
        reached = f"at {spreads.relative_spread(widest.median, widest.ci_low, widest.ci_high)}"
    if sampling.stopped_by == StopReason.TIMEOUT:
        return f"cut short by {sampling.stopped_by} after {rounds} ({reached} on the done time): its figures are from those rounds"
    target = f"±{target_noise}"
    held = held_by_minimum(sampling, last_s)
    if held and not sampling.missed_noise_target:
        took = units.number(sampling.elapsed_s)
        return (
            f"ran its minimum of {rounds} (min_samples, or the rounds its checks or a baseline need), which took {took} s, "
            f"past max_time_s ({units.number(sampling.max_time_s)} s) before the last of them: the minimum, not max_time_s, "
            f"set its length; it met the {target} target there"
        )
    if sampling.stopped_by == StopReason.NOISE or not sampling.missed_noise_target:
        return None
    if held:
        took = units.number(sampling.elapsed_s)
        return (
            f"stopped at its minimum of {rounds} (min_samples, or the rounds its checks or a baseline need), which took "
            f"{took} s, past max_time_s ({units.number(sampling.max_time_s)} s) before the last of them: {reached} on the done "
            f"time, short of the {target} target; a max_time_s above {took} s, or a higher min_samples, narrows the intervals"
        )
    if sampling.stopped_by == StopReason.TIME:
        return (
            f"stopped by {sampling.stopped_by} ({units.number(sampling.max_time_s)} s) after {rounds} {reached} on the done time, "
            f"short of the {target} target: a longer max_time_s narrows the intervals"
        )
    return f"stopped by {sampling.stopped_by} after {rounds} {reached}, short of the {target} target"


def trace_files(result: Result) -> str:
    """The trace files of a case: the folder once, then each file's name."""
    paths = [Path(p) for p in result.traces.values()]
    folder = paths[0].parent
    return f"{folder}/" + (paths[0].name if len(paths) == 1 else "{" + ", ".join(p.name for p in paths) + "}")


def environment_line(environment: Mapping[str, Any]) -> str:
    """'CPU: ... · Python 3.11.7 · torch 2.13.0+cpu (2 threads) · numpy 2.4.6 · git 1a2b3c4': what the numbers were measured on."""
    parts = [f"CPU: {environment.get('cpu', '?')} ({environment.get('cpu_affinity', '?')} usable cores)"]
    parts.append(f"Python {environment.get('python', '?')}")
    for name, facts in (environment.get("frameworks") or {}).items():
        if not isinstance(facts, Mapping):
            continue
        if facts.get("unavailable"):
            parts.append(f"{name}: not available")
            continue
        count = facts.get("threads")  # torch's intra-op pool (the one framework whose facts say its size)
        threads = f" ({count} thread{'' if count == 1 else 's'})" if count else ""
        cuda = f", CUDA {facts['cuda']}" if facts.get("cuda") else ""
        parts.append(f"{name} {facts.get('version') or '?'}{cuda}{threads}")
    machines = environment.get("machines")
    if isinstance(machines, Mapping) and machines:
        hosts = [
            f"{host} ({facts.get('cpu', '?')}, {facts.get('cpu_affinity', '?')} cores)"
            for host, facts in machines.items()
            if isinstance(facts, Mapping)
        ]
        parts[0] = f"machines: {', '.join(hosts)}"
    sha = environment.get("git_sha")
    parts.append(f"git {sha[:12]}{'-dirty' if str(sha).endswith('-dirty') else ''}" if sha else "git: not a repository")
    return " · ".join(parts)
