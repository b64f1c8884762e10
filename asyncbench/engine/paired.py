"""Two sides, one case, paired round by round: the measuring half of `asyncbench ab`.

Each side is a worker process (isolation.Worker) started alike: its own
interpreter and environment, with its source tree first on sys.path once
the harness is imported, so user workloads and the user's package come
from that side's revision. A case is set up on both; then in every round
each variant is sampled once on each side, the variants in a random order
and the two sides in a random order within each pair (randomized multiple
interleaved trials: Abedi & Brecht, ICPE 2017). Slow drift of a shared
machine then hits both samples of a pair alike, and their ratio cancels it.

That holds only if the side that is not measuring is really idle. A paused
side is frozen (SIGSTOP, isolation.Worker.pause) between its samples: a
stopped process cannot spin an OpenMP or OpenBLAS pool (whose idle threads
spin after every parallel region and, on two cores, steal the measuring
side's), run the GC, or run a JAX/XLA or MXNet engine thread. A sample ends
with the backend's sync, so a GPU side has drained its queue before it is
frozen. This needs no per-backend setting and leaves the user's thread
settings as they are, so both sides measure what the user runs.

The stopping rule is `expect:`'s: verdicts are judged only at the budget's
looks (results.budget), from intervals at the case's share of the run's
false-alarm rate, and sampling stops once every verdict of the case is
decided, or at max_time_s / max_samples.
"""

from __future__ import annotations

import contextlib
import gc
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from asyncbench.backends import get_backend
from asyncbench.engine import isolation, runner
from asyncbench.errors import describe_failure
from asyncbench.measure.timing import ORDER_SEED, take_sample
from asyncbench.results import stats
from asyncbench.results.budget import Budget, schedule
from asyncbench.results.model import Case, Clocks, Progress, Verdict
from asyncbench.results.paired import METRIC, VARIANT, PairedCase, PairedRatio
from asyncbench.verdicts import compare
from asyncbench.workloads import plugins
from asyncbench.workloads.base import Workload

# --- in the worker process ------------------------------------------------------------------------------------

_case: dict[str, Any] = {}


def serve(command: str, payload: Any, on_progress: Any = None) -> Any:
    """A side's worker: ("setup", (case, tree)) → variants or a skip reason; ("sample", variant) → its clocks;
    ("teardown", None) → None; ("environment", backends) → what this side runs on (its interpreter's versions)."""
    if command == "environment":
        from asyncbench.engine import environment

        return environment.capture(payload)
    if command == "setup":
        return _setup(*payload)
    if command == "sample":
        return _sample(payload)
    return _teardown()


def _setup(case: Case, tree: str | None) -> dict[str, Any]:
    if tree and tree not in sys.path:
        sys.path.insert(0, tree)  # after the harness is imported: the user's code comes from this side's tree
    _teardown()
    workload = plugins.find(case.workload)
    backend = get_backend(case.backend)
    reason = workload.skip_reason(backend, case.device, case.params)
    if reason:
        return {"skipped": reason}
    stack = runner.scope(backend, case)
    prepared = workload.setup(backend, case.device, case.params)
    if prepared.close is not None:
        stack.callback(prepared.close)
    timed = prepared.device_timed
    timers = {name: backend.timer(case.device) if timed else None for name in prepared.variants}
    _case.update(stack=stack, prepared=prepared, timers=timers)
    for _ in range(case.settings.warmup):
        for name in prepared.variants:
            _sample(name)
    gc.collect()
    gc.disable()  # as in `run`: no collection inside a sample; one pass of the youngest generation after each
    return {"variants": list(prepared.variants), "asynchronous": backend.is_asynchronous(case.device)}


def _sample(name: str) -> tuple[float, float, float | None]:
    prepared = _case["prepared"]
    clocks = take_sample(prepared.variants[name], prepared.sync, _case["timers"][name], prelude=prepared.preludes.get(name))
    gc.collect(0)
    return clocks


def _teardown() -> None:
    stack = _case.pop("stack", None)
    _case.clear()
    gc.enable()
    if stack is not None:
        stack.close()
    gc.collect()


# --- in the parent ----------------------------------------------------------------------------------------------

# Both sides move to fresh processes after this many seconds of sampling. Two processes running identical code
# differ by a bias of their own (memory layout, core placement): measured here up to ±2% with intervals of ±0.5%,
# enough to call identical code SLOWER at a 1% margin. New processes draw new biases, so over the blocks a
# process's bias turns into noise the interval sees (lag-1 autocorrelation within a block widens it).
BLOCK_S = 2.0
# A block also lasts at least this many times as long as the last move took (two fresh processes importing torch and
# setting up again take seconds): moving then costs at most a third of the case's time.
BLOCK_PER_MOVE = 2.0


