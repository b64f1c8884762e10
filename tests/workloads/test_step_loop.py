"""The step form's timed loop (workloads.step_form): a wait after every k-th step, none after a remainder, and in
the loop nothing per step beyond the user's call — a hand loop's cost. A branch and a modulo per step cost 17 ns,
2-3% of a 0.65 µs numpy op (benchmarks/fidelity_backends.py), which the step's time then reported as its own."""

from __future__ import annotations

import sys
import weakref
from typing import Any

import pytest

import asyncbench
from asyncbench.backends import get_backend
from asyncbench.workloads.step_form import variant_name


def _prepared(steps: int, sync_every: tuple[int, ...], log: list[str]) -> Any:
    backend = get_backend("numpy")
    backend.barrier = lambda device: log.append("wait")  # type: ignore[method-assign]

    @asyncbench.step(sync_every=sync_every)  # the steps come in the params: (2, 4) is refused by a plan, the loop holds anyway
    def counted(backend: Any, device: str, params: Any) -> Any:
        return lambda: log.append("step") or len(log)

    prepared = counted.setup(backend, "cpu", {"steps": steps, "sync_every": list(sync_every)})
    log.clear()  # set-up's own wait
    return prepared


@pytest.mark.parametrize(
    ("steps", "every", "expected"),
    [
        (5, 0, ["step"] * 5),
        (5, 1, ["step", "wait"] * 5),
        (6, 3, ["step", "step", "step", "wait"] * 2),
        (7, 3, ["step", "step", "step", "wait"] * 2 + ["step"]),
        (2, 4, ["step", "step"]),
    ],
)
def test_a_wait_after_every_kth_step_and_none_after_a_remainder(steps: int, every: int, expected: list[str]) -> None:
    log: list[str] = []
    prepared = _prepared(steps, (every,), log)
    returned = prepared.variants[variant_name(every)]()
    assert log == expected
    assert returned == len(expected) - expected[::-1].index("step")  # the last step's result is returned


def _lines_run(function: Any) -> int:
    """How many line events `function`'s own frame (not the frames it calls) runs."""
    counted = 0
    code = function.__code__

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal counted
        if frame.f_code is not code:
            return None
        if event == "line":
            counted += 1
        return tracer

    sys.settrace(tracer)
    try:
        function()
    finally:
        sys.settrace(None)
    return counted


@pytest.mark.parametrize("every", [0, 4])
def test_the_timed_loop_runs_nothing_per_step_beyond_the_call(every: int) -> None:
    """Per step, the loop runs the lines a hand loop does — its `for` and the call — and nothing else (a check of
    the step's index was a third line every step); a wait every k steps adds its few lines once per k steps."""
    short, long = (_lines_run(_prepared(steps, (every,), []).variants[variant_name(every)]) for steps in (40, 80))
    per_step = (long - short) / 40  # the 40 more steps' lines
    if every == 0:
        assert per_step == 2
    else:  # the wait, the end of its k steps' loop and the next k's start: 3 lines per k steps at most
        assert per_step <= 2 + 3 / every


@pytest.mark.parametrize(("steps", "every"), [(5, 0), (6, 3), (7, 3), (4, 1)])
def test_no_steps_result_is_alive_when_the_next_step_starts(steps: int, every: int) -> None:
    """As timeit's and pyperf's loops: a result held until the next step returned kept two outputs alive at once,
    a working set past a core's cache for a 512² product; only the last is returned, for the harness's sync."""
    alive: weakref.WeakSet[Any] = weakref.WeakSet()
    seen: list[int] = []

    class Output:
        pass

    def run_step() -> Output:
        seen.append(len(alive))
        made = Output()
        alive.add(made)
        return made

    @asyncbench.step(sync_every=(every,), steps=steps)
    def tracked(backend: Any, device: str, params: Any) -> Any:
        return run_step

    prepared = tracked.setup(get_backend("numpy"), "cpu", {"steps": steps, "sync_every": [every]})
    seen.clear()
    returned = prepared.variants[variant_name(every)]()
    assert seen == [0] * steps
    assert isinstance(returned, Output)
    hold = prepared.perturbable(lambda: None)[variant_name(every)]  # the perturbed loops alike
    del returned
    seen.clear()
    assert isinstance(hold(), Output)
    assert seen == [0] * steps
