"""benchmarks/fidelity_backends.py's figures from its rounds: paired ratios (round i of asyncbench with round i of the
reference), their median's interval, and the goal's verdict worded only as far as the interval carries it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity_backends.py"


@pytest.fixture(scope="module")
def bench() -> Any:
    spec = importlib.util.spec_from_file_location("fidelity_backends_under_test", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("interval", "said"),
    [
        ((0.985, 1.015), "holds"),
        ((0.98, 1.02), "holds"),
        ((1.021, 1.05), "misses"),
        ((0.90, 0.979), "misses"),
        ((0.99, 1.03), "not shown"),
        ((0.97, 1.03), "not shown"),
        (None, "no interval"),
    ],
)
def test_the_goal_is_said_only_as_far_as_the_interval_carries_it(bench: Any, interval: Any, said: str) -> None:
    assert bench.verdict(interval) == said


def test_a_row_pairs_the_rounds_and_takes_the_median_of_their_ratios(bench: Any) -> None:
    """Both tools slow down together in rounds 4-6 (a neighbour): each round's ratio is 1.01, whatever the medians
    of the two series, and so is the interval; the harness's cost per sample is the difference × the steps."""
    step = next(s for s in bench.STEPS if s.name == "tiny")
    reference = [1e-6, 1e-6, 1e-6, 3e-6, 3e-6, 3e-6, 1e-6, 1e-6]
    taken = {"asyncbench": [r * 1.01 for r in reference], "reference": reference, "harness_sync": [2e-6] * 8}
    row = bench.row_of("numpy", step, taken)
    assert row.ratio == pytest.approx(1.01)
    assert row.ratio_interval == pytest.approx((1.01, 1.01))
    assert row.verdict == "holds"
    assert row.overhead_per_sample_s == pytest.approx(0.01e-6 * step.steps)
    assert row.reference_s == pytest.approx(1e-6)
    assert row.harness_sync_s == pytest.approx(2e-6)


def test_too_few_rounds_give_no_interval_and_no_verdict(bench: Any) -> None:
    step = bench.STEPS[0]
    row = bench.row_of("jax", step, {"asyncbench": [1.5e-6, 1.6e-6], "reference": [1e-6, 1e-6]})
    assert row.ratio_interval is None
    assert row.verdict == "no interval"
    assert "no interval" in bench.table([row])


def test_rounds_that_do_not_pair_are_refused(bench: Any) -> None:
    with pytest.raises(ValueError, match="3 asyncbench rounds against 2"):
        bench.row_of("torch", bench.STEPS[1], {"asyncbench": [1.0, 1.0, 1.0], "reference": [1.0, 1.0]})


def test_no_verdict_where_other_processes_used_the_cpu(bench: Any) -> None:
    """Beside a neighbour the figures are the machine's: a ratio far from 1 is not called a miss of the harness."""
    taken = {"asyncbench": [0.6e-6] * 8, "reference": [1e-6] * 8}
    assert bench.row_of("numpy", bench.STEPS[0], taken, others_cpu=0.05).verdict == "misses"
    assert bench.row_of("numpy", bench.STEPS[0], taken, others_cpu=0.68).verdict == "not judged: others used 68% of the CPU"


def test_affinity_takes_pyperfs_forms_and_reaches_each_backends_process(bench: Any, tmp_path: Any) -> None:
    assert bench.cpus_of("0") == {0}
    assert bench.cpus_of("0,2") == {0, 2}
    assert bench.cpus_of("1-3") == {1, 2, 3}
    with pytest.raises(ValueError):
        bench.cpus_of("first")
    command, _ = bench.child_command("numpy", 3, 0.1, tmp_path / "out.json", "0")
    assert command[command.index("--affinity") + 1] == "0"
    assert "--affinity" not in bench.child_command("numpy", 3, 0.1, tmp_path / "out.json")[0]
