"""--trace marks where the step waited: a range `sync FILE:LINE (KIND)` per wait, inside the step's issue range,
in the framework's timeline and in the harness's own; none for the case's sync after the step, none on numpy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asyncbench.backends import get_backend
from asyncbench.engine import trace

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _step():
    x = jnp.ones((32, 32))

    def step():
        y = x @ x
        y.sum().item()  # the wait to mark
        return y @ y

    return step


def _events(traced: trace.Traced, variant: str) -> list[dict]:
    data = json.loads(Path(traced.files[variant]).read_text())
    return [event for event in data["traceEvents"] if isinstance(event, dict)]


def _check(events: list[dict]) -> None:
    (issue,) = [e for e in events if e.get("name") == trace.ISSUE]
    marks = [e for e in events if e.get("cat") == trace.SYNC_CATEGORY]
    assert [e["name"] for e in marks] == [f"sync test_trace_syncs.py:{_LINE} (conversion)"]  # the barrier after: not the step's
    (mark,) = marks
    assert mark["args"]["call"] == "jax.Array.item"
    assert (mark["pid"], mark["tid"]) == (issue["pid"], issue["tid"])
    assert issue["ts"] <= mark["ts"] <= issue["ts"] + issue["dur"]
    assert mark["dur"] >= 0


_LINE = _step.__code__.co_firstlineno + 5


@pytest.mark.parametrize("profiled", [True, False])
def test_each_wait_of_the_step_is_a_range_in_its_issue_range(tmp_path, monkeypatch, profiled):
    backend = get_backend("jax")
    if not profiled:  # the harness's own timeline, as MXNet, NumPy and CuPy get
        monkeypatch.setattr(backend, "profiler", lambda device: None)
    traced = trace.record(backend, "cpu", "c[jax,cpu]", {"v": _step()}, lambda: backend.barrier("cpu"), str(tmp_path))
    assert not traced.warnings
    _check(_events(traced, "v"))


def test_a_synchronous_backend_has_no_marks(tmp_path):
    backend = get_backend("numpy")
    x = backend.namespace().ones((8, 8))
    traced = trace.record(backend, "cpu", "c[numpy,cpu]", {"v": lambda: float((x @ x).sum())}, lambda: None, str(tmp_path))
    assert not [e for e in _events(traced, "v") if e.get("cat") == trace.SYNC_CATEGORY]