@dataclass
class SideWorker:
    """One side's worker process and what it runs from."""

    name: str
    tree: str | None
    python: str
    environment: Mapping[str, str]
    worker: isolation.Worker = field(init=False)

    def __post_init__(self) -> None:
        self.worker = isolation.Worker(serve, self.python, self.environment)

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        try:
            return self.worker.call((command, payload), timeout_s)
        finally:
            self.worker.pause()

    def close(self) -> None:
        self.worker.close()


def directed_metrics(workload: Workload) -> dict[str, int]:
    """The metrics a gate calls slower or faster besides the variants' times: rates (a unit ending in /s, such as
    GFLOP/s), whose lower value is slower. Times derived from several variants (a cost as a difference of two
    times, a per-op estimate) are left out: a ratio of differences of noisy times is mostly noise, and the
    variants' own times are judged; nor are ratios between variants (speedups, shares) a speed of the code."""
    return {metric.name: -1 for metric in workload.metrics if metric.unit.endswith("/s")}


def _ratio_series(
    workload: Workload, params: Mapping[str, Any], base: Mapping[str, list[Clocks]], head: Mapping[str, list[Clocks]]
) -> dict[tuple[str, str], tuple[list[float], list[float], list[float]]]:
    """(kind, name) → (base values, head values, paired ratios oriented so > 1 is slower), round by round."""
    series: dict[tuple[str, str], tuple[list[float], list[float], list[float]]] = {}
    rounds = min(len(clocks) for clocks in (*base.values(), *head.values()))
    for name in head:
        old_s, new_s = [c.done_s for c in base[name][:rounds]], [c.done_s for c in head[name][:rounds]]
        series[(VARIANT, name)] = (old_s, new_s, [n / o for o, n in zip(old_s, new_s, strict=True) if o > 0])
    directions = directed_metrics(workload)
    for index in range(rounds):
        old_metrics = workload.round_metrics(params, {n: base[n][index] for n in base})
        new_metrics = workload.round_metrics(params, {n: head[n][index] for n in head})
        for name, direction in directions.items():
            old, new = old_metrics.get(name), new_metrics.get(name)
            if old is None or new is None or old <= 0 or new <= 0:
                continue
            olds, news, ratios = series.setdefault((METRIC, name), ([], [], []))
            olds.append(old)
            news.append(new)
            ratios.append((new / old) ** direction)
    return series


def _distinct(
    series: dict[tuple[str, str], tuple[list[float], list[float], list[float]]],
) -> dict[tuple[str, str], tuple[list[float], list[float], list[float]]]:
    """Without the metrics whose paired ratios repeat an earlier series' (matmul's GFLOP/s is its done time turned
    over): a verdict said twice from the same numbers would only spend the budget twice."""
    kept: dict[tuple[str, str], tuple[list[float], list[float], list[float]]] = {}
    for key, values in series.items():
        ratios = values[2]
        if any(
            len(r[2]) == len(ratios) and all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(r[2], ratios, strict=True))
            for r in kept.values()
        ):
            continue
        kept[key] = values
    return kept


def judge(
    workload: Workload,
    params: Mapping[str, Any],
    base: Mapping[str, list[Clocks]],
    head: Mapping[str, list[Clocks]],
    case_budget: Budget,
    margin: float,
) -> tuple[PairedRatio, ...]:
    """Every verdict of a case from its rounds so far: variants' done times, then directed metrics."""
    series = _distinct(_ratio_series(workload, params, base, head))
    budget = Budget(case_budget.family_error, len(series), case_budget.first, case_budget.last)
    units = {m.name: m.unit for m in workload.metrics}
    judged = []
    for (kind, name), (old, new, ratios) in series.items():
        if not ratios:
            continue
        interval = stats.median_ci(ratios, budget.confidence())
        label = compare.label_of(interval, margin)
        judged.append(
            PairedRatio(
                name,
                kind,
                "s" if kind == VARIANT else units.get(name, ""),
                statistics.median(old),
                statistics.median(new),
                statistics.median(ratios),
                interval,
                label,
                compare.VERDICTS[label],
            )
        )
    return tuple(judged)


