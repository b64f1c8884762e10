"""The store's database: reaching it, one writer at a time, its schema made or upgraded once, failures in one line.

Reading never makes a store: a path with no store, or a database without
asyncbench's tables, is one line (StoreError, exit 2) and nothing is
created. Opening for writing makes the store where there is none, and
proves it can be written (a read-only file or folder, a read-only role or
server) before a run spends its time: a write rolled back. A store is made
only in an empty database (a SQLite file holding anything else is another
application's, named by mistake); a schema version asyncbench never wrote
and a table or column missing are refused whenever a store is opened,
before anything reads or writes it.

Writers take turns: on SQLite a writing transaction starts with `BEGIN
IMMEDIATE` (the file's write lock, waited for SQLITE_BUSY_S; a deferred
transaction that reads first and then writes can find another writer ahead
of it and fail at once), on PostgreSQL with a transaction-scoped advisory
lock. Two processes that make one new store, or record at once, so wait for
each other instead of failing: the second finds the tables, the meta row
and the series the first made.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
from typing import Any, Iterator

from asyncbench.errors import InputError
from asyncbench.history import tables, upgrade
from asyncbench.history.target import DEFAULT, Target
from asyncbench.host import own_folder

# A locked SQLite file (another process writing) is waited for this long before the record fails.
SQLITE_BUSY_S = 10.0
# A PostgreSQL server that does not answer within this is unreachable, not slow.
CONNECT_TIMEOUT_S = 10
# Another writer of a PostgreSQL store is waited for this long (a record takes about a second; a team's CI jobs
# may queue several).
POSTGRES_LOCK_WAIT_S = 60
# The advisory lock every writer of a PostgreSQL store takes: this number ("asyb" in ASCII) and its schema's hash,
# so stores in two schemas of one database do not wait for each other.
POSTGRES_LOCK = 0x61737962
# The execution option that marks an engine's transactions as writing (BEGIN IMMEDIATE on SQLite).
WRITING = "asyncbench_writing"
# The meta row the write probe inserts and rolls back.
PROBE_KEY = "write_probe"
# A schema version as asyncbench writes it: a whole number (nine digits: far past any schema, and no 5000-digit text
# reaches int()).
VERSION = re.compile(r"-?[0-9]{1,9}")
# How much of a schema version that is not one an error repeats (the store's text, not ours).
SHOWN_CHARS = 40
# What a store that fails a schema check is.
DAMAGED = "the store is damaged, or not asyncbench's"


class StoreError(InputError):
    """The store cannot be used: unreachable, locked, read-only, absent, from a newer asyncbench, or not a store."""


def connect(target: Target, writing: bool) -> Any:
    """An engine for the store at `target`; reading a SQLite file that is not there is StoreError (no file made)."""
    import sqlalchemy as sa

    path = target.path
    if path is None:  # PostgreSQL
        return sa.create_engine(target.url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}, pool_pre_ping=True)
    if not writing and not path.exists():
        raise StoreError(f"history {target.shown}: no store there (record a run first: `asyncbench record FILE` or `run --record`)")
    if path.exists() and not path.is_file() and not path.is_dir():  # /dev/null: SQLite would write a journal beside it
        raise StoreError(f"history {target.shown}: not a regular file, so not a store")
    if writing and path == DEFAULT:
        try:  # the default store's folder is asyncbench's own: made on first use, ignoring itself in git
            own_folder.make(path.parent)
        except OSError as exc:
            raise StoreError(f"history {target.shown}: cannot create its folder: {exc.strerror or exc}") from None
    elif writing and not path.parent.is_dir():  # a store the user named: a missing folder is more likely a typo
        raise StoreError(f"history {target.shown}: no such folder {str(path.parent)!r} (create it first)")
    engine = sa.create_engine(target.url, connect_args={"timeout": SQLITE_BUSY_S})

    @sa.event.listens_for(engine, "connect")
    def _own_transactions(driver_connection: Any, _: Any) -> None:
        driver_connection.isolation_level = None  # the driver begins nothing itself: `_begin` does

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITING) else "BEGIN")

    return engine


@contextlib.contextmanager
def writing(engine: Any) -> Iterator[Any]:
    """A writing transaction, the store's only one while it lasts (committed at the end, rolled back on an error)."""
    import sqlalchemy as sa

    with engine.execution_options(**{WRITING: True}).begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text(f"SET LOCAL lock_timeout = '{POSTGRES_LOCK_WAIT_S}s'"))
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key, hashtext(current_schema()))"), {"key": POSTGRES_LOCK})
        yield connection


