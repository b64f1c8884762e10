"""The suites shipped in the package (asyncbench/suites/*.yaml): a CONFIG that names one runs it without a clone.

`asyncbench run async-computation` after a `pip install asyncbench` finds
the packaged file, as `asyncbench run` alone finds the built-in default; a
file of that name, where there is one, wins (config.load). The textbook's
configs live here, inside the package, and the repository's configs/ holds
a link to each: one file read by the clone's paths (docs, tests, benchmarks)
and by the wheel alike, so no copy can drift from it (tests/spec/test_suites.py
checks each link and that no suite lacks one). Reads no framework.
"""

from __future__ import annotations

import importlib.resources
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from Python 3.11 on only

#: a suite's file: its name and this suffix
SUFFIX = ".yaml"
#: what a suite's name may be: a CONFIG with a folder in it (or anything else) is a path, never a suite
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
#: the most of a suite's leading comment `list` shows: its first sentence, cut here where it runs on
SUMMARY_CHARS = 110


def _folder() -> Traversable:
    return importlib.resources.files("asyncbench") / "suites"


def names() -> tuple[str, ...]:
    """Every suite's name, sorted (the default suite's too: `asyncbench run default` is `asyncbench run`)."""
    return tuple(sorted(f.name.removesuffix(SUFFIX) for f in _folder().iterdir() if f.name.endswith(SUFFIX)))


def name_of(argument: str) -> str | None:
    """The suite a CONFIG argument names, or None: a bare name (`async-computation`) or its file's name
    (`async-computation.yaml`) of a suite that exists; a path with a folder is never a suite."""
    name = argument.removesuffix(SUFFIX)
    return name if NAME.fullmatch(name) and name in names() else None


def text(name: str) -> str:
    """A suite's YAML (name: one of `names()`)."""
    return (_folder() / f"{name}{SUFFIX}").read_text(encoding="utf-8")


def summary(name: str) -> str:
    """What a suite runs, from its leading comment: the first sentence (cut at SUMMARY_CHARS where it runs on)."""
    lines = []
    for line in text(name).splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    said = " ".join(lines)
    first = re.split(r"(?<=[.?!])\s", said, maxsplit=1)[0] if said else ""
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1].rstrip() + "…"
