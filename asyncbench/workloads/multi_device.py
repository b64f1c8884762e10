"""multi_device: the same work on two devices, alone and together without a sync in between.

The automatic-parallelism chapter: `n_iter` products of a size×size matrix on
each device alone (synchronized), then issued on both before one sync. The
pair is the case's device plus a `partner`:
- two GPUs (`cuda:N`, the next GPU by default when there is one);
- a GPU plus the CPU (`cpu`; torch only): the GPU work is issued first, then
  the CPU work runs on the calling thread, then the GPU is synchronized — the
  reverse order would serialize them. The partner's count of products is
  set from one product timed on each (`balanced_count`): equal counts would
  leave the GPU's part a sliver of the CPU's. The note says how the count was
  set, never that the parts came out alike: that is the reading's, from the
  measured parts (`parts_ratio`, against BALANCED_WITHIN). Work on two
  devices gets no device time (events on one device time that device alone);
- two streams on one GPU (`stream`; cupy's default partner on one GPU): the
  side stream does not wait for the main one (JAX gives the workload no side
  stream: both parts run on XLA's one, and the note says so);
- on the CPU alone: the framework's second CPU device where it has one (JAX's
  `cpu:1`, MXNet's `mx.cpu(1)`: the work is issued on both before one
  sync), else two threads with half the cores each (torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.host.facts import usable_cores
from asyncbench.measure.timing import take_sample
from asyncbench.results import stats, units
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, STR, Metric, Param, Prepared, Workload
from asyncbench.workloads.threads import started_pool

FIRST, SECOND, TOGETHER = "first", "second", "together"

# An efficiency interval wholly above this: the parts ran at once; wholly below: one after the other.
OVERLAP_NOTICEABLE = 0.2
# The parts are read as balanced where the interval of longer / shorter alone time lies wholly below this, and as not
# balanced wholly above it. Parts r× apart let running at once make together at most 1 + 1/r times faster: 1.67× at
# 1.5 against 2× for equal parts, still the chapter's picture; further apart the longer part is most of `together`,
# and the speedup speaks of the imbalance more than of the overlap. It is also where set-up starts balancing counts
# (BALANCE_ABOVE): a count balanced at set-up that missed shows here.
BALANCED_WITHIN = 1.5


def _cuda_count(backend: Backend) -> int:
    return sum(1 for s in backend.probe() if s.available and s.device.startswith("cuda"))


# Devices whose alone-times differ by more than this factor get balanced counts (a GPU and the CPU differ by
# tens); closer ones keep n_iter, so two like GPUs run the same work and calibration noise changes nothing.
BALANCE_ABOVE = 1.5
# Calibration runs per device: the fastest of three is steady enough to pick a count, and costs little set-up.
CALIBRATION_RUNS = 3


def _products(x: Any, count: int) -> Callable[[], Any]:
    return lambda: [x @ x for _ in range(count)]


def _on(backend: Backend, device: str, work: Callable[[], Any]) -> Any:
    with backend.activate(device):
        return work()


def _fastest_s(run: Callable[[], Any], sync: Callable[[], None]) -> float:
    """The least done time of CALIBRATION_RUNS runs, each taken as a sample is."""
    return min(take_sample(run, sync, None)[1] for _ in range(CALIBRATION_RUNS))


@dataclass(frozen=True)
class Balance:
    """The partner's count of products, and the one-product times at set-up it was scaled by."""

    count: int
    first_product_s: float
    second_product_s: float

    def fewest(self, n_iter: int) -> bool:
        """Whether the count is 1 only because no fewer products can run: one partner product outlasts the case
        device's `n_iter` by more than BALANCE_ABOVE."""
        return self.count == 1 and self.second_product_s > BALANCE_ABOVE * n_iter * self.first_product_s

    def said(self, device: str, partner: str, n_iter: int) -> str:
        """How the count was set, for the note (never whether the parts came out alike: the reading says that)."""
        first, second = units.seconds(self.first_product_s), units.seconds(self.second_product_s)
        timed = f"one product timed on each: {device} {first}, {partner} {second}"
        if self.fewest(n_iter):
            needed = round(self.second_product_s / self.first_product_s) if self.first_product_s > 0 else None
            return f"{timed}; 1 is the fewest" + (f", n_iter {needed} would match them" if needed else "")
        return timed


def balanced_count(
    n_iter: int, first: Callable[[], Any], sync_first: Callable[[], None], second: Callable[[], Any], sync_second: Callable[[], None]
) -> Balance:
    """How many products the partner runs so its alone-time is near the case device's `n_iter` products.

    With equal counts a GPU finishes in a fraction of a millisecond what the
    CPU takes many milliseconds for: "together" is then the CPU's time, and the
    overlap efficiency is noise. Each side's single product is timed (after a
    warm-up run) and the partner's count scaled by the ratio; it cannot go
    below 1, so a partner whose one product outlasts the case device's
    `n_iter` stays longer (the note says so, and what n_iter would match them).
    """
    for run in (first, sync_first, second, sync_second):  # warm-up: first-call costs (kernel selection, allocation)
        run()
    first_s, second_s = _fastest_s(first, sync_first), _fastest_s(second, sync_second)
    if second_s <= 0 or max(first_s, second_s) <= BALANCE_ABOVE * min(first_s, second_s):
        return Balance(n_iter, first_s, second_s)
    return Balance(max(1, round(n_iter * first_s / second_s)), first_s, second_s)


