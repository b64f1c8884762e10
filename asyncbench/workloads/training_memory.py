"""training_memory: running ahead costs memory — an MLP trained with and without barriers.

The Portuguese and Korean chapters: an MLP 512→2048→512→1 (ReLU), L2 loss,
SGD, `n_batches` minibatches of `batch_size` random rows generated on the
device. Variant `sync_every=k` waits for the loss value every k minibatches
(1: every one; 0: never; 2: "b_t finishes before b_{t+2} starts").
Per variant: epoch time, host RSS peak and USS deltas against the process
after warm-up, and device memory in a window of its own (caches emptied and
peaks reset before the variant's memory run): peak allocated and peak
reserved (torch), peak in use and the pool's used/held bytes (cupy). PyTorch is expected to stay near-flat either way
(refcounting frees intermediates; the launch queue bounds run-ahead) — the
point is to measure it, not assume it. torch trains with autograd; numpy,
cupy and MXNet run the same network with hand-written gradients, op by op; JAX
runs those gradients jit-compiled into one step per minibatch, as its users
train (the row's note says so).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import units
from asyncbench.results.model import Clocks, Result, VariantResult
from asyncbench.workloads.base import DTYPE, INT, INTS, Metric, Param, Prepared, Workload

FEATURES, HIDDEN_1, HIDDEN_2 = 512, 2048, 512
# A loop whose whole return-time interval is under half the epoch's ran ahead of the work: say so.
RAN_AHEAD = 0.5
LEARNING_RATE = 0.005  # the chapter's SGD rate
MIB = 2**20
#: the row's note where the backend compiled the step (JAX): what ran differs from the op-by-op loop of the others
COMPILED_NOTE = "one compiled step per minibatch (jit: forward, backward and update in one dispatch)"


def variant_name(every: int) -> str:
    return f"sync_every={every}"


def _torch_epoch(backend: Backend, device: str, dtype: str, batch: int, n_batches: int) -> tuple[Callable[[int], Any], str | None]:
    import torch
    from torch import nn

    torch_dtype = getattr(torch, dtype)
    net = nn.Sequential(nn.Linear(FEATURES, HIDDEN_1), nn.ReLU(), nn.Linear(HIDDEN_1, HIDDEN_2), nn.ReLU(), nn.Linear(HIDDEN_2, 1)).to(
        device=device, dtype=torch_dtype
    )
    # plain SGD written out rather than torch.optim.SGD: constructing any torch.optim optimizer imports
    # torch._dynamo (1.5 s on a 2-core machine), paid by every fresh process: most of an `ab` block of this case,
    # and a sixth of `run -b torch --quick`. The update is the same in-place one, so memory and syncs are too.
    parameters: list[torch.Tensor] = list(net.parameters())
    loss_fn = nn.MSELoss()
    make_batch = backend.random((batch, FEATURES), dtype, device)
    target = torch.ones(batch, 1, device=device, dtype=torch_dtype)

    def epoch(every: int) -> Any:
        for step in range(1, n_batches + 1):
            loss = loss_fn(net(make_batch()), target)
            for parameter in parameters:
                parameter.grad = None
            loss.backward()
            with torch.no_grad():  # one multi-tensor update, as torch.optim.SGD's foreach path launches on a GPU
                grads = [parameter.grad for parameter in parameters if parameter.grad is not None]
                torch._foreach_add_(parameters, grads, alpha=-LEARNING_RATE)
            if every and step % every == 0:
                loss.item()
        return loss

    return epoch, None


def _gradients(xp: Any, weights: list[Any], biases: list[Any], x: Any, target: Any) -> tuple[Any, tuple[tuple[Any, Any], ...]]:
    """The MLP's forward and backward pass by hand: the loss, and each layer's (inputs, gradient of its output)."""
    h1 = x @ weights[0] + biases[0]
    a1 = xp.maximum(h1, 0)
    h2 = a1 @ weights[1] + biases[1]
    a2 = xp.maximum(h2, 0)
    error = a2 @ weights[2] + biases[2] - target
    loss = (error * error).mean()
    d_out = error * (2 / x.shape[0])
    d_h2 = (d_out @ weights[2].T) * (h2 > 0)
    d_h1 = (d_h2 @ weights[1].T) * (h1 > 0)
    return loss, ((x, d_h1), (a1, d_h2), (a2, d_out))


def _array_epoch(backend: Backend, device: str, dtype: str, batch: int, n_batches: int) -> tuple[Callable[[int], Any], str | None]:
    """The same MLP with explicit backpropagation, for NumPy-compatible array modules, and the row's note: op by op
    and updated in place, or, where the backend compiles a step (JAX), one compiled step per minibatch."""
    xp = backend.namespace()
    assert xp is not None, f"{backend.name} has no NumPy-compatible namespace"  # skip_reason keeps such backends out
    import numpy

    sizes = [(FEATURES, HIDDEN_1), (HIDDEN_1, HIDDEN_2), (HIDDEN_2, 1)]
    # He-initialised on the host, then moved: a device generator per weight shape is a compile each on JAX, for
    # numbers set up once and never timed (2 cores: JAX's set-up 2.3 s -> 0.5 s, its --quick case 7.0-7.9 s -> 6.8-7.1 s)
    host = numpy.random.default_rng(0)
    weights = [xp.array(host.standard_normal(s, dtype=numpy.float32) * numpy.float32(math.sqrt(2 / s[0]))).astype(dtype) for s in sizes]
    biases = [xp.zeros(s[1], dtype=dtype) for s in sizes]
    make_batch = backend.random((batch, FEATURES), dtype, device)
    target = xp.ones((batch, 1), dtype=dtype)

    def updated(weights: list[Any], biases: list[Any], x: Any, target: Any) -> tuple[Any, list[Any], list[Any]]:
        loss, layers = _gradients(xp, weights, biases, x, target)
        new_weights = [w - LEARNING_RATE * (inputs.T @ grad) for w, (inputs, grad) in zip(weights, layers, strict=True)]
        new_biases = [b - LEARNING_RATE * grad.sum(axis=0) for b, (_, grad) in zip(biases, layers, strict=True)]
        return loss, new_weights, new_biases

    # JAX's users jit their training step; op by op, XLA compiles each of the step's ~30 ops once per shape, which was
    # most of `run -b jax --quick` (its quick case 6.8-7.1 s on 2 cores) and measured a loop JAX users do not write
    step = backend.compiled(updated)

    def step_once() -> Any:
        if step is not None:
            loss, weights[:], biases[:] = step(weights, biases, make_batch(), target)
            return loss
        loss, layers = _gradients(xp, weights, biases, make_batch(), target)
        for layer, (inputs, grad) in enumerate(layers):  # in place, as a NumPy user updates
            weights[layer] -= LEARNING_RATE * (inputs.T @ grad)
            biases[layer] -= LEARNING_RATE * grad.sum(axis=0)
        return loss

    def epoch(every: int) -> Any:
        for step_number in range(1, n_batches + 1):
            loss = step_once()
            if every and step_number % every == 0:
                loss.item()
        return loss

    return epoch, (None if step is None else COMPILED_NOTE)


class TrainingMemory(Workload):
    name = "training_memory"
    summary = "MLP training with a loss barrier every k minibatches: epoch time and host/device memory per k"
    params = (
        # on a CPU an epoch at the textbook's sizes takes ~20 s (2 cores): 6 rounds of 2 variants overran timeout_s
        Param("n_batches", INT, 150, "minibatches per epoch (one sample)", quick=2, minimum=1, maximum=1_000_000, per_backend={"cpu": 30}),
        Param("batch_size", INT, 1024, "rows per minibatch", quick=32, minimum=1, maximum=1_000_000, per_backend={"cpu": 512}),
        Param("sync_every", INTS, [1, 0], "wait for the loss every k minibatches; 0 = never", minimum=0, maximum=1_000_000),
        DTYPE,
    )
    variants = ("sync_every=K (one per sync_every value)",)
    metrics = (
        Metric("epoch_s_kK", "s", "epoch time with a barrier every K minibatches"),
        Metric("loop_s_kK", "s", "time until the training loop returned, before the final sync: how far the frontend ran ahead"),
        Metric("host_rss_delta_mb_kK", "MiB", "host RSS peak during the epoch − before it", signed=True),
        Metric("host_uss_delta_mb_kK", "MiB", "host USS after the epoch − before it", signed=True),
        Metric("device_peak_mb_kK", "MiB", "peak device memory in use during the epoch (torch: allocated; cupy: pool bytes in use)"),
        Metric("device_reserved_mb_kK", "MiB", "torch: peak device memory reserved by the caching allocator during the epoch"),
        Metric("pool_used_mb_kK", "MiB", "cupy: memory pool bytes in use after the epoch"),
        Metric("pool_total_mb_kK", "MiB", "cupy: memory pool bytes held after the epoch (the pool is emptied before it)"),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        build = _torch_epoch if backend.namespace() is None else _array_epoch
        epoch, note = build(backend, device, params["dtype"], params["batch_size"], params["n_batches"])
        backend.barrier(device)

        def variant(every: int) -> Callable[[], Any]:
            return lambda: epoch(every)

        return Prepared(
            variants={variant_name(k): variant(k) for k in params["sync_every"]},
            sync=lambda: backend.barrier(device),
            note=note,
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        metrics: dict[str, float | None] = {}
        for every in params["sync_every"]:
            measured = clocks[variant_name(every)]
            metrics[f"epoch_s_k{every}"] = measured.done_s
            metrics[f"loop_s_k{every}"] = measured.issue_s
        return metrics

    def run_metrics(self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]) -> dict[str, float | None]:
        metrics: dict[str, float | None] = {}
        for every in params["sync_every"]:
            memory = variants[variant_name(every)].memory
            figures = {
                "host_rss_delta_mb": _mib(memory.host_rss_peak_delta_bytes),
                "host_uss_delta_mb": _mib(memory.host_uss_delta_bytes),
                "device_peak_mb": _mib(memory.device_peak_bytes),
                "device_reserved_mb": _mib(memory.device_reserved_bytes),
                "pool_used_mb": _mib(memory.device_pool_used_bytes),
                "pool_total_mb": _mib(memory.device_pool_total_bytes),
            }
            metrics.update({f"{name}_k{every}": value for name, value in figures.items() if value is not None})
        return metrics

    def reading(self, result: Result) -> str:
        metrics = result.metrics
        ks = sorted({int(name.rsplit("_k", 1)[1]) for name in metrics if name.startswith("epoch_s_k")})
        if len(ks) < 2:
            return ""
        memory_key = next((m for m in ("device_peak_mb", "pool_used_mb", "host_rss_delta_mb") if f"{m}_k{ks[0]}" in metrics), None)
        parts = []
        for k in ks:
            text = f"k={k}: {self.figure(result, f'epoch_s_k{k}')}"
            ahead = result.bounds.get(f"loop_s_k{k}")
            done = result.bounds.get(f"epoch_s_k{k}")
            if ahead is not None and done is not None and ahead[1] < done[0] * RAN_AHEAD:
                text += f" (the loop returned after {self.figure(result, f'loop_s_k{k}')})"
            memory_mb = metrics.get(f"{memory_key}_k{k}") if memory_key else None
            if memory_key and memory_mb is not None:  # in the unit the table's memory column and metric line use
                text += f", {units.quantity(memory_mb, 'MiB')} {memory_key.removesuffix('_mb').replace('_', ' ')}"
            parts.append(text)
        return "per epoch — " + "; ".join(parts)


def _mib(value: int | None) -> float | None:
    return None if value is None else value / MIB
