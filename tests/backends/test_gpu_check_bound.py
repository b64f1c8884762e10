"""benchmarks/gpu_checks/bounds.py (`run --bound`'s GPU check) without a GPU: its judgements, on figures made up to
sit on each side of their lines, and the check skipping with its reason (its measurements need a lent GPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.backends.test_gpu_check_steps import SCRIPT, _script


@pytest.fixture(scope="module")
def checks() -> Any:
    return _script().gpu_checks().bounds


def test_a_delay_agrees_where_its_events_match_what_was_asked_and_its_own_events(checks: Any) -> None:
    assert checks.delay_row(1e-3, 1.04e-3, 1.035e-3)["verdict"] == checks.PASS
    assert checks.delay_row(1e-3, 1.04e-3, 1.035e-3)["events_over_asked"] == pytest.approx(1.04)
    assert checks.delay_row(1e-3, 1.2e-3, 1.2e-3)["verdict"] == checks.FAIL  # the calibration is off by 20%
    assert checks.delay_row(1e-3, 1.0e-3, 0.9e-3)["verdict"] == checks.FAIL  # its own events read 10% short
    assert checks.delay_row(50e-6, 50e-6, 54e-6)["verdict"] == checks.PASS  # within the 5 µs floor of a short one


def test_a_slack_passes_where_its_interval_holds_the_truth_and_is_narrow_fails_where_it_misses(checks: Any) -> None:
    step = 1e-3
    assert checks.judge((0.68e-3, 0.72e-3), 0.70e-3, step) == checks.PASS
    assert checks.judge((0.60e-3, 0.64e-3), 0.70e-3, step) == checks.FAIL  # misses by 6% of the step, beyond 5%
    assert checks.judge((0.62e-3, 0.66e-3), 0.70e-3, step) == checks.PASS  # misses by 4%: within the tolerance
    assert checks.judge((0.2e-3, 0.9e-3), 0.70e-3, step) == checks.INCONCLUSIVE  # holds it only by being wide
    assert checks.judge(None, 0.70e-3, step) == checks.INCONCLUSIVE


def test_a_graph_is_read_against_the_ceilings_floor_and_one_faster_than_it_is_flagged(checks: Any) -> None:
    reached = checks.graph_reading(1.0e-3, 2.2e-3, 1.0e-3, (0.98e-3, 1.03e-3))
    assert reached["verdict"] == checks.PASS
    assert reached["reached_of_ceiling"] == pytest.approx(1.0)
    assert not reached["faster_than_floor"]
    faster = checks.graph_reading(0.7e-3, 2.2e-3, 1.0e-3, (0.98e-3, 1.03e-3))
    assert faster["verdict"] == checks.FAIL
    assert faster["faster_than_floor"]
    slower = checks.graph_reading(1.5e-3, 2.2e-3, 1.0e-3, (0.98e-3, 1.03e-3))
    assert slower["reached_of_ceiling"] == pytest.approx(2 / 3)
    assert not slower["faster_than_floor"]


def test_the_check_is_verified_only_where_every_part_passed(checks: Any) -> None:
    assert checks.verified([checks.PASS, checks.PASS]) is True
    assert checks.verified([checks.PASS, checks.INCONCLUSIVE]) is None
    assert checks.verified([checks.INCONCLUSIVE, checks.FAIL]) is False
    assert checks.verified([]) is None


def test_the_check_asks_the_issues_delays_and_a_chain_the_host_cost_makes_host_bound(checks: Any) -> None:
    assert checks.DELAYS_S[0] == pytest.approx(50e-6)
    assert checks.DELAYS_S[-1] == pytest.approx(20e-3)
    # with the host's cost the host's time a op is above the device's: the chain is host-bound by construction
    assert 1.5 * checks.CHAIN["device_s"] < checks.HOST_COST_S


def test_the_bound_check_says_skipped_and_exits_0_without_a_gpu(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.version.cuda is not None and torch.cuda.is_available():
        pytest.skip("a GPU is here: the check would run")
    answer = tmp_path / "bound.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "bound", "--check-to", str(answer)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "'skipped': 'no CUDA device for torch" in done.stdout