def partner_for(backend: Backend, device: str, partner: str) -> str:
    """The concrete partner: a device name, 'stream', or 'threads' (two CPU threads)."""
    if device == "cpu":
        return backend.second_cpu() or "threads"
    if partner != "auto":
        return partner
    count = _cuda_count(backend)
    if count > 1:
        index = int(device.split(":")[1])
        return f"cuda:{(index + 1) % count}"
    return "cpu" if "cpu" in backend.device_kinds else "stream"


class MultiDevice(Workload):
    name = "multi_device"
    summary = "the same products on two devices (GPUs, GPU+CPU, two streams, two CPU thread groups) alone vs together"
    params = (
        # on a CPU the textbook's 50 products of 4000² take a minute or more per variant: timeout_s would cut the case
        # --quick's 256 is matmul's, barrier's and conversion's: on JAX their cases share one compiled generator
        Param("size", INT, 4000, "matrix side", quick=256, minimum=1, maximum=65536, per_backend={"cpu": 1000}),
        Param(
            "n_iter",
            INT,
            50,
            "products per sample on the case's device (a partner of another speed gets a count balanced to a similar time)",
            quick=4,
            minimum=1,
            maximum=100_000,
            per_backend={"cpu": 10},
        ),
        Param("partner", STR, "auto", "auto, cpu, stream or cuda:N", pattern=r"auto|cpu|stream|cuda:\d+"),
        DTYPE,
    )
    variants = (FIRST, SECOND, TOGETHER)
    metrics = (
        Metric("parallel_speedup", "x", "(T_first + T_second) / T_together"),
        Metric("overlap_efficiency", "", "(ΣT_i − T_together) / (ΣT_i − max T_i); 1 = perfect"),
        Metric("parts_ratio", "x", "longer / shorter alone time (T_first, T_second); 1 = balanced parts"),
    )

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        partner = partner_for(backend, device, params["partner"])
        if partner == "threads" and not backend.threads_settable:
            return f"{backend.name} cannot give each thread its own share of the cores (use torch)"
        if partner == "cpu" and "cpu" not in backend.device_kinds:
            return f"{backend.name} cannot compute on the CPU; use partner: stream or a second GPU"
        if partner == device:
            return f"partner {partner} is the case's own device; pick another (or stream)"
        if partner.startswith("cuda:") and int(partner.split(":")[1]) >= _cuda_count(backend):
            return f"partner {partner} not present ({_cuda_count(backend)} CUDA device(s) visible)"
        return super().skip_reason(backend, device, params)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        size, n_iter, dtype = params["size"], params["n_iter"], params["dtype"]
        partner = partner_for(backend, device, params["partner"])
        if partner == "threads":
            return self._threads(backend, size, n_iter, dtype)
        if partner == "stream":
            return self._streams(backend, device, size, n_iter, dtype)

        x = backend.random((size, size), dtype, device)()
        with backend.activate(partner):
            partner_x = backend.random((size, size), dtype, partner)()

        def sync() -> None:
            backend.barrier(device)
            backend.barrier(partner)

        sync()
        balance = None
        if device.startswith("cuda") or partner.startswith("cuda"):  # two CPU devices of a framework run alike
            balance = balanced_count(
                n_iter,
                _products(x, 1),
                lambda: backend.barrier(device),
                lambda: _on(backend, partner, _products(partner_x, 1)),
                lambda: backend.barrier(partner),
            )
        partner_iter = balance.count if balance is not None else n_iter
        first, on_partner = _products(x, n_iter), _products(partner_x, partner_iter)

        def second() -> Any:
            return _on(backend, partner, on_partner)

        def together() -> Any:
            return first(), second()  # first is issued (returns at once on a GPU) before second starts

        note = f"{device} ×{n_iter} + {partner} ×{partner_iter} products"
        if balance is not None and (partner_iter != n_iter or balance.fewest(n_iter)):
            note += f" ({partner}'s count from {balance.said(device, partner, n_iter)})"
        note += f", {device} work issued first"
        if device.startswith("cuda"):
            note += "; no device time: the work spans two devices"
        return Prepared(variants={FIRST: first, SECOND: second, TOGETHER: together}, sync=sync, note=note, device_timed=False)

    def _streams(self, backend: Backend, device: str, size: int, n_iter: int, dtype: str) -> Prepared:
        """Two streams on one GPU. The side stream does not wait for the main one (no fork): setup has
        synchronized its input, and a fork in `together` would queue it behind first's products."""
        make_random = backend.random((size, size), dtype, device)
        first, x_side = _products(make_random(), n_iter), make_random()
        side = backend.new_stream(device)

        def second() -> Any:
            with backend.on_stream(side):
                result = [x_side @ x_side for _ in range(n_iter)]
            backend.join(device, [side])  # the harness's end event, on the main stream, comes after it
            return result

        def together() -> Any:
            return first(), second()

        backend.barrier(device)
        return Prepared(
            variants={FIRST: first, SECOND: second, TOGETHER: together},
            sync=lambda: backend.barrier(device),
            note=_streams_note(backend, device, side),
        )

    def _threads(self, backend: Backend, size: int, n_iter: int, dtype: str) -> Prepared:
        """Two CPU threads, each with half the cores (the framework's threads set before the pool starts)."""
        cores = usable_cores()
        per_thread = max(1, cores // 2)
        previous = backend.set_threads(per_thread)
        # Each worker sets its own count too: a fresh thread's first BLAS call may not
        # see the process-wide setting (seen with torch 2.13: a worker ran at 2 threads).
        pool = started_pool(2, "asyncbench-cpu", initializer=backend.set_threads, initargs=(per_thread,))
        inputs = [backend.random((size, size), dtype, "cpu")() for _ in range(2)]

        def work(x: Any) -> Any:
            return [x @ x for _ in range(n_iter)]

        def alone(index: int) -> Callable[[], Any]:
            return lambda: pool.submit(work, inputs[index]).result()

        def together() -> Any:
            futures = [pool.submit(work, x) for x in inputs]
            return [f.result() for f in futures]

        def close() -> None:
            pool.shutdown(wait=True)
            if previous is not None:
                backend.set_threads(previous)

        return Prepared(
            variants={FIRST: alone(0), SECOND: alone(1), TOGETHER: together},
            sync=lambda: None,
            close=close,
            note=f"2 threads × {per_thread} of {cores} cores",
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        alone = [clocks[FIRST].done_s, clocks[SECOND].done_s]
        together = clocks[TOGETHER].done_s
        return {
            "parallel_speedup": sum(alone) / together if together > 0 else None,
            "overlap_efficiency": stats.overlap_efficiency(alone, together),
            "parts_ratio": max(alone) / min(alone) if min(alone) > 0 else None,
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("overlap_efficiency") is None:
            return ""
        speedup, efficiency = self.figure(result, "parallel_speedup"), self.figure(result, "overlap_efficiency")
        where = stats.side(result.bounds.get("overlap_efficiency"), OVERLAP_NOTICEABLE)
        if where == 1:
            said = f"the two ran at once: together is {speedup} faster than one after the other (overlap efficiency {efficiency})"
        elif where == -1 and self._some_overlap_possible(result):
            # below the notable line, but the intervals reach past "no overlap" (efficiency 0, speedup 1): a small
            # overlap is not ruled out, so neither "did not run at once" nor its cause is stated as a fact
            said = f"no overlap shown (overlap efficiency {efficiency}, {speedup}): they may compete for the same resource"
        elif where == -1:
            said = f"the two did not run at once (overlap efficiency {efficiency}, {speedup}): they compete for the same resource"
        else:
            said = f"running at once not shown either way: overlap efficiency {efficiency} straddles {OVERLAP_NOTICEABLE} ({speedup})"
        balance = self._balance(result)
        return f"{said}; {balance}" if balance else said

    @staticmethod
    def _some_overlap_possible(result: Result) -> bool:
        """Whether an interval reaches past "no overlap": the efficiency's above 0, or the speedup's above 1."""
        efficiency, speedup = result.bounds.get("overlap_efficiency"), result.bounds.get("parallel_speedup")
        return (efficiency is not None and efficiency[1] > 0) or (speedup is not None and speedup[1] > 1)

    def _balance(self, result: Result) -> str:
        """Whether the measured parts were alike, from the interval of their ratio ('' for a file without it)."""
        ratio = result.metrics.get("parts_ratio")
        if ratio is None:
            return ""
        apart = self.figure(result, "parts_ratio")
        where = stats.side(result.bounds.get("parts_ratio"), BALANCED_WITHIN)
        if where == -1:
            return f"the parts were balanced (the longer took {apart} the shorter's time)"
        if where == 1:
            return (
                f"the parts were not balanced: the longer took {apart} the shorter's time, so running at once could make "
                f"together at most {units.ratio(1 + 1 / ratio)} faster"
            )
        return f"balanced parts not shown either way: the longer took {apart} the shorter's time, which straddles {BALANCED_WITHIN}"


def _streams_note(backend: Backend, device: str, side: Any | None) -> str:
    """What `partner: stream` ran on: two streams, or one where the framework gives the workload no side stream
    (JAX: XLA's one compute stream per device), so both parts queued on it one after the other."""
    if side is not None:
        return f"two streams on {device}"
    return f"one stream on {device}: {backend.name} has no side stream to give, so both parts ran on it, one after the other"
