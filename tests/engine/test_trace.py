"""--trace: timelines per case and variant with the harness's ranges; and the clock bars."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from asyncbench.backends.torch_backend import TorchBackend
from asyncbench.engine import runner, trace
from asyncbench.engine.runner import summarize
from asyncbench.report import bars
from asyncbench.results.model import OK, Result, Samples
from asyncbench.spec import config
from asyncbench.workloads import BUILT_IN
from tests.support.cli import asyncbench
from tests.support.helpers import QUICK


def traced_run(backend: str, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "r.json"
    traced = ["--trace", str(tmp_path / "t"), "-o", str(out), *extra]
    done = asyncbench("run", "-w", "matmul", "-b", backend, "-d", "cpu", "--quick", "--no-progress", *traced)
    assert done.returncode == 0, done.stdout + done.stderr
    return done, json.loads(out.read_text())


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Callable[[str], tuple[Path, subprocess.CompletedProcess, dict]]:
    """A backend's traced run (its folder, the command's output and its results), made once a module: the tests of
    one backend's trace read the same run (JAX's, traced by its profiler, takes 15 s or more)."""
    runs: dict[str, tuple[Path, subprocess.CompletedProcess, dict]] = {}

    def of(backend: str) -> tuple[Path, subprocess.CompletedProcess, dict]:
        if backend not in runs:
            folder = tmp_path_factory.mktemp(f"traced-{backend}")
            runs[backend] = (folder, *traced_run(backend, folder))
        return runs[backend]

    return of


def chrome_trace(path: str) -> list[dict]:
    """The events of a Chrome-trace JSON file, each checked for what the format requires."""
    data = json.loads(Path(path).read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    for event in events:
        assert isinstance(event.get("name"), str), event
        assert event.get("ph"), event
        if event["ph"] == "X":
            assert isinstance(event["ts"], (int, float)), event
            assert isinstance(event["dur"], (int, float)), event
    return events


def harness(events: list[dict]) -> dict[str, dict]:
    return {e["name"]: e for e in events if e["name"] in trace.HARNESS_RANGES}


@pytest.mark.parametrize(
    "backend, detail",
    [
        ("torch", "torch's profiler"),
        pytest.param("jax", "jax's profiler", marks=pytest.mark.jax),
        pytest.param("mxnet", "harness ranges only: mxnet: the mxnet 1.9.1 wheel is built without its profiler", marks=pytest.mark.mxnet),
        ("numpy", "harness ranges only: numpy"),
    ],
)
def test_a_traced_run_writes_a_chrome_trace_per_variant_with_the_harness_ranges(backend, detail, traced):
    folder, done, report = traced(backend)
    (result,) = report["results"]
    assert result["trace_detail"].startswith(detail)
    (path,) = result["traces"].values()
    assert Path(path).parent == folder / "t"
    assert Path(path).name == f"{result['id']}.matmul.trace.json"
    ranges = harness(chrome_trace(path))
    assert set(ranges) == set(trace.HARNESS_RANGES)
    issue, sync = ranges[trace.ISSUE], ranges[trace.SYNC]
    assert issue["ts"] + issue["dur"] <= sync["ts"] + 1  # the sync starts when the variant returned
    assert "traced (" in done.stdout
    assert "ui.perfetto.dev" in done.stdout
    shown = asyncbench("show", str(folder / "r.json"))
    assert Path(path).name in shown.stdout


@pytest.mark.jax
def test_the_jax_trace_shows_the_device_working_after_the_frontend_returned(traced):
    _, _, report = traced("jax")
    (path,) = report["results"][0]["traces"].values()
    events = chrome_trace(path)
    issue = harness(events)[trace.ISSUE]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    xla = [e for e in events if e["ph"] == "X" and threads.get((e["pid"], e["tid"]), "").startswith("tf_XLA")]
    assert any(e["ts"] + e["dur"] > issue["ts"] + issue["dur"] for e in xla)  # the products ran after the loop returned


def test_a_directory_that_cannot_be_written_is_refused_before_running(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = asyncbench("run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--trace", str(blocker / "t"), timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "--trace" in done.stderr
    assert "cannot write there" in done.stderr


class _FailingProfiler:
    def __enter__(self):
        raise RuntimeError("profiler busy")

    def __exit__(self, *exc):
        return None


def test_a_failing_profiler_is_a_warning_and_the_measurement_stands(tmp_path, monkeypatch):
    monkeypatch.setattr(TorchBackend, "profiler", lambda self, device: _FailingProfiler())
    experiment = config.Experiment("m", "matmul", ("torch",), ("cpu",), {**BUILT_IN["matmul"].defaults(quick=True)}, QUICK)
    (result,) = runner.run(config.Config("t", "<t>", (experiment,)), runner.RunOptions(trace_dir=str(tmp_path)))
    assert result.status == OK
    assert result.metrics["done_s"] > 0
    assert any("the torch profiler failed (RuntimeError: profiler busy); harness ranges only" in w for w in result.warnings)
    assert set(harness(chrome_trace(result.traces["matmul"]))) == set(trace.HARNESS_RANGES)


def _result(issue_s: float, done_s: float, device_s: float | None = None) -> Result:
    samples = Samples(issue_s=(issue_s,) * 6, done_s=(done_s,) * 6, device_s=(device_s,) * 6 if device_s else None)
    return Result(
        id="t", experiment="t", workload="matmul", backend="jax", device="cpu", params={}, status=OK, variants=summarize({"async": samples})
    )


def test_the_bars_put_the_clocks_on_one_scale():
    lines = bars.clock_bars(_result(0.001, 0.004, 0.0035))
    assert [line.split()[1 if i == 0 else 0] for i, line in enumerate(lines)] == ["issue", "done", "device"]
    widths = [line.count("█") for line in lines]
    assert widths == [bars.WIDTH // 4, bars.WIDTH, 28]  # 1 ms, 4 ms and 3.5 ms of a 4 ms scale
    assert lines[0].startswith("async")
    assert lines[0].endswith("1.00 ms")


def test_no_bars_where_issue_equals_done():
    assert bars.clock_bars(_result(0.004, 0.004)) == []


def test_a_tiny_time_still_gets_a_sliver():
    assert bars.bar(1e-6, 1.0).strip() == "▏"


def test_a_trace_that_cannot_be_written_is_a_warning_and_the_measurement_stands(tmp_path, monkeypatch):
    from asyncbench.results import writing

    def full(path, content):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writing, "atomic_write", full)
    experiment = config.Experiment("m", "matmul", ("numpy",), ("cpu",), {**BUILT_IN["matmul"].defaults(quick=True)}, QUICK)
    (result,) = runner.run(config.Config("t", "<t>", (experiment,)), runner.RunOptions(trace_dir=str(tmp_path)))
    assert result.status == OK
    assert result.traces == {}
    assert "matmul: the trace could not be written (No space left on device)" in result.warnings
