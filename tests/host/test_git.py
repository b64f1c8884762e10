"""Every git command asyncbench runs goes through host.git, and a revision read from a file never reaches git as an
option there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import asyncbench
from asyncbench.host import git

PACKAGE = Path(asyncbench.__file__).parent
# A git command line written out: a list or tuple that starts with the word git.
GIT_COMMAND = re.compile(r"""[\[(]\s*["']git["']\s*,""")


def test_no_module_but_host_git_runs_git():
    running = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if GIT_COMMAND.search(path.read_text(encoding="utf-8"))]
    assert running == ["host/git.py"]


@pytest.fixture
def repository(tmp_path: Path) -> str:
    """A git repository with one commit in `tmp_path`; its commit's sha."""
    for args in (("init", "-q"), ("add", "f"), ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")):
        if args[0] == "add":
            (tmp_path / "f").write_text("x")
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    return git.run(tmp_path, "rev-parse", "HEAD", timeout_s=git.FACT_TIMEOUT_S)


def test_a_commit_is_dated_and_a_value_that_reads_as_an_option_is_no_commit(repository, tmp_path):
    assert git.commit_time(repository, tmp_path)
    assert git.branch_at(repository, tmp_path) in ("main", "master")
    assert git.checkout_sha(tmp_path) == repository
    (tmp_path / "f").write_text("changed")
    assert git.checkout_sha(tmp_path) == f"{repository}-dirty"
    victim = tmp_path / "victim.txt"
    assert git.commit_time(f"--output={victim}", tmp_path) is None
    assert not victim.exists()


def test_no_checkout_is_none_not_an_error(tmp_path):
    assert git.checkout_sha(tmp_path) is None
    assert git.commit_time("0" * 40, tmp_path) is None
    with pytest.raises(subprocess.CalledProcessError):
        git.run(tmp_path, "rev-parse", "HEAD", timeout_s=git.FACT_TIMEOUT_S)
