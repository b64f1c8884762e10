"""`--bound` with `--quick` is told once, on stderr before anything is measured, that --quick's time leaves too few
perturbation rounds for a reading (a trial read "3 perturbation round(s) only … too few for an interval" after the
run); the exit code is what it would be without it."""

from __future__ import annotations

from asyncbench.cli.options import quick_bound
from tests.support.cli import in_process


def test_bound_with_quick_is_told_before_measuring_and_the_exit_code_is_unchanged(tmp_path):
    said = quick_bound(True, True)
    assert said is not None
    assert "too few perturbation rounds for a --bound reading" in said
    assert quick_bound(True, False) is None
    assert quick_bound(False, True) is None
    told = in_process("run", "--bound", "--quick", "-w", "missing.py:step", cwd=tmp_path)
    plain = in_process("run", "--bound", "-w", "missing.py:step", cwd=tmp_path)
    assert told.returncode == plain.returncode == 2
    assert told.stderr.count(said) == 1
    assert said not in plain.stderr
