"""comm_overlap: gradients all-reduced across processes while the next ones are computed.

The chapter's motivation for overlap is distributed training. Each of
`world_size` ranks (real processes, `torch.distributed`: gloo on CPU, NCCL on
GPUs, one GPU per rank) computes `n_buckets` gradient-sized blocks — each a
product (rows × inner_dim) @ (inner_dim × 1024) filling `bucket_mb` — and
all-reduces them (sum):
- `blocking`: each bucket all-reduced right after it is computed;
- `overlapped`: `async_op=True` for each, all waited for at the end (the
  issue clock stops when the last one is issued, done when all are reduced);
- `compute_only` and `comm_only`: the two parts alone, for the overlap
  efficiency and the all-reduce bandwidth.
A barrier precedes every sample, so all ranks start it together, and rank 0
decides when to stop, so every rank takes the same number of samples; a
sample's time is that of the slowest rank. The inputs are constants (rank
r's rows are r+1, the weights ones), so every reduced value must equal
inner_dim · W(W+1)/2 exactly: `verified`.

Thread counts: each rank's compute gets `usable cores / ranks on this node`
threads (at least 1); gloo's communication threads come on top. Giving
compute every core would make it fight gloo's threads for them, and the
overlapped variant would measure that fight instead of the overlap.

Ranks are spawned by `asyncbench.measure.distributed.launch` on a free loopback port;
under torchrun (RANK, WORLD_SIZE... set) this process is one rank, meets the
others through env://, and rank 0 gathers everyone's samples.
"""

from __future__ import annotations

import datetime
import os
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.host.facts import usable_cores
from asyncbench.measure import distributed
from asyncbench.results import stats, units
from asyncbench.results.model import Clocks, Result, Samples, Settings
from asyncbench.workloads.base import FLOAT, INT, Measured, Metric, Param, Prepared, Workload

COMPUTE, COMM, BLOCKING, OVERLAPPED = "compute_only", "comm_only", "blocking", "overlapped"
VARIANTS = (COMPUTE, COMM, BLOCKING, OVERLAPPED)
COLUMNS = 1024  # a bucket is rows × 1024 float32 values
FLOAT32_BYTES = 4
# Below this the overlapped variant hid no meaningful part of the communication.
OVERLAP_NOTICEABLE = 0.2
# Efficiency is at most 1 (all of the shorter part hidden); this far above it the parts
# timed alone are not the work the step does (seen with --quick's small buckets on a CPU,
# where back-to-back all-reduces alone ran slower than all-reduces between products).
PARTS_DISAGREE = 1.2


def _bucket_rows(bucket_mb: float) -> int:
    return max(1, round(bucket_mb * 2**20 / FLOAT32_BYTES / COLUMNS))


def _slowest(per_rank: list[Samples]) -> Samples:
    """Per sample, the slowest rank's clocks: a collective step is done when every rank is."""

    def worst(clock: str) -> tuple[float, ...] | None:
        series = [getattr(s, clock) for s in per_rank]
        if any(values is None for values in series):
            return None
        return tuple(max(values) for values in zip(*series, strict=True))

    return Samples(issue_s=worst("issue_s") or (), done_s=worst("done_s") or (), device_s=worst("device_s"))


def overlapped_step(
    grads: list[Any], compute: Callable[[Any], Any], all_reduce: Callable[..., Any], pending: list[Any], on_gpu: bool
) -> None:
    """Each bucket computed, then all-reduced with async_op=True; the works are left in `pending` for the sync.

    On NCCL the all-reduces run on NCCL's own stream: each work's `wait()` is
    then called here, which makes the current stream wait for them on the
    device (the host goes on), so the harness's end event — recorded on the
    current stream when the variant returns — comes after the communication,
    not only after the compute. On gloo `wait()` blocks the host: it is left to
    the sync, so the issue clock stops when the last all-reduce is issued.
    """
    for grad in grads:
        compute(grad)
        pending.append(all_reduce(grad, async_op=True))
    if on_gpu:
        for work in pending:
            work.wait()


def _control_group(dist: Any) -> Any:
    """A gloo group of every rank, for barriers and stop votes beside NCCL's data. Every rank is a member, so torch
    hands back a process group; its other answers (None, or a non-member's marker in torch >= 2.14) would mean the
    ranks disagree on who is in the world."""
    group = dist.new_group(backend="gloo")
    if not isinstance(group, dist.ProcessGroup):
        raise RuntimeError(f"this rank is not in its own control group (torch gave {group!r})")
    return group


