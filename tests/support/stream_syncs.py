"""The stream test device's sync hooks (`run --syncs`): where its host waits, as torch's does on CUDA.

Each hook is a wait the device really makes (a `queue.join` on a stream's worker, an event's `threading.Event`):
the host sleeps while the simulated kernels ahead of it drain, so the census times a wait whose cost is known.
What each one models on torch (torch_syncs.cuda_hooks names the real ones):

    streamsim.Array.item / tolist        .item() / .tolist()                          conversion
    streamsim.Array.host_values          .cpu(), .numpy(), .to("cpu")                 conversion
    streamsim.Array.__repr__ / __str__   print(t), repr(t)                            print
    streamsim.Array.__bool__             bool(t), `if t:`                             control flow
    streamsim.Array.nonzero              t.nonzero(), torch.nonzero(t)                control flow
    streamsim.Array[mask]                t[mask]                                      control flow
    streamsim.copy_to_host(pageable)     .copy_(t) into pageable memory, or blocking  transfer
    streamsim.Event.synchronize          torch.cuda.Event.synchronize                 explicit wait
    streamsim.Stream.synchronize         torch.cuda.current_stream().synchronize()    explicit wait
    streamsim.Device.synchronize         torch.cuda.synchronize()                     explicit wait

Hooked calls nest (`item` waits through `Stream.synchronize`): the census counts the outermost only.
"""

from __future__ import annotations

from typing import Any

from asyncbench.backends.handles import SyncHook
from tests.support import stream_device
from tests.support.stream_device import Array, Device, Event, Pinned, Stream


def _masked(array: Any, index: Any = None) -> bool:
    return isinstance(index, Array)


def _pageable(backend: Any, source: Any = None, destination: Any = None, non_blocking: bool = False) -> bool:
    return not (isinstance(destination, Pinned) and non_blocking)


def sync_hooks(backend: stream_device.StreamSimBackend) -> tuple[SyncHook, ...]:
    """The waits of the test device's asynchronous devices (the synchronous `cpu` has none)."""
    backend_type = type(backend)
    return (
        *(SyncHook(Array, name, "conversion", f"streamsim.Array.{name}") for name in ("item", "tolist", "host_values")),
        *(SyncHook(Array, name, "print", f"streamsim.Array.{name}") for name in ("__repr__", "__str__")),
        SyncHook(Array, "__bool__", "control flow", "streamsim.Array.__bool__"),
        SyncHook(Array, "nonzero", "control flow", "streamsim.Array.nonzero"),
        SyncHook(Array, "__getitem__", "control flow", "streamsim.Array[mask]", _masked),
        SyncHook(backend_type, "copy_to_host", "transfer", "streamsim.copy_to_host(pageable)", _pageable),
        SyncHook(Event, "synchronize", "explicit wait", "streamsim.Event.synchronize"),
        SyncHook(Stream, "synchronize", "explicit wait", "streamsim.Stream.synchronize"),
        SyncHook(Device, "synchronize", "explicit wait", "streamsim.Device.synchronize"),
    )
