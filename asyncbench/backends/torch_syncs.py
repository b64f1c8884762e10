"""Where torch's host waits for a CUDA device (`run --syncs`): the entry points the census wraps, and torch's own
sync debug mode as a second witness.

On CUDA, an op returns once it is queued; the host waits where it needs a value or a copy the device has not made
yet. The hooks (`cuda_hooks`) are torch's Python-visible entry points for those waits:
- conversions of a CUDA tensor to a host value: `.item()`, `.tolist()`, `float()`/`int()`/`operator.index()`,
  `.cpu()`, `.numpy(force=True)`; printing and formatting (`__repr__`, `__format__`: `print(t)`, `f"{t:.3f}"`);
- control flow on a device value: `bool(t)` (`if t:`, `while t.any():`), `nonzero`/`torch.nonzero`, masked indexing
  `t[mask]` (its output's shape is the mask's count), `masked_select`;
- transfers that wait: `.to(device)` and `.copy_(src)` between host and device without `non_blocking` (a copy
  into pageable memory, or a blocking one, returns when it is done: the whole stream is drained first), and a
  blocking `.cuda()`;
- explicit waits: `torch.cuda.synchronize`, `torch.cuda.Stream.synchronize` (`current_stream().synchronize()`),
  `torch.cuda.Event.synchronize`.

Tensor methods are C slots of torch._C.TensorBase; the hooks are set on torch.Tensor (a Python subclass), where
`setattr` shadows them and, for `__bool__` and `__getitem__`, updates the type's slots: `bool(t)` and `t[mask]`
go through the wrapper (tests/backends/test_sync_hooks_torch.py calls every hook through `census.take`). Each
hook's `when` keeps a call that does not wait out: a CPU tensor's `.item()`, a copy between two CPU tensors, a
non-blocking copy into pinned memory.

On a CPU torch runs each op before it returns: nothing waits for a device, so `TorchBackend.sync_hooks("cpu")` is
empty and the census says torch is synchronous there (census.synchronous), never counting a CPU `.item()`.

torch's `torch.cuda.set_sync_debug_mode("warn")` (torch >= 1.10, CUDA only) warns from C++ (c10's
`warn_or_error_on_sync`, message "called a synchronizing CUDA operation") where an op calls c10's
`memcpy_and_sync` (a blocking copy: `.item()`, `.cpu()`, `nonzero`, masked indexing, `.tolist()`) or
`stream_synchronize` (`Stream.synchronize`, some ops' internal waits). torch turns the C++ warning into a Python
UserWarning when the binding returns (PyErr_WarnEx, stacklevel 1: attributed to the Python frame that called the C
function), so `debug_warnings` catches it with a `warnings.showwarning` of its own and walks out from there to the
user's line. It does not warn for `torch.cuda.synchronize` (c10's `device_synchronize`), `Event.synchronize`
(`cudaEventSynchronize`), a `non_blocking=True` copy into pageable memory (the driver makes it synchronous;
torch does not know), waits inside torch.distributed or sparse ops (pytorch/pytorch#70490, #84291, #120996), and it
says nothing of time: the hooks time every wait; a wait only the debug mode saw is named, not timed.

The mode is process-wide, and so is Python's warning hook: a synchronizing call on another thread (a data loader's, a
partner's worker) warns too. Only the warnings raised on the thread that entered `debug_warnings` (the one being
measured) reach the witness; another thread's are dropped, neither credited to the call the measured thread has open
nor shown (the mode is the census's, not the user's).

In the census (TorchBackend.sync_witness, on CUDA where torch has the mode): `debug_warnings` runs during the frame
fallback's run of each census round and each warning marks the call the fallback has open from the user's line
(frames.SleepWatch.synchronized); that call is reported at its end with its wall time (a CUDA wait spins by default:
the fallback alone, which looks for sleeps, misses it), unless a hook recorded a wait inside it (then it is the
hook's, counted once). Its point is `unattributed`, named by the function the user's line called.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
import warnings
from typing import Any, Callable, Iterator

from asyncbench.backends.handles import SyncHook

#: what c10's warn_or_error_on_sync says (torch appends where in C++ it was triggered)
DEBUG_MESSAGE = "called a synchronizing CUDA operation"
#: torch's name for the debug mode's "warn" level, restored to "default" (off) after
DEBUG_WARN = "warn"

#: conversions of a device tensor to a host value, each a wait for the tensor's stream
_CONVERSIONS = ("item", "tolist", "__float__", "__int__", "__index__", "cpu", "numpy")
_PRINTS = ("__repr__", "__format__")


def _device_type(value: Any) -> str | None:
    """The device type a `.to(...)` argument names ("cpu", "cuda"), or None (a dtype, a memory format)."""
    if isinstance(value, str):
        return value.partition(":")[0]
    kind = getattr(value, "type", None)  # torch.device
    if isinstance(kind, str):
        return kind
    device = getattr(value, "device", None)  # another tensor: .to(other)
    return getattr(device, "type", None) if device is not None else None


def cuda_hooks(torch: Any, on_device: Callable[[Any], bool] | None = None) -> tuple[SyncHook, ...]:
    """torch's entry points where the host waits for a CUDA device, from torch 2.1 on (an attribute a version
    lacks is reported by the census as not hooked, not an error). `on_device(tensor)`: whether a tensor lives on
    the device (`tensor.is_cuda`; a test passes its own to see each hook fire on CPU tensors)."""
    device = on_device or (lambda tensor: bool(getattr(tensor, "is_cuda", False)))
    tensor = torch.Tensor

    def its_own(self: Any, *args: Any, **kwargs: Any) -> bool:
        return device(self)

    def masked(self: Any, index: Any = None, *args: Any) -> bool:
        indices = index if isinstance(index, tuple) else (index,)
        return device(self) and any(isinstance(i, tensor) and i.dtype == torch.bool for i in indices)

    def to_waits(self: Any, *args: Any, **kwargs: Any) -> bool:
        if kwargs.get("non_blocking") or any(flag is True for flag in args[1:3]):
            return False  # into pinned memory (torch pins the output), or a host-to-device copy staged at once
        target = kwargs.get("device", args[0] if args else None)
        kind = _device_type(target)
        if kind is None:
            return False  # a dtype: stays where it is
        return (device(self) and kind == "cpu") or (not device(self) and kind == "cuda")

    def copy_waits(self: Any, source: Any = None, non_blocking: bool = False) -> bool:
        if device(self) == device(source):
            return False  # host to host, or device to device: queued
        return not (non_blocking and (device(self) or self.is_pinned()))

    def cuda_waits(self: Any, *args: Any, **kwargs: Any) -> bool:
        return not device(self) and not kwargs.get("non_blocking", False)

    def of_device(value: Any = None, *args: Any, **kwargs: Any) -> bool:
        return isinstance(value, tensor) and device(value)

    found = [
        *(SyncHook(tensor, name, "conversion", f"torch.Tensor.{name}", its_own) for name in _CONVERSIONS),
        *(SyncHook(tensor, name, "print", f"torch.Tensor.{name}", its_own) for name in _PRINTS),
        SyncHook(tensor, "__bool__", "control flow", "torch.Tensor.__bool__", its_own),
        SyncHook(tensor, "nonzero", "control flow", "torch.Tensor.nonzero", its_own),
        SyncHook(torch, "nonzero", "control flow", "torch.nonzero", of_device),
        SyncHook(tensor, "masked_select", "control flow", "torch.Tensor.masked_select", its_own),
        SyncHook(torch, "masked_select", "control flow", "torch.masked_select", of_device),
        SyncHook(tensor, "__getitem__", "control flow", "torch.Tensor[mask]", masked),
        SyncHook(tensor, "to", "transfer", "torch.Tensor.to", to_waits),
        SyncHook(tensor, "copy_", "transfer", "torch.Tensor.copy_", copy_waits),
        SyncHook(tensor, "cuda", "transfer", "torch.Tensor.cuda", cuda_waits),
    ]
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        found.append(SyncHook(cuda, "synchronize", "explicit wait", "torch.cuda.synchronize"))
        for owner in ("Stream", "Event"):
            if getattr(cuda, owner, None) is not None:
                found.append(SyncHook(getattr(cuda, owner), "synchronize", "explicit wait", f"torch.cuda.{owner}.synchronize"))
    return tuple(found)


def debug_mode_available(torch: Any) -> bool:
    """Whether torch's sync debug mode can be turned on here: a CUDA build with a device (it starts CUDA)."""
    cuda = getattr(torch, "cuda", None)
    return cuda is not None and hasattr(cuda, "set_sync_debug_mode") and bool(cuda.is_available())