def run_rank(rank: int, world_size: int, init_method: str, params: Mapping[str, Any], settings: Settings, device: str) -> dict[str, Any]:
    """One rank's whole case: join the group, measure the four variants together, verify, leave.

    Runs in a spawned worker (or in this process under torchrun). Returns
    plain data: samples per variant, what verification found, and what the
    rank ran on.
    """
    import torch
    import torch.distributed as dist

    from asyncbench.backends import get_backend
    from asyncbench.measure.procedure import Procedure
    from asyncbench.measure.timing import measure

    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    threads = max(1, usable_cores() // local_ranks)
    torch.set_num_threads(threads)
    on_gpu = device.startswith("cuda")
    if on_gpu:
        first = int(device.partition(":")[2] or 0)
        device = f"cuda:{first + int(os.environ.get('LOCAL_RANK', rank))}"
        torch.cuda.set_device(device)
    dist.init_process_group(
        "nccl" if on_gpu else "gloo",
        init_method=init_method,
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=params["collective_timeout_s"]),
    )
    try:
        control = _control_group(dist) if on_gpu else None  # barriers and stop votes stay on the CPU
        rows, inner, n = _bucket_rows(params["bucket_mb"]), params["inner_dim"], params["n_buckets"]
        x = torch.full((rows, inner), float(rank + 1), device=device)
        w = torch.ones((inner, COLUMNS), device=device)
        grads = [torch.empty((rows, COLUMNS), device=device) for _ in range(n)]
        zeros = [torch.zeros((rows, COLUMNS), device=device) for _ in range(n)]  # comm_only: sums stay 0
        pending: list[Any] = []

        def compute_only() -> None:
            for grad in grads:
                torch.mm(x, w, out=grad)

        def comm_only() -> None:
            for bucket in zeros:
                dist.all_reduce(bucket)

        def blocking() -> None:
            for grad in grads:
                torch.mm(x, w, out=grad)
                dist.all_reduce(grad)

        def overlapped() -> None:
            overlapped_step(grads, lambda grad: torch.mm(x, w, out=grad), dist.all_reduce, pending, on_gpu)

        def sync() -> None:
            while pending:
                pending.pop().wait()
            if on_gpu:
                torch.cuda.synchronize(device)

        def agree(stop: bool) -> bool:
            vote = torch.tensor([1 if stop else 0])
            dist.broadcast(vote, src=0, group=control)
            return bool(vote.item())

        def line_up() -> None:  # every rank starts each sample together
            dist.barrier(group=control)

        backend = get_backend("torch")
        samples, sampling = measure(
            {COMPUTE: compute_only, COMM: comm_only, BLOCKING: blocking, OVERLAPPED: overlapped},
            sync,
            lambda: backend.timer(device),
            Procedure(settings, before_sample=line_up, agree=agree),
        )
        expected = inner * world_size * (world_size + 1) / 2
        problems = []
        for variant in (blocking, overlapped):
            for grad in grads:
                grad.fill_(-1.0)
            variant()
            sync()
            wrong = sum(int((grad != expected).sum()) for grad in grads)
            if wrong:
                problems.append(f"{variant.__name__}: {wrong} reduced values differ from {expected:g} on rank {rank}")
        problem = "; ".join(problems) or None
        result = {
            "samples": samples,
            "sampling": sampling,
            "problem": problem,
            "threads": threads,
            "backend": dist.get_backend(),
            "device": device,
        }
        if distributed.torchrun_rank() is not None:  # one process per rank: bring everyone's to rank 0
            everyone: list[Any] = [None] * world_size
            dist.all_gather_object(everyone, result, group=control)
            return {"ranks": everyone}
        return result
    finally:
        dist.destroy_process_group()


