"""Where the history lives: a SQLite file (the default, `.asyncbench/history.sqlite`) or a PostgreSQL URL.

`--history TARGET`, else ASYNCBENCH_HISTORY, else the default file in the
current directory. A `postgresql://` (or `postgres://`) URL is a team's
shared database, reached through psycopg; without a password in the URL,
libpq's own PGPASSWORD and ~/.pgpass (PGPASSFILE) apply, as for psql. A
password never leaves this module unmasked: `shown` is what output,
errors, results and the store itself may hold.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from asyncbench.errors import InputError

ENVIRONMENT = "ASYNCBENCH_HISTORY"
DEFAULT = Path(".asyncbench") / "history.sqlite"
POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
#: what stands for a password wherever a URL is shown
MASK = "***"


@dataclass(frozen=True)
class Target:
    """A store's address: `url` for the database library (with the password), `shown` for everything else."""

    url: str
    shown: str
    kind: str  # "sqlite" or "postgresql"
    password: str | None = None

    def scrub(self, text: str) -> str:
        """`text` with the password masked wherever it appears (a driver's error may quote the URL)."""
        text = text.replace(self.url, self.shown)
        return text.replace(self.password, MASK) if self.password else text


def resolve(given: str | None) -> Target:
    """The store named by `--history`, ASYNCBENCH_HISTORY, or the default SQLite file."""
    text = given or os.environ.get(ENVIRONMENT) or str(DEFAULT)
    if text.startswith(POSTGRES_SCHEMES):
        return _postgres(text)
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
        raise InputError(f"--history: not a PostgreSQL URL ({exc})") from None
    rendered = url.render_as_string(hide_password=False)
    shown = url.set(drivername="postgresql").render_as_string(hide_password=True)
    return Target(url=rendered, shown=shown, kind="postgresql", password=url.password)
