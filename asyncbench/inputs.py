"""Reading what a user names: a regular file (or a stated pipe) of bounded size, and JSON of bounded depth and integers.

Every file asyncbench opens on a user's word goes through `read_text` (configs, results, shards, journals, `ab`
files, a submission's manifest), so each is refused the same way, in one line, before it costs memory: a device
(`/dev/zero` would be read until memory runs out), a folder, a file larger than any real one of its kind, bytes
that are not UTF-8. `read_json` parses such a text with the two bounds JSON itself does not have: how deep it nests
(CPython's parser recurses, and stops at the interpreter's recursion limit with a RecursionError no caller
expects; where free-form values may nest, results.recordable holds them to 32 levels) and how many digits an
integer has (Python refuses over 4300, with a ValueError no caller expects; asyncbench writes none over 19).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from asyncbench.errors import InputError

# The most a file of each kind may weigh. A config is a few kB; 16 MiB leaves room for generated sweeps.
MAX_CONFIG_BYTES = 16 * 2**20
# A submission's manifest (sweep.json): its config and each job's cases, some 200 bytes a case; 64 MiB is 300,000 cases.
MAX_MANIFEST_BYTES = 64 * 2**20
# A results file (or a shard's, a journal, an `ab` file): 10,000 cases of 1000 samples in three clocks, about 12
# bytes a sample, are some 360 MB a variant each; 2 GiB holds the largest sweep we know of with room, and is what a
# 64-bit machine can still parse (Python takes about five times a JSON file's size to hold it).
MAX_RESULTS_BYTES = 2 * 2**30
# An integer asyncbench writes fits in 64 bits (19 digits); a longer one is not a count, a size or a time.
MAX_INT_DIGITS = 20


def read_text(path: str | Path, error: type[InputError] = InputError, what: str = "file", limit_bytes: int = MAX_RESULTS_BYTES) -> str:
    """A user-named file's text, or `error` saying plainly why it cannot be read: not a regular file (a named pipe is
    read, up to the limit), larger than `limit_bytes`, not UTF-8, missing or unreadable."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            kind = os.fstat(handle.fileno())  # a folder is IsADirectoryError from open(), below
            if not (stat.S_ISREG(kind.st_mode) or stat.S_ISFIFO(kind.st_mode)):
                raise error(f"not a regular file ({_kind(kind.st_mode)}), so not a {what}", location=str(path))
            if kind.st_size > limit_bytes:
                raise error(f"larger than any {what} ({_size(kind.st_size)}; at most {_size(limit_bytes)})", location=str(path))
            data = handle.read(limit_bytes + 1)
    except FileNotFoundError:
        raise error("no such file", location=str(path)) from None
    except IsADirectoryError:
        raise error(f"is a directory, not a {what}", location=str(path)) from None
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror}", location=str(path)) from None
    if len(data) > limit_bytes:  # a pipe: its size is known only once read
        raise error(f"larger than any {what} (more than {_size(limit_bytes)})", location=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error("not a text file (not UTF-8)", location=str(path)) from None


def read_json(text: str) -> Any:
    """`text` parsed as JSON; ValueError (json.JSONDecodeError where the JSON itself is malformed) with a plain
    message for JSON nested past the interpreter's recursion limit or an integer longer than MAX_INT_DIGITS."""
    try:
        value = json.loads(text, parse_int=_integer)
    except RecursionError:
        raise ValueError("nested too deeply (results nest under 10 levels)") from None
    return value


def malformed(text: str, exc: json.JSONDecodeError) -> str:
    """What a JSON parse error says of a file: one that does not begin like JSON (after whitespace, no `{` or `[`:
    an HTML report, a log) is no JSON file at all; one that does is broken JSON, most often cut short."""
    head = text.lstrip()[:1]
    if not head:
        return "empty: not a JSON file"
    if head not in ("{", "["):
        shown = text.lstrip()[:20]
        return f"not a JSON file (it begins {shown!r}, where JSON begins with {{ or [)"
    return f"not valid JSON (truncated?): {exc.msg.removesuffix(' at')} at line {exc.lineno}"


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("kiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