def prepare(target: Target, engine: Any, meta: Any, writing_too: bool) -> list[str]:
    """Refuse what is not an asyncbench store (another application's database, a schema version asyncbench never
    wrote, a table or column missing) and a store of a newer asyncbench; upgrade an older one; make a new one (only
    when writing, and only in an empty database); and when writing, prove it can be written. StoreError, one line,
    for each failure, and nothing written then. What an upgrade's steps said a user must hear (upgrade.MIGRATIONS)."""
    notes: list[str] = []

    with translated(target, "open"):
        with _snapshot(engine) as connection:
            version = _version(target, connection)
            if version is None:
                _refuse_foreign(target, connection)
        if version is None and not writing_too:
            raise StoreError(f"history {target.shown}: no asyncbench store there (record a run first: `asyncbench record FILE`)")
        _refuse_newer(target, version)
        if version != tables.SCHEMA_VERSION:
            with writing(engine) as connection:  # the lock first: a second process finds what the first made
                version = _version(target, connection)
                if version is None:
                    _refuse_foreign(target, connection)
                _refuse_newer(target, version)
                kv = meta.tables[f"{tables.PREFIX}meta"]
                kv.create(connection, checkfirst=True)
                for step in range((version or 0) + 1, tables.SCHEMA_VERSION + 1):
                    said = upgrade.MIGRATIONS[step](connection, meta)
                    if said and version is not None:  # a store made new has nothing to be told of
                        notes.append(said)
                if version is None:
                    connection.execute(kv.insert().values(key="schema_version", value=str(tables.SCHEMA_VERSION)))
                else:
                    connection.execute(kv.update().where(kv.c.key == "schema_version").values(value=str(tables.SCHEMA_VERSION)))
        with engine.connect() as connection:
            _check_whole(target, connection, meta)
    if writing_too:
        try:
            with translated(target, "write"):
                _probe(engine, meta)
        except StoreError as exc:
            if target.kind == "sqlite" and "unable to open" in str(exc):  # the journal SQLite writes beside the file
                raise StoreError(f"{exc} (is its folder writable? SQLite writes a journal beside the file)") from None
            raise
    return notes


@contextlib.contextmanager
def _snapshot(engine: Any) -> Iterator[Any]:
    """A connection whose reads all see one moment of the store: the first, unlocked look at it asks whether the meta
    table is there and then what tables the database holds, and another process's new store committed between the
    two questions (PostgreSQL reads each statement afresh by default) made a store in the making read as another
    application's (found by CI: one process of two that made one new store at once was refused). SQLite's
    transaction (`BEGIN`, connect) already reads one snapshot."""
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        yield connection


def _version(target: Target, connection: Any) -> int | None:
    """The store's schema version; None where the database holds no asyncbench store. StoreError for a version
    asyncbench never wrote: missing beside its table, not a whole number, or below 1."""
    import sqlalchemy as sa

    name = f"{tables.PREFIX}meta"
    if not sa.inspect(connection).has_table(name):
        return None
    found = connection.execute(sa.text(f"SELECT value FROM {name} WHERE key = 'schema_version'")).scalar()
    if found is None:
        raise StoreError(f"history {target.shown}: the store's schema version is missing (no schema_version in {name}): {DAMAGED}")
    text = str(found)
    if not VERSION.fullmatch(text):
        raise StoreError(f"history {target.shown}: the store's schema version {text[:SHOWN_CHARS]!r} is not a whole number: {DAMAGED}")
    version = int(text)
    if version < 1:
        wrote = f"1 to {tables.SCHEMA_VERSION}"
        raise StoreError(f"history {target.shown}: the store's schema version {version} is none asyncbench wrote ({wrote}): {DAMAGED}")
    return version


