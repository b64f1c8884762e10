"""--max-regression is written as a percentage, with its %, wherever the option exists: a plain 0.05 reads as
5% to one user and 0.05% to another (a config's `ab_margin` refuses a plain number for the same reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import asyncbench

COMMANDS = {
    "compare": ["compare", "a.json", "b.json"],
    "run --baseline": ["run", "-w", "matmul", "--baseline", "a.json"],
    "ab": ["ab", "-w", "matmul", "--base", "HEAD", "--no-progress"],
    "history": ["history", "--history", "h.sqlite", "--fail-on-regression"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("plain", ["0.05", "5", "10"])
def test_a_plain_number_is_refused_in_one_line_naming_the_working_form(tmp_path: Path, command: str, plain: str) -> None:
    done = asyncbench(*COMMANDS[command], "--max-regression", plain, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"--max-regression {plain!r}" in done.stderr
    # the user's own number, its two readings and the forms to write (it said "0.05 may mean 5% or 0.05%" of a 5)
    assert f"with its %, such as {plain}%" in done.stderr
    assert f"{plain} may mean {plain}%, or {float(plain) * 100:g}% as a fraction" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("command", [["run", "-w", "matmul", "-b", "numpy", "--quick"], ["gather", "jobs"]])
def test_a_margin_without_a_baseline_is_refused_before_anything_runs(tmp_path: Path, command: list[str]) -> None:
    """Without --baseline nothing is judged by the margin: it was taken in silence and the run exited 0, a gate
    thought set that was not (as history's --max-regression without --fail-on-regression)."""
    done = asyncbench(*command, "--max-regression", "5%", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "asyncbench: error: --max-regression without --baseline: nothing would be judged; add --baseline, or leave it out"
    )
    assert list(tmp_path.iterdir()) == []  # refused before anything ran or was written
