"""Fixtures the end-to-end `ab` tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.ab_repo import committed_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose base commit has REPEAT = 20; the working tree is left as committed (tests.support.ab_repo)."""
    return committed_repo(tmp_path)
