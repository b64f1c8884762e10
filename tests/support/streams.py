"""A stream that keeps what had been written at each flush: what a CI log had shown by then. The progress tests
(tests/report, tests/session) check with it that a line is written, and flushed, before the next case starts."""

from __future__ import annotations

import io


class Flushes(io.StringIO):
    """A stream that keeps what had been written at each flush: what a CI log has shown by then."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []

    def flush(self) -> None:
        self.shown.append(self.getvalue())