class CommOverlap(Workload):
    name = "comm_overlap"
    summary = "torch.distributed all-reduce of gradient buckets: blocking after each vs async_op overlapped with compute"
    params = (
        Param("world_size", INT, 2, "ranks (processes); with NCCL one GPU each", minimum=2, maximum=64),
        Param("n_buckets", INT, 8, "gradient buckets per step", quick=4, minimum=1, maximum=10_000),
        Param("bucket_mb", FLOAT, 4.0, "MiB per bucket (float32)", quick=1.0, minimum=0.004, maximum=4096),
        Param(
            "inner_dim",
            INT,
            256,
            "inner dimension of the product that makes a bucket: the compute per bucket",
            quick=128,
            minimum=1,
            maximum=4096,
        ),
        Param(
            "collective_timeout_s",
            FLOAT,
            120.0,
            "seconds the ranks may take to start and to finish a collective before the case is an error",
            minimum=1,
            maximum=86_400,
        ),
    )
    variants = VARIANTS
    across_processes = True
    takes_reference = False  # its ranks sample with their own Procedure: no reference between their rounds
    metrics = (
        Metric("speedup", "x", "blocking / overlapped done time"),
        Metric("overlap_efficiency", "", "(T_compute + T_comm − T_overlapped) / min(T_compute, T_comm); 1 = perfect"),
        Metric("allreduce_gbps", "GB/s", "bytes all-reduced per rank / comm_only done time"),
        Metric("verified", "bool", "every reduced value equals the exact sum over ranks"),
    )

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        if backend.name != "torch":
            return "comm_overlap runs torch.distributed: select -b torch"
        launched = distributed.torchrun_rank()
        ranks = launched[1] if launched else params["world_size"]
        if device.startswith("cuda"):
            import torch

            first = int(device.partition(":")[2] or 0)
            local = int(os.environ.get("LOCAL_WORLD_SIZE", ranks))
            visible = torch.cuda.device_count()
            if first + local > visible:
                return f"NCCL needs one GPU per rank: {local} ranks from {device} on, {visible} GPU(s) visible"
        return None

    def measure_itself(self, backend: Backend, device: str, params: Mapping[str, Any], settings: Settings) -> Measured:
        launched = distributed.torchrun_rank()
        if launched is not None:
            rank, world_size = launched
            ranks = run_rank(rank, world_size, "env://", params, settings, device)["ranks"]
            how = f"torchrun rank {rank} of {world_size}"
        else:
            world_size = params["world_size"]
            # collective_timeout_s bounds start-up and each collective; the measurement itself is bounded by max_time_s
            deadline_s = params["collective_timeout_s"] + settings.max_time_s * 2
            ranks = distributed.launch(run_rank, world_size, (dict(params), settings, device), deadline_s)
            how = f"{world_size} spawned ranks"
        first = ranks[0]
        note = f"{first['backend']}, {how}, {first['threads']} compute thread(s) each"
        if first["device"].startswith("cuda"):
            note += f", {', '.join(r['device'] for r in ranks)}"
        problems = [r["problem"] for r in ranks if r["problem"]]
        samples = {name: _slowest([r["samples"][name] for r in ranks]) for name in VARIANTS}
        return Measured(samples, {}, first["sampling"], verifies=True, problem="; ".join(problems) or None, note=note)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        """Never called: the runner uses measure_itself, because the work lives in the ranks."""
        raise RuntimeError("comm_overlap runs in its ranks: the runner calls measure_itself, not setup")

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        done = {name: clocks[name].done_s for name in VARIANTS}
        bucket_bytes = _bucket_rows(params["bucket_mb"]) * COLUMNS * FLOAT32_BYTES
        return {
            "speedup": done[BLOCKING] / done[OVERLAPPED],
            "overlap_efficiency": stats.overlap_efficiency([done[COMPUTE], done[COMM]], done[OVERLAPPED]),
            "allreduce_gbps": params["n_buckets"] * bucket_bytes / done[COMM] / 1e9,
        }

    def reading(self, result: Result) -> str:
        metrics = result.metrics
        if metrics.get("speedup") is None:
            return ""
        speedup, efficiency = self.figure(result, "speedup"), metrics.get("overlap_efficiency")
        where = stats.side(result.bounds.get("speedup"), 1.0)
        if where is None or where == 0:
            return (
                f"no speedup shown: overlapped vs blocking is {speedup}, and its 95% interval includes 1 "
                "(or there were too few rounds for one); more samples (max_time_s) or bigger buckets narrow it"
            )
        if where == -1:
            return f"overlapping made the step slower ({speedup}): the all-reduces fought the compute for cores"
        if efficiency is not None and efficiency > PARTS_DISAGREE:
            return (
                f"overlapped is {speedup} faster than blocking, but the parts timed alone do not add up "
                f"(overlap efficiency {units.number(efficiency)}, above the possible 1): compare compute_only and comm_only "
                "with blocking; bigger buckets and more samples make them agree"
            )
        if stats.side(result.bounds.get("overlap_efficiency"), OVERLAP_NOTICEABLE) != 1:
            return f"overlapping hid little: {speedup} faster, overlap efficiency {self.figure(result, 'overlap_efficiency')}"
        return (
            f"the all-reduces ran under the compute: {speedup} faster than blocking, overlap efficiency "
            f"{self.figure(result, 'overlap_efficiency')}"
            + ("; on a CPU the communication is CPU work too, so it competes with the compute for cores" if result.device == "cpu" else "")
        )
