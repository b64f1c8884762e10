"""What a user's step prints while it is measured: its first lines shown, the rest written to a sink.

A step that prints (a loss, a progress line) runs thousands of times in a
case — warm-up, the timed rounds, the census's — and its output would
bury the report. A print is also one of the waits the tool exists to
measure (formatting a device value makes the host wait for it), so it is
never skipped: from setup to close, the step form puts a `StepOutput` in
`sys.stdout` that passes the first SHOWN_LINES lines to the real stream and
writes the rest, line-buffered as a terminal's stream is, to the null
device (each print still formats its values and makes its write, and its
cost is in the times), then says once, at close, how many lines went there.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

# The lines of a step's output shown per case: enough to see what it prints (a few lines of its first steps), few
# enough that a case's thousands of steps do not scroll the report away.
SHOWN_LINES = 10


class StepOutput:
    """sys.stdout while a step is measured: the first SHOWN_LINES lines to `real`, the rest to the null device."""

    def __init__(self, real: TextIO, name: str):
        self.real = real
        self.name = name
        self.shown = 0
        self.sunk = 0
        self._sink: TextIO | None = None

    def write(self, text: str) -> int:
        if self.shown < SHOWN_LINES:
            self.shown += text.count("\n")
            return self.real.write(text)
        if self._sink is None:  # opened at the first line it takes: a step that prints little opens none
            self._sink = open(os.devnull, "w", buffering=1, encoding=getattr(self.real, "encoding", None) or "utf-8")  # noqa: SIM115 - closed in close()
        self.sunk += text.count("\n")
        return self._sink.write(text)

    def flush(self) -> None:
        (self._sink or self.real).flush()

    def isatty(self) -> bool:
        return False  # what it writes from here on goes to no terminal

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno, ... as the real stream has them
        return getattr(self.real, name)

    def close(self) -> None:
        """Put the real stream back and say, once, what went to the sink."""
        if sys.stdout is self:
            sys.stdout = self.real
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        if self.sunk:
            self.real.write(
                f"asyncbench: {self.name} printed {self.sunk} more lines while it was measured, into a sink (each print "
                f"ran and is in the times; the first {SHOWN_LINES} are above)\n"
            )
            self.real.flush()


def install(name: str) -> StepOutput:
    """Put a StepOutput for step `name` in sys.stdout; its close() puts the real one back."""
    output = StepOutput(sys.stdout, name)
    sys.stdout = output  # type: ignore[assignment]  # a text stream in what it is asked for
    return output
