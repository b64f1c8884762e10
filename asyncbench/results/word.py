"""`Word`: the base of every enum whose members are plain words (a status, a verdict, a sync's kind, a label).

A member is stored in JSON, printed and compared as its own string, so a results file reads the same whether or
not the enum exists on the reading side. A leaf module: results.model and results.syncs both build on it without
importing each other.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """An enum whose members are their own words: stored in JSON, printed and compared as those plain strings."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
