"""Whose line waited: the user's frame of a blocking call, and the frame fallback for waits no hook covers.

The census (census.py) names each wait by the user's own source line: the first frame, walking out from the
blocking call, whose code is neither the framework's (its top-level modules, NumPy, the standard library) nor
asyncbench's harness (every asyncbench module but the built-in workloads: the runner, the timing loop, the session
of a run in the same process, and the step form's own loop around the user's step, whose `sync_every` waits are
the variant's design, not a line of the user's). A built-in workload's module (asyncbench/workloads/) is the
user's code here: conversion's `.item()` is attributed to its line in workloads/conversion.py.

The fallback (`SleepWatch`) sees the waits no backend hook covers, on any backend: while a census step runs, a
profile function times every call the user's frames make into code that is not the user's (a framework's
Python function or any C function) and reports one whose thread slept in it — it made a voluntary context
switch (it waited on a lock, a condition, a queue being drained) and spent at least FALLBACK_MIN_WAIT_S off
the CPU — with that time off the CPU as its time blocked (not the call's wall time: a call that also works,
such as masked indexing's Python, is blocked only while it waits). A call that contains a hooked wait is the
hook's, not counted again, and so is a call around one the fallback reported. It also sees a queue that is full:
JAX's CPU client holds some 30 computations in flight, and the next dispatch waits at the line that issued it.
What it cannot see: a call the profiler is not told of (a C method of an extension type other than CPython's own,
such as jaxlib's nanobind methods: hooks cover those), a wait that spins (a CUDA synchronize in spin mode burns
the CPU; hooks cover those), one shorter than its threshold, and any wait where the platform has no per-thread
context-switch count (not Linux: the fallback is off, and the census's coverage says so).
"""

from __future__ import annotations

import os
import resource
import sys
import sysconfig
import time
import types
from dataclasses import dataclass
from typing import Any, Callable

from asyncbench.backends.base import module_roots

#: the only asyncbench modules whose lines are the user's: the built-in workloads (asyncbench.workloads.*), but for
#: the workload machinery among them, which is harness like the rest of asyncbench (the step form's loop calls the
#: user's step and, between steps, waits every `sync_every`: a wait there is the variant's, not the user's line)
WORKLOADS = "asyncbench.workloads."
WORKLOAD_MACHINERY = frozenset(
    {"asyncbench.workloads.base", "asyncbench.workloads.plugins", "asyncbench.workloads.step_form", "asyncbench.workloads.step_reach"}
)
#: asyncbench's own folder: a module of it run as a process's main (a worker runs engine/isolation.py as
#: `__mp_main__`) is named by its file
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: asyncbench's modules the user's code calls (a built-in workload calls backend.to_host): a wait inside one is the
#: line that called it; every other asyncbench module drives the user's code (Frames.is_driver)
HELPERS = ("asyncbench.backends",)


def module_of(code: types.CodeType, name: str) -> str:
    """The module a frame runs in: its `__name__`, or for a main module (`__main__`, `__mp_main__`) in asyncbench's
    folder the name its file has there."""
    if name not in ("__main__", "__mp_main__") or not code.co_filename.startswith(_PACKAGE_FOLDER + os.sep):
        return name
    inside = os.path.relpath(code.co_filename, os.path.dirname(_PACKAGE_FOLDER))
    return os.path.splitext(inside)[0].replace(os.sep, ".")


def is_harness(module: str) -> bool:
    """Whether a module is asyncbench's own harness, never the user's line: everything of asyncbench's (the census's
    wrappers, the timing loop, the runner, the backends, a same-process run's session and CLI) but the built-in
    workloads' own modules."""
    if module != "asyncbench" and not module.startswith("asyncbench."):
        return False
    return not module.startswith(WORKLOADS) or module in WORKLOAD_MACHINERY


#: the standard library's folders: a wait reached through logging, functools or a context manager is the line that
#: called into them
_STDLIB = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")})
#: the modules that are never the user's code whatever the backend: NumPy's (numpy.asarray, array2string call into
#: a device array's conversions)
ALWAYS_FRAMEWORK = frozenset({"numpy"})

