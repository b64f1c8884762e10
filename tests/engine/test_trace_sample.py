"""--trace's traced call is taken as a timed sample is (after a warm-up under the profiler, the collector off), and
where its clocks lie outside every timed sample's the row's trace note says so in numbers."""

from __future__ import annotations

import contextlib
import gc
import json
import time
from pathlib import Path
from typing import Any, Iterator

from asyncbench.backends import get_backend
from asyncbench.backends.numpy_backend import NumpyBackend
from asyncbench.engine import trace, trace_sample
from asyncbench.results.model import Samples

#: what the fake profiler's start costs the first range opened under it (JAX's: 2.9-12 ms on the 2-core machine)
START_COST_S = 0.05


class _ColdProfiler:
    """A profiler whose first range pays for its start, as jax.profiler's first call did; its trace: the ranges."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.cold = False

    def __enter__(self) -> _ColdProfiler:
        self.cold = True
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    @contextlib.contextmanager
    def annotate(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        if self.cold:
            self.cold = False
            time.sleep(START_COST_S)
        yield
        event = {"name": name, "ph": "X", "pid": 1, "tid": 1, "ts": started * 1e6, "dur": (time.perf_counter() - started) * 1e6}
        self.events.append(event)

    def trace(self) -> dict[str, Any]:
        return {"traceEvents": self.events}


def _ranges(traced: trace.Traced) -> dict[str, dict[str, Any]]:
    events = json.loads(Path(traced.files["v"]).read_text())["traceEvents"]
    return {e["name"]: e for e in events if e.get("ph") == "X"}


def test_the_traced_call_comes_after_a_warm_up_under_the_profiler(tmp_path, monkeypatch):
    monkeypatch.setattr(NumpyBackend, "profiler", lambda self, device: _ColdProfiler())
    traced = trace.record(get_backend("numpy"), "cpu", "c[numpy,cpu]", {"v": lambda: None}, lambda: None, str(tmp_path))
    ranges = _ranges(traced)
    issue = ranges[trace.ISSUE]
    assert issue["dur"] < START_COST_S * 1e6 / 2  # the profiler's start is not in the traced call's issue range ...
    warm = ranges["asyncbench: warm-up"]
    assert warm["ts"] + warm["dur"] <= issue["ts"]  # ... but in the warm-up's, before it
    assert warm["dur"] >= START_COST_S * 1e6


def test_the_traced_call_runs_with_the_collector_off_as_the_timed_samples_do(tmp_path):
    seen: list[bool] = []
    assert gc.isenabled()
    trace.record(get_backend("numpy"), "cpu", "c[numpy,cpu]", {"v": lambda: seen.append(gc.isenabled())}, lambda: None, str(tmp_path))
    assert seen == [False]
    assert gc.isenabled()  # and back on after it


def test_a_traced_call_outside_every_timed_sample_is_said_in_numbers(tmp_path):
    timed = Samples(issue_s=(0.001, 0.0011, 0.0012), done_s=(0.002, 0.0021, 0.0022))
    traced = trace.record(
        get_backend("numpy"), "cpu", "c[numpy,cpu]", {"v": lambda: time.sleep(0.02)}, lambda: None, str(tmp_path), timed={"v": timed}
    )
    assert traced.detail.startswith("harness ranges only: numpy")
    assert "; the traced sample's issue took 2" in traced.detail
    assert "the timed median 1.10 ms (its 3 samples 1.00 ms–1.20 ms), its done took 2" in traced.detail
    assert "the timed median 2.10 ms (its 3 samples 2.00 ms–2.20 ms): the profiler's own cost" in traced.detail


def test_a_traced_call_within_the_timed_samples_adds_nothing():
    timed = Samples(issue_s=(0.001, 0.003), done_s=(0.002, 0.004))
    assert trace_sample.difference(0.002, 0.003, timed) is None
    assert trace_sample.difference(0.002, 0.003, None) is None
    late = trace_sample.difference(0.002, 0.005, timed)
    assert late is not None
    assert late.startswith("the traced sample's done took 5.00 ms, the timed median 3.00 ms")


def test_with_several_variants_the_note_names_each_that_differs():
    timed = {"a": Samples((0.001,), (0.002,)), "b": Samples((0.001,), (0.002,))}
    said = trace_sample.differences({"a": (0.001, 0.002), "b": (0.004, 0.002)}, timed)
    assert said is not None
    assert said.startswith("b: the traced sample's issue took 4.00 ms")
    assert "a:" not in said
