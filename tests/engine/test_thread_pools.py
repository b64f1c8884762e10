"""CPU thread pools (engine.thread_pools): a free pool on shared cores is warned about with its fix, `run --threads N`
pins every pool in the worker and records it, and backends compared on the CPU say their pools."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from asyncbench.engine import environment, isolation, sanity, thread_pools
from asyncbench.engine.case_workers import ImportFrameworks
from asyncbench.results.model import Result
from asyncbench.results.reference import Reference
from asyncbench.workloads import BUILT_IN
from tests.support.cli import asyncbench
from tests.support.helpers import ok_result, run_workload

MATMUL = BUILT_IN["matmul"]
#: what the OS said over a row's sampling beside a neighbour on 2 cores (host.pressure's comment)
BESIDE_ONE = {"cpu_pressure": 0.5, "others_cpu": 0.45}
ALONE = {"cpu_pressure": 0.03, "others_cpu": 0.02}
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _row(backend: str = "torch", device: str = "cpu", reading: dict[str, float] | None = BESIDE_ONE, experiment: str = "m") -> Result:
    reference = Reference("float32 256×256 product ×4", (1e-3,) * 40, **reading) if reading is not None else None
    return dataclasses.replace(ok_result("x"), backend=backend, device=device, experiment=experiment, reference=reference)


def _pools(variables: dict[str, str], *backends: str, cores: int = 2) -> thread_pools.Pools:
    return thread_pools.Pools(variables, cores, {"m": frozenset(backends)})


def _pool_warnings(result: Result, pools: thread_pools.Pools) -> list[str]:
    return [w for w in sanity.warnings_of(result, MATMUL, {}, pools) if "thread pool" in w]


def test_a_free_pool_on_shared_cores_is_warned_with_its_fix() -> None:
    pools = thread_pools.Pools.of_run([("m", "torch", "cpu")], environ={})
    (warning,) = _pool_warnings(_row(), pools)
    assert "thread pool free on shared cores" in warning
    assert "OMP_NUM_THREADS, MKL_NUM_THREADS unset" in warning
    assert "waited for a CPU 50%" in warning
    assert "`run --threads 1`" in warning
    assert "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PJRT_NPROC=1" in warning


@pytest.mark.parametrize(
    ("backend", "variables", "reading", "device"),
    [
        ("torch", {"OMP_NUM_THREADS": "1"}, BESIDE_ONE, "cpu"),  # pinned by the user
        ("torch", thread_pools.pinning_variables(2), BESIDE_ONE, "cpu"),  # pinned by --threads, to any count
        ("numpy", {"OMP_NUM_THREADS": "1"}, BESIDE_ONE, "cpu"),  # OpenBLAS reads OMP_NUM_THREADS too
        ("torch", {}, ALONE, "cpu"),  # a free pool alone on its cores: what the user's code does
        ("torch", {}, {"cpu_pressure": 0.6, "others_cpu": 0.02}, "cpu"),  # only the case's own threads waited
        ("torch", {}, {"cpu_pressure": 0.26, "others_cpu": 0.0}, "cpu"),  # `--threads 4` on 2 cores, nothing else
        ("torch", {}, None, "cpu"),  # no reading at all: nothing to say
        ("torch", {}, BESIDE_ONE, "cuda:0"),  # a GPU row's pool is not what it measures
        ("mxnet", {}, BESIDE_ONE, "cpu"),  # MXNet's engine is sized by asyncbench already
    ],
)
def test_no_pool_warning_where_pinned_quiet_or_not_a_pooled_cpu_row(
    backend: str, variables: dict[str, str], reading: dict[str, float] | None, device: str
) -> None:
    assert _pool_warnings(_row(backend, device, reading), _pools(variables, backend)) == []


def _neighbour_warnings(result: Result, pools: thread_pools.Pools) -> list[str]:
    return [w for w in sanity.warnings_of(result, MATMUL, {}, pools) if "a neighbour shared the cores" in w]


@pytest.mark.parametrize(
    ("backend", "variables", "device"),
    [("torch", thread_pools.pinning_variables(1), "cpu"), ("torch", {}, "cuda:0"), ("mxnet", {}, "cpu")],
)
def test_a_row_beside_a_neighbour_says_so_though_its_pool_is_pinned(backend: str, variables: dict[str, str], device: str) -> None:
    """A pinned run at 96-100% CPU pressure printed a tight bound reading that missed a planted truth, with no word of
    the neighbour: every row that sampled beside one says so (once: a free pool's own warning already does)."""
    (warning,) = _neighbour_warnings(_row(backend, device), _pools(variables, backend))
    assert "some task waited for a CPU 50%" in warning
    assert "gives no verdict against it" in warning
    assert _neighbour_warnings(_row(backend, device, ALONE), _pools(variables, backend)) == []
    free = _row("torch", "cpu")
    assert _neighbour_warnings(free, _pools({}, "torch")) == []
    assert _pool_warnings(free, _pools({}, "torch")) != []


def test_jax_is_not_pinned_by_the_openmp_variables() -> None:
    """XLA reads PJRT_NPROC only: the CI recipe's OMP_NUM_THREADS=1 leaves JAX's pool free."""
    (warning,) = _pool_warnings(_row("jax"), _pools({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}, "jax"))
    assert "jax free (PJRT_NPROC unset" in warning


def test_backends_compared_on_the_cpu_say_their_pools() -> None:
    free = _pools({}, "torch", "jax")
    assert "threads: torch, jax each free" in str(thread_pools.noted(_row(reading=ALONE), free).note)
    assert _pool_warnings(_row(reading=ALONE), free) == []

    pinned = _pools(thread_pools.pinning_variables(1), "torch", "jax")
    assert "threads: torch, jax each pinned to 1 (--threads 1)" in str(thread_pools.noted(_row(reading=ALONE), pinned).note)
    assert _pool_warnings(_row(reading=ALONE), pinned) == []

    # the CI recipe's variables pin torch and leave JAX free: their rows compare two pools
    recipe = _pools({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}, "torch", "jax")
    (warning,) = _pool_warnings(_row(reading=ALONE), recipe)
    assert "compared with jax on the CPU with thread pools of different sizes" in warning
    assert "torch OMP_NUM_THREADS=1" in warning
    assert "jax free" in warning
    assert "`run --threads 1`" in warning
    assert thread_pools.noted(_row(reading=ALONE), recipe).note is None  # the warning says it, once

    alone = _pools({}, "torch")  # one backend on the CPU: nothing compared
    assert thread_pools.noted(_row(reading=ALONE), alone).note is None


def test_a_run_warns_of_a_free_pool_on_shared_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner checks each CPU row's pool against what the OS said over its sampling (here: a neighbour, always)."""
    for name in thread_pools.pinning_variables(1):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(thread_pools, "shared", lambda pressure, others: "a neighbour took a core")
    result = run_workload("matmul", "numpy", "cpu")
    assert [w for w in result.warnings if "thread pool free on shared cores: numpy free" in w] != []


def test_the_environment_records_every_pool_variable_and_the_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in thread_pools.pinning_variables(3).items():
        monkeypatch.setenv(name, value)
    recorded = environment.capture(("numpy",))["thread_variables"]
    assert recorded == thread_pools.pinning_variables(3)


def report_threads(call: ImportFrameworks, on_progress: Any = None) -> tuple[int, dict[str, str | None]]:
    """A worker's target: its first call (the frameworks' imports), then torch's pool size and the pool variables."""
    call()
    import torch

    return torch.get_num_threads(), {name: os.environ.get(name) for name in thread_pools.pinning_variables(1)}


def report_interop(call: ImportFrameworks, on_progress: Any = None) -> tuple[int, int]:
    """A worker's target: its first call (the frameworks' imports, pinned), then torch's inter-op pool, and again
    after pinning once more (torch refuses a second setting: the pin must not raise)."""
    call()
    import torch

    first = torch.get_num_interop_threads()
    thread_pools.apply(["torch"])
    return first, torch.get_num_interop_threads()


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_a_pinned_worker_runs_torch_on_the_pinned_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count --threads set wins over a pool variable the user left (torch.set_num_threads after the imports)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setenv(thread_pools.PINNED_VARIABLE, "1")
    worker = isolation.Worker(report_threads)
    try:
        threads, seen = worker.call((ImportFrameworks(("torch",)),), timeout_s=120)
    finally:
        worker.close()
    assert threads == 1
    assert seen[thread_pools.PINNED_VARIABLE] == "1"


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_a_pinned_worker_runs_torch_s_inter_op_pool_on_the_pinned_count_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--threads 1` said it pins every pool while torch's inter-op pool kept one thread per core."""
    monkeypatch.setenv(thread_pools.PINNED_VARIABLE, "1")
    worker = isolation.Worker(report_interop)
    try:
        assert worker.call((ImportFrameworks(("torch",)),), timeout_s=120) == (1, 1)
    finally:
        worker.close()


def test_threads_above_the_usable_cores_are_warned_in_one_line() -> None:
    said = thread_pools.oversubscribed(64, cores=2)
    assert said is not None
    assert "\n" not in said
    assert "--threads 64 is more than the 2 usable core(s)" in said
    assert thread_pools.oversubscribed(2, cores=2) is None


def test_run_threads_above_the_cores_warns_on_stderr(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    ran = asyncbench(
        "run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--quick", "--no-progress", "--threads", str(cores + 1), cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    warned = [line for line in ran.stderr.splitlines() if f"--threads {cores + 1} is more than" in line]
    assert len(warned) == 1
    assert warned[0].startswith("asyncbench: warning: ")


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_run_threads_pins_every_pool_and_records_it(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    pinned = ["run", "-w", "matmul", "-b", "torch", "-b", "numpy", "-d", "cpu", "--quick", "--threads", "1", "--no-progress"]
    ran = asyncbench(*pinned, "-o", str(out), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(out.read_text())
    assert {k: v for k, v in report["environment"]["thread_variables"].items() if k in thread_pools.pinning_variables(1)} == (
        thread_pools.pinning_variables(1)
    )
    assert report["environment"]["frameworks"]["torch"]["threads"] == 1
    assert report["environment"]["frameworks"]["torch"]["interop_threads"] == 1  # both of torch's pools
    notes = [row["note"] for row in report["results"]]
    assert all("each pinned to 1 (--threads 1)" in str(note) for note in notes), notes
    assert not any("thread pool" in warning for row in report["results"] for warning in row.get("warnings", []))


def test_threads_must_be_a_positive_count(tmp_path: Path) -> None:
    ran = asyncbench("run", "-w", "matmul", "-b", "numpy", "--threads", "0", cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr.strip() == "asyncbench: error: run: invalid value for '--threads': 0 is not in the range x>=1 (asyncbench run --help)"


def test_a_rows_warning_reads_a_neighbour_by_the_rule_compare_and_the_runs_line_read() -> None:
    """The row's warning asked for a wait of 20% and other processes at 10%, the run's line and `compare` for a wait
    of 15% alone: `--threads 4` on 2 cores alone (26%, others 0%) had no row warning but a run line and every compared
    row INCONCLUSIVE. One rule now (verdicts.machine.neighbour), wherever the pressure was read."""
    from asyncbench.verdicts import machine

    for pressure in (0.0, 0.1, machine.BUSY, 0.18, 0.26, 0.9):
        for others in (None, 0.0, 0.05, machine.OTHERS, 0.3):
            said = thread_pools.shared(pressure, others)
            assert (said is not None) == machine.neighbour(pressure, others), (pressure, others, said)