# The fallback's threshold, measured (benchmarks/syncs.py fallback: every call from a sync-free step's lines that
# slept, whatever its length, in 200-300 rounds of each of the corpus's sync-free steps, four runs on a 2-core machine
# shared with other test runs): JAX's slept in 0-10 of 300 rounds for at most 12 µs off the CPU; MXNet's in 1-4 of 300
# rounds per line, mostly under 150 µs, now and then for milliseconds (up to 8 ms, as the machine's other load came and
# went). 200 µs keeps out the short sleeps, even were they to recur at every step; the long ones never recurred in 2% of
# rounds, and the census's summary keeps a fallback point only where it waited in 3/4 of them (census.FALLBACK_RECURRENCE).
# The planted waits the fallback alone found at the cost's sizes blocked 0.6 ms (JAX) and 21 ms (MXNet) per step and more.
FALLBACK_MIN_WAIT_S = 2e-4


@dataclass(frozen=True)
class Where:
    """A user's line and, when the user's line called into the framework first, what it called there."""

    file: str
    line: int
    #: the function the user's line called, where that is not the hooked entry point itself ("jax.numpy.nonzero")
    entered: str | None = None


def _function_name(code: types.CodeType, module: str) -> str:
    return f"{module}.{getattr(code, 'co_qualname', code.co_name)}" if module else getattr(code, "co_qualname", code.co_name)


class Frames:
    """Which frames are the user's, cached by code object (the census asks for every hooked call)."""

    def __init__(self, framework_roots: frozenset[str]):
        """`framework_roots`: the framework's modules, each a top-level package ("jax") or a module with its
        submodules ("tests.support.stream_device")."""
        self.framework_roots = frozenset(framework_roots) | ALWAYS_FRAMEWORK
        self._user: dict[types.CodeType, bool] = {}
        self._driver: dict[types.CodeType, bool] = {}

    def is_device_value(self, value: Any) -> bool:
        """Whether `value` is one of the framework's own objects (a device array, not NumPy's): a call that hands one
        back dispatched work rather than read a result."""
        return not module_roots(value).isdisjoint(self.framework_roots - ALWAYS_FRAMEWORK)

    def is_driver(self, frame: types.FrameType) -> bool:
        """Whether the frame is asyncbench driving the user's code (the timing loop, the census's rounds, the step
        form's loop, the runner, a same-process run's session and CLI), not a helper the user's code called (the
        backends): a wait reached from it without a user's line between was asyncbench's own call, no line of the
        user's (the step form's sync_every barrier; above the driver, a same-process run's click would be next)."""
        code = frame.f_code
        known = self._driver.get(code)
        if known is None:
            module = module_of(code, frame.f_globals.get("__name__") or "")
            known = self._driver[code] = is_harness(module) and not module.startswith(HELPERS)
        return known

    def is_user(self, frame: types.FrameType) -> bool:
        code = frame.f_code
        known = self._user.get(code)
        if known is None:
            known = self._user[code] = self._judge(code, module_of(code, frame.f_globals.get("__name__") or ""))
        return known

    def _judge(self, code: types.CodeType, module: str) -> bool:
        if is_harness(module) or any(module == root or module.startswith(root + ".") for root in self.framework_roots):
            return False
        filename = code.co_filename
        return not (filename.startswith("<frozen ") or (filename.startswith(_STDLIB) and "site-packages" not in filename))

    def user_frame(self, frame: types.FrameType | None) -> Where | None:
        """The first user frame from `frame` outwards, with the framework function its line called (None: none)."""
        inner: types.FrameType | None = None
        while frame is not None:
            if self.is_user(frame):
                entered = None
                module = (inner.f_globals.get("__name__") or "") if inner is not None else ""
                if inner is not None and not module.startswith("asyncbench.measure"):
                    # asyncbench's own helper by its class and name ("JaxBackend.to_host"), a framework's in full
                    entered = _function_name(inner.f_code, "" if is_harness(module) else module)
                return Where(frame.f_code.co_filename, frame.f_lineno, entered)
            if self.is_driver(frame):
                return None
            inner, frame = frame, frame.f_back
        return None


def _c_name(function: Any) -> str:
    """A C function's name as a user knows it: `time.sleep`, `jaxlib._jax.ArrayImpl.block_until_ready`."""
    owner = getattr(function, "__self__", None)
    module = getattr(function, "__module__", None)
    if module is None and owner is not None and not isinstance(owner, types.ModuleType):
        module = type(owner).__module__
    elif module is None and isinstance(owner, types.ModuleType):
        module = owner.__name__
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", repr(function))
    return f"{module}.{name}" if module and module != "builtins" else str(name)