def _refuse_foreign(target: Target, connection: Any) -> None:
    """A database with no asyncbench schema version is made a store only where it is empty: a SQLite file that holds
    anything (another application's tables, named by mistake) is refused, and so is a PostgreSQL database holding
    asyncbench tables without one (other applications' tables may live beside a store there: its own are
    prefixed)."""
    import sqlalchemy as sa

    if target.kind == "sqlite":
        held = connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
        what = "other tables"
    else:
        held = sum(name.startswith(tables.PREFIX) for name in sa.inspect(connection).get_table_names())
        what = f"{tables.PREFIX} tables"
    if held:
        raise StoreError(
            f"history {target.shown}: not an asyncbench store: the database holds {what} and no asyncbench schema version; "
            "name a new or empty file for the store"
        )


def _check_whole(target: Target, connection: Any, meta: Any) -> None:
    """Every table and column of the schema is there (one query of the catalogue): a store missing one is refused
    now, in one line, not when a read or a record reaches it."""
    import sqlalchemy as sa

    wanted = [table.name for table in meta.sorted_tables]
    found = sa.inspect(connection).get_multi_columns(filter_names=wanted)
    columns = {name: {column["name"] for column in held} for (_, name), held in found.items()}
    for table in meta.sorted_tables:
        if table.name not in columns:
            raise StoreError(f"history {target.shown}: the store has no table {table.name}: {DAMAGED}")
        missing = [column.name for column in table.columns if column.name not in columns[table.name]]
        if missing:
            raise StoreError(f"history {target.shown}: the store's table {table.name} has no column {', '.join(missing)}: {DAMAGED}")


def _refuse_newer(target: Target, version: int | None) -> None:
    if version is not None and version > tables.SCHEMA_VERSION:
        raise StoreError(
            f"history {target.shown}: the store is of schema {version}, newer than this asyncbench reads "
            f"({tables.SCHEMA_VERSION}): upgrade asyncbench"
        )


def _probe(engine: Any, meta: Any) -> None:
    """A write rolled back: a read-only file, folder (SQLite's journal goes beside the file), role or server fails
    here, before a run, not when its results are recorded."""
    import sqlalchemy as sa

    kv = meta.tables[f"{tables.PREFIX}meta"]
    with engine.execution_options(**{WRITING: True}).connect() as connection:
        transaction = connection.begin()
        try:
            connection.execute(kv.insert().values(key=PROBE_KEY, value=""))
            if connection.dialect.name == "postgresql":
                names = [table.name for table in meta.sorted_tables]
                allowed = connection.execute(
                    sa.text("SELECT bool_and(has_table_privilege(name, 'INSERT')) FROM unnest(CAST(:names AS text[])) AS name"),
                    {"names": names},
                ).scalar()
                if not allowed:
                    raise StoreError("this role may not insert into every asyncbench table")
        finally:
            transaction.rollback()


@contextlib.contextmanager
def translated(target: Target, doing: str) -> Iterator[None]:
    """Database failures as one line without the password: unreachable, locked, read-only, not a store."""
    import sqlalchemy.exc

    try:
        yield
    except StoreError as exc:
        if str(exc).startswith("history "):
            raise
        raise StoreError(f"history {target.shown}: cannot {doing}: {exc}") from None
    except Exception as exc:
        if not isinstance(exc, (sqlalchemy.exc.SQLAlchemyError, *_driver_errors())):
            raise
        original = getattr(exc, "orig", None) or exc
        text = " ".join(str(original).split())
        if "locked" in text.lower():
            text = f"the SQLite file is locked by another process (waited {SQLITE_BUSY_S:g} s): {text}"
        raise StoreError(f"history {target.shown}: cannot {doing}: {target.scrub(text)}") from None


def _driver_errors() -> tuple[type[Exception], ...]:
    """The drivers' own errors: history.reading queries through the driver's cursor, past the database library."""
    psycopg = sys.modules.get("psycopg")
    return (sqlite3.Error, *((psycopg.Error,) if psycopg is not None else ()))
