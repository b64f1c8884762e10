"""The CI guide's layout (docs/guides/ci.md) gated with `ab` as the guide runs it: the user's package `mypkg/` at the
repository's root, `bench/steps.py` importing it, no `pip install -e .`, and `asyncbench` started as its console
script (the working directory is not on sys.path). Each side's worker imports its own tree first; the parent's
import of each side's step file, before anything runs, must resolve `mypkg` (and the step file's neighbours) by
the same rule: from that side's tree, not the other side's and not "No module named 'mypkg'"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import CLI_TIMEOUT_S, cli_env

STEPS = """
import numpy as np

import asyncbench
from mypkg.model import {width}
from shapes import ROWS  # a neighbour of this file


@asyncbench.step(backends=("numpy",))
def train_step(backend, device, params):
    x = np.ones((ROWS, {width}), np.float32)

    def step():
        x @ x.T

    return step
"""
GATE = """\
name: gate
defaults:
  backends: [numpy]
  devices: [cpu]
experiments:
  - workload: steps.py:train_step     # relative to this file
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args], capture_output=True, check=True)


def _side(repo: Path, width: str, rows: str) -> None:
    """One revision of the layout: the package's constant named `width`, the neighbour's `rows`."""
    (repo / "mypkg" / "model.py").write_text(f"{width} = 64\n")
    (repo / "bench" / "steps.py").write_text(STEPS.format(width=width))
    (repo / "bench" / "shapes.py").write_text(f"{rows} = 32\nROWS = {rows}\n")


def test_the_ci_guides_layout_gates_with_ab_without_installing_the_package(tmp_path: Path) -> None:
    repo = tmp_path / "your-project"
    (repo / "mypkg").mkdir(parents=True)
    (repo / "bench").mkdir()
    (repo / "mypkg" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text('[project]\nname = "mypkg"\nversion = "0"\n')
    (repo / "bench" / "gate.yaml").write_text(GATE)
    _side(repo, "WIDTH", "BASE_ROWS")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    # the pull request renames the package's constant (the base's steps.py would fail on the head's mypkg) and
    # the neighbour's (the head's steps.py would fail on the base's)
    _side(repo, "SIZE", "HEAD_ROWS")
    done = subprocess.run(  # -P: as the console script `asyncbench`, which puts no working directory on sys.path
        [sys.executable, "-P", "-m", "asyncbench", "ab", "bench/gate.yaml", "--base", "HEAD", "--no-progress"]
        + ["--gate-time", "10s", "--gate-time-max", "10s", "--allow-inconclusive", "-o", "ab.json", "--markdown", "ab.md"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**cli_env(), "OPENBLAS_NUM_THREADS": "1"},
        timeout=CLI_TIMEOUT_S,
    )
    assert "No module named" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (case,) = json.loads((repo / "ab.json").read_text())["cases"]
    assert case["status"] == "ok", case
    assert case["ratios"], case
    # the head is the working tree: the comment names the commit it is based on, and that it was modified
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
    (head,) = [line for line in (repo / "ab.md").read_text().splitlines() if line.startswith("- head:")]
    assert f"working tree at {commit.strip()[:10]} with uncommitted changes" in head, head
    # and `show` renders the file as `ab` wrote its comment
    shown = subprocess.run(
        [sys.executable, "-m", "asyncbench", "show", "ab.json", "--format", "markdown"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=CLI_TIMEOUT_S,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (repo / "ab.md").read_text()
