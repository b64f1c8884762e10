"""A model of torch's sync debug mode for a machine without CUDA: `cuda` records the mode set, and `spin_op` is an op
that synchronizes as CUDA does by default — it spins (no sleep for the frame fallback to see) — and then, in warn
mode, warns as torch's binding does when it returns. Its module is the framework's (FRAMEWORK)."""

from __future__ import annotations

import time
import types
import warnings
from typing import Any, Callable, ContextManager

from asyncbench.backends.torch_syncs import DEBUG_MESSAGE, debug_warnings

FRAMEWORK = frozenset({__name__})
#: how long the op spins
SPIN_S = 0.005


class Cuda:
    """torch.cuda's debug mode, recorded."""

    def __init__(self) -> None:
        self.mode = 0
        self.set: list[object] = []

    def get_sync_debug_mode(self) -> int:
        return self.mode

    def set_sync_debug_mode(self, mode: object) -> None:
        self.set.append(mode)
        self.mode = {"warn": 1, "default": 0}.get(mode, 0) if isinstance(mode, str) else int(mode)  # type: ignore[call-overload]


CUDA = Cuda()
torch = types.SimpleNamespace(cuda=CUDA)


def spin_op(seconds: float = SPIN_S) -> None:
    """Spins `seconds`, then warns in warn mode at its caller's line (torch: stacklevel 1 from a C function)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    if CUDA.mode == 1:
        warnings.warn(f"{DEBUG_MESSAGE} (Triggered internally at /c10/cuda/CUDAFunctions.h:120.)", UserWarning, stacklevel=2)


def quiet_op() -> None:
    """An op that does not synchronize."""


def witness(synchronized: Callable[[], None]) -> ContextManager[Any]:
    """What TorchBackend.sync_witness gives the census on CUDA, on this model."""
    return debug_warnings(torch, lambda frame, where: synchronized())
