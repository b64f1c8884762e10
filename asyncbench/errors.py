"""The one error type that means "the user's input is wrong" (exit code 2).

Everything the CLI reports as bad input derives from `InputError`, so the CLI
can turn it into one clear line instead of a traceback.
"""

from __future__ import annotations


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
