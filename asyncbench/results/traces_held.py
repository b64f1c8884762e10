"""A result's `traces` (`run --trace DIR`): what a trace file's path is, and a stored one held to it.

`--trace DIR` writes one Chrome-trace file per case and variant into DIR, resolved to an absolute folder before
anything runs (engine.trace.check_directory), named by `file_name` (`matmul[torch,cpu,size=64].matmul.trace.json`),
and keyed in the result's `traces` by its variant (`VARIANT (bound)` for a perturbed call's, `--bound` too), with
`trace_detail` saying what the files hold. So a stored trace is exactly that: a key one of the result's variants
(or its bound's), a path absolute, without `..`, whose name is the one `file_name` gives the case's id and that key,
and a `trace_detail` beside it. A hand-edited `{"sync": "../../../etc/passwd"}` was printed as a trace to open
("traced (None): `../../../etc/passwd`"); it is refused in one line naming the file and the key.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Mapping

from asyncbench.results import fields, recordable
from asyncbench.results.fields import At

#: a trace file's suffix
SUFFIX = ".trace.json"
#: a variant's perturbed trace (`--trace` with `--bound`): its file's suffix, and its key in a result's traces (after
#: the variant's name)
BOUND_SUFFIX = ".bound" + SUFFIX
BOUND_KEY = " (bound)"
#: what a trace file's name keeps of a case id and a variant as they are; any other run of characters becomes `_`
_UNSAFE = re.compile(r"[^\w.,=+\[\]-]+")


def file_name(case_id: str, variant: str, suffix: str = SUFFIX) -> str:
    """A file name from the case id and variant: `matmul[torch,cpu,size=64].matmul.trace.json`, safe on any filesystem."""
    return _UNSAFE.sub("_", f"{case_id}.{variant}") + suffix


def check(result: Mapping[str, Any], at: At) -> None:
    """InputError (file and key) for the first stored trace of `result` that `--trace` does not write (the module's
    docstring); its names are checked before (records.check)."""
    traces = fields.optional_mapping(result.get("traces"), at / "traces")
    if traces and not str(result.get("trace_detail") or "").strip():
        (at / "trace_detail").fail(f"traces with no trace_detail: --trace always says what its files hold: {recordable.NOT_WRITTEN}")
    variants = result.get("variants") or {}
    for key, path in traces.items():
        where = at / "traces" / str(key)
        variant, bound, after = str(key).partition(BOUND_KEY)
        if variant not in variants or after:
            where.fail(f"a trace of {str(key)[:80]!r}, which is no variant of the result ({', '.join(map(str, variants)) or 'none'})")
        name = file_name(str(result.get("id")), variant, BOUND_SUFFIX if bound else SUFFIX)
        given = str(path)
        absolute = PurePosixPath(given).is_absolute() or PureWindowsPath(given).is_absolute()
        parts = PureWindowsPath(given).parts if "\\" in given else PurePosixPath(given).parts
        if not absolute or ".." in parts or parts[-1:] != (name,):
            where.fail(
                f"{given[:120]!r} is no trace file --trace writes: an absolute path, without '..', to {name[:120]!r}: "
                f"{recordable.NOT_WRITTEN}"
            )
