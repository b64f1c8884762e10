"""How errors are said: the one error type that means "the user's input is wrong"
(exit code 2), and the one line a failure during a run becomes.

Everything the CLI reports as bad input derives from `InputError`, so the CLI
can turn it into one clear line instead of a traceback; several mistakes of
one input (a config's) are one `InputErrors`, said a line each.
"""

from __future__ import annotations

import collections
import difflib
import re
from typing import Iterable, Sequence

# Exit codes, one meaning each (docs/concepts/failures.md).
EXIT_OK = 0
EXIT_GATE = 1  # a check failed, was inconclusive or not measured; a regression; nothing measured; --strict and a skip
EXIT_INPUT = 2  # bad input: one line naming file, line and key
EXIT_ERRORS = 3  # some cases errored (or an output could not be written) while the rest ran and were saved
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # 128 + SIGTERM


class InputError(Exception):
    """Bad input: a config, an option, or a results file that cannot be used.

    `location` is "file:line" (or just the file) and `path` the key path inside
    it, e.g. ``experiments[0].params.n_ops``; both are optional.
    """

    def __init__(self, message: str, *, location: str | None = None, path: str | None = None):
        self.message = message
        self.location = location
        self.path = path
        super().__init__(str(self))

    def __str__(self) -> str:
        prefix = ""
        if self.location:
            prefix += f"{self.location}: "
        if self.path:
            prefix += f"{self.path}: "
        return prefix + self.message


class InputErrors(InputError):
    """Several mistakes of one input (or of the inputs of one command), said together: one run of `validate`
    shows them all instead of one per run. `errors` are the single mistakes, in the order they are to be read
    (a file's in line order); the CLI prints each as its own line. `of` gives the one error itself when there
    is one, so a single mistake keeps its own type and reads as before."""

    def __init__(self, errors: Sequence[InputError]):
        self.errors = tuple(one for error in errors for one in each_error(error))
        if not self.errors:
            raise ValueError("InputErrors needs at least one error")
        first = self.errors[0]
        super().__init__(first.message, location=first.location, path=first.path)

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)

    @classmethod
    def of(cls, errors: Sequence[InputError]) -> InputError:
        """The one error, or several as one `cls` (flattened, each said once, in the order given)."""
        said: dict[str, InputError] = {}
        for error in errors:
            for one in each_error(error):
                said.setdefault(str(one), one)  # the same mistake reached twice (a default every experiment reads)
        flat = list(said.values())
        return flat[0] if len(flat) == 1 else cls(flat)


def each_error(error: InputError) -> tuple[InputError, ...]:
    """The single mistakes an error holds: its own list if it holds several, else itself."""
    return error.errors if isinstance(error, InputErrors) else (error,)


def repeated(values: Iterable[str]) -> list[str]:
    """The values given more than once, sorted: what an error about names that must be distinct names."""
    counts = collections.Counter(values)  # once through: a manifest's 20,000 names were 20,000 passes (list.count)
    return sorted(value for value, count in counts.items() if count > 1)


def closest(word: object, choices: Iterable[str]) -> str | None:
    """The choice `word` is a close misspelling of, or None."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def suggestion(word: object, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for a close match of a misspelling, else ''."""
    close = closest(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


# How frameworks word a failed allocation besides MemoryError (numpy, Python): torch's CPU
# allocator "can't allocate memory", torch and cupy on CUDA "out of memory".
OUT_OF_MEMORY = re.compile(r"out of memory|can't allocate memory|unable to allocate|cudaErrorMemoryAllocation", re.IGNORECASE)


def describe_failure(exc: BaseException) -> str:
    """An exception as one reason ("RuntimeError: ..."); a failed allocation says so first, whatever the framework calls it."""
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, MemoryError) or OUT_OF_MEMORY.search(text):
        return f"out of memory: {text}"
    return text
