"""`ab --gate-time` and `--gate-time-max`: a target and a cap, refused in one line where they cannot hold."""

from __future__ import annotations

import json
import re
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from asyncbench.errors import InputError
from asyncbench.session import requests as ab
from tests.support.cli import asyncbench


def test_a_cap_shorter_than_the_target_is_refused_in_one_line_before_anything_runs(tmp_path: Path):
    done = asyncbench(
        "ab",
        "-w",
        "matmul",
        "-b",
        "numpy",
        "--base-env",
        "X=1",
        "--gate-time",
        "2m",
        "--gate-time-max",
        "90s",
        "-o",
        "ab.json",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--gate-time-max 90.0 s is shorter than --gate-time 120 s" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "ab.json").exists()


def test_a_cap_that_is_no_duration_is_named_as_the_cap(tmp_path: Path):
    done = asyncbench("ab", "-w", "matmul", "-b", "numpy", "--base-env", "X=1", "--gate-time-max", "soon", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--gate-time-max 'soon': expected a duration such as 120, 90s or 2m" in done.stderr


def test_the_cap_is_three_times_the_target_unless_given():
    assert ab.ABRequest().gate_cap_s == 3 * ab.DEFAULT_GATE_TIME_S
    assert ab.ABRequest(gate_time_s=60.0).gate_cap_s == 180.0
    assert ab.ABRequest(gate_time_s=60.0, gate_time_max_s=60.0).gate_cap_s == 60.0  # the gate of before: no cap
    with pytest.raises(InputError, match="the cap is the most a gate takes"):
        ab.ABRequest(gate_time_s=60.0, gate_time_max_s=30.0)


def test_a_planted_slowdown_stops_at_its_look_with_a_cap_and_a_gate_without_one_says_it_waited(tmp_path: Path):
    """Real numpy sides, the head doing twice the work. With a cap the looks have room and the case stops at its
    first; with --gate-time-max equal to a short --gate-time there is room for one look, when the time runs out,
    and `ab` says the decided case waited for it."""
    from tests.support.ab_repo import committed_repo

    committed_repo(tmp_path)
    (tmp_path / "mypkg.py").write_text("REPEAT = 40\n")

    def gate(*times: str) -> tuple[CompletedProcess[str], list[str]]:
        done = asyncbench("ab", "gate.yaml", "--base", "HEAD", "--no-progress", "-o", "ab.json", *times, cwd=tmp_path)
        assert done.returncode == 1, done.stdout + done.stderr
        (case,) = json.loads((tmp_path / "ab.json").read_text())["cases"]
        return done, [r["label"] for r in case["ratios"]]

    capped, labels = gate("--gate-time", "10s", "--gate-time-max", "3m")  # room for looks on a loaded machine too
    assert labels == ["SLOWER"]
    assert "only look" not in capped.stdout + capped.stderr
    fixed, labels = gate("--gate-time", "10s", "--gate-time-max", "10s")
    if labels == ["SLOWER"]:  # decided at its one look (a loaded machine may leave it short of one)
        assert "decided, but only at its one look, when the time ran out" in fixed.stdout
        # a larger cap is named only with the look it would plan before the blocks this one took
        advice = r"--gate-time-max of about \d+s \(\d+ blocks\) plans a look at block \d+, where a verdict this clear stops"
        assert re.search(rf"{advice}|no cap would stop it sooner", fixed.stdout)
