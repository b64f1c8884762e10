"""asyncbench's own folder, `.asyncbench/`, ignores itself in git: a `git add .` after a first run commits none of it."""

from __future__ import annotations

import subprocess

import pytest

from asyncbench.history import database, target
from asyncbench.host import own_folder


def _untracked(repo) -> str:
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    return subprocess.run(status, cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(target.ENVIRONMENT, raising=False)
    return tmp_path


def test_the_default_history_store_made_on_first_use_is_not_seen_by_git(repo):
    pytest.importorskip("sqlalchemy")
    engine = database.connect(target.resolve(None), writing=True)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    engine.dispose()
    assert (repo / ".asyncbench" / "history.sqlite").is_file()
    assert _untracked(repo) == ""


def test_a_folder_its_owner_made_or_changed_is_left_as_it_is(repo):
    (repo / ".asyncbench").mkdir()
    own_folder.make()
    assert not (repo / ".asyncbench" / ".gitignore").exists()
