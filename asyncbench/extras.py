"""The optional extras: which package each optional feature needs, and the one line that says how to install it.

asyncbench's core needs none of them. Each is imported only where it is
used (the history store, the report page, plots, jobs through submitit),
so without one a command would otherwise end in an ImportError's traceback,
and `run --record` would end so after it had measured. Every command that
needs one calls `require` before it does anything (`run`, `gather`,
`record`, `history`, `report`, `show --plot`): a missing package is bad
input, one line naming what needs it and the command that installs it,
exit 2. One table (`EXTRAS`) holds what each package is called and how it
is installed, so every command says the same kind of line.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from asyncbench.errors import InputError

#: pyproject.toml's extras, as pip installs them (from PyPI, or the extra of a checkout installed with `pip install -e`).
#: The history's change points need no package of their own: Otava's analysis ships inside asyncbench
#: (history.edivisive says why), so the history extra is the whole install of --record, history and report.
HISTORY = "pip install 'asyncbench[history]'"
PLOT = "pip install 'asyncbench[plot]'"
CLUSTER = "pip install 'asyncbench[cluster]'"
#: in a checkout, the history extra's install
MAKE_HISTORY = "make history"


@dataclass(frozen=True)
class Extra:
    """An optional package: the module imported, what it is called when said, and the command that installs it."""

    module: str
    name: str
    install: str


EXTRAS = {
    extra.module: extra
    for extra in (
        Extra("sqlalchemy", "SQLAlchemy", HISTORY),
        Extra("psycopg", "psycopg (a PostgreSQL history)", HISTORY),
        Extra("plotly", "plotly", HISTORY),
        Extra("matplotlib", "matplotlib", PLOT),
        Extra("submitit", "submitit", CLUSTER),
    )
}
#: the installs `make history` does
_BY_MAKE_HISTORY = (HISTORY,)


class MissingExtra(InputError):
    """An optional package a command needs is not installed (or cannot be imported)."""


def importable(module: str) -> bool:
    """Whether `module` imports here. Found is not enough: a package whose own import fails (a stub, a wheel
    built for another Python, a missing shared library) would fail later, with a traceback."""
    try:
        if importlib.util.find_spec(module) is None:
            return False
        importlib.import_module(module)
    except (ImportError, ValueError):  # ValueError: a module left in sys.modules without a spec
        return False
    return True


def missing(*modules: str) -> list[Extra]:
    """The extras among `modules` (keys of EXTRAS) that cannot be imported, in the order given."""
    return [EXTRAS[module] for module in dict.fromkeys(modules) if not importable(module)]


def message(needed_by: str, absent: list[Extra]) -> str:
    """One line: what needs which packages, and the command(s) that install them."""
    names = [extra.name for extra in absent]
    said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    installs = list(dict.fromkeys(extra.install for extra in absent))
    checkout = f" (in asyncbench's checkout: {MAKE_HISTORY})" if all(i in _BY_MAKE_HISTORY for i in installs) else ""
    verb = "is" if len(names) == 1 else "are"
    return f"{needed_by} needs {said}, which {verb} not installed: {' && '.join(installs)}{checkout}"


def require(needed_by: str, *modules: str) -> None:
    """Before anything runs: MissingExtra (exit 2, one line) naming what `needed_by` (a command or option, e.g.
    "run --record") needs of `modules` and how to install it, where any of them cannot be imported."""
    absent = missing(*modules)
    if absent:
        raise MissingExtra(message(needed_by, absent))
