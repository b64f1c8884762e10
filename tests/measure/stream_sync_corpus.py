"""A corpus of planted synchronizations for `run --syncs` on the stream test device, standing for torch on CUDA.

Each planted step queues HOLD_S of simulated work on the device's current stream (a hold kernel: it sleeps, with no
real arithmetic competing for the cores), then a small kernel behind it, then waits once in one way, on a line marked
`# planted: NAME`: the host really blocks until the hold has drained, so each wait's time is known (about HOLD_S).
PLANTED says what the census must find there (kind, the test device's call, waits per step) and which torch call the
wait stands for; DEBUG_MODE_MISSES names the ones torch's set_sync_debug_mode("warn") does not warn about
(backends/torch_syncs.py). The `free` steps queue the same work and never wait: the census must find nothing in them
(a non-blocking copy into pinned memory, a slice, arithmetic; a side stream that waits for the main one's event
on the device, as torch's `Stream.wait_event` and `Event.wait` do, with no host wait). Driven through runner.run_case
with CaseOptions.syncs on (tests/measure/test_sync_corpus_streams.py).

Only this file's own lines are user lines here: the steps reach the device through `A`, set by `setup`.
"""

from __future__ import annotations

import io
import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from asyncbench import Prepared, Workload
from asyncbench.backends.base import Backend

SINK = io.StringIO()
#: what the steps work on: the test device, its name, a small array, host buffers (set by setup)
A = types.SimpleNamespace()
#: the simulated work each step queues before its wait: long against the host's own time per step (tens of µs) and
#: the scheduler's wake-up delays on a loaded machine (a few ms), short enough for a corpus of 13 steps in seconds
HOLD_S = 0.02
#: waits a loop plants per step
LOOP = 3
SIDE = 16


@dataclass(frozen=True)
class Planted:
    """What the census must find on a planted step's marked line, and the torch call it stands for."""

    kind: str
    call: str
    torch: str
    calls_per_step: float = 1


def _queued() -> Any:
    """HOLD_S of work on the current stream, and a small array made behind it."""
    A.sim.hold(A.device, HOLD_S)
    return A.x + 1


def item() -> Any:
    y = _queued()
    return y.sum().item()  # planted: item


def tolist() -> Any:
    y = _queued()
    return y.tolist()  # planted: tolist


def cpu() -> Any:
    y = _queued()
    return y.host_values()  # planted: cpu


def printed() -> Any:
    y = _queued()
    print(y, file=SINK)  # planted: printed
    return y


def branch() -> Any:
    y = _queued()
    if y.sum() > 0:  # planted: branch
        return y
    return y * 2


def nonzero() -> Any:
    y = _queued()
    return y.nonzero()  # planted: nonzero


def masked() -> Any:
    y = _queued()
    return y[y > 1]  # planted: masked


def pageable() -> Any:
    y = _queued()
    A.sim.copy_to_host(y, A.pageable, non_blocking=True)  # planted: pageable
    return y


def event_wait() -> Any:
    y = _queued()
    A.sim.record_event(A.device).synchronize()  # planted: event_wait
    return y


def stream_wait() -> Any:
    y = _queued()
    A.sim.device(A.device).current.synchronize()  # planted: stream_wait
    return y


def device_wait() -> Any:
    y = _queued()
    A.sim.device(A.device).synchronize()  # planted: device_wait
    return y


def loop() -> Any:
    for _ in range(LOOP):
        y = _queued()
        y.sum().item()  # planted: loop
    return y


def free() -> Any:
    y = _queued()
    A.sim.copy_to_host(y, A.pinned, non_blocking=True)  # pinned and non-blocking: the copy engine, no wait
    z = y[0:4] * 2 + y[4:8]
    return z.sum()


def free_streams() -> Any:
    y = _queued()
    side = A.side
    A.sim.fork(A.device, [side])  # the side stream waits on the device for y: the host does not
    with A.sim.on_stream(side):
        z = y * 2
    A.sim.join(A.device, [side])
    A.sim.stream_wait(side, A.sim.record_event(A.device))
    return z


PLANTED = {
    "item": Planted("conversion", "streamsim.Array.item", "torch.Tensor.item"),
    "tolist": Planted("conversion", "streamsim.Array.tolist", "torch.Tensor.tolist"),
    "cpu": Planted("conversion", "streamsim.Array.host_values", "torch.Tensor.cpu"),
    "printed": Planted("print", "streamsim.Array.__str__", "print(tensor)"),
    "branch": Planted("control flow", "streamsim.Array.__bool__", "torch.Tensor.__bool__"),
    "nonzero": Planted("control flow", "streamsim.Array.nonzero", "torch.Tensor.nonzero"),
    "masked": Planted("control flow", "streamsim.Array[mask]", "torch.Tensor[mask]"),
    "pageable": Planted("transfer", "streamsim.copy_to_host(pageable)", "torch.Tensor.copy_(non_blocking=True) into pageable memory"),
    "event_wait": Planted("explicit wait", "streamsim.Event.synchronize", "torch.cuda.Event.synchronize"),
    "stream_wait": Planted("explicit wait", "streamsim.Stream.synchronize", "torch.cuda.Stream.synchronize"),
    "device_wait": Planted("explicit wait", "streamsim.Device.synchronize", "torch.cuda.synchronize"),
    "loop": Planted("conversion", "streamsim.Array.item", "torch.Tensor.item", LOOP),
}
#: planted waits torch's sync debug mode does not warn about (c10 warns in memcpy_and_sync and stream_synchronize
#: only): a non-blocking copy into pageable memory, cudaEventSynchronize, cudaDeviceSynchronize
DEBUG_MODE_MISSES = ("pageable", "event_wait", "device_wait")
FREE = ("free", "free_streams")

STEPS: Mapping[str, Callable[[], Any]] = {name: globals()[name] for name in (*PLANTED, *FREE)}


class StreamCorpus(Workload):
    """The planted steps, each a variant, and the sync-free step."""

    name = "stream_sync_corpus"
    summary = "planted synchronizations on the stream test device (torch on CUDA's waits)"
    variants = (*PLANTED, *FREE)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        A.sim, A.device = backend, device
        A.x = backend.random((SIDE, SIDE), "float32", device)()
        A.pinned = backend.pinned_empty((SIDE, SIDE), "float32")
        A.pageable = np.zeros((SIDE, SIDE), "float32")
        A.side = backend.new_stream(device)  # made once: the test device starts a thread per new stream, which sleeps
        backend.barrier(device)
        return Prepared(variants=dict(STEPS), sync=lambda: backend.barrier(device))
