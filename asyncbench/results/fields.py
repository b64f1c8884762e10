"""One value read from a file, held to its vocabulary: what `record` may store and `report` may show.

A results or `ab` file is input like a config: it may come from another
machine, a CI artifact or a pull request. Every field the store takes from
one is checked here before anything is stored: words against their
vocabulary (statuses, verdicts, check states), units and git revisions
against their shape, numbers finite where a number is expected, strings
bounded and free of control characters where they name things. A field that
fails is an InputError naming the file and the key (one line, exit 2).
"""

from __future__ import annotations

import math
import re
from typing import Any, Collection, Mapping, NoReturn

from asyncbench.errors import InputError

# A name (case id, workload, backend, device, variant, metric, host, label...) longer than this is not one: the
# longest case ids of a sweep's cross product stay well under a few hundred characters, and a page or a terminal
# line must not carry megabytes of one.
MAX_NAME = 1000
# Free text (a reason, a check's wording): an error's reason quotes its exception, which may be a few lines long.
MAX_TEXT = 20_000
# A git revision as asyncbench records it: 7 (git's shortest abbreviation) to 64 (a SHA-256 repository's full
# id) hex digits, optionally "-dirty" (a working tree with changes). Nothing else may reach `git` as a revision.
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
DIRTY = "-dirty"
# A run's own id (results.schema and results.paired make a uuid4's 32 hex digits); files before it have none ('').
RUN_ID = re.compile(r"[0-9a-fA-F]{8,64}")
# A unit is a short word ("s", "x", "%", "GFLOP/s", "MiB", "bool", "items/s"): letters, digits, a few signs; never
# markup, quotes or separators.
UNIT = re.compile(r"[A-Za-z0-9%µ/^._ ()-]{0,32}")
# A backend's or a device's name: `numpy`, `torch`, `cpu`, `cuda:0`.
IDENTIFIER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:+()-]{0,99}")
# Characters no name, path or option holds: C0 and C1 controls and DEL (a newline would start a line of its own in
# a log, a comment or a batch script; an escape would rewrite a terminal line).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Free text may hold line breaks and tabs, no other control character.
TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


#: what a JSON number is read as (a bool is an int to Python, and never a number here)
NUMBER_TYPES = frozenset({int, float})
#: what a JSON object's key is read as
STRING_TYPE = frozenset({str})


class At:
    """Where a value was read: the file and the key path inside it, for the one line that refuses it.

    A step (`at / key`) only links to its parent; the path is spelled out when asked for, which is when a value
    fails: a results file's check takes a step for each of hundreds of keys of each of 10,000 rows, and building
    each step's path string was most of the time `record` and `merge` took."""

    __slots__ = ("source", "_parent", "_step")

    def __init__(self, source: str, path: str = "") -> None:
        self.source = source
        self._parent: At | None = None
        self._step: str | int = path

    def __truediv__(self, key: str | int) -> At:
        child = At.__new__(At)
        child.source = self.source
        child._parent = self
        child._step = key
        return child

    @property
    def path(self) -> str:
        """The key path from the file's top (`results[3].variants.sync`)."""
        steps: list[str | int] = []
        node = self
        while node._parent is not None:
            steps.append(node._step)
            node = node._parent
        path = str(node._step)
        for key in reversed(steps):
            path += f"[{key}]" if isinstance(key, int) else (f".{key}" if path else key)
        return path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, At) and (self.source, self.path) == (other.source, other.path)

    def __hash__(self) -> int:
        return hash((self.source, self.path))

    def __repr__(self) -> str:
        return f"At({self.source!r}, {self.path!r})"

    def fail(self, message: str) -> NoReturn:
        raise InputError(message, location=self.source, path=self.path or None)


def mapping(value: Any, at: At) -> Mapping[str, Any]:
    if type(value) is not dict and not isinstance(value, Mapping):  # a JSON object is a dict: no ABC check for it
        at.fail(f"expected an object, got {_kind(value)}")
    if not STRING_TYPE.issuperset(map(type, value)):  # a JSON object's keys are strings: the whole set at once
        for key in value:
            if not isinstance(key, str):
                at.fail(f"expected string keys, got {_kind(key)}")
    return value


def optional_mapping(value: Any, at: At) -> Mapping[str, Any]:
    return {} if value is None else mapping(value, at)


def listed(value: Any, at: At) -> list[Any]:
    if not isinstance(value, list):
        at.fail(f"expected a list, got {_kind(value)}")
    return value


def optional_list(value: Any, at: At) -> list[Any]:
    return [] if value is None else listed(value, at)


def name(value: Any, at: At, empty: bool = True) -> str:
    """A bounded one-line string that names something (`empty`: may it be '')."""
    if not isinstance(value, str):
        at.fail(f"expected a string, got {_kind(value)}")
    if not value and not empty:
        at.fail("is empty")
    wrong = name_problem(value)
    if wrong:
        at.fail(wrong)
    return value