def pair(
    base_case: Case,
    head_case: Case,
    sides: tuple[SideWorker, SideWorker],
    case_budget: Budget,
    margin: float,
    workload: Workload,
    on_progress: Callable[[Progress], None] | None = None,
) -> PairedCase:
    """Set the case up on both sides, sample them in interleaved rounds until its verdicts are decided, judge."""
    base_side, head_side = sides
    settings = head_case.settings
    ready: dict[str, Any] = {}
    interrupted = False
    try:
        for side, case in ((base_side, base_case), (head_side, head_case)):
            try:
                ready[side.name] = side.call("setup", (case, side.tree), settings.timeout_s)
            except isolation.WorkerLost as lost:
                return PairedCase(head_case.id, "error", f"{side.name}: {lost}", lost=side.name == "head" and "base" in ready)
        skipped = {name: info["skipped"] for name, info in ready.items() if "skipped" in info}
        if skipped:
            why = "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
            return PairedCase(head_case.id, "skipped", why, lost="head" in skipped and "base" not in skipped)
        names = [n for n in ready["head"]["variants"] if n in ready["base"]["variants"]]
        if not names:
            return PairedCase(head_case.id, "error", "no variant in common between the two sides")

        def respawn() -> None:
            """Both sides in fresh processes, set up again: a process's own bias becomes noise between blocks."""
            for side, case in ((base_side, base_case), (head_side, head_case)):
                side.close()  # the process ends, and with it all the case held
                side.call("setup", (case, side.tree), settings.timeout_s)

        return _rounds(head_case, names, sides, case_budget, margin, workload, on_progress, respawn)
    except isolation.WorkerLost as lost:
        return PairedCase(head_case.id, "error", f"lost while measuring: {lost}")
    except Exception as exc:  # noqa: BLE001 - a case's failure is a row; the others still run
        return PairedCase(head_case.id, "error", describe_failure(exc))
    except BaseException:  # Ctrl-C, SIGTERM: a side may be mid-sample; the caller closes the workers, no teardown call
        interrupted = True
        raise
    finally:
        for side in sides if not interrupted else ():
            with contextlib.suppress(isolation.WorkerLost):
                side.call("teardown", None, settings.timeout_s)


def _rounds(
    case: Case,
    names: list[str],
    sides: tuple[SideWorker, SideWorker],
    case_budget: Budget,
    margin: float,
    workload: Workload,
    on_progress: Callable[[Progress], None] | None,
    respawn: Callable[[], None],
) -> PairedCase:
    settings = case.settings
    rng = random.Random(ORDER_SEED)
    clocks: dict[str, dict[str, list[Clocks]]] = {side.name: {name: [] for name in names} for side in sides}
    looks = schedule(settings.min_samples, settings.max_samples)
    started = block_started = time.perf_counter()
    rounds = blocks = 0
    block_s = BLOCK_S
    judged: tuple[PairedRatio, ...] = ()
    order = list(names)
    while True:
        now = time.perf_counter()
        if now - block_started >= block_s and now - started + block_s < settings.max_time_s:
            respawn()
            blocks += 1
            block_started = time.perf_counter()
            block_s = max(BLOCK_S, BLOCK_PER_MOVE * (block_started - now))
        rng.shuffle(order)
        for name in order:
            pair_order = list(sides)
            rng.shuffle(pair_order)
            for side in pair_order:
                issue_s, done_s, device_s = side.call("sample", name, settings.timeout_s)
                clocks[side.name][name].append(Clocks(issue_s, done_s, device_s))
        rounds += 1
        elapsed = time.perf_counter() - started
        out_of_time = rounds >= settings.max_samples or (rounds >= settings.min_samples and elapsed >= settings.max_time_s)
        if rounds in looks or out_of_time:
            judged = judge(workload, case.params, clocks["base"], clocks["head"], case_budget, margin)
            decided = judged and all(r.verdict != Verdict.INCONCLUSIVE for r in judged)
            if on_progress is not None:
                on_progress(Progress(rounds, elapsed, _widest(judged)))
            if decided or out_of_time:
                break
    series = [[h.done_s / b.done_s for b, h in zip(clocks["base"][n], clocks["head"][n], strict=True) if b.done_s > 0] for n in names]
    lag1 = [rho for s in series if (rho := stats.lag1_autocorrelation(s)) is not None]
    confidence = Budget(case_budget.family_error, max(len(judged), 1), case_budget.first, case_budget.last).confidence()
    return PairedCase(case.id, "ok", None, judged, rounds, elapsed, confidence, round(max(lag1), 3) if lag1 else None, blocks + 1)


def _widest(judged: tuple[PairedRatio, ...]) -> float:
    """The widest relative half-width among the ratios' intervals (inf while one has none): the progress line's ±."""
    widths = [(r.ratio_ci[1] - r.ratio_ci[0]) / 2 / r.ratio if r.ratio_ci and r.ratio > 0 else float("inf") for r in judged]
    return max(widths, default=float("inf"))
