"""Progress of a submission's jobs on stderr: how many are queued, running, done and failed.

On a terminal, a live line with a bar; elsewhere (a CI log, a file), one
plain line each time the counts change, so a log shows the submission's course
without a line per poll. Nothing at all with --no-progress.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from rich.console import Console

from asyncbench.report.progress import bar

#: the phases a job goes through, in the order they are shown
PHASES = ("queued", "running", "done", "failed")


def counts_line(counts: Mapping[str, int]) -> str:
    """'2 queued · 1 running · 3 done · 0 failed'."""
    return " · ".join(f"{counts.get(phase, 0)} {phase}" for phase in PHASES)


class JobsDisplay:
    """The counts of a submission's jobs by phase, live on a terminal or as a line per change elsewhere."""

    def __init__(self, total: int, enabled: bool, console: Console, say: Callable[[str], None]):
        self._total, self._say = total, say
        self._live = console.is_terminal and enabled
        self._plain = enabled and not console.is_terminal
        self._last: str | None = None
        self._progress = bar(console, "jobs") if self._live else None
        self._task: Any = None

    def __enter__(self) -> JobsDisplay:
        if self._progress is not None:
            self._progress.start()
            self._task = self._progress.add_task("jobs", total=self._total, detail="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, counts: Mapping[str, int]) -> None:
        line = counts_line(counts)
        if self._progress is not None:
            ended = counts.get("done", 0) + counts.get("failed", 0)
            self._progress.update(self._task, completed=ended, detail=line)
        elif self._plain and line != self._last:
            self._say(f"jobs: {line}")
        self._last = line
