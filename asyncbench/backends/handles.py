"""What a backend hands to the rest of the tool: a device's status, a device timer, a sync hook (`run --syncs`), a
device delay (`run --bound`) and an event, each a small value or protocol a backend fills in its own framework's
terms (backends.base declares the methods that make them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol


@dataclass(frozen=True)
class DeviceStatus:
    """A device a backend can or cannot use, with a human description or reason."""

    backend: str
    device: str  # "cpu", "cuda:0", or "cuda" for "no CUDA device at all"
    available: bool
    detail: str  # device name when available, why not otherwise


class DeviceTimer(Protocol):
    """Times device work between two points of the host program with events."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def elapsed_s(self) -> float:
        """Seconds between start and stop on the device; call after a sync."""
        ...


@dataclass(frozen=True)
class SyncHook:
    """A framework entry point where the host may wait for the device (`run --syncs`): during census rounds it is
    wrapped so that each call is counted, timed and attributed to the user's line that made it."""

    #: the class or module that holds the entry point (torch.Tensor, jax.Array's class, mxnet.nd.NDArray, a module)
    owner: Any
    #: its attribute name there ("item", "__float__", "asnumpy", "synchronize")
    attribute: str
    #: the SyncKind's word ("conversion", "print", "explicit wait", "transfer", "control flow")
    kind: str
    #: how it is named to the user ("jax.Array.item")
    call: str
    #: given the call's arguments, whether this call waits (None: every call does): numpy.asarray is JAX's
    #: conversion only when it is given a jax.Array; a call it rejects passes through uncounted
    when: Callable[..., bool] | None = None


class DeviceDelay(Protocol):
    """Device work of a chosen length, queued where the step's work runs (`run --bound`'s device delays,
    measure.perturbation): made by `Backend.device_delay`."""

    #: whether `measured_s` reads each delay's length in place (events); False: `alone_s` each round instead
    in_place: bool

    def before_step(self, seconds: float) -> Callable[[], None]:
        """A callable that queues about `seconds` of device work on the queue or stream the step's work goes to
        next (the current stream; a CPU backend's one queue), the host not waiting: called before each step call."""
        ...

    def measured_s(self) -> float | None:
        """After the sample's sync: the mean length of the delays queued since the last call, measured in place
        (CUDA events around each), and forgotten; None where delays are not measured in place (`alone_s`)."""
        ...

    def alone_s(self, seconds: float) -> float | None:
        """The length of one delay of `seconds`, timed apart from the step (host clock): what a backend that cannot
        measure its delays in place reads, once per round and level. It is what the delay adds to a busy queue, as in
        place before the step's work, not what one op costs from an idle device (its wake-up too). None where its
        length could not be read this time (a reading at ~0 s is the machine's noise, not a delay that ran)."""
        ...


@dataclass(frozen=True)
class ResultWait:
    """A sample's cheaper end, where a backend has one (`Backend.result_wait`, measure.timing.take_sample): wait for
    the result the variant returned, read the clock, then prove without waiting that nothing issued before is still
    to run; only where that proof fails does the sample end at the device-wide sync, as every sample did before.
    A hand loop ends on its last result (JAX's `block_until_ready`); a device-wide sync that has to issue work of its
    own (JAX has no other) put that issue in every sample: 4-9% of a sample of 20 tiny JAX steps."""

    #: waits for the variant's returned result; False where it holds nothing of the backend's to wait on
    wait: Callable[[Any], bool]
    #: called after the clock: True where everything issued on the device before is already done (nothing waited for)
    settled: Callable[[], bool]
    #: a result already done: what the harness's no-op probe returns, so that it pays what a sample's end pays
    done: Any


class Event(Protocol):
    def synchronize(self) -> None: ...


class _Done:
    """The event of a synchronous backend: whatever it marks has already happened."""

    def synchronize(self) -> None:
        return None


DONE = _Done()
