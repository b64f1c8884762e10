"""A side of `ab --base REV` whose tree cannot be imported: the line names the side and its revision, the path as
the repository names it, and says the revision lacks the package instead of `run`'s advice to install it."""

from __future__ import annotations

from pathlib import Path

from tests.support.ab_repo import committed_repo, git
from tests.support.cli import in_process


def test_a_base_revision_without_the_user_s_package_is_said_as_that_side_s_tree(tmp_path: Path):
    """The trial's branch deleted the user's package: `ab` said `/tmp/asyncbench-base-…/gate.yaml:…: … No module named
    'mypkg' … install the package … (your own: pip install -e . at its root)`; `ab` needs no install."""
    committed_repo(tmp_path)
    branch = git(tmp_path, "branch", "--show-current")
    git(tmp_path, "checkout", "-qb", "nopkg")
    git(tmp_path, "rm", "-q", "mypkg.py")
    git(tmp_path, "commit", "-qm", "no package")
    sha = git(tmp_path, "rev-parse", "--short", "HEAD")
    git(tmp_path, "checkout", "-q", branch)
    done = in_process("ab", "--no-progress", "gate.yaml", "--base", "nopkg", cwd=tmp_path)
    said = done.stderr.strip()
    assert done.returncode == 2, done.stdout + said
    assert len(said.splitlines()) == 1, said
    assert "the base side (" in said, said
    assert sha in said, said
    assert ": gate.yaml:" in said, said  # as the repository names it
    assert "No module named 'mypkg'" in said, said
    assert "that revision's tree has no package mypkg" in said, said
    assert "install" not in said, said
    assert "asyncbench-base" not in said, said
    assert str(tmp_path) not in said, said