def _switches() -> int:
    """This thread's voluntary context switches so far (Linux: RUSAGE_THREAD): each is a sleep on a lock, a
    condition or I/O; a preemption is an involuntary one."""
    return resource.getrusage(RUSAGE_THREAD or resource.RUSAGE_SELF).ru_nvcsw


RUSAGE_THREAD: int | None = getattr(resource, "RUSAGE_THREAD", None)
#: whether this platform can tell a call that slept from one that was preempted (per-thread voluntary switches)
CAN_WATCH = RUSAGE_THREAD is not None

#: what the fallback reports: where, what was called, seconds blocked
#: a wait the fallback found: where, the call, the seconds, and whether the call handed back the framework's own
#: value (an op's dispatch that waited for room in the framework's queue: backpressure, not a sync)
Report = Callable[[Where, str, float, bool], None]


class SleepWatch:
    """The frame fallback, for one census step at a time: `start` sets the profile function on this thread, `stop`
    removes it. Each call a user frame makes into non-user code is timed; one that slept is passed to `report`.
    `hooked` is read before and after each call: a count of hooked waits recorded so far, so a call that contains
    one is left to the hook; `inside` says whether a hooked call is running now (what it calls is the hook's)."""

    def __init__(
        self,
        frames: Frames,
        report: Report,
        hooked: Callable[[], int],
        inside: Callable[[], bool],
        min_wait_s: float = FALLBACK_MIN_WAIT_S,
    ):
        self.frames, self.report, self.hooked, self.inside, self.min_wait_s = frames, report, hooked, inside, min_wait_s
        # open calls: (the callee's frame, or the C function, the user frame, start, cpu, voluntary switches, waits seen)
        self._open: list[tuple[Any, types.FrameType, float, float, int, int]] = []
        self._reported = 0  # waits this watch reported: a call around one (np.from_dlpack around __dlpack__) is not again
        self._synced: set[int] = set()  # depths of the open calls a witness said synchronized (`synchronized`)

    def start(self) -> None:
        if CAN_WATCH:
            self._open.clear()
            self._synced.clear()
            sys.setprofile(self._event)

    def stop(self) -> None:
        if CAN_WATCH:
            sys.setprofile(None)
            self._open.clear()

    def _event(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call":
            caller = frame.f_back
            if caller is not None and not self.frames.is_user(frame) and self.frames.is_user(caller):
                self._begin(frame, caller)
        elif event == "c_call":
            if self.frames.is_user(frame):
                self._begin(arg, frame)
        elif event in ("return", "c_return", "c_exception") and self._open and self._open[-1][0] is (frame if event == "return" else arg):
            self._end(event == "return", arg if event == "return" else None)

    def _begin(self, callee: Any, caller: types.FrameType) -> None:
        if self.inside():
            return
        self._open.append((callee, caller, time.perf_counter(), time.thread_time(), _switches(), self.hooked() + self._reported))

    def synchronized(self) -> None:
        """The framework's own witness (torch's sync debug mode, backends/torch_syncs.py) says the call running now
        synchronized: the innermost open call, past the warnings machinery it speaks through, is reported at its end
        with its wall time, slept or not (a CUDA wait spins: no sleep to see)."""
        for depth in range(len(self._open), 0, -1):
            if getattr(self._open[depth - 1][0], "f_globals", {}).get("__name__") not in ("warnings", __name__):
                self._synced.add(depth)
                return

    def _end(self, python: bool, returned: Any = None) -> None:
        now = time.perf_counter()
        synced = len(self._open) in self._synced
        self._synced.discard(len(self._open))
        callee, caller, started, cpu_before, switches_before, hooked_before = self._open.pop()
        off_cpu = (now - started) - (time.thread_time() - cpu_before)
        slept = off_cpu >= self.min_wait_s and _switches() != switches_before
        if not (synced or slept) or self.hooked() + self._reported != hooked_before:
            return
        self._reported += 1
        name = _function_name(callee.f_code, callee.f_globals.get("__name__") or "") if python else _c_name(callee)
        dispatched = returned is not None and self.frames.is_device_value(returned)
        self.report(Where(caller.f_code.co_filename, caller.f_lineno), name, now - started if synced else off_cpu, dispatched)
