"""Where the history lives: a SQLite file (the default, `.asyncbench/history.sqlite`) or a PostgreSQL URL.

`--history TARGET`, else ASYNCBENCH_HISTORY, else the default file in the
current directory. A `postgresql://` (or `postgres://`) URL is a team's
shared database, reached through psycopg; without a password in the URL,
libpq's own PGPASSWORD and ~/.pgpass (PGPASSFILE) apply, as for psql. A
password never leaves this module unmasked: `shown` is what output,
errors, results and the store itself may hold. A libpq key=value connection
string (`host=db dbname=bench user=ci password=...`) names a PostgreSQL
store too. Every form of a password libpq reads is masked (masking.py says
which).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncbench import extras
from asyncbench.errors import InputError
from asyncbench.history.masking import mask
from asyncbench.host import own_folder

ENVIRONMENT = "ASYNCBENCH_HISTORY"
DEFAULT = own_folder.OWN_FOLDER / "history.sqlite"
POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
# libpq's key=value connection string starts with one of its keywords and '=' (a file path of the SQLite store
# that looks like one is rare; `./host=x` still names a file).
CONNINFO = re.compile(r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|options|application_name|connect_timeout)\s*=")


@dataclass(frozen=True)
class Target:
    """A store's address: `url` for the database library (with the password), `shown` for everything else."""

    url: str
    shown: str
    kind: str  # "sqlite" or "postgresql"
    #: every password the address holds (user information, query parameter, key=value), decoded
    passwords: tuple[str, ...] = ()

    def scrub(self, text: str) -> str:
        """`text` with the password masked wherever it appears (a driver's error may quote the URL)."""
        return mask(text.replace(self.url, self.shown), self.passwords)


def resolve(given: str | None) -> Target:
    """The store named by `--history`, ASYNCBENCH_HISTORY, or the default SQLite file."""
    text = given or os.environ.get(ENVIRONMENT) or str(DEFAULT)
    if text.startswith(POSTGRES_SCHEMES):
        return _postgres(text)
    if CONNINFO.match(text):
        return _conninfo(text)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise InputError(f"--history: {scheme}:// is not a store asyncbench knows; give a file path (SQLite) or a postgresql:// URL")
    path = Path(text).expanduser()
    if path.is_dir():
        raise InputError(f"--history {text}: is a directory; give a file path for the SQLite store")
    return Target(url=f"sqlite:///{path}", shown=str(path), kind="sqlite")


def _postgres(text: str) -> Target:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url("postgresql+psycopg://" + text.split("://", 1)[1])
    except (ArgumentError, ValueError) as exc:
        raise InputError(f"--history: not a PostgreSQL URL ({mask(str(exc))})") from None
    return _target(url)


def _conninfo(text: str) -> Target:
    """A libpq key=value connection string as the URL the database library takes."""
    from sqlalchemy.engine import URL

    extras.require("a PostgreSQL --history", "psycopg")
    from psycopg.conninfo import conninfo_to_dict

    try:
        found = {key: str(value) for key, value in conninfo_to_dict(text).items()}
    except Exception as exc:  # noqa: BLE001 - psycopg's ProgrammingError: a string libpq cannot parse
        raise InputError(f"--history: not a PostgreSQL connection string ({mask(str(exc))})") from None
    port, user = found.pop("port", None), found.pop("user", None)
    if user is None and "password" in found:
        password = None  # a URL has no password without a user: it stays a query parameter
    else:
        password = found.pop("password", None)
    url = URL.create(
        "postgresql+psycopg",
        username=user,
        password=password,
        host=found.pop("host", None),
        port=int(port) if port and port.isdigit() else None,
        database=found.pop("dbname", None),
        query=found,
    )
    return _target(url)


def _target(url: Any) -> Target:
    """The URL as the database library takes it, and as everything else shows it (every password masked)."""
    query = url.query.get("password")
    passwords = tuple(p for p in (url.password, *((query,) if isinstance(query, str) else (query or ()))) if p)
    rendered = url.render_as_string(hide_password=False)
    shown = mask(url.set(drivername="postgresql").render_as_string(hide_password=True), passwords)
    return Target(url=rendered, shown=shown, kind="postgresql", passwords=passwords)
