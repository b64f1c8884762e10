"""`ab CONFIG... --base REV` reads every config from each side's revision of the first config's repository: a second
config outside that repository (in no repository, or in another) is one line naming it, exit 2, nothing written or
checked out, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """\
experiments:
  - name: work
    workload: sync_async
    backends: [numpy]
    devices: [cpu]
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _repository(folder: Path) -> Path:
    folder.mkdir()
    (folder / "bench.yaml").write_text(CONFIG)
    _git(folder, "init", "-q")
    _git(folder, "add", ".")
    _git(folder, "commit", "-qm", "base")
    return folder


@pytest.mark.parametrize("elsewhere", ["in-no-repository", "in-another-repository"])
def test_a_second_config_outside_the_repository_is_one_line_and_exit_2(tmp_path, elsewhere):
    repo = _repository(tmp_path / "repo")
    if elsewhere == "in-another-repository":
        other = _repository(tmp_path / "other") / "bench.yaml"
    else:
        (tmp_path / "other").mkdir()
        other = tmp_path / "other" / "bench2.yaml"
        other.write_text(CONFIG)
    before = sorted(p.name for p in repo.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "asyncbench", "ab", "bench.yaml", str(other), "--quick", "--no-progress", "--base", "HEAD"]
        + ["-o", "ab.json"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"asyncbench: error: {other}: outside the repository {repo} of the first config, bench.yaml: --base and --head "
        "read each config as their revision has it, and no revision has this one; put it in the repository (or gate it "
        "with an ab of its own)"
    ]
    assert sorted(p.name for p in repo.iterdir()) == before  # no output, no folder of asyncbench's own
    assert _git(repo, "worktree", "list").count("\n") == 0  # no side checked out