#: what `debug_warnings` reports a synchronizing call to: the frame that called torch's C function, and the
#: C++ location torch names in its message (or "")
Witness = Callable[[types.FrameType, str], None]


def _triggered(message: str) -> str:
    """Where in C++ torch says the warning was triggered ("" when it does not say)."""
    _, found, rest = message.partition("(Triggered internally at ")
    return rest.rstrip(".)").strip() if found else ""


@contextlib.contextmanager
def debug_warnings(torch: Any, witness: Witness, turn_on: bool = True) -> Iterator[None]:
    """Inside: torch's sync debug mode at "warn" (`turn_on`, where debug_mode_available), every one of its
    warnings raised on this thread passed to `witness` with the Python frame that made the synchronizing call, and
    not shown; those of other threads dropped (their waits are not the measured thread's); other warnings shown as
    before. Restores the previous mode, filters and showwarning after, also on an exception.

    Python's default filter shows a warning once per line: "always" for this message, so each call is seen."""
    previous = torch.cuda.get_sync_debug_mode() if turn_on else None
    measured = threading.get_ident()
    with warnings.catch_warnings():
        warnings.filterwarnings("always", message=DEBUG_MESSAGE)
        shown = warnings.showwarning

        def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
            text = str(message)
            if not text.startswith(DEBUG_MESSAGE):
                shown(message, category, filename, lineno, file, line)
                return
            if threading.get_ident() != measured:
                return  # another thread's wait: crediting it would mark the call the measured thread has open
            frame: types.FrameType | None = sys._getframe(1)
            while frame is not None and not (frame.f_code.co_filename == filename and frame.f_lineno == lineno):
                frame = frame.f_back  # out of the warnings machinery, to the frame the warning names
            if frame is not None:
                witness(frame, _triggered(text))

        warnings.showwarning = showwarning
        if turn_on:
            torch.cuda.set_sync_debug_mode(DEBUG_WARN)
        try:
            yield
        finally:
            if turn_on:
                torch.cuda.set_sync_debug_mode(previous)