def name_problem(value: str) -> str | None:
    """What keeps a string from being a name (too long, a control character), or None: the one vocabulary of
    names, for a config's names (spec.config) as for the results they become."""
    if len(value) > MAX_NAME:
        return f"longer than {MAX_NAME} characters ({len(value)})"
    if CONTROL.search(value):
        return f"holds a control character: {value[:80]!r}"
    return None


def optional_name(value: Any, at: At) -> str | None:
    return None if value is None else name(value, at)


def identifier(value: Any, at: At) -> str:
    """A backend's or a device's name: a word (`numpy`, `cuda:0`), never one that reads as an option."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        at.fail(f"{_shown(value)} is not a name (letters, digits and _ . : + ( ) -, not starting with -)")
    return value


def text(value: Any, at: At) -> str:
    """Bounded free text (line breaks allowed)."""
    if not isinstance(value, str):
        at.fail(f"expected a string, got {_kind(value)}")
    if len(value) > MAX_TEXT:
        at.fail(f"longer than {MAX_TEXT} characters ({len(value)})")
    if TEXT_CONTROL.search(value):
        at.fail("holds a control character")
    return value


def storable(value: str | None) -> str | None:
    """Free text as a writer stores it, so that its own reader (`text`) takes it back: each control character other
    than a line break or a tab written as its escape (`\\x1b`: an error's message may hold a terminal's colours),
    cut to MAX_TEXT. What a user's code said is kept, readable; a file that holds it is never refused."""
    if value is None:
        return None
    shown = TEXT_CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
    return shown if len(shown) <= MAX_TEXT else shown[: MAX_TEXT - 1] + "…"


def optional_text(value: Any, at: At) -> str | None:
    return None if value is None else text(value, at)


def number(value: Any, at: At) -> float:
    """A finite number (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        at.fail(f"expected a number, got {_kind(value)}")
    if not math.isfinite(value):
        at.fail(f"expected a finite number, got {value}")
    return float(value)


def all_numbers(values: list[Any], least: float | None = None, most: float | None = None) -> bool:
    """Whether every one of `values` is a finite number (not a bool), each at least `least` and at most `most` if given: a whole list
    of samples (up to a thousand a clock, in each of a run's rows) checked at C speed. False says only that some
    value is not; the caller's check of each value then names the first that is not, with its index."""
    if not values:
        return True
    if not NUMBER_TYPES.issuperset(map(type, values)):
        return False
    try:
        if not math.isfinite(sum(values)):  # NaN and infinities make the sum so (as would a sum past 1e308)
            return False
    except OverflowError:  # an integer too large for a float
        return False
    return (least is None or min(values) >= least) and (most is None or max(values) <= most)


def optional_number(value: Any, at: At) -> float | None:
    return None if value is None else number(value, at)


def count(value: Any, at: At) -> int:
    """A whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        at.fail(f"expected a whole number >= 0, got {_shown(value)}")
    return value


def interval(value: Any, at: At) -> tuple[float, float] | None:
    """[low, high], two finite numbers with low <= high, or None."""
    if value is None:
        return None
    pair = listed(value, at)
    if len(pair) != 2:
        at.fail(f"expected [low, high], got {len(pair)} value(s)")
    low, high = number(pair[0], at / 0), number(pair[1], at / 1)
    if low > high:
        at.fail(f"low {low:g} is above high {high:g}")
    return (low, high)


def word(value: Any, at: At, vocabulary: Collection[str]) -> str:
    """One of `vocabulary`'s words."""
    if not isinstance(value, str) or value not in vocabulary:
        at.fail(f"{_shown(value)} is not one of {', '.join(sorted(vocabulary))}")
    return value


def unit(value: Any, at: At) -> str:
    if not isinstance(value, str) or not UNIT.fullmatch(value):
        at.fail(f"{_shown(value)} is not a unit (a short word such as s, x, %, GFLOP/s)")
    return value


def is_sha(value: str) -> bool:
    """Whether `value` is a git revision as asyncbench records it: hex digits, optionally with -dirty."""
    return bool(SHA.fullmatch(value.removesuffix(DIRTY)))


def sha(value: Any, at: At) -> str | None:
    """A git revision (hex, optionally -dirty), or None."""
    if value is None:
        return None
    if not isinstance(value, str) or not is_sha(value):
        at.fail(f"{_shown(value)} is not a git revision (7 to 64 hex digits)")
    return value


def run_id(value: Any, at: At) -> str:
    """A run's own id (hex), or '' where the file has none."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not RUN_ID.fullmatch(value):
        at.fail(f"{_shown(value)} is not a run id (hex digits)")
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _shown(value: Any) -> str:
    """A refused value as the error shows it: its repr, cut short."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."
