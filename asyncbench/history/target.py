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

Paths are paths, not URLs: a value that is neither of those is the SQLite
file of that name, taken literally (`%`, `#`, `@`, spaces and `:memory:` are
part of the name; nothing is decoded). Two kinds of value are refused in one
line instead, because they read as something else: one holding `?` (URL
options such as `?mode=ro`, which a file path does not take: the store would
be another file) or a control character, and one that starts with a URL
scheme other than PostgreSQL's (`sqlite:`, `file:`, `mysql://`): a file
whose name starts that way is written `./file:x.db`.
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
# A value that starts with a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`) and a colon: a URL,
# not a file (two characters at least: `C:` is a drive).
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")
# What a file path of the store may not hold: `?` reads as URL options; a control character is no file name anyone
# types, and would reach every message that names the store.
MISREAD = re.compile(r"[?\x00-\x1f\x7f]")
# The longest value taken: Linux's PATH_MAX (no longer path can be opened), and far past any URL a team writes. A
# longer one is refused without being repeated.
MAX_CHARS = 4096


@dataclass(frozen=True)
class Target:
    """A store's address: `url` for the database library (with the password), `shown` for everything else."""

    url: str
    shown: str
    kind: str  # "sqlite" or "postgresql"
    #: every password the address holds (user information, query parameter, key=value), decoded
    passwords: tuple[str, ...] = ()
    #: the SQLite store's file, as given (None for PostgreSQL)
    path: Path | None = None

    def scrub(self, text: str) -> str:
        """`text` with the password masked wherever it appears (a driver's error may quote the URL)."""
        return mask(text.replace(self.url, self.shown), self.passwords)


def resolve(given: str | None) -> Target:
    """The store named by `--history`, ASYNCBENCH_HISTORY, or the default SQLite file; InputError (one line) for a
    value that is no store asyncbench knows, or a file path that would be misread (the module's docstring)."""
    text = given or os.environ.get(ENVIRONMENT) or str(DEFAULT)
    if len(text) > MAX_CHARS:
        raise InputError(f"--history: {len(text)} characters, longer than any store's path or URL ({MAX_CHARS} at most)")
    if text.startswith(POSTGRES_SCHEMES):
        return _postgres(text)
    if CONNINFO.match(text):
        return _conninfo(text)
    scheme = SCHEME.match(text)
    if scheme:
        url = text[scheme.end() :].startswith("//")
        named = scheme.group() + ("//" if url else "")
        colon = "" if url or MISREAD.search(text) else f" (a file whose name has a colon: {'./' + text!r})"
        raise InputError(
            f"--history {text!r}: {named} is not a store asyncbench knows; give a file path (SQLite) or a postgresql:// URL{colon}"
        )
    misread = MISREAD.search(text)
    if misread:
        what = "'?' (URL options, which a store's file path does not take)" if misread.group() == "?" else "a control character"
        raise InputError(f"--history {text!r}: a SQLite store is a file path, and this one holds {what}; name the file alone")
    return sqlite(Path(text).expanduser())


def sqlite(path: Path) -> Target:
    """The SQLite store at `path`, taken literally: its URL names the absolute path, quoted (`#`, `%` and `@` are
    part of the name, and `:memory:` is a file too, not a database in memory)."""
    from sqlalchemy.engine import URL

    try:
        folder = path.is_dir()
    except OSError as exc:  # a name longer than the file system takes (ENAMETOOLONG), a loop of links
        raise InputError(f"--history {str(path)!r}: cannot be a file here: {exc.strerror or exc}") from None
    if folder:
        raise InputError(f"--history {path}: is a directory; give a file path for the SQLite store")
    url = URL.create("sqlite", database=str(path.absolute())).render_as_string()
    return Target(url=url, shown=str(path), kind="sqlite", path=path)


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
