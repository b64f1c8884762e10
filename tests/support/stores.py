"""History stores for tests: the `history` fixture (a fresh SQLite file, or the test PostgreSQL database emptied), a
real store with one run recorded, raw SQL on a SQLite store, and a folder's bytes to compare before and after."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Sequence

import pytest

from asyncbench.history import target
from tests.support.cli import asyncbench, in_process, refused

#: the PostgreSQL server the `postgres` tests use, read when a test module imports this one: after tests/conftest.py's
#: pytest_configure named an xdist worker's own schema in it (so tests/conftest.py must not import this module)
POSTGRES = os.environ.get("ASYNCBENCH_TEST_POSTGRES", "")
#: every table asyncbench makes in a store, dependents first
TABLES = ("asyncbench_changes", "asyncbench_points", "asyncbench_series", "asyncbench_cases", "asyncbench_runs", "asyncbench_meta")


def empty_postgres() -> str:
    """The test server's database with no asyncbench tables left from an earlier test."""
    import sqlalchemy as sa

    engine = sa.create_engine(target.resolve(POSTGRES).url)
    with engine.begin() as connection:
        for table in TABLES:
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {table} CASCADE"))
    engine.dispose()
    return POSTGRES


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def history(request, tmp_path) -> str:
    """A fresh, empty store: a SQLite file, or the test PostgreSQL database emptied."""
    return str(tmp_path / "history.sqlite") if request.param == "sqlite" else empty_postgres()


def a_store(folder: Path, results: Path, name: str = "h.sqlite") -> Path:
    """A real store with one run recorded."""
    done = asyncbench("record", str(results), "--history", name, cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / name


def sql(path: Path, *statements: str) -> None:
    """`statements` run on the SQLite store at `path`, committed: a store changed by another hand."""
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes: what a refusal must leave as it was."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def edited_refused(store: Path, folder: Path, statements: Sequence[str], command: Sequence[str], *said: str) -> None:
    """A copy of `store` in `folder` with `statements` run on it (a store damaged by another hand): `command` of it
    (`--history h.sqlite`) is refused in one line, "the store is damaged" and every word of `said`, and leaves every
    file in `folder` as it was."""
    (folder / "h.sqlite").write_bytes(store.read_bytes())
    sql(folder / "h.sqlite", *statements)
    before = snapshot(folder)
    done = in_process(*command, "--history", "h.sqlite", cwd=folder)
    refused(done, "h.sqlite", "the store is damaged", *said)
    assert snapshot(folder) == before
