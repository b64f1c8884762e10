"""Output files: all of a command's proven writable before it starts, each written whole or not at all.

A command that measures for minutes must not find out at the end that an
output cannot be written (a missing folder, a directory named as the file,
a read-only place) and lose the work to a traceback, nor that two of its
outputs name one file (the second would silently replace the first: `-o X
--markdown X` leaves markdown where the JSON was). So every command that
writes files (`run`, `ab`, `gather`, `report`, `show --plot`) hands its
outputs to `check` before anything runs: bad input, one line, exit 2. Each
is then written by `write`: a temporary file in the same folder renamed
over the target (writing.atomic_write), so a reader never sees half a file
and a full disk leaves the previous one whole. A write that fails after the
work (the disk filled meanwhile) is said in one line and reported to the
caller, which keeps what was measured and ends with exit 3 — never a
traceback. An output that names one of the command's inputs (`report -o
h.sqlite --history h.sqlite`, `ab gate.yaml -o gate.yaml`) is refused the
same way: writing it would destroy what the command reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from asyncbench.errors import InputError
from asyncbench.results import writing

#: (the option that names it, the path given, or None where the option was not given)
Named = Iterable[tuple[str | None, str | None]]


def same_file(path: str | Path) -> str:
    """What two names of one file have in common: `out.json`, `./out.json` and a link's target all become one."""
    return os.path.realpath(os.path.abspath(path))


def check_distinct(named: Named) -> None:
    """InputError (exit 2) when two outputs name the same file."""
    seen: dict[str, str] = {}
    for option, path in named:
        if not path:
            continue
        where = same_file(path)
        if where in seen:
            first = seen[where]
            raise InputError(
                f"the same file is named for two outputs ({first} and {option or 'another'}): give each its own", location=path
            )
        seen[where] = option or "an output"


def check_not_inputs(named: Named, inputs: Named) -> None:
    """InputError (exit 2) when an output names one of the command's inputs (a config, the history store, a
    results file it reads): written at the end, it would replace what the command read, and a store overwritten by a
    page or a config by JSON is lost for good. Names are compared as `check_distinct` compares them (real paths)."""
    read: dict[str, str] = {}
    for option, path in inputs:
        if path:
            read.setdefault(same_file(path), option or "an input")
    for option, path in named:
        if not path:
            continue
        source = read.get(same_file(path))
        if source is not None:
            raise InputError(
                f"{option or 'an output'} names the same file as {source}, an input of this command: give the output a file of its own",
                location=path,
            )


def check(named: Named, inputs: Named = ()) -> None:
    """Before anything runs: every output given can be written (its folder exists and takes a new file, it is not a
    directory, an existing file is writable), no two name the same file and none names one of `inputs` (the
    command's own input files: check_not_inputs); InputError (exit 2) otherwise."""
    given = [(option, path) for option, path in named if path]
    check_distinct(given)
    check_not_inputs(given, inputs)
    for option, path in given:
        try:
            writing.check_writable(path)
        except InputError as refused:
            raise InputError(f"{option}: {refused.message}" if option else refused.message, location=refused.location) from None


def write(path: str | Path, content: str | bytes, say: Callable[[str], None]) -> bool:
    """Write `content` to `path` atomically; a failure (a full disk) is one line through `say` and False, so that
    the caller keeps what it measured and ends with exit 3."""
    try:
        writing.atomic_write(path, content)
    except OSError as exc:
        say(f"asyncbench: error: cannot write {path}: {exc.strerror or exc}")
        return False
    return True
