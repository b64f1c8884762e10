"""docs/extending.md's three examples work as the page says: a backend, a workload and an output format,
each registered with one line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from asyncbench import backends
from asyncbench.engine import runner
from asyncbench.results.model import Case, Settings, Status
from asyncbench.workloads import BUILT_IN
from tests.support.helpers import quick_numpy_results

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "extending"
QUICK = Settings(warmup=1, min_samples=6, max_samples=12, max_time_s=1.0, max_rel_noise=0.05)


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"extending_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _case(workload: str, backend: str, params: dict) -> Case:
    return Case(
        id=f"{workload}[{backend},cpu]",
        experiment=workload,
        workload=workload,
        backend=backend,
        device="cpu",
        params=params,
        settings=QUICK,
    )


def test_the_minimal_backend_runs_a_built_in_workload_once_registered(monkeypatch):
    minimal = _example("minimal_backend")
    monkeypatch.setitem(backends.BACKENDS, "minimal", minimal.MinimalBackend)  # the one registry line
    matmul = BUILT_IN["matmul"]
    result = runner.run_case(_case("matmul", "minimal", matmul.defaults(quick=True)), matmul, backends.get_backend("minimal"))
    assert result.status == Status.OK, result.reason
    assert result.asynchronous is False  # no `is_asynchronous` override: ops finish before they return
    assert result.metrics["gflops"] > 0


def test_the_minimal_workload_measures_and_reads_its_result():
    axpy = _example("minimal_workload").Axpy()
    result = axpy.describe(runner.run_case(_case("axpy", "numpy", axpy.defaults(quick=True)), axpy, backends.get_backend("numpy")))
    assert result.status == Status.OK, result.reason
    assert set(result.variants) == {"each", "once"}
    once = result.variants["once"].done_s.median
    assert result.metrics["op_s"] == pytest.approx(once / 20)  # the median over rounds of once / n is the median of once, / n
    assert result.metric_info["speedup"].unit == "x"
    assert result.reading.startswith(("waiting once is", "no difference shown"))


def test_the_tsv_writer_is_one_registry_line_away_from_run_and_show(tmp_path):
    """Registered before the CLI is imported (as a line in writers.py would be), the format appears in both places."""
    results = quick_numpy_results(tmp_path / "r.json")
    script = f"""
import sys
from asyncbench.report.writers import WRITERS, Writer
sys.path.insert(0, {str(EXAMPLES)!r})  # where the example lives; in the package it would be asyncbench.report.tsv
WRITERS["tsv"] = Writer("tsv", "--tsv", "Also write median done times as tab-separated values.", "tsv_writer:tsv")
from asyncbench.cli import main
main(sys.argv[1:])
"""
    shown = subprocess.run(
        [sys.executable, "-c", script, "show", str(results), "--format", "tsv"], capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    header, row = shown.stdout.splitlines()
    assert header == "id\tvariant\tdone_s"
    assert row.startswith("matmul[numpy,cpu")
    assert float(row.split("\t")[2]) > 0
    helped = subprocess.run([sys.executable, "-c", script, "run", "--help"], capture_output=True, text=True, timeout=120)
    assert "--tsv FILE" in helped.stdout
