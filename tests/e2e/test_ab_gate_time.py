"""`ab --gate-time` and `--gate-time-max`: a target and a cap, refused in one line where they cannot hold."""

from __future__ import annotations

import json
import re
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from asyncbench.errors import InputError
from asyncbench.session import requests as ab
from tests.support.cli import asyncbench, in_process


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
    assert "--gate-time-max 'soon': expected a duration such as 90s, 2m or 1h" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["ab", "-w", "matmul", "-b", "numpy", "--base-env", "X=1", "--gate-time", "30"],
        ["ab", "-w", "matmul", "-b", "numpy", "--base-env", "X=1", "--gate-time-max", "30"],
        ["run", "-w", "matmul", "-b", "numpy", "--quick", "--executor", "local", "--no-wait", "--time-limit", "30"],
    ],
)
def test_a_duration_without_its_unit_is_refused_in_one_line_naming_the_fix(tmp_path: Path, argv: list[str]):
    """`--gate-time 30` was taken as 30 s while `--max-regression 5` is refused as ambiguous: 30 what? Every duration
    on the command line asks for its unit, in one line that names the forms it takes, before anything runs."""
    done = in_process(*argv, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr.strip()
    assert len(said.splitlines()) == 1, said
    assert f"{argv[-2]} '30': write the" in said
    assert "30m" in said
    assert "ambiguous" in said
    if argv[0] == "ab":
        assert "30s" in said
    assert not (tmp_path / ".asyncbench" / "jobs").exists()


@pytest.mark.parametrize("number", ["0", "5", "30", "2000", "100000"])
@pytest.mark.parametrize("option", ["--gate-time", "--gate-time-max"])
def test_a_plain_number_is_told_durations_the_option_takes(number: str, option: str):
    """A new user's `--gate-time 0` was told "such as 0s or 0m", and `0s` then refused as under 10 s: every duration
    suggested is one the option takes, the user's number kept where it makes one."""
    with pytest.raises(InputError) as refused:
        ab.parse_gate_time(number, option)
    said = str(refused.value)
    suggested = re.search(r"such as (.+?)(?: \(the default[^)]*\))?: a plain number", said)
    assert suggested is not None, said
    for duration in suggested.group(1).split(" or "):
        assert ab.MIN_GATE_TIME_S <= ab.parse_gate_time(duration, option) <= ab.MAX_GATE_TIME_S, said
    if number == "30":
        assert "30s or 30m" in said


def test_a_duration_with_its_unit_reads_as_written():
    from asyncbench.spec import executor

    assert ab.parse_gate_time("30s") == 30.0
    assert ab.parse_gate_time("2m") == ab.parse_gate_time("2min") == 120.0
    assert ab.parse_gate_time("1h") == 3600.0  # a cap may be up to a day: hours read as --time-limit's do
    assert executor.command_line_time("90m") == "90"
    assert executor.command_line_time("2h") == "120"
    assert executor.command_line_time("90s") == "2"  # Slurm keeps minutes: rounded up
    assert executor.command_line_time("1:30:00") == "1:30:00"  # Slurm's own forms as written


def test_the_cap_is_three_times_the_target_unless_given():
    assert ab.ABRequest().gate_cap_s == 3 * ab.DEFAULT_GATE_TIME_S
    assert ab.ABRequest(gate_time_s=60.0).gate_cap_s == 180.0
    assert ab.ABRequest(gate_time_s=60.0, gate_time_max_s=60.0).gate_cap_s == 60.0  # the gate of before: no cap
    # a new user's trial: --gate-time 20h was taken with a default cap of 60 h, where --gate-time-max 25h is refused
    assert ab.ABRequest(gate_time_s=ab.parse_gate_time("20h")).gate_cap_s == ab.MAX_GATE_TIME_S
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
